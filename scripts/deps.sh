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
browser_pkgs=(chromium)                                  # browser/
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
# The vscode plugin runs openvscode-server when an image has one, otherwise the
# VS Code server bundled in the code-server npm package, which this section
# installs under /opt/code-server. Only the npm registry and Debian's apt are
# reachable in CI, so code-server's ripgrep dependency, which would fetch rg
# from elsewhere, finds Debian's rg already in its download cache. A repeat run
# only checks that the install is there and its native modules still load.
vscode_version=4.100.3
vscode_prefix=/opt/code-server
vscode_stamp=$vscode_prefix/.installed-version

vscode_ok() {
	[[ -f $vscode_stamp && $(<"$vscode_stamp") == "$vscode_version" ]] || return 1
	[[ -f $vscode_prefix/lib/vscode/out/server-main.js ]] || return 1
	command -v node >/dev/null || return 1
	# A changed Node.js ABI breaks the native modules: load them to be sure.
	(cd "$vscode_prefix/lib/vscode" &&
		node -e 'for (const m of ["node-pty", "@vscode/spdlog", "@parcel/watcher", "kerberos"]) require(m)') >/dev/null 2>&1
}

vscode_install() {
	local pkgs=(build-essential pkg-config libkrb5-dev ripgrep) need=() p
	# An image may already carry a newer Node.js with its own npm; Debian's
	# npm package would conflict with it.
	command -v node >/dev/null || pkgs+=(nodejs)
	command -v npm >/dev/null || pkgs+=(npm)
	for p in "${pkgs[@]}"; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
			need+=("$p")
		fi
	done
	if ((${#need[@]})); then
		echo "deps: installing ${need[*]}" >&2
		$SUDO apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
	fi

	local npm_env=(npm_config_unsafe_perm=true npm_config_yes=true npm_config_fund=false npm_config_audit=false
		npm_config_update_notifier=false)
	# code-server's install script insists on Node.js 20; tell it which
	# major version it gets when the machine has another one.
	local major
	major=$(node -p 'process.versions.node.split(".")[0]')
	if [[ $major != 20 ]]; then
		echo "deps: code-server $vscode_version expects Node.js 20, found $major; trying anyway" >&2
		npm_env+=(FORCE_NODE_VERSION="$major")
	fi
	# Build native modules against the installed headers, not downloaded ones.
	if [[ -f /usr/include/node/node_api.h ]]; then
		npm_env+=(npm_config_nodedir=/usr)
	fi

	local rg_target
	case $(uname -m) in
	x86_64) rg_target=x86_64-unknown-linux-musl ;;
	aarch64) rg_target=aarch64-unknown-linux-musl ;;
	*) echo "deps: no ripgrep cache name for $(uname -m)" >&2; return 1 ;;
	esac

	echo "deps: installing code-server $vscode_version into $vscode_prefix" >&2
	local work staging=$vscode_prefix.partial
	work=$(mktemp -d)
	# The ripgrep cache is named after @vscode/ripgrep's version and the rg
	# release it would download; the archive holds rg at its root.
	mkdir -p "$work/tmp/vscode-ripgrep-cache-1.15.11"
	tar -czf "$work/tmp/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-$rg_target.tar.gz" \
		-C "$(dirname "$(readlink -f "$(command -v rg)")")" rg
	# npm install -g fails for this package; install it in place instead.
	(cd "$work" && npm pack --silent "code-server@$vscode_version" >/dev/null)
	$SUDO rm -rf "$staging"
	$SUDO mkdir -p "$staging"
	$SUDO tar -xzf "$work/code-server-$vscode_version.tgz" -C "$staging" --strip-components=1 --no-same-owner
	(cd "$staging" && $SUDO env TMPDIR="$work/tmp" "${npm_env[@]}" \
		npm install --omit=dev --no-audit --no-fund --loglevel=error >"$work/npm.log" 2>&1) || {
		tail -n 40 "$work/npm.log" >&2
		rm -rf "$work"
		return 1
	}
	rm -rf "$work"
	echo "$vscode_version" | $SUDO tee "$staging/.installed-version" >/dev/null
	$SUDO rm -rf "$vscode_prefix"
	$SUDO mv "$staging" "$vscode_prefix"
}

if ! vscode_ok; then
	vscode_install
	vscode_ok || { echo "deps: code-server in $vscode_prefix does not load" >&2; exit 1; }
fi
# ---- end vscode ---------------------------------------------------------------

echo "deps: ok" >&2
