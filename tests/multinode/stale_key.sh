#!/usr/bin/env bash
# stale_key.sh <mn_stale>: run under `cluster.sh 2` (tcp on the host,
# verbs in the rxe VM: tests/rxe/verbs_stale.sh).
#
# A departed PE's remote key must not break anybody else's traffic. Job B
# (mn_stale bystander: rank 0 on daemon 0, rank 1 on daemon 1) does
# put/get-back/barrier rounds over the two daemons' connections the whole
# time. Meanwhile STALE_ROUNDS (5) times a job A (mn_stale streamer, one PE
# per daemon) starts, its rank 0 keeps bursts of puts and gets to rank 1 in
# flight - daemon 0 caches rank 1's heap address and remote key and uses
# them over the same connection as B - and rank 1 is killed (SIGKILL).
# Daemon 1 tells daemon 0 (PE_GONE), but operations already posted with the
# cached key may reach daemon 1 after rank 1's client is freed. Checks:
#   - A's rank 0 sees -ECONNRESET (exit 42) within 30 s of each kill;
#   - job B finishes with every call successful and all data right;
#   - over verbs: no failed work completion, no connection torn down on
#     either daemon (a deregistered key would be a remote access error that
#     puts the queue pair - B's operations included - in error), and
#     daemon 1 kept the departed clients' registrations for the grace
#     period (pinned_deferred).
set -u
prog=$1
: "${HOIST_DIRS:?run me under cluster.sh}"
ROUNDS=${STALE_ROUNDS:-5}
fail=0
FAIL() { echo "[stale_key.sh] FAIL: $*" >&2; fail=1; }
log() { echo "[stale_key.sh] $*" >&2; }
stats() { "$HOIST_HOISTCTL" --runtime-dir "$1" stats --json; }
S=$MN_SRC_DIR/mn_stats.py
dirs=("$HOIST_DIR_0" "$HOIST_DIR_1")
pids=()
# shellcheck disable=SC2317 # called from the EXIT trap
kill_all() { for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done; }
trap kill_all EXIT
wait_file() { # file seconds pid: 0 once file exists, 1 on timeout or when pid exits
	local i
	for i in $(seq 1 $(($2 * 10))); do
		[ -e "$1" ] && return 0
		kill -0 "$3" 2>/dev/null || { [ -e "$1" ]; return; }
		sleep 0.1
	done
	return 1
}
export HOIST_HEAP_SIZE=8m

stopB=$CLUSTER_BASE/staleB-stop
MN_STOP_FILE=$stopB MN_READY_FILE=$CLUSTER_BASE/staleB-ready "$HOIST_HOISTRUN" -n 2 \
	--runtime-dirs "$HOIST_DIRS" --job "staleB-$$" --timeout 290 "$prog" bystander &
bpid=$!
pids+=("$bpid")
wait_file "$CLUSTER_BASE/staleB-ready" 120 "$bpid" || FAIL "job B did not get going within 120 s"

t0=$SECONDS
for k in $(seq 1 "$ROUNDS"); do
	[ "$fail" = 0 ] || break
	ready=$CLUSTER_BASE/staleA$k-ready
	export HOIST_JOB=staleA-$$-$k HOIST_SIZE=2 MN_READY_FILE=$ready
	HOIST_RUNTIME_DIR=$HOIST_DIR_0 HOIST_RANK=0 "$prog" streamer &
	a0=$!
	HOIST_RUNTIME_DIR=$HOIST_DIR_1 HOIST_RANK=1 "$prog" streamer &
	a1=$!
	pids+=("$a0" "$a1")
	unset HOIST_JOB HOIST_SIZE MN_READY_FILE
	if ! wait_file "$ready" 60 "$a0"; then
		FAIL "job A #$k did not get going within 60 s"
		break
	fi
	log "job A #$k streaming: killing its rank 1 (pid $a1)"
	kill -KILL "$a1"
	wait "$a1" 2>/dev/null
	s=x
	for _ in $(seq 1 300); do
		if ! kill -0 "$a0" 2>/dev/null; then
			wait "$a0"
			s=$?
			break
		fi
		sleep 0.1
	done
	[ "$s" = 42 ] || FAIL "job A #$k rank 0: status $s, expected 42 (-ECONNRESET after its peer left)"
done
log "$ROUNDS departures in $((SECONDS - t0)) s"

touch "$stopB"
wait "$bpid"
sb=$?
[ "$sb" -eq 0 ] || FAIL "job B (sharing the connections with the departing PEs) failed with status $sb"

for i in 0 1; do
	if [ "$(stats "${dirs[$i]}" | python3 "$S" daemon transport_verbs)" = 1 ]; then
		stats "${dirs[$i]}" | python3 "$S" check "d['rdma_wc_errors'] == 0" "d['rdma_disconnects'] == 0" \
			"p[$((1 - i))]['counters']['losses'] == 0" ||
			FAIL "daemon $i: a stale key broke a connection (stats above)"
	fi
done
if [ "$(stats "$HOIST_DIR_1" | python3 "$S" daemon transport_verbs)" = 1 ]; then
	stats "$HOIST_DIR_1" | python3 "$S" check "d['pinned_deferred'] >= $ROUNDS" ||
		FAIL "daemon 1 released departed clients' registrations at once"
fi

trap - EXIT
kill_all
[ "$fail" = 0 ] && log PASS
exit "$fail"
