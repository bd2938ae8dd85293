#!/usr/bin/env bash
# bench/run-prefetch.sh - the prefetch sweep of issue 16 ("a prefetcher
# without a cliff"; seed 000 Figure 5): per-get cost and first-get wait of
# a phase of G queued gets, G = 64 .. 4096, for 8 B, 256 B and 4 KiB gets.
#
#   bash bench/run-prefetch.sh [--reps N] [--gets 64,128,...] [--sizes 8,256,4096]
#                              [--inner-reps N] [--blocking] [--build DIR] [--keep DIR]
#                              [--daemon-arg ARG]... [--pin-nodes] [--plot-dir DIR | --no-plot]
#
# Starts 2 hoistd on loopback (tests/multinode/cluster.sh: TCP between them,
# --prefetch-arena-bytes=64m so that 4096 x 4 KiB fit a half; phase_max_gets
# is at its default, 4096; --daemon-arg adds a setting, e.g. for a build
# whose default is smaller: --daemon-arg=--phase-max-gets=8192) and runs bench/prefetch_init.c (hoist-prefetch-init)
# on 4 PEs (2 per daemon): rank 0's phase, started by one barrier call site,
# holds G gets of S bytes from PE 2 on the other daemon. With --pin-nodes
# each "node" gets a CPU of its own, as nodes have: 2 PEs (one per daemon,
# rank 0 gets from PE 1), daemon i's threads and PE i bound to CPU i
# (taskset; hoistrun --bind-to core). Unpinned, the scheduler often keeps
# both daemons and rank 0 on one CPU, taking turns by sched_yield (bench/
# README.md "Two nodes on two CPUs"). Every (S, G) is its
# own job (a fresh client: the phase's first run is its only recording run),
# in two variants interleaved per repetition (--reps, default 7):
#   auto    HOIST_AUTO=1 hoist_get x G: the daemon prefetches the phase's gets
#           when the barrier completes
#   manual  HOIST_AUTO=0 hoist_get_nbi x G + hoist_quiet: the reference, what
#           the network path does pipelined by hand
#   (blocking, with --blocking: HOIST_AUTO=0 hoist_get x G, a round trip each)
# Each job runs the phase 2 untimed times (the first records it), then
# --inner-reps (default 3) timed times and prints their medians; the tables
# give the median (min-max) of those over the repetitions:
#   per-get µs  = (last get done - barrier return) / G
#   first µs    = first get done - barrier return (auto only)
# then per size the flatness max/min over G of auto's per-get median (goal
# <= 1.10) and of the first-get wait, and the daemon counters of the auto
# jobs (both daemons summed): every miss by reason (pf_miss_cold: the
# recording run, G per job; any other is a miss the sweep should not have),
# pf_late, pf_demand, and gets served by prefetch against those predicted.
# The load average is printed before and after. Plot: prefetch-sweep.svg in
# --plot-dir (default bench/plots/) through bench/plot.py.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" run-prefetch.sh
self="$repo/bench/run-prefetch.sh"
build=
reps=7
inner=3
gets="64,128,256,512,1024,2048,4096"
sizes="8,256,4096"
blocking=0
pin=0
keep=
dargs=()
plot_dir="$repo/bench/plots"
orig_args=("$@")

usage() { sed -n '2,36p' "$self" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
	case "$1" in
	--reps) reps=$2; shift 2 ;;
	--inner-reps) inner=$2; shift 2 ;;
	--gets) gets=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--blocking) blocking=1; shift ;;
	--pin-nodes) pin=1; shift ;;
	--daemon-arg) dargs+=("--daemon-arg=$2"); shift 2 ;;
	--daemon-arg=*) dargs+=("$1"); shift ;;
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	--plot-dir) plot_dir=$2; shift 2
		case $plot_dir in /*) ;; *) plot_dir="$PWD/$plot_dir" ;; esac ;;
	--no-plot) plot_dir=; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run-prefetch.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done
if [ -z "$build" ]; then
	if [ -d "$repo/build-kb" ]; then build="$repo/build-kb"; else build="$repo/build"; fi
fi

# ---- outside the cluster: build, then run myself under cluster.sh --------------
if [ -z "${RP_INNER:-}" ]; then
	bench_build_missing "$build" bench/hoist-prefetch-init daemon/hoistd daemon/hoistctl launcher/hoistrun
	export RP_INNER=1 RP_BUILD="$build"
	bench_exec_in_cluster "$build" 2 --daemon-arg=--prefetch-arena-bytes=67108864 "${dargs[@]}" \
		-- bash "$self" "${orig_args[@]}"
fi

# ---- inside: HOIST_DIRS, HOIST_DIR_0/1 set by cluster.sh ------------------------
: "${HOIST_DIRS:?}" "${HOIST_DIR_0:?}" "${HOIST_DIR_1:?}"
build=$RP_BUILD
pf="$build/bench/hoist-prefetch-init"
out=$(mktemp -d "${TMPDIR:-/tmp}/hoist-prefetch.XXXXXX")
trap 'rm -rf "$out"' EXIT
stat_keys="pf_fast_hits pf_hits pf_waits pf_demand pf_late pf_misses pf_miss_cold pf_miss_new pf_miss_full pf_miss_invalid pf_skipped pf_skip_room pf_issued pf_wasted pf_chunks phases pf_notify_ns"

snap() { bench_daemon_sums "$stat_keys" "$HOIST_DIR_0" "$HOIST_DIR_1"; } # one line "k=v ..." of daemon counters summed over both daemons

np=4
bind=()
if [ "$pin" = 1 ]; then
	if [ "$(nproc)" -lt 2 ]; then
		echo "run-prefetch.sh: --pin-nodes needs 2 CPUs" >&2
		exit 2
	fi
	taskset -a -p -c 0 "$HOISTD_PID_0" >/dev/null
	taskset -a -p -c 1 "$HOISTD_PID_1" >/dev/null
	np=2
	bind=(--bind-to core)
fi
load_before=$(bench_load)
machine_before=$(bench_machine "$build")
variants="auto manual"
[ "$blocking" = 1 ] && variants="auto manual blocking"
IFS=, read -r -a size_list <<<"$sizes"
IFS=, read -r -a get_list <<<"$gets"
status=0
for ((r = 1; r <= reps; r++)); do
	for s in "${size_list[@]}"; do
		for g in "${get_list[@]}"; do
			for v in $variants; do
				auto=0
				flags=()
				case $v in auto) auto=1 ;; manual) flags=(--manual) ;; esac
				before=$(snap)
				if ! line=$(HOIST_AUTO=$auto "$HOIST_HOISTRUN" -n "$np" "${bind[@]}" --runtime-dirs "$HOIST_DIRS" --timeout 600 \
					"$pf" --sizes "$s" --gets "$g" --reps "$inner" "${flags[@]}" 2>"$out/err" | grep '^size='); then
					echo "run-prefetch.sh: $v S=$s G=$g rep $r failed: $(tail -n 5 "$out/err")" >&2
					status=1
					continue
				fi
				after=$(snap)
				echo "variant=$v rep=$r $line BEFORE $before AFTER $after" >>"$out/runs.txt"
			done
		done
		echo "  rep $r size $s done" >&2
	done
done
load_after=$(bench_load)
machine_after=$(bench_machine "$build")
cpu=$(bench_cpu_model)
machine="$(nproc) CPUs (${cpu:-unknown CPU}), load average before: $load_before, after: $load_after"
[ -n "$keep" ] && mkdir -p "$keep" && cp "$out"/* "$keep"/

echo "# before the run: $machine_before"
echo "# after the run: $machine_after"
python3 - "$out" "$machine" "$reps" "$inner" "${plot_dir:-}" "$variants" "$np" "$pin" <<'EOF' || status=1
import json, os, re, sys
out, machine, reps, inner, plot_dir, variants = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6].split()
np, pin = int(sys.argv[7]), sys.argv[8] == "1"
src = "PE %d on the other hoistd" % (np // 2)
data, ctr, notify, fail = {}, {}, {}, 0
for line in open(os.path.join(out, "runs.txt")):
    kv = dict(re.findall(r"(\w+)=(\S+)", line.split(" BEFORE ")[0]))
    v, s, g = kv["variant"], int(kv["size"]), int(kv["gets"])
    if kv["errors"] != "0":
        print("FAIL: %s S=%d G=%d: %s data errors" % (v, s, g, kv["errors"]))
        fail = 1
    data.setdefault((v, s, g), []).append((float(kv["per_get_us"]), float(kv["first_us"])))
    b = dict((k, int(x)) for k, x in re.findall(r"(\w+)=(\d+)", line.split(" BEFORE ")[1].split(" AFTER ")[0]))
    a = dict((k, int(x)) for k, x in re.findall(r"(\w+)=(\d+)", line.split(" AFTER ")[1]))
    if v == "auto":
        c = ctr.setdefault(s, {"jobs": 0, "predicted": 0})
        for k in a:
            c[k] = c.get(k, 0) + a[k] - b[k]
        c["jobs"] += 1
        c["predicted"] += (1 + inner) * g  # runs after the recording run
        c["cold_want"] = c.get("cold_want", 0) + g
        n = notify.setdefault((s, g), [0, 0])
        n[0] += a.get("pf_notify_ns", 0) - b.get("pf_notify_ns", 0)
        n[1] += a.get("phases", 0) - b.get("phases", 0)

def med(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2

def mmr(xs):
    return "%.3f (%.3f-%.3f)" % (med(xs), min(xs), max(xs))

sizes = sorted(set(k[1] for k in data))
gs = sorted(set(k[2] for k in data))
print("Prefetch sweep (issue 16; seed 000 Fig. 5): rank 0's phase = G gets of S bytes from " + src +
      (" (--pin-nodes: %d PEs, daemon i and PE i on CPU i)" % np if pin else ""))
print("%s" % machine)
print("us; median (min-max) over %d repetitions of each job's median of %d timed runs; variants interleaved per repetition" % (reps, inner))
summary = []
for s in sizes:
    print()
    hdr = "| S | G | auto per-get | manual per-get | auto/manual | auto first get |"
    if "blocking" in variants:
        hdr += " blocking per-get |"
    print(hdr)
    print("|" + "---|" * (hdr.count("|") - 1))
    per, first = {}, {}
    for g in gs:
        if ("auto", s, g) not in data:
            continue
        ap = [x[0] for x in data[("auto", s, g)]]
        af = [x[1] for x in data[("auto", s, g)]]
        mp = [x[0] for x in data.get(("manual", s, g), [])]
        per[g], first[g] = med(ap), med(af)
        row = "| %d B | %d | %s | %s | %s | %s |" % (s, g, mmr(ap), mmr(mp) if mp else "-",
                                                    "%.2f" % (med(ap) / med(mp)) if mp else "-", mmr(af))
        if "blocking" in variants:
            bp = [x[0] for x in data.get(("blocking", s, g), [])]
            row += " %s |" % (mmr(bp) if bp else "-")
        print(row)
    if per:
        fl = max(per.values()) / min(per.values())
        ff = max(first.values()) / min(first.values())
        summary.append((s, fl, ff, min(first.values()), max(first.values())))
print()
print("Flatness over G = %s (goal: per-get max/min <= 1.10; first get independent of G):" % ",".join(map(str, gs)))
for s, fl, ff, fmin, fmax in summary:
    print("  %5d B: per-get max/min = %.2f; first get %.1f-%.1f us, max/min = %.2f" % (s, fl, fmin, fmax, ff))
print()
print("Phase ends at the barrier notify (overlap_notify, on the barrier's path; counter pf_notify_ns of the auto jobs,")
print("both daemons, all %d PEs; only rank 0's phase has G gets): us per job, and per notify (phases started):" % np)
for s in sizes:
    cells = []
    for g in gs:
        ns, ph = notify.get((s, g), (0, 0))
        jobs = len(data.get(("auto", s, g), []))
        if jobs and ph and ns:
            cells.append("G=%d %.0f us/job %.1f us/notify" % (g, ns / 1e3 / jobs, ns / 1e3 / ph))
    if cells:
        print("  %5d B: %s" % (s, "; ".join(cells)))
print()
print("Daemon counters of the auto jobs (both daemons; each job's first run is its recording run: G cold misses):")
for s in sizes:
    c = ctr.get(s)
    if not c:
        continue
    served = c.get("pf_fast_hits", 0) + c.get("pf_hits", 0) + c.get("pf_waits", 0)
    other = c.get("pf_misses", 0) - c.get("pf_miss_cold", 0)
    print("  %5d B: %d jobs, misses %d = cold %d (want %d) + new %d + full %d + invalid %d; late %d, on demand %d, "
          "skipped %d (arena room %d); served by prefetch %d of %d predicted; chunks %d" % (
              s, c["jobs"], c.get("pf_misses", 0), c.get("pf_miss_cold", 0), c["cold_want"], c.get("pf_miss_new", 0),
              c.get("pf_miss_full", 0), c.get("pf_miss_invalid", 0), c.get("pf_late", 0), c.get("pf_demand", 0),
              c.get("pf_skipped", 0), c.get("pf_skip_room", 0), served, c["predicted"], c.get("pf_chunks", 0)))
    if other or c.get("pf_miss_cold", 0) != c["cold_want"]:
        print("  FAIL: misses beyond each job's recording run (%d)" % other)
        fail = 1
if plot_dir:
    VCOLOR = {"auto": "#1f77b4", "manual": "#2ca02c", "blocking": "#d62728", "first": "#ff7f0e"}
    series = []
    for si, s in enumerate(sizes):
        for v, col, label in [("auto", 0, "auto per-get"), ("manual", 0, "manual per-get"),
                              ("blocking", 0, "blocking per-get"), ("auto", 1, "auto first get")]:
            pts = []
            for g in gs:
                xs = [x[col] for x in data.get((v, s, g), [])]
                if xs and med(xs) > 0:
                    pts.append([g, med(xs), min(xs), max(xs)])
            if pts:
                series.append({"name": "%s, %d B" % (label, s), "points": pts, "dash": 1 + si,
                               "point": (7, 5, 9)[si % 3], "color": VCOLOR["first" if col else v]})
    os.makedirs(plot_dir, exist_ok=True)
    with open(os.path.join(out, "plots.json"), "w") as f:
        json.dump({"plots": [{
            "out": os.path.join(plot_dir, "prefetch-sweep.svg"), "kind": "lines", "width": 1120,
            "title": "Prefetch sweep: per-get time and first-get wait against gets queued per phase",
            "subtitle": "rank 0 gets G x S bytes from " + src + " after hoist_barrier; medians (min-max) of %d reps\n%s"
                        % (reps, machine),
            "xlabel": "G, gets in the phase (log scale)", "ylabel": "µs (log scale)", "logx": 2, "logy": True,
            "xtics": [[str(g), g] for g in gs], "key": "outside right top", "series": series}]}, f)
sys.exit(fail)
EOF
echo
echo "reproduce: bash bench/run-prefetch.sh --reps $reps --inner-reps $inner --gets $gets --sizes $sizes$([ "$blocking" = 1 ] && echo " --blocking")$([ "$pin" = 1 ] && echo " --pin-nodes")"
if [ -n "$plot_dir" ] && [ -f "$out/plots.json" ]; then
	python3 "$repo/bench/plot.py" "$out/plots.json" || true
fi
exit $status
