#!/usr/bin/env bash
# bench/run-wakecover.sh - writes into a waiting PE's heap that do not touch
# the word it waits on: before (BASE) and after (BUILD), interleaved in one
# run; a table of medians with [min-max], the ratios after/before, the load
# average, then the reproducing command.
#
#   bash bench/run-wakecover.sh --base DIR [--build DIR] [--reps N] [--time-ms T]
#                               [--tests LIST] [--only LIST]
#
# DIR: build directories (cmake RelWithDebInfo) of the two versions, each
# with daemon/hoistd, launcher/hoistrun and client/libhoist.so. BUILD
# (default build/ of this repository) also gives bench/hoist-amo-bench, which
# runs against BASE's libhoist through LD_LIBRARY_PATH (it uses the public
# API only), so both columns run the same benchmark code. Tests (LIST, a
# comma list for hoist-amo-bench --test, default flag,fadd,putq,add): in
# every one PE 1 waits in hoist_wait_until on a word of its heap while PE 0
# writes other words of it (flag: 64 puts and atomic adds elsewhere, then the
# flag PE 1 waits on and its answer, ns per round; fadd, putq, add: see
# bench/amo_bench.c). Configurations (--only, default direct,daemon,2d):
#   direct  hoistrun -n 2: same node, the library's direct stores and atomics
#   daemon  the same with HOIST_DIRECT=0: the daemon's copies and atomics
#   2d      hoistrun -n 2 --nodes 2: two daemons over loopback TCP
# Each of N reps (default 7) runs every configuration with BASE, then with
# BUILD, each a fresh job with fresh daemons.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$repo/build"
base=
reps=7
time_ms=300
tests="flag,fadd,putq,add"
only="direct,daemon,2d"
orig_args=("$@")
usage() { sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--base) base=$(cd "$2" && pwd); shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--time-ms) time_ms=$2; shift 2 ;;
	--tests) tests=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run-wakecover.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
done
[ -n "$base" ] || { echo "run-wakecover.sh: --base DIR is required (--help)" >&2; exit 2; }
case "$reps" in '' | *[!0-9]* | 0) echo "run-wakecover.sh: --reps must be a positive integer" >&2; exit 2 ;; esac
bench="$build/bench/hoist-amo-bench"
for f in "$bench" "$build/daemon/hoistd" "$build/launcher/hoistrun" "$base/daemon/hoistd" \
	"$base/launcher/hoistrun" "$base/client/libhoist.so"; do
	[ -e "$f" ] || { echo "run-wakecover.sh: missing $f" >&2; exit 1; }
done

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
echo "load at start: $(cat /proc/loadavg)"
run() { # version dir config
	local v=$1 dir=$2 cfg=$3 out rt
	rt=$(mktemp -d) # a private daemon of this version, never one that runs already
	local -a env=(HOISTD="$dir/daemon/hoistd" HOIST_RUNTIME_DIR="$rt")
	[ "$v" = before ] && env+=(LD_LIBRARY_PATH="$dir/client")
	local -a args=(-n 2 --timeout 300)
	case "$cfg" in
	direct) ;;
	daemon) env+=(HOIST_DIRECT=0) ;;
	2d) args+=(--nodes 2 --hoistd "$dir/daemon/hoistd") ;;
	esac
	out=$(env "${env[@]}" "$dir/launcher/hoistrun" "${args[@]}" "$bench" --test "$tests" \
		--time-ms "$time_ms") || { echo "run-wakecover.sh: $v $cfg failed" >&2; exit 1; }
	rm -rf "$rt"
	awk -v v="$v" -v c="$cfg" '$1 == "row" { print v, c, $2, $3, $4 }' <<<"$out" >>"$raw"
}
for r in $(seq 1 "$reps"); do
	for cfg in ${only//,/ }; do
		run before "$base" "$cfg"
		run after "$build" "$cfg"
	done
	echo "rep $r/$reps done, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
echo "load at end: $(cat /proc/loadavg)"
python3 - "$raw" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    v, c, t, unit, x = line.split()
    rows.setdefault((c, t, unit), {}).setdefault(v, []).append(float(x))
print("| config | test | unit | before: median [min-max] | after: median [min-max] | after/before |")
print("| --- | --- | --- | --- | --- | --- |")
for (c, t, unit), d in rows.items():
    def f(xs):
        return "%.1f [%.1f-%.1f]" % (statistics.median(xs), min(xs), max(xs)) if xs else "-"
    b, a = d.get("before", []), d.get("after", [])
    ratio = "%.2f" % (statistics.median(a) / statistics.median(b)) if a and b else "-"
    print("| %s | %s | %s | %s | %s | %s |" % (c, t, unit, f(b), f(a), ratio))
PY
printf 'reproduce: bash bench/run-wakecover.sh'
printf ' %q' "${orig_args[@]}"
echo
