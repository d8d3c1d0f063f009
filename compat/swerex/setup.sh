#!/usr/bin/env bash
# Creates (or reuses) the virtual environment holding one pinned release of
# SWE-ReX (its client and its own server) with mini-swe-agent, and prints
# its directory on standard output.
#
#   compat/swerex/setup.sh [VERSION]     (default 1.4.0)
#
# The environment lives in compat/swerex/.venv/VERSION (ignored by git).
# Every package is pinned in requirements-VERSION.txt and installed with
# --no-deps: the list is the whole closure, minus what mini-swe-agent
# declares for its language models and never imports in its environments
# (see the list's head). scripts/pinned-venv.sh does the work; its exit
# codes are ours (3: no Python 3.12 or later).
set -euo pipefail

version=${1:-1.4.0}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "$here/../../scripts/pinned-venv.sh" "$here/.venv/$version" "$here/requirements-$version.txt" \
	"swe-rex $version, mini-swe-agent and pytest" --no-deps
