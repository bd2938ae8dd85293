#!/usr/bin/env bash
# log_format.sh <hoistd>: log lines carry a UTC timestamp, pid and level
# when stderr is a file or terminal, and the sd-daemon(3) level prefix with
# nothing else when stderr is the journal's stream (JOURNAL_STREAM names
# stderr's device:inode, as systemd sets it).
set -u
hoistd=$1
d=$(mktemp -d /tmp/hoist-log.XXXXXX)
trap 'rm -rf "$d"' EXIT
fail=0
run() { # run [env...]: start, wait for READY, stop; log in $d/log
	exec 4>"$d/log" # truncates in place: the inode JOURNAL_STREAM names stays
	env "$@" "$hoistd" --runtime-dir "$d/rt" --ready-fd 3 3>"$d/ready" 2>&4 &
	local pid=$! i
	for i in $(seq 1 $((3000 * ${HOIST_TEST_SCALE:-1}))); do grep -q READY "$d/ready" 2>/dev/null && break; sleep 0.02; done
	kill -TERM "$pid"
	wait "$pid"
	exec 4>&-
}
run
if ! grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z hoistd\[[0-9]+\] info: ready: ' "$d/log"; then
	echo "[log_format] FAIL: no timestamped 'info: ready' line off the journal:" >&2
	cat "$d/log" >&2
	fail=1
fi
: >"$d/log"
js=$(stat -c '%d:%i' "$d/log")
run JOURNAL_STREAM="$js"
if ! grep -q '^<6>hoistd: ready: ' "$d/log" || grep -Eq '^[0-9]{4}-' "$d/log"; then
	echo "[log_format] FAIL: under the journal ($js) want '<6>hoistd: ...' lines only:" >&2
	cat "$d/log" >&2
	fail=1
fi
[ "$fail" = 0 ] && echo "[log_format] PASS" >&2
exit "$fail"
