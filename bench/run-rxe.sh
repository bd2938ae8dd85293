#!/usr/bin/env bash
# bench/run-rxe.sh - hoist over the verbs transport next to perftest between
# the same two Soft-RoCE devices, in ONE QEMU VM boot (tests/rxe/run-in-vm.sh,
# RXE_VM_NDEV=2: rxe0 and rxe1 on the two ends of a veth wire).
#
#   bash bench/run-rxe.sh [--build DIR] [--reps N] [--scale F] [--rounds R]
#
# In the guest: two hoistd --transport=verbs --spin-us=0 (HOIST_BENCH_SPIN_US;
# clients HOIST_SPIN_US=300, see the comment at cluster.sh below),
# one per rxe IP
# (tests/multinode/cluster.sh with CLUSTER_IPS), then R rounds (default 3) of
#   HOIST_AUTO=0 HOIST_SPIN_US=300 hoistrun -n 2 --runtime-dirs D0,D1 hoist-bench --test lat,get,bw --tsv
#   ib_write_lat -s 8 / -s 4096, ib_read_lat -s 8 / -s 4096,
#   ib_write_bw -s 65536 / -s 1048576   (server on rxe0, client on rxe1)
# and prints one table: hoist medians over reps x rounds, perftest medians
# over rounds (t_typical for latency, BW average for bandwidth), and ratios.
# perftest's ib_write_lat reports half a ping-pong round trip, so the
# put+quiet latency (a full round trip: WRITE, then its ACK) is compared with
# 2 x ib_write_lat, and gets with ib_read_lat (both full round trips).
# Everything runs 20-50x slower under TCG emulation: the ratios count.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
build=$repo/build
reps=5
scale=0.01
rounds=3
orig=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd -P); shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	-h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-rxe.sh: unknown option $1" >&2; exit 2 ;;
	esac
done

if [ "${RXE_VM:-0}" != 1 ]; then
	for f in bench/hoist-bench daemon/hoistd launcher/hoistrun daemon/hoistctl; do
		[ -x "$build/$f" ] || { echo "run-rxe.sh: $build/$f missing: build first" >&2; exit 2; }
	done
	export RXE_VM_NDEV=2 RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-900}
	echo "reproduce: bash bench/run-rxe.sh ${orig[*]}"
	exec "$repo/tests/rxe/run-in-vm.sh" "$repo/bench/run-rxe.sh" --build "$build" --reps "$reps" \
		--scale "$scale" --rounds "$rounds"
fi

# ---- in the guest -------------------------------------------------------------
if [ -z "${HOIST_DIRS:-}" ]; then
	read -r -a ips <<<"$RXE_IPS"
	export HOIST_HOISTD=$build/daemon/hoistd HOIST_HOISTRUN=$build/launcher/hoistrun \
		HOIST_HOISTCTL=$build/daemon/hoistctl
	export CLUSTER_IPS="${ips[0]} ${ips[1]}" CLUSTER_READY_SEC=60 CLUSTER_TIMEOUT=800
	# spin: in this 2-vCPU TCG guest a spinning daemon slows everything
	# down (measured: daemon spin_us 300/1000 -> 5-30x slower), a
	# spinning waiting client helps (measured: 3-4x faster than futex
	# wakeups): daemons spin_us=0, clients HOIST_SPIN_US=300
	exec "$repo/tests/multinode/cluster.sh" 2 --daemon-arg=--transport=verbs \
		--daemon-arg=--spin-us="${HOIST_BENCH_SPIN_US:-0}" -- \
		"$repo/bench/run-rxe.sh" --build "$build" --reps "$reps" --scale "$scale" --rounds "$rounds"
fi

# ---- under cluster.sh: the measurements ---------------------------------------
read -r -a ips <<<"$RXE_IPS"
read -r -a devs <<<"$RXE_DEVS"
gid=${RXE_GID_INDEX:-1}
out=$(mktemp -d /tmp/rxe-bench.XXXXXX)
port=18600
: >"$out/perf"

perf() { # tool size iters -> appends "tool size value" to $out/perf
	local tool=$1 size=$2 iters=$3 slog=$out/server.log clog=$out/client.log ok=0
	port=$((port + 1))
	"$tool" -d "${devs[0]}" -x "$gid" -s "$size" -n "$iters" -p "$port" -F >"$slog" 2>&1 &
	local spid=$!
	for _ in $(seq 1 100); do # the server may not listen yet: retry the client
		if "$tool" -d "${devs[1]}" -x "$gid" -s "$size" -n "$iters" -p "$port" -F "${ips[0]}" >"$clog" 2>&1; then
			ok=1
			break
		fi
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.2
	done
	wait "$spid" || true
	[ $ok = 1 ] || { echo "run-rxe.sh: $tool -s $size failed:" >&2; cat "$clog" "$slog" >&2; return 1; }
	# latency: t_typical (5th column); bandwidth: BW average MB/s (4th)
	awk -v t="$tool" -v s="$size" '$1 == s && NF >= 5 {
		v = (t ~ /_bw$/) ? $4 : $5; print t, s, v }' "$clog" | tail -1 >>"$out/perf"
}

for ((r = 1; r <= rounds; r++)); do
	echo "round $r/$rounds: hoist-bench" >&2
	# HOIST_AUTO=0: the transport itself (no prefetch answering repeated gets)
	HOIST_AUTO=0 HOIST_SPIN_US=${HOIST_SPIN_US:-300} "$HOIST_HOISTRUN" -n 2 --runtime-dirs "$HOIST_DIRS" --job "rxe-bench-$r-$$" --timeout 600 \
		"$build/bench/hoist-bench" --test lat,get,bw --reps "$reps" --scale "$scale" --no-floor --tsv \
		>>"$out/hoist.tsv"
	echo "round $r/$rounds: perftest" >&2
	[ "${HOIST_BENCH_NO_PERFTEST:-0}" = 1 ] && continue
	perf ib_write_lat 8 500
	perf ib_write_lat 4096 500
	perf ib_read_lat 8 500
	perf ib_read_lat 4096 500
	perf ib_write_bw 65536 200
	perf ib_write_bw 1048576 40
done
"$HOIST_HOISTCTL" --runtime-dir "$HOIST_DIR_0" stats --json | python3 "$MN_SRC_DIR/mn_stats.py" check \
	"d['transport_verbs'] == 1" "d['rdma_writes'] > 0" "d['rdma_reads'] > 0" "'tcp_requests' not in d" ||
	{ echo "run-rxe.sh: daemon 0 did not use verbs" >&2; exit 1; }

for i in 0 1; do
	"$HOIST_HOISTCTL" --runtime-dir "$(eval echo "\$HOIST_DIR_$i")" stats --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["daemon"]
keys = ("loops_busy", "sleeps", "doorbells", "wakeups", "rdma_writes", "rdma_reads", "rdma_doorbells",
        "rdma_wrs", "rdma_signaled", "rdma_inline", "rdma_bounced", "rdma_order_waits", "rdma_sends", "rdma_resolves")
print("daemon '$i':", " ".join("%s=%s" % (k, d.get(k)) for k in keys))'
done
python3 - "$out/hoist.tsv" "$out/perf" <<'PY'
import statistics, sys
hoist, perf = {}, {}
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if len(f) == 4 and f[0] == "row":
        hoist.setdefault(f[1], []).extend(float(x) for x in f[3].split())
for line in open(sys.argv[2]):
    t, s, v = line.split()
    if v not in ("inf", "nan", "-nan"):  # perftest prints inf for a failed sample
        perf.setdefault((t, int(s)), []).append(float(v))
med = lambda xs: statistics.median(xs) if xs else float("nan")
best = lambda xs: min(xs) if xs else float("nan")
top = lambda xs: max(xs) if xs else float("nan")
def h(name, f=med):
    return f(hoist.get(name, []))
def p(tool, size, f=med):
    return f(perf.get((tool, size), []))
def ratio(a, b):
    return a / b if b and b == b else float("nan")
rows = [
    # hoist row, factor on the perftest value, perftest tool and size, label
    ("put 8 B latency (put+quiet)", 2, "ib_write_lat", 8, "2 x ib_write_lat 8 B"),
    ("put 4 KiB latency (put+quiet)", 2, "ib_write_lat", 4096, "2 x ib_write_lat 4 KiB"),
    ("get 8 B latency (symmetric dst)", 1, "ib_read_lat", 8, "ib_read_lat 8 B"),
    ("get 4 KiB latency (symmetric dst)", 1, "ib_read_lat", 4096, "ib_read_lat 4 KiB"),
    ("get 8 B latency (blocking)", 1, "ib_read_lat", 8, "ib_read_lat 8 B"),
    ("get 4 KiB latency (blocking)", 1, "ib_read_lat", 4096, "ib_read_lat 4 KiB"),
]
print("%-34s %9s %9s   %-22s %9s %9s %7s %7s" % ("hoist", "median", "best", "perftest", "median",
                                                 "best", "ratio", "best-r"))
for name, k, tool, size, label in rows:
    hm, hb = h(name) / 1000.0, h(name, best) / 1000.0
    pm, pb = k * p(tool, size), k * p(tool, size, best)
    print("%-34s %7.1fus %7.1fus   %-22s %7.1fus %7.1fus %7.2f %7.2f" % (name, hm, hb, label, pm, pb,
                                                                       ratio(hm, pm), ratio(hb, pb)))
for name, size, label in (("put bandwidth 64 KiB (+quiet)", 65536, "ib_write_bw 64 KiB"),
                          ("put bandwidth 1 MiB (+quiet)", 1048576, "ib_write_bw 1 MiB")):
    hm, hb = h(name) * 1000.0, h(name, top) * 1000.0  # GB/s -> MB/s; best = highest
    pm, pb = p("ib_write_bw", size), p("ib_write_bw", size, top)
    print("%-34s %5.1fMB/s %5.1fMB/s   %-22s %5.1fMB/s %5.1fMB/s %7.2f %7.2f" % (name, hm, hb, label, pm, pb,
                                                                              ratio(hm, pm), ratio(hb, pb)))
print("perftest values per round:", {"%s %d" % k: v for k, v in sorted(perf.items())})
print("ratio = hoist median / perftest median; best-r = best hoist rep / best perftest round")
print("(latency: lower is better, target <= 1.3; bandwidth: higher is better)")
PY
rm -rf "$out"
