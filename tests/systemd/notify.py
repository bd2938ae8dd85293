#!/usr/bin/env python3
"""hoistd under a fake systemd (issue 13).

    notify.py <hoistd> <hoistctl> <sd_client>

A datagram socket stands in for $NOTIFY_SOCKET. Scenarios:
  own      WATCHDOG_USEC=2000000, WATCHDOG_PID unset: READY=1, STATUS=
           lines (one with 1 client while sd_client is attached), and
           WATCHDOG=1 pings no further apart than WATCHDOG_USEC/2 + slack;
  pid      the same with WATCHDOG_PID = hoistd's own pid (set by an exec
           wrapper): pings;
  other    WATCHDOG_PID = another pid: READY=1 but no WATCHDOG=1 at all
           while we listen for 2.5 s (more than one whole interval);
every daemon sends STOPPING=1 and exits 0 on SIGTERM. Also the pinned-memory
budget: hoistctl stats shows pinned_limit for this (non-verbs) transport,
never 0, and exactly memlock_bytes when that is set.
Only the intervals between pings are timed, never the test; a missing
message fails after a generous wait (lack of progress)."""
import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HOISTD, HOISTCTL, CLIENT = sys.argv[1:4]
WD_USEC = 2_000_000
SLACK = 0.5  # s, for a loaded 2-core machine; the old fixed 5 s fails it
STALL = 15.0  # s without the awaited message: the test is stuck

failures = []
daemons = []


@atexit.register
def _cleanup():  # whatever happened, no daemon and no directory is left
    for d in daemons:
        if d.proc.poll() is None:
            d.proc.kill()
            d.proc.wait()
        shutil.rmtree(d.tmp, ignore_errors=True)


def fail(msg):
    print("FAIL:", msg)
    failures.append(msg)


class Daemon:
    def __init__(self, name, env_extra, args=(), wrap_pid=False):
        self.name = name
        self.tmp = tempfile.mkdtemp(prefix="hoist-sd.")
        self.rd = os.path.join(self.tmp, "rd")
        os.mkdir(self.rd, 0o700)
        self.sock_path = os.path.join(self.tmp, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.sock_path)
        self.msgs = []  # (time, line)
        env = dict(os.environ)
        for k in ("WATCHDOG_USEC", "WATCHDOG_PID", "HOISTD_MEMLOCK_BYTES", "HOIST_MEMLOCK_BYTES"):
            env.pop(k, None)
        env["NOTIFY_SOCKET"] = self.sock_path
        env.update(env_extra)
        cmd = [HOISTD, "--runtime-dir", self.rd] + list(args)
        if wrap_pid:  # exec keeps the pid: WATCHDOG_PID is hoistd's own
            cmd = ["sh", "-c", 'WATCHDOG_PID=$$; export WATCHDOG_PID; exec "$@"', "sh"] + cmd
        self.log = open(os.path.join(self.tmp, "hoistd.log"), "w+")
        self.proc = subprocess.Popen(cmd, env=env, stderr=self.log)
        daemons.append(self)

    def recv(self, timeout):
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(4096)
        except socket.timeout:
            return None
        t = time.monotonic()
        lines = data.decode(errors="replace").split("\n")
        for line in lines:
            if line:
                self.msgs.append((t, line))
        return lines

    def wait_for(self, pred, what):
        """Receive until pred(line) for some line; STALL s without it fails."""
        last = time.monotonic()
        while True:
            if any(pred(l) for _, l in self.msgs):
                return True
            got = self.recv(1.0)
            if got:
                last = time.monotonic()  # progress, though maybe not ours
            if self.proc.poll() is not None:
                fail(f"{self.name}: hoistd exited ({self.proc.returncode}) waiting for {what}")
                return False
            if time.monotonic() - last > STALL:
                fail(f"{self.name}: nothing for {STALL} s while waiting for {what}")
                return False

    def listen(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.recv(max(0.01, end - time.monotonic()))

    def stats(self):
        out = subprocess.run([HOISTCTL, "--runtime-dir", self.rd, "stats", "--json"],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)["daemon"]

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.listen(0.2)
        if rc != 0:
            fail(f"{self.name}: hoistd exited with {rc}")
        if not any(l == "STOPPING=1" for _, l in self.msgs):
            fail(f"{self.name}: no STOPPING=1")
        self.log.seek(0)
        log = self.log.read()
        self.sock.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return log

    def pings(self):
        return [t for t, l in self.msgs if l == "WATCHDOG=1"]


def check_intervals(d, n_pings):
    d.wait_for(lambda l: l == "READY=1", "READY=1")
    while len(d.pings()) < n_pings:
        if not d.wait_for(lambda l, k=len(d.pings()): len(d.pings()) > k, "WATCHDOG=1"):
            return
    p = d.pings()
    gaps = [b - a for a, b in zip(p, p[1:])]
    bound = WD_USEC / 2 / 1e6 + SLACK
    print(f"{d.name}: {len(p)} pings, gaps {', '.join('%.3f' % g for g in gaps)} s (bound {bound} s)")
    if max(gaps) > bound:
        fail(f"{d.name}: watchdog gap {max(gaps):.3f} s > WATCHDOG_USEC/2 + {SLACK} s")
    if min(gaps) < 0.2:
        fail(f"{d.name}: pings {min(gaps):.3f} s apart: not paced by WATCHDOG_USEC")


# ---- own: WATCHDOG_PID unset
d = Daemon("own", {"WATCHDOG_USEC": str(WD_USEC)})
check_intervals(d, 5)
status = [l for _, l in d.msgs if l.startswith("STATUS=")]
print("own: status lines:", status)
if not status:
    fail("own: no STATUS= line")
elif "0 clients" not in status[0] or "jobs" not in status[0] or "peers" not in status[0]:
    fail(f"own: first STATUS= lacks clients/jobs/peers: {status[0]}")
# a client attached: STATUS follows (periodic update)
cl = subprocess.Popen([CLIENT, "3000"], env=dict(os.environ, HOIST_RUNTIME_DIR=d.rd, HOIST_RANK="0",
                                                  HOIST_SIZE="1", HOIST_JOB="sd-status"))
d.wait_for(lambda l: l.startswith("STATUS=1 clients, 1 jobs"), "STATUS= with 1 client")
if cl.wait() != 0:
    fail("own: sd_client failed")
d.wait_for(lambda l: l.startswith("STATUS=") and "0 clients" in l and
           any(m.startswith("STATUS=1 clients") for _, m in d.msgs), "STATUS= back to 0 clients")
st = d.stats()
print("own: pinned_limit", st.get("pinned_limit"), "transport_verbs", st.get("transport_verbs"))
if not st.get("pinned_limit") or st["pinned_limit"] >= 1 << 63:
    fail(f"own: pinned_limit {st.get('pinned_limit')} is not a finite budget")
log = d.stop()
if "pinned-memory budget" not in log:
    fail("own: the log does not name the pinned-memory budget")

# ---- pid: WATCHDOG_PID is hoistd's own pid
d = Daemon("pid", {"WATCHDOG_USEC": str(WD_USEC)}, args=["--memlock-bytes", "3m"], wrap_pid=True)
check_intervals(d, 3)
st = d.stats()
print("pid: pinned_limit", st.get("pinned_limit"))
if st.get("pinned_limit") != 3 << 20:
    fail(f"pid: pinned_limit {st.get('pinned_limit')} != memlock_bytes 3m")
d.stop()

# ---- other: WATCHDOG_PID names someone else
d = Daemon("other", {"WATCHDOG_USEC": str(WD_USEC), "WATCHDOG_PID": str(os.getpid())})
d.wait_for(lambda l: l == "READY=1", "READY=1")
d.listen(2.5)
print(f"other: {len(d.pings())} pings in 2.5 s")
if d.pings():
    fail("other: WATCHDOG=1 sent although WATCHDOG_PID is another process")
d.stop()

if failures:
    print(f"notify.py: {len(failures)} failure(s)")
    sys.exit(1)
print("notify.py: PASS")
