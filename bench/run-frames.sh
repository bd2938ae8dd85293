#!/usr/bin/env bash
# bench/run-frames.sh - the cost of frame_integrity: two daemons on loopback
# (tcp) with frame_integrity = off, mac and encrypt side by side in one run.
#
#   bash bench/run-frames.sh [--build DIR] [--reps N] [--scale F] [--rounds R]
#                            [--modes "off mac encrypt"] [--json] [-- hoistd-flags...]
#
# Builds nothing: DIR (default build/ of the repository) must hold
# bench/hoist-bench, launcher/hoistrun and daemon/hoistd.
# Each round runs, for every mode in turn (interleaved, so drift of the
# machine hits every mode alike):
#   hoistrun -n 2 --nodes 2 --hoistd-arg=--frame-integrity=MODE \
#            hoist-bench --test put,get,bw --reps N --scale F
# (fresh daemons for every job). A row pools the reps of all rounds per
# mode: median, min, max, spread (max / min), the ratio of the median to
# the median of `off` (> 1 for a time and < 1 for a rate: the mode costs)
# and the same for the best reps (min / min of off for times, max / max
# for rates: on a shared machine the best reps wander less). Rows: get 8 B latency
# (blocking), put 8 B rate incl. quiet, put bandwidth 64 KiB and 1 MiB.
# Defaults: --reps 5 --scale 0.25 --rounds 3. Flags after "--" go to every
# hoistd. First it prints the CPU cost of the records alone
# (bench/hoist-frames-cost: seal and open per record, one thread, best of
# the reps; stderr with --json), which a shared machine disturbs much less
# than the end-to-end rows.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" run-frames.sh
build="$repo/build"
reps=5
scale=0.25
rounds=3
json=0
modes="off mac encrypt"
daemon_flags=()
orig_args=("$@")

usage() { sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--modes) modes=$2; shift 2 ;;
	--json) json=1; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; daemon_flags=("$@"); break ;;
	*) echo "run-frames.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done
bench_posint --rounds "$rounds"
for m in $modes; do
	case $m in off | mac | encrypt) ;; *) echo "run-frames.sh: unknown mode '$m'" >&2; exit 2 ;; esac
done

bench="$build/bench/hoist-bench"
hoistd="$build/daemon/hoistd"
hoistrun="$build/launcher/hoistrun"
cost="$build/bench/hoist-frames-cost"
bench_need_build "$build" "$bench" "$hoistd" "$hoistrun" "$cost"

out=$(mktemp "${TMPDIR:-/tmp}/hoist-run-frames.XXXXXX")
trap 'rm -f "$out"' EXIT
trap 'exit 130' INT TERM

# (to stderr with --json: stdout is one JSON document)
{
	echo "# CPU cost of one record, one thread, no sockets (hoist-frames-cost --reps $reps, best rep):"
	"$cost" --reps "$reps"
	echo
} >&"$([ "$json" = 1 ] && echo 2 || echo 1)"

load_before=$(bench_load)
for ((r = 1; r <= rounds; r++)); do
	for m in $modes; do
		echo "run-frames.sh: round $r of $rounds, frame_integrity=$m" >&2
		args=(--hoistd "$hoistd" "--hoistd-arg=--frame-integrity=$m")
		for f in "${daemon_flags[@]}"; do
			args+=("--hoistd-arg=$f")
		done
		if ! rows=$("$hoistrun" -n 2 --nodes 2 --timeout 600 "${args[@]}" \
			"$bench" --no-floor --tsv --reps "$reps" --scale "$scale" --test put,get,bw); then
			echo "run-frames.sh: the hoist-bench job with frame_integrity=$m failed" >&2
			exit 1
		fi
		printf '%s\n' "$rows" | awk -F'\t' -v m="$m" 'BEGIN { OFS = "\t" } $1 == "row" { $1 = m; print }' >>"$out"
	done
done
load_after=$(bench_load)

reproduce=$(bench_command "${orig_args[@]}")
cpu=$(bench_cpu_model)

awk -F'\t' -v json="$json" -v cpu="$cpu" -v ncpu="$(nproc)" -v reps="$reps" -v rounds="$rounds" \
	-v scale="$scale" -v lb="$load_before" -v la="$load_after" -v repro="$reproduce" \
	-v modes="$modes" -v dflags="${daemon_flags[*]}" '
function fmt(v) {
	if (v >= 1000) return sprintf("%.0f", v)
	if (v >= 100) return sprintf("%.1f", v)
	if (v >= 10) return sprintf("%.2f", v)
	return sprintf("%.3f", v)
}
function sort_n(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
}
BEGIN {
	want["get 8 B latency (blocking)"] = 1
	want["put 8 B rate incl. quiet"] = 2
	want["put bandwidth 64 KiB (+quiet)"] = 3
	want["put bandwidth 1 MiB (+quiet)"] = 4
	nm = split(modes, mode, " ")
}
($2 in want) {
	unit[$2] = $3
	for (i = 4; i <= NF; i++)
		vals[$1, $2] = vals[$1, $2] (vals[$1, $2] == "" ? "" : " ") $i
}
END {
	for (name in want) order[want[name]] = name
	if (json) {
		printf "{\"cpu\":\"%s\",\"cpus\":%d,\"loadavg_before\":\"%s\",\"loadavg_after\":\"%s\",", cpu, ncpu, lb, la
		printf "\"reps\":%d,\"rounds\":%d,\"scale\":%s,\"hoistd_flags\":\"%s\",\"rows\":[", reps, rounds, scale, dflags
	} else {
		printf "# frame_integrity cost: 2 daemons on loopback (tcp), %d CPUs (%s)\n", ncpu, cpu
		printf "# reps=%d x rounds=%d pooled per row and mode (modes interleaved per round), scale=%s, hoistd flags: %s\n", reps, rounds, scale, dflags == "" ? "(defaults)" : dflags
		printf "# load average before: %s, after: %s\n", lb, la
		printf "# spread = max / min; vs off = median / median of off (time: > 1 costs; rate: < 1 costs);\n"
		printf "# best vs off = best rep / best rep of off (min for times, max for rates)\n"
		printf "%-30s %-8s %-7s %9s %9s %9s %7s %7s %12s\n", "name", "mode", "unit", "median", "min", "max", "spread", "vs off", "best vs off"
	}
	first = 1
	for (k = 1; k <= 4; k++) {
		name = order[k]
		for (i = 1; i <= nm; i++) {
			m = mode[i]
			if (!((m, name) in vals)) continue
			n = split(vals[m, name], a, " ")
			sort_n(a, n)
			md[m] = (n % 2) ? a[(n + 1) / 2] + 0 : (a[n / 2] + a[n / 2 + 1]) / 2
			lo = a[1] + 0; hi = a[n] + 0
			best[m] = (unit[name] == "ns") ? lo : hi
			sp = lo > 0 ? hi / lo : 0
			r = ("off" in md && md["off"] > 0) ? md[m] / md["off"] : ""
			rb = ("off" in best && best["off"] > 0) ? best[m] / best["off"] : ""
			if (json) {
				printf "%s\n {\"name\":\"%s\",\"mode\":\"%s\",\"unit\":\"%s\",\"n\":%d,\"median\":%.6g,\"min\":%.6g,\"max\":%.6g,\"spread\":%.4g,\"vs_off\":%s,\"best_vs_off\":%s}", \
					first ? "" : ",", name, m, unit[name], n, md[m], lo, hi, sp, r == "" ? "null" : sprintf("%.4g", r), \
					rb == "" ? "null" : sprintf("%.4g", rb)
				first = 0
			} else {
				printf "%-30s %-8s %-7s %9s %9s %9s %6.2fx %7s %12s\n", name, m, unit[name], fmt(md[m]), fmt(lo), fmt(hi), sp, \
					r == "" ? "-" : sprintf("%.2fx", r), rb == "" ? "-" : sprintf("%.2fx", rb)
			}
		}
		delete md
		delete best
	}
	if (json)
		printf "\n],\"reproduce\":\"%s\"}\n", repro
	else
		printf "reproduce: %s\n", repro
}' "$out"
