#!/usr/bin/env bash
# quietwake.sh <mn_quietwake>: run under `cluster.sh 2
# --daemon-arg=--peer-timeout-ms=60000`. See mn_quietwake.c: rank 0 sleeps
# in hoist_quiet behind 64 staged gets whose replies wait in the stopped
# daemon 1; continued, they land one completion each while rank 0 sleeps.
# Daemon 0 must let it sleep through them (wakeups_skipped grows) and wake
# it for the quiet's completion (at most 2 wakes in all).
set -u
prog=$1
fail=0
FAIL() { echo "[quietwake.sh] FAIL: $*" >&2; fail=1; }
. "${MN_SRC_DIR:?run me under cluster.sh}/mn_sync.sh"

slept() { [ "$(mn_daemon_stat "$HOIST_DIR_0" wait_sleeps)" -gt "$ws0" ]; }

mn_start2 "quietwake-$$" "$prog" HOIST_SPIN_US=0
stopped=0
if mn_await ready; then
	kill -STOP "$HOISTD_PID_1" && stopped=1
	# rank 0 polls files until "stopped": no sleep of its own from here
	# to its quiet's
	ws0=$(mn_daemon_stat "$HOIST_DIR_0" wait_sleeps)
	wk0=$(mn_daemon_stat "$HOIST_DIR_0" wakeups)
	sk0=$(mn_daemon_stat "$HOIST_DIR_0" wakeups_skipped)
	touch "$sync/stopped"
	if mn_await posted; then
		mn_until slept || FAIL "rank 0 did not sleep in its quiet"
	else
		FAIL "rank 0 did not post its gets"
	fi
	kill -CONT "$HOISTD_PID_1" && stopped=0
	if mn_await quieted; then
		wk=$(($(mn_daemon_stat "$HOIST_DIR_0" wakeups) - wk0))
		sk=$(($(mn_daemon_stat "$HOIST_DIR_0" wakeups_skipped) - sk0))
		echo "[quietwake.sh] daemon 0 during the quiet: wakeups $wk, wakeups_skipped $sk"
		[ "$sk" -ge 1 ] || FAIL "rank 0 was woken for every completion (wakeups_skipped $sk)"
		[ "$wk" -ge 1 ] && [ "$wk" -le 2 ] || FAIL "wakeups $wk: want 1 or 2, for the quiet"
	else
		FAIL "rank 0's quiet did not return"
	fi
	touch "$sync/read"
else
	FAIL "the job did not start"
fi
[ "$stopped" = 1 ] && kill -CONT "$HOISTD_PID_1"
wait "$a0" || FAIL "rank 0 failed with status $?"
wait "$a1" || FAIL "rank 1 failed with status $?"
((fail == 0)) && echo "[quietwake.sh] a quiet behind 64 staged gets slept through their completions"
exit $fail
