#!/usr/bin/env bash
# addr_cache_modes.sh <hoist-kernels> off|evict: run under `cluster.sh 4
# --daemon-arg=--addr-cache-entries=N --daemon-arg=--coalesce=0`, N = 0 for
# "off", 1 for "evict".
#
# The halo stencil (bench/kernels.c: 2-D 5-point, ghost rows by blocking
# get, checked against the grid recomputed serially) with 4 PEs, one per
# daemon, HOIST_AUTO=0 and packs off: every get to another PE is one
# request of its own and one address-cache lookup. With 2 x 2 PEs each PE
# gets 4 ghost rows per iteration from 2 other PEs (up = down, left =
# right), and rank 0 gets the 3 others' checksums at the end:
# accesses = 16 * ITERS + 3 lookups over the 4 daemons.
#   off   (addr_cache_entries = 0): misses == accesses, hits == 0, nothing
#         inserted: every access was resolved by its target (tcp: by name)
#   evict (addr_cache_entries = 1): each daemon reaches 2 (PE, segment)
#         pairs through one entry: evictions > 0 on every daemon, hits +
#         misses == accesses
# and in both the stencil's results are right (the kernel exits 1 on a
# wrong cell, errors=0 in its line).
set -u
prog=$1 mode=$2
: "${HOIST_DIRS:?run me under cluster.sh}"
ITERS=20
fail=0
FAIL() { echo "[addr_cache_modes.sh $mode] FAIL: $*" >&2; fail=1; }
stats() { "$HOIST_HOISTCTL" --runtime-dir "$1" stats --json; }
dirs=("$HOIST_DIR_0" "$HOIST_DIR_1" "$HOIST_DIR_2" "$HOIST_DIR_3")
field() { stats "$1" | python3 "$MN_SRC_DIR/mn_stats.py" daemon "$2"; }

out=$(HOIST_AUTO=0 "$HOIST_HOISTRUN" -n 4 --runtime-dirs "$HOIST_DIRS" --job "acmodes-$mode-$$" \
	--timeout 100 "$prog" --kernel halo --iters "$ITERS" --warm 1) ||
	FAIL "the halo stencil failed (status $?): $out"
echo "$out"
case "$out" in
*"errors=0 "*) ;;
*) FAIL "the stencil's result is wrong or missing: '$out'" ;;
esac

want=$((16 * ITERS + 3))
hits=0 misses=0 inserts=0
for i in 0 1 2 3; do
	h=$(field "${dirs[$i]}" addr_cache_hits) m=$(field "${dirs[$i]}" addr_cache_misses)
	ins=$(field "${dirs[$i]}" addr_cache_inserts) ev=$(field "${dirs[$i]}" addr_cache_evictions)
	echo "daemon $i: hits=$h misses=$m inserts=$ins evictions=$ev"
	hits=$((hits + ${h:-0})) misses=$((misses + ${m:-0})) inserts=$((inserts + ${ins:-0}))
	if [ "$mode" = evict ] && [ "${ev:-0}" -le 0 ]; then
		FAIL "daemon $i: no eviction with a one-entry cache and 2 PEs reached"
	fi
done
case $mode in
off)
	[ "$misses" = "$want" ] || FAIL "misses $misses over the 4 daemons, want every access ($want)"
	[ "$hits" = 0 ] || FAIL "$hits hits with the cache off"
	[ "$inserts" = 0 ] || FAIL "$inserts inserts with the cache off"
	;;
evict)
	[ $((hits + misses)) = "$want" ] || FAIL "hits + misses = $((hits + misses)), want $want accesses"
	[ "$misses" -gt 0 ] || FAIL "no misses"
	;;
*) FAIL "mode must be off or evict" ;;
esac
[ "$fail" = 0 ] && echo "[addr_cache_modes.sh $mode] PASS" >&2
exit "$fail"
