# mn_sync.sh: sourced by the scripts that step a program through a scenario
# under cluster.sh (resume.sh, rxbatch.sh; the program side is mn_sync.h).
# Sets $sync, the directory of the turn files (export it to the program as
# MN_SYNC_DIR), and defines:
#   mn_await NAME            wait (60 s times HOIST_TEST_SCALE) until the
#                            program created $sync/NAME; 1 if it did not
#   mn_daemon_stat DIR NAME  daemon counter NAME of the hoistd of runtime
#                            directory DIR (hoistctl stats --json), -1 if absent
: "${HOIST_DIRS:?run me under cluster.sh}"
sync=$CLUSTER_BASE/sync
mkdir -p "$sync"
mn_await() {
	local n
	n=$(awk -v f="${HOIST_TEST_SCALE:-1}" 'BEGIN { if (f + 0 < 1) f = 1; print int(600 * f) }')
	for _ in $(seq 1 "$n"); do
		[ -e "$sync/$1" ] && return 0
		sleep 0.1
	done
	return 1
}
mn_daemon_stat() { "$HOIST_HOISTCTL" --runtime-dir "$1" stats --json | python3 "$MN_SRC_DIR/mn_stats.py" daemon "$2"; }
