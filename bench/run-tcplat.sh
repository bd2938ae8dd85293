#!/usr/bin/env bash
# bench/run-tcplat.sh - small-operation latency across two daemons on
# loopback against raw TCP's busy-poll round trip, interleaved in one run
# (issue 16: "get 8 B across two daemons ... goal <= 1.15x").
#
#   bash bench/run-tcplat.sh [--build DIR] [--reps N] [--time-ms T]
#                            [--base-hoistd PATH]... [-- hoistd-flags...]
#
# Builds nothing: DIR (default build/ of the repository) must hold
# bench/hoist-amo-bench, bench/tcp-raw, launcher/hoistrun, daemon/hoistd.
# Each of N reps (default 7) runs, one after the other:
#   tcp   tcp-raw --test rtt-busy --reps 1: 8 B ping-pong between two
#         plain processes, both spinning on MSG_DONTWAIT (the reference)
#   tcp+1 the same with one more busy process running (a shell loop), as
#         many busy threads as hoist's get has (PE 0 spinning on its CQ and
#         the two daemons' progress threads) on the same CPUs: with 2 CPUs
#         this is the floor a third busy thread sets, not a goal
#   tcpblk tcp-raw --test rtt: the same ping-pong with blocking recv (each
#         message wakes a sleeping process): the other end of the policy
#   hoist hoistrun -n 2 --nodes 2 hoist-amo-bench --test get,fadd,putq
#         (fresh daemons): 8 B hoist_get, 8 B fetch-add, 8 B put + quiet,
#         PE 0 -> PE 1 on the other daemon, ns per operation
#   b1, b2, ... (one per --base-hoistd, repeatable) the same job with
#         another hoistd, e.g. a copy built before a change, or a script
#         that runs hoistd with other flags: before and after in one run
# Flags after "--" go to every hoistd of the hoist rows (hoistrun
# --hoistd-arg), e.g. -- --tcp-busy-poll-us 20.
# A row shows the median over the reps, [min-max], and the ratio of the
# median to the median busy-poll round trip. The load average is printed
# before and after. A wrong result (the programs check every value) fails
# the run.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" run-tcplat.sh
build="$repo/build"
reps=7
time_ms=300
bases=()
daemon_flags=()
orig_args=("$@")

usage() { sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--time-ms) time_ms=$2; shift 2 ;;
	--base-hoistd) bases+=("$2"); shift 2 ;;
	-h|--help) usage; exit 0 ;;
	--) shift; daemon_flags=("$@"); break ;;
	*) echo "run-tcplat.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done
bench_posint --reps "$reps"

amo="$build/bench/hoist-amo-bench"
tcpraw="$build/bench/tcp-raw"
hoistd="$build/daemon/hoistd"
hoistrun="$build/launcher/hoistrun"
for f in "$amo" "$tcpraw" "$hoistd" "$hoistrun" "${bases[@]}"; do
	if [ ! -x "$f" ]; then
		echo "run-tcplat.sh: $f is missing; build first" >&2
		exit 1
	fi
done

out=$(mktemp "${TMPDIR:-/tmp}/hoist-run-tcplat.XXXXXX")
hog=
trap 'rm -f "$out"; [ -z "$hog" ] || kill "$hog" 2>/dev/null' EXIT
trap 'exit 130' INT TERM

# hoist_job WHO HOISTD: one job's rows, prefixed with WHO
hoist_job() {
	local who=$1 d=$2 args=(--hoistd "$2") f rows
	for f in "${daemon_flags[@]}"; do
		args+=("--hoistd-arg=$f")
	done
	if ! rows=$("$hoistrun" -n 2 --nodes 2 --timeout 600 "${args[@]}" \
		"$amo" --test get,fadd,putq --time-ms "$time_ms"); then
		echo "run-tcplat.sh: the $who job failed" >&2
		return 1
	fi
	printf '%s\n' "$rows" | awk -v who="$who" '$1 == "row" { print who "\t" $2 "\t" $4 }' >>"$out"
}

load_before=$(bench_load)
machine_before=$(bench_machine "$build")
for ((r = 1; r <= reps; r++)); do
	"$tcpraw" --test rtt-busy --reps 1 --scale 0.25 --tsv |
		awk -F'\t' '$2 == "tcp RTT 8 B (busy-poll)" { print "tcp\trtt\t" $4 }' >>"$out"
	sh -c 'while :; do :; done' &
	hog=$!
	"$tcpraw" --test rtt-busy --reps 1 --scale 0.25 --tsv |
		awk -F'\t' '$2 == "tcp RTT 8 B (busy-poll)" { print "tcp+1\trtt\t" $4 }' >>"$out"
	kill "$hog"
	wait "$hog" 2>/dev/null || true
	hog=
	"$tcpraw" --test rtt --reps 1 --scale 0.25 --tsv |
		awk -F'\t' '$2 == "tcp RTT 8 B (blocking)" { print "tcpblk\trtt\t" $4 }' >>"$out"
	hoist_job hoist "$hoistd"
	for ((b = 0; b < ${#bases[@]}; b++)); do
		hoist_job "b$((b + 1))" "${bases[$b]}"
	done
done
load_after=$(bench_load)
machine_after=$(bench_machine "$build")

printf '# hoist across 2 daemons on loopback vs raw TCP busy-poll round trip, %s CPUs (%s)\n' \
	"$(nproc)" "$(bench_cpu_model)"
printf '# reps=%s interleaved, time-ms=%s, hoistd flags: %s; hoist: %s\n' "$reps" "$time_ms" \
	"${daemon_flags[*]:-(defaults)}" "$hoistd"
for ((b = 0; b < ${#bases[@]}; b++)); do
	printf '# b%d: %s\n' $((b + 1)) "${bases[$b]}"
done
printf '# load average before: %s, after: %s\n' "$load_before" "$load_after"
printf '# before the run: %s\n# after the run: %s\n' "$machine_before" "$machine_after"
awk -F'\t' '
function med(a, n) { return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
function sort_n(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
}
{ k = $1 SUBSEP $2; if (!(k in cnt)) order[++nk] = k; v[k, ++cnt[k]] = $3 }
END {
	names["tcp" SUBSEP "rtt"] = "raw TCP RTT 8 B (busy-poll)"
	names["tcp+1" SUBSEP "rtt"] = "same + 1 busy process"
	names["tcpblk" SUBSEP "rtt"] = "raw TCP RTT 8 B (blocking)"
	names["get"] = "get 8 B"; names["fadd"] = "fetch-add 8 B"; names["putq"] = "put 8 B + quiet"
	for (i = 1; i <= nk; i++) {
		k = order[i]; n = cnt[k]
		for (j = 1; j <= n; j++) a[j] = v[k, j] + 0
		sort_n(a, n)
		md[k] = med(a, n); lo[k] = a[1]; hi[k] = a[n]
	}
	ref = md["tcp" SUBSEP "rtt"]
	printf "%-8s %-28s %10s %21s %8s %8s\n", "who", "row", "median us", "[min-max] us", "x tcp", "goal"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, p, SUBSEP)
		nm = (k in names) ? names[k] : names[p[2]]
		goal = (p[2] == "get" && p[1] == "hoist") ? "<= 1.15x" : "-"
		printf "%-8s %-28s %10.2f %21s %8s %8s\n", p[1], nm, md[k] / 1e3, \
			sprintf("[%.2f-%.2f]", lo[k] / 1e3, hi[k] / 1e3), \
			p[1] == "tcp" ? "1.00x" : sprintf("%.2fx", md[k] / ref), goal
	}
}' "$out"
echo "reproduce: $(bench_command "${orig_args[@]}")"
