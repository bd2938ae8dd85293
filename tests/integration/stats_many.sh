#!/usr/bin/env bash
# stats_many.sh <it_many_attach> <hoist-node.sh>: run under harness.sh, with
# a daemon that admits IT_MANY (default 1000) clients of one user.
# Issue 14 item 1: the stats reply used to be one datagram, too large for
# the socket buffer above ~460 clients; `hoistctl stats` failed and
# hoist-node.sh then killed the healthy daemon as stale. Checks:
#  - with IT_MANY clients waiting for their job (one process holding the
#    attach connections), `hoistctl stats --json`, the table and
#    `hoistctl metrics` list every one of them; `hoistctl ping` answers;
#  - hoist-node.sh (told it started this daemon: hoistd.pid) uses it;
#  - with the daemon stopped (SIGSTOP: it listens but cannot answer),
#    hoist-node.sh start leaves it alone and uses it, `status` says busy
#    (exit 4); after SIGCONT the daemon is the same process and answers.
set -u
many=$1
node=$2
: "${HOIST_RUNTIME_DIR:?run me under harness.sh}"
N=${IT_MANY:-1000}
dir=$HOIST_RUNTIME_DIR
ctl() { "$HOIST_HOISTCTL" --runtime-dir "$dir" "$@"; }
fail=0
FAIL() { echo "[stats_many] FAIL: $*" >&2; fail=1; }
log() { echo "[stats_many] $*" >&2; }

job=many-$$
mkfifo "$dir/hold" || exit 1
"$many" "$N" "$job" <"$dir/hold" >"$dir/many.out" &
hpid=$!
exec 7>"$dir/hold" # the holder keeps its connections until this closes
# watchdog on progress: the holder reports READY or dies
while kill -0 "$hpid" 2>/dev/null && ! grep -q READY "$dir/many.out"; do
	sleep 0.2
done
if ! grep -q "READY $N" "$dir/many.out"; then
	FAIL "the holder did not get $N clients accepted"
	exec 7>&-
	wait "$hpid"
	exit 1
fi
log "$N clients of job $job wait for their job"

# ---- stats answer, whole ----------------------------------------------------
ctl stats --json >"$dir/many.json" || FAIL "hoistctl stats --json failed (status $?)"
python3 - "$dir/many.json" "$job" "$N" <<'PY' || FAIL "stats --json with $N clients (above)"
import json, sys
doc = json.load(open(sys.argv[1]))
job, n = sys.argv[2], int(sys.argv[3])
mine = [c for c in doc["clients"] if c["job"] == job]
ranks = sorted(c["rank"] for c in mine)
bad = []
if ranks != list(range(n)):
    bad.append("ranks of %s: %d listed, expected 0..%d" % (job, len(ranks), n - 1))
if doc["daemon"].get("clients", 0) < n:
    bad.append("daemon gauge clients = %r" % doc["daemon"].get("clients"))
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
rows=$(ctl stats | grep -c "^  job \"$job\" rank ") || true
[ "$rows" = "$N" ] || FAIL "the table shows $rows client blocks of $job, expected $N"
mrows=$(ctl metrics | grep -c "^hoist_client_puts_total{job=\"$job\",") || true
[ "$mrows" = "$N" ] || FAIL "metrics has $mrows hoist_client_puts_total samples of $job, expected $N"
ctl ping >/dev/null || FAIL "hoistctl ping failed with $N clients"

# ---- hoist-node.sh with a busy daemon -----------------------------------
export HOISTD=$HOIST_HOISTD HOISTCTL=$HOIST_HOISTCTL
echo "$HOISTD_PID" >"$dir/hoistd.pid" # as if hoist-node.sh had started it
"$node" start job-a 2>"$dir/node.err" || FAIL "hoist-node.sh start with $N clients: $(cat "$dir/node.err")"
[ "$(cat "$dir/hoistd.pid" 2>/dev/null)" = "$HOISTD_PID" ] || FAIL "hoist-node.sh replaced the daemon: $(cat "$dir/node.err")"

kill -STOP "$HOISTD_PID"
HOIST_PING_TIMEOUT_MS=1000 HOIST_STOP_TIMEOUT=2 "$node" start job-b 2>"$dir/node.err"
rc=$?
HOIST_PING_TIMEOUT_MS=1000 "$node" status >"$dir/status.out" 2>&1
src=$?
alive=1 # a zombie (killed, not reaped by the harness yet) is dead
st=$(awk '{print $3}' "/proc/$HOISTD_PID/stat" 2>/dev/null) || alive=0
[ -n "$st" ] && [ "$st" != Z ] || alive=0
kill -CONT "$HOISTD_PID" 2>/dev/null
[ "$alive" = 1 ] || FAIL "hoist-node.sh killed the stopped (busy) daemon: $(cat "$dir/node.err")"
[ "$rc" = 0 ] || FAIL "hoist-node.sh start against a busy daemon exited $rc: $(cat "$dir/node.err")"
[ "$src" = 4 ] || FAIL "hoist-node.sh status against a busy daemon exited $src (expected 4): $(cat "$dir/status.out")"
grep -q "did not answer" "$dir/node.err" || FAIL "hoist-node.sh did not say the daemon is busy: $(cat "$dir/node.err")"
[ -e "$dir/jobs/job-b" ] || FAIL "hoist-node.sh did not register job-b"
[ "$(cat "$dir/hoistd.pid" 2>/dev/null)" = "$HOISTD_PID" ] || FAIL "hoistd.pid changed: $(cat "$dir/hoistd.pid" 2>/dev/null)"
ctl ping >/dev/null || FAIL "the daemon does not answer after SIGCONT"
rm -rf "$dir/hoistd.pid" "$dir/jobs" # the harness stops its daemon itself

exec 7>&-
wait "$hpid" || FAIL "the holder exited $?"
[ "$fail" = 0 ] && echo "[stats_many] PASS" >&2
exit "$fail"
