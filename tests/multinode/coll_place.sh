#!/usr/bin/env bash
# coll_place.sh <it_coll> N: run under cluster.sh (HOIST_DIRS, HOIST_HOISTRUN).
# Places rank i on daemon i % K (interleaved, so every node's ranks are not
# contiguous) with hoistrun --runtime-dirs, and names rank 1 (on another
# node than rank 0 when K > 1) for it_coll's slab-delivery check.
set -u
prog=$1
n=$2
: "${HOIST_DIRS:?run me under cluster.sh}"
IFS=, read -r -a dirs <<<"$HOIST_DIRS"
k=${#dirs[@]}
list=
for ((i = 0; i < n; i++)); do list+="${list:+,}${dirs[$((i % k))]}"; done
late=-1
[ "$k" -gt 1 ] && [ "$n" -gt 1 ] && late=1
IT_COLL_LATE=$late IT_COLL_ITERS=${IT_COLL_ITERS:-200} \
	"$HOIST_HOISTRUN" -n "$n" --runtime-dirs "$list" --timeout 120 "$prog" || exit 1

# The daemons ran them: every node counts the collectives it completed
# (each one once, however many of its PEs took part) and, with several
# nodes, the bytes that crossed to the other nodes and back.
json() { python3 "${IT_SRC_DIR:?}/it_json.py" "$@"; }
fail=0
for ((i = 0; i < k && i < n; i++)); do
	st=$("$HOIST_HOISTCTL" --runtime-dir "${dirs[$i]}" stats --json)
	done_=$(json max coll_done <<<"$st")
	out=$(json max coll_bytes_out <<<"$st")
	in=$(json max coll_bytes_in <<<"$st")
	ag=$(json max coll_alltoall <<<"$st")
	echo "[coll_place.sh] node $i: coll_done=$done_ alltoall=$ag bytes_out=$out bytes_in=$in" >&2
	# at least the fixed parts of it_coll (several hundred collectives)
	[ "${done_:-0}" -ge 300 ] && [ "${ag:-0}" -ge 20 ] || { echo "[coll_place.sh] FAIL: node $i counted too few collectives" >&2; fail=1; }
	if [ "$k" -gt 1 ]; then
		[ "${out:-0}" -gt 1000000 ] && [ "${in:-0}" -gt 1000000 ] ||
			{ echo "[coll_place.sh] FAIL: node $i moved too few collective bytes between nodes" >&2; fail=1; }
	fi
done
exit "$fail"
