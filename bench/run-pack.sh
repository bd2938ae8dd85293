#!/usr/bin/env bash
# bench/run-pack.sh - strided gets (seed 000, Figure 6) and the small-put
# message rate across two daemons on loopback, next to UCX's put message
# rate over TCP measured in the same invocation; one table plus the
# reproducing command.
#
#   bash bench/run-pack.sh [--build DIR] [--reps N] [--scale F] [--rounds R]
#                          [--no-fig6] [--no-msgrate] [--no-ucx]
#
# Builds nothing: DIR (default build/) must hold bench/hoist-pack-bench,
# launcher/hoistrun and daemon/hoistd. Each round runs:
#   hoistrun -n 2 --nodes 2 hoist-pack-bench --test fig6
#       one hoist_get_strided (256 B elements, 850 B stride on both sides)
#       vs a loop of hoist_get per element vs one contiguous hoist_get of
#       the same payload, 1 KiB .. 1 MiB; ratios strided / contiguous and
#       strided / loop; target strided >= 0.70x contiguous at 64 KiB
#   hoistrun -n 2P --nodes 2 [--hoistd-arg=--coalesce=0] hoist-pack-bench
#       --test msgrate, P = 1 2 4 PEs per node, coalescing on and off:
#       every PE puts 8 B values to a PE of the other node, aggregate rate
#   ucx_perftest -t ucp_put_bw -s 8 (UCX_TLS=tcp, server and client on
#       127.0.0.1, a free port), reps times: its overall message rate
# Rows pool the reps of all rounds (median, min, max). The msgrate rows'
# ratio is median / median of UCX; target >= 20x. The coalescing ratio
# (on / off) is printed per PE count.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" run-pack.sh
build="$repo/build"
reps=7
scale=1
rounds=1
fig6=1
msgrate=1
ucx=1
orig_args=("$@")

usage() { sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--no-fig6) fig6=0; shift ;;
	--no-msgrate) msgrate=0; shift ;;
	--no-ucx) ucx=0; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run-pack.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done

bench="$build/bench/hoist-pack-bench"
hoistd="$build/daemon/hoistd"
hoistrun="$build/launcher/hoistrun"
bench_need_build "$build" "$bench" "$hoistd" "$hoistrun"
if [ "$ucx" = 1 ] && ! command -v ucx_perftest >/dev/null 2>&1; then
	echo "run-pack.sh: ucx_perftest missing (Debian ucx-utils); no UCX reference" >&2
	ucx=0
fi

out=$(mktemp "${TMPDIR:-/tmp}/hoist-run-pack.XXXXXX")
trap 'rm -f "$out"' EXIT
trap 'exit 130' INT TERM

job() { # name-suffix n daemon-flag... -- bench-args...
	local sfx=$1 n=$2
	shift 2
	local flags=()
	while [ "$1" != "--" ]; do flags+=("--hoistd-arg=$1"); shift; done
	shift
	local rows
	if ! rows=$("$hoistrun" -n "$n" --nodes 2 --timeout 600 --hoistd "$hoistd" ${flags[@]+"${flags[@]}"} \
		"$bench" --reps "$reps" --scale "$scale" "$@"); then
		echo "run-pack.sh: hoistrun -n $n --nodes 2 hoist-pack-bench $* failed" >&2
		return 1
	fi
	printf '%s\n' "$rows" | sed "s/^\(row	[^	]*\)	/\1$sfx	/" >>"$out"
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

ucx_once() {
	local port iters srvout
	port=$(free_port)
	iters=$(awk -v s="$scale" 'BEGIN { n = int(200000 * s); print (n < 10000 ? 10000 : n) }')
	srvout=$(mktemp "${TMPDIR:-/tmp}/hoist-ucx.XXXXXX")
	UCX_TLS=tcp timeout 120 ucx_perftest -t ucp_put_bw -s 8 -n "$iters" -p "$port" -f >"$srvout" 2>&1 &
	local spid=$!
	local line="" try
	for try in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.3
		if line=$(UCX_TLS=tcp timeout 120 ucx_perftest 127.0.0.1 -t ucp_put_bw -s 8 -n "$iters" -p "$port" -f 2>/dev/null |
			awk 'NF == 8 && $1 ~ /^[0-9]+$/ { print $8 }'); [ -n "$line" ]; then
			break
		fi
	done
	wait "$spid" 2>/dev/null || true
	rm -f "$srvout"
	if [ -z "$line" ]; then
		echo "run-pack.sh: ucx_perftest gave no result (port $port)" >&2
		return 0
	fi
	printf 'row\tucx_perftest ucp_put_bw 8 B (UCX_TLS=tcp)\tMmsg/s\t%s\n' \
		"$(awk -v v="$line" 'BEGIN { printf "%.6g", v / 1e6 }')" >>"$out"
}

load_before=$(bench_load)
for ((r = 1; r <= rounds; r++)); do
	[ "$rounds" -gt 1 ] && echo "run-pack.sh: round $r of $rounds" >&2
	if [ "$ucx" = 1 ]; then
		for ((k = 0; k < reps; k++)); do ucx_once; done
	fi
	if [ "$msgrate" = 1 ]; then
		for p in 1 2 4; do
			job "" $((2 * p)) -- --test msgrate
			job " (coalesce off)" $((2 * p)) --coalesce=0 -- --test msgrate
		done
	fi
	if [ "$fig6" = 1 ]; then
		job "" 2 -- --test fig6
	fi
done
load_after=$(bench_load)

reproduce=$(bench_command "${orig_args[@]}")
cpu=$(bench_cpu_model)

awk -F'\t' -v cpu="$cpu" -v ncpu="$(nproc)" -v reps="$reps" -v rounds="$rounds" -v scale="$scale" \
	-v lb="$load_before" -v la="$load_after" -v repro="$reproduce" '
function fmt(v) {
	if (v >= 1000) return sprintf("%.0f", v)
	if (v >= 100) return sprintf("%.1f", v)
	if (v >= 10) return sprintf("%.2f", v)
	return sprintf("%.3f", v)
}
function sort_n(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
}
$1 == "row" {
	if (!($2 in unit)) { order[++nr] = $2; unit[$2] = $3 }
	for (k = 4; k <= NF; k++) vals[$2] = vals[$2] (vals[$2] == "" ? "" : " ") $k
}
END {
	for (i = 1; i <= nr; i++) {
		name = order[i]
		n = split(vals[name], a, " ")
		sort_n(a, n)
		mn[name] = a[1] + 0; mx[name] = a[n] + 0
		md[name] = (n % 2) ? a[(n + 1) / 2] + 0 : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	ucx = "ucx_perftest ucp_put_bw 8 B (UCX_TLS=tcp)"
	printf "# hoist packed operations across 2 daemons on loopback, %d CPUs (%s)\n", ncpu, cpu
	printf "# reps=%d x rounds=%d pooled per row, scale=%s; load average before: %s, after: %s\n", reps, rounds, scale, lb, la
	printf "# fig6 ratios: strided / contiguous (target >= 0.70x at 64 KiB) and strided / loop;\n"
	printf "# msgrate ratio: median / median of ucx_perftest (target >= 20x); coalesce: on / off\n"
	printf "%-44s %-7s %9s %9s %9s %10s %10s %6s\n", "name", "unit", "median", "min", "max", "ratio", "ratio2", "status"
	for (i = 1; i <= nr; i++) {
		name = order[i]; r = "-"; r2 = "-"; st = "-"
		if (name ~ /^fig6 .* strided$/) {
			c = name; sub(/strided$/, "contiguous", c)
			l = name; sub(/strided$/, "loop", l)
			if (c in md) r = sprintf("%.2fx", md[name] / md[c])
			if (l in md) r2 = sprintf("%.1fx", md[name] / md[l])
			if (name == "fig6 64 KiB strided" && (c in md)) st = (md[name] / md[c] >= 0.70) ? "PASS" : "MISS"
		}
		if (name ~ /^put 8 B msg rate/ && (ucx in md)) {
			r = sprintf("%.1fx", md[name] / md[ucx])
			st = (md[name] / md[ucx] >= 20) ? "PASS" : "MISS"
			off = name " (coalesce off)"
			if (off in md) r2 = sprintf("%.2fx", md[name] / md[off])
		}
		printf "%-44s %-7s %9s %9s %9s %10s %10s %6s\n", name, unit[name], fmt(md[name]), fmt(mn[name]), \
			fmt(mx[name]), r, r2, st
	}
	printf "reproduce: %s\n", repro
}' "$out"
