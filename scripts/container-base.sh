#!/usr/bin/env bash
# Makes a Debian base image locally, since nothing can be pulled, and
# prints its reference:
#
#   scripts/container-base.sh NAME [PACKAGE...]
#
# The image is a minimal Debian from this machine's own mirror and suite,
# with the packages given, imported into podman's store as
# localhost/action-server-base:NAME-<hash>. The hash covers every input
# (mirror, suite, packages, the way it is made), so the image is made once and
# reused until an input changes. PODMAN and CONTAINERS_CONF come from
# scripts/container-deps.sh.
set -euo pipefail

name=${1:?usage: container-base.sh NAME [PACKAGE...]}
shift
pkgs=("$@")
podman=${PODMAN:-podman}
log() { echo "container-base: $*" >&2; }

# The mirror and suite apt already uses here: the one a closed network
# lets through.
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
mirror=
if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
	mirror=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
fi
if [[ -z $mirror && -f /etc/apt/sources.list ]]; then
	mirror=$(awk '/^deb / && $0 !~ /security/ {print $2; exit}' /etc/apt/sources.list)
fi
mirror=${mirror:-http://deb.debian.org/debian}

# Bump format when the way the image is made changes.
format=1
hash=$(echo "$format $mirror $suite ${pkgs[*]}" | sha256sum | cut -c1-12)
ref="localhost/action-server-base:$name-$hash"

if "$podman" image exists "$ref"; then
	echo "$ref"
	exit 0
fi

log "making $ref from $mirror $suite${pkgs:+ with ${pkgs[*]}}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
include=()
if ((${#pkgs[@]})); then
	include=(--include="$(
		IFS=,
		echo "${pkgs[*]}"
	)")
fi
# apt's lists are dropped: every image build runs apt-get update first.
mmdebstrap --quiet --variant=minbase --format=tar "${include[@]}" \
	--customize-hook='rm -rf "$1"/var/lib/apt/lists/*' \
	"$suite" "$work/rootfs.tar" "$mirror" >&2
"$podman" import --quiet --change 'CMD ["/bin/bash"]' "$work/rootfs.tar" "$ref" >/dev/null
echo "$ref"
