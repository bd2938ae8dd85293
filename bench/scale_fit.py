#!/usr/bin/env python3
"""Fit of bench/run-scale.sh's counts (raw rows on a file or stdin).

  scale_fit.py [--json] RAW

RAW rows (tab-separated): N, label (idle before the job, then the step
0..5 the counters were read after), daemon, tcp_msgs_out, tcp_bytes_out,
tcp_msgs_in, tcp_bytes_in, tcp_conns, addr_cache_inserts, _evictions,
_invalidations, VmRSS (KiB).

A step's count per daemon is the difference of its counters after the step
and after the one before (the job start: after step 0 minus idle). For each
quantity the mean over the N daemons (and the max) at every N, then a
least-squares fit of the mean to b + a*log2 N, b + a*N and b + a*N^2 (the
constant b takes what does not depend on N, e.g. the job's own memory, or
the -1 of N - 1 peers); the smallest residual sum of squares wins (ties to
the slower growth), its residuals (mean - fit) are printed per N, and the
fit is projected to 1,000 and 10,000 nodes.
"""
import json
import math
import sys

STEPS = [("0", "job start (membership)"), ("1", "2 x hoist_malloc"), ("2", "barrier"),
         ("3", "allreduce 8 B"), ("4", "alltoall 8 B/PE"), ("5", "finalize")]
COLS = {"msgs_out": 3, "bytes_out": 4, "msgs_in": 5, "bytes_in": 6}
MODELS = [("log2 N", lambda n: math.log2(n)), ("N", lambda n: float(n)),
          ("N^2", lambda n: float(n) * n)]
PROJECT = (1000, 10000)


def load(f):
    rows = {}
    for line in f:
        p = line.rstrip("\n").split("\t")
        if len(p) < 12:
            continue
        n, label, dmn = int(p[0]), p[1], int(p[2])
        rows[(n, label, dmn)] = [int(x) for x in p[3:12]]
    return rows


def fit(ns, ys):
    """least squares y = b + a*f(N) for every model; the smallest residual
    sum of squares wins (ties, within rounding, to the slower growth)"""
    best = None
    m = len(ns)
    for name, f in MODELS:
        xs = [f(n) for n in ns]
        mx, my = sum(xs) / m, sum(ys) / m
        sxx = sum((x - mx) ** 2 for x in xs)
        a = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
        b = my - a * mx
        res = [y - (b + a * x) for x, y in zip(xs, ys)]
        rss = sum(r * r for r in res)
        scale = max(1.0, max(abs(y) for y in ys))
        if best is None or rss < best["rss"] - 1e-9 * scale * scale * m:
            best = {"model": name, "a": a, "b": b, "rss": rss, "residuals": res,
                    "projection": {str(p): b + a * f(p) for p in PROJECT}}
    return best


def series(rows, ns, get):
    """mean and max over the daemons of get(n, daemon) for every N"""
    means, maxes = [], []
    for n in ns:
        v = [get(n, i) for i in range(n)]
        means.append(sum(v) / n)
        maxes.append(max(v))
    return means, maxes


def main():
    args = sys.argv[1:]
    as_json = "--json" in args
    args = [a for a in args if a != "--json"]
    rows = load(open(args[0]) if args else sys.stdin)
    ns = sorted({k[0] for k in rows})
    if len(ns) < 2:
        print("scale_fit.py: need at least two N", file=sys.stderr)
        return 1
    out = []
    labels = ["idle"] + [s for s, _ in STEPS]
    for k, (step, title) in enumerate(STEPS):
        prev = labels[k]
        for col, ci in COLS.items():
            def get(n, i, ci=ci, step=step, prev=prev):
                return rows[(n, step, i)][ci - 3] - rows[(n, prev, i)][ci - 3]
            means, maxes = series(rows, ns, get)
            out.append({"what": "%s: %s" % (title, col), "mean": means, "max": maxes,
                        "fit": fit(ns, means)})
    # held after the alltoall (step 4): connections, cache entries, memory
    held = [
        ("VmRSS idle, before any job, KiB", lambda n, i: rows[(n, "idle", i)][8]),
        ("tcp connections held (after the alltoall)", lambda n, i: rows[(n, "4", i)][4]),
        ("address-cache entries (after the alltoall)",
         lambda n, i: rows[(n, "4", i)][5] - rows[(n, "4", i)][6] - rows[(n, "4", i)][7]),
        ("VmRSS grown since before the job, KiB (after the alltoall)",
         lambda n, i: rows[(n, "4", i)][8] - rows[(n, "idle", i)][8]),
        ("tcp connections held (after finalize)", lambda n, i: rows[(n, "5", i)][4]),
    ]
    for title, get in held:
        means, maxes = series(rows, ns, get)
        out.append({"what": title, "mean": means, "max": maxes, "fit": fit(ns, means)})
    if as_json:
        json.dump({"N": ns, "rows": out}, sys.stdout, indent=1)
        print()
        return 0
    head = "| per daemon (mean; max) | " + " | ".join("N=%d" % n for n in ns) + \
        " | best fit | residuals (mean - fit) | 1,000 nodes | 10,000 nodes |"
    print(head)
    print("|" + " --- |" * (head.count("|") - 1))
    for r in out:
        f = r["fit"]
        cells = []
        for m, x in zip(r["mean"], r["max"]):
            cells.append(("%.4g" % m) + ("" if abs(x - m) < 1e-9 else "; %d" % x))
        if abs(f["a"]) < 1e-9:
            model = "%.4g (constant)" % f["b"]
        elif abs(f["b"]) < 1e-6 * max(1.0, abs(f["a"])):
            model = "%.4g * %s" % (f["a"], f["model"])
        else:
            model = "%.4g * %s %s %.4g" % (f["a"], f["model"], "-" if f["b"] < 0 else "+",
                                          abs(f["b"]))
        print("| %s | %s | %s | %s | %.4g | %.4g |" % (
            r["what"], " | ".join(cells), model,
            " ".join("%+.3g" % e for e in f["residuals"]),
            f["projection"]["1000"], f["projection"]["10000"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
