#!/usr/bin/env bash
# bench/run-gups.sh - GUPS-style random 64-bit adds and xors (non-fetching
# hoist_atomic) to a remote PE's table across two daemons on loopback:
# HOIST_AUTO=0 (every atomic completes before the next: one message and
# one reply each) against HOIST_AUTO=1 (the daemon defers them and packs
# them for the node: WIRE_PACK_AMO), in alternating runs; one table plus
# the reproducing command.
#
#   bash bench/run-gups.sh [--build DIR] [--reps N] [--pes P] [--updates0 U] [--updates1 U]
#
# Builds nothing: DIR (default build/) must hold bench/hoist-gups-bench,
# launcher/hoistrun and daemon/hoistd. Each rep runs, alternating,
#   HOIST_AUTO=0 hoistrun -n 2P --nodes 2 hoist-gups-bench --updates U0
#   HOIST_AUTO=1 hoistrun -n 2P --nodes 2 hoist-gups-bench --updates U1
# (P PEs per node, default 1; every PE updates a PE of the other node; U0
# default 20000, U1 default 200000: the blocking run is slower, the rate is
# what counts). Rows: median, min, max of N reps (default 7, at least 5);
# ratio: median AUTO=1 / median AUTO=0. Every run checks its table against
# the model (a difference fails the script).
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" run-gups.sh
build="$repo/build"
reps=7
pes=1
u0=20000
u1=200000
orig_args=("$@")

usage() { sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--pes) pes=$2; shift 2 ;;
	--updates0) u0=$2; shift 2 ;;
	--updates1) u1=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run-gups.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done
if [ "$reps" -lt 5 ]; then
	echo "run-gups.sh: --reps must be at least 5" >&2
	exit 2
fi

bench="$build/bench/hoist-gups-bench"
hoistd="$build/daemon/hoistd"
hoistrun="$build/launcher/hoistrun"
bench_need_build "$build" "$bench" "$hoistd" "$hoistrun"

out=$(mktemp "${TMPDIR:-/tmp}/hoist-run-gups.XXXXXX")
trap 'rm -f "$out"' EXIT
trap 'exit 130' INT TERM

one() { # auto updates
	local rows
	if ! rows=$(HOIST_AUTO=$1 "$hoistrun" -n $((2 * pes)) --nodes 2 --timeout 600 --hoistd "$hoistd" \
		"$bench" --updates "$2"); then
		echo "run-gups.sh: HOIST_AUTO=$1 hoistrun -n $((2 * pes)) --nodes 2 hoist-gups-bench failed" >&2
		exit 1
	fi
	printf '%s\n' "$rows" | grep '^row' >>"$out"
}

load_before=$(bench_load)
for ((k = 0; k < reps; k++)); do
	one 0 "$u0"
	one 1 "$u1"
done
load_after=$(bench_load)

reproduce=$(bench_command "${orig_args[@]}")
cpu=$(bench_cpu_model)

awk -F'\t' -v cpu="$cpu" -v ncpu="$(nproc)" -v reps="$reps" -v u0="$u0" -v u1="$u1" \
	-v lb="$load_before" -v la="$load_after" -v repro="$reproduce" '
function sort_n(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
}
$1 == "row" {
	if (!($2 in unit)) { order[++nr] = $2; unit[$2] = $3 }
	vals[$2] = vals[$2] (vals[$2] == "" ? "" : " ") $4
}
END {
	printf "# GUPS-style non-fetching atomics (64-bit add/xor) across 2 daemons on loopback, %d CPUs (%s)\n", ncpu, cpu
	printf "# %d alternating reps; updates per PE: %d (HOIST_AUTO=0), %d (HOIST_AUTO=1); load average before: %s, after: %s\n", reps, u0, u1, lb, la
	printf "%-36s %-7s %9s %9s %9s %8s\n", "name", "unit", "median", "min", "max", "ratio"
	for (i = 1; i <= nr; i++) {
		name = order[i]
		n = split(vals[name], a, " ")
		sort_n(a, n)
		md[name] = (n % 2) ? a[(n + 1) / 2] + 0 : (a[n / 2] + a[n / 2 + 1]) / 2
		mn[name] = a[1] + 0; mx[name] = a[n] + 0
	}
	for (i = 1; i <= nr; i++) {
		name = order[i]; r = "-"
		if (name ~ /HOIST_AUTO=1$/) {
			b = name; sub(/HOIST_AUTO=1$/, "HOIST_AUTO=0", b)
			if ((b in md) && md[b] > 0) r = sprintf("%.1fx", md[name] / md[b])
		}
		printf "%-36s %-7s %9.4f %9.4f %9.4f %8s\n", name, unit[name], md[name], mn[name], mx[name], r
	}
	printf "reproduce: %s\n", repro
}' "$out"
