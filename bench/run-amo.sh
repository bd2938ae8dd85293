#!/usr/bin/env bash
# bench/run-amo.sh - remote atomics and wait-until wake-up: hoist against
# Open MPI's OpenSHMEM and raw TCP, side by side in one run; one table of
# medians with their spread and one of ratios, then the reproducing command.
#
#   bash bench/run-amo.sh [--build DIR] [--reps N] [--time-ms T] [--no-shmem]
#                         [--only LIST]
#
# Builds nothing of hoist: DIR (default build/ of the repository) must hold
# bench/hoist-amo-bench, bench/tcp-raw, launcher/hoistrun, daemon/hoistd.
# bench/shmem_amo.c is built here with oshcc. Each of N reps (default 5)
# runs every configuration once, in this order (so drift on a shared
# machine hits all alike), each a fresh job and fresh daemons:
#   direct  hoistrun -n 2 (one private hoistd) hoist-amo-bench: same node,
#           the library's direct path (CPU atomics on the peer's mapping)
#   daemon  the same with HOIST_DIRECT=0: same node, through the daemon
#   2d      hoistrun -n 2 --nodes 2 hoist-amo-bench: two daemons on
#           loopback TCP, HOIST_AUTO=1 (the default)
#   2d-a0   the same with HOIST_AUTO=0
#   osh     oshrun -np 2 shmem-amo: Open MPI's OpenSHMEM, same node (UCX's
#           default transports: shared memory)
#   osh-tcp the same with UCX_TLS=tcp (the peer over loopback TCP: the
#           reference for "across two daemons")
#   tcp     tcp-raw --reps 5 --test rtt,rtt-busy (8 B round trip between two plain
#           processes, blocking and busy-polling)
# --only LIST: a comma list of the configurations to run (default all).
# Every value of every rep is checked by the programs (fetched values,
# totals, wake-up values): a wrong result fails the run, not the table.
# A row shows the median over the reps and [min-max]; ratios are median /
# median. If Open MPI's oshcc/oshrun are missing or fail, the table says
# why and the osh columns stay empty.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" run-amo.sh
build="$repo/build"
reps=5
time_ms=300
shmem=1
only="direct,daemon,2d,2d-a0,osh,osh-tcp,tcp"
orig_args=("$@")
usage() { sed -n '2,33p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--time-ms) time_ms=$2; shift 2 ;;
	--no-shmem) shmem=0; shift ;;
	--only) only=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run-amo.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
done
bench_posint --reps "$reps"

bench="$build/bench/hoist-amo-bench"
tcpraw="$build/bench/tcp-raw"
hoistd="$build/daemon/hoistd"
hoistrun="$build/launcher/hoistrun"
bench_need_build "$build" "$bench" "$tcpraw" "$hoistd" "$hoistrun"

bench_tmpdir

osh_note=
if [ "$shmem" = 1 ] && { want osh || want osh-tcp; }; then
	if ! command -v oshcc >/dev/null || ! command -v oshrun >/dev/null; then
		osh_note="OpenSHMEM not measured: oshcc/oshrun not found (Debian: openmpi-bin libopenmpi-dev)"
	elif ! oshcc -O2 -I"$repo/bench" "$repo/bench/shmem_amo.c" -o "$tmp/shmem-amo" 2>"$tmp/oshcc.err"; then
		osh_note="OpenSHMEM not measured: oshcc failed: $(tail -n 3 "$tmp/oshcc.err" | tr '\n' ' ')"
	fi
else
	osh_note="OpenSHMEM not measured (--no-shmem or --only)"
fi

# one CONFIG: appends "CONFIG NAME VALUE" lines to $tmp/vals
one() {
	local cfg=$1 out="$tmp/out" rc=0
	case $cfg in
	direct) timeout 300 "$hoistrun" -n 2 --runtime-dir "$(mktemp -d "$tmp/rt.XXXXXX")" --hoistd "$hoistd" \
		"$bench" --time-ms "$time_ms" >"$out" 2>"$tmp/err" || rc=$? ;;
	daemon) HOIST_DIRECT=0 timeout 300 "$hoistrun" -n 2 --runtime-dir "$(mktemp -d "$tmp/rt.XXXXXX")" \
		--hoistd "$hoistd" "$bench" --time-ms "$time_ms" >"$out" 2>"$tmp/err" || rc=$? ;;
	2d) HOIST_AUTO=1 timeout 300 "$hoistrun" -n 2 --nodes 2 --hoistd "$hoistd" \
		"$bench" --time-ms "$time_ms" >"$out" 2>"$tmp/err" || rc=$? ;;
	2d-a0) HOIST_AUTO=0 timeout 300 "$hoistrun" -n 2 --nodes 2 --hoistd "$hoistd" \
		"$bench" --time-ms "$time_ms" >"$out" 2>"$tmp/err" || rc=$? ;;
	osh | osh-tcp)
		[ -z "$osh_note" ] || return 0
		local env=(env -u UCX_TLS) x=()
		[ "$cfg" = osh-tcp ] && env=(env UCX_TLS=tcp) x=(-x UCX_TLS)
		"${env[@]}" timeout 300 oshrun --allow-run-as-root --oversubscribe --mca osc ^rdma "${x[@]}" \
			-np 2 "$tmp/shmem-amo" --time-ms "$time_ms" >"$out" 2>"$tmp/err" || rc=$?
		if [ "$rc" != 0 ]; then
			osh_note="OpenSHMEM ($cfg) failed with status $rc: $(grep -v '^--' "$tmp/err" | head -n 5 | tr '\n' ' ')"
			echo "run-amo.sh: $osh_note" >&2
			return 0
		fi ;;
	tcp) "$tcpraw" --tsv --reps 5 --scale 0.25 --test rtt,rtt-busy >"$tmp/tcp" 2>"$tmp/err" || rc=$?
		# one value per rep: the median of tcp-raw's own 5
		awk -F'\t' '$1 == "row" && $2 ~ /RTT 8 B/ {
			k = split($4, v, " "); for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
			n = ($2 ~ /busy/) ? "rtt-busy" : "rtt"; print "tcp", n, v[int((k + 1) / 2)] }' \
			"$tmp/tcp" >>"$tmp/vals"
		[ "$rc" = 0 ] || { echo "run-amo.sh: tcp-raw failed:" >&2; cat "$tmp/err" >&2; exit 1; }
		return 0 ;;
	*) echo "run-amo.sh: unknown configuration $cfg" >&2; exit 2 ;;
	esac
	bench_take_rows "$cfg" "$rc" "$out"
}

load_before=$(bench_load)
: >"$tmp/vals"
for r in $(seq 1 "$reps"); do
	echo "run-amo.sh: rep $r of $reps" >&2
	for cfg in direct daemon 2d 2d-a0 osh osh-tcp tcp; do
		want "$cfg" && one "$cfg"
	done
done
load_after=$(bench_load)

echo "# remote atomics, PE 0 -> PE 1; median [min-max] of $reps alternating reps (--time-ms $time_ms each);" \
	"$(bench_cpus);" \
	"load average before: $load_before, after: $load_after"
PYTHONPATH="$repo/bench" python3 - "$tmp/vals" <<'PY'
import sys
import benchvals
vals = {}
for line in open(sys.argv[1]):
    c, n, v = line.split()
    vals.setdefault((c, n), []).append(float(v))
def med(c, n):
    return benchvals.mrange(vals.get((c, n), []))
def cell(c, n):
    return benchvals.cell(med(c, n))
def ratio(a, b):
    x, y = med(*a), med(*b)
    return "%.2fx" % (x[0] / y[0]) if x and y and y[0] > 0 else "-"
rows = [("fadd", "fetch-add latency, ns"), ("cswap", "compare-swap latency, ns"),
        ("add", "non-fetching add rate, Mops/s"), ("get", "8 B get latency (context), ns"), ("wake", "wait-until wake-up (half ping-pong), ns")]
cols = [("direct", "hoist direct"), ("daemon", "hoist daemon"), ("osh", "oshmem shm"),
        ("2d", "hoist 2 daemons"), ("2d-a0", "hoist 2d AUTO=0"), ("osh-tcp", "oshmem UCX tcp")]
w = 24
print("%-40s" % "" + "| %-*s" % (3 * w + 4, "same node") + "| across two daemons (loopback tcp)")
print("%-40s" % "measurement" + "".join("| %-*s" % (w, h) for _, h in cols))
for n, title in rows:
    print("%-40s" % title + "".join("| %-*s" % (w, cell(c, n)) for c, _ in cols))
print("%-40s| blocking %s, busy-poll %s" % ("raw TCP 8 B round trip, ns", cell("tcp", "rtt"),
                                            cell("tcp", "rtt-busy")))
print()
print("ratios (median / median)                          value   goal")
def line(what, r, goal=""):
    print("%-48s %8s   %s" % (what, r, goal))
line("fetch-add 2 daemons / raw TCP RTT (blocking)", ratio(("2d", "fadd"), ("tcp", "rtt")), "<= 1.15x")
line("fetch-add 2 daemons / raw TCP RTT (busy-poll)", ratio(("2d", "fadd"), ("tcp", "rtt-busy")))
line("fetch-add 2 daemons / hoist get 2 daemons", ratio(("2d", "fadd"), ("2d", "get")))
line("get 2 daemons / raw TCP RTT (busy-poll)", ratio(("2d", "get"), ("tcp", "rtt-busy")))
line("fetch-add 2 daemons / oshmem UCX tcp", ratio(("2d", "fadd"), ("osh-tcp", "fadd")))
line("fetch-add same node: hoist direct / oshmem shm", ratio(("direct", "fadd"), ("osh", "fadd")))
line("fetch-add same node: hoist daemon / oshmem shm", ratio(("daemon", "fadd"), ("osh", "fadd")))
line("compare-swap 2 daemons / raw TCP RTT (blocking)", ratio(("2d", "cswap"), ("tcp", "rtt")))
line("compare-swap 2 daemons / oshmem UCX tcp", ratio(("2d", "cswap"), ("osh-tcp", "cswap")))
line("compare-swap same node: hoist direct / oshmem shm", ratio(("direct", "cswap"), ("osh", "cswap")))
line("add rate 2 daemons AUTO=1 / oshmem UCX tcp", ratio(("2d", "add"), ("osh-tcp", "add")), ">= 10x")
line("add rate 2 daemons AUTO=0 / oshmem UCX tcp", ratio(("2d-a0", "add"), ("osh-tcp", "add")), ">= 10x")
line("add rate same node: hoist direct / oshmem shm", ratio(("direct", "add"), ("osh", "add")))
line("wake-up 2 daemons / oshmem UCX tcp", ratio(("2d", "wake"), ("osh-tcp", "wake")))
line("wake-up same node: hoist direct / oshmem shm", ratio(("direct", "wake"), ("osh", "wake")))
line("wake-up same node: hoist daemon / oshmem shm", ratio(("daemon", "wake"), ("osh", "wake")))
PY
[ -z "$osh_note" ] || echo "$osh_note"
bench_osh_versions
bench_reproduce "${orig_args[@]}"
