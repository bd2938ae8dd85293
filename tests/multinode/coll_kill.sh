#!/usr/bin/env bash
# coll_kill.sh <it_coll> N [daemon]: under cluster.sh (HOIST_DIRS) or
# harness.sh (HOIST_RUNTIME_DIR). Starts N PEs of it_coll directly, rank i
# on daemon i % K.
#   (default) `it_coll kill`: the last rank kills itself (SIGKILL) while the
#             others are in an allreduce;
#   daemon    `it_coll peer`: the ranks of the last daemon stall before an
#             allreduce and that daemon is killed (SIGKILL, listed in
#             CLUSTER_KILLED) while the others are in it.
# The survivors must get -ECONNRESET (it_coll checks, and its watchdog turns
# a hang into a failure) and exit 0; the other daemons must survive
# (cluster.sh/harness.sh check that).
set -u
prog=$1
n=$2
mode=${3:-pe}
if [ -n "${HOIST_DIRS:-}" ]; then
	IFS=, read -r -a dirs <<<"$HOIST_DIRS"
else
	dirs=("${HOIST_RUNTIME_DIR:?run me under cluster.sh or harness.sh}")
fi
k=${#dirs[@]}
job=collkill-$$
pids=()
# shellcheck disable=SC2317 # called from the EXIT trap
kill_all() { for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done; }
trap kill_all EXIT
if [ "$mode" = daemon ]; then
	[ "$k" -ge 2 ] || { echo "[coll_kill.sh] daemon mode needs 2+ daemons" >&2; exit 2; }
	victim=$((k - 1))
	for ((i = 0; i < n; i++)); do
		stall=
		[ $((i % k)) -eq "$victim" ] && stall=1
		HOIST_JOB=$job HOIST_SIZE=$n HOIST_RANK=$i HOIST_RUNTIME_DIR=${dirs[$((i % k))]} \
			IT_COLL_STALL=$stall "$prog" peer &
		pids+=($!)
	done
	IFS=, read -r -a dpids <<<"${HOISTD_PIDS:?}"
	sleep 1 # the survivors are in (or about to enter) the allreduce
	echo "${dpids[$victim]}" >>"${CLUSTER_KILLED:?}"
	kill -KILL "${dpids[$victim]}"
	fail=0
	for ((i = 0; i < n; i++)); do
		if [ $((i % k)) -eq "$victim" ]; then
			kill -KILL "${pids[$i]}" 2>/dev/null
			wait "${pids[$i]}" 2>/dev/null
			continue
		fi
		wait "${pids[$i]}"
		st=$?
		[ "$st" -eq 0 ] || { echo "[coll_kill.sh] FAIL: surviving rank $i exited $st" >&2; fail=1; }
	done
	[ "$fail" = 0 ] && echo "[coll_kill.sh] PASS: survivors of the lost node got -ECONNRESET" >&2
	exit "$fail"
fi

for ((i = 0; i < n; i++)); do
	HOIST_JOB=$job HOIST_SIZE=$n HOIST_RANK=$i HOIST_RUNTIME_DIR=${dirs[$((i % k))]} "$prog" kill &
	pids+=($!)
done
fail=0
for ((i = 0; i < n; i++)); do
	wait "${pids[$i]}"
	st=$?
	if [ "$i" -eq $((n - 1)) ]; then
		[ "$st" -eq 137 ] || { echo "[coll_kill.sh] FAIL: rank $i exited $st, expected SIGKILL (137)" >&2; fail=1; }
	elif [ "$st" -ne 0 ]; then
		echo "[coll_kill.sh] FAIL: surviving rank $i exited $st" >&2
		fail=1
	fi
done
[ "$fail" = 0 ] && echo "[coll_kill.sh] PASS: $((n - 1)) survivors got -ECONNRESET" >&2
exit "$fail"
