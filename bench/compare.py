#!/usr/bin/env python3
"""bench/compare.py - merge the results of bench/compare.sh into one table.

    compare.py DIR

DIR holds, per round r and side (old, new), the outputs of the bench
scripts: run.<side>.<r>.json (bench/run.sh --json), nodes.<side>.<r>.json
(bench/run-nodes.sh --json) and kernels.<side>.<r>/runs.txt (bench/
run-kernels.sh --keep). A row is one measurement of one script (a JSON row
with name and median, or a kernel variant's us per iteration); its value
per round is that round's median. Printed per row: old and new as median
of the rounds with min-max, new/old, and a verdict: "same" when the new
median lies within the old rounds' min-max, else "better" or "WORSE"
(lower is better for times, higher for rates and bandwidths).
"""
import glob
import json
import os
import re
import statistics
import sys

HIGHER = re.compile(r"(/s|GB/s|Mops|ops/s|rate)", re.I)


def json_rows(doc, prefix=""):
    """(key, unit, median) for every object with a name and a median."""
    if isinstance(doc, dict):
        pre = prefix
        if "pes" in doc and "rows" in doc:
            pre = "%s%d PEs: " % (prefix, doc["pes"])
        if "name" in doc and "median" in doc and doc["median"] is not None:
            yield pre + doc["name"], doc.get("unit", ""), float(doc["median"])
        for v in doc.values():
            yield from json_rows(v, pre)
    elif isinstance(doc, list):
        for v in doc:
            yield from json_rows(v, prefix)


def kernel_rows(path):
    per = {}
    for line in open(path):
        m = re.search(r"kernel=(\S+).*variant=(\S+).*us_per_iter=(\S+)", line)
        if m and "errors=0" in line:
            per.setdefault("kernel %s %s" % (m.group(1), m.group(2)), []).append(float(m.group(3)))
    for k, xs in per.items():
        yield k, "us/iter", statistics.median(xs)


def collect(d):
    data = {}  # (script, key) -> {"unit": u, "old": [...], "new": [...]}
    order = []
    for f in sorted(glob.glob(os.path.join(d, "*.*.*.json"))) + sorted(glob.glob(os.path.join(d, "kernels.*.*/runs.txt"))):
        base = os.path.basename(f if f.endswith(".json") else os.path.dirname(f))
        script, side = base.split(".")[:2]
        if f.endswith(".json"):
            try:
                rows = list(json_rows(json.load(open(f))))
            except ValueError:
                print("compare.py: %s is not JSON, skipped" % f, file=sys.stderr)
                continue
        else:
            rows = list(kernel_rows(f))
        for key, unit, v in rows:
            k = (script, key)
            if k not in data:
                data[k] = {"unit": unit, "old": [], "new": []}
                order.append(k)
            data[k][side].append(v)
    return data, order


def fmt(x):
    return "%.4g" % x


def main():
    d = sys.argv[1]
    data, order = collect(d)
    worse = 0
    print("%-8s %-46s %-8s %-26s %-26s %7s  %s" % ("script", "row", "unit", "old median (min-max)",
                                                  "new median (min-max)", "new/old", "verdict"))
    for k in order:
        r = data[k]
        if not r["old"] or not r["new"]:
            continue
        o, n = statistics.median(r["old"]), statistics.median(r["new"])
        lo, hi = min(r["old"]), max(r["old"])
        higher = bool(HIGHER.search(r["unit"]))
        if lo <= n <= hi:
            verdict = "same"
        elif (n > hi) == higher:
            verdict = "better"
        else:
            verdict = "WORSE"
            worse += 1
        print("%-8s %-46s %-8s %-26s %-26s %7s  %s" % (
            k[0], k[1][:46], r["unit"][:8],
            "%s (%s-%s)" % (fmt(o), fmt(lo), fmt(hi)),
            "%s (%s-%s)" % (fmt(n), fmt(min(r["new"])), fmt(max(r["new"]))),
            "%.2f" % (n / o) if o else "-", verdict))
    rounds = max((len(r["old"]) for r in data.values()), default=0)
    print("%d rows, %d rounds per side, %d outside the old spread in the worse direction" % (
        sum(1 for k in order if data[k]["old"] and data[k]["new"]), rounds, worse))


if __name__ == "__main__":
    main()
