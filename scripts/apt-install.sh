#!/usr/bin/env bash
# Installs those of the given Debian packages that are missing, with no
# recommended extras; returns at once when all are there. Every install
# script of the project goes through it.
#
#   scripts/apt-install.sh [--tag NAME] PACKAGE...
set -euo pipefail

tag=apt-install
if [[ ${1:-} == --tag ]]; then
	tag=$2
	shift 2
fi
SUDO=
[[ $(id -u) -eq 0 ]] || SUDO=sudo

missing=()
for p in "$@"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
((${#missing[@]})) || exit 0
echo "$tag: installing ${missing[*]}" >&2
# Another apt (an unattended upgrade, a parallel script) may hold the lock.
$SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 \
	install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
