#!/usr/bin/env bash
# Checks the module, its dependencies and the Go toolchain against the Go
# vulnerability database with govulncheck, built from the Go module proxy at a
# pinned version.
#
# The database is served apart from the module proxy, and some machines (CI
# among them) reach only the proxy. When the database itself cannot be
# fetched, this says so loudly and passes; a finding, or any other failure,
# fails. VULNDB points govulncheck at a mirror (an https:// or file:// URL).
set -euo pipefail
cd "$(dirname "$0")/.."

version=v1.9.0
db=${VULNDB:-https://vuln.go.dev}

# go run would hide govulncheck's exit code (3 means "vulnerabilities
# found"), so install the pinned version next to the build output instead.
tooldir=$PWD/bin/tools/govulncheck-$version
if [[ ! -x $tooldir/govulncheck ]]; then
	GOBIN=$tooldir go install "golang.org/x/vuln/cmd/govulncheck@$version"
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
"$tooldir/govulncheck" -db "$db" ./... >"$out" 2>&1 || status=$?

if ((status == 0)); then
	echo "vuln: govulncheck $version: no known vulnerabilities" >&2
	exit 0
fi

# Only a failure to reach the database is forgiven: govulncheck reports it as
# "fetching vulnerabilities: <network or HTTP error>" before it looks at any
# code, so no finding can be hidden behind it.
if ((status != 3)) &&
	grep -q 'fetching vulnerabilities:' "$out" &&
	grep -qE 'no such host|dial tcp|connection refused|network is unreachable|i/o timeout|TLS handshake|returned unexpected status' "$out"; then
	echo "vuln: WARNING: vulnerability database unreachable; skipped" >&2
	grep 'fetching vulnerabilities:' "$out" | sed 's/^/vuln:   /' >&2
	exit 0
fi

cat "$out" >&2
echo "vuln: govulncheck $version failed (exit $status)" >&2
exit "$status"
