#!/usr/bin/env bash
# lanes.sh <mn_big> <mn_order>: run under `cluster.sh 2 --daemon-arg=--tcp-lanes=4`.
#
# 1. mn_big with 2 PEs (one per node): 8 MiB puts and gets, every byte
#    verified. Then on each daemon: the transfers were striped over the
#    lanes (tcp_stripes grew), and the peer connected 4 times (one
#    connection per lane; connects counts each).
# 2. mn_order with 2 PEs: overlapping puts and gets behind striped puts
#    come out in program order; the conflict stage held some of them
#    (conflict_waits > 0 on the writer's daemon: the transport reorders).
set -u
big=$1
order=$2
: "${HOIST_DIRS:?run me under cluster.sh}"
fail=0
FAIL() { echo "[lanes.sh] FAIL: $*" >&2; fail=1; }
stats() { "$HOIST_HOISTCTL" --runtime-dir "$1" stats --json; }
dirs=("$HOIST_DIR_0" "$HOIST_DIR_1")

"$HOIST_HOISTRUN" -n 2 --runtime-dirs "$HOIST_DIRS" --job "lanes-big-$$" --timeout 100 "$big" ||
	FAIL "mn_big (2 PEs over 2 daemons, 4 lanes) failed with status $?"
for i in 0 1; do
	o=$((1 - i))
	stats "${dirs[$i]}" | python3 "$MN_SRC_DIR/mn_stats.py" check \
		"d['tcp_stripes'] >= 6" "p[$o]['counters']['connects'] == 4" \
		"p[$o]['counters']['losses'] == 0" ||
		FAIL "lanes stats of node $i after mn_big (above)"
done

"$HOIST_HOISTRUN" -n 2 --runtime-dirs "$HOIST_DIRS" --job "lanes-order-$$" --timeout 100 "$order" ||
	FAIL "mn_order (2 PEs over 2 daemons, 4 lanes) failed with status $?"
stats "$HOIST_DIR_0" | python3 "$MN_SRC_DIR/mn_stats.py" check "d['conflict_waits'] > 0" ||
	FAIL "the conflict stage held nothing during mn_order over 4 lanes (above)"
exit $fail
