#!/usr/bin/env bash
# amo_packs.sh <it_gups>: run under `cluster.sh 2`. it_gups with 2 PEs, one
# per daemon: each streams 30000 non-fetching atomics (add, xor, ...) to
# the other node, and the tables equal the model (it_gups checks). Then on
# each daemon: its client's non-fetching atomics were deferred (amo_deferred)
# and travelled in packs (amo_packed, the peer's amos_packed: every one of
# the stream, several per pack), and the other daemon executed them from
# packs (amo_served_packed). Then with HOIST_AUTO=0 (the blocking
# baseline) nothing more is deferred and the tables are still exact.
set -u
gups=$1
: "${HOIST_DIRS:?run me under cluster.sh}"
fail=0
FAIL() { echo "[amo_packs.sh] FAIL: $*" >&2; fail=1; }
stats() { "$HOIST_HOISTCTL" --runtime-dir "$1" stats --json; }
dirs=("$HOIST_DIR_0" "$HOIST_DIR_1")

"$HOIST_HOISTRUN" -n 2 --runtime-dirs "$HOIST_DIRS" --job "amo-packs-$$" --timeout 150 "$gups" ||
	FAIL "it_gups (2 PEs over 2 daemons) failed with status $?"
for i in 0 1; do
	o=$((1 - i))
	stats "${dirs[$i]}" | python3 "$MN_SRC_DIR/mn_stats.py" check \
		"d['amo_deferred'] >= 30000" "d['amo_packed'] >= 30000" \
		"p[$o]['counters']['amos_packed'] == d['amo_packed']" \
		"p[$o]['counters']['amos_packed'] > 3 * p[$o]['counters']['packs_out']" \
		"d['amo_served_packed'] >= 30000" "d['amo_served'] >= d['amo_served_packed']" \
		"p[$o]['counters']['packs_refused'] == 0" ||
		FAIL "atomics were not deferred and packed on node $i (above)"
done
before=$(stats "$HOIST_DIR_0" | python3 "$MN_SRC_DIR/mn_stats.py" daemon amo_deferred)
HOIST_AUTO=0 "$HOIST_HOISTRUN" -n 2 --runtime-dirs "$HOIST_DIRS" --job "amo-packs0-$$" --timeout 150 "$gups" ||
	FAIL "it_gups with HOIST_AUTO=0 failed with status $?"
stats "$HOIST_DIR_0" | python3 "$MN_SRC_DIR/mn_stats.py" check "d['amo_deferred'] == $before" ||
	FAIL "HOIST_AUTO=0 deferred atomics"
for i in 0 1; do stats "${dirs[$i]}" | python3 -c 'import json,sys; d=json.load(sys.stdin); p=d["peers"][0]["counters"]; print("[amo_packs.sh] node", d["daemon"]["node_id"], "amo_deferred", d["daemon"]["amo_deferred"], "amo_packed", d["daemon"]["amo_packed"], "packs_out", p["packs_out"], "ops_packed", p["ops_packed"], "amo_served_packed", d["daemon"]["amo_served_packed"])'; done
((fail == 0)) && echo "[amo_packs.sh] non-fetching atomics deferred and packed, tables exact"
exit $fail
