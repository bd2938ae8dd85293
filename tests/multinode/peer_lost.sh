#!/usr/bin/env bash
# peer_lost.sh KILL|STOP <mn_lost> <it_kill> <it_putget>: run under
# `cluster.sh 2` (STOP: with --daemon-arg=--peer-timeout-ms=2000).
#
# Job A (mn_lost, 2 PEs: rank 0 on daemon 0, rank 1 on daemon 1) loops
# put/get/barrier between its PEs. Job B (it_kill bystander, 2 PEs, both
# on daemon 0) runs put/barrier rounds alongside. Once job A is going,
# daemon 1 gets SIGKILL (KILL: the connection reset tells daemon 0 at once)
# or SIGSTOP (STOP: only the missing answers / heartbeats do, after
# peer_timeout_ms). Checks:
#   - A's rank 0 sees -ECONNRESET and exits 42 (mn_lost checks the error
#     codes) within DETECT_SEC (10 x HOIST_TEST_SCALE) seconds of the signal;
#   - daemon 0's stats list node 1 as "lost" with losses >= 1, the
#     addresses it had cached on node 1 are invalidated, and its
#     connections with node 1 (tcp_conns: tcp_lanes each way while job A
#     runs) are closed (a new attempt's outgoing lanes may be open);
#   - job B (only on daemon 0) finishes successfully;
#   - daemon 0 reclaims job A's client and still serves: a new 2-PE
#     it_putget job on it passes, `hoistctl ping` answers.
# Daemon 1 is listed in $CLUSTER_KILLED (STOP: killed after the checks).
set -u
mode=$1 lost=$2 bystander=$3 putget=$4
: "${HOIST_DIRS:?run me under cluster.sh}"
case $mode in KILL | STOP) ;; *) echo "usage: $0 KILL|STOP mn_lost it_kill it_putget" >&2; exit 2 ;; esac
sc=$(awk -v f="${HOIST_TEST_SCALE:-1}" 'BEGIN { i = int(f); print (i < f) ? i + 1 : (i < 1 ? 1 : i) }')
DETECT_SEC=${DETECT_SEC:-$(awk -v f="${HOIST_TEST_SCALE:-1}" 'BEGIN { v = 10 * f; i = int(v); print (i < v) ? i + 1 : i }')}
fail=0
FAIL() { echo "[peer_lost.sh $mode] FAIL: $*" >&2; fail=1; }
log() { echo "[peer_lost.sh $mode] $*" >&2; }
stats0() { "$HOIST_HOISTCTL" --runtime-dir "$HOIST_DIR_0" stats --json; }
now() { date +%s.%N; }

ready=$CLUSTER_BASE/A-ready
stopB=$CLUSTER_BASE/B-stop
pids=()
# shellcheck disable=SC2317 # called from the EXIT trap
kill_all() { for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done; }
trap kill_all EXIT

IT_STOP_FILE=$stopB "$HOIST_HOISTRUN" -n 2 --runtime-dir "$HOIST_DIR_0" --job "lostB-$$" --timeout 100 \
	"$bystander" bystander &
bpid=$!
pids+=("$bpid")

# job B must be running (both clients attached) before the trouble starts
c=0
for i in $(seq 1 $((150 * sc))); do
	c=$(stats0 2>/dev/null | python3 "$IT_SRC_DIR/it_json.py" count-string "lostB-$$" 2>/dev/null)
	[ "${c:-0}" -ge 2 ] && break
	kill -0 "$bpid" 2>/dev/null || { log "job B ended before it was seen attached"; break; }
	((i % 50 == 0)) && log "waiting for job B to attach ($i checks, ${c:-0} clients seen)"
	sleep 0.1
done
[ "${c:-0}" -ge 2 ] || FAIL "job B not attached to daemon 0 within $((15 * sc)) s (saw ${c:-0} clients)"

export HOIST_JOB=lostA-$$ HOIST_SIZE=2 MN_READY_FILE=$ready
HOIST_RUNTIME_DIR=$HOIST_DIR_0 HOIST_RANK=0 "$lost" &
a0=$!
HOIST_RUNTIME_DIR=$HOIST_DIR_1 HOIST_RANK=1 "$lost" &
a1=$!
pids+=("$a0" "$a1")
unset HOIST_JOB HOIST_SIZE MN_READY_FILE

for i in $(seq 1 $((300 * sc))); do
	[ -e "$ready" ] && break
	kill -0 "$a0" 2>/dev/null || break
	((i % 50 == 0)) && log "waiting for job A to get going ($i checks)" # progress, for watchdogs
	sleep 0.1
done
if [ ! -e "$ready" ]; then
	FAIL "job A did not get going within $((30 * sc)) s (rank 0 alive: $(kill -0 "$a0" 2>/dev/null && echo yes || echo no))"
	touch "$stopB"
	exit 1
fi

# job A talks: tcp_lanes connections to node 1 and as many from it (a
# tcp daemon's gauge; over verbs, tests/rxe/verbs_loss.sh, it is absent: -1)
conns=$(stats0 | python3 "$MN_SRC_DIR/mn_stats.py" daemon tcp_conns)
conns_check=()
if [ "$conns" != -1 ]; then
	{ [ "$conns" -ge 2 ] && [ $((conns % 2)) = 0 ]; } ||
		FAIL "daemon 0 counts $conns connections with node 1 (tcp_conns), want tcp_lanes each way"
	conns_check=("d['tcp_conns'] <= $conns / 2")
fi

echo "$HOISTD_PID_1" >>"$CLUSTER_KILLED"
t0=$(now)
log "sending SIG$mode to daemon 1 (pid $HOISTD_PID_1)"
kill "-$mode" "$HOISTD_PID_1"

# A's rank 0 must notice within DETECT_SEC
done_a0=0
for _ in $(seq 1 $((DETECT_SEC * 10))); do
	if ! kill -0 "$a0" 2>/dev/null; then done_a0=1; break; fi
	sleep 0.1
done
if [ "$done_a0" = 1 ]; then
	wait "$a0"
	s0=$?
	t1=$(now)
	log "job A rank 0 exited with $s0 after $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}') s"
	[ "$s0" -eq 42 ] || FAIL "job A rank 0 exited with $s0, expected 42 (-ECONNRESET seen, see mn_lost's output)"
else
	FAIL "job A rank 0 did not report the lost peer within $DETECT_SEC s of SIG$mode"
	kill -KILL "$a0" 2>/dev/null
fi

# daemon 0: node 1 lost, its cached addresses dropped
lost_ok=0
for _ in $(seq 1 30); do
	if stats0 | python3 "$MN_SRC_DIR/mn_stats.py" check "p[1]['state'] == 'lost'" 2>/dev/null; then lost_ok=1; break; fi
	sleep 0.1
done
[ "$lost_ok" = 1 ] || log "node 1 not (yet) in state lost"
stats0 | python3 "$MN_SRC_DIR/mn_stats.py" check "d['node_id'] == 0" "d['nodes'] == 2" \
	"p[1]['state'] == 'lost'" "p[1]['counters']['losses'] >= 1" \
	"p[1]['counters']['ops_out'] > 0" "d['addr_cache_invalidations'] >= 1" \
	"${conns_check[@]}" ||
	FAIL "stats of daemon 0 after the loss of node 1 (above)"

if [ "$mode" = STOP ]; then
	kill -CONT "$HOISTD_PID_1" 2>/dev/null
	kill -KILL "$HOISTD_PID_1" 2>/dev/null
fi

# job B, all on daemon 0, is unaffected
touch "$stopB"
wait "$bpid"
sb=$?
[ "$sb" -eq 0 ] || FAIL "job B (both PEs on daemon 0) failed with status $sb"

kill -KILL "$a1" 2>/dev/null
wait "$a1" 2>/dev/null

# daemon 0 reclaims job A's rank 0 and serves new jobs
n=x
for i in $(seq 1 $((50 * sc))); do
	n=$(stats0 | python3 "$MN_SRC_DIR/mn_stats.py" clients)
	[ "$n" = 0 ] && break
	((i % 50 == 0)) && log "waiting for daemon 0 to reclaim job A ($i checks, $n clients)"
	sleep 0.1
done
[ "$n" = 0 ] || FAIL "$((5 * sc)) s after the jobs ended daemon 0 still lists $n client(s)"
"$HOIST_HOISTRUN" -n 2 --runtime-dir "$HOIST_DIR_0" --job "lostC-$$" --timeout 60 "$putget" ||
	FAIL "a new job on daemon 0 after the loss of node 1 failed with status $?"
"$HOIST_HOISTCTL" --runtime-dir "$HOIST_DIR_0" ping >/dev/null || FAIL "daemon 0 does not answer ping"

trap - EXIT
kill_all
[ "$fail" = 0 ] && echo "[peer_lost.sh $mode] PASS" >&2
exit "$fail"
