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

# The machine's dotfiles: the running user's and, when root runs the
# suite, those of the users the host may ask for as sandbox user. The
# host appends to ~/.bashrc (add_env_vars, setup_initial_env); none of
# these may change.
home_of() { getent passwd "$1" | cut -d: -f6; }
homes=("$(home_of "$(id -u)")")
if [[ $(id -u) == 0 ]]; then
	for who in 1000 openhands; do
		h=$(home_of "$who")
		[[ -n $h ]] && homes+=("$h")
	done
fi
dotfiles() {
	local h f
	for h in "${homes[@]}"; do
		for f in .bashrc .profile .bash_profile; do
			if [[ -e $h/$f ]]; then
				echo "$h/$f $(sha256sum <"$h/$f" | cut -d' ' -f1)"
			else
				echo "$h/$f missing"
			fi
		done
	done
}
dotfiles_before=$(dotfiles)

# sandbox_user picks the user the sandbox run asks for: one that does not
# exist yet, which the server creates (as it does in a fresh container)
# and remove_sandbox_user removes, so that nothing it writes in its home
# outlives the run. That is the host's own openhands/1000 on a machine
# without either, else compat-sandbox with a free uid, named to the host
# by its own RUNTIME_USERNAME / RUNTIME_UID.
sandbox_name='' sandbox_uid=''
sandbox_user() {
	sandbox_name=openhands sandbox_uid=1000
	if getent passwd openhands >/dev/null || getent passwd 1000 >/dev/null; then
		sandbox_name=compat-sandbox sandbox_uid=1995
		remove_sandbox_user # left by an interrupted run
		while getent passwd "$sandbox_uid" >/dev/null; do
			sandbox_uid=$((sandbox_uid + 1))
		done
	fi
}
remove_sandbox_user() {
	[[ -n $sandbox_name ]] || return 0
	if getent passwd "$sandbox_name" >/dev/null; then
		userdel -r "$sandbox_name" >/dev/null 2>&1 || userdel "$sandbox_name" || say "could not remove user $sandbox_name"
	fi
	rm -f "/etc/sudoers.d/action-server-$sandbox_name"
}
trap remove_sandbox_user EXIT

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
			sandbox_user
			if [[ $sandbox_name != openhands ]]; then
				env+=(RUNTIME_USERNAME="$sandbox_name" RUNTIME_UID="$sandbox_uid")
			fi
		fi
		say "openhands-ai $version, sandbox user: $user${sandbox_name:+ ($sandbox_name, uid $sandbox_uid, made for the run)}"
		# shellcheck disable=SC2086
		(cd "$here" && env "${env[@]}" "$venv/bin/python" -m pytest ${COMPAT_PYTEST:-}) || failed+=("openhands-ai $version as $user")
		if [[ $user == sandbox ]]; then
			remove_sandbox_user
			sandbox_name=''
		fi
	done
done

dotfiles_after=$(dotfiles)
if [[ $dotfiles_after != "$dotfiles_before" ]]; then
	say "FAILED: the suite changed the machine's dotfiles (before, after):"
	diff <(echo "$dotfiles_before") <(echo "$dotfiles_after") >&2
	failed+=("the machine's dotfiles")
fi

if ((${#failed[@]})); then
	say "FAILED: ${failed[*]}"
	exit 1
fi
