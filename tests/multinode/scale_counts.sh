#!/usr/bin/env bash
# scale_counts.sh <hoist-scale-steps> <bench/run-scale.sh>: run under
# `cluster.sh 4`. One job, one PE per daemon, in steps (job start, two
# hoist_malloc, barrier, allreduce, alltoall, finalize), every daemon's
# counters read between the steps by run-scale.sh's inner mode (the rows
# bench/run-scale.sh fits). Checks the tcp wire counters:
# - the barrier is a dissemination over 4 nodes: exactly 2 messages sent and
#   2 received by every daemon, 32 bytes each (wire_hdr 16 + wire_barrier 16);
# - in every step, what all daemons sent is what all received (messages and
#   bytes): both ends of every frame are counted;
# - after the job start every daemon holds 6 connections (tcp_lanes 1: one
#   outgoing to each of the 3 others and one from each), and the job start
#   sent at least one membership message to each of the 3 others.
set -u
steps=$1
run_scale=$2
: "${HOIST_DIRS:?run me under cluster.sh}"
raw=$(mktemp "${TMPDIR:-/tmp}/scale-counts.XXXXXX")
trap 'rm -f "$raw"' EXIT
if ! bash "$run_scale" --inner "$raw" "$steps" 4; then
	echo "[scale_counts.sh] FAIL: the stepped job over 4 daemons failed" >&2
	exit 1
fi
python3 - "$raw" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    p = line.split("\t")
    rows[(p[1], int(p[2]))] = [int(x) for x in p[3:]]
MO, BO, MI, BI, CONNS = range(5)
labels = ["idle", "0", "1", "2", "3", "4", "5"]
bad = []
def delta(step, i, c):
    prev = labels[labels.index(step) - 1]
    return rows[(step, i)][c] - rows[(prev, i)][c]
for i in range(4):
    for c, want, name in ((MO, 2, "messages sent"), (MI, 2, "messages received"),
                          (BO, 64, "bytes sent"), (BI, 64, "bytes received")):
        got = delta("2", i, c)
        if got != want:
            bad.append("daemon %d: barrier %s %d, want %d" % (i, name, got, want))
    if rows[("0", i)][CONNS] != 6:
        bad.append("daemon %d: %d connections after the job start, want 6"
                   % (i, rows[("0", i)][CONNS]))
    if rows[("idle", i)][CONNS] != 0:
        bad.append("daemon %d: %d connections before the job, want 0"
                   % (i, rows[("idle", i)][CONNS]))
    # 3 handshakes (hello, auth out; hello in) plus at least one W_MEMBER per peer
    if delta("0", i, MO) < 3 * 3 + 3:
        bad.append("daemon %d: job start sent %d messages, want >= 12" % (i, delta("0", i, MO)))
for step in labels[1:]:
    for out, inn, what in ((MO, MI, "messages"), (BO, BI, "bytes")):
        s_out = sum(delta(step, i, out) for i in range(4))
        s_in = sum(delta(step, i, inn) for i in range(4))
        if s_out != s_in or s_out <= 0:
            bad.append("step %s: %d %s sent, %d received (want equal, > 0)"
                       % (step, s_out, what, s_in))
for b in bad:
    print("[scale_counts.sh] FAIL: " + b, file=sys.stderr)
if bad:
    for k in sorted(rows):
        print("  %s: %s" % (k, rows[k]), file=sys.stderr)
    sys.exit(1)
print("[scale_counts.sh] 4 daemons: barrier 2 messages / 64 bytes each way per daemon, "
      "sent == received in every step, 6 connections per daemon")
PY
