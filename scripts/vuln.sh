#!/usr/bin/env bash
# Checks the module, its dependencies and the Go toolchain against the Go
# vulnerability database with govulncheck, built from the Go module proxy at a
# pinned version.
#
# Which database: VULNDB when set (an https:// or file:// URL), else the live
# one. Some machines (CI among them) reach the module proxy but not the
# database; there the newest snapshot found as ../shared/data/govulndb-*.tar.gz
# (beside the checkout) is unpacked and used instead. Only when neither can be
# had does this warn loudly and pass.
#
# It prints the database it used and that database's date. A vulnerability
# the code reaches fails, whichever database reported it; those in imported
# packages or required modules that the code does not reach are printed and
# do not fail.
set -euo pipefail
cd "$(dirname "$0")/.."

version=v1.9.0
live=https://vuln.go.dev
db=${VULNDB:-$live}

log() { echo "vuln: $*" >&2; }

# go run would hide govulncheck's exit code (3 means "vulnerabilities
# found"), so install the pinned version next to the build output instead.
tooldir=$PWD/bin/tools/govulncheck-$version
if [[ ! -x $tooldir/govulncheck ]]; then
	GOBIN=$tooldir go install "golang.org/x/vuln/cmd/govulncheck@$version"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# db_modified URL prints the database's own date (index/db.json), or fails
# when the database cannot be read.
db_modified() {
	local json
	case $1 in
	file://*) json=$(cat "${1#file://}/index/db.json" 2>/dev/null) || return 1 ;;
	*)
		command -v curl >/dev/null || return 1
		json=$(curl -fsS --max-time 15 "$1/index/db.json" 2>/dev/null) || return 1
		;;
	esac
	sed -n 's/.*"modified" *: *"\([^"]*\)".*/\1/p' <<<"$json" | grep .
}

# run URL runs govulncheck against that database; its exit code is
# govulncheck's.
run() {
	"$tooldir/govulncheck" -db "$1" -show verbose ./... >"$work/out" 2>&1
}

# unreachable tells a failure to fetch the database from any other failure:
# govulncheck reports it as "fetching vulnerabilities: <network or HTTP
# error>" before it looks at any code, so no finding can hide behind it.
unreachable() {
	grep -q 'fetching vulnerabilities:' "$work/out" &&
		grep -qE 'no such host|dial tcp|connection refused|network is unreachable|i/o timeout|TLS handshake|returned unexpected status|no such file' "$work/out"
}

# snapshot unpacks the newest snapshot and prints its file:// URL.
snapshot() {
	local newest
	newest=$(ls -1 ../shared/data/govulndb-*.tar.gz 2>/dev/null | sort | tail -n 1) || true
	[[ -n $newest ]] || return 1
	mkdir -p "$work/db"
	tar -xzf "$newest" -C "$work/db" || return 1
	[[ -f $work/db/index/db.json ]] || return 1
	log "snapshot: ${newest#../}"
	echo "file://$work/db"
}

# The live database is asked for its date first, which also tells quickly
# whether it answers; without curl govulncheck's own attempt tells.
status=0
date=$(db_modified "$db") || date=
skipped=
if [[ -z $date && $db == "$live" ]] && command -v curl >/dev/null; then
	skipped=1
else
	run "$db" || status=$?
fi
if [[ -n $skipped ]] || { ((status != 0 && status != 3)) && unreachable; }; then
	log "database $db unreachable"
	if snap=$(snapshot); then
		db=$snap
		date=$(db_modified "$db") || date=unknown
		status=0
		run "$db" || status=$?
	else
		log "WARNING: vulnerability database unreachable and no snapshot found; skipped"
		[[ -s $work/out ]] && grep 'fetching vulnerabilities:' "$work/out" | sed 's/^/vuln:   /' >&2
		exit 0
	fi
fi
case $db in
file://"$work"/*) log "database: snapshot, last modified ${date:-unknown}" ;;
*) log "database: $db, last modified ${date:-unknown}" ;;
esac

# What the code does not reach is shown, not failed on.
sed -n '/=== Package Results ===/,/^Your code is affected/{/^Your code is affected/d;p}' "$work/out" >&2

if ((status == 0)); then
	log "govulncheck $version: no vulnerability reached by the code"
	exit 0
fi
cat "$work/out" >&2
if ((status == 3)); then
	log "govulncheck $version: the code reaches a known vulnerability (above)"
else
	log "govulncheck $version failed (exit $status)"
fi
exit "$status"
