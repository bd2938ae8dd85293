#!/usr/bin/env bash
# Multi-node test harness: K fresh hoistd daemons on loopback, one cluster.
#
#   cluster.sh K [option]... -- command [args...]
#
# Options (repeatable where it makes sense):
#   --daemon-arg ARG     pass ARG to every daemon (e.g. --daemon-arg=--heartbeat-ms=100)
#   --node-arg I:ARG     pass ARG to daemon I only (after the others: it wins)
#   --wrong-key I        daemon I gets a key of its own instead of the cluster's
#   --extra-node I       daemon I gets the node list plus one more (unused) node
#                        (an inconsistent node count)
#   --via I:J            daemon I names node J at a port of its own instead of
#                        J's (node lists need only agree in length): the test
#                        puts a proxy there (CLUSTER_VIA_PORT) that forwards to
#                        J's port (CLUSTER_VIA_TARGET); until it does, daemon I
#                        cannot reach node J
#
# 1. makes a base directory (mktemp -d, 0700) holding the cluster key (0600,
#    32 random bytes hex) and one runtime directory per daemon (0700),
# 2. picks K free loopback ports, starts daemon i as
#      hoistd --runtime-dir DIR_i --nodes 127.0.0.1:P0,... --node-id i
#             --cluster-key-file KEY --ready-fd 3 [args]
#    (--nodes @DIR_i/nodes, a hostfile, when the list is longer than the
#    255 bytes a setting holds: from about 16 daemons)
#    and waits up to 10 s for each one's "READY" (fd 3 is a fifo),
# 3. exports HOIST_DIRS=DIR_0,DIR_1,..., HOIST_DIR_0..HOIST_DIR_{K-1},
#    HOISTD_PIDS=pid0,pid1,..., HOISTD_PID_0.., CLUSTER_KEY (key path),
#    CLUSTER_NODES (the node list), CLUSTER_BASE, CLUSTER_KILLED (a file:
#    a test that kills or stops a daemon on purpose writes its pid there,
#    one per line), HOIST_HOISTD/HOIST_HOISTRUN/HOIST_HOISTCTL, MN_SRC_DIR
#    (this directory), IT_SRC_DIR (tests/integration) and, with --via,
#    CLUSTER_VIA_PORT and CLUSTER_VIA_TARGET, and runs the
#    command under `timeout ${CLUSTER_TIMEOUT:-150}`,
# 4. then every daemon not listed in CLUSTER_KILLED must still be alive,
#    answer `hoistctl ping`, and exit with status 0 within 5 s of SIGTERM;
#    daemons that were listed are killed (SIGKILL after SIGCONT) and reaped,
# 5. prints the daemons' logs when anything failed (or with IT_VERBOSE=1)
#    and removes the directories (unless IT_KEEP=1).
#
# CLUSTER_IPS="IP0 IP1 ..." (optional): daemon i binds IP_i (modulo the count)
# instead of 127.0.0.1, e.g. one daemon per rxe device in tests/rxe.
#
# HOIST_TEST_SCALE (a factor >= 1): multiplies CLUSTER_READY_SEC (default
# 10), CLUSTER_TIMEOUT (default 150) and the 5 s stop after SIGTERM, like
# harness.sh, and the daemons' peer_timeout_ms and handshake_timeout_ms
# (default 5000 each; a test's own --daemon-arg still wins).
#
# Binaries: $HOIST_HOISTD, $HOIST_HOISTRUN, $HOIST_HOISTCTL (default: from
# PATH). Exit status: the command's (77 = skipped) unless a daemon
# misbehaved, in which case 1.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${HOIST_HOISTD:=hoistd}" "${HOIST_HOISTRUN:=hoistrun}" "${HOIST_HOISTCTL:=hoistctl}"

usage() {
	echo "usage: $0 K [--daemon-arg ARG]... [--node-arg I:ARG]... [--wrong-key I] [--extra-node I] [--via I:J] -- command..." >&2
	exit 2
}
[ $# -ge 3 ] || usage
K=$1
shift
case $K in '' | *[!0-9]*) usage ;; esac
[ "$K" -ge 1 ] && [ "$K" -le 64 ] || usage

common=()
declare -A node_args=()
wrong_key=-1
extra_node=-1
via_from=-1
via_to=-1
while [ $# -gt 0 ]; do
	case $1 in
	--daemon-arg) [ $# -ge 2 ] || usage; common+=("$2"); shift 2 ;;
	--daemon-arg=*) common+=("${1#--daemon-arg=}"); shift ;;
	--node-arg) [ $# -ge 2 ] || usage; i=${2%%:*}; node_args[$i]+="${2#*:}"$'\n'; shift 2 ;;
	--node-arg=*) v=${1#--node-arg=}; i=${v%%:*}; node_args[$i]+="${v#*:}"$'\n'; shift ;;
	--wrong-key) [ $# -ge 2 ] || usage; wrong_key=$2; shift 2 ;;
	--extra-node) [ $# -ge 2 ] || usage; extra_node=$2; shift 2 ;;
	--via) [ $# -ge 2 ] || usage; via_from=${2%%:*}; via_to=${2#*:}; shift 2 ;;
	--) shift; break ;;
	*) usage ;;
	esac
done
[ $# -ge 1 ] || usage

name=$(basename -- "$1")
for a in "$@"; do
	case $(basename -- "$a") in it_* | mn_* | *.sh) name=$(basename -- "$a"); break ;; esac
done
log() { echo "[cluster $name] $*" >&2; }

. "$here/../integration/runner.sh" # scaled, run_test
ready_sec=$(scaled "${CLUSTER_READY_SEC:-10}")
test_sec=$(scaled "${CLUSTER_TIMEOUT:-150}")
stop_ticks=$(($(scaled 5) * 10))

for b in "$HOIST_HOISTD" "$HOIST_HOISTRUN" "$HOIST_HOISTCTL"; do
	if ! command -v "$b" >/dev/null 2>&1; then
		log "FAIL: $b is not an executable"
		exit 1
	fi
done
command -v python3 >/dev/null 2>&1 || { log "SKIP: python3 missing"; exit 77; }

BASE=$(mktemp -d /tmp/hoist-mn.XXXXXX) || { log "FAIL: mktemp"; exit 1; }
chmod 0700 "$BASE"
pids=()
dirs=()
show_log=0
status=1

# A daemon that is gone (or a zombie) is dead.
alive() {
	local st
	kill -0 "$1" 2>/dev/null || return 1
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

# shellcheck disable=SC2317 # called from cleanup (EXIT trap)
print_logs() {
	local i
	for i in "${!dirs[@]}"; do
		if [ -s "${dirs[$i]}/hoistd.log" ]; then
			echo "----- hoistd node $i log (${dirs[$i]}/hoistd.log, last 60 lines) -----" >&2
			tail -n 60 "${dirs[$i]}/hoistd.log" >&2
		fi
	done
	[ ${#dirs[@]} -gt 0 ] && echo "----- end of hoistd logs -----" >&2
}

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local p
	for p in "${pids[@]}"; do
		if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
			kill -CONT "$p" 2>/dev/null
			kill -KILL "$p" 2>/dev/null
			wait "$p" 2>/dev/null
		fi
	done
	if [ "$show_log" = 1 ] || [ "${IT_VERBOSE:-0}" = 1 ]; then
		print_logs
	fi
	if [ "${IT_KEEP:-0}" = 1 ]; then
		log "keeping $BASE"
	else
		rm -rf "$BASE"
	fi
}
trap cleanup EXIT
trap 'log "interrupted"; show_log=1; exit 1' INT TERM HUP

# ---- key and ports -----------------------------------------------------------
KEY=$BASE/cluster.key
(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$KEY") || { log "FAIL: cannot write the key"; exit 1; }
chmod 0600 "$KEY"
# K (+1 for --extra-node) free ports, all bound at once so they differ
nports=$K
[ "$extra_node" -ge 0 ] && nports=$((K + 1))
[ "$via_from" -ge 0 ] && nports=$((nports + 1))
ports=$(python3 - "$nports" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
) || { log "FAIL: cannot pick free ports"; exit 1; }
read -r -a port <<<"$ports"
read -r -a cips <<<"${CLUSTER_IPS:-127.0.0.1}"
NODES=
for ((i = 0; i < K; i++)); do NODES+="${NODES:+,}${cips[$((i % ${#cips[@]}))]}:${port[$i]}"; done

# ---- start the daemons ----------------------------------------------------------
for ((i = 0; i < K; i++)); do
	d=$BASE/node$i
	mkdir -m 0700 "$d" || { log "FAIL: mkdir $d"; exit 1; }
	dirs[i]=$d
	key=$KEY
	nodes=$NODES
	if [ "$i" = "$wrong_key" ]; then
		key=$BASE/wrong.key
		(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$key")
	fi
	[ "$i" = "$extra_node" ] && nodes="$NODES,${cips[0]}:${port[$K]}"
	if [ "$i" = "$via_from" ]; then
		nodes=
		for ((j = 0; j < K; j++)); do
			pj=${port[$j]}
			[ "$j" = "$via_to" ] && pj=${port[$((nports - 1))]}
			nodes+="${nodes:+,}${cips[$((j % ${#cips[@]}))]}:$pj"
		done
	fi
	extra=()
	if [ -n "${node_args[$i]:-}" ]; then
		mapfile -t extra < <(printf '%s' "${node_args[$i]}")
	fi
	mkfifo "$d/ready.fifo" || { log "FAIL: mkfifo"; exit 1; }
	# a slow (sanitizer) build stretches the daemons' liveness limits too;
	# the test's own --daemon-arg/--node-arg come after and win
	scaled_limits=()
	if [ "$(scaled 5000)" != 5000 ]; then
		scaled_limits=(--peer-timeout-ms="$(scaled 5000)" --handshake-timeout-ms="$(scaled 5000)")
	fi
	# a setting holds at most 255 bytes: a longer list (16+ daemons) goes
	# to the daemon as a hostfile, one host:port a line
	if [ ${#nodes} -gt 255 ]; then
		tr ',' '\n' <<<"$nodes" >"$d/nodes" || { log "FAIL: cannot write $d/nodes"; exit 1; }
		nodes=@$d/nodes
	fi
	"$HOIST_HOISTD" --runtime-dir "$d" --nodes "$nodes" --node-id "$i" --cluster-key-file "$key" \
		--ready-fd 3 "${scaled_limits[@]}" "${common[@]}" "${extra[@]}" \
		3>"$d/ready.fifo" </dev/null >"$d/hoistd.out" 2>"$d/hoistd.log" &
	pids[i]=$!
done
for ((i = 0; i < K; i++)); do
	line=
	if ! read -r -t "$ready_sec" line <"${dirs[$i]}/ready.fifo" || [ "$line" != READY ]; then
		if alive "${pids[$i]}"; then
			log "FAIL: hoistd of node $i (pid ${pids[$i]}) did not report READY within $ready_sec s (got '$line')"
		else
			wait "${pids[$i]}" 2>/dev/null
			log "FAIL: hoistd of node $i exited (status $?) before reporting READY"
		fi
		show_log=1
		exit 1
	fi
done

export HOIST_DIRS
HOIST_DIRS=$(IFS=,; echo "${dirs[*]}")
export HOISTD_PIDS
HOISTD_PIDS=$(IFS=,; echo "${pids[*]}")
for ((i = 0; i < K; i++)); do
	export "HOIST_DIR_$i=${dirs[$i]}" "HOISTD_PID_$i=${pids[$i]}"
done
export CLUSTER_KEY=$KEY CLUSTER_NODES=$NODES CLUSTER_BASE=$BASE CLUSTER_KILLED=$BASE/killed
if [ "$via_from" -ge 0 ]; then
	export CLUSTER_VIA_PORT=${port[$((nports - 1))]} CLUSTER_VIA_TARGET=${port[$via_to]}
fi
export HOIST_HOISTD HOIST_HOISTRUN HOIST_HOISTCTL
export MN_SRC_DIR=$here
IT_SRC_DIR=$(cd "$here/../integration" && pwd)
export IT_SRC_DIR
: >"$CLUSTER_KILLED"

# ---- run the test -----------------------------------------------------------------
run_test "$test_sec" "$@"

# ---- every daemon not killed on purpose must be alive and stop cleanly --------------
killed=" $(tr '\n,' '  ' <"$CLUSTER_KILLED") "
bad=0
for ((i = 0; i < K; i++)); do
	p=${pids[$i]}
	case $killed in
	*" $p "*)
		kill -CONT "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		pids[i]=
		continue
		;;
	esac
	if ! alive "$p"; then
		wait "$p" 2>/dev/null
		log "FAIL: hoistd of node $i (pid $p) died during the test (wait status $?)"
		pids[i]=
		bad=1
		continue
	fi
	if ! "$HOIST_HOISTCTL" --runtime-dir "${dirs[$i]}" ping >/dev/null 2>"$BASE/ping.err"; then
		log "FAIL: hoistd of node $i is alive but does not answer 'hoistctl ping': $(cat "$BASE/ping.err")"
		bad=1
	fi
done
for ((i = 0; i < K; i++)); do
	[ -n "${pids[$i]}" ] && kill -TERM "${pids[$i]}" 2>/dev/null
done
for ((i = 0; i < K; i++)); do
	p=${pids[$i]}
	[ -n "$p" ] || continue
	for _ in $(seq 1 "$stop_ticks"); do
		alive "$p" || break
		sleep 0.1
	done
	if alive "$p"; then
		log "FAIL: hoistd of node $i did not exit within $((stop_ticks / 10)) s of SIGTERM"
		bad=1
		continue
	fi
	wait "$p"
	ds=$?
	pids[i]=
	if [ "$ds" -ne 0 ]; then
		log "FAIL: hoistd of node $i exited with status $ds after SIGTERM (expected 0)"
		bad=1
	fi
done
for ((i = 0; i < K; i++)); do # settings go as flags or HOISTD_*
	if grep -q "is deprecated for the daemon" "${dirs[$i]}/hoistd.log" 2>/dev/null; then
		log "FAIL: hoistd of node $i used a deprecated HOIST_<SETTING>: $(grep "is deprecated for the daemon" "${dirs[$i]}/hoistd.log")"
		bad=1
	fi
done
if [ "$bad" = 1 ]; then
	show_log=1
	exit 1
fi
exit "$status"
