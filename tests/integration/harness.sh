#!/usr/bin/env bash
# Integration test harness: one fresh hoistd per test.
#
#   harness.sh <hoistd> <hoistrun> <hoistctl> -- <test command ...>
#
# 1. makes a private runtime directory (mktemp -d, mode 0755 so that other
#    uids can reach the sockets; the uid test needs that),
# 2. starts `hoistd --runtime-dir DIR --ready-fd 3 $HOISTD_ARGS` and waits up
#    to 10 s for "READY" on fd 3,
# 3. exports HOIST_RUNTIME_DIR, HOISTD_PID, HOIST_HOISTD, HOIST_HOISTRUN,
#    HOIST_HOISTCTL, HOIST_BIN_DIR (directory of hoistrun) and IT_SRC_DIR
#    (this directory), and runs the test command under
#    `timeout ${IT_TIMEOUT:-60}` (times HOIST_TEST_SCALE),
# 4. fails if the daemon died during the test, then stops it with SIGTERM
#    and requires exit status 0 within 5 s, and fails if its log says it
#    used a deprecated HOIST_<SETTING> (settings go as flags or HOISTD_*),
# 5. cleans up on any exit; prints the daemon's log when something failed
#    (or always with IT_VERBOSE=1).
#
# Exit status: the test's status (77 = skipped) unless the daemon
# misbehaved, in which case 1.
#
# Environment: HOISTD_ARGS (extra hoistd arguments, word-split),
# IT_TIMEOUT (seconds for the test command), IT_KEEP=1 (keep the runtime
# directory), IT_VERBOSE=1, HOIST_TEST_SCALE (a factor >= 1 for every time
# limit here: READY, IT_TIMEOUT, the stop after SIGTERM; scripts/test.sh
# sets it for the sanitizer stages; the test programs' watchdogs and
# hoistrun --timeout honour it too).
set -u

if [ $# -lt 5 ] || [ "$4" != "--" ]; then
	echo "usage: $0 <hoistd> <hoistrun> <hoistctl> -- <test command ...>" >&2
	exit 2
fi
HOISTD=$1
HOISTRUN=$2
HOISTCTL=$3
shift 4

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
name=$(basename -- "$1")
for a in "$@"; do # name the test after its program, not the launcher
	case $(basename -- "$a") in it_* | *.sh) name=$(basename -- "$a"); break ;; esac
done

log() { echo "[harness $name] $*" >&2; }

. "$here/runner.sh" # scaled, run_test
ready_sec=$(scaled 10)
test_sec=$(scaled "${IT_TIMEOUT:-60}")
stop_ticks=$(($(scaled 5) * 10))

for b in "$HOISTD" "$HOISTRUN" "$HOISTCTL"; do
	if [ ! -x "$b" ]; then
		log "FAIL: $b is not an executable"
		exit 1
	fi
done

DIR=$(mktemp -d /tmp/hoist-it.XXXXXX) || { log "FAIL: mktemp"; exit 1; }
chmod 0755 "$DIR"
DPID=
status=1
show_log=0

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	if [ -n "$DPID" ] && kill -0 "$DPID" 2>/dev/null; then
		kill -KILL "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
	fi
	if [ "$show_log" = 1 ] || [ "${IT_VERBOSE:-0}" = 1 ]; then
		if [ -s "$DIR/hoistd.log" ]; then
			echo "----- hoistd log ($DIR/hoistd.log, last 80 lines) -----" >&2
			tail -n 80 "$DIR/hoistd.log" >&2
			echo "----- end of hoistd log -----" >&2
		fi
	fi
	if [ "${IT_KEEP:-0}" = 1 ]; then
		log "keeping $DIR"
	else
		rm -rf "$DIR"
	fi
}
trap cleanup EXIT
trap 'log "interrupted"; show_log=1; exit 1' INT TERM HUP

# A daemon that is gone (or a zombie) is dead.
daemon_alive() {
	[ -n "$DPID" ] || return 1
	kill -0 "$DPID" 2>/dev/null || return 1
	local st
	st=$(awk '{print $3}' "/proc/$DPID/stat" 2>/dev/null) || return 1
	[ "$st" != Z ] && [ -n "$st" ]
}

# ---- start hoistd and wait for READY -------------------------------------
mkfifo "$DIR/ready.fifo" || { log "FAIL: mkfifo"; exit 1; }
# shellcheck disable=SC2086
"$HOISTD" --runtime-dir "$DIR" --ready-fd 3 ${HOISTD_ARGS:-} \
	3>"$DIR/ready.fifo" </dev/null >"$DIR/hoistd.out" 2>"$DIR/hoistd.log" &
DPID=$!
line=
# The open blocks until hoistd's side is open; EOF (hoistd died) ends the read.
if ! read -r -t "$ready_sec" line <"$DIR/ready.fifo" || [ "$line" != READY ]; then
	if daemon_alive; then
		log "FAIL: hoistd (pid $DPID) did not report READY within $ready_sec s (got '${line}')"
	else
		wait "$DPID" 2>/dev/null
		log "FAIL: hoistd exited (status $?) before reporting READY (got '${line}')"
	fi
	show_log=1
	exit 1
fi
for s in hoistd.sock stats.sock; do
	if [ ! -S "$DIR/$s" ]; then
		log "FAIL: hoistd reported READY but $DIR/$s is not a socket"
		show_log=1
		exit 1
	fi
done

export HOIST_RUNTIME_DIR=$DIR
export HOISTD_PID=$DPID
export HOIST_HOISTD=$HOISTD
export HOIST_HOISTRUN=$HOISTRUN
export HOIST_HOISTCTL=$HOISTCTL
HOIST_BIN_DIR=$(cd "$(dirname "$HOISTRUN")" && pwd)
export HOIST_BIN_DIR
export IT_SRC_DIR=$here

# ---- run the test ----------------------------------------------------------
run_test "$test_sec" "$@"

# ---- the daemon must have survived and must stop cleanly -------------------
if ! daemon_alive; then
	wait "$DPID" 2>/dev/null
	dstatus=$?
	log "FAIL: hoistd died during the test (wait status $dstatus)"
	DPID=
	show_log=1
	exit 1
fi
if ! "$HOISTCTL" --runtime-dir "$DIR" ping >/dev/null 2>"$DIR/ping.err"; then
	log "FAIL: hoistd is alive but does not answer 'hoistctl ping' after the test: $(cat "$DIR/ping.err")"
	show_log=1
	status=1
fi
kill -TERM "$DPID"
for _ in $(seq 1 "$stop_ticks"); do
	daemon_alive || break
	sleep 0.1
done
if daemon_alive; then
	log "FAIL: hoistd did not exit within $((stop_ticks / 10)) s of SIGTERM"
	show_log=1
	exit 1
fi
wait "$DPID"
dstatus=$?
DPID=
if [ "$dstatus" -ne 0 ]; then
	log "FAIL: hoistd exited with status $dstatus after SIGTERM (expected 0)"
	show_log=1
	exit 1
fi
# the tests give the daemon its settings as flags or HOISTD_*: a deprecated
# HOIST_<SETTING> in effect means one of them leaks a client's variable
if grep -q "is deprecated for the daemon" "$DIR/hoistd.log"; then
	log "FAIL: hoistd used a deprecated HOIST_<SETTING>: $(grep "is deprecated for the daemon" "$DIR/hoistd.log")"
	show_log=1
	exit 1
fi
if [ -e "$DIR/hoistd.sock" ] || [ -e "$DIR/stats.sock" ]; then
	log "note: hoistd left its sockets behind in $DIR"
fi
exit "$status"
