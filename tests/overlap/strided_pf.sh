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
sum() {
	local t=0 v
	for d in "$HOIST_DIR_0" "$HOIST_DIR_1"; do
		v=$("$HOIST_HOISTCTL" --runtime-dir "$d" stats --json | python3 -c \
			"import json,sys; print(json.load(sys.stdin)['daemon']['$1'])") || return 1
		t=$((t + v))
	done
	echo "$t"
}
a=$(sum pf_hits)
HOIST_AUTO=1 "$HOIST_HOISTRUN" -n $NP --runtime-dirs "$HOIST_DIRS" --timeout 100 "$prog" $ITERS || {
	echo "[strided_pf.sh] FAIL: ov_strided failed (data wrong or error, above)" >&2
	exit 1
}
b=$(sum pf_hits)
want=$((2 * NP * (ITERS - 1)))
if [ $((b - a)) -lt $want ]; then
	echo "[strided_pf.sh] FAIL: $((b - a)) prefetch hits, want >= $want (strided gets served from their box)" >&2
	exit 1
fi
echo "[strided_pf.sh] $((b - a)) prefetch hits" >&2
