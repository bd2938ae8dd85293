#!/usr/bin/env bash
# diff.sh HOISTRUN PROG NODES NP SEED ITERS: run the differential program
# with HOIST_AUTO=0 and HOIST_AUTO=1 over NODES daemons; every value read
# and the final memory of every PE must be identical.
set -u
hoistrun=$1 prog=$2 nodes=$3 np=$4 seed=$5 iters=$6
out0=$(HOIST_AUTO=0 "$hoistrun" -n "$np" --nodes "$nodes" --timeout 120 "$prog" "$seed" "$iters") ||
	{ echo "diff.sh: HOIST_AUTO=0 run failed" >&2; exit 1; }
out1=$(HOIST_AUTO=1 "$hoistrun" -n "$np" --nodes "$nodes" --timeout 120 "$prog" "$seed" "$iters") ||
	{ echo "diff.sh: HOIST_AUTO=1 run failed" >&2; exit 1; }
s0=$(sort <<<"$out0")
s1=$(sort <<<"$out1")
if [[ "$s0" != "$s1" ]]; then
	echo "diff.sh: results differ (seed $seed)" >&2
	diff <(echo "$s0") <(echo "$s1") >&2
	exit 1
fi
lines=$(wc -l <<<"$s0")
((lines == np)) || { echo "diff.sh: expected $np result lines, got $lines" >&2; exit 1; }
echo "diff.sh: $np PEs over $nodes daemons, seed $seed: identical with HOIST_AUTO=0 and 1"
