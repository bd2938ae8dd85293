#!/usr/bin/env bash
# strided_pf.sh PROG: under `cluster.sh 2`. ov_strided with 4 PEs and ITERS
# iterations: each iteration's two strided gets per PE must be served from
# the phase's prefetch of their bounding box from the second iteration on
# (pf_hits summed over both daemons grows by at least 2 * 4 * (ITERS - 1)),
# while the program checks that every element is this iteration's data.
set -u
prog=$1
: "${HOIST_DIRS:?run me under cluster.sh}"
ITERS=8 NP=4
keys=pf_hits
. "$(dirname "$0")/snap.sh"
snap a || { echo "[strided_pf.sh] FAIL: no stats" >&2; exit 1; }
HOIST_AUTO=1 "$HOIST_HOISTRUN" -n $NP --runtime-dirs "$HOIST_DIRS" --timeout 100 "$prog" $ITERS || {
	echo "[strided_pf.sh] FAIL: ov_strided failed (data wrong or error, above)" >&2
	exit 1
}
snap b || { echo "[strided_pf.sh] FAIL: no stats" >&2; exit 1; }
want=$((2 * NP * (ITERS - 1)))
if [ $((b_pf_hits - a_pf_hits)) -lt $want ]; then
	echo "[strided_pf.sh] FAIL: $((b_pf_hits - a_pf_hits)) prefetch hits, want >= $want (strided gets served from their box)" >&2
	exit 1
fi
echo "[strided_pf.sh] $((b_pf_hits - a_pf_hits)) prefetch hits" >&2
