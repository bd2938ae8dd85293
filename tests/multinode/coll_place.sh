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
IT_COLL_LATE=$late IT_COLL_ITERS=${IT_COLL_ITERS:-100} \
	exec "$HOIST_HOISTRUN" -n "$n" --runtime-dirs "$list" --timeout 120 "$prog"
