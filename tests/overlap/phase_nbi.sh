#!/usr/bin/env bash
# phase_nbi.sh PROG: under `cluster.sh 2`. ov_phases mode 8: a phase named
# by hoist_phase whose nbi gets wait for their prefetches in flight when
# the next hoist_phase arrives. The daemon holds that boundary until the
# client's operations completed (as a barrier's notify), so the gets
# complete with the right data and the quiet returns; without it the new
# phase orphaned the waiting gets and the quiet never returned.
set -u
prog=$1
: "${HOIST_DIRS:?run me under cluster.sh}"
ITERS=12 BLOCKS=32 NP=4
keys="pf_hits pf_waits"
. "$(dirname "$0")/snap.sh"
snap a || exit 1
out=$(HOIST_AUTO=1 "$HOIST_HOISTRUN" -n $NP --runtime-dirs "$HOIST_DIRS" --timeout $((100 * ${HOIST_TEST_SCALE:-1})) "$prog" $ITERS $BLOCKS 16384 8) || {
	echo "[phase_nbi.sh] FAIL: the job failed (a quiet that never returned ends in hoistrun's timeout)" >&2
	exit 1
}
[[ $(grep -c " ok$" <<<"$out") -eq $NP ]] || { echo "[phase_nbi.sh] FAIL: $out" >&2; exit 1; }
snap b || exit 1
# the gets met their prefetches (served or waited for): the path was taken
met=$((b_pf_hits - a_pf_hits + b_pf_waits - a_pf_waits))
[[ $met -gt 0 ]] || { echo "[phase_nbi.sh] FAIL: no get met a prefetch" >&2; exit 1; }
echo "[phase_nbi.sh] ok: $met gets met their prefetch"
