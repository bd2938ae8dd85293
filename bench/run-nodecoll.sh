#!/usr/bin/env bash
# bench/run-nodecoll.sh - small collectives on one node: hoist's OpenSHMEM
# (libhoist's node collectives, client/nodecoll.c) next to Open MPI's
# OpenSHMEM (oshrun, shared memory), and optionally a second hoist build
# (e.g. main, whose one-node collectives go through the daemon). With
# --nodes K, hoist's jobs run over K daemons on loopback TCP instead
# (oshrun --nodes K: consecutive blocks of PEs per daemon, e.g. 4 PEs on 2
# daemons: 2+2, the node path of nodecoll.c plus one descriptor per node),
# and Open MPI runs a second time over TCP (ompi-tcp: UCX_TLS=tcp and
# --mca btl self,tcp, so its collectives' bytes cross loopback TCP too).
#
#   bash bench/run-nodecoll.sh [--build DIR] [--base DIR] [--reps N]
#                              [--np LIST] [--nodes K] [--time-ms T]
#                              [--plot SVG]
#
# bench/shmem_coll.c (shmem.h only) is compiled with DIR/openshmem/oshcc
# (hoist, team forms over SHMEM_TEAM_WORLD), with Open MPI's oshcc
# (active-set forms over all PEs: Open MPI 4.1 has no teams) and, with
# --base, with BASE/openshmem/oshcc. Each of N reps (default 7) runs, for
# every PE count of LIST (default 2,4), every configuration once, in turn
# (drift on a shared machine hits all alike), each a fresh job with a
# fresh hoistd:
#   hoist   DIR/openshmem/oshrun -np P (one hoistd: every PE local)
#   base    BASE/openshmem/oshrun -np P            (only with --base)
#   ompi    oshrun -np P --mca osc ^rdma (UCX shared memory)
# Rows (ns per call on PE 0, back-to-back calls, every result checked):
# barrier, bcast-8 (broadcast 8 B from PE 0), allred-8 (sum of one long), a2a-8
# (alltoall 8 B per pair), fcollect-8 (8 B per PE). The table shows the
# median [min-max] over the reps, hoist/ompi and base/ompi ratios against
# the goal of issue 16 (<= 1.5x), and the load average before and after.
# --plot SVG: a bar chart of the medians with their ranges (bench/plot.py).
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" run-nodecoll.sh
build="$repo/build"
base=
reps=7
nps=2,4
nodes=1
time_ms=50
svg=
orig_args=("$@")
usage() { sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--base) base=$(cd "$2" && pwd); shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--np) nps=$2; shift 2 ;;
	--nodes) nodes=$2; shift 2 ;;
	--time-ms) time_ms=$2; shift 2 ;;
	--plot) svg=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run-nodecoll.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
done
bench_posint --reps "$reps"
command -v oshrun >/dev/null && command -v oshcc >/dev/null ||
	{ echo "run-nodecoll.sh: Open MPI's oshcc/oshrun missing (Debian: openmpi-bin libopenmpi-dev)" >&2; exit 1; }

bench_tmpdir

cfgs="hoist"
compile() { # NAME OSHCC
	if ! "$2" -O2 -I"$repo/bench" "$repo/bench/shmem_coll.c" -o "$tmp/coll-$1" 2>"$tmp/cc.err"; then
		echo "run-nodecoll.sh: $2 failed:" >&2
		cat "$tmp/cc.err" >&2
		exit 1
	fi
}
compile hoist "$build/openshmem/oshcc"
if [ -n "$base" ]; then
	compile base "$base/openshmem/oshcc"
	cfgs="$cfgs base"
fi
compile ompi "$(command -v oshcc)"
cfgs="$cfgs ompi"
[ "$nodes" -gt 1 ] && cfgs="$cfgs ompi-tcp"

one() { # CONFIG NP
	local cfg=$1 np=$2 out="$tmp/out" rc=0 b=$build
	case $cfg in
	hoist | base)
		[ "$cfg" = base ] && b=$base
		local where=(--runtime-dir "$(mktemp -d "$tmp/rt.XXXXXX")")
		[ "$nodes" -gt 1 ] && where=(--nodes "$nodes")
		timeout 600 "$b/openshmem/oshrun" -np "$np" "${where[@]}" \
			--hoistd "$b/daemon/hoistd" "$tmp/coll-$cfg" --time-ms "$time_ms" >"$out" 2>"$tmp/err" || rc=$? ;;
	ompi)
		env -u UCX_TLS timeout 600 oshrun --allow-run-as-root --oversubscribe --mca osc ^rdma \
			-np "$np" "$tmp/coll-ompi" --time-ms "$time_ms" >"$out" 2>"$tmp/err" || rc=$? ;;
	ompi-tcp)
		timeout 600 oshrun --allow-run-as-root --oversubscribe --mca osc ^rdma --mca btl self,tcp \
			-x UCX_TLS=tcp -np "$np" "$tmp/coll-ompi" --time-ms "$time_ms" >"$out" 2>"$tmp/err" || rc=$? ;;
	esac
	if [ "$rc" != 0 ]; then
		echo "run-nodecoll.sh: $cfg -np $np failed with status $rc:" >&2
		cat "$tmp/err" >&2
		exit 1
	fi
	awk -v c="$cfg" -v n="$np" '$1 == "row" { print c, n, $2, $4 }' "$out" >>"$tmp/vals"
}

load_before=$(bench_load)
machine_before=$(bench_machine "$build")
: >"$tmp/vals"
IFS=, read -r -a nplist <<<"$nps"
for r in $(seq 1 "$reps"); do
	echo "run-nodecoll.sh: rep $r of $reps" >&2
	for np in "${nplist[@]}"; do
		for cfg in $cfgs; do
			one "$cfg" "$np"
		done
	done
done
load_after=$(bench_load)
machine_after=$(bench_machine "$build")

echo "# before the run: $machine_before"
echo "# after the run: $machine_after"
where="on one node"
[ "$nodes" -gt 1 ] && where="hoist over $nodes daemons (loopback TCP)"
echo "# bench/shmem_coll.c $where, ns per call on PE 0; median [min-max] of $reps interleaved reps" \
	"(--time-ms $time_ms each); $(nproc) CPUs; load average before: $load_before, after: $load_after"
NODES=$nodes PYTHONPATH="$repo/bench" python3 - "$tmp/vals" "$cfgs" "$svg" "$reps" "$load_before" "$load_after" "$repo" <<'PY'
import json, os, subprocess, sys
import benchvals
path, cfgs, svg, reps, lb, la, repo = sys.argv[1:8]
cfgs = cfgs.split()
vals, rows, nps = {}, [], []
for line in open(path):
    c, n, name, v = line.split()
    n = int(n)
    if name not in rows:
        rows.append(name)
    if n not in nps:
        nps.append(n)
    vals.setdefault((c, n, name), []).append(float(v))
def med(c, n, name):
    return benchvals.mrange(vals.get((c, n, name), []))
def cell(c, n, name):
    return benchvals.cell(med(c, n, name), lambda x: "%.0f" % x)
def rat(a, b, n, name):
    x, y = med(a, n, name), med(b, n, name)
    return x[0] / y[0] if x and y and y[0] > 0 else None
nodes = int(os.environ.get("NODES", "1"))
goal = 1.5 if nodes == 1 else 2.0  # issue 16: one node; 4 PEs / 2 daemons vs shared memory
names = {"hoist": "hoist", "base": "hoist base", "ompi": "Open MPI oshmem", "ompi-tcp": "oshmem over tcp"}
w = 24
hdr = "%-14s" % "PEs row" + "".join("| %-*s" % (w, names[c]) for c in cfgs) + "| hoist/ompi"
if "base" in cfgs:
    hdr += " | base/ompi | hoist/base"
if "ompi-tcp" in cfgs:
    hdr += " | hoist/ompi-tcp"
print(hdr)
missed = []
for n in nps:
    for name in rows:
        line = "%-14s" % ("%d %s" % (n, name)) + "".join("| %-*s" % (w, cell(c, n, name)) for c in cfgs)
        r = rat("hoist", "ompi", n, name)
        line += "| %-10s" % ("%.2fx" % r if r else "-")
        if r and r > goal:
            missed.append("%d %s" % (n, name))
        if "base" in cfgs:
            rb, rh = rat("base", "ompi", n, name), rat("hoist", "base", n, name)
            line += " | %-9s | %-10s" % ("%.2fx" % rb if rb else "-", "%.2fx" % rh if rh else "-")
        if "ompi-tcp" in cfgs:
            rt = rat("hoist", "ompi-tcp", n, name)
            line += " | %s" % ("%.2fx" % rt if rt else "-")
        print(line)
print()
print("goal of issue 16, hoist/ompi <= %.1fx on every row: %s"
      % (goal, "met" if not missed else "MISSED in " + ", ".join(missed)))
if "ompi-tcp" in cfgs:
    for n in nps:
        rt = rat("hoist", "ompi-tcp", n, "bcast-8")
        if rt:
            print("goal of issue 16, %d PEs broadcast 8 B hoist/oshmem-over-tcp <= 1x: %s (%.2fx)"
                  % (n, "met" if rt <= 1 else "MISSED", rt))
if svg:
    cats = ["%d PEs %s" % (n, name) for n in nps for name in rows]
    series = []
    for i, c in enumerate(cfgs):
        v = []
        for n in nps:
            for name in rows:
                m = med(c, n, name)
                v.append([m[0] / 1000, m[1] / 1000, m[2] / 1000] if m else [0, 0, 0])
        series.append({"name": names[c], "values": v,
                       "color": ["#1f77b4", "#7f7f7f", "#d62728", "#ff7f0e"][i % 4]})
    spec = {"plots": [{"out": svg, "kind": "bars",
                       "title": "Small collectives %s: hoist vs Open MPI OpenSHMEM" % ("on one node" if nodes == 1 else "over %d hoist daemons" % nodes),
                       "subtitle": "median and range of %s interleaved reps; load average %s -> %s" % (reps, lb, la),
                       "ylabel": "us per call (PE 0)", "categories": cats, "series": series,
                       "note": "bash bench/run-nodecoll.sh; bench/shmem_coll.c"}]}
    sp = os.path.join(os.path.dirname(path), "plot.json")
    json.dump(spec, open(sp, "w"))
    subprocess.call([sys.executable, os.path.join(repo, "bench", "plot.py"), sp])
PY
echo "oshrun: $(oshrun --version 2>/dev/null | head -n 1 || echo none)"
bench_reproduce "${orig_args[@]}"
