#!/usr/bin/env bash
# oversub_handoff.sh shared|apart <it_handoff>: run under harness.sh.
# Issue 16: the CPU hand-off between a client waiting for the daemon and
# the progress thread (client/wait.c, daemon/progress.c).
#   shared: every thread of the harness's hoistd and the 2-PE job
#           it_handoff (HOIST_DIRECT=0) pinned to one CPU. it_handoff
#           asserts that its waits began as hand-offs; here: the progress
#           thread yielded right after serving (prog_handoffs > 0; without
#           its half 0. Not a rate: a hand-off yield that ran another
#           process for yield_long_us stops them for the next 64 idle runs,
#           and with the client handing off too the thread is rarely idle,
#           so a loaded machine can leave a handful: +12 of 2000 seen at
#           load 10) and did not spin idle before
#           giving the CPU back (prog_yields, its idle yields, fewer than
#           one per four gets: without its half, about one per get).
#   apart:  hoistd on one CPU, the job on the other (needs 2 CPUs):
#           no hand-off on either side (prog_handoffs unchanged).
set -u
mode=$1
prog=$2
: "${HOIST_RUNTIME_DIR:?run me under harness.sh}"
: "${HOISTD_PID:?run me under harness.sh}"
command -v taskset >/dev/null || { echo "[oversub_handoff] SKIP: no taskset" >&2; exit 77; }
cpus=$(python3 -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))')
set -- $cpus
a=$1
b=${2:-}
if [ "$mode" = apart ] && [ -z "$b" ]; then
	echo "[oversub_handoff] SKIP: one CPU only" >&2
	exit 77
fi
[ "$mode" = shared ] && b=$a
taskset -a -c -p "$a" "$HOISTD_PID" >/dev/null || { echo "[oversub_handoff] SKIP: cannot pin hoistd" >&2; exit 77; }
fail=0
FAIL() { echo "[oversub_handoff] FAIL: $*" >&2; fail=1; }
stat() {
	"$HOIST_HOISTCTL" --runtime-dir "$HOIST_RUNTIME_DIR" stats --json |
		python3 -c 'import json,sys; print(json.load(sys.stdin).get("daemon", {}).get(sys.argv[1], 0))' "$1"
}
gets=2000 # it_handoff's GETS
h0=$(stat prog_handoffs)
y0=$(stat prog_yields)
IT_HANDOFF_EXPECT=$mode HOIST_DIRECT=0 taskset -c "$b" "$HOIST_HOISTRUN" -n 2 --timeout 100 "$prog" ||
	FAIL "the job failed (status $?)"
h=$(($(stat prog_handoffs) - h0))
y=$(($(stat prog_yields) - y0))
echo "[oversub_handoff] $mode: prog_handoffs +$h prog_yields +$y for $gets gets" >&2
if [ "$mode" = shared ]; then
	[ "$h" -gt 0 ] || FAIL "prog_handoffs +$h, want > 0: the thread never yielded after serving a waiter on its CPU"
	[ "$y" -lt $((gets / 4)) ] || FAIL "prog_yields +$y, want < $((gets / 4)): the thread spun idle before handing the CPU back"
else
	[ "$h" -eq 0 ] || FAIL "prog_handoffs +$h on two CPUs, want 0"
fi
[ "$fail" = 0 ] && echo "[oversub_handoff] PASS" >&2
exit "$fail"
