#!/usr/bin/env bash
# Runs the SDK's tests against bin/action-server (make sdk-test).
#
# The virtual environment lives in python/.venv and holds the pinned
# requirements-dev.txt; a stamp of that list's hash and the interpreter's
# version makes a second run skip pip entirely. Python 3.12 is preferred
# (pyenv's, else the PATH's); any 3.9 or later will do. Without one the
# tests are skipped loudly, and fail when CI is set.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=$here/.venv
stamp=$venv/.sdk-stamp
say() { echo "sdk-test: $*" >&2; }

ok_python() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' >/dev/null 2>&1; }

find_python() {
	local c candidates=()
	[[ -n ${SDK_PYTHON:-} ]] && candidates+=("$SDK_PYTHON")
	if command -v pyenv >/dev/null 2>&1; then
		local root
		root=$(pyenv root 2>/dev/null || true)
		[[ -n $root ]] && candidates+=($(ls -d "$root"/versions/3.12.* 2>/dev/null | grep -E '/3\.12\.[0-9]+$' | sort -V | tail -1 | sed 's|$|/bin/python|'))
	fi
	for c in python3.12 python3.13 python3.11 python3.10 python3.9 python3; do
		command -v "$c" >/dev/null 2>&1 && candidates+=("$(command -v "$c")")
	done
	for c in "${candidates[@]}"; do
		if ok_python "$c"; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

if ! py=$(find_python); then
	if [[ -n ${CI:-} ]]; then
		say "no Python 3.9 or later, and CI is set: failing"
		exit 1
	fi
	say "SKIPPED: no Python 3.9 or later on this machine (set SDK_PYTHON)"
	exit 0
fi

want="$(sha256sum "$here/requirements-dev.txt" | cut -c1-16) $("$py" -c 'import sys; print(sys.version.split()[0])')"
if [[ ! -x $venv/bin/python || ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
	say "preparing $venv with $py"
	rm -rf "$venv"
	"$py" -m venv "$venv"
	"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements-dev.txt"
	echo "$want" >"$stamp"
fi

export ACTION_SERVER_BIN=${ACTION_SERVER_BIN:-$here/../bin/action-server}
cd "$here"
exec "$venv/bin/python" -m pytest -q "$@"
