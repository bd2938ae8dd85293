#!/usr/bin/env bash
# bench/run-nodes.sh - hoist across daemons on loopback against raw TCP
# between two plain processes, measured in the same invocation; one table
# (or one JSON document) plus the reproducing command and the plot.
#
#   bash bench/run-nodes.sh [--build DIR] [--reps N] [--scale F] [--rounds R]
#                           [--no-barrier] [--json] [--bw-sweep] [--bw-sizes L]
#                           [--plot-dir DIR | --no-plot] [-- hoistd-flags...]
#
# Builds nothing: DIR (default build/ of the repository) must hold
# bench/hoist-bench, bench/tcp-raw, launcher/hoistrun and daemon/hoistd.
# Each round runs, one after the other:
#   tcp-raw                                   (RTT blocking + busy-poll, stream)
#   hoistrun -n 2 --nodes 2 hoist-bench --test put,get,bw,msgrate
#   hoistrun -n N --nodes K hoist-bench --test barrier
#            for N/K = 2/2 4/2 8/2 4/4 8/4    (unless --no-barrier)
# hoistrun --nodes starts fresh daemons for every job and stops them after.
# A row pools the reps of all rounds (median, min, max of reps x rounds
# values), so --rounds 3 interleaves reference and hoist over a longer time
# instead of measuring one after the other once. --scale (default 0.25)
# multiplies every iteration count of both tools. Flags after "--" go to
# every hoistd (hoistrun --hoistd-arg), e.g. -- --spin-us 200.
# --bw-sweep measures the put bandwidth (hoist, across the two daemons) and
# the tcp stream (tcp-raw) at 4k,16k,64k,256k,1m,4m instead of 64 KiB and
# 1 MiB only (--bw-sizes L: another comma list, implies --bw-sweep); every
# size is a row of the table, hoist's ratio against the tcp stream of the
# same size. bandwidth.svg (GB/s against message size, log x, median with
# min-max error bars, hoist and raw TCP) goes to --plot-dir (default
# bench/plots/ of the repository, git-ignored), listed as "plot: PATH" after
# the table (on stderr with --json). Plots need gnuplot (scripts/deps.sh
# --bench); without it one line says the plot was skipped.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" run-nodes.sh
build="$repo/build"
reps=7
scale=0.25
rounds=1
json=0
barrier=1
daemon_flags=()
bw_sizes=
plot_dir="$repo/bench/plots"
orig_args=("$@")

usage() { sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--no-barrier) barrier=0; shift ;;
	--json) json=1; shift ;;
	--bw-sweep) bw_sizes=${bw_sizes:-4k,16k,64k,256k,1m,4m}; shift ;;
	--bw-sizes) bw_sizes=$2; shift 2 ;;
	--plot-dir) plot_dir=$2; shift 2 ;;
	--no-plot) plot_dir=; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; daemon_flags=("$@"); break ;;
	*) echo "run-nodes.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done
bench_posint --rounds "$rounds"

bench="$build/bench/hoist-bench"
tcpraw="$build/bench/tcp-raw"
hoistd="$build/daemon/hoistd"
hoistrun="$build/launcher/hoistrun"
bench_need_build "$build" "$bench" "$tcpraw" "$hoistd" "$hoistrun"

bw_args=()
[ -n "$bw_sizes" ] && bw_args=(--bw-sizes "$bw_sizes")

hoistd_args=(--hoistd "$hoistd")
for f in "${daemon_flags[@]}"; do
	hoistd_args+=("--hoistd-arg=$f")
done

out=$(mktemp "${TMPDIR:-/tmp}/hoist-run-nodes.XXXXXX")
trap 'rm -f "$out" "$out.bw" "$out.plot.json"' EXIT
trap 'exit 130' INT TERM

# hoist_job n nodes bench-args...: the rows of one job, the
# barrier row renamed to say over how many daemons it ran.
hoist_job() {
	local n=$1 k=$2
	shift 2
	local rows
	if ! rows=$("$hoistrun" -n "$n" --nodes "$k" --timeout 600 "${hoistd_args[@]}" \
		"$bench" --no-floor --tsv --reps "$reps" --scale "$scale" "$@"); then
		echo "run-nodes.sh: hoistrun -n $n --nodes $k hoist-bench $* failed" >&2
		return 1
	fi
	printf '%s\n' "$rows" | sed "s/^\(row	barrier, [0-9]* PEs\)	/\1 \/ $k daemons	/" >>"$out"
}

load_before=$(bench_load)
for ((r = 1; r <= rounds; r++)); do
	[ "$rounds" -gt 1 ] && echo "run-nodes.sh: round $r of $rounds" >&2
	"$tcpraw" --tsv --reps "$reps" --scale "$scale" "${bw_args[@]}" >>"$out"
	hoist_job 2 2 --test put,get,bw,msgrate "${bw_args[@]}"
	if [ "$barrier" = 1 ]; then
		for nk in 2/2 4/2 8/2 4/4 8/4; do
			hoist_job "${nk%/*}" "${nk#*/}" --test barrier
		done
	fi
done
load_after=$(bench_load)

reproduce=$(bench_command "${orig_args[@]}")
cpu=$(bench_cpu_model)
ncpu_desc="$(nproc) CPUs (${cpu:-unknown CPU})"

# Pool the reps of every round per row, then one row each: median, min,
# max, the ratio to the reference measured in this invocation (median /
# median, and best rep / best rep), the get rows also against the busy-poll
# round trip, and the targets.
awk -F'\t' -v json="$json" -v cpu="$cpu" -v ncpu="$(nproc)" -v reps="$reps" -v rounds="$rounds" \
	-v scale="$scale" -v lb="$load_before" -v la="$load_after" -v repro="$reproduce" \
	-v dflags="${daemon_flags[*]}" -v bwfile="$out.bw" '
function fmt(v) {
	if (v == "") return "-"
	if (v >= 1000 || v <= -1000) return sprintf("%.0f", v)
	if (v >= 100 || v <= -100) return sprintf("%.1f", v)
	if (v >= 10 || v <= -10) return sprintf("%.2f", v)
	return sprintf("%.3f", v)
}
function jnum(v) { return v == "" ? "null" : sprintf("%.6g", v) }
function sort_n(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
}
$1 == "row" {
	if (!($2 in unit)) { order[++nr] = $2; unit[$2] = $3 }
	vals[$2] = vals[$2] (vals[$2] == "" ? "" : " ") $4
}
END {
	for (i = 1; i <= nr; i++) {
		name = order[i]
		n = split(vals[name], a, " ")
		sort_n(a, n)
		cnt[name] = n
		mn[name] = a[1] + 0; mx[name] = a[n] + 0
		md[name] = (n % 2) ? a[(n + 1) / 2] + 0 : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	# reference, target (t_lat: <= ratio, t_bw: >= ratio), busy-poll reference
	ref["get 8 B latency (blocking)"] = "tcp RTT 8 B (blocking)"
	ref["get 8 B latency (symmetric dst)"] = "tcp RTT 8 B (blocking)"
	ref["get 4 KiB latency (blocking)"] = "tcp RTT 4 KiB (blocking)"
	ref["get 4 KiB latency (symmetric dst)"] = "tcp RTT 4 KiB (blocking)"
	ref["tcp RTT 8 B (busy-poll)"] = "tcp RTT 8 B (blocking)"
	ref["tcp RTT 4 KiB (busy-poll)"] = "tcp RTT 4 KiB (blocking)"
	busy["get 8 B latency (blocking)"] = "tcp RTT 8 B (busy-poll)"
	busy["get 8 B latency (symmetric dst)"] = "tcp RTT 8 B (busy-poll)"
	busy["get 4 KiB latency (blocking)"] = "tcp RTT 4 KiB (busy-poll)"
	busy["get 4 KiB latency (symmetric dst)"] = "tcp RTT 4 KiB (busy-poll)"
	# put bandwidth X (+quiet) against tcp stream X msgs, for every size X;
	# both, pooled, to bwfile for the plot
	for (i = 1; i <= nr; i++) {
		name = order[i]
		if (name ~ /^put bandwidth .* \(\+quiet\)$/) {
			sz = name; sub(/^put bandwidth /, "", sz); sub(/ \(\+quiet\)$/, "", sz)
			ref[name] = "tcp stream " sz " msgs"
			printf "hoist\t%s\t%.6g\t%.6g\t%.6g\n", sz, md[name], mn[name], mx[name] > bwfile
		} else if (name ~ /^tcp stream .* msgs$/) {
			sz = name; sub(/^tcp stream /, "", sz); sub(/ msgs$/, "", sz)
			printf "tcp\t%s\t%.6g\t%.6g\t%.6g\n", sz, md[name], mn[name], mx[name] > bwfile
		}
	}
	tmax["get 8 B latency (blocking)"] = 1.15
	tmax["get 4 KiB latency (blocking)"] = 1.15
	tmin["put bandwidth 1 MiB (+quiet)"] = 0.60

	if (json) {
		printf "{\"cpu\":\"%s\",\"cpus\":%d,\"loadavg_before\":\"%s\",\"loadavg_after\":\"%s\",", cpu, ncpu, lb, la
		printf "\"reps\":%d,\"rounds\":%d,\"scale\":%s,\"hoistd_flags\":\"%s\",\"rows\":[", reps, rounds, scale, dflags
	} else {
		printf "# hoist across daemons on loopback vs raw TCP, %d CPUs (%s)\n", ncpu, cpu
		printf "# reps=%d x rounds=%d pooled per row, scale=%s, hoistd flags: %s\n", reps, rounds, scale, dflags == "" ? "(defaults)" : dflags
		printf "# load average before: %s, after: %s\n", lb, la
		printf "# ratio: get = median / tcp RTT (blocking) of the same size (the issue'"'"'s raw TCP round trip);\n"
		printf "#        x busy = median / tcp RTT (busy-poll); put bw = median / tcp stream of the same message size;\n"
		printf "#        tcp RTT (busy-poll) rows: / tcp RTT (blocking). best-ratio: best rep / best rep. PASS/MISS on the median.\n"
		printf "%-36s %-6s %9s %9s %9s %10s %10s %7s %10s %6s\n", "name", "unit", "median", "min", "max", "ratio", "best-ratio", "x busy", "target", "status"
	}
	for (i = 1; i <= nr; i++) {
		name = order[i]; r = ""; rb = ""; xb = ""; tgt = "-"; st = "-"
		u = unit[name]
		if ((name in ref) && (ref[name] in md)) {
			q = ref[name]
			r = md[name] / md[q]
			rb = (u == "GB/s") ? mx[name] / mx[q] : mn[name] / mn[q]
		}
		if ((name in busy) && (busy[name] in md))
			xb = md[name] / md[busy[name]]
		if (name in tmax) {
			tgt = sprintf("<= %.2fx", tmax[name])
			st = (r == "") ? "n/a" : (r <= tmax[name] ? "PASS" : "MISS")
		} else if (name in tmin) {
			tgt = sprintf(">= %.2fx", tmin[name])
			st = (r == "") ? "n/a" : (r >= tmin[name] ? "PASS" : "MISS")
		}
		if (json) {
			printf "%s\n {\"name\":\"%s\",\"unit\":\"%s\",\"n\":%d,\"median\":%s,\"min\":%s,\"max\":%s,", \
				(i > 1 ? "," : ""), name, u, cnt[name], jnum(md[name]), jnum(mn[name]), jnum(mx[name])
			jref = "null"
			if (name in ref)
				jref = "\"" ref[name] "\""
			jtgt = (tgt == "-") ? "null" : "\"" tgt "\""
			printf "\"ref\":%s,\"ratio\":%s,\"ratio_best\":%s,\"ratio_busy\":%s,\"target\":%s,\"status\":\"%s\"}", \
				jref, jnum(r), jnum(rb), jnum(xb), jtgt, st
		} else {
			printf "%-36s %-6s %9s %9s %9s %10s %10s %7s %10s %6s\n", name, u, fmt(md[name]), fmt(mn[name]), \
				fmt(mx[name]), r == "" ? "-" : sprintf("%.2fx", r), rb == "" ? "-" : sprintf("%.2fx", rb), \
				xb == "" ? "-" : sprintf("%.2fx", xb), tgt, st
		}
	}
	if (json)
		printf "\n],\"reproduce\":\"%s\"}\n", repro
	else
		printf "reproduce: %s\n", repro
}' "$out"

# bandwidth against message size: bench/plot.py (gnuplot) from the rows above
if [ -n "$plot_dir" ] && [ -s "$out.bw" ]; then
	case $plot_dir in /*) ;; *) plot_dir="$PWD/$plot_dir" ;; esac
	python3 - "$out.bw" "$plot_dir/bandwidth.svg" "$ncpu_desc" "$reps" "$rounds" "$scale" \
		"$load_before" "$load_after" "${daemon_flags[*]}" >"$out.plot.json" <<'EOF'
import json, sys
bw, svg, machine, reps, rounds, scale, lb, la, dflags = sys.argv[1:10]
mult = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20}
series = {"hoist": [], "tcp": []}
for line in open(bw):
    who, sz, med, lo, hi = line.rstrip("\n").split("\t")
    n, unit = sz.split()
    series[who].append([int(n) * mult[unit], float(med), float(lo), float(hi), sz])
sizes = sorted({(p[0], p[4]) for s in series.values() for p in s})
plot = {
    "out": svg, "kind": "lines", "logx": 2, "ymin": 0,
    "title": "Put bandwidth against message size: hoist across 2 daemons vs raw TCP",
    "subtitle": "%s; reps=%s x rounds=%s pooled, scale=%s, hoistd flags: %s\nload average before: %s, after: %s; "
                "point = median, error bar = min-max" % (machine, reps, rounds, scale, dflags or "(defaults)", lb, la),
    "xlabel": "message size (bytes, log scale)", "ylabel": "GB/s",
    "xtics": [[name, n] for n, name in sizes], "key": "below center vertical",
    "series": [{"name": "hoist: hoist_put + hoist_quiet, PE 0 -> PE 1 on the other daemon", "color": "#1f77b4",
                "points": [p[:4] for p in series["hoist"]]},
               {"name": "raw TCP: tcp-raw stream, blocking send, loopback", "color": "#d62728", "dash": 2, "point": 5,
                "points": [p[:4] for p in series["tcp"]]}]}
print(json.dumps({"plots": [plot]}))
EOF
	if [ "$json" = 1 ]; then
		python3 "$repo/bench/plot.py" "$out.plot.json" >&2 || true
	else
		python3 "$repo/bench/plot.py" "$out.plot.json" || true
	fi
fi
