#!/usr/bin/env bash
# rxbatch.sh <mn_rxbatch>: run under `cluster.sh 2 --daemon-arg=--batch=1
# --daemon-arg=--tcp-rx-batch=4 --daemon-arg=--coalesce=0
# --daemon-arg=--peer-timeout-ms=60000`. See mn_rxbatch.c: daemon 0 is
# stopped while rank 1's puts reach its socket and rank 0 posts gets of
# their region; continued, it must interleave the two (tcp_rx_breaks of
# daemon 0 grows, and rank 0's snapshots show it). cluster.sh checks that
# both daemons are still alive and answer.
set -u
prog=$1
fail=0
FAIL() { echo "[rxbatch.sh] FAIL: $*" >&2; fail=1; }
. "${MN_SRC_DIR:?run me under cluster.sh}/mn_sync.sh"

sent() { [ "$(mn_daemon_stat "$HOIST_DIR_1" tcp_msgs_out)" -ge $((out0 + 16)) ]; }

mn_start2 "rxbatch-$$" "$prog" HOIST_DIRECT=0
stopped=0
if mn_await ready; then
	out0=$(mn_daemon_stat "$HOIST_DIR_1" tcp_msgs_out)
	breaks0=$(mn_daemon_stat "$HOIST_DIR_0" tcp_rx_breaks)
	kill -STOP "$HOISTD_PID_0" && stopped=1
	touch "$sync/stopped"
	if mn_await put; then
		# the 16 puts left daemon 1 (they wait in daemon 0's socket)
		mn_until sent || FAIL "daemon 1 did not send the puts"
		touch "$sync/sent"
		mn_await posted || FAIL "rank 0 did not post its gets"
	else
		FAIL "rank 1 did not put"
	fi
else
	FAIL "the job did not start"
fi
[ "$stopped" = 1 ] && kill -CONT "$HOISTD_PID_0"
wait "$a0" || FAIL "rank 0 failed with status $?"
wait "$a1" || FAIL "rank 1 failed with status $?"
if [ "$stopped" = 1 ]; then
	breaks=$(($(mn_daemon_stat "$HOIST_DIR_0" tcp_rx_breaks) - breaks0))
	echo "[rxbatch.sh] tcp_rx_breaks of daemon 0: $breaks"
	[ "$breaks" -ge 1 ] || FAIL "daemon 0 never cut a read short for the ring (tcp_rx_breaks $breaks)"
fi
exit $fail
