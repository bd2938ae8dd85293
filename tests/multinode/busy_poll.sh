#!/usr/bin/env bash
# busy_poll.sh US <hoist-amo-bench>: run under `cluster.sh 2
# --daemon-arg=--tcp-busy-poll-us=US`. PE 0 (daemon 0) does blocking
# 8-byte gets, fetch-adds and put+quiets to PE 1 (daemon 1), each waiting
# for its reply; then daemon 0's counters say whether its progress thread
# busy-polled for those replies (setting tcp_busy_poll_us):
#   US > 0: tcp_busy_polls > 0 and tcp_busy_poll_hits > 0 (replies found by
#           reading the connection directly), hits <= polls
#   US = 0: both 0 on both daemons (the setting turns it off)
set -u
us=$1
amo=$2
: "${HOIST_DIRS:?run me under cluster.sh}"
fail=0
FAIL() { echo "[busy_poll.sh] FAIL: $*" >&2; fail=1; }

"$HOIST_HOISTRUN" -n 2 --runtime-dirs "$HOIST_DIRS" --job "busy-poll-$$" --timeout 150 \
	"$amo" --smoke --test get,fadd,putq || FAIL "hoist-amo-bench failed with status $?"
if ((us > 0)); then
	"$HOIST_HOISTCTL" --runtime-dir "$HOIST_DIR_0" stats --json | python3 "$MN_SRC_DIR/mn_stats.py" check \
		"d['tcp_busy_polls'] > 0" "d['tcp_busy_poll_hits'] > 0" \
		"d['tcp_busy_poll_hits'] <= d['tcp_busy_polls']" ||
		FAIL "daemon 0 did not busy-poll for its replies with tcp_busy_poll_us=$us (above)"
else
	for dir in "$HOIST_DIR_0" "$HOIST_DIR_1"; do
		"$HOIST_HOISTCTL" --runtime-dir "$dir" stats --json | python3 "$MN_SRC_DIR/mn_stats.py" check \
			"d['tcp_busy_polls'] == 0" "d['tcp_busy_poll_hits'] == 0" ||
			FAIL "a daemon busy-polled with tcp_busy_poll_us=0 ($dir, above)"
	done
fi
((fail == 0)) && echo "[busy_poll.sh] tcp_busy_poll_us=$us took effect"
exit $fail
