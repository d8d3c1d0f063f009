#!/bin/sh
# Installs the VS Code server of the code-server npm package under
# /opt/code-server for the vscode plugin (which runs openvscode-server
# instead when an image has one). Used by scripts/deps.sh on test machines
# and by runtime images built with the vscode plugin. Runs as root.
#
# Only the npm registry and Debian's apt are reachable, so code-server's
# ripgrep dependency, which would fetch rg from elsewhere, finds Debian's rg
# already in its download cache. A repeat run only checks that the install
# is there and its native modules still load.
set -eu

vscode_version=4.100.3
vscode_prefix=/opt/code-server
vscode_stamp=$vscode_prefix/.installed-version

vscode_ok() {
	[ -f "$vscode_stamp" ] && [ "$(cat "$vscode_stamp")" = "$vscode_version" ] || return 1
	[ -f "$vscode_prefix/lib/vscode/out/server-main.js" ] || return 1
	command -v node >/dev/null || return 1
	# A changed Node.js ABI breaks the native modules: load them to be sure.
	(cd "$vscode_prefix/lib/vscode" &&
		node -e 'for (const m of ["node-pty", "@vscode/spdlog", "@parcel/watcher", "kerberos"]) require(m)') >/dev/null 2>&1
}

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

vscode_install() {
	need=""
	pkgs="build-essential pkg-config libkrb5-dev ripgrep python3"
	# An image may already carry a newer Node.js with its own npm; Debian's
	# npm package would conflict with it.
	command -v node >/dev/null || pkgs="$pkgs nodejs"
	command -v npm >/dev/null || pkgs="$pkgs npm"
	for p in $pkgs; do
		installed "$p" || need="$need $p"
	done
	if [ -n "$need" ]; then
		echo "install-code-server: installing$need" >&2
		apt-get update -qq
		# shellcheck disable=SC2086 # a list of package names
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
	fi

	set -- npm_config_unsafe_perm=true npm_config_yes=true npm_config_fund=false npm_config_audit=false \
		npm_config_update_notifier=false
	# code-server's install script insists on Node.js 20; tell it which
	# major version it gets when the machine has a newer one. An older one
	# installs but cannot run the server (it lacks the global crypto):
	# Debian 12's and Ubuntu 24.04's own nodejs are 18.
	major=$(node -p 'process.versions.node.split(".")[0]')
	if [ "$major" -lt 20 ]; then
		echo "install-code-server: code-server $vscode_version needs Node.js 20 or later, found $(node --version);" \
			"use a base image that has it (node:20, nikolaik/python-nodejs, ...)" >&2
		return 1
	fi
	if [ "$major" != 20 ]; then
		echo "install-code-server: code-server $vscode_version expects Node.js 20, found $major; trying anyway" >&2
		set -- "$@" FORCE_NODE_VERSION="$major"
	fi
	# Build native modules against the installed headers, not downloaded ones.
	if [ -f /usr/include/node/node_api.h ]; then
		set -- "$@" npm_config_nodedir=/usr
	fi

	case $(uname -m) in
	x86_64) rg_target=x86_64-unknown-linux-musl ;;
	aarch64) rg_target=aarch64-unknown-linux-musl ;;
	*) echo "install-code-server: no ripgrep cache name for $(uname -m)" >&2; return 1 ;;
	esac

	echo "install-code-server: installing code-server $vscode_version into $vscode_prefix" >&2
	work=$(mktemp -d)
	staging=$vscode_prefix.partial
	# The ripgrep cache is named after @vscode/ripgrep's version and the rg
	# release it would download; the archive holds rg at its root.
	mkdir -p "$work/tmp/vscode-ripgrep-cache-1.15.11"
	tar -czf "$work/tmp/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-$rg_target.tar.gz" \
		-C "$(dirname "$(readlink -f "$(command -v rg)")")" rg
	# npm install -g fails for this package; install it in place instead.
	(cd "$work" && npm pack --silent "code-server@$vscode_version" >/dev/null)
	rm -rf "$staging"
	mkdir -p "$staging"
	tar -xzf "$work/code-server-$vscode_version.tgz" -C "$staging" --strip-components=1 --no-same-owner
	if ! (cd "$staging" && env TMPDIR="$work/tmp" "$@" \
		npm install --omit=dev --no-audit --no-fund --loglevel=error >"$work/npm.log" 2>&1); then
		tail -n 40 "$work/npm.log" >&2
		rm -rf "$work"
		return 1
	fi
	rm -rf "$work"
	echo "$vscode_version" >"$staging/.installed-version"
	rm -rf "$vscode_prefix"
	mv "$staging" "$vscode_prefix"
}

if ! vscode_ok; then
	vscode_install
	vscode_ok || { echo "install-code-server: code-server in $vscode_prefix does not load" >&2; exit 1; }
fi
