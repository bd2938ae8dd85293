#!/usr/bin/env bash
# addr_cache.sh <it_putget>: run under `cluster.sh 2 --daemon-arg=--addr-cache-entries=1
# --daemon-arg=--heartbeat-ms=100`.
#
# Job A: it_putget with 4 PEs over the 2 daemons (hoistrun --runtime-dirs):
# every PE reaches two remote PEs again and again, so a one-entry address
# cache must hit, miss, insert and evict. Then on each daemon:
#   - node_id / nodes are right, hits, misses, inserts, evictions > 0,
#   - the other node is listed as a peer in state "up" with ops and bytes
#     in both directions, rtt_us > 0, connects >= 1, no losses, no
#     authentication failures;
#   - within 5 s after job A ended: addr_cache_invalidations > 0 on some
#     daemon (its cached entry pointed at a PE of job A, which left; the
#     peer's PE-gone notice must drop it).
# Job B (same program, new job key) must work on the same daemons and
# hit the cache again.
set -u
prog=$1
: "${HOIST_DIRS:?run me under cluster.sh}"
fail=0
FAIL() { echo "[addr_cache.sh] FAIL: $*" >&2; fail=1; }
stats() { "$HOIST_HOISTCTL" --runtime-dir "$1" stats --json; }
dirs=("$HOIST_DIR_0" "$HOIST_DIR_1")

"$HOIST_HOISTRUN" -n 4 --runtime-dirs "$HOIST_DIRS" --job "cacheA-$$" --timeout 100 "$prog" ||
	FAIL "job A (it_putget, 4 PEs over 2 daemons) failed with status $?"

for i in 0 1; do
	o=$((1 - i))
	out=$(stats "${dirs[$i]}") || { FAIL "hoistctl stats --json on node $i failed"; continue; }
	printf '%s' "$out" | python3 "$MN_SRC_DIR/mn_stats.py" check \
		"d['node_id'] == $i" "d['nodes'] == 2" \
		"d['addr_cache_hits'] > 0" "d['addr_cache_misses'] > 0" \
		"d['addr_cache_inserts'] > 0" "d['addr_cache_evictions'] > 0" \
		"sorted(p) == [$o]" "p[$o]['state'] == 'up'" "p[$o]['addr'].startswith('127.0.0.1:')" \
		"p[$o]['counters']['ops_out'] > 0" "p[$o]['counters']['bytes_out'] > 0" \
		"p[$o]['counters']['ops_in'] > 0" "p[$o]['counters']['bytes_in'] > 0" \
		"p[$o]['counters']['rtt_us'] > 0" "p[$o]['counters']['connects'] >= 1" \
		"p[$o]['counters']['losses'] == 0" "p[$o]['counters']['auth_failures'] == 0" ||
		FAIL "stats of node $i after job A (above)"
done

# the PEs of job A left: a cached address of one of them must be dropped
inv=0
end=$((SECONDS + 5))
while :; do
	inv=0
	for i in 0 1; do
		v=$(stats "${dirs[$i]}" | python3 "$MN_SRC_DIR/mn_stats.py" daemon addr_cache_invalidations)
		[ "${v:-0}" -gt 0 ] && inv=$((inv + v))
	done
	[ "$inv" -gt 0 ] || [ "$SECONDS" -ge "$end" ] && break
	sleep 0.2
done
if [ "$inv" -le 0 ]; then
	FAIL "5 s after job A ended addr_cache_invalidations is 0 on both daemons; each still caches the address of a PE that left:"
	for i in 0 1; do stats "${dirs[$i]}" | python3 "$MN_SRC_DIR/mn_stats.py" check "False" 2>&1 | grep daemon >&2; done
fi

hits0=$(stats "$HOIST_DIR_0" | python3 "$MN_SRC_DIR/mn_stats.py" daemon addr_cache_hits)
"$HOIST_HOISTRUN" -n 4 --runtime-dirs "$HOIST_DIRS" --job "cacheB-$$" --timeout 100 "$prog" ||
	FAIL "job B (same daemons, after job A) failed with status $?"
hits1=$(stats "$HOIST_DIR_0" | python3 "$MN_SRC_DIR/mn_stats.py" daemon addr_cache_hits)
[ "${hits1:-0}" -gt "${hits0:-0}" ] || FAIL "job B did not hit the address cache of node 0 ($hits0 -> $hits1)"

[ "$fail" = 0 ] && echo "[addr_cache.sh] PASS" >&2
exit "$fail"
