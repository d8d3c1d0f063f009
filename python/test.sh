#!/usr/bin/env bash
# Runs the SDK's tests against bin/action-server (make sdk-test).
#
# The virtual environment is python/.venv, holding the pinned
# requirements-dev.txt, made (once; a stamp makes later runs instant) by
# scripts/pinned-venv.sh, as the compatibility suites' are: Python 3.12 or
# later, pyenv's included. Without one the tests are skipped loudly, and
# fail when CI is set. Arguments go to pytest.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
say() { echo "sdk-test: $*" >&2; }

status=0
venv=$("$here/../scripts/pinned-venv.sh" "$here/.venv" "$here/requirements-dev.txt" "the Python SDK's tests") || status=$?
if ((status == 3)); then
	if [[ -n ${CI:-} ]]; then
		say "no Python 3.12 or later, and CI is set: failing"
		exit 1
	fi
	say "SKIPPED: no Python 3.12 or later on this machine"
	exit 0
fi
((status == 0)) || exit "$status"

export ACTION_SERVER_BIN=${ACTION_SERVER_BIN:-$here/../bin/action-server}
cd "$here"
exec "$venv/bin/python" -m pytest -q "$@"
