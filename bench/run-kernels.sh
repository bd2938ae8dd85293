#!/usr/bin/env bash
# bench/run-kernels.sh - the automatic-overlap kernels (bench/kernels.c) in
# their three variants across two daemons, plus the conflict-check cost and
# the prefetch-initiation curve (seed 000, Figures 5 and 7). Prints tables,
# the reproducing command and the SVG plots it wrote.
#
#   bash bench/run-kernels.sh [--reps N] [--kernels "gups halo bt ft cg halo2 scatter"]
#                             [--iters N] [--warm N] [--metric median|mean] [--noise] [--copy]
#                             [--no-fig5] [--fig5-reps N] [--build DIR] [--keep DIR]
#                             [--plot-dir DIR | --no-plot]
#
# Starts 2 hoistd daemons on loopback (tests/multinode/cluster.sh: TCP
# between them, settings --phase-max-gets=8192 --prefetch-arena-bytes=64m)
# and runs every kernel on 4 PEs (2 per daemon), --reps times each (the
# variants interleaved per repetition, their order rotated from one
# repetition to the next so that none always runs first):
#   blocking  HOIST_AUTO=0 hoist-kernels --kernel K
#   auto      HOIST_AUTO=1 hoist-kernels --kernel K
#   manual    HOIST_AUTO=0 hoist-kernels --kernel K --manual
#   blocking2 (--noise) blocking once more: blocking2/blocking is the noise
#             floor of a ratio between two variants of the same run
#   manual_copy (--copy; the put kernels gups and ft) manual with the put
#             source in private memory (--private-src): hoist_put_nbi
#             copies it into the staging arena as auto's blocking put
#             must; auto against it is the gap without the copy
# --iters N / --warm N: iterations per run and untimed leading ones (default:
# each kernel's own, 30-60, and 3). Runs of one variant differ far more
# from each other than iterations inside a run do, so many short runs
# (--iters 100 --reps 21) judge a few percent better than few long ones
# (bench/README.md). --metric: the
# number per run the tables use, `median` (default) = the median timed
# iteration (us_iter_median, top barrier to top barrier), `mean` = the
# timed iterations' mean (us_per_iter). Besides the medians over the
# repetitions the table prints paired ratios: per repetition, blocking over
# auto (and manual) of that repetition, median [95% bootstrap interval of
# the median] (min-max) over repetitions, and the auto share computed from
# those paired medians.
# Daemon stats (both daemons summed) are read before and after every run.
# A run whose data check fails, or variants whose checksums differ, make the
# script exit 1. For ft, rank 0's time per iteration inside its put calls,
# in the barrier after them, in the barrier starting an iteration and the
# rest (kernels.c's ft_split line) is printed after the counters. Without --build it uses build-kb/ (or build/) of the
# repository, building the bench targets when missing. --keep DIR keeps the
# raw results there.
# Plots (bench/plot.py + gnuplot, from scripts/deps.sh --bench), written to
# --plot-dir (default bench/plots/ of the repository, git-ignored) and
# listed as "plot: PATH" after the tables: kernels.svg (per kernel, bars of
# blocking/auto/manual us per iteration: median, min-max error bars) and
# prefetch-init.svg (Figure 5: per-get us against G, log-log, one line per
# size and variant, plus auto's first-get time). Without gnuplot the tables
# are printed as always, with one line saying the plots were skipped.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" run-kernels.sh
self="$repo/bench/run-kernels.sh"
build=
reps=5
kernels="gups halo bt ft cg halo2 scatter"
fig5=1
fig5_reps=5
iters=
warm=
metric=median
noise=0
copy=0
keep=
plot_dir="$repo/bench/plots"
orig_args=("$@")

usage() { sed -n '2,51p' "$self" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
	case "$1" in
	--reps) reps=$2; shift 2 ;;
	--kernels) kernels=$2; shift 2 ;;
	--no-fig5) fig5=0; shift ;;
	--fig5-reps) fig5_reps=$2; shift 2 ;;
	--iters) iters=$2; shift 2 ;;
	--warm) warm=$2; shift 2 ;;
	--metric) metric=$2; shift 2
		case $metric in median|mean) ;; *) echo "run-kernels.sh: --metric median|mean" >&2; exit 2 ;; esac ;;
	--noise) noise=1; shift ;;
	--copy) copy=1; shift ;;
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	--plot-dir) plot_dir=$2; shift 2
		case $plot_dir in /*) ;; *) plot_dir="$PWD/$plot_dir" ;; esac ;;
	--no-plot) plot_dir=; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run-kernels.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done
if [ -z "$build" ]; then
	if [ -d "$repo/build-kb" ]; then build="$repo/build-kb"; else build="$repo/build"; fi
fi

# ---- outside the cluster: build, then run myself under cluster.sh --------------
if [ -z "${RK_INNER:-}" ]; then
	bench_build_missing "$build" bench/hoist-kernels bench/hoist-prefetch-init bench/hoist-conflict-cost \
		daemon/hoistd daemon/hoistctl launcher/hoistrun
	export RK_INNER=1 RK_BUILD="$build"
	bench_exec_in_cluster "$build" 2 --daemon-arg=--phase-max-gets=8192 \
		--daemon-arg=--prefetch-arena-bytes=67108864 -- bash "$self" "${orig_args[@]}"
fi

# ---- inside: HOIST_DIRS, HOIST_DIR_0/1 set by cluster.sh ------------------------
: "${HOIST_DIRS:?}" "${HOIST_DIR_0:?}" "${HOIST_DIR_1:?}"
build=$RK_BUILD
kern="$build/bench/hoist-kernels"
out=$(mktemp -d "${TMPDIR:-/tmp}/hoist-kernels.XXXXXX")
trap 'rm -rf "$out"' EXIT
stat_keys="gets pf_fast_hits pf_hits pf_waits pf_late pf_misses pf_skipped pf_issued pf_wasted pf_invalidated pf_chunks pf_periodic pf_backoffs pf_dry deferred_puts conflicts conflict_box conflict_precise phases"

# one line "k=v ..." of daemon counters summed over both daemons
snap() { bench_daemon_sums "$stat_keys" "$HOIST_DIR_0" "$HOIST_DIR_1"; }

load_before=$(bench_load)
machine_before=$(bench_machine "$build")
if ! snap >/dev/null 2>"$out/snap.err"; then
	echo "run-kernels.sh: cannot read daemon stats: $(cat "$out/snap.err")" >&2
	exit 1
fi

run_one() { # kernel variant rep
	local k=$1 v=$2 r=$3 auto=0 flags=() line before after
	case $v in auto) auto=1 ;; manual) flags=(--manual) ;; manual_copy) flags=(--manual --private-src) ;; esac
	[ -n "$iters" ] && flags+=(--iters "$iters")
	[ -n "$warm" ] && flags+=(--warm "$warm")
	before=$(snap)
	if ! HOIST_AUTO=$auto "$HOIST_HOISTRUN" -n 4 --runtime-dirs "$HOIST_DIRS" --timeout 600 \
		"$kern" --kernel "$k" "${flags[@]}" >"$out/out.$k.$v.$r" 2>"$out/err.$k.$v.$r" ||
		! line=$(grep '^kernel=' "$out/out.$k.$v.$r"); then
		echo "run-kernels.sh: $k $v rep $r failed: $(tail -n 5 "$out/err.$k.$v.$r")" >&2
		line="kernel=$k variant=$v us_per_iter=nan us_iter_median=nan checksum=none errors=failed"
	fi
	# blocking2 runs as blocking; the table keeps it apart
	line=${line/variant=blocking /variant=$v }
	after=$(snap)
	echo "rep=$r $line BEFORE $before AFTER $after" >>"$out/runs.txt"
	if [ "$v" != blocking2 ]; then
		grep '^ft_split ' "$out/out.$k.$v.$r" >>"$out/ft_split.txt" || true
	fi
	echo "  $k $v rep $r: $(echo "$line" | grep -o 'us_per_iter=[^ ]* us_iter_median=[^ ]*')" >&2
}

variants=(blocking auto manual)
[ "$noise" = 1 ] && variants+=(blocking2)
for ((r = 1; r <= reps; r++)); do
	for k in $kernels; do
		vs=("${variants[@]}")
		case "$copy $k" in "1 ft" | "1 gups") vs+=(manual_copy) ;; esac
		n=${#vs[@]}
		for ((j = 0; j < n; j++)); do # rotated: rep r starts with variant r-1
			run_one "$k" "${vs[(j + r - 1) % n]}" "$r"
		done
	done
done

"$build/bench/hoist-conflict-cost" >"$out/conflict.txt"

if [ "$fig5" = 1 ]; then
	pf="$build/bench/hoist-prefetch-init"
	for v in auto blocking manual; do
		auto=0
		flags=()
		case $v in auto) auto=1 ;; manual) flags=(--manual) ;; esac
		gl="1,4,16,64,256,1024,4096"
		# blocking: every get is a round trip; 4096 of them x 3 sizes is long
		[ "$v" = blocking ] && gl="1,4,16,64,256,1024"
		before=$(snap)
		HOIST_AUTO=$auto "$HOIST_HOISTRUN" -n 4 --runtime-dirs "$HOIST_DIRS" --timeout 900 \
			"$pf" --sizes 8,256,4096 --gets "$gl" --reps "$fig5_reps" "${flags[@]}" \
			>"$out/fig5.$v.txt" 2>"$out/fig5.$v.err" || echo "run-kernels.sh: prefetch-init $v failed" >&2
		after=$(snap)
		echo "$v BEFORE $before AFTER $after" >>"$out/fig5.stats"
	done
fi

load_after=$(bench_load)
machine_after=$(bench_machine "$build")
cpu=$(bench_cpu_model)
machine="$(nproc) CPUs (${cpu:-unknown CPU}), load average before: $load_before, after: $load_after"

[ -n "$keep" ] && mkdir -p "$keep" && cp "$out"/* "$keep"/

echo "# before the run: $machine_before"
echo "# after the run: $machine_after"
status=0
python3 - "$out" "$reps" "$fig5" "$plot_dir" "$machine" "$fig5_reps" "$metric" <<'EOF' || status=$?
import json, os, random, re, statistics, sys
out, reps, fig5 = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
plot_dir, machine, fig5_reps = sys.argv[4], sys.argv[5], int(sys.argv[6])
metric = {"median": "us_iter_median", "mean": "us_per_iter"}[sys.argv[7]]
plots = []

def kv(s):
    return dict(m.groups() for m in re.finditer(r"(\w+)=(\S+)", s))

runs = {}
for line in open(os.path.join(out, "runs.txt")):
    head, rest = line.split(" BEFORE ")
    b, a = rest.split(" AFTER ")
    h, b, a = kv(head), kv(b), kv(a)
    d = {k: int(a[k]) - int(b[k]) for k in a}
    runs.setdefault((h["kernel"], h["variant"]), []).append((h, d))

# conflict cost (ns): box path, and the precise path at each kernel's shape
cost = {}
for line in open(os.path.join(out, "conflict.txt")):
    c = kv(line)
    cost[(c["pattern"], int(c["K"]))] = (float(c["box_ns"]), float(c["precise_ns"]), float(c["addret_ns"]))
shape = {"gups": ("random", 16), "ft": ("mono", 4)}  # puts outstanding per target

fail = 0
rows = []
per_rep_all = {}

def boot_ci(xs, n=2000):
    """95% bootstrap interval of the median of xs (seeded: the same data
    give the same interval)"""
    rnd = random.Random(1)
    m = sorted(statistics.median(rnd.choices(xs, k=len(xs))) for _ in range(n))
    return m[int(0.025 * n)], m[int(0.975 * n) - 1]
SEED = ["gups", "halo", "bt", "ft", "cg"]  # seed 000's kernels: the auto-share goal
for k in [k for k in SEED + ["halo2", "scatter"] if (k, "blocking") in runs]:
    t, spread, sums, per_rep = {}, {}, set(), {}
    for v in ("blocking", "auto", "manual", "blocking2", "manual_copy"):
        if (k, v) not in runs:
            continue
        xs = []
        for h, _ in runs.get((k, v), []):
            if h.get("errors") != "0":
                fail = 1
                print("FAIL: %s %s: errors=%s" % (k, v, h.get("errors")))
            else:
                xs.append(float(h[metric]))
                per_rep.setdefault(h["rep"], {})[v] = float(h[metric])
            sums.add(h.get("checksum"))
        t[v] = statistics.median(xs) if xs else float("nan")
        spread[v] = (min(xs), max(xs)) if xs else (float("nan"),) * 2
    # paired: the variants of one repetition ran back to back
    paired = {}
    for num, den in (("blocking", "auto"), ("blocking", "manual"), ("blocking2", "blocking"),
                     ("manual_copy", "manual"), ("auto", "manual_copy")):
        rs = [x[num] / x[den] for x in per_rep.values() if num in x and den in x and x[den] > 0]
        if rs:
            paired[(num, den)] = (statistics.median(rs),) + boot_ci(rs) + (min(rs), max(rs))
    shares_r = [(x["blocking"] - x["auto"]) / (x["blocking"] - x["manual"]) for x in per_rep.values()
                if all(v in x for v in ("blocking", "auto", "manual")) and x["blocking"] > x["manual"]]
    if shares_r:
        paired["share"] = (statistics.median(shares_r), min(shares_r), max(shares_r))
    if len(sums) != 1:
        fail = 1
        print("FAIL: %s: checksums differ between variants: %s" % (k, sorted(sums)))
    st = [d for _, d in runs[(k, "auto")]]
    tot = {key: sum(d[key] for d in st) for key in st[0]}
    # served by prefetch: by the client itself (no round trip) or the daemon
    served = tot["pf_fast_hits"] + tot["pf_hits"] + tot["pf_waits"]
    # all gets: the daemon's count plus those the client served itself
    gets_all = tot["gets"] + tot["pf_fast_hits"]
    # put-only kernels: the only gets are rank 0's final checksum reduction
    hit = served / gets_all if gets_all > 4 * len(st) else float("nan")
    # gets the prefetcher saw (same-node gets never reach it: served by a local copy)
    pref = served + tot["pf_late"] + tot["pf_misses"]
    hit_r = served / pref if pref > 0 and hit == hit else float("nan")
    pat = shape.get(k, ("mono", 0))
    box_ns, prec_ns, ar_ns = cost[pat]
    iters = int(runs[(k, "auto")][0][0]["iters"])
    n = len(st)
    checks_ns = (tot["conflict_box"] * cost[("mono", 0)][0] + tot["conflict_precise"] * prec_ns) / n
    ar_tot = tot["deferred_puts"] * ar_ns / n
    saved_ns = (t["blocking"] - t["auto"]) * 1e3 * iters
    # two daemons check in parallel: per-daemon check time against the wall time saved
    frac = checks_ns / 2 / saved_ns if saved_ns > 0 else float("nan")
    frac_ar = (checks_ns + ar_tot) / 2 / saved_ns if saved_ns > 0 else float("nan")
    gain_m = t["blocking"] - t["manual"]
    share = (t["blocking"] - t["auto"]) / gain_m if gain_m > 0 else float("nan")
    rows.append((k, t, spread, share, hit, hit_r, frac, frac_ar, len(sums) == 1, tot, n, paired))
    per_rep_all[k] = per_rep

def pc(x):
    return "%.1f%%" % (100 * x) if x == x else "n/a"

def sp(v, t, s):
    return "%.0f (%.0f-%.0f)" % (t[v], s[v][0], s[v][1])

print()
print("# %s" % machine)
print("Kernels: 4 PEs on 2 hoistd (2 per daemon, TCP over loopback), %d reps each, %s per run; us per iteration: median (min-max) over the reps"
      % (reps, "the median timed iteration" if metric == "us_iter_median" else "the mean of the timed iterations"))
hdr = ("kernel", "blocking", "auto", "manual", "auto/blk", "man/blk", "auto share", "pf hit", "pf hit seen", "conflict/saved", "checksum")
fmt = "%-7s %-20s %-20s %-20s %8s %8s %10s %7s %13s %15s %8s"
print(fmt % hdr)
for k, t, s, share, hit, hit_r, frac, frac_ar, same, tot, n, paired in rows:
    print(fmt % (k, sp("blocking", t, s), sp("auto", t, s), sp("manual", t, s),
                 "%.2fx" % (t["blocking"] / t["auto"]), "%.2fx" % (t["blocking"] / t["manual"]),
                 pc(share), pc(hit), pc(hit_r), "%.4f%% (%.3f%%)" % (100 * frac, 100 * frac_ar) if frac == frac else "n/a",
                 "same" if same else "DIFFER"))
print()
print("Paired, per repetition (the variants of one repetition ran back to back), over the reps: median [95% bootstrap")
print("interval of the median] (min-max); auto share: median (min-max) of the repetitions' shares")
print("%-7s %-32s %-32s %-20s %-32s" % ("kernel", "blocking/auto", "blocking/manual", "auto share", "noise blocking2/blocking"))
def pr(x, f="%.3f"):
    return ("%.3f [%.2f-%.2f] (%.2f-%.2f)" % x) if x else "-"
for r in rows:
    p = r[11]
    sh = p.get("share")
    print("%-7s %-32s %-32s %-20s %-32s" % (r[0], pr(p.get(("blocking", "auto"))), pr(p.get(("blocking", "manual"))),
          "%.1f%% (%.0f-%.0f%%)" % tuple(100 * x for x in sh) if sh else "n/a",
          pr(p.get(("blocking2", "blocking")))))
    if ("manual_copy", "manual") in p:
        shc = [(x["blocking"] - x["manual_copy"]) / (x["blocking"] - x["manual"]) for x in per_rep_all[r[0]].values()
               if all(v in x for v in ("blocking", "manual", "manual_copy")) and x["blocking"] > x["manual"]]
        print("%-7s manual_copy/manual %s, auto/manual_copy %s: manual with the copy keeps %s of manual's gain" % (
              r[0], pr(p[("manual_copy", "manual")]), pr(p.get(("auto", "manual_copy"))),
              "%.1f%% (%.0f-%.0f%%)" % (100 * statistics.median(shc), 100 * min(shc), 100 * max(shc)) if shc else "n/a"))
shares = [r[3] for r in rows if r[3] == r[3] and r[0] in SEED]
if shares:
    print("mean auto share of manual's gain (%s): %s (goal >= 95%%); auto slower than blocking in: %s" % (
        " ".join(r[0] for r in rows if r[0] in SEED), pc(sum(shares) / len(shares)),
        ", ".join(r[0] for r in rows if r[1]["auto"] > r[1]["blocking"]) or "none"))
# the same from the paired medians: share = (1 - 1/(blk/auto)) / (1 - 1/(blk/man)),
# steadier than the medians of separate runs (a kernel whose manual is not
# faster than blocking has no share)
ps = {}
for r in rows:
    a, m = r[11].get(("blocking", "auto")), r[11].get(("blocking", "manual"))
    if a and m and m[0] > 1:
        ps[r[0]] = (1 - 1 / a[0]) / (1 - 1 / m[0])
if ps:
    seed = [k for k in SEED if k in ps]
    print("auto share from the paired medians: %s; mean (%s): %s; auto slower than blocking (paired median < 1) in: %s" % (
        ", ".join("%s %s" % (k, pc(v)) for k, v in ps.items()), " ".join(seed),
        pc(sum(ps[k] for k in seed) / len(seed)) if seed else "n/a",
        ", ".join(r[0] for r in rows if r[11].get(("blocking", "auto"), (2,))[0] < 1) or "none"))
# halo2 (period-2 phase) and scatter (gets that never repeat): auto against blocking
for r in rows:
    if r[0] not in SEED:
        t = r[1]
        print("%s: auto/blocking %.3f (median), auto min/max %.0f-%.0f, blocking min/max %.0f-%.0f us; "
              "runs predicted with a period >= 2: %d, back-offs: %d, dry runs: %d (per run)" % (
              r[0], t["auto"] / t["blocking"], r[2]["auto"][0], r[2]["auto"][1], r[2]["blocking"][0],
              r[2]["blocking"][1], r[9]["pf_periodic"] // r[10], r[9]["pf_backoffs"] // r[10], r[9]["pf_dry"] // r[10]))
print()
print("auto-run daemon counters per run (both daemons, whole run incl. warm-up):")
keys = ["gets", "pf_fast_hits", "pf_hits", "pf_waits", "pf_late", "pf_misses", "pf_skipped", "pf_issued", "pf_wasted",
        "pf_invalidated", "pf_chunks", "pf_periodic", "pf_backoffs", "pf_dry", "deferred_puts", "conflicts", "conflict_box",
        "conflict_precise", "phases"]
print("%-7s " % "kernel" + " ".join("%9s" % x[:9] for x in keys))
for k, t, s, share, hit, hit_r, frac, frac_ar, same, tot, n, paired in rows:
    print("%-7s " % k + " ".join("%9d" % (tot[x] // n) for x in keys))
print("pf hit = (pf_fast_hits+pf_hits+pf_waits)/(gets+pf_fast_hits) (all gets, incl. same-node ones, which are never prefetched); pf hit seen =")
print("(prefetch-served)/(prefetch-served+pf_late+pf_misses), the gets to other nodes; conflict/saved = per-daemon conflict_check time (box/precise counts x ns per check from")
print("hoist-conflict-cost) / ((blocking-auto) x iterations); in parentheses including conflict_add+retire per deferred put.")
# ft: where rank 0's time goes (kernels.c prints ft_split): inside its put
# calls and in the barrier after them, per timed iteration
fsp = os.path.join(out, "ft_split.txt")
if os.path.exists(fsp) and os.path.getsize(fsp) > 0:
    split = {}
    for line in open(fsp):
        c = kv(line)
        it, p, b, bt = (float(c[x]) for x in ("us_per_iter", "put_us", "barrier_us", "barrier_top_us"))
        split.setdefault(c["variant"], []).append((it, p, b, bt, it - p - b - bt))
    print()
    print("ft, rank 0 per iteration, us, median (min-max): whole iteration; inside its 12 put calls to the 3 other PEs;")
    print("in the barrier after them; in the barrier starting the next iteration; the rest (compute)")
    for v in ("blocking", "auto", "manual", "manual_copy"):
        if v in split:
            cols = []
            for i in range(5):
                xs = [x[i] for x in split[v]]
                cols.append("%.1f (%.1f-%.1f)" % (statistics.median(xs), min(xs), max(xs)))
            print("  %-11s iter %s  put %s  barrier %s  top barrier %s  rest %s" % tuple([v] + cols))
VCOLOR = {"blocking": "#d62728", "auto": "#1f77b4", "manual": "#2ca02c", "first": "#9467bd"}
if rows:
    plots.append({
        "out": os.path.join(plot_dir, "kernels.svg"), "kind": "bars",
        "title": "Automatic overlap kernels: blocking / auto / manual",
        "subtitle": "4 PEs on 2 hoistd (2 per daemon, TCP over loopback), %d reps per variant; bar = median, "
                    "error bar = min-max\n%s" % (reps, machine),
        "xlabel": "kernel", "ylabel": "µs per iteration",
        "categories": [r[0] for r in rows],
        "series": [{"name": v, "color": VCOLOR[v],
                    "values": [[r[1][v], r[2][v][0], r[2][v][1]] for r in rows]}
                   for v in ("blocking", "auto", "manual")],
        "note": "auto share (blocking-auto)/(blocking-manual): " + ", ".join(
            "%s %s" % (r[0], pc(r[3])) for r in rows)})

if fig5:
    print()
    print("Prefetch initiation (Figure 5): rank 0's phase has G gets of S bytes from PE 2 (other daemon); us, medians")
    data = {}
    for v in ("auto", "blocking", "manual"):
        p = os.path.join(out, "fig5.%s.txt" % v)
        if not os.path.exists(p):
            continue
        for line in open(p):
            if line.startswith("size="):
                c = kv(line)
                if c["errors"] != "0":
                    fail = 1
                    print("FAIL: prefetch-init %s: %s" % (v, line.strip()))
                data[(v, int(c["size"]), int(c["gets"]))] = c
    sizes = sorted({s for (_, s, _) in data})
    gs = sorted({g for (_, _, g) in data})
    print("%6s %6s %14s %14s %16s %16s %16s" % ("S", "G", "auto first", "auto per-get", "auto per-get rng",
                                                "blocking per-get", "manual per-get"))
    for s in sizes:
        for g in gs:
            a = data.get(("auto", s, g))
            b = data.get(("blocking", s, g))
            m = data.get(("manual", s, g))
            print("%6d %6d %14s %14s %16s %16s %16s" % (
                s, g, a["first_us"] if a else "-", a["per_get_us"] if a else "-",
                "%s-%s" % (a["per_get_min"], a["per_get_max"]) if a else "-",
                b["per_get_us"] if b else "-", m["per_get_us"] if m else "-"))
    for line in open(os.path.join(out, "fig5.stats")):
        v, rest = line.split(" BEFORE ")
        bb, aa = rest.split(" AFTER ")
        bb, aa = kv(bb), kv(aa)
        d = {x: int(aa[x]) - int(bb[x]) for x in aa}
        print("  %s: gets=%d pf_issued=%d pf_hits=%d pf_waits=%d pf_late=%d pf_misses=%d pf_skipped=%d pf_chunks=%d" % (
            v, d["gets"], d["pf_issued"], d["pf_hits"], d["pf_waits"], d["pf_late"], d["pf_misses"], d["pf_skipped"], d["pf_chunks"]))
    # Figure 5: colour = variant, dash and point = size
    series = []
    for si, s in enumerate(sizes):
        for v, col, label in (("auto", "per_get_us", "auto per-get"), ("blocking", "per_get_us", "blocking per-get"),
                              ("manual", "per_get_us", "manual per-get"), ("auto", "first_us", "auto first")):
            pts = [[g, float(data[(v, s, g)][col])] for g in gs if (v, s, g) in data]
            pts = [p for p in pts if p[1] > 0]  # log y
            if pts:
                series.append({"name": "%s, %d B" % (label, s), "points": pts, "dash": 1 + si, "point": (7, 5, 9)[si % 3],
                               "color": VCOLOR["first" if col == "first_us" else v]})
    plots.append({
        "out": os.path.join(plot_dir, "prefetch-init.svg"), "kind": "lines", "width": 1120,
        "title": "Prefetch initiation (Figure 5): per-get time against gets per phase",
        "subtitle": "rank 0 gets G x S bytes from PE 2 on the other hoistd after hoist_barrier; per-get = (last get done) / G, "
                    "first = first get served; medians of %d reps\n%s" % (fig5_reps, machine),
        "xlabel": "G, gets in the phase (log scale)", "ylabel": "µs (log scale)", "logx": 2, "logy": True,
        "xtics": [[str(g), g] for g in gs], "key": "outside right top", "series": series})
if plot_dir and plots:
    with open(os.path.join(out, "plots.json"), "w") as f:
        json.dump({"plots": plots}, f)
sys.exit(fail)
EOF
echo
echo "reproduce: bash bench/run-kernels.sh --reps $reps --kernels \"$kernels\"$([ -n "$iters" ] && echo " --iters $iters")$([ -n "$warm" ] && echo " --warm $warm") --metric $metric$([ "$noise" = 1 ] && echo " --noise")$([ "$copy" = 1 ] && echo " --copy")$([ "$fig5" = 1 ] || echo " --no-fig5")"
if [ -n "$plot_dir" ] && [ -f "$out/plots.json" ]; then
	python3 "$repo/bench/plot.py" "$out/plots.json" || true
fi
exit "$status"
