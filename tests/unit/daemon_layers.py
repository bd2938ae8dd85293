#!/usr/bin/env python3
"""daemon_layers.py HEADER OBJECT...: hoistd's files have no import cycle
beyond the known one that HEADER's comment lists.

A file depends on another when its object uses a symbol the other defines
(nm). HEADER (daemon/daemon.h) has a line "Known import cycle" followed by
the files still in one cycle, up to an empty comment line; the list may
only shrink. Fails when a file not listed is in a cycle (printing one cycle
through it, with the symbols), and when a listed file is no longer in a
cycle (strike it off the list)."""
import collections
import os
import re
import subprocess
import sys


def known(header):
    text = open(header).read()
    i = text.index("Known import cycle")
    lines = text[i:text.index("*/", i)].splitlines()[1:]
    files = []
    for l in lines:
        l = l.strip().lstrip("*").strip()
        if not l:
            break
        files += [os.path.basename(f) for f in re.findall(r"[\w/]+\.c\b", l)]
    return set(files)


def graph(objs):
    defs, uses = {}, collections.defaultdict(set)
    for o in objs:
        f = os.path.basename(o).replace(".o", "").replace(".obj", "")
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 2 and p[0] == "U":
                uses[f].add(p[1])
            elif len(p) == 3 and p[1] in "TDBRCG":
                defs[p[2]] = f
    edges = collections.defaultdict(dict)  # f -> g -> [symbols]
    for f in uses:
        for s in sorted(uses[f]):
            g = defs.get(s)
            if g and g != f:
                edges[f].setdefault(g, []).append(s)
    return edges


def sccs(nodes, edges):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, {}))))]
        index[root] = low[root] = n[0]
        n[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]
                    n[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def cycle_through(f, edges):
    """A shortest cycle f -> ... -> f, as (file, symbol) steps."""
    prev, todo = {f: None}, collections.deque([f])
    while todo:
        v = todo.popleft()
        for w in sorted(edges.get(v, {})):
            if w == f:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                path.reverse()
                path.append(f)
                return " -> ".join("%s (%s)" % (a, edges[a][b][0])
                                   for a, b in zip(path, path[1:])) + " -> " + f
            if w not in prev:
                prev[w] = v
                todo.append(w)
    return None


def main():
    allowed = known(sys.argv[1])
    objs = [o for a in sys.argv[2:] for o in a.split(";") if o]
    edges = graph(objs)
    nodes = {os.path.basename(o).replace(".o", "").replace(".obj", "") for o in objs}
    bad, cyclic = [], set()
    for comp in sccs(nodes, edges):
        cyclic |= comp
        for f in sorted(comp - allowed):
            bad.append("%s is in an import cycle: %s" % (f, cycle_through(f, edges)))
    for f in sorted(allowed - cyclic):
        bad.append("%s is in no import cycle any more: strike it off the known cycle in %s" %
                   (f, sys.argv[1]))
    for b in bad:
        print("[daemon_layers] FAIL: " + b, file=sys.stderr)
    if not bad:
        print("[daemon_layers] PASS: %d objects, %d cross-file dependencies; in a cycle: %s" % (
            len(objs), sum(len(v) for v in edges.values()),
            " ".join(sorted(cyclic)) or "none"), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
