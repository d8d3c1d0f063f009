#!/usr/bin/env bash
# make compat: swe-rex's own client (RemoteRuntime, pinned swe-rex 1.4.0)
# and mini-swe-agent's SWE-ReX environment drive bin/action-server started
# as swerex-remote.
#
#   SWEREX_PYTEST   extra pytest arguments (e.g. "-k execute -x")
#
# Without Python 3.12 or later it says so and skips, or fails when CI is set.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
say() { echo "compat: $*" >&2; }

venv=$("$here/setup.sh")
rc=$?
if ((rc == 3)); then
	if [[ -n ${CI:-} ]]; then
		say "FAILED: no Python 3.12 or later, and CI is set: the SWE-ReX client cannot run"
		exit 1
	fi
	say "SKIPPED: no Python 3.12 or later on this machine; the SWE-ReX compatibility suite did NOT run"
	exit 0
elif ((rc != 0)); then
	say "FAILED: set-up of swe-rex (exit $rc)"
	exit 1
fi
say "swe-rex 1.4.0 and mini-swe-agent 2.4.6 against swerex-remote"
# shellcheck disable=SC2086
cd "$here" && MSWEA_SILENT_STARTUP=1 "$venv/bin/python" -m pytest ${SWEREX_PYTEST:-}
