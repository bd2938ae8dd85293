#!/usr/bin/env bash
# bench/run-shmem.sh - one OpenSHMEM program (bench/shmem_bench.c, shmem.h
# only) compiled with hoist's oshcc and with Open MPI's, run side by side:
# one table of medians with their spread, hoist/oshmem ratios, the goals of
# issue 12, then the reproducing command.
#
#   bash bench/run-shmem.sh [--build DIR] [--base DIR] [--reps N]
#                           [--time-ms T] [--only LIST]
#
# Builds nothing of hoist: DIR (default build/ of the repository) must hold
# openshmem/oshcc, openshmem/oshrun and daemon/hoistd. shmem_bench.c is
# compiled here twice: with DIR/openshmem/oshcc and with Open MPI's oshcc
# (/usr/bin/oshcc, else the one on PATH). Each of N reps (default 5) runs
# every configuration once, in this order (so drift on a shared machine
# hits all alike), each a fresh job and fresh daemons:
#   h1   DIR/openshmem/oshrun -np 2 with a private hoistd (fresh
#        --runtime-dir): same node, libhoist's direct path where it has one
#   o1   oshrun -np 2 (Open MPI, --mca osc ^rdma as run-amo.sh): same node,
#        UCX's default transports (shared memory)
#   h2   DIR/openshmem/oshrun -np 2 --nodes 2: two hoistd on loopback TCP
#   o2   o1 with UCX_TLS=tcp (-x UCX_TLS): the PE-to-PE traffic over
#        loopback TCP, the reference for "across two daemons" (run-amo.sh's
#        osh-tcp)
#   o2b  o2 plus --mca btl self,tcp: Open MPI's collectives ride its MPI
#        layer, whose byte transfer stays on shared memory in o2; this
#        puts them on TCP as well
#   b1   h1 with a second hoist build (--base DIR, e.g. main's; compiled
#        with DIR/openshmem/oshcc): before and after, in the same run
#   f1   the floors of the barrier and bcast-8 rows: bench/spin_barrier.c
#        and bench/spin_bcast.c (cc -O2), two processes that spin on each
#        other's cache lines in the layout of libhoist's node barrier and
#        node broadcast, nothing else
# --only LIST: a comma list of these (default h1,o1,h2,o2,o2b; b1 with
# --base; f1 only when named). --time-ms T: each
# measurement of each run lasts about T ms (default 50). --bind: h1's
# and b1's ranks each bound to one CPU (taskset -c RANK mod CPUs, through
# a wrapper reading HOIST_RANK), as Open MPI's oshrun binds its ranks to
# cores by default (2 ranks); without it the kernel may put both PEs on
# one CPU for a whole run on a busy machine (1.6 us a barrier, bimodal).
# The program checks every result (data read back, broadcast words, sums,
# the fetch-add counter): a wrong one fails the run, not the table. A row
# shows the median over the reps and [min-max]; ratios are hoist median /
# Open MPI median (for ns rows below 1 means hoist is faster, for MB/s and
# Mops/s above 1). If Open MPI's oshcc/oshrun are missing or fail, the
# table says why and its columns stay empty.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" run-shmem.sh
build="$repo/build"
base=
reps=5
time_ms=50
bind=0
only="h1,o1,h2,o2,o2b"
orig_args=("$@")
usage() { sed -n '2,45p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--base) base=$(cd "$2" && pwd); shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--time-ms) time_ms=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--bind) bind=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run-shmem.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
done
bench_posint --reps "$reps"
[ -n "$base" ] && [ "$only" = "h1,o1,h2,o2,o2b" ] && only="$only,b1"
case ",$only," in *,b1,*) [ -n "$base" ] || { echo "run-shmem.sh: b1 needs --base DIR" >&2; exit 2; } ;; esac

hoshcc="$build/openshmem/oshcc"
hoshrun="$build/openshmem/oshrun"
hoistd="$build/daemon/hoistd"
for f in "$hoshcc" "$hoshrun" "$hoistd"; do
	if [ ! -x "$f" ]; then
		echo "run-shmem.sh: $f is missing; build first: bash scripts/build.sh $build" >&2
		exit 1
	fi
done

bench_tmpdir

if ! "$hoshcc" -O2 -I"$repo/bench" "$repo/bench/shmem_bench.c" -o "$tmp/shmem-bench-hoist" 2>"$tmp/cc.err"; then
	echo "run-shmem.sh: hoist's oshcc failed:" >&2
	cat "$tmp/cc.err" >&2
	exit 1
fi
if want b1; then
	for f in "$base/openshmem/oshcc" "$base/openshmem/oshrun" "$base/daemon/hoistd"; do
		[ -x "$f" ] || { echo "run-shmem.sh: $f is missing (--base)" >&2; exit 1; }
	done
	if ! "$base/openshmem/oshcc" -O2 -I"$repo/bench" "$repo/bench/shmem_bench.c" -o "$tmp/shmem-bench-base" 2>"$tmp/cc.err"; then
		echo "run-shmem.sh: the base's oshcc failed:" >&2
		cat "$tmp/cc.err" >&2
		exit 1
	fi
fi
if want f1; then
	for f in spin_barrier spin_bcast; do
		if ! cc -O2 -I"$repo/bench" "$repo/bench/$f.c" -o "$tmp/${f/_/-}" 2>"$tmp/cc.err"; then
			echo "run-shmem.sh: cc $f.c failed:" >&2
			cat "$tmp/cc.err" >&2
			exit 1
		fi
	done
fi
ocshcc=/usr/bin/oshcc
[ -x "$ocshcc" ] || ocshcc=$(command -v oshcc || true)
osh_note=
if [ -z "$ocshcc" ] || ! command -v oshrun >/dev/null; then
	osh_note="Open MPI not measured: oshcc/oshrun not found (Debian: openmpi-bin libopenmpi-dev)"
elif ! "$ocshcc" -O2 -I"$repo/bench" "$repo/bench/shmem_bench.c" -o "$tmp/shmem-bench-ompi" 2>"$tmp/cc.err"; then
	osh_note="Open MPI not measured: its oshcc failed: $(tail -n 3 "$tmp/cc.err" | tr '\n' ' ')"
fi

pin=()
if [ "$bind" = 1 ]; then
	ncpu=$(nproc)
	printf '#!/bin/sh\nexec taskset -c "$((HOIST_RANK %% %s))" "$@"\n' "$ncpu" >"$tmp/pin.sh"
	chmod +x "$tmp/pin.sh"
	pin=("$tmp/pin.sh")
fi

# one CONFIG: appends "CONFIG NAME VALUE" lines to $tmp/vals
one() {
	local cfg=$1 out="$tmp/out" rc=0
	case $cfg in
	h1) timeout 600 "$hoshrun" -np 2 --runtime-dir "$(mktemp -d "$tmp/rt.XXXXXX")" --hoistd "$hoistd" \
		"${pin[@]}" "$tmp/shmem-bench-hoist" --time-ms "$time_ms" >"$out" 2>"$tmp/err" || rc=$? ;;
	b1) timeout 600 "$base/openshmem/oshrun" -np 2 --runtime-dir "$(mktemp -d "$tmp/rt.XXXXXX")" \
		--hoistd "$base/daemon/hoistd" "${pin[@]}" "$tmp/shmem-bench-base" --time-ms "$time_ms" >"$out" 2>"$tmp/err" || rc=$? ;;
	f1) { timeout 600 "$tmp/spin-barrier" --time-ms "$time_ms" &&
		timeout 600 "$tmp/spin-bcast" --time-ms "$time_ms"; } >"$out" 2>"$tmp/err" || rc=$? ;;
	h2) timeout 600 "$hoshrun" -np 2 --nodes 2 --hoistd "$hoistd" \
		"$tmp/shmem-bench-hoist" --time-ms "$time_ms" >"$out" 2>"$tmp/err" || rc=$? ;;
	o1 | o2 | o2b)
		[ -z "$osh_note" ] || return 0
		local env=(env -u UCX_TLS) x=()
		[ "$cfg" != o1 ] && env=(env UCX_TLS=tcp) x=(-x UCX_TLS)
		[ "$cfg" = o2b ] && x+=(--mca btl "self,tcp")
		"${env[@]}" timeout 600 oshrun --allow-run-as-root --oversubscribe --mca osc ^rdma "${x[@]}" \
			-np 2 "$tmp/shmem-bench-ompi" --time-ms "$time_ms" >"$out" 2>"$tmp/err" || rc=$?
		if [ "$rc" != 0 ]; then
			osh_note="Open MPI ($cfg) failed with status $rc: $(grep -v '^--' "$tmp/err" | head -n 5 | tr '\n' ' ')"
			echo "run-shmem.sh: $osh_note" >&2
			return 0
		fi ;;
	*) echo "run-shmem.sh: unknown configuration $cfg" >&2; exit 2 ;;
	esac
	bench_take_rows "$cfg" "$rc" "$out"
}

load_before=$(bench_load)
machine_before=$(bench_machine "$build")
: >"$tmp/vals"
for r in $(seq 1 "$reps"); do
	echo "run-shmem.sh: rep $r of $reps" >&2
	for cfg in h1 b1 o1 f1 h2 o2 o2b; do
		want "$cfg" && one "$cfg"
	done
done
load_after=$(bench_load)
machine_after=$(bench_machine "$build")

echo "# before the run: $machine_before"
echo "# after the run: $machine_after"
echo "# shmem_bench.c, 2 PEs (PE 0 -> PE 1 for point-to-point); median [min-max] of $reps alternating reps" \
	"(--time-ms $time_ms each); $(bench_cpus);" \
	"load average before: $load_before, after: $load_after$([ "$bind" = 1 ] && echo "; h1/b1 ranks bound to one CPU each (--bind)")"
PYTHONPATH="$repo/bench" python3 - "$tmp/vals" "$only" <<'PY'
import sys
import benchvals
vals = {}
order = []
for line in open(sys.argv[1]):
    c, n, v = line.split()
    if n not in order:
        order.append(n)
    vals.setdefault((c, n), []).append(float(v))
def med(c, n):
    return benchvals.mrange(vals.get((c, n), []))
def cell(c, n):
    return benchvals.cell(med(c, n))
def rat(a, b, n):
    x, y = med(a, n), med(b, n)
    return x[0] / y[0] if x and y and y[0] > 0 else None
def rs(r):
    return "%.2fx" % r if r is not None else "-"
units = {"putbw": "MB/s", "nbi": "Mops/s"}
def title(n):
    return "%s, %s" % (n, units.get(n, "ns"))
def ahead(n, r):  # hoist better than Open MPI?
    return r is not None and (r > 1 if n in units else r < 1)
only = sys.argv[2].split(",")
cols = [("h1", "hoist 1 node"), ("b1", "base 1 node"), ("o1", "oshmem shm"), ("f1", "spin floor"),
        ("h2", "hoist 2 daemons"), ("o2", "oshmem UCX tcp"), ("o2b", "oshmem tcp+btl tcp")]
cols = [x for x in cols if x[0] in only]
ratios = [("h1", "o1"), ("b1", "o1"), ("h1", "b1"), ("f1", "o1"), ("h2", "o2"), ("h2", "o2b")]
ratios = [x for x in ratios if x[0] in only and x[1] in only]
w = 26
print("%-14s" % "measurement" + "".join("| %-*s" % (w, h) for _, h in cols)
      + "".join("| %-6s " % ("%s/%s" % r) for r in ratios))
for n in order:
    print("%-14s" % title(n) + "".join("| %-*s" % (w, cell(c, n)) for c, _ in cols)
          + "".join("| %-6s " % rs(rat(a, b, n)) for a, b in ratios))
print()
print("goals of issue 12 (ratio = hoist median / Open MPI median)")
for n in ("put-8", "put-64", "putq-8", "putq-64", "get-8", "get-64"):
    r = rat("h1", "o1", n)
    print("  same node %-8s hoist/oshmem shm   %7s   goal <= 1.5x: %s"
          % (n, rs(r), "-" if r is None else "met" if r <= 1.5 else "MISSED"))
print("goals of issue 16")
for n in ("barrier", "bcast-8"):
    r = rat("h1", "o1", n)
    print("  same node %-8s hoist/oshmem shm   %7s   goal <= 1.5x: %s"
          % (n, rs(r), "-" if r is None else "met" if r <= 1.5 else "MISSED"))
for ref, name in (("o2", "UCX tcp"), ("o2b", "tcp+btl tcp")):
    got = [n for n in order if rat("h2", ref, n) is not None]
    a = [n for n in got if ahead(n, rat("h2", ref, n))]
    print("  across two daemons, hoist ahead of oshmem %s in %d of %d rows%s"
          % (name, len(a), len(got), (": behind in " + " ".join(n for n in got if n not in a)) if got and len(a) < len(got) else ""))
PY
[ -z "$osh_note" ] || echo "$osh_note"
bench_osh_versions
bench_reproduce "${orig_args[@]}"
