#!/usr/bin/env bash
# stats.sh PROG: under `cluster.sh 2`. The observed behaviour of phase
# prefetch through hoistctl stats (sums over the daemons):
#  - a phase repeated ITERS times has all its gets served by prefetch from
#    the second run on (daemon hits + waits + client fast-path hits =
#    (ITERS-1) * gets), most of them by the client itself, and only the
#    first run misses;
#  - an own put overlapping a prefetched range invalidates it (and the get
#    still sees the put: the program checks its data); so does an own
#    atomic (mode 4);
#  - predictions that stop being used are dropped: wasted once, not again;
#  - the phase ends at the notifies are timed (pf_notify_ns > 0).
set -u
prog=$1
: "${HOIST_DIRS:?run me under cluster.sh}"
fail=0
FAIL() { echo "[stats.sh] FAIL: $*" >&2; fail=1; }
ITERS=10 BLOCKS=16 NP=4
run() { HOIST_AUTO=1 "$HOIST_HOISTRUN" -n $NP --runtime-dirs "$HOIST_DIRS" --timeout 100 "$prog" $ITERS $BLOCKS 4096 "$1" >/dev/null; }
keys="pf_issued pf_hits pf_waits pf_fast_hits pf_misses pf_wasted pf_invalidated pf_notify_ns"
. "$(dirname "$0")/snap.sh"

# every PE gets BLOCKS blocks per iteration from a PE on the other node
gets=$((BLOCKS * NP))
snap a
run 0 || FAIL "mode 0 run failed"
snap b
served=$(((b_pf_hits - a_pf_hits) + (b_pf_waits - a_pf_waits) + (b_pf_fast_hits - a_pf_fast_hits)))
[[ $served -eq $(((ITERS - 1) * gets)) ]] || FAIL "mode 0: $served gets served by prefetch, want $(((ITERS - 1) * gets))"
[[ $((b_pf_fast_hits - a_pf_fast_hits)) -gt $(((ITERS - 1) * gets / 2)) ]] ||
	FAIL "mode 0: only $((b_pf_fast_hits - a_pf_fast_hits)) gets took the client's fast path"
[[ $((b_pf_misses - a_pf_misses)) -eq $gets ]] || FAIL "mode 0: $((b_pf_misses - a_pf_misses)) misses, want $gets (first run only)"
[[ $((b_pf_wasted - a_pf_wasted)) -eq 0 ]] || FAIL "mode 0: prefetches wasted"
# the phase ends at the barrier notifies are timed (pf_notify_ns)
[[ $((b_pf_notify_ns - a_pf_notify_ns)) -gt 0 ]] || FAIL "mode 0: no time counted in overlap_notify (pf_notify_ns)"

run 1 || FAIL "mode 1 run failed (own put into a prefetched range)"
snap c
[[ $((c_pf_invalidated - b_pf_invalidated)) -ge $(((ITERS - 1) * NP)) ]] ||
	FAIL "mode 1: $((c_pf_invalidated - b_pf_invalidated)) invalidations, want >= $(((ITERS - 1) * NP))"

run 4 || FAIL "mode 4 run failed (own atomics into a prefetched range: a stale get?)"
snap c4
[[ $((c4_pf_invalidated - c_pf_invalidated)) -ge $(((ITERS - 1) * NP)) ]] ||
	FAIL "mode 4: $((c4_pf_invalidated - c_pf_invalidated)) invalidations by atomics, want >= $(((ITERS - 1) * NP))"
c_pf_wasted=$c4_pf_wasted c_pf_hits=$c4_pf_hits c_pf_waits=$c4_pf_waits c_pf_fast_hits=$c4_pf_fast_hits

run 3 || FAIL "mode 3 run failed (pattern changes at iteration 5)"
snap d
# iteration 5 wastes the old predictions once; from 6 on the new ones hit
[[ $((d_pf_wasted - c_pf_wasted)) -eq $gets ]] || FAIL "mode 3: $((d_pf_wasted - c_pf_wasted)) wasted, want $gets (once)"
served=$(((d_pf_hits - c_pf_hits) + (d_pf_waits - c_pf_waits) + (d_pf_fast_hits - c_pf_fast_hits)))
[[ $served -eq $(((ITERS - 2) * gets)) ]] || FAIL "mode 3: $served served by prefetch, want $(((ITERS - 2) * gets))"
# per-phase rows while a job runs: the get phase has run, been served by
# prefetch, and remembers exactly its BLOCKS gets. The job has iterations
# enough to be seen however slow the machine; it is stopped once it was.
HOIST_AUTO=1 "$HOIST_HOISTRUN" -n $NP --runtime-dirs "$HOIST_DIRS" "$prog" 1000000 $BLOCKS 4096 0 >/dev/null &
job=$!
ok=0
while kill -0 "$job" 2>/dev/null; do
	sleep 0.1
	"$HOIST_HOISTCTL" --runtime-dir "$HOIST_DIR_0" stats --json | python3 -c "
import json, sys
d = json.load(sys.stdin)
rows = [p for c in d['clients'] for p in c['phases']]
good = [p for p in rows if p['runs'] >= 2 and p['served'] > 0 and p['history'] == $BLOCKS]
sys.exit(0 if good else 1)" && { ok=1; break; }
done
if ((ok)); then
	kill -TERM "$job" # hoistrun stops its ranks
	wait "$job"
else
	wait "$job"
	FAIL "the per-phase job ended (status $?) without a phase row with runs >= 2, served > 0 and history == $BLOCKS"
fi
((fail == 0)) && echo "[stats.sh] prefetch hits, invalidation, retirement and per-phase rows as expected"
exit $fail
