#!/usr/bin/env bash
# hoistrun picks its daemon (issue 13):
#  1. nothing answers in HOIST_RUNTIME_DIR (an empty directory): hoistrun
#     starts a private hoistd in a fresh 0700 directory, the job passes, and
#     afterwards that daemon is gone, its directory removed, and the empty
#     directory still empty;
#  2. a hoistd answers in HOIST_RUNTIME_DIR, or in --runtime-dir: hoistrun
#     uses it (-v says so; the daemon counts the attaches).
#
#   private_daemon.sh <hoistrun> <hoistd> <hoistctl> <PE program>
set -euo pipefail
HOISTRUN=$1 HOISTD=$2 HOISTCTL=$3 PROG=$4
T=$(mktemp -d /tmp/hoist-hr.XXXXXX)
dpid=
cleanup() {
	if [[ -n "$dpid" ]] && kill -0 "$dpid" 2>/dev/null; then kill -KILL "$dpid"; fi
	rm -rf "$T"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

echo "---- 1. no daemon anywhere: HOIST_RUNTIME_DIR is an empty directory"
mkdir "$T/empty"
rc=0
HOIST_RUNTIME_DIR=$T/empty "$HOISTRUN" -v -n 2 "$PROG" >"$T/out1" 2>&1 || rc=$?
cat "$T/out1"
((rc == 0)) || fail "hoistrun -n 2 exited $rc"
grep -q "no hoistd answers in $T/empty: starting a private one" "$T/out1" ||
	fail "-v does not say that it starts a private hoistd"
line=$(grep "started a private hoistd" "$T/out1") || fail "no 'started a private hoistd' line"
pid=$(sed -E 's/.*pid ([0-9]+)\).*/\1/' <<<"$line")
dir=$(sed -E 's/.* in (.*) for this job$/\1/' <<<"$line")
echo "private hoistd: pid $pid, runtime dir $dir"
grep -q "stopped the private hoistd (pid $pid): exit status 0" "$T/out1" ||
	fail "the private hoistd was not stopped with exit status 0"
if [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == hoistd ]]; then
	fail "the private hoistd $pid is still running"
fi
[[ ! -e "$dir" ]] || fail "the private runtime directory $dir is left over"
[[ -z "$(ls -A "$T/empty")" ]] || fail "hoistrun created files in HOIST_RUNTIME_DIR: $(ls -A "$T/empty")"
# the private directory is 0700 (seen while the job runs)
HOIST_RUNTIME_DIR=$T/empty "$HOISTRUN" -v -n 1 -- sh -c 'stat -c %a "$HOIST_RUNTIME_DIR"; stat -c %a "$HOIST_RUNTIME_DIR/.."' \
	>"$T/out1b" 2>&1 || fail "hoistrun -n 1 sh: $(cat "$T/out1b")"
modes=$(grep -E '^[0-7]{3}$' "$T/out1b" | tr '\n' ' ')
echo "private runtime dir and its parent: modes $modes"
[[ "$modes" == "700 700 " ]] || fail "private runtime directory modes are '$modes', not 700 700"

echo "---- 2. a daemon answers: hoistrun uses it"
mkdir -m 0700 "$T/node"
mkfifo "$T/ready"
"$HOISTD" --runtime-dir "$T/node" --ready-fd 4 4>"$T/ready" 2>"$T/hoistd.log" &
dpid=$!
exec 3<"$T/ready"
read -r -u 3 ready || true
exec 3<&-
[[ "$ready" == READY ]] || fail "hoistd did not get ready: $(cat "$T/hoistd.log")"
HOIST_RUNTIME_DIR=$T/node "$HOISTRUN" -v -n 2 "$PROG" >"$T/out2" 2>&1 || fail "hoistrun with HOIST_RUNTIME_DIR: $(cat "$T/out2")"
grep -q "using the hoistd answering in $T/node" "$T/out2" || fail "-v does not say it uses $T/node: $(cat "$T/out2")"
grep -q "private" "$T/out2" && fail "started a private hoistd although one answers"
env -u HOIST_RUNTIME_DIR "$HOISTRUN" -v -n 2 --runtime-dir "$T/node" "$PROG" >"$T/out3" 2>&1 ||
	fail "hoistrun --runtime-dir: $(cat "$T/out3")"
grep -q "using the hoistd answering in $T/node" "$T/out3" || fail "--runtime-dir: not used"
attaches=$("$HOISTCTL" --runtime-dir "$T/node" stats --json |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["attaches"])')
echo "the node's hoistd counted $attaches attaches"
((attaches == 4)) || fail "expected 4 attaches on the node's hoistd, got $attaches"
kill -TERM "$dpid"
rc=0
wait "$dpid" || rc=$?
dpid=
((rc == 0)) || fail "hoistd exited $rc"
echo "PASS"
