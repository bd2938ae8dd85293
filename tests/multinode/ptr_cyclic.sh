#!/usr/bin/env bash
# ptr_cyclic.sh <it_ptr>: run under `cluster.sh 2`.
# 7 PEs placed round-robin over the two daemons (rank i on node i % 2, each
# rank started here with its own HOIST_RUNTIME_DIR): every node's local
# ranks are not contiguous, so hoist_ptr's lookup takes its search path.
set -u
prog=$1
: "${HOIST_DIR_0:?run me under cluster.sh}" "${HOIST_DIR_1:?}"
n=7 job=cyclic-$$
pids=()
for r in $(seq 0 $((n - 1))); do
	dir=$HOIST_DIR_0
	[ $((r % 2)) = 1 ] && dir=$HOIST_DIR_1
	HOIST_RUNTIME_DIR=$dir HOIST_RANK=$r HOIST_SIZE=$n HOIST_JOB=$job \
		timeout 60 "$prog" --cyclic 2 </dev/null &
	pids+=($!)
done
fail=0
for r in "${!pids[@]}"; do
	wait "${pids[$r]}" || { echo "[ptr_cyclic.sh] FAIL: rank $r exited with status $?" >&2; fail=1; }
done
[ "$fail" = 0 ] && echo "[ptr_cyclic.sh] PASS" >&2
exit "$fail"
