#!/usr/bin/env bash
# Paired Go benchmarks of two revisions, for changes that must not change
# performance (a restructuring): each revision is checked out in a
# throwaway worktree, the benchmarks run alternately, OLD then NEW, ROUNDS
# times, so that both see the same machine load, and benchstat compares
# them (medians, confidence intervals, p-values).
#
#   scripts/bench-pair.sh OLD NEW [PACKAGES...]
#
#   BENCH      benchmarks to run (a -bench regexp; default: all)
#   BENCHTIME  per benchmark and round (default 1s)
#   ROUNDS     alternations (default 5)
#
# A benchmark that moved to another package between the revisions is still
# paired: benchstat is told to ignore the package. Output: benchstat's
# table on stdout; the raw results stay in the directory it names.
set -euo pipefail

if (($# < 2)); then
	sed -n '2,17p' "$0" >&2
	exit 2
fi
old=$1 new=$2
shift 2
pkgs=("$@")
((${#pkgs[@]})) || pkgs=(./...)
bench=${BENCH:-.}
benchtime=${BENCHTIME:-1s}
rounds=${ROUNDS:-5}
# golang.org/x/perf's benchstat, pinned.
benchstat=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

root="$(git rev-parse --show-toplevel)"
out="$(mktemp -d "${TMPDIR:-/tmp}/bench-pair-XXXXXX")"
cleanup() {
	for side in old new; do
		[[ -d $out/$side ]] && git -C "$root" worktree remove --force "$out/$side" >/dev/null 2>&1 || true
	done
}
trap cleanup EXIT

for side in old new; do
	rev=${!side}
	git -C "$root" worktree add --detach -q "$out/$side" "$rev"
	# Build once before timing anything.
	(cd "$out/$side" && go test -run '^$' -bench '^$' "${pkgs[@]}" >/dev/null)
done
echo "bench-pair: $old vs $new, $rounds rounds of -bench '$bench' -benchtime $benchtime in ${pkgs[*]}; raw results in $out" >&2
for ((i = 1; i <= rounds; i++)); do
	for side in old new; do
		echo "bench-pair: round $i/$rounds: $side" >&2
		(cd "$out/$side" && go test -run '^$' -bench "$bench" -benchtime "$benchtime" -count 1 "${pkgs[@]}") \
			>>"$out/$side.txt" 2>&1
	done
done
go run "$benchstat" -ignore pkg "old=$out/old.txt" "new=$out/new.txt"
