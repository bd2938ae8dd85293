#!/usr/bin/env bash
# nodebar_kill.sh <it_nodebar> <N>: run under harness.sh (HOIST_HOISTRUN).
# A one-node job of N PEs whose last rank SIGKILLs itself once every other
# PE arrived at a node barrier (it_nodebar kill). The run must end (the
# harness's watchdog catches a hang), with a failure status (a rank was
# killed), and each of the other N-1 PEs must report that its barrier
# ended with an error (NODEBAR-KILL-OK).
set -u
prog=$1
n=$2
: "${HOIST_HOISTRUN:?run me under harness.sh}"
out=$("$HOIST_HOISTRUN" -n "$n" --timeout 55 --grace 40 "$prog" kill 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -eq 0 ]; then
	echo "[nodebar_kill.sh] FAIL: hoistrun exited 0 though rank $((n - 1)) was killed" >&2
	exit 1
fi
got=$(printf '%s\n' "$out" | grep -c 'NODEBAR-KILL-OK')
if [ "$got" -ne $((n - 1)) ]; then
	echo "[nodebar_kill.sh] FAIL: $got of $((n - 1)) surviving PEs saw their barrier fail" >&2
	exit 1
fi
echo "[nodebar_kill.sh] PASS: $got surviving PEs saw their barrier fail (hoistrun status $rc)" >&2
