#!/usr/bin/env bash
# kill.sh <it_kill>: run under harness.sh (needs HOIST_RUNTIME_DIR,
# HOIST_HOISTRUN, HOIST_HOISTCTL, IT_SRC_DIR).
#
# Job B (4 PEs, hoistrun) runs put/barrier rounds. While it runs, job A
# (2 PEs, started directly) loses rank 1 to SIGKILL in the middle of a put
# loop. Checks:
#   - A's rank 1 died of SIGKILL, A's rank 0 exited 0 (its barrier failed
#     with -ECONNRESET instead of hanging; it_kill checks that),
#   - job B finished successfully,
#   - afterwards hoistctl stats lists no client of job A (reclaimed), and
#     counts the death.
set -u
prog=$1
: "${HOIST_RUNTIME_DIR:?run me under harness.sh}"
ctl() { "$HOIST_HOISTCTL" --runtime-dir "$HOIST_RUNTIME_DIR" stats --json; }
json() { python3 "$IT_SRC_DIR/it_json.py" "$@"; }
fail=0
FAIL() { echo "[kill.sh] FAIL: $*" >&2; fail=1; }

JOBA=killA-$$
JOBB=killB-$$
stop=$HOIST_RUNTIME_DIR/stop-B.$$
pids=()
# shellcheck disable=SC2317 # called from the EXIT trap
kill_all() { for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done; }
trap kill_all EXIT

IT_STOP_FILE=$stop "$HOIST_HOISTRUN" -n 4 --job "$JOBB" --timeout 60 "$prog" bystander &
bpid=$!
pids+=("$bpid")

# wait until job B is fully attached (4 clients), at most 15 s
for _ in $(seq 1 150); do
	c=$(ctl 2>/dev/null | json count-string "$JOBB" 2>/dev/null)
	[ "${c:-0}" -ge 4 ] && break
	sleep 0.1
done
[ "${c:-0}" -ge 4 ] || echo "[kill.sh] note: job B not seen with 4 clients before job A starts (saw ${c:-0})" >&2

HOIST_JOB=$JOBA HOIST_SIZE=2 HOIST_RANK=0 "$prog" victim &
a0=$!
HOIST_JOB=$JOBA HOIST_SIZE=2 HOIST_RANK=1 "$prog" victim &
a1=$!
pids+=("$a0" "$a1")

wait "$a1"
s1=$?
wait "$a0"
s0=$?
[ "$s1" -eq 137 ] || FAIL "job A rank 1 should have died of SIGKILL (status 137), got $s1"
[ "$s0" -eq 0 ] || FAIL "job A rank 0 (the survivor) exited with $s0"

touch "$stop"
wait "$bpid"
sb=$?
[ "$sb" -eq 0 ] || FAIL "job B (running alongside) failed with status $sb"

# job A's clients must be reclaimed (the survivor finalized, the dead one
# was noticed), and job B's detached; allow the daemon a few seconds
nclients() { python3 -c 'import json,sys; print(len(json.load(sys.stdin)["clients"]))'; }
left=x
clients=x
for _ in $(seq 1 100); do
	out=$(ctl) || { FAIL "hoistctl stats --json failed"; break; }
	left=$(printf '%s' "$out" | json count-string "$JOBA")
	clients=$(printf '%s' "$out" | nclients)
	[ "$left" = 0 ] && [ "$clients" = 0 ] && break
	sleep 0.1
done
if [ "$left" != 0 ] || [ "$clients" != 0 ]; then
	FAIL "10 s after the jobs ended hoistctl stats still lists $left client(s) of job A, $clients in all:"
	printf '%s\n' "$out" >&2
fi
deaths=$(printf '%s' "$out" | json max client_deaths)
[ "${deaths:--1}" -ge 1 ] || FAIL "stats: client_deaths is ${deaths:-?}, expected >= 1"

trap - EXIT
[ "$fail" = 0 ] && echo "[kill.sh] PASS" >&2
exit "$fail"
