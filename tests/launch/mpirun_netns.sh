#!/usr/bin/env bash
# mpirun_netns.sh PROG...: Open MPI's mpirun across two "hosts" that are
# network namespaces made by this test, joined by a veth pair (192.0.2.1/24
# and 192.0.2.2/24, TEST-NET-1, only inside these namespaces).
#
# As on two real hosts:
#   - one hoistd per host, started by deploy/mpirun-prologue.sh run on that
#     host and stopped by deploy/mpirun-epilogue.sh; both daemons read one
#     configuration file (node list of the two addresses, the cluster key)
#     and no node_id: each must find its own index from its addresses;
#   - mpirun runs on host A with a hostfile naming both hosts (2 slots each)
#     and reaches host B through a launch agent (netns-agent.sh) instead of
#     ssh; Open MPI's out-of-band and TCP traffic is kept on the veth;
#   - the job key comes from Open MPI (no HOIST_JOB), every rank finds its
#     host's daemon (HOIST_RUNTIME_DIR is per host, as the default would be).
# Each PROG runs as `mpirun -np 4`: ranks 0,1 on host A, 2,3 on host B.
# Checks: mpirun exits 0 for each; each daemon derived node_id 0 / 1, saw the
# job's 4 ranks with 2 attached to it, has the other daemon as peer "up" at
# its 192.0.2.x address with traffic both ways; the veth carried it; the
# epilogues stop both daemons.
#
# Exit 77 when not root, when `ip`/`unshare`/`mpirun` are missing, or when
# network namespaces cannot be made. Binaries: $HOIST_HOISTD, $HOIST_HOISTCTL.
set -u
: "${HOIST_HOISTD:=hoistd}" "${HOIST_HOISTCTL:=hoistctl}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
deploy=$(cd "$here/../../deploy" && pwd)
log() { echo "[mpirun_netns.sh] $*" >&2; }
. "$here/../multinode/netns_pair.sh"
fail=0
FAIL() { log "FAIL: $*"; fail=1; }

for c in ip unshare mpirun; do
	if ! command -v "$c" >/dev/null 2>&1; then
		log "SKIP: '$c' is missing (mpirun: openmpi-bin, see scripts/deps.sh)"
		exit 77
	fi
done
if [ "$(id -u)" -ne 0 ]; then
	log "SKIP: needs root for network namespaces"
	exit 77
fi
NSA=hoist-ml-$$-a
NSB=hoist-ml-$$-b
VA=hml$$a
VB=hml$$b
BASE=
show_log=0
ns=("$NSA" "$NSB")
addr=(192.0.2.1 192.0.2.2)

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local i p
	if [ -n "$BASE" ]; then
		for i in 0 1; do # daemons a failed run left behind
			p=$(cat "$BASE/host$i/hoistd.pid" 2>/dev/null) || continue
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = hoistd ] && kill -KILL "$p" 2>/dev/null
		done
	fi
	netns_pair_down
	if [ -n "$BASE" ]; then
		if [ "$show_log" = 1 ] || [ "${IT_VERBOSE:-0}" = 1 ]; then
			for i in 0 1; do
				[ -s "$BASE/host$i/hoistd.log" ] || continue
				echo "----- hoistd host $i log (last 40 lines) -----" >&2
				tail -n 40 "$BASE/host$i/hoistd.log" >&2
			done
		fi
		rm -rf "$BASE"
	fi
}
trap cleanup EXIT
trap 'log "interrupted"; show_log=1; exit 1' INT TERM HUP

netns_pair_up
if ! unshare --uts true 2>/dev/null; then
	log "SKIP: cannot make a UTS namespace (unshare --uts) for the second host's name"
	exit 77
fi

BASE=$(mktemp -d /tmp/hoist-mpirun-netns.XXXXXX) || { FAIL "mktemp"; exit 1; }
chmod 0755 "$BASE"
(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$BASE/cluster.key")
PORT=7760 # fresh namespaces: nothing else listens there
# one configuration for both hosts, as /etc/hoist/hoistd.conf would be: no node_id
cat >"$BASE/hoistd.conf" <<CONF
nodes = 192.0.2.1:$PORT,192.0.2.2:$PORT
cluster_key_file = $BASE/cluster.key
heartbeat_ms = 200
CONF
printf '192.0.2.1 slots=2\n192.0.2.2 slots=2\n' >"$BASE/hostfile"
: >"$BASE/agent.map"
for i in 0 1; do
	echo "${addr[$i]} ${ns[$i]} $BASE/host$i hoist-host-$i" >>"$BASE/agent.map"
done
JOB=mpirun-netns-$$

# the prologue, run on each host (as ssh or pdsh would run it there)
for i in 0 1; do
	if ! ip netns exec "${ns[$i]}" env HOIST_RUNTIME_DIR="$BASE/host$i" HOISTD="$HOIST_HOISTD" \
		HOISTCTL="$HOIST_HOISTCTL" HOISTD_ARGS="--config $BASE/hoistd.conf" \
		bash "$deploy/mpirun-prologue.sh" "$JOB"; then
		FAIL "mpirun-prologue.sh on host $i (namespace ${ns[$i]}) failed"
		show_log=1
		exit 1
	fi
done

# Open MPI 4.1: processes launched on B through the agent, out-of-band and
# TCP BTL traffic on the veth; no tree spawn (only the two hosts).
# shellcheck disable=SC2054 # the commas are Open MPI's lists
mpi=(mpirun --allow-run-as-root -np 4 --hostfile "$BASE/hostfile"
	--mca plm_rsh_agent "$here/netns-agent.sh" --mca plm_rsh_no_tree_spawn 1
	--mca oob_tcp_if_include 192.0.2.0/24 --mca btl self,tcp --mca btl_tcp_if_include 192.0.2.0/24
	--mca orte_keep_fqdn_hostnames 1)
for prog in "$@"; do
	name=$(basename "$prog")
	log "run: ${mpi[*]} $name"
	out=$(ip netns exec "$NSA" env HOIST_RUNTIME_DIR="$BASE/host0" HOIST_AGENT_MAP="$BASE/agent.map" \
		timeout -k 10 150 "${mpi[@]}" "$prog" 2>&1)
	st=$?
	printf '%s\n' "$out" | sed "s/^/[$name] /" >&2
	if [ "$st" -ne 0 ]; then
		FAIL "mpirun $name exited with status $st"
		show_log=1
	fi
done

for i in 0 1; do
	o=$((1 - i))
	d=$BASE/host$i
	grep -q "node_id $i: node list entry ${addr[$i]}:$PORT is an address of this host" "$d/hoistd.log" ||
		FAIL "daemon on host $i did not derive node_id $i from its address"
	n=$(grep -c 'all 4 ranks attached (2 here)' "$d/hoistd.log")
	[ "$n" -eq "$#" ] || FAIL "daemon on host $i saw $n of $# jobs with 4 ranks, 2 of them attached to it"
	"$HOIST_HOISTCTL" --runtime-dir "$d" stats --json | python3 "$here/../multinode/mn_stats.py" check \
		"d['node_id'] == $i" "d['nodes'] == 2" "sorted(p) == [$o]" "p[$o]['state'] == 'up'" \
		"p[$o]['addr'] == '192.0.2.$((o + 1)):$PORT'" \
		"p[$o]['counters']['bytes_out'] > 100000" "p[$o]['counters']['bytes_in'] > 100000" \
		"p[$o]['counters']['auth_failures'] == 0" ||
		FAIL "stats of the daemon on host $i (above)"
done
rx=$(ip netns exec "$NSA" cat "/sys/class/net/$VA/statistics/rx_bytes" 2>/dev/null)
log "veth $VA: rx $rx bytes"
[ "${rx:-0}" -gt 100000 ] || FAIL "the veth pair carried little traffic (rx ${rx:-?} bytes)"

# the epilogue on each host stops the daemon its prologue started
for i in 0 1; do
	pid=$(cat "$BASE/host$i/hoistd.pid" 2>/dev/null)
	ip netns exec "${ns[$i]}" env HOIST_RUNTIME_DIR="$BASE/host$i" HOISTCTL="$HOIST_HOISTCTL" \
		bash "$deploy/mpirun-epilogue.sh" "$JOB" || FAIL "mpirun-epilogue.sh on host $i failed"
	if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = hoistd ] &&
		[ "$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)" != Z ]; then
		FAIL "hoistd of host $i (pid $pid) still runs after the epilogue"
	fi
done
[ "$fail" = 0 ] && log "PASS" || show_log=1
exit "$fail"
