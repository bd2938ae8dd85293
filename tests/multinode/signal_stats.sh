#!/usr/bin/env bash
# signal_stats.sh <it_signal>: run under `cluster.sh 2`. it_signal with 4 PEs
# over the two daemons (ranks 0,1 on node 0; 2,3 on node 1) and
# HOIST_DIRECT=0, so every signal goes through a daemon: its ring sends
# 60 data signals and 60 acks per PE, to a neighbour on the same node or on
# the other one, and one raw signal descriptor to the next PE. Each daemon
# then counts exactly 121 signals by path (signal_self: 0->1 data and raw,
# 1->0 acks, resp. 2->3 and 3->2; signal_remote: the others) and counts them
# among its atomics too.
set -u
sig=$1
: "${HOIST_DIRS:?run me under cluster.sh}"
fail=0
FAIL() { echo "[signal_stats.sh] FAIL: $*" >&2; fail=1; }
dirs=("$HOIST_DIR_0" "$HOIST_DIR_1")

HOIST_DIRECT=0 "$HOIST_HOISTRUN" -n 4 --runtime-dirs "$HOIST_DIRS" --job "signal-stats-$$" --timeout 150 "$sig" ||
	FAIL "it_signal (4 PEs over 2 daemons, HOIST_DIRECT=0) failed with status $?"
for i in 0 1; do
	"$HOIST_HOISTCTL" --runtime-dir "${dirs[$i]}" stats --json | python3 "$MN_SRC_DIR/mn_stats.py" check \
		"d['signal_self'] == 121" "d['signal_remote'] == 121" \
		"d['amo_set'] + d['amo_add'] >= 242" "d['amo_self'] >= 121" "d['amo_remote'] >= 121" ||
		FAIL "signal stats of node $i (above)"
done
((fail == 0)) && echo "[signal_stats.sh] signals counted by path on both daemons"
exit $fail
