#!/usr/bin/env python3
"""layers.py HEADER OBJECT...: the layering that HEADER's comment draws holds
in the objects (nm: which file's undefined symbols another file defines).

HEADER (client/internal.h) has a line "Layering, bottom first" and below it
a chain "a <- b c <- d ...": groups of files, each allowed to call only
files of earlier groups (or of its own). Fails on a call up the chain, on a
cycle between files, and on an object the chain does not name (a new file
must be placed in the drawing)."""
import collections
import os
import re
import subprocess
import sys


def chain(header):
    text = open(header).read()
    i = text.index("Layering, bottom first")
    lines = text[i:text.index("*/", i)].splitlines()
    first = next(k for k, l in enumerate(lines) if "<-" in l)
    block = []  # the chain: from its first line to the next empty one
    for l in lines[first:]:
        l = l.strip().lstrip("*").strip()
        if not l:
            break
        block.append(l)
    groups = []
    for g in " ".join(block).split("<-"):
        files = [f for f in re.findall(r"[\w/]+\.c\b|[\w/]+\.h\b", g)]
        if files:
            groups.append([os.path.basename(f) for f in files])
    return {f: r for r, g in enumerate(groups) for f in g}


def main():
    rank = chain(sys.argv[1])
    defs, uses = {}, collections.defaultdict(set)
    # CMake may hand the objects over as one ;-separated list
    objs = [o for a in sys.argv[2:] for o in a.split(";") if o]
    for o in objs:
        f = os.path.basename(o).replace(".o", "").replace(".obj", "")
        if "/__/" in o and f not in rank:
            rank[f] = -1  # from another folder (shm/): below every layer
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 2 and p[0] == "U":
                uses[f].add(p[1])
            elif len(p) == 3 and p[1] in "TDBRCG":
                defs[p[2]] = f
    bad = []
    edges = collections.defaultdict(set)
    for f in sorted(uses):
        if f not in rank:
            bad.append("%s is not in the layering of %s: place it there" % (f, sys.argv[1]))
            continue
        for s in sorted(uses[f]):
            g = defs.get(s)
            if not g or g == f:
                continue
            edges[f].add(g)
            if rank.get(g, -1) > rank[f]:
                bad.append("%s calls %s of %s, a layer above it" % (f, s, g))
    # cycles: a file that reaches itself
    for f in sorted(edges):
        seen, todo = set(), list(edges[f])
        while todo:
            g = todo.pop()
            if g == f:
                bad.append("%s is in a cycle" % f)
                break
            if g not in seen:
                seen.add(g)
                todo.extend(edges.get(g, ()))
    for b in bad:
        print("[layers] FAIL: " + b, file=sys.stderr)
    if not bad:
        print("[layers] PASS: %d objects, %d cross-file dependencies, all downwards" % (
            len(objs), sum(len(v) for v in edges.values())), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
