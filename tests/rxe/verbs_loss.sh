#!/usr/bin/env bash
# verbs_loss.sh: run by tests/rxe/multinode.sh inside the rxe VM under a
# second `cluster.sh 2 --daemon-arg=--transport=verbs` with the default
# address cache, --peer-timeout-ms=2000 and --heartbeat-ms=500 (times
# HOIST_TEST_SCALE, which multinode.sh sets for the emulated guest):
#
#  1. a departed PE's remote key (tests/multinode/stale_key.sh): three times
#     a PE dies while its peer's daemon still posts RDMA operations with
#     the PE's cached rkey; a bystander job sharing the connection completes
#     with right data, no failed work completion, no reconnection;
#  2. a stopped peer on an idle connection (tests/multinode/peer_lost.sh
#     STOP): kill -STOP of daemon 1 is noticed by daemon 0's heartbeats
#     within peer_timeout_ms (the kernel's rxe still answers RDMA for a
#     stopped process: only the daemon's own answers prove it alive).
set -u
: "${HOIST_DIRS:?run me under cluster.sh}"
fail=0
FAIL() { echo "[verbs_loss] FAIL: $*" >&2; fail=1; }
log() { echo "[verbs_loss] $*" >&2; }
S=$MN_SRC_DIR/mn_stats.py

t0=$SECONDS
"$MN_SRC_DIR/stale_key.sh" "$MN_BIN/mn_stale" || FAIL "a stale remote key broke other traffic (stale_key.sh)"
log "stale_key.sh: $((SECONDS - t0)) s"
for i in 0 1; do
	"$HOIST_HOISTCTL" --runtime-dir "$(eval echo "\$HOIST_DIR_$i")" stats --json | python3 "$S" check \
		"d['transport_verbs'] == 1" "d['rdma_pings'] > 0" "p[$((1 - i))]['counters']['rtt_us'] > 0" \
		"p[$((1 - i))]['counters']['ops_in'] > 0" "p[$((1 - i))]['counters']['bytes_in'] > 0" ||
		FAIL "daemon $i: no heartbeats or peer counters over verbs"
done

t0=$SECONDS
"$MN_SRC_DIR/peer_lost.sh" STOP "$MN_BIN/mn_lost" "$IT_BIN/it_kill" "$IT_BIN/it_putget" ||
	FAIL "a stopped peer over verbs (peer_lost.sh STOP)"
log "peer_lost.sh STOP: $((SECONDS - t0)) s"

[ "$fail" = 0 ] && log PASS
exit "$fail"
