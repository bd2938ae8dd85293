#!/usr/bin/env bash
# node_kill.sh <prog> <N> <TAG> <what>: run under harness.sh (HOIST_HOISTRUN).
# A one-node job of N PEs whose last rank SIGKILLs itself once every other
# PE arrived at a node barrier or node collective (`prog kill`: it_nodebar,
# it_nodecoll). The run must end (the harness's watchdog catches a hang),
# with a failure status (a rank was killed), and each of the other N-1 PEs
# must report that its <what> (barrier, collective) ended with an error
# (the line <TAG>-KILL-OK). NODE_KILL_ARGS: more hoistrun options (e.g.
# --nodes 2: a job over two daemons, tests/multinode).
set -u
prog=$1
n=$2
tag=$3
what=$4
me="[node_kill.sh $tag]"
: "${HOIST_HOISTRUN:?run me under harness.sh}"
# shellcheck disable=SC2086 # NODE_KILL_ARGS: words on purpose
out=$("$HOIST_HOISTRUN" -n "$n" ${NODE_KILL_ARGS:-} --timeout 55 --grace 40 "$prog" kill 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -eq 0 ]; then
	echo "$me FAIL: hoistrun exited 0 though rank $((n - 1)) was killed" >&2
	exit 1
fi
got=$(printf '%s\n' "$out" | grep -c "$tag-KILL-OK")
if [ "$got" -ne $((n - 1)) ]; then
	echo "$me FAIL: $got of $((n - 1)) surviving PEs saw their $what fail" >&2
	exit 1
fi
echo "$me PASS: $got surviving PEs saw their $what fail (hoistrun status $rc)" >&2
