#!/usr/bin/env bash
# halfcq.sh <mn_halfcq>: run under `cluster.sh 3 --daemon-arg=--cq-entries=16
# --daemon-arg=--sq-entries=16 --daemon-arg=--peer-timeout-ms=60000`. See
# mn_halfcq.c: rank 0 sleeps in hoist_quiet, which daemon 2 (stopped) holds
# back, while the replies of its 8 gets from daemon 1 land, one completion
# each: half its CQ. Daemon 0 must wake it then, before daemon 2 runs again
# (without the half-CQ rule it skips all 8 and rank 0 sleeps on).
set -u
prog=$1
K=8
fail=0
FAIL() { echo "[halfcq.sh] FAIL: $*" >&2; fail=1; }
. "${MN_SRC_DIR:?run me under cluster.sh}/mn_sync.sh"

stat0() { mn_daemon_stat "$HOIST_DIR_0" "$1"; }
slept() { [ "$(stat0 wait_sleeps)" -gt "$ws0" ]; }
# woken, or every landing skipped: either way nothing more comes from daemon 1
settled() { [ "$(stat0 wakeups)" -gt "$wk0" ] || [ $(($(stat0 wakeups_skipped) - sk0)) -ge "$K" ]; }

mn_start 3 "halfcq-$$" "$prog" HOIST_SPIN_US=0 HOIST_AUTO=0
stopped=
if mn_await ready; then
	kill -STOP "$HOISTD_PID_1" "$HOISTD_PID_2" && stopped="$HOISTD_PID_1 $HOISTD_PID_2"
	ws0=$(stat0 wait_sleeps)
	wk0=$(stat0 wakeups)
	sk0=$(stat0 wakeups_skipped)
	touch "$sync/stopped"
	if mn_await posted; then
		mn_until slept || FAIL "rank 0 did not sleep in its quiet"
	else
		FAIL "rank 0 did not post its put and gets"
	fi
	kill -CONT "$HOISTD_PID_1" && stopped=$HOISTD_PID_2
	mn_until settled || FAIL "daemon 0 neither woke rank 0 nor skipped $K wakes"
	wk=$(($(stat0 wakeups) - wk0))
	sk=$(($(stat0 wakeups_skipped) - sk0))
	echo "[halfcq.sh] daemon 0 with the quiet held back: wakeups $wk, wakeups_skipped $sk"
	[ -e "$sync/quieted" ] && FAIL "the quiet returned while daemon 2 was stopped"
	[ "$wk" -ge 1 ] || FAIL "rank 0 slept through $sk completions, half its CQ, and was not woken"
	kill -CONT "$HOISTD_PID_2" && stopped=
	mn_await quieted || FAIL "rank 0's quiet did not return"
	touch "$sync/read"
else
	FAIL "the job did not start"
fi
[ -n "$stopped" ] && kill -CONT $stopped
wait "$a0" || FAIL "rank 0 failed with status $?"
wait "$a1" || FAIL "rank 1 failed with status $?"
wait "$a2" || FAIL "rank 2 failed with status $?"
((fail == 0)) && echo "[halfcq.sh] a client sleeping through half its CQ was woken before its own completion"
exit $fail
