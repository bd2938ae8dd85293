#!/usr/bin/env bash
# halfopen.sh <it_putget> <it_many_attach>: run under harness.sh with
# HOISTD_ARGS="--request-timeout-ms 400 --max-halfopen 24".
# Issue 14 item 3a: a stats connection that sent nothing blocked the
# control thread for 1 s each; idle attach connections were kept forever.
# While N=16 idle attach and N idle stats connections are held open (and
# reopened as soon as the daemon drops one: halfopen_flood.py):
#  - a real 2-PE job attaches (within a 2 s attach deadline) and passes;
#  - a client that dies (kill -9 of a waiting rank) is counted as a death;
#  - the daemon's counters show idle connections dropped after the
#    deadline (halfopen_timeouts >= N) and, over the cap of 24, the oldest
#    evicted (halfopen_evicted > 0); the flooder saw drops of both kinds.
set -u
putget=$1
many=$2
: "${HOIST_RUNTIME_DIR:?run me under harness.sh}"
dir=$HOIST_RUNTIME_DIR
N=16
fail=0
FAIL() { echo "[halfopen] FAIL: $*" >&2; fail=1; }
log() { echo "[halfopen] $*" >&2; }
ctl() { "$HOIST_HOISTCTL" --runtime-dir "$dir" "$@"; }
daemon() { # daemon counter NAME from stats --json
	ctl stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["daemon"].get(sys.argv[1], -1))' "$1"
}

python3 "$IT_SRC_DIR/halfopen_flood.py" "$dir" "$N" "$dir/flood.state" "$dir/flood.stop" &
fpid=$!
# watchdog on progress: the flooder reaches "flooding" or gives up
while kill -0 "$fpid" 2>/dev/null && ! grep -q flooding "$dir/flood.state" 2>/dev/null; do
	sleep 0.2
done
if ! grep -q flooding "$dir/flood.state" 2>/dev/null; then
	wait "$fpid"
	FAIL "idle attach connections were never dropped (no request_timeout_ms): $(cat "$dir/flood.state" 2>/dev/null)"
	exit 1
fi
log "holding $N idle attach and $N idle stats connections"

# a real job, meanwhile
HOIST_ATTACH_TIMEOUT_MS=2000 "$HOIST_HOISTRUN" -n 2 --timeout 50 "$putget" ||
	FAIL "a 2-PE job failed while idle connections were held (status $?)"
kill -0 "$fpid" 2>/dev/null || FAIL "the flooder stopped early"

# a client death, meanwhile
d0=$(daemon client_deaths)
mkfifo "$dir/hold"
"$many" 1 "death-$$" <"$dir/hold" >"$dir/many.out" &
mpid=$!
exec 7>"$dir/hold"
while kill -0 "$mpid" 2>/dev/null && ! grep -q READY "$dir/many.out"; do sleep 0.1; done
grep -q READY "$dir/many.out" || FAIL "the waiting rank did not attach while idle connections were held"
kill -KILL "$mpid"
wait "$mpid" 2>/dev/null
exec 7>&-
d1=$d0
for _ in $(seq 1 100); do # watchdog: 10 s without the death being counted
	d1=$(daemon client_deaths)
	[ "$d1" -gt "$d0" ] && break
	sleep 0.1
done
[ "$d1" -gt "$d0" ] || FAIL "the killed rank was not counted as a death (client_deaths $d0 -> $d1)"
kill -0 "$fpid" 2>/dev/null || FAIL "the flooder stopped early"

touch "$dir/flood.stop"
wait "$fpid" || FAIL "the flooder failed"
counts=$(cat "$dir/flood.state")
log "flooder: $counts"
ctl stats --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["daemon"]
f = json.loads(sys.argv[1]); n = int(sys.argv[2])
bad = []
if d.get("halfopen_timeouts", 0) < n:
    bad.append("halfopen_timeouts = %r, expected >= %d" % (d.get("halfopen_timeouts"), n))
if d.get("halfopen_evicted", 0) < 1:
    bad.append("halfopen_evicted = %r, expected > 0 (cap 24, %d held)" % (d.get("halfopen_evicted"), 2 * n))
for k in ("attach", "stats"):
    if f["dropped"][k] < 1:
        bad.append("the daemon dropped no idle %s connection" % k)
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
' "$counts" "$N" || FAIL "counters after the flood (above)"
grep -q "dropped .* connection(s) that sent no request" "$dir/hoistd.log" ||
	FAIL "no log line about dropped half-open connections"
lines=$(grep -c "connection(s) that sent no request" "$dir/hoistd.log")
[ "$lines" -le 3 ] || FAIL "$lines log lines about dropped connections: not rate-limited"
[ "$fail" = 0 ] && echo "[halfopen] PASS" >&2
exit "$fail"
