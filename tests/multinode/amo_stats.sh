#!/usr/bin/env bash
# amo_stats.sh <it_amo>: run under `cluster.sh 2`. it_amo with 6 PEs over
# the two daemons, odd ranks HOIST_DIRECT=0 ("mixed"); then each daemon
# counts the atomics it executed for its clients by kind (amo_fetch, _set,
# _swap, _add, _bitwise) and by path (amo_self: a PE of this node through
# the daemon; amo_remote: sent to the other daemon), and those it served for
# the other node (amo_served). The library's direct atomics are not counted
# by the daemon.
set -u
amo=$1
: "${HOIST_DIRS:?run me under cluster.sh}"
fail=0
FAIL() { echo "[amo_stats.sh] FAIL: $*" >&2; fail=1; }
dirs=("$HOIST_DIR_0" "$HOIST_DIR_1")

"$HOIST_HOISTRUN" -n 6 --runtime-dirs "$HOIST_DIRS" --job "amo-stats-$$" --timeout 150 "$amo" mixed ||
	FAIL "it_amo (6 PEs over 2 daemons, mixed paths) failed with status $?"
for i in 0 1; do
	"$HOIST_HOISTCTL" --runtime-dir "${dirs[$i]}" stats --json | python3 "$MN_SRC_DIR/mn_stats.py" check \
		"d['amo_served'] > 0" "d['amo_remote'] > 0" "d['amo_self'] > 0" \
		"d['amo_fetch'] > 0" "d['amo_set'] > 0" "d['amo_swap'] > 0" "d['amo_add'] > 0" \
		"d['amo_bitwise'] > 0" "d['amo_self'] + d['amo_remote'] == d['amo_fetch'] + d['amo_set'] + d['amo_swap'] + d['amo_add'] + d['amo_bitwise']" ||
		FAIL "atomics stats of node $i (above)"
done
((fail == 0)) && echo "[amo_stats.sh] atomics counted by kind and path on both daemons"
exit $fail
