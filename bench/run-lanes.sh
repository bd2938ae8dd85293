#!/usr/bin/env bash
# bench/run-lanes.sh - 1 MiB put bandwidth between two daemons on loopback
# (tcp) with tcp_lanes = each of a list, measured in one invocation.
#
#   bash bench/run-lanes.sh [--build DIR] [--lanes L] [--reps N] [--rounds R]
#                           [--size S] [-- hoistd-flags...]
#
# For every round (default 1) and every lane count of L (default 1,2,4), in
# that order, one job: hoistrun -n 2 --nodes 2 --hoistd-arg=--tcp-lanes=K
# hoist-bench --test bw --bw-sizes S (default 1m) --reps N (default 5).
# A row per lane count pools its reps of all rounds: median, min, max
# (GB/s), and the median against the first lane count's. DIR (default
# build/ of the repository) must hold bench/hoist-bench, launcher/hoistrun
# and daemon/hoistd. Flags after "--" go to every hoistd.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$repo/build"
lanes=1,2,4
reps=5
rounds=1
size=1m
daemon_flags=()
orig_args=("$@")
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--lanes) lanes=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	-h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	--) shift; daemon_flags=("$@"); break ;;
	*) echo "run-lanes.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
bench="$build/bench/hoist-bench" hoistrun="$build/launcher/hoistrun" hoistd="$build/daemon/hoistd"
for f in "$bench" "$hoistrun" "$hoistd"; do
	[ -x "$f" ] || { echo "run-lanes.sh: $f is missing; build first" >&2; exit 1; }
done
extra=()
for a in "${daemon_flags[@]}"; do extra+=(--hoistd-arg="$a"); done
declare -A vals
IFS=, read -r -a ks <<<"$lanes"
for ((r = 0; r < rounds; r++)); do
	for k in "${ks[@]}"; do
		line=$(HOIST_HOISTD="$hoistd" "$hoistrun" -n 2 --nodes 2 --hoistd-arg=--tcp-lanes="$k" \
			"${extra[@]}" "$bench" --test bw --bw-sizes "$size" --reps "$reps" --tsv --no-floor |
			grep -m1 'put bandwidth') || { echo "run-lanes.sh: the job with $k lane(s) failed" >&2; exit 1; }
		vals[$k]="${vals[$k]:-} $(cut -f4 <<<"$line")"
	done
done
printf 'put bandwidth %s, two daemons on loopback, tcp (GB/s, %s reps x %s rounds)\n' "$size" "$reps" "$rounds"
for k in "${ks[@]}"; do echo "$k ${vals[$k]}"; done | python3 -c '
import statistics, sys
base = None
print("%-6s %8s %8s %8s %8s" % ("lanes", "median", "min", "max", "x 1st"))
for line in sys.stdin:
    k, *v = line.split()
    v = [float(x) for x in v]
    m = statistics.median(v)
    base = base or m
    print("%-6s %8.3f %8.3f %8.3f %8.2f" % (k, m, min(v), max(v), m / base))
'
echo "command: bash bench/run-lanes.sh ${orig_args[*]}"
