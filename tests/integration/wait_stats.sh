#!/usr/bin/env bash
# wait_stats.sh <it_wait>: run under harness.sh. Runs it_wait (2 PEs, every
# operation through the daemon) and checks that `hoistctl stats --json`
# reports its point-to-point waits: the client's own counts (p2p_waits,
# p2p_sleeps, p2p_wakeups, kept in its control page and summed into the
# daemon-wide counters when it detached) and the daemon's heap_wakes.
# Then it_wait --cover through the daemon and direct: the writes away from
# the waited words count in heap_wakes_skipped (the daemon's copies and
# atomics) and heap_wakes_direct_skipped (the writer's direct stores).
set -u
prog=$1
: "${HOIST_RUNTIME_DIR:?run me under harness.sh}"
fail=0
FAIL() { echo "[wait_stats] FAIL: $*" >&2; fail=1; }
HOIST_DIRECT=0 HOIST_SPIN_US=100 HOIST_WAIT_POLL_MS=600000 \
	"$HOIST_HOISTRUN" -n 2 --timeout 40 "$prog" || FAIL "the job failed (status $?)"
for direct in 0 1; do
	HOIST_DIRECT=$direct HOIST_SPIN_US=100 HOIST_WAIT_POLL_MS=600000 \
		"$HOIST_HOISTRUN" -n 2 --timeout 40 "$prog" --cover ||
		FAIL "the --cover job (HOIST_DIRECT=$direct) failed (status $?)"
done
json=$("$HOIST_HOISTCTL" --runtime-dir "$HOIST_RUNTIME_DIR" stats --json) || FAIL "hoistctl stats failed"
python3 - <<PY || FAIL "counters (above)"
import json, sys
d = json.loads('''$json''').get("daemon", {})
bad = []
# it_wait: 13 rounds in which rank 0 sleeps and a writer wakes it
for k in ("p2p_waits", "p2p_sleeps", "p2p_wakeups", "heap_wakes"):
    if d.get(k, 0) < 13:
        bad.append("%s = %r, want >= 13" % (k, d.get(k)))
# it_wait --cover: 3 forms x 64 writes elsewhere, each path
for k in ("heap_wakes_skipped", "heap_wakes_direct_skipped"):
    if d.get(k, 0) < 192:
        bad.append("%s = %r, want >= 192" % (k, d.get(k)))
for b in bad:
    print("[wait_stats]", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
[ "$fail" = 0 ] && echo "[wait_stats] PASS" >&2
exit "$fail"
