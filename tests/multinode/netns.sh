#!/usr/bin/env bash
# netns.sh <it_putget> <it_barrier>: two hoistd daemons in two network
# namespaces made by this test, joined by a veth pair (192.0.2.1/24 and
# 192.0.2.2/24, TEST-NET-1, only inside these namespaces).
#
# A 4-PE job (ranks 0,1 in namespace A on daemon 0, ranks 2,3 in namespace
# B on daemon 1; each PE is started inside its daemon's namespace and finds
# the daemon through its runtime directory - unix sockets in the file
# system work across network namespaces) runs it_putget, then it_barrier.
# Checks: both jobs pass; each daemon lists the other as peer "up" at its
# 192.0.2.x address with bytes in and out; the veth really carried the
# traffic (rx_bytes); both daemons stay alive and exit 0 on SIGTERM.
# The namespaces (and with them the veth pair) are deleted on every exit.
#
# Exit 77 when `ip` is missing or network namespaces cannot be made (not
# root / no CAP_NET_ADMIN). Binaries: $HOIST_HOISTD, $HOIST_HOISTCTL.
set -u
putget=$1 barrier=$2
: "${HOIST_HOISTD:=hoistd}" "${HOIST_HOISTCTL:=hoistctl}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "[netns.sh] $*" >&2; }
. "$here/netns_pair.sh"
fail=0
FAIL() { log "FAIL: $*"; fail=1; }

if ! command -v ip >/dev/null 2>&1; then
	log "SKIP: the 'ip' command (iproute2) is missing"
	exit 77
fi
NSA=hoist-mn-$$-a
NSB=hoist-mn-$$-b
VA=hmn$$a
VB=hmn$$b
BASE=
pids=()
show_log=0

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local p
	for p in "${pids[@]}"; do
		[ -n "$p" ] && kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	netns_pair_down
	if [ -n "$BASE" ]; then
		if [ "$show_log" = 1 ] || [ "${IT_VERBOSE:-0}" = 1 ]; then
			for i in 0 1; do
				[ -s "$BASE/node$i/hoistd.log" ] || continue
				echo "----- hoistd node $i log (last 60 lines) -----" >&2
				tail -n 60 "$BASE/node$i/hoistd.log" >&2
			done
		fi
		rm -rf "$BASE"
	fi
}
trap cleanup EXIT
trap 'log "interrupted"; show_log=1; exit 1' INT TERM HUP

netns_pair_up

BASE=$(mktemp -d /tmp/hoist-netns.XXXXXX) || { FAIL "mktemp"; exit 1; }
chmod 0700 "$BASE"
KEY=$BASE/cluster.key
(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$KEY")
PORT=7750 # fresh namespaces: nothing else listens there
NODES=192.0.2.1:$PORT,192.0.2.2:$PORT
ns=("$NSA" "$NSB")
for i in 0 1; do
	d=$BASE/node$i
	mkdir -m 0700 "$d" && mkfifo "$d/ready.fifo" || { FAIL "mkdir/mkfifo $d"; exit 1; }
	ip netns exec "${ns[$i]}" "$HOIST_HOISTD" --runtime-dir "$d" --nodes "$NODES" --node-id "$i" \
		--cluster-key-file "$KEY" --ready-fd 3 --heartbeat-ms 200 \
		3>"$d/ready.fifo" </dev/null >"$d/hoistd.out" 2>"$d/hoistd.log" &
	pids[i]=$!
done
for i in 0 1; do
	line=
	if ! read -r -t 10 line <"$BASE/node$i/ready.fifo" || [ "$line" != READY ]; then
		FAIL "hoistd of node $i (namespace ${ns[$i]}) did not report READY within 10 s"
		show_log=1
		exit 1
	fi
done

# ranks 0,1 on node 0 (namespace A), ranks 2,3 on node 1 (namespace B)
run_job() {
	local prog=$1 job=$2 r st ok=0
	local rp=()
	for r in 0 1 2 3; do
		i=$((r / 2))
		ip netns exec "${ns[$i]}" env HOIST_RUNTIME_DIR="$BASE/node$i" HOIST_RANK=$r HOIST_SIZE=4 \
			HOIST_JOB="$job" timeout -k 5 90 "$prog" &
		rp+=($!)
	done
	for r in 0 1 2 3; do
		wait "${rp[$r]}"
		st=$?
		if [ "$st" -ne 0 ]; then
			FAIL "$(basename "$prog") rank $r (namespace ${ns[$((r / 2))]}) exited with status $st"
			ok=1
		fi
	done
	return $ok
}
run_job "$putget" "netns-putget-$$" || show_log=1
run_job "$barrier" "netns-barrier-$$" || show_log=1

for i in 0 1; do
	o=$((1 - i))
	"$HOIST_HOISTCTL" --runtime-dir "$BASE/node$i" stats --json | python3 "$here/mn_stats.py" check \
		"d['node_id'] == $i" "d['nodes'] == 2" "sorted(p) == [$o]" "p[$o]['state'] == 'up'" \
		"p[$o]['addr'] == '192.0.2.$((o + 1)):$PORT'" \
		"p[$o]['counters']['bytes_out'] > 1000000" "p[$o]['counters']['bytes_in'] > 1000000" \
		"p[$o]['counters']['ops_out'] > 0" "p[$o]['counters']['ops_in'] > 0" \
		"p[$o]['counters']['losses'] == 0" "p[$o]['counters']['auth_failures'] == 0" ||
		FAIL "stats of daemon $i (above)"
done
rx=$(ip netns exec "$NSA" cat "/sys/class/net/$VA/statistics/rx_bytes" 2>/dev/null)
tx=$(ip netns exec "$NSA" cat "/sys/class/net/$VA/statistics/tx_bytes" 2>/dev/null)
log "veth $VA: rx $rx bytes, tx $tx bytes"
[ "${rx:-0}" -gt 1000000 ] && [ "${tx:-0}" -gt 1000000 ] ||
	FAIL "the veth pair carried little traffic (rx ${rx:-?} tx ${tx:-?} bytes): the daemons did not talk over it"

# both daemons alive, then a clean stop
for i in 0 1; do
	if ! kill -0 "${pids[$i]}" 2>/dev/null; then
		FAIL "hoistd of node $i died during the test"
		wait "${pids[$i]}" 2>/dev/null
		pids[i]=
		show_log=1
	fi
done
for i in 0 1; do [ -n "${pids[$i]}" ] && kill -TERM "${pids[$i]}"; done
for i in 0 1; do
	p=${pids[$i]}
	[ -n "$p" ] || continue
	for _ in $(seq 1 50); do
		kill -0 "$p" 2>/dev/null || break
		[ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = Z ] && break
		sleep 0.1
	done
	if kill -0 "$p" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ]; then
		FAIL "hoistd of node $i did not exit within 5 s of SIGTERM"
		show_log=1
		continue
	fi
	wait "$p"
	st=$?
	pids[i]=
	[ "$st" -eq 0 ] || { FAIL "hoistd of node $i exited with status $st after SIGTERM"; show_log=1; }
done
[ "$fail" = 0 ] && log "PASS" || show_log=1
exit "$fail"
