#!/usr/bin/env bash
# Creates (or reuses) the virtual environment holding one pinned release of
# the OpenHands host, and prints its directory on standard output.
#
#   compat/openhands/setup.sh [VERSION]     (default 0.62.0)
#
# The environment lives in compat/openhands/.venv/VERSION (ignored by git).
# Every package is pinned in requirements-VERSION.txt: a resolver walking
# openhands-ai's hundreds of loose dependencies backtracks for many
# minutes. scripts/pinned-venv.sh does the work; its exit codes are ours
# (3: no Python 3.12 or later).
set -euo pipefail

version=${1:-0.62.0}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "$here/../../scripts/pinned-venv.sh" "$here/.venv/$version" "$here/requirements-$version.txt" \
	"openhands-ai $version and pytest"
