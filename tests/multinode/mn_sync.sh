# mn_sync.sh: sourced by the scripts that step a program through a scenario
# under cluster.sh (resume.sh, rxbatch.sh; the program side is mn_sync.h).
# Sets $sync, the directory of the turn files, and defines:
#   mn_start2 JOB PROG [VAR=VALUE...]
#                            start PROG as rank 0 (on daemon 0; pid in a0) and
#                            rank 1 (daemon 1; a1) of job JOB, with
#                            MN_SYNC_DIR=$sync and the VAR=VALUE given
#   mn_start N JOB PROG [VAR=VALUE...]
#                            the same for N ranks, rank i on daemon i (pid in
#                            ai)
#   mn_until CMD [ARG...]    run CMD every 0.1 s until it succeeds: 1 if it
#                            did not within 60 s times HOIST_TEST_SCALE
#   mn_await NAME            mn_until the program created $sync/NAME
#   mn_daemon_stat DIR NAME  daemon counter NAME of the hoistd of runtime
#                            directory DIR (hoistctl stats --json), -1 if absent
: "${HOIST_DIRS:?run me under cluster.sh}"
. "$MN_SRC_DIR/../integration/runner.sh" # scaled
sync=$CLUSTER_BASE/sync
mkdir -p "$sync"
mn_start() {
	local n=$1 job=$2 prog=$3 i dir
	shift 3
	for ((i = 0; i < n; i++)); do
		dir=HOIST_DIR_$i
		env HOIST_JOB="$job" HOIST_SIZE="$n" MN_SYNC_DIR="$sync" "$@" \
			HOIST_RUNTIME_DIR="${!dir}" HOIST_RANK=$i "$prog" &
		eval "a$i=\$!"
	done
}
mn_start2() { mn_start 2 "$@"; }
mn_until() {
	local n
	n=$(($(scaled 60) * 10))
	for _ in $(seq 1 "$n"); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
mn_await() { mn_until test -e "$sync/$1"; }
mn_daemon_stat() { "$HOIST_HOISTCTL" --runtime-dir "$1" stats --json | python3 "$MN_SRC_DIR/mn_stats.py" daemon "$2"; }
