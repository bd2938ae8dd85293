#!/usr/bin/env bash
# Two jobs on one daemon at the same time: job B (it_ptr, 3 PEs) uses
# hoist_ptr normally while job A (it_peers_bad, 2 PEs) sends bad peer
# requests, among them one for job B's heaps. Both must pass: the daemon
# refuses A's requests and keeps serving A and B.
#   peers_bad.sh <it_peers_bad> <it_ptr>   (under harness.sh)
set -u
bad=$1 ptr=$2
keyb=peers-bad-b-$$
"$HOIST_HOISTRUN" --timeout 50 -n 3 --job "$keyb" "$ptr" &
pb=$!
OTHER_JOB=$keyb "$HOIST_HOISTRUN" --timeout 50 -n 2 --job peers-bad-a-$$ "$bad"
sa=$?
wait "$pb"
sb=$?
echo "[peers_bad.sh] job A (bad requests) exit $sa, job B (it_ptr) exit $sb" >&2
[ "$sa" = 0 ] && [ "$sb" = 0 ]
