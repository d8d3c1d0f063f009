#!/usr/bin/env bash
# make compat: the unmodified OpenHands host (pinned openhands-ai releases)
# drives bin/action-server through its own client classes, once for each
# release in COMPAT_VERSIONS and each sandbox user in COMPAT_USERS.
#
#   COMPAT_VERSIONS   releases to test (default: "0.62.0 1.6.0")
#   COMPAT_USERS      root and/or sandbox (uid 1000) (default: both)
#   COMPAT_PYTEST     extra pytest arguments (e.g. "-k vscode -x")
#
# Without Python 3.12 or later it says so and skips, or fails when CI is set.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
versions=${COMPAT_VERSIONS:-0.62.0 1.6.0}
users=${COMPAT_USERS:-root sandbox}

say() { echo "compat: $*" >&2; }

if [[ $(id -u) != 0 ]]; then
	# The server can switch users only as root; without it the host is
	# told to ask for this user (its own RUNTIME_USERNAME / RUNTIME_UID).
	say "not root: running only as $(id -un); the uid-1000 run needs root"
	users=root
	export RUNTIME_USERNAME=$(id -un) RUNTIME_UID=$(id -u)
fi

failed=()
for version in $versions; do
	venv=$("$here/setup.sh" "$version")
	rc=$?
	if ((rc == 3)); then
		if [[ -n ${CI:-} ]]; then
			say "FAILED: no Python 3.12 or later, and CI is set: the OpenHands host cannot run"
			exit 1
		fi
		say "SKIPPED: no Python 3.12 or later on this machine; the OpenHands compatibility suite did NOT run"
		exit 0
	elif ((rc != 0)); then
		say "FAILED: set-up of openhands-ai $version (exit $rc)"
		exit 1
	fi
	for user in $users; do
		env=(COMPAT_USER="$user")
		if [[ $user == sandbox ]]; then
			# The host asks for user "openhands" with uid 1000; where uid
			# 1000 already has another name, the host's own setting
			# RUNTIME_USERNAME names that user instead (the server, like
			# upstream's, keeps an existing user).
			existing=$(getent passwd 1000 | cut -d: -f1)
			if [[ -n $existing && $existing != openhands ]]; then
				env+=(RUNTIME_USERNAME="$existing")
			fi
		fi
		say "openhands-ai $version, sandbox user: $user"
		# shellcheck disable=SC2086
		(cd "$here" && env "${env[@]}" "$venv/bin/python" -m pytest ${COMPAT_PYTEST:-}) || failed+=("openhands-ai $version as $user")
	done
done

if ((${#failed[@]})); then
	say "FAILED: ${failed[*]}"
	exit 1
fi
