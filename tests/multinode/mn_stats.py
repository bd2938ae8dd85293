#!/usr/bin/env python3
"""Probes of `hoistctl stats --json` for the multinode scripts (JSON on stdin).

  mn_stats.py daemon NAME          print daemon counter NAME (-1 if absent)
  mn_stats.py peer NODE FIELD      print peers[node == NODE].FIELD: "state"
                                   and "addr" directly, anything else from its
                                   counters (-1 / "absent" if missing)
  mn_stats.py clients              print the number of clients listed
  mn_stats.py check EXPR...        evaluate each Python expression with
                                   d = daemon counters, p = {node: peer},
                                   doc = everything; exit 1 (printing the
                                   failed ones and the document) if one is false
"""
import json
import sys


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        doc = json.load(sys.stdin)
    except ValueError as e:
        print("mn_stats.py: invalid JSON: %s" % e, file=sys.stderr)
        return 3
    d = doc.get("daemon", {})
    peers = {p.get("node"): p for p in doc.get("peers", [])}
    cmd = sys.argv[1]
    if cmd == "daemon":
        print(d.get(sys.argv[2], -1))
        return 0
    if cmd == "peer":
        p = peers.get(int(sys.argv[2]))
        field = sys.argv[3]
        if p is None:
            print("absent" if field in ("state", "addr") else -1)
        elif field in ("state", "addr"):
            print(p.get(field, "absent"))
        else:
            print(p.get("counters", {}).get(field, -1))
        return 0
    if cmd == "clients":
        print(len(doc.get("clients", [])))
        return 0
    if cmd == "check":
        bad = []
        for expr in sys.argv[2:]:
            try:
                ok = eval(expr, {}, {"d": d, "p": peers, "doc": doc})
            except Exception as e:  # a missing key is a failure, not a crash
                ok = False
                expr += "  (%s: %s)" % (type(e).__name__, e)
            if not ok:
                bad.append(expr)
        for b in bad:
            print("  stats check failed: " + b, file=sys.stderr)
        if bad:
            print("  daemon: " + json.dumps(d, sort_keys=True), file=sys.stderr)
            print("  peers: " + json.dumps(doc.get("peers", []), sort_keys=True), file=sys.stderr)
        return 1 if bad else 0
    print("mn_stats.py: unknown command %s" % cmd, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
