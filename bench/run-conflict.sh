#!/usr/bin/env bash
# bench/run-conflict.sh - issue 16's conflict-stage goal: ns per conflict
# check inside the bounding box, per add and per in-order retire, at 10k
# outstanding puts, random and monotonic streams (hoist-conflict-cost
# --outstanding, bench/conflict_cost.c), the current daemon/stages/conflict.c
# ("after") interleaved with an older one ("before") in the same run.
#
#   bash bench/run-conflict.sh [--reps 7] [--outstanding 10000] [--len 64]
#                              [--base REV] [--cc CC] [--keep DIR]
#
# Both binaries are compiled here by the same command (CC, default cc,
# -std=c11 -D_GNU_SOURCE -O2 -g -DNDEBUG as the CMake RelWithDebInfo build) from this tree's bench/conflict_cost.c:
# "after" with this tree's conflict.c/.h, "before" with those of git
# revision REV (default d6e2f8a: main before issue 16's conflict work, the
# AVL interval tree). Every repetition runs before and after once per
# pattern, alternating which goes first; a run builds the N outstanding
# puts, then its value is the median of 64 rounds (8192 checks, 1024 adds,
# 1024 retires each). The table gives median (min-max) over the
# repetitions, after/before, and after against the goal (<= 50 ns per
# operation), plus "per put" = check + add + retire (what one deferred put
# that is checked once costs the daemon). The 1/5/15-minute load average
# is printed before and after: the machine may be shared.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
reps=7
outstanding=10000
len=64
base=d6e2f8a
cc=${CC:-cc}
keep=

usage() { sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
	case "$1" in
	--reps) reps=$2; shift 2 ;;
	--outstanding) outstanding=$2; shift 2 ;;
	--len) len=$2; shift 2 ;;
	--base) base=$2; shift 2 ;;
	--cc) cc=$2; shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run-conflict.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=${keep:-$tmp/out}
mkdir -p "$out" "$tmp/before"

git -C "$repo" show "$base:daemon/stages/conflict.c" >"$tmp/before/conflict.c"
git -C "$repo" show "$base:daemon/stages/conflict.h" >"$tmp/before/conflict.h"
flags=(-std=c11 -D_GNU_SOURCE -O2 -g -DNDEBUG -Wall -Wextra)
"$cc" "${flags[@]}" -I"$tmp/before" -I"$repo/bench" -o "$tmp/cost-before" \
	"$repo/bench/conflict_cost.c" "$tmp/before/conflict.c"
"$cc" "${flags[@]}" -I"$repo/daemon/stages" -I"$repo/bench" -o "$tmp/cost-after" \
	"$repo/bench/conflict_cost.c" "$repo/daemon/stages/conflict.c"

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$out/runs.txt"
for ((r = 0; r < reps; r++)); do
	for pattern in random mono; do
		if ((r % 2 == 0)); then order="before after"; else order="after before"; fi
		for v in $order; do
			"$tmp/cost-$v" --outstanding "$outstanding" --len "$len" --pattern "$pattern" --reps 1 |
				grep '^summary' | sed "s/^summary/variant=$v rep=$r/" >>"$out/runs.txt"
		done
	done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
echo "# conflict stage: $outstanding outstanding puts of $len B on one target (hoist-conflict-cost --outstanding)"
echo "# before = conflict.c of $base, after = this tree; $reps interleaved reps, median (min-max);" \
	"$(nproc) CPUs ($cpu); load average before: $load_before, after: $load_after"
echo "# command: bash bench/run-conflict.sh --reps $reps --outstanding $outstanding --len $len --base $base"
python3 - "$out/runs.txt" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    kv = dict(w.split("=", 1) for w in line.split() if "=" in w)
    key = (kv["pattern"], kv["variant"])
    d = {k: float(kv[k]) for k in ("check_ns", "add_ns", "retire_ns")}
    d["put_ns"] = d["check_ns"] + d["add_ns"] + d["retire_ns"]
    runs.setdefault(key, []).append(d)
GOAL = 50.0
print("| pattern | ns per | before | after | after/before | after/goal (%.0f ns) |" % GOAL)
print("|---|---|---|---|---|---|")
fail = 0
for pattern in ("random", "mono"):
    for op, name in (("check_ns", "check"), ("add_ns", "add"), ("retire_ns", "retire"), ("put_ns", "put (check+add+retire)")):
        cols = []
        med = {}
        for v in ("before", "after"):
            xs = [d[op] for d in runs[(pattern, v)]]
            med[v] = statistics.median(xs)
            cols.append("%.1f (%.1f-%.1f)" % (med[v], min(xs), max(xs)))
        goal = "%.2fx" % (med["after"] / GOAL) if op != "put_ns" else "-"
        print("| %s | %s | %s | %s | %.2fx | %s |" % (pattern, name, cols[0], cols[1], med["after"] / med["before"], goal))
EOF
