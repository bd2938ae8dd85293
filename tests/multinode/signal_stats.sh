#!/usr/bin/env bash
# signal_stats.sh <it_signal>: run under `cluster.sh 2`. it_signal with 4 PEs
# over the two daemons (ranks 0,1 on node 0; 2,3 on node 1) and
# HOIST_DIRECT=0, so every signal goes through a daemon: its ring sends
# 60 data signals and 60 acks per PE, to a neighbour on the same node or on
# the other one, then 6 bursts of 8 nbi data signals, and three raw signal
# descriptors to the next PE, of which one (behind a put that failed) is
# not sent. Each daemon then counts exactly 170 signals by path
# (signal_self: 0->1 data and raw, 1->0 acks, resp. 2->3 and 3->2;
# signal_remote: the others) and counts them among its atomics too, and 2
# dropped ones (signals_dropped). The library posts no quiet for a
# put-with-signal: each daemon sees exactly the 58 quiets its two PEs call
# themselves (20 in the rounds, 6 after the bursts, 2 after the error
# checks, 1 in hoist_finalize, per PE; it was one more per signal behind a
# put when the library waited for the put), and the signals behind a put
# to another node waited in the daemon instead (signal_waits).
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
		"d['signal_self'] == 170" "d['signal_remote'] == 170" \
		"d['amo_set'] + d['amo_add'] >= 340" "d['amo_self'] >= 170" "d['amo_remote'] >= 170" \
		"d['quiets'] == 58" "d['signal_waits'] >= 1" "d['signals_dropped'] == 2" ||
		FAIL "signal stats of node $i (above)"
done
((fail == 0)) && echo "[signal_stats.sh] signals counted by path on both daemons"
exit $fail
