#!/usr/bin/env bash
# resume.sh <mn_resume>: run under `cluster.sh 2 --daemon-arg=--credit-window=1
# --daemon-arg=--peer-timeout-ms=60000`. See mn_resume.c: a strided get
# stalled half-way while daemon 1 is stopped, its ring slot rewritten by
# the client, then daemon 1 continued. Rank 0 checks its data; cluster.sh
# checks that both daemons are still alive and answer.
set -u
prog=$1
fail=0
FAIL() { echo "[resume.sh] FAIL: $*" >&2; fail=1; }
. "${MN_SRC_DIR:?run me under cluster.sh}/mn_sync.sh"
multi_ops() { mn_daemon_stat "$HOIST_DIR_0" multi_ops; }
started() { [ "$(multi_ops)" -gt "$before" ]; }

before=$(multi_ops)
mn_start2 "resume-$$" "$prog"
stopped=0
if mn_await ready; then
	kill -STOP "$HOISTD_PID_1" && stopped=1
	touch "$sync/stopped"
	if mn_await posted; then
		mn_until started || FAIL "daemon 0 did not start the strided get"
		touch "$sync/started"
		mn_await rewritten || FAIL "rank 0 did not rewrite its slot"
	else
		FAIL "rank 0 did not post"
	fi
else
	FAIL "the job did not start"
fi
[ "$stopped" = 1 ] && kill -CONT "$HOISTD_PID_1"
wait "$a0" || FAIL "rank 0 failed with status $?"
wait "$a1" || FAIL "rank 1 failed with status $?"
exit $fail
