#!/usr/bin/env bash
# packs.sh <it_pack> <it_strided>: run under `cluster.sh 2`.
#
# 1. it_pack with 4 PEs over the 2 daemons (2 PEs per node): many small
#    puts/gets at once from both PEs of each node, and aggregation regions.
#    Then on each daemon: packs were sent and served, more than one
#    operation per pack on average, header bytes saved, no pack was
#    refused; the aggregation counters moved (regions held and released).
# 2. IT_PACK_REGION=1 it_pack with 2 PEs (one per node): 300 puts and 50
#    gets inside one aggregation region make exactly one pack (node 0 to 1).
# 3. IT_PACK_MIXED=1 it_pack with 4 PEs: rank 0 holds a put in a region,
#    rank 1 (same node) puts to the same node meanwhile: one pack carries
#    both processes' operations (packs_mixed grows), deterministically.
# 4. it_strided with 2 PEs: the strided/vector elements travelled in packs
#    (ops_packed grew by at least the elements sent remotely, far more than
#    the packs).
set -u
pack=$1
strided=$2
: "${HOIST_DIRS:?run me under cluster.sh}"
fail=0
FAIL() { echo "[packs.sh] FAIL: $*" >&2; fail=1; }
stats() { "$HOIST_HOISTCTL" --runtime-dir "$1" stats --json; }
dirs=("$HOIST_DIR_0" "$HOIST_DIR_1")

"$HOIST_HOISTRUN" -n 4 --runtime-dirs "$HOIST_DIRS" --job "packs-$$" --timeout 100 "$pack" ||
	FAIL "it_pack (4 PEs over 2 daemons) failed with status $?"

for i in 0 1; do
	o=$((1 - i))
	out=$(stats "${dirs[$i]}") || { FAIL "hoistctl stats --json on node $i failed"; continue; }
	printf '%s' "$out" | python3 "$MN_SRC_DIR/mn_stats.py" check \
		"p[$o]['counters']['packs_out'] > 0" "p[$o]['counters']['packs_in'] > 0" \
		"p[$o]['counters']['ops_packed'] > 2 * p[$o]['counters']['packs_out']" \
		"p[$o]['counters']['hdr_bytes_saved'] > 0" \
		"p[$o]['counters']['packs_refused'] == 0" \
		"d['agg_ops'] > 0" "d['agg_releases'] > 0" ||
		FAIL "pack stats of node $i after it_pack (above)"
done

# one region, one node, one pack
pbefore=$(stats "$HOIST_DIR_0" | python3 "$MN_SRC_DIR/mn_stats.py" peer 1 packs_out)
IT_PACK_REGION=1 "$HOIST_HOISTRUN" -n 2 --runtime-dirs "$HOIST_DIRS" --job "packs-region-$$" --timeout 100 "$pack" ||
	FAIL "it_pack region-only (2 PEs over 2 daemons) failed with status $?"
pafter=$(stats "$HOIST_DIR_0" | python3 "$MN_SRC_DIR/mn_stats.py" peer 1 packs_out)
[ "$((pafter - pbefore))" -eq 1 ] ||
	FAIL "an aggregation region of 350 ops to one node sent $((pafter - pbefore)) packs, want 1"

# a pack with two processes' operations (held by one, joined by the other)
mbefore=$(stats "$HOIST_DIR_0" | python3 "$MN_SRC_DIR/mn_stats.py" peer 1 packs_mixed)
IT_PACK_MIXED=1 "$HOIST_HOISTRUN" -n 4 --runtime-dirs "$HOIST_DIRS" --job "packs-mixed-$$" --timeout 100 "$pack" ||
	FAIL "it_pack mixed (4 PEs over 2 daemons) failed with status $?"
mafter=$(stats "$HOIST_DIR_0" | python3 "$MN_SRC_DIR/mn_stats.py" peer 1 packs_mixed)
[ "$((mafter - mbefore))" -ge 1 ] ||
	FAIL "no pack carried operations of two processes of node 0 ($mbefore -> $mafter)"

# strided: elements in packs, not one message each
before=$(stats "$HOIST_DIR_0" | python3 "$MN_SRC_DIR/mn_stats.py" peer 1 ops_packed)
pbefore=$(stats "$HOIST_DIR_0" | python3 "$MN_SRC_DIR/mn_stats.py" peer 1 packs_out)
"$HOIST_HOISTRUN" -n 2 --runtime-dirs "$HOIST_DIRS" --job "packs-strided-$$" --timeout 100 "$strided" ||
	FAIL "it_strided (2 PEs over 2 daemons) failed with status $?"
out=$(stats "$HOIST_DIR_0")
printf '%s' "$out" | python3 "$MN_SRC_DIR/mn_stats.py" check \
	"d['multi_ops'] > 0" "d['multi_elems'] > 100000" \
	"p[1]['counters']['ops_packed'] - $before > 100000" \
	"(p[1]['counters']['ops_packed'] - $before) > 50 * (p[1]['counters']['packs_out'] - $pbefore)" ||
	FAIL "strided elements did not travel packed (above)"
exit $fail
