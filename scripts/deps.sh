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

"$(dirname "$0")/apt-install.sh" --tag deps "${want[@]}"

# ---- vscode (plugins/vscode) ------------------------------------------------
# The same script installs the VS Code server into runtime images.
$SUDO "$(dirname "$0")/install-code-server.sh"

# ---- MCP servers (mcp/, server/ tests) --------------------------------------
# The reference MCP servers, pinned with their whole dependency tree by
# scripts/mcp-servers/package-lock.json, installed into a gitignored prefix
# in the checkout. npm runs only when the installed versions differ.
mcp_src="$(cd "$(dirname "$0")" && pwd)/mcp-servers"
mcp_dst="$(dirname "$mcp_src")/../.deps/mcp-servers"
mcp_installed() {
	local pkg want got
	for pkg in server-everything server-filesystem; do
		want=$(sed -n "s|.*\"@modelcontextprotocol/$pkg\": \"\([^\"]*\)\".*|\1|p" "$mcp_src/package.json")
		got=$(sed -n 's|^  "version": "\([^"]*\)".*|\1|p' "$mcp_dst/node_modules/@modelcontextprotocol/$pkg/package.json" 2>/dev/null || true)
		[[ -n $want && $want == "$got" ]] || return 1
	done
}
if ! mcp_installed; then
	if ! command -v npm >/dev/null; then
		echo "deps: npm is missing; the MCP tests need Node.js 20 or later" >&2
		exit 1
	fi
	echo "deps: installing the MCP test servers into .deps/mcp-servers" >&2
	mkdir -p "$mcp_dst"
	cp "$mcp_src/package.json" "$mcp_src/package-lock.json" "$mcp_dst/"
	(cd "$mcp_dst" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
	mcp_installed
fi

echo "deps: ok" >&2
