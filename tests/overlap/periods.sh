#!/usr/bin/env bash
# periods.sh PROG: under `cluster.sh 2`. Phase prefetch of patterns that
# are not "the same as last time" (sums of hoistctl stats over the daemons;
# every run checks the data it read):
#  - a double buffer (ov_phases mode 5: the phase's gets alternate between
#    two address sets) is predicted with period 2: from the 4th run on its
#    gets are served by prefetch; the last-run predictor serves none;
#  - a rotation over three sets (mode 6) with period 3, from the 5th run;
#  - gets at new random places every run (mode 7): the phase is backed off
#    after 2 bad runs, so only those 2 runs' prefetches are wasted.
set -u
prog=$1
: "${HOIST_DIRS:?run me under cluster.sh}"
fail=0
FAIL() { echo "[periods.sh] FAIL: $*" >&2; fail=1; }
ITERS=14 BLOCKS=12 NP=4
keys="pf_issued pf_hits pf_waits pf_fast_hits pf_misses pf_wasted pf_periodic pf_backoffs pf_dry"
. "$(dirname "$0")/snap.sh"
run() { HOIST_AUTO=1 "$HOIST_HOISTRUN" -n $NP --runtime-dirs "$HOIST_DIRS" --timeout 100 "$prog" $ITERS $BLOCKS 4096 "$1" >/dev/null; }
served() { echo $((${2}_pf_hits - ${1}_pf_hits + ${2}_pf_waits - ${1}_pf_waits + ${2}_pf_fast_hits - ${1}_pf_fast_hits)); }

snap a
run 5 || FAIL "mode 5 (period 2) run failed"
snap b
g=$((NP * BLOCKS / 2)) # gets per iteration, all PEs
s=$(served a b)
# runs 0-2 learn (1 and 2 mispredict), 3.. are served: allow a tenth late
[[ $((s * 10)) -ge $(((ITERS - 3) * g * 9)) ]] || FAIL "mode 5: $s gets served by prefetch, want ~$(((ITERS - 3) * g))"
[[ $((b_pf_periodic - a_pf_periodic)) -ge $(((ITERS - 3) * NP)) ]] ||
	FAIL "mode 5: $((b_pf_periodic - a_pf_periodic)) runs predicted with a period >= 2"
[[ $((b_pf_wasted - a_pf_wasted)) -le $((2 * g)) ]] || FAIL "mode 5: $((b_pf_wasted - a_pf_wasted)) wasted, want <= $((2 * g))"

run 6 || FAIL "mode 6 (period 3) run failed"
snap c
g=$((NP * (BLOCKS / 3)))
s=$(served b c)
[[ $((s * 10)) -ge $(((ITERS - 4) * g * 9)) ]] || FAIL "mode 6: $s gets served by prefetch, want ~$(((ITERS - 4) * g))"

run 7 || FAIL "mode 7 (random gets) run failed"
snap d
g=$((NP * BLOCKS / 2))
[[ $((d_pf_backoffs - c_pf_backoffs)) -ge $NP ]] || FAIL "mode 7: $((d_pf_backoffs - c_pf_backoffs)) phases backed off, want >= $NP"
[[ $((d_pf_dry - c_pf_dry)) -ge $(((ITERS - 3) * NP)) ]] || FAIL "mode 7: $((d_pf_dry - c_pf_dry)) dry runs, want >= $(((ITERS - 3) * NP))"
[[ $((d_pf_wasted - c_pf_wasted)) -le $((2 * g)) ]] || FAIL "mode 7: $((d_pf_wasted - c_pf_wasted)) wasted, want <= $((2 * g))"
[[ $((d_pf_issued - c_pf_issued)) -le $((2 * g)) ]] || FAIL "mode 7: $((d_pf_issued - c_pf_issued)) issued, want <= $((2 * g))"
echo "[periods.sh] mode 5: $(served a b) served, mode 6: $(served b c), mode 7: $((d_pf_wasted - c_pf_wasted)) wasted, $((d_pf_backoffs - c_pf_backoffs)) back-offs"
((fail == 0)) && echo "[periods.sh] period 2 and 3 predicted, random gets backed off"
exit $fail
