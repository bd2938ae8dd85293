#!/usr/bin/env bash
# Run the libFuzzer targets of a -DHOIST_FUZZ=ON build (see README.md here).
#
#   tests/fuzz/run.sh [--replay-only] [--only TARGET] [--time SEC] BUILD_DIR
#
# For each target (or only TARGET):
#   1. replay: every file of corpus/TARGET and regressions/TARGET once;
#   2. fuzz (unless --replay-only): SEC seconds (default $FUZZ_SECONDS or 20)
#      from a scratch copy of corpus/TARGET, so the tree's corpus stays as
#      committed; -timeout=10 s per input (a hang is a failure);
#      crashing inputs land in $FUZZ_ARTIFACTS (default BUILD_DIR/fuzz-artifacts).
# fuzz_ring runs as a PE of a real hoistd started by
# tests/integration/harness.sh (from the same build), which also fails the
# run if the daemon died or does not stop cleanly.
# Prints one line per target: executions, executions per second, status.
# Exit status 0 only if every target passed.
# Environment: FUZZ_SECONDS, FUZZ_ARTIFACTS, FUZZ_ARGS (extra libFuzzer
# arguments), ASAN_OPTIONS (default detect_leaks=0).
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
replay_only=0
only=
secs=${FUZZ_SECONDS:-20}
while [ $# -gt 1 ]; do
	case $1 in
	--replay-only) replay_only=1; shift ;;
	--only) only=$2; shift 2 ;;
	--time) secs=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || { echo "usage: $0 [--replay-only] [--only TARGET] [--time SEC] BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
bindir=$build/tests/fuzz
art=${FUZZ_ARTIFACTS:-$build/fuzz-artifacts}
mkdir -p "$art"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

targets=(fuzz_validate fuzz_settings fuzz_attach fuzz_stats fuzz_wire fuzz_ring)
[ -n "$only" ] && targets=("$only")

# run_target NAME ARGS...: the target, under the harness for fuzz_ring
run_target() {
	local t=$1
	shift
	if [ "$t" = fuzz_ring ]; then
		IT_TIMEOUT=$((secs + 120)) "$root/tests/integration/harness.sh" "$build/daemon/hoistd" \
			"$build/launcher/hoistrun" "$build/daemon/hoistctl" -- "$bindir/$t" "$@"
	else
		"$bindir/$t" "$@"
	fi
}

failed=0
summary=()
for t in "${targets[@]}"; do
	if [ ! -x "$bindir/$t" ]; then
		echo "run.sh: $bindir/$t missing (build with -DHOIST_FUZZ=ON, target hoist_fuzz)" >&2
		failed=1
		summary+=("$t: MISSING")
		continue
	fi
	inputs=()
	for d in "$here/corpus/$t" "$here/regressions/$t"; do
		[ -d "$d" ] || continue
		while IFS= read -r -d '' f; do inputs+=("$f"); done < <(find "$d" -type f ! -name '.*' -print0 | sort -z)
	done
	echo "==== $t: replaying ${#inputs[@]} corpus and regression inputs"
	if [ ${#inputs[@]} -gt 0 ] && ! run_target "$t" -error_exitcode=1 "${inputs[@]}" >"$art/$t.replay.log" 2>&1; then
		tail -n 40 "$art/$t.replay.log" >&2
		echo "run.sh: $t FAILED on a committed input (log: $art/$t.replay.log)" >&2
		failed=1
		summary+=("$t: replay FAILED")
		continue
	fi
	if [ "$replay_only" = 1 ]; then
		summary+=("$t: replay ok (${#inputs[@]} inputs)")
		continue
	fi
	work=$(mktemp -d /tmp/hoist-fuzz.XXXXXX)
	[ -d "$here/corpus/$t" ] && cp -r "$here/corpus/$t/." "$work/"
	echo "==== $t: fuzzing for $secs s"
	# shellcheck disable=SC2086 # FUZZ_ARGS is word-split on purpose
	run_target "$t" -error_exitcode=1 -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$art/$t-" ${FUZZ_ARGS:-} "$work" >"$art/$t.log" 2>&1
	rc=$?
	rm -rf "$work"
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$art/$t.log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$art/$t.log" | tail -n 1)
	if [ $rc -ne 0 ]; then
		tail -n 60 "$art/$t.log" >&2
		echo "run.sh: $t FAILED (status $rc; log $art/$t.log; the input is $art/$t-*:" >&2
		echo "        fix the bug, then keep the input as tests/fuzz/regressions/$t/<name>)" >&2
		failed=1
		summary+=("$t: FAILED after ${execs:-?} executions")
	else
		summary+=("$t: ${execs:-?} executions in ${secs} s (${rate:-?}/s)")
	fi
done
echo "==== fuzz summary"
printf '  %s\n' "${summary[@]}"
exit $failed
