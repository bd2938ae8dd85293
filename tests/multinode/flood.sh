#!/usr/bin/env bash
# flood.sh cap|emfile <it_putget>: run under `cluster.sh 2`, as a stranger
# flooding daemon 0's peer port (tests/multinode/mn_flood.py).
#
# cap    (daemon 0: --max-pending-peers=8 --handshake-timeout-ms=500)
#        200 connections that trickle a byte every 0.2 s (which kept them
#        forever before) while jobs over both daemons run: the jobs pass,
#        the daemon closes every stranger (cap and handshake deadline:
#        peer_conns_dropped), and says so in at most 2 log lines.
# emfile (daemon 0: --max-pending-peers=4096 --handshake-timeout-ms=1000,
#        its descriptor limit lowered to 48 with prlimit) 150 strangers run
#        it out of descriptors: it pauses accepting (accept_pauses) instead
#        of spinning on accept (its CPU time during the flood stays below
#        half the wall time; a spinning daemon takes a whole CPU), logs at
#        most 2 lines about it, closes every stranger in the end, and
#        serves a job across both daemons afterwards.
set -u
mode=$1 putget=$2
: "${HOIST_DIRS:?run me under cluster.sh}"
fail=0
FAIL() { echo "[flood.sh $mode] FAIL: $*" >&2; fail=1; }
log() { echo "[flood.sh $mode] $*" >&2; }
stat0() { # daemon 0's counter $1
	"$HOIST_HOISTCTL" --runtime-dir "$HOIST_DIR_0" stats --json |
		python3 "$IT_SRC_DIR/it_json.py" max "$1"
}
cpu0() { awk '{print $14 + $15}' "/proc/$HOISTD_PID_0/stat"; }
target=${CLUSTER_NODES%%,*}
scale=${HOIST_TEST_SCALE:-1}

case $mode in
cap)
	python3 "$MN_SRC_DIR/mn_flood.py" "$target" 200 0.2 "$((10 * scale))" >"$CLUSTER_BASE/flood.out" &
	fpid=$!
	for i in 1 2; do
		"$HOIST_HOISTRUN" -n 4 --runtime-dirs "$HOIST_DIRS" --job "flood-$$-$i" "$putget" ||
			FAIL "job $i across the daemons failed (status $?) during the flood"
	done
	wait "$fpid"
	;;
emfile)
	prlimit --pid "$HOISTD_PID_0" --nofile=48:48 || { FAIL "prlimit"; exit 1; }
	c0=$(cpu0)
	t0=$(date +%s.%N)
	python3 "$MN_SRC_DIR/mn_flood.py" "$target" 150 0.2 "$((10 * scale))" >"$CLUSTER_BASE/flood.out"
	t1=$(date +%s.%N)
	c1=$(cpu0)
	hz=$(getconf CLK_TCK)
	share=$(awk -v c="$((c1 - c0))" -v hz="$hz" -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", c / hz / (b - a)}')
	log "daemon 0 used $share of a CPU during the flood"
	awk -v s="$share" 'BEGIN{exit !(s < 0.5)}' || FAIL "daemon 0 used $share of a CPU: it spins on accept"
	pauses=$(stat0 accept_pauses)
	[ "${pauses:--1}" -ge 1 ] || FAIL "accept_pauses is ${pauses:-missing}: it never ran out of descriptors, or does not pause"
	prlimit --pid "$HOISTD_PID_0" --nofile=65536:65536 || prlimit --pid "$HOISTD_PID_0" --nofile=1024:1024
	"$HOIST_HOISTRUN" -n 4 --runtime-dirs "$HOIST_DIRS" --job "flood-$$" "$putget" ||
		FAIL "a job across the daemons failed (status $?) after the flood"
	;;
*) echo "usage: $0 cap|emfile it_putget" >&2; exit 2 ;;
esac

out=$(cat "$CLUSTER_BASE/flood.out")
log "flood: $out"
opened=$(sed -n 's/.*opened=\([0-9]*\).*/\1/p' <<<"$out")
open=$(sed -n 's/.*still_open=\([0-9]*\).*/\1/p' <<<"$out")
[ "${opened:-0}" -gt 0 ] || FAIL "the flood opened no connection"
[ "${open:-1}" = 0 ] || FAIL "$open stranger connection(s) still open: no handshake deadline"
dropped=$(stat0 peer_conns_dropped)
[ "${dropped:--1}" -ge 1 ] || FAIL "peer_conns_dropped is ${dropped:-missing}"
lines=$(grep -c "peer connections:" "$HOIST_DIR_0/hoistd.log")
log "daemon 0: peer_conns_dropped=$dropped, $lines log line(s) about strangers"
[ "$lines" -ge 1 ] && [ "$lines" -le 2 ] || FAIL "$lines log lines about the strangers (want 1 or 2)"
"$HOIST_HOISTCTL" --runtime-dir "$HOIST_DIR_0" ping >/dev/null || FAIL "daemon 0 does not answer ping"
[ "$fail" = 0 ] && log "PASS"
exit "$fail"
