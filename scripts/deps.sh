#!/usr/bin/env bash
# Installs everything the tests need on a Debian machine. Idempotent: when all
# packages are already present it only checks and returns within a second.
# Sections are grouped by the feature that needs them.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
	SUDO=sudo
else
	SUDO=
fi

# Debian packages, by feature.
base_pkgs=(bash sudo procps file ca-certificates)        # shell sessions, user set-up
browser_pkgs=(chromium libjs-pdf)                        # browser/ (pdf.js for the file viewer)
jupyter_pkgs=(jupyter-server python3-ipykernel)          # plugins/jupyter
skills_pkgs=(python3-pypdf python3-docx python3-pylatexenc) # agent_skills' parse_pdf/docx/latex
image_pkgs=(buildah debootstrap)                         # image/ end-to-end build
bench_pkgs=(wrk hyperfine)                               # make bench load tools

want=("${base_pkgs[@]}" "${browser_pkgs[@]}" "${jupyter_pkgs[@]}" "${skills_pkgs[@]}" "${image_pkgs[@]}" "${bench_pkgs[@]}")

missing=()
for p in "${want[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if ((${#missing[@]})); then
	echo "deps: installing ${missing[*]}" >&2
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ---- vscode (plugins/vscode) ------------------------------------------------
# The same script installs the VS Code server into runtime images.
$SUDO "$(dirname "$0")/install-code-server.sh"

echo "deps: ok" >&2
