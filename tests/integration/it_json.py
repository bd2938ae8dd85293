#!/usr/bin/env python3
"""Small JSON probes for the integration scripts (reads JSON on stdin).

  it_json.py max SUBSTR        print the largest number stored under a key
                               containing SUBSTR (case-insensitive), also in
                               {"name": "...SUBSTR...", "value": N} pairs;
                               prints -1 if there is none
  it_json.py has-string S      exit 0 if some string value equals S, else 1
  it_json.py count-string S    print how many string values equal S
  it_json.py keys              print every key path, one per line
"""
import json
import sys


def walk(node, path, out):
    if isinstance(node, dict):
        name = node.get("name")
        if isinstance(name, str) and "value" in node and not isinstance(node["value"], (dict, list)):
            out.append((path + [name], node["value"]))
        for k, v in node.items():
            walk(v, path + [str(k)], out)
            if not isinstance(v, (dict, list)):
                out.append((path + [str(k)], v))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            walk(v, path + [str(i)], out)
            if not isinstance(v, (dict, list)):
                out.append((path + [str(i)], v))


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        doc = json.load(sys.stdin)
    except ValueError as e:
        print("it_json.py: invalid JSON: %s" % e, file=sys.stderr)
        return 3
    leaves = []
    walk(doc, [], leaves)
    cmd = sys.argv[1]
    if cmd == "max":
        sub = sys.argv[2].lower()
        best = -1
        for path, v in leaves:
            if sub in path[-1].lower() and isinstance(v, (int, float)) and not isinstance(v, bool):
                best = max(best, v)
        print(int(best))
        return 0
    if cmd in ("has-string", "count-string"):
        s = sys.argv[2]
        c = sum(1 for _, v in leaves if isinstance(v, str) and v == s)
        if cmd == "count-string":
            print(c)
            return 0
        return 0 if c else 1
    if cmd == "keys":
        for path, v in leaves:
            print("/".join(path), "=", v)
        return 0
    print("it_json.py: unknown command %s" % cmd, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
