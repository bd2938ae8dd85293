#!/usr/bin/env bash
# nodecoll_place.sh <it_nodecoll> PLACEMENT: run under cluster.sh (HOIST_DIRS,
# HOIST_HOISTRUN). PLACEMENT lists, per daemon, how many consecutive ranks
# it hosts (e.g. 3,2,1: ranks 0-2 on daemon 0, 3-4 on 1, 5 on 2), placed
# with hoistrun --runtime-dirs. it_nodecoll runs with IT_NC_WANT=auto: the
# node path on daemons with 2+ ranks, the daemon's per-PE path on the rest.
set -u
prog=$1
placement=$2
: "${HOIST_DIRS:?run me under cluster.sh}"
IFS=, read -r -a dirs <<<"$HOIST_DIRS"
IFS=, read -r -a counts <<<"$placement"
list=
n=0
for ((i = 0; i < ${#counts[@]}; i++)); do
	for ((j = 0; j < counts[i]; j++)); do
		list+="${list:+,}${dirs[$i]}"
		n=$((n + 1))
	done
done
# ranks 0 and 1 on one daemon: it_nodecoll's broadcasts ahead (IT_NC_AHEAD)
ahead=
[ "${counts[0]}" -ge 2 ] && ahead=1
# the first two ranks of the second daemon, when it hosts 2+: the inbox
# (IT_NC_REMOTE: one reads broadcasts from rank 0 before the other arrives)
remote=
[ "${#counts[@]}" -ge 2 ] && [ "${counts[0]}" -ge 1 ] && [ "${counts[1]}" -ge 2 ] &&
	remote="${counts[0]},$((counts[0] + 1))"
# 3 daemons: the root's sends 2 data streams (binomial tree) and 1 check
msgs=
[ "${#counts[@]}" -eq 3 ] && msgs=3
IT_NC_WANT=auto IT_NC_AHEAD=$ahead IT_NC_REMOTE=$remote IT_NC_ROOT_MSGS=$msgs "$HOIST_HOISTRUN" -n "$n" --runtime-dirs "$list" --timeout 120 "$prog"
