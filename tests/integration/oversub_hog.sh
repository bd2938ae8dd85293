#!/usr/bin/env bash
# oversub_hog.sh <it_oversub>: run under harness.sh. Issue 16: the daemon
# path with more runnable threads than CPUs. Pins every thread of the
# harness's hoistd, a busy-looping hog and the 2-PE job it_oversub
# (HOIST_DIRECT=0: every get waits for the daemon) to one CPU, then checks
# that the spin/yield/sleep policy engaged on both sides: the clients
# counted long yields and sleeps (it_oversub asserts its own counts, the
# daemon reports them: wait_yields, wait_long_yields, wait_sleeps), and
# the idle progress thread yielded and, when a yield came back only after
# yield_long_us, slept at once, and in the next idle runs without a yield
# (prog_yields, prog_long_yields, sleeps). Whether a
# given yield of the progress thread lands on the hog is the scheduler's
# choice, so the job runs again (at most 20 times) until one did: progress,
# not time, bounds the loop.
#
# oversub_hog.sh --client-only <it_oversub>: the daemon runs with
# --yield-long-us 0 --spin-us 1000000 (its idle thread yields on and never
# sleeps), so only the clients' policy keeps the gets off the hog's
# slices; only the clients' counters are checked (it_oversub: after a late
# yield the next waits sleep without yielding).
set -u
client_only=0
[ "${1:-}" = --client-only ] && { client_only=1; shift; }
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
	[ "$client_only" = 1 ] || [ "$(stat prog_long_yields)" -gt 0 ] && break
done
if [ "$client_only" = 1 ]; then
	for k in wait_yields wait_long_yields wait_sleeps; do
		echo "[oversub_hog] $k = $(stat $k)" >&2
	done
	[ "$fail" = 0 ] && echo "[oversub_hog] PASS" >&2
	exit "$fail"
fi
for k in wait_yields wait_long_yields wait_sleeps prog_yields prog_long_yields sleeps; do
	v=$(stat $k)
	eval "v_$k=$v"
	echo "[oversub_hog] $k = $v (after $run jobs)" >&2
	[ "$v" -gt 0 ] || FAIL "$k = $v, want > 0"
done
# after a late yield the progress thread sleeps without yielding for the
# next idle runs: most sleeps had no yield before them. Without that,
# every idle run yields to the hog at least once before it sleeps.
[ $((v_prog_yields * 2)) -lt "$v_sleeps" ] ||
	FAIL "prog_yields $v_prog_yields for $v_sleeps sleeps: the idle runs after a late yield yielded too"
[ "$fail" = 0 ] && echo "[oversub_hog] PASS" >&2
exit "$fail"
