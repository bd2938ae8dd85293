#!/usr/bin/env bash
# fast.sh PROG: under `cluster.sh 2`. ov_phases mode 9: in every run of the
# phase the daemon serves the first 3/8 of its 64 gets (nbi), then, after
# a pause in which the other prefetches land, the client gets the rest
# itself from its fast table (pf_fast_hits). Its lookup looks near a
# cursor, the slot the next get is expected at: the cursor must move with
# the gets the daemon served too (client/rma.c post_get), or after 16 of
# them in a row it never finds a slot again in that run (before: 0 fast
# hits here; the prefetch sweep's 4 KiB runs and its G >= 1024 cliff).
# Asserted: at least a quarter of the gets after the stretch are served
# by the client (a slow machine may land some late: those wait in the
# daemon, and the cursor still moves on), the data is right, and no
# predicted get misses.
set -u
prog=$1
: "${HOIST_DIRS:?run me under cluster.sh}"
ITERS=6 BLOCKS=64 BYTES=64 NP=4
keys="pf_fast_hits pf_hits pf_waits pf_demand pf_late pf_misses pf_miss_cold"
. "$(dirname "$0")/snap.sh"
snap a || { echo "[fast.sh] FAIL: no stats" >&2; exit 1; }
out=$(HOIST_AUTO=1 "$HOIST_HOISTRUN" -n $NP --runtime-dirs "$HOIST_DIRS" --timeout $((100 * ${HOIST_TEST_SCALE:-1})) \
	"$prog" $ITERS $BLOCKS $BYTES 9) || { echo "[fast.sh] FAIL: the job failed: $out" >&2; exit 1; }
[[ $(grep -c " ok$" <<<"$out") -eq $NP ]] || { echo "[fast.sh] FAIL: $out" >&2; exit 1; }
snap b || { echo "[fast.sh] FAIL: no stats" >&2; exit 1; }
d() { echo $((b_$1 - a_$1)); }
echo "[fast.sh] $(for k in $keys; do printf '%s=%s ' "$k" "$(d "$k")"; done)"
rest=$(((ITERS - 1) * NP * (BLOCKS - BLOCKS * 3 / 8)))
fail=0
[[ $(d pf_misses) -eq $((NP * BLOCKS)) ]] || { echo "[fast.sh] FAIL: $(d pf_misses) misses, want $((NP * BLOCKS)) (the first run's)" >&2; fail=1; }
[[ $((4 * $(d pf_fast_hits))) -ge $rest ]] ||
	{ echo "[fast.sh] FAIL: $(d pf_fast_hits) gets served by the client itself, want at least a quarter of $rest" >&2; fail=1; }
((fail == 0)) && echo "[fast.sh] ok: $(d pf_fast_hits) of $rest gets after the daemon's stretch served by the client"
exit $fail
