#!/usr/bin/env bash
# bench/run.sh - run every hoist micro-benchmark against a private hoistd
# and print one table (or one JSON document) plus the reproducing command.
#
#   bash bench/run.sh [--reps N] [--scale F] [--test LIST] [--json] [--stats]
#                     [--build DIR] [--keep-log] [-- hoistd-flags...]
#
# It starts its own hoistd in a fresh temporary runtime directory (so it
# never touches a system daemon), waits for READY on --ready-fd, runs
#   hoistrun -n 2 hoist-bench            (floor, put, get, bw, msgrate, barrier)
#   hoistrun -n 4 hoist-bench --test barrier
# and stops the daemon with SIGTERM. Without --build it uses build/ of the
# repository and configures + builds it when hoist-bench is missing.
# Flags after "--" go to hoistd (e.g. -- --spin-us 200). HOIST_* variables
# in the environment reach both the daemon and the PEs. --test limits the
# 2-PE job to LIST (hoist-bench --test); the 4-PE barrier job runs only when
# LIST has barrier or all. BENCH_WRAP="perf stat -e ..." runs every rank
# under that command.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" run.sh
build="$repo/build"
reps=7
tests=all
scale=1
json=0
stats=0
keep_log=0
daemon_flags=()
orig_args=("$@")

usage() { sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
	case "$1" in
	--reps) reps=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--test) tests=$2; shift 2 ;;
	--json) json=1; shift ;;
	--stats) stats=1; shift ;;
	--build) build=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift 2 ;;
	--keep-log) keep_log=1; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; daemon_flags=("$@"); break ;;
	*) echo "run.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done

# The rows measure the daemon's ring: same-node puts/gets must not take the
# library's direct path (hoist_ptr; bench/run-ptr.sh measures that one)
export HOIST_DIRECT="${HOIST_DIRECT:-0}"

bench="$build/bench/hoist-bench"
hoistd="$build/daemon/hoistd"
hoistrun="$build/launcher/hoistrun"
hoistctl="$build/daemon/hoistctl"

if [ ! -x "$bench" ] || [ ! -x "$hoistd" ] || [ ! -x "$hoistrun" ]; then
	echo "run.sh: building in $build" >&2
	cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
	cmake --build "$build" -j"$(nproc)" --target hoist-bench hoistd hoistrun hoistctl >&2
fi

rt=$(mktemp -d "${TMPDIR:-/tmp}/hoist-bench.XXXXXX")
dpid=
cleanup() {
	local rc=$?
	bench_hoistd_stop || true
	if [ "$keep_log" = 1 ] && [ -f "$rt/hoistd.log" ]; then
		cp "$rt/hoistd.log" "${TMPDIR:-/tmp}/hoist-bench-hoistd.log"
		echo "run.sh: daemon log kept in ${TMPDIR:-/tmp}/hoist-bench-hoistd.log" >&2
	fi
	rm -rf "$rt"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_hoistd_start "$hoistd" "$rt" --log-level warn "${daemon_flags[@]}"

run_job() { # n, extra bench args...
	local n=$1
	shift
	local wrap=()
	[ -n "${BENCH_WRAP:-}" ] && read -r -a wrap <<<"$BENCH_WRAP"
	if ! "$hoistrun" -n "$n" --runtime-dir "$rt" --timeout 300 \
		"${wrap[@]}" "$bench" --reps "$reps" --scale "$scale" "$@"; then
		echo "run.sh: hoistrun -n $n hoist-bench $* failed; daemon log:" >&2
		cat "$rt/hoistd.log" >&2
		return 1
	fi
}

case ",$tests," in
*,all,*|*,barrier,*) with4=1 ;;
*) with4=0 ;;
esac
load=$(bench_load)
reproduce=$(bench_command "${orig_args[@]}")
cpu=$(bench_cpu_model)
if [ "$json" = 1 ]; then
	runs=$(run_job 2 --test "$tests" --json)
	if [ "$with4" = 1 ]; then
		runs="$runs,
$(run_job 4 --test barrier --json)"
	fi
	printf '{"cpu":"%s","cpus":%s,"loadavg_before":"%s","runs":[%s],"reproduce":"%s"}\n' \
		"$cpu" "$(nproc)" "$load" "$runs" "$reproduce"
else
	echo "# hoist-bench on $(nproc) CPUs ($cpu), reps=$reps scale=$scale, $(date -u +%FT%TZ)"
	echo "# load average before the run: $load (other busy processes distort every row)"
	echo "# ratio: x RT = median / floor round trip of the same run; x cpy = / 1-process memcpy"
	run_job 2 --test "$tests" --no-footer
	if [ "$with4" = 1 ]; then
		run_job 4 --test barrier --no-header --no-footer
	fi
	echo "# load average after the run: $(bench_load)"
	echo "reproduce: $reproduce"
fi

if [ "$stats" = 1 ] && [ -x "$hoistctl" ]; then
	echo "# hoistctl stats (daemon counters after all runs)"
	"$hoistctl" --runtime-dir "$rt" stats || true
fi
