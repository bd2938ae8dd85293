#!/usr/bin/env python3
"""transport_boundary.py DAEMON_DIR: no hoistd file outside DAEMON_DIR/transport/
includes a header of one transport's folder (transport/<name>/*.h) or names a
transport's ops table (<name>_transport) or private state (struct <name>, as
the folder names it). The engine, attach, stats and the stages reach a
transport only through transport.h (the table is transport/table.c), so a
third transport is one folder plus one table entry. Exit 1 with the offending
lines."""
import os
import re
import sys

root = sys.argv[1]
tdir = os.path.join(root, "transport")
kinds = sorted(d for d in os.listdir(tdir) if os.path.isdir(os.path.join(tdir, d)))
headers = set()
for k in kinds:
    for f in os.listdir(os.path.join(tdir, k)):
        if f.endswith(".h"):
            headers.add(f)
inc = re.compile(r'#\s*include\s+"([^"]+)"')
name = re.compile(r"\b(%s)_transport\b|\bstruct\s+(%s)\b" % ("|".join(kinds), "|".join(kinds)))
bad = []
nfiles = 0
for dirpath, _, files in os.walk(root):
    if os.path.commonpath([dirpath, tdir]) == tdir:
        continue
    for f in sorted(files):
        if not f.endswith((".c", ".h")):
            continue
        nfiles += 1
        path = os.path.join(dirpath, f)
        for no, line in enumerate(open(path, encoding="utf-8"), 1):
            code = line.split("//")[0]
            m = inc.search(code)
            if m and os.path.basename(m.group(1)) in headers:
                bad.append("%s:%d includes %s, a transport's own header" % (path, no, m.group(1)))
            if not code.lstrip().startswith(("*", "/*")) and name.search(code):
                bad.append("%s:%d names a transport: %s" % (path, no, line.strip()))
if not kinds or not headers:
    print("[transport_boundary] FAIL: no transport folders or headers under %s" % tdir)
    sys.exit(1)
for b in bad:
    print("[transport_boundary] FAIL: " + b)
if bad:
    sys.exit(1)
print("[transport_boundary] PASS: %d files outside transport/ name none of %s (headers %s)" %
      (nfiles, ", ".join(kinds), ", ".join(sorted(headers))))
