#!/usr/bin/env bash
# backpressure.sh full|daemon CMD...: run under harness.sh against a daemon
# with tiny rings and with HOIST_DIRECT=0 (every same-node put/get goes
# through the rings). Runs CMD, then requires from the daemon-wide counters
# of `hoistctl stats --json` (retired clients included) that the daemon
# executed puts/gets (they did not go the direct way) and, with full, that
# the rings really pushed back: sq_full (drain passes that found a
# client's submission ring full) above 0. `daemon` is for programs that
# wait for each operation and so never have many descriptors posted
# (it_putget, it_barrier: sq_full stays 0 there).
set -u
: "${HOIST_RUNTIME_DIR:?run me under harness.sh}"
[ "${HOIST_DIRECT:-}" = 0 ] || { echo "[backpressure] FAIL: HOIST_DIRECT=0 not set" >&2; exit 1; }
mode=$1
shift
case $mode in full | daemon) ;; *) echo "usage: $0 full|daemon CMD..." >&2; exit 2 ;; esac
"$@" || exit $?
json=$("$HOIST_HOISTCTL" --runtime-dir "$HOIST_RUNTIME_DIR" stats --json) || {
	echo "[backpressure] FAIL: hoistctl stats" >&2
	exit 1
}
python3 -c 'import json, sys
d = json.loads(sys.argv[1])["daemon"]
print("[backpressure] sq_full %d cq_full %d puts %d gets %d" % (
    d["sq_full"], d["cq_full"], d["puts"], d["gets"]), file=sys.stderr)
bad = []
if sys.argv[2] == "full" and d["sq_full"] <= 0:
    bad.append("sq_full is %d: the submission rings never filled" % d["sq_full"])
if d["puts"] + d["gets"] <= 0:
    bad.append("the daemon executed no put or get")
for b in bad:
    print("[backpressure] FAIL: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)' "$json" "$mode"
