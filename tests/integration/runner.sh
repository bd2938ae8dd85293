# runner.sh: what the two test runners share, harness.sh (one hoistd) and
# ../multinode/cluster.sh (K hoistd); sourced by them, after they define
# log. Defines:
#   scaled SEC        SEC times HOIST_TEST_SCALE (default 1, at least 1),
#                     rounded up
#   run_test SEC CMD...
#                     run CMD under `timeout SEC` (SIGKILL 5 s after); sets
#                     status to its exit status, logs how it ended and how
#                     long it took, and sets show_log=1 if it failed

scaled() { awk -v s="$1" -v f="${HOIST_TEST_SCALE:-1}" 'BEGIN { if (f + 0 < 1) f = 1; v = s * f; i = int(v); if (i < v) i++; print i }'; }

run_test() {
	local sec=$1 t0 t1 elapsed
	shift
	t0=$(date +%s.%N)
	timeout -k 5 "$sec" "$@"
	status=$?
	t1=$(date +%s.%N)
	elapsed=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	case $status in
	0) log "test command exited 0 (${elapsed} s)" ;;
	77) log "test command skipped (exit 77, ${elapsed} s)" ;;
	124 | 137) log "FAIL: test command timed out after $sec s (status $status)"; show_log=1 ;;
	*) log "FAIL: test command exited with status $status (${elapsed} s)"; show_log=1 ;;
	esac
}
