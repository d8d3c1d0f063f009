#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME each (default 60s): a
# duration, or a count of inputs (1000x), which make test uses because a
# time budget races in the fuzz coordinator at its deadline on a busy machine.
# `go test` alone replays the committed corpus; this explores further.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-60s}
status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
while IFS= read -r line; do
	file=${line%%:*}
	name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' <<<"${line#*:}")
	pkg=./$(dirname "$file")
	echo "fuzz: $name in $pkg for $fuzztime" >&2
	ok=
	for try in 1 2; do
		if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" >"$log" 2>&1; then
			ok=1
			break
		fi
		# A finding writes its input to testdata. Without one, "context
		# deadline exceeded" means an input was still running when the
		# time ran out, which happens on a busy machine: run once more, so
		# an input that really hangs fails twice.
		if ((try == 1)) && grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
			echo "fuzz: $name: an input outlived the fuzz time; again" >&2
			continue
		fi
		break
	done
	if [[ -z $ok ]]; then
		tail -20 "$log" >&2
		status=1
	fi
done < <(grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . | sed -E 's/^\.\/([^:]*):[0-9]+:/\1:/')
exit $status
