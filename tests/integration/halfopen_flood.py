#!/usr/bin/env python3
"""Hold idle (half-open) connections to a hoistd: they connect and never
send their request. Used by halfopen.sh.

  halfopen_flood.py DIR N STATEFILE STOPFILE

Phase 1: N idle attach connections; waits until the daemon dropped every
one of them (request_timeout_ms) and reopens each at once. Phase 2: N idle
stats connections too. From then on every connection the daemon drops is
reopened (at most every 20 ms), until STOPFILE exists. STATEFILE gets
"phase1", then "flooding", then a JSON line of counts at the end:
{"opened": {...}, "dropped": {...}, "phase1_done": bool}. Phase 1 gives up
(exit 1) if for 20 s no attach connection was dropped (watchdog on
progress).
"""
import json
import os
import select
import socket
import sys
import time

d, n, state, stop = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
paths = {"attach": os.path.join(d, "hoistd.sock"), "stats": os.path.join(d, "stats.sock")}
opened = {"attach": 0, "stats": 0}
dropped = {"attach": 0, "stats": 0}
socks = {}  # fileno -> (kind, socket)
poller = select.poll()


def say(s):
    with open(state + ".tmp", "w") as f:
        f.write(s + "\n")
    os.replace(state + ".tmp", state)


def open_one(kind):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    try:
        s.connect(paths[kind])
    except OSError:
        s.close()
        return False
    socks[s.fileno()] = (kind, s)
    poller.register(s.fileno(), select.POLLIN | select.POLLHUP)
    opened[kind] += 1
    return True


def reap(timeout_ms):
    """Close what the daemon dropped; reopen as many. Returns the kinds dropped."""
    gone = []
    for fd, ev in poller.poll(timeout_ms):
        kind, s = socks.pop(fd)
        poller.unregister(fd)
        s.close()
        dropped[kind] += 1
        gone.append(kind)
    for kind in gone:
        open_one(kind)
    return gone


for _ in range(n):
    open_one("attach")
say("phase1")
# diagnostics: HALFOPEN_SKIP_PHASE1=1 floods at once (to watch a daemon
# without an attach deadline fail the rest of the test)
if os.environ.get("HALFOPEN_SKIP_PHASE1") == "1":
    dropped["attach"] = n
seen = set()
last = time.monotonic()
phase1 = False
while not os.path.exists(stop):
    got = reap(100)
    if got:
        last = time.monotonic()
    if dropped["attach"] >= n:
        phase1 = True
        break
    if time.monotonic() - last > 20:
        print("halfopen_flood: no idle attach connection was dropped for 20 s (%d of %d so far)"
              % (dropped["attach"], n), file=sys.stderr)
        break
if phase1:
    for _ in range(n):
        open_one("stats")
    say("flooding")
    while not os.path.exists(stop):
        reap(100)
        time.sleep(0.02)
say(json.dumps({"opened": opened, "dropped": dropped, "phase1_done": phase1}))
sys.exit(0 if phase1 else 1)
