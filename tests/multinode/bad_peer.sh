#!/usr/bin/env bash
# bad_peer.sh KEY|NODES|MODE <mn_init_fail> <it_putget>: run under
#   cluster.sh 2 --wrong-key 1  --daemon-arg=--job-timeout-ms=2000   (KEY)
#   cluster.sh 2 --extra-node 1 --daemon-arg=--job-timeout-ms=2000   (NODES)
#   cluster.sh 2 --node-arg=1:--frame-integrity=off --daemon-arg=--job-timeout-ms=2000 (MODE)
# Daemon 1 holds another cluster key (KEY), a node list with a different
# node count (NODES) or another frame_integrity than daemon 0's default
# mac (MODE), so the handshake between the daemons fails.
# Checks:
#   - a 2-PE job spanning both daemons (rank 0 on daemon 0, rank 1 on
#     daemon 1) cannot assemble: hoist_init returns -ETIMEDOUT on both
#     ranks (after job_timeout_ms);
#   - the peers never count as "up", never connected;
#   - KEY: auth_failures > 0 on both daemons and both logs say "failed
#     authentication" (each daemon, as connector, checks the acceptor's mac
#     first, so an honest daemon with the wrong key never gets as far as
#     sending its own mac); then a rogue connector (mn_rogue.py) that skips
#     that check and sends a wrong mac must be refused by daemon 0 as
#     acceptor: connection closed, "does not hold the cluster key" logged,
#     auth_failures of the node it claims to be counted;
#     NODES: each daemon logs the other's refused hello ("bad hello");
#     MODE: each daemon logs "frame_integrity mismatch" naming both modes
#     (as acceptor and as connector), no auth_failures;
#   - both daemons still serve local jobs (it_putget, 2 PEs each).
set -u
mode=$1 initfail=$2 putget=$3
: "${HOIST_DIRS:?run me under cluster.sh}"
case $mode in KEY | NODES | MODE) ;; *) echo "usage: $0 KEY|NODES|MODE mn_init_fail it_putget" >&2; exit 2 ;; esac
fail=0
FAIL() { echo "[bad_peer.sh $mode] FAIL: $*" >&2; fail=1; }
stats() { "$HOIST_HOISTCTL" --runtime-dir "$1" stats --json; }
dirs=("$HOIST_DIR_0" "$HOIST_DIR_1")

export HOIST_JOB=badpeer-$$ HOIST_SIZE=2
HOIST_RUNTIME_DIR=$HOIST_DIR_0 HOIST_RANK=0 "$initfail" ETIMEDOUT &
r0=$!
HOIST_RUNTIME_DIR=$HOIST_DIR_1 HOIST_RANK=1 "$initfail" ETIMEDOUT &
r1=$!
unset HOIST_JOB HOIST_SIZE
wait "$r0"
s0=$?
wait "$r1"
s1=$?
[ "$s0" -eq 0 ] || FAIL "rank 0 (daemon 0): hoist_init did not fail with -ETIMEDOUT (status $s0)"
[ "$s1" -eq 0 ] || FAIL "rank 1 (daemon 1): hoist_init did not fail with -ETIMEDOUT (status $s1)"

for i in 0 1; do
	o=$((1 - i))
	checks=("p[$o]['state'] != 'up'" "p[$o]['counters']['connects'] == 0" "d['jobs_timed_out'] >= 1")
	[ "$mode" = KEY ] && checks+=("p[$o]['counters']['auth_failures'] > 0")
	[ "$mode" = MODE ] && checks+=("p[$o]['counters']['auth_failures'] == 0")
	stats "${dirs[$i]}" | python3 "$MN_SRC_DIR/mn_stats.py" check "${checks[@]}" ||
		FAIL "stats of daemon $i (above)"
done

if [ "$mode" = KEY ]; then
	for i in 0 1; do
		grep -q "failed authentication" "${dirs[$i]}/hoistd.log" ||
			FAIL "daemon $i did not log 'failed authentication'"
	done
	af() { stats "$HOIST_DIR_0" | python3 "$MN_SRC_DIR/mn_stats.py" peer 1 auth_failures; }
	before=$(af)
	port0=${CLUSTER_NODES%%,*}
	port0=${port0##*:}
	python3 "$MN_SRC_DIR/mn_rogue.py" 127.0.0.1 "$port0" 1 2 ||
		FAIL "daemon 0 did not refuse a connector with a wrong mac (mn_rogue.py, above)"
	after=$(af)
	[ "${after:-0}" -gt "${before:-0}" ] ||
		FAIL "daemon 0: auth_failures of node 1 did not grow after the rogue's wrong mac ($before -> $after)"
	grep -q "does not hold the cluster key" "$HOIST_DIR_0/hoistd.log" ||
		FAIL "daemon 0 did not log 'does not hold the cluster key' for the rogue"
elif [ "$mode" = MODE ]; then
	for i in 0 1; do
		o=$((1 - i))
		m_self=mac m_other=off
		[ "$i" = 1 ] && m_self=off m_other=mac
		grep -q "refused node $o: frame_integrity mismatch (this daemon: $m_self, node $o: $m_other)" \
			"${dirs[$i]}/hoistd.log" ||
			FAIL "daemon $i did not log the frame_integrity mismatch naming both modes"
	done
else
	# each daemon, as acceptor, refuses the other's hello
	for i in 0 1; do
		grep -q "bad hello" "${dirs[$i]}/hoistd.log" ||
			FAIL "daemon $i did not log a refused hello ('bad hello')"
	done
fi

for i in 0 1; do
	"$HOIST_HOISTRUN" -n 2 --runtime-dir "${dirs[$i]}" --job "local$i-$$" --timeout 60 "$putget" ||
		FAIL "a local job on daemon $i failed with status $?"
done

[ "$fail" = 0 ] && echo "[bad_peer.sh $mode] PASS" >&2
exit "$fail"
