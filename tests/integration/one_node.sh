#!/usr/bin/env bash
# one_node.sh <it_putget>: run under harness.sh (a daemon of its own: no
# node list, one node). Issue 15 item 4: a one-node daemon starts no
# network transport, only the same-node path; the progress loop alone
# wakes up on the doorbell and the command queue.
#  - a 2-PE job runs (puts, gets, barriers through the loop's epoll);
#  - `hoistctl stats --json` says transport "self" and shows no tcp
#    counter (tcp_requests);
#  - hoistd holds no TCP socket at all (its descriptors against
#    /proc/net/tcp and tcp6: listening or not);
#  - its log names the transport self and never says it listens.
set -u
prog=$1
: "${HOIST_RUNTIME_DIR:?run me under harness.sh}"
: "${HOISTD_PID:?run me under harness.sh}"
fail=0
FAIL() { echo "[one_node] FAIL: $*" >&2; fail=1; }
ctl() { "$HOIST_HOISTCTL" --runtime-dir "$HOIST_RUNTIME_DIR" "$@"; }

# HOIST_DIRECT=0: every put goes through the daemon (with direct access
# the library may do same-node puts itself, and how many it does depends on
# timing, so the daemon's put counter proves nothing either way)
HOIST_DIRECT=0 "$HOIST_HOISTRUN" -n 2 --timeout 40 "$prog" || FAIL "the job failed (status $?)"

ctl stats --json >"$HOIST_RUNTIME_DIR/stats.json" || FAIL "hoistctl stats --json failed"
python3 - "$HOIST_RUNTIME_DIR/stats.json" <<'PY' || FAIL "stats (above)"
import json, sys
doc = json.load(open(sys.argv[1]))
bad = []
if doc.get("transport") != "self":
    bad.append("transport %r, expected 'self'" % doc.get("transport"))
d = doc.get("daemon", {})
if "tcp_requests" in d:
    bad.append("tcp_requests shown: a tcp transport runs")
if d.get("puts", 0) < 1:
    bad.append("no puts counted: the job did not go through this daemon")
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# the daemon's socket inodes, against every TCP socket of the host
inodes=$(for f in /proc/"$HOISTD_PID"/fd/*; do readlink "$f"; done 2>/dev/null |
	sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' | sort -u)
[ -n "$inodes" ] || FAIL "hoistd $HOISTD_PID holds no socket at all (its attach socket?)"
tcp=$(awk 'FNR > 1 { print $10 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort -u)
both=$(comm -12 <(echo "$inodes") <(echo "$tcp"))
[ -z "$both" ] || FAIL "hoistd holds TCP socket(s) (inodes $(echo $both)): a network transport runs"

logf=$HOIST_RUNTIME_DIR/hoistd.log
if [ -f "$logf" ]; then
	grep -q 'transport: self (one node' "$logf" || FAIL "the log does not name transport self"
	if grep -q 'listening on' "$logf"; then FAIL "the log says it listens: $(grep 'listening on' "$logf")"; fi
else
	FAIL "no daemon log at $logf"
fi
exit $fail
