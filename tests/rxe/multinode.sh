#!/bin/bash
# tests/rxe/multinode.sh BINDIR -- the multi-daemon tests over the verbs
# transport, for real on Soft-RoCE (ctest rxe_multinode, label rxe).
#
# On the host it boots ONE VM with two rxe devices on the two ends of a veth
# wire (RXE_VM_NDEV=2, run-in-vm.sh) and re-runs itself inside. In the guest
# it starts two hoistd with --transport=verbs, one per rxe IP
# (tests/multinode/cluster.sh with CLUSTER_IPS), and runs verbs_scenario.sh
# under them: every operation, the randomized program against its model,
# barriers, address-cache misses and invalidation, the memlock refusal, and
# last the loss of a peer (kill -9 of daemon 1). Then a second pair of
# daemons runs verbs_loss.sh: stale remote keys of departed PEs, heartbeats,
# a stopped peer (kill -STOP).
# BINDIR is the build tree (build/); its binaries must be built without
# -march=native (the guest CPU is x86-64-v3).
# Exit: 0 pass, 1 fail, 77 skip (no VM possible here), 124/125 VM trouble.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
B=${1:?usage: multinode.sh BUILD_DIR}
B=$(cd "$B" && pwd -P)

if [ "${RXE_VM:-0}" != 1 ]; then
	# 2 GiB: the guest holds both daemons' pinned memory (a 400 MiB memlock
	# budget each, filled by 3 PEs' heaps plus departed PEs' registrations in
	# their grace period: pinned pages are resident) and their PEs; with 1 GiB
	# a daemon died at it_amo's attach in 2 of 3 runs, silently (no log line,
	# no sanitizer report: a SIGKILL, as from the OOM killer); with 2 GiB the
	# same sequence under the ASan build passed
	export RXE_VM_NDEV=2 RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-3400} RXE_VM_MEM=${RXE_VM_MEM:-2048}
	exec "$HERE/run-in-vm.sh" "$HERE/multinode.sh" "$B"
fi

# ---- inside the VM ----
# The guest is emulated (TCG) and slower still when the host is busy: every
# limit of the tests and the daemons' liveness timeouts stretch by
# RXE_TEST_SCALE (default 4) times the host's HOIST_TEST_SCALE. The VM's
# stall watchdog (run-in-vm.sh, 600 s without output) is what stops a hang.
HOIST_TEST_SCALE=$(awk -v a="${HOIST_TEST_SCALE:-1}" -v b="${RXE_TEST_SCALE:-4}" 'BEGIN { print a * b }')
export HOIST_TEST_SCALE
read -r -a ips <<<"$RXE_IPS"
[ ${#ips[@]} -ge 2 ] || { echo "rxe_multinode: needs 2 rxe devices, have: $RXE_DEVS" >&2; exit 1; }
echo "rxe_multinode: daemons on ${ips[0]} ($(echo "$RXE_DEVS" | cut -d' ' -f1)) and ${ips[1]} ($(echo "$RXE_DEVS" | cut -d' ' -f2))"
export HOIST_HOISTD=$B/daemon/hoistd HOIST_HOISTRUN=$B/launcher/hoistrun HOIST_HOISTCTL=$B/daemon/hoistctl
export CLUSTER_IPS="${ips[0]} ${ips[1]}" CLUSTER_READY_SEC=60 CLUSTER_TIMEOUT=900
export IT_BIN=$B/tests/integration MN_BIN=$B/tests/multinode
# HOIST_RXE_PARTS (default "main loss") picks the clusters to run.
parts=${HOIST_RXE_PARTS:-main loss}
rc=0
if [[ " $parts " == *" main "* ]]; then
	# 400 MiB budget: the jobs below fit (4 PEs of 64 MiB heaps over 2
	# daemons), a 512 MiB heap does not
	"$HERE/../multinode/cluster.sh" 2 --daemon-arg=--transport=verbs \
		--daemon-arg=--memlock-bytes=400m --daemon-arg=--addr-cache-entries=1 \
		--daemon-arg=--log-level=debug -- "$HERE/verbs_scenario.sh" || rc=1
fi
if [[ " $parts " == *" loss "* ]]; then
	# stale keys and a stopped peer: a fresh pair of daemons, default cache
	"$HERE/../multinode/cluster.sh" 2 --daemon-arg=--transport=verbs \
		--daemon-arg=--memlock-bytes=400m \
		--daemon-arg=--peer-timeout-ms="$(awk -v f="$HOIST_TEST_SCALE" 'BEGIN { printf "%d", 2000 * f }')" \
		--daemon-arg=--heartbeat-ms="$(awk -v f="$HOIST_TEST_SCALE" 'BEGIN { printf "%d", 500 * f }')" \
		-- "$HERE/verbs_loss.sh" || rc=1
fi
exit "$rc"
