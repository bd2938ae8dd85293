#!/usr/bin/env bash
# daemon_gone.sh TERM|KILL <it_daemon_gone>: run under harness.sh (which
# keeps its own daemon; this script starts a second, private one and takes
# it away from under a running 2-PE job).
# Checks: every PE notices (it_daemon_gone), the job exits 0, and after
# SIGTERM the private daemon itself exits 0.
# With IT_GONE_DRAINED=N the daemon goes only once it counted N barrier
# notifies (every descriptor consumed: it_daemon_gone_direct), and the
# file $IT_READY_FILE.killed appears after it is gone.
set -u
sig=$1
prog=$2
: "${HOIST_RUNTIME_DIR:?run me under harness.sh}"
fail=0
FAIL() { echo "[daemon_gone.sh $sig] FAIL: $*" >&2; fail=1; }

D2=$(mktemp -d "$HOIST_RUNTIME_DIR/gone.XXXXXX")
mkfifo "$D2/ready.fifo"
"$HOIST_HOISTD" --runtime-dir "$D2" --ready-fd 3 3>"$D2/ready.fifo" </dev/null 2>"$D2/hoistd.log" &
dpid=$!
jpid=
trap 'kill -KILL $dpid $jpid 2>/dev/null' EXIT
line=
if ! read -r -t 10 line <"$D2/ready.fifo" || [ "$line" != READY ]; then
	echo "[daemon_gone.sh] FAIL: private hoistd not ready" >&2
	cat "$D2/hoistd.log" >&2
	exit 1
fi

IT_READY_FILE=$D2/job-ready HOIST_RUNTIME_DIR=$D2 "$HOIST_HOISTRUN" -n 2 --timeout 50 "$prog" &
jpid=$!
for _ in $(seq 1 200); do
	[ -e "$D2/job-ready" ] && break
	sleep 0.05
done
[ -e "$D2/job-ready" ] || FAIL "the job never got going"
if [ -n "${IT_GONE_DRAINED:-}" ]; then
	n=0 # the count moves or the daemon is stuck: no total deadline
	for _ in $(seq 1 $((400 * ${HOIST_TEST_SCALE:-1}))); do
		n=$(HOIST_RUNTIME_DIR=$D2 "$HOIST_HOISTCTL" stats --json --all |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["barriers"])') || n=0
		[ "$n" -ge "$IT_GONE_DRAINED" ] && break
		sleep 0.05
	done
	[ "$n" -ge "$IT_GONE_DRAINED" ] || FAIL "the daemon counted $n barrier notifies, never $IT_GONE_DRAINED"
fi
kill "-$sig" "$dpid"
wait "$dpid"
dstatus=$?
: >"$D2/job-ready.killed"
if [ "$sig" = TERM ] && [ "$dstatus" -ne 0 ]; then
	FAIL "hoistd exited with $dstatus after SIGTERM with a job attached (expected 0)"
fi
wait "$jpid"
jstatus=$?
jpid=
[ "$jstatus" -eq 0 ] || FAIL "the job exited with $jstatus"
if [ "$fail" != 0 ]; then
	echo "----- private hoistd log -----" >&2
	cat "$D2/hoistd.log" >&2
fi
trap - EXIT
rm -rf "$D2"
[ "$fail" = 0 ] && echo "[daemon_gone.sh $sig] PASS" >&2
exit "$fail"
