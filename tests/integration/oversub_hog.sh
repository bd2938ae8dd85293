#!/usr/bin/env bash
# oversub_hog.sh <it_oversub>: run under harness.sh. Issue 16: the daemon
# path with more runnable threads than CPUs. Pins every thread of the
# harness's hoistd, a busy-looping hog and the 2-PE job it_oversub
# (HOIST_DIRECT=0: every get waits for the daemon) to one CPU, then checks
# that the spin/yield/sleep policy engaged on both sides: the clients
# counted long yields and sleeps (it_oversub asserts its own counts, the
# daemon reports them: wait_yields, wait_long_yields, wait_sleeps), and
# the idle progress thread yielded and, when a yield came back only after
# yield_long_us, slept at once (prog_yields, prog_long_yields). Whether a
# given yield of the progress thread lands on the hog is the scheduler's
# choice, so the job runs again (at most 20 times) until one did: progress,
# not time, bounds the loop.
set -u
prog=$1
: "${HOIST_RUNTIME_DIR:?run me under harness.sh}"
: "${HOISTD_PID:?run me under harness.sh}"
command -v taskset >/dev/null || { echo "[oversub_hog] SKIP: no taskset" >&2; exit 77; }
cpu=$(taskset -c -p $$ | sed 's/.*: *//; s/[-,].*//')
taskset -a -c -p "$cpu" "$HOISTD_PID" >/dev/null || { echo "[oversub_hog] SKIP: cannot pin hoistd" >&2; exit 77; }
fail=0
FAIL() { echo "[oversub_hog] FAIL: $*" >&2; fail=1; }
taskset -c "$cpu" bash -c 'while :; do :; done' &
hog=$!
trap 'kill $hog 2>/dev/null' EXIT
stat() {
	"$HOIST_HOISTCTL" --runtime-dir "$HOIST_RUNTIME_DIR" stats --json |
		python3 -c 'import json,sys; print(json.load(sys.stdin).get("daemon", {}).get(sys.argv[1], 0))' "$1"
}
for run in $(seq 1 20); do
	HOIST_DIRECT=0 taskset -c "$cpu" "$HOIST_HOISTRUN" -n 2 --timeout 100 "$prog" ||
		{ FAIL "the job failed (status $?)"; break; }
	[ "$(stat prog_long_yields)" -gt 0 ] && break
done
for k in wait_yields wait_long_yields wait_sleeps prog_yields prog_long_yields; do
	v=$(stat $k)
	echo "[oversub_hog] $k = $v (after $run jobs)" >&2
	[ "$v" -gt 0 ] || FAIL "$k = $v, want > 0"
done
[ "$fail" = 0 ] && echo "[oversub_hog] PASS" >&2
exit "$fail"
