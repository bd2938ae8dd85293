#!/usr/bin/env bash
# nodecoll_kill.sh <it_nodecoll> <N>: run under harness.sh (HOIST_HOISTRUN).
# A one-node job of N PEs whose last rank SIGKILLs itself once every other
# PE arrived at a node collective (it_nodecoll kill). The run must end (the
# harness's watchdog catches a hang), with a failure status (a rank was
# killed), and each of the other N-1 PEs must report that its collective
# ended with an error (NODECOLL-KILL-OK).
set -u
prog=$1
n=$2
: "${HOIST_HOISTRUN:?run me under harness.sh}"
out=$("$HOIST_HOISTRUN" -n "$n" --timeout 55 --grace 40 "$prog" kill 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -eq 0 ]; then
	echo "[nodecoll_kill.sh] FAIL: hoistrun exited 0 though rank $((n - 1)) was killed" >&2
	exit 1
fi
got=$(printf '%s\n' "$out" | grep -c 'NODECOLL-KILL-OK')
if [ "$got" -ne $((n - 1)) ]; then
	echo "[nodecoll_kill.sh] FAIL: $got of $((n - 1)) surviving PEs saw their collective fail" >&2
	exit 1
fi
echo "[nodecoll_kill.sh] PASS: $got surviving PEs saw their collective fail (hoistrun status $rc)" >&2
