#!/usr/bin/env bash
# tail.sh PROG: under `cluster.sh 2`, daemons at their default settings.
# A phase of 4096 gets (of 256 B, from a PE of the other daemon, by each of
# the 4 PEs) repeated ITERS times: the prefetcher has no tail. Only the
# first run misses (pf_miss_cold: nothing recorded yet); no get of a later
# run misses for any reason (pf_miss_new, pf_miss_full: more gets than
# phase_max_gets remembers, pf_miss_invalid), none is skipped for arena
# room (pf_skip_room), and every one of them, the first included, is served
# by its prefetch (client fast path, daemon hit, wait for the one in
# flight, or issued on demand and waited for) or, only when the transport
# had no credit for an on-demand issue, fetched as a late get (pf_late,
# printed). ov_phases checks the data of every get.
set -u
prog=$1
: "${HOIST_DIRS:?run me under cluster.sh}"
fail=0
FAIL() { echo "[tail.sh] FAIL: $*" >&2; fail=1; }
ITERS=4 G=4096 BYTES=256 NP=4
keys="pf_hits pf_waits pf_fast_hits pf_demand pf_late pf_misses pf_miss_cold pf_miss_new pf_miss_full pf_miss_invalid pf_skip_room pf_issued pf_wasted"
. "$(dirname "$0")/snap.sh"
snap a || { echo "[tail.sh] FAIL: no stats (a counter missing?)" >&2; exit 1; }
HOIST_AUTO=1 "$HOIST_HOISTRUN" -n $NP --runtime-dirs "$HOIST_DIRS" --timeout 300 "$prog" $ITERS $G $BYTES 0 >/dev/null ||
	FAIL "the run failed (or read wrong data)"
snap b || { echo "[tail.sh] FAIL: no stats" >&2; exit 1; }
d() { echo $((b_$1 - a_$1)); }
echo "[tail.sh] $(for k in $keys; do printf '%s=%s ' "$k" "$(d "$k")"; done)"
[[ $(d pf_misses) -eq $((NP * G)) ]] || FAIL "$(d pf_misses) misses, want $((NP * G)) (the first run's only)"
[[ $(d pf_miss_cold) -eq $((NP * G)) ]] || FAIL "$(d pf_miss_cold) cold misses, want $((NP * G))"
for k in pf_miss_new pf_miss_full pf_miss_invalid pf_skip_room pf_wasted; do
	[[ $(d $k) -eq 0 ]] || FAIL "$k = $(d $k), want 0"
done
served=$(($(d pf_hits) + $(d pf_waits) + $(d pf_fast_hits)))
want=$(((ITERS - 1) * NP * G))
[[ $((served + $(d pf_late))) -eq $want ]] ||
	FAIL "$served gets served by prefetch + $(d pf_late) late, want $want"
[[ $(d pf_late) -le $((want / 100)) ]] || FAIL "$(d pf_late) late gets (more than 1%)"
((fail == 0)) && echo "[tail.sh] $want predicted gets: $served served by prefetch, $(d pf_late) late, no miss after the first run"
exit $fail
