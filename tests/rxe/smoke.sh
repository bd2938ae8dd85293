#!/bin/bash
# tests/rxe/smoke.sh [path/to/verbs_smoke] -- Soft-RoCE smoke test.
#
# On the host it boots one rxe VM with two rxe devices on the two ends of a
# veth wire (RXE_VM_NDEV=2, via run-in-vm.sh) and re-runs itself inside.
# In the guest it starts the verbs_smoke server on rxe0's IP, waits until it
# is listening, and runs the client bound to rxe1's IP, so the traffic really
# crosses the wire (-d checks that each side is on the expected device).
# Exit: 0 pass, 1 fail, 77 skip (VM cannot run here), 124/125 VM trouble.
set -u

BIN=${1:-${VERBS_SMOKE:-./verbs_smoke}}
case "$BIN" in /*) ;; *) BIN=$(pwd -P)/$BIN ;; esac
PORT=${RXE_SMOKE_PORT:-7174}
SECS=${RXE_SMOKE_TIMEOUT:-240} # per verbs_smoke process

if [ "${RXE_VM:-0}" != 1 ]; then
    HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
    [ -x "$BIN" ] || { echo "smoke: $BIN not found (build the verbs_smoke target)" >&2; exit 1; }
    export RXE_VM_NDEV=2 RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-1700} RXE_VM_MEM=${RXE_VM_MEM:-512}
    exec "$HERE/run-in-vm.sh" "$HERE/smoke.sh" "$BIN"
fi

# ---- inside the VM ----
read -r -a ips <<< "$RXE_IPS"
read -r -a devs <<< "$RXE_DEVS"
[ ${#ips[@]} -ge 2 ] || { echo "smoke: needs 2 rxe devices, have: $RXE_DEVS" >&2; exit 1; }
echo "smoke: server ${devs[0]} ${ips[0]}:$PORT, client ${devs[1]} ${ips[1]}"

SLOG=/tmp/verbs_smoke.server.log
"$BIN" -s "${ips[0]}" -p "$PORT" -d "${devs[0]}" -t "$SECS" > "$SLOG" 2>&1 &
spid=$!

# Wait for the listener (shell builtins only: every exec is slow under TCG).
listening=0
for ((i = 0; i < 600; i++)); do
    while IFS= read -r line; do
        case "$line" in *"listening on"*) listening=1 ;; esac
    done < "$SLOG"
    [ $listening = 1 ] && break
    kill -0 "$spid" 2> /dev/null || break
    sleep 0.1
done
if [ $listening != 1 ]; then
    echo "smoke: FAIL: the server did not start listening" >&2
    cat "$SLOG" >&2
    kill "$spid" 2> /dev/null
    exit 1
fi

"$BIN" -c "${ips[0]}" -b "${ips[1]}" -p "$PORT" -d "${devs[1]}" -t "$SECS"
crc=$?
[ $crc = 0 ] || kill "$spid" 2> /dev/null # do not wait out the server's timeout
wait "$spid"
src=$?
cat "$SLOG"
for d in "${devs[@]}"; do
    c=/sys/class/infiniband/$d/ports/1/hw_counters
    read -r sent < "$c/sent_pkts"
    read -r rcvd < "$c/rcvd_pkts"
    read -r retry < "$c/completer_retry_err"
    echo "smoke: $d sent_pkts=$sent rcvd_pkts=$rcvd completer_retry_err=$retry"
done
echo "smoke: client rc=$crc server rc=$src"
[ $crc = 0 ] && [ $src = 0 ] && { echo "smoke: PASS"; exit 0; }
echo "smoke: FAIL"
exit 1
