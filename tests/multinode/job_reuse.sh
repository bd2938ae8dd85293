#!/usr/bin/env bash
# job_reuse.sh <it_putget>: run under `cluster.sh 2`.
# The same job key three times in a row, 4 PEs over the 2 daemons
# (hoistrun --runtime-dirs --job KEY). Every run must pass: addresses the
# daemons cached for the PEs of an earlier run (same job id, same ranks)
# must not be used for the PEs of a later one.
set -u
prog=$1
: "${HOIST_DIRS:?run me under cluster.sh}"
fail=0
for i in 1 2 3; do
	"$HOIST_HOISTRUN" -n 4 --runtime-dirs "$HOIST_DIRS" --job "reuse-$$" --timeout 60 "$prog" ||
		{ echo "[job_reuse.sh] FAIL: run $i of job key reuse-$$ failed with status $?" >&2; fail=1; }
done
[ "$fail" = 0 ] && echo "[job_reuse.sh] PASS" >&2
exit "$fail"
