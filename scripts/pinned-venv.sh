#!/usr/bin/env bash
# Creates (or reuses) a virtual environment holding exactly the packages
# pinned in a requirements list, and prints its directory on standard
# output. The compatibility suites' set-up scripts call it.
#
#   scripts/pinned-venv.sh VENV LOCK WHAT [--no-deps]
#
# VENV is the environment's directory, LOCK the pinned list, WHAT names it
# in messages. Every package is pinned, so nothing is resolved at install
# time. --no-deps installs the list as it is, for a list that is a whole
# closure on purpose (less what is never imported). A stamp file holding
# the hash of the list and the interpreter's version makes a second run
# instant. uv installs (in parallel, from its cache); when it is not on
# PATH it is bootstrapped into the environment with pip (from pip's cache).
#
# Exit codes: 0 ready; 3 no Python 3.12 or later on this machine (the
# caller skips, loudly, unless CI is set); anything else is a failure.
set -euo pipefail

(($# >= 3)) || { echo "usage: $0 VENV LOCK WHAT [--no-deps]" >&2; exit 2; }
venv=$1 lock=$2 what=$3
uv_args=()
[[ ${4:-} == --no-deps ]] && uv_args+=(--no-deps)
stamp=$venv/.compat-stamp

say() { echo "compat: $*" >&2; }

[[ -f $lock ]] || { say "no pinned requirements for $what ($lock)"; exit 1; }

# is_new_enough PYTHON: true when it runs and is 3.12 or later.
is_new_enough() {
	"$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1
}

find_python() {
	local c candidates=()
	[[ -n ${COMPAT_PYTHON:-} ]] && candidates+=("$COMPAT_PYTHON")
	for c in python3.12 python3.13 python3.14; do
		command -v "$c" >/dev/null 2>&1 && candidates+=("$(command -v "$c")")
	done
	if command -v pyenv >/dev/null 2>&1; then
		local root
		root=$(pyenv root 2>/dev/null || true)
		if [[ -n $root ]]; then
			# Oldest first (the pins were made on 3.12); only builds named 3.N.M.
			while IFS= read -r c; do
				candidates+=("$c")
			done < <(ls -d "$root"/versions/3.1[2-9]* 2>/dev/null | grep -E '/3\.[0-9]+\.[0-9]+$' | sort -V | sed 's|$|/bin/python|')
		fi
	fi
	if command -v uv >/dev/null 2>&1; then
		c=$(uv python find '>=3.12' 2>/dev/null || true)
		[[ -n $c ]] && candidates+=("$c")
	fi
	for c in "${candidates[@]}"; do
		# A pyenv shim exists even when its version is not installed;
		# resolve to the real interpreter so the venv does not depend on
		# the shim's configuration.
		if is_new_enough "$c"; then
			"$c" -c 'import sys; print(sys.executable)'
			return 0
		fi
	done
	return 1
}

want="$(sha256sum "$lock" | cut -d' ' -f1)"
if [[ -f $stamp && -x $venv/bin/python ]] && [[ $(cat "$stamp") == "$want $("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null)" ]]; then
	echo "$venv"
	exit 0
fi

if ! py=$(find_python); then
	say "no Python 3.12 or later found (tried \$COMPAT_PYTHON, python3.1x on PATH, pyenv's versions/3.12+, uv python find);"
	say "$what needs one. Install one (pyenv install 3.12, or uv python install 3.12) and rerun."
	exit 3
fi
say "using $py ($("$py" -c 'import sys; print(sys.version.split()[0])'))"

start=$(date +%s)
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$py" -m venv "$venv"
if command -v uv >/dev/null 2>&1; then
	uv_bin=$(command -v uv)
else
	say "uv not on PATH: bootstrapping it into the environment with pip"
	"$venv/bin/python" -m pip install --quiet --disable-pip-version-check uv==0.13.9
	uv_bin=$venv/bin/uv
fi
say "installing $what ($(grep -c '==' "$lock") pinned packages) into $venv"
VIRTUAL_ENV=$venv "$uv_bin" pip install --quiet "${uv_args[@]}" --python "$venv/bin/python" -r "$lock" >&2
echo "$want $("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])')" >"$stamp"
say "environment for $what ready in $(($(date +%s) - start)) s"
echo "$venv"
