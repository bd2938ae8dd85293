#!/usr/bin/env bash
# verbs_scenario.sh: run by tests/rxe/multinode.sh inside the rxe VM under
# `cluster.sh 2 --daemon-arg=--transport=verbs --daemon-arg=--memlock-bytes=400m
# --daemon-arg=--addr-cache-entries=1` (daemon i on rxe device i's IP).
#
#  1. the integration programs across the two daemons (hoistrun
#     --runtime-dirs, ranks in blocks): it_putget, it_nbi, it_fence,
#     it_barrier, it_random (checked against its model), and issue 6:
#     it_strided, it_pack, it_coll (20 iterations of every collective),
#     and issue 11: it_signal (put-with-signal: whoever sees the signal
#     sees the whole block, up to 1 MiB, over RDMA);
#     packed operations over verbs: after them each daemon sent packs
#     (W_PACK SENDs) carrying more than one operation on average, and its
#     peer served them (packs_in), none refused; an aggregation region of
#     350 operations to one node is exactly one pack (as
#     tests/multinode/packs.sh checks on tcp; all of packs.sh does not fit
#     the VM's time budget); remote atomics (issue 11): it_amo with 6 PEs,
#     odd ranks HOIST_DIRECT=0, so one word takes direct, daemon (self) and
#     W_AMO-over-verbs atomics at once (exact sum, distinct fetched values),
#     and each daemon served atomics for the other (amo_served); it_gups:
#     streams of non-fetching atomics packed over verbs equal the model
#     (amo_packed, amo_served_packed);
#  2. both daemons really used verbs: transport_verbs == 1, RDMA WRITEs,
#     READs, SENDs, receives and resolves counted, no tcp request, the peer
#     "up" with connects >= 1; the wire counts: 2 connections held
#     (rdma_conns), every SEND counted at both ends (rdma_msgs_out less
#     WRITEs and READs == the peer's rdma_msgs_in), bytes both ways; the
#     one-entry address cache missed, hit and evicted; within 5 s of a job's end some daemon dropped a cached entry
#     of a PE that left (addr_cache_invalidations);
#  3. memlock: a client asking a 512 MiB heap is refused with -ENOMEM by a
#     daemon with a 400 MiB budget, and hoist_error_detail() names the limit
#     to raise; pinned_refused counts it, pinned_limit shows the budget;
#  4. peer loss (tests/multinode/peer_lost.sh KILL): kill -9 of daemon 1
#     fails a cross-node job's operations with -ECONNRESET within 10 s,
#     daemon 0 lists node 1 as lost, local jobs go on.
set -u
: "${HOIST_DIRS:?run me under cluster.sh}"
fail=0
FAIL() { echo "[verbs_scenario] FAIL: $*" >&2; fail=1; }
log() { echo "[verbs_scenario] $*" >&2; }
stats() { "$HOIST_HOISTCTL" --runtime-dir "$1" stats --json; }
dirs=("$HOIST_DIR_0" "$HOIST_DIR_1")
S=$MN_SRC_DIR/mn_stats.py

run() { # n prog [args]
	local n=$1 t0=$SECONDS
	shift
	"$HOIST_HOISTRUN" -n "$n" --runtime-dirs "$HOIST_DIRS" --job "rxe-$(basename "$1")-$$" \
		--timeout 200 "$@" || FAIL "$(basename "$1") ($n PEs over 2 daemons) failed with status $?"
	log "$(basename "$1") -n $n: done in $((SECONDS - t0)) s"
}

# ---- 1. every operation over verbs ----------------------------------------------
run 4 "$IT_BIN/it_putget"
run 4 "$IT_BIN/it_nbi"
run 4 "$IT_BIN/it_fence"
run 4 "$IT_BIN/it_barrier"
run 4 "$IT_BIN/it_random"
# verbs reorders (packs run by the target's CPU, RDMA by its NIC): small
# puts that go packed, big puts and gets that go as RDMA, overlapping, to
# one node in program order - the conflict stage orders them
run 2 "$MN_BIN/mn_order"
# issue 6 over verbs: strided/vector elements as RDMA operations, aggregation
# regions, collectives' chunks as SENDs into the SRQ (chunks up to 60 KiB)
run 4 "$IT_BIN/it_strided"
run 4 "$IT_BIN/it_pack"
IT_COLL_ITERS=20 run 4 "$IT_BIN/it_coll"
# remote atomics over verbs: W_AMO SENDs, executed by the target's CPU
run 6 "$IT_BIN/it_amo" mixed
for i in 0 1; do
	stats "${dirs[$i]}" | python3 "$S" check "d['amo_served'] > 0" "d['amo_remote'] > 0" ||
		FAIL "atomics stats of node $i after it_amo (above)"
done
run 4 "$IT_BIN/it_signal" # issue 11: put-with-signal, the signal never before its data
# GUPS-style streams of non-fetching atomics, packed (WIRE_PACK_AMO in W_PACK
# SENDs), against the model of program order; verbs reorders: the conflict
# stage keeps an atomic's later get/fetch/put of its word behind it
run 4 "$IT_BIN/it_gups"
for i in 0 1; do
	stats "${dirs[$i]}" | python3 "$S" check "d['amo_packed'] > 0" "d['amo_served_packed'] > 0" ||
		FAIL "packed atomics stats of node $i after it_gups (above)"
done
# small puts/gets, strided elements and aggregation regions went packed
for i in 0 1; do
	o=$((1 - i))
	stats "${dirs[$i]}" | python3 "$S" check \
		"p[$o]['counters']['packs_out'] > 0" "p[$o]['counters']['packs_in'] > 0" \
		"p[$o]['counters']['ops_packed'] > p[$o]['counters']['packs_out']" \
		"p[$o]['counters']['hdr_bytes_saved'] > 0" "p[$o]['counters']['packs_refused'] == 0" ||
		FAIL "pack stats of node $i after it_strided/it_pack/it_coll (above)"
done
pbefore=$(stats "$HOIST_DIR_0" | python3 "$S" peer 1 packs_out)
IT_PACK_REGION=1 "$HOIST_HOISTRUN" -n 2 --runtime-dirs "$HOIST_DIRS" --job "rxe-region-$$" --timeout 100 \
	"$IT_BIN/it_pack" || FAIL "it_pack region-only (2 PEs over 2 daemons) failed with status $?"
pafter=$(stats "$HOIST_DIR_0" | python3 "$S" peer 1 packs_out)
[ "$((pafter - pbefore))" -eq 1 ] ||
	FAIL "an aggregation region of 350 ops to one node sent $((pafter - pbefore)) packs over verbs, want 1"

# ---- 2. verbs really carried it --------------------------------------------------
for i in 0 1; do
	o=$((1 - i))
	stats "${dirs[$i]}" | python3 "$S" check \
		"d['node_id'] == $i" "d['nodes'] == 2" "d['transport_verbs'] == 1" \
		"d['rdma_writes'] > 0" "d['rdma_reads'] > 0" "d['rdma_sends'] > 0" "d['rdma_recvs'] > 0" \
		"d['rdma_resolves'] > 0" "d['rdma_doorbells'] > 0" \
		"d['rdma_wc_errors'] == 0" "'tcp_requests' not in d" \
		"d['pinned_limit'] == 400 << 20" "d['pinned_bytes'] > 0" \
		"d['addr_cache_hits'] > 0" "d['addr_cache_misses'] > 0" "d['addr_cache_evictions'] > 0" \
		"p[$o]['state'] == 'up'" "p[$o]['counters']['connects'] >= 1" \
		"p[$o]['counters']['ops_out'] > 0" "p[$o]['counters']['losses'] == 0" \
		"p[$o]['counters']['auth_failures'] == 0" ||
		FAIL "stats of node $i after the jobs (above)"
done
# batching: node 0's PEs (ranks 0, 1) post nbi puts and gets to node 1 in
# bursts, so some doorbells carry several work requests and not every one
# is signalled
for i in 0 1; do
	stats "${dirs[$i]}" | python3 -c '
import json, sys
d = json.load(sys.stdin)["daemon"]
print("[verbs_scenario] node '$i':", " ".join("%s=%s" % (k, d[k]) for k in sorted(d) if k.startswith(("rdma_", "pinned_"))))' >&2
done
# the wire counts (tcp_msgs_*/tcp_bytes_*/tcp_conns' counterparts): each
# daemon holds its outgoing connection and its peer's incoming one, and
# every SEND one daemon posted (rdma_msgs_out less its WRITEs and READs,
# which the peer's CPU never sees) the other received (rdma_msgs_in)
for i in 0 1; do
	stats "${dirs[$i]}" | python3 "$S" check "d['rdma_conns'] == 2" \
		"d['rdma_msgs_out'] > d['rdma_writes'] + d['rdma_reads']" "d['rdma_msgs_in'] > 0" \
		"d['rdma_bytes_out'] > 0" "d['rdma_bytes_in'] > 0" ||
		FAIL "wire counters of node $i after the jobs (above)"
done
stats "${dirs[0]}" >"$CLUSTER_BASE/wire0.json" && stats "${dirs[1]}" >"$CLUSTER_BASE/wire1.json" &&
	python3 - "$CLUSTER_BASE/wire0.json" "$CLUSTER_BASE/wire1.json" <<'PY' || FAIL "SENDs counted at one end only (above)"
import json, sys
d = [json.load(open(f))["daemon"] for f in sys.argv[1:]]
bad = 0
for i in (0, 1):
    sent = d[i]["rdma_msgs_out"] - d[i]["rdma_writes"] - d[i]["rdma_reads"]
    got = d[1 - i]["rdma_msgs_in"]
    print("[verbs_scenario] node %d sent %d SENDs, node %d received %d" % (i, sent, 1 - i, got), file=sys.stderr)
    bad |= sent != got
sys.exit(bad)
PY
stats "${dirs[0]}" | python3 "$S" check "d['rdma_wrs'] > d['rdma_doorbells']" \
	"d['rdma_signaled'] < d['rdma_wrs']" || FAIL "node 0 never posted several work requests with one doorbell"
grep -q "transport: verbs" "${dirs[0]}/hoistd.log" || FAIL "daemon 0 did not log 'transport: verbs'"
inv=0
end=$((SECONDS + 5))
while :; do
	inv=0
	for i in 0 1; do
		v=$(stats "${dirs[$i]}" | python3 "$S" daemon addr_cache_invalidations)
		[ "${v:-0}" -gt 0 ] && inv=$((inv + v))
	done
	[ "$inv" -gt 0 ] || [ "$SECONDS" -ge "$end" ] && break
	sleep 0.2
done
[ "$inv" -gt 0 ] || FAIL "5 s after the jobs ended no daemon dropped a cached address of a PE that left"

# ---- 3. memlock budget -----------------------------------------------------------
HOIST_RUNTIME_DIR=$HOIST_DIR_1 HOIST_JOB=rxe-memlock-$$ HOIST_SIZE=1 HOIST_RANK=0 HOIST_HEAP_SIZE=512m \
	"$MN_BIN/mn_init_fail" ENOMEM "memlock" || FAIL "a 512 MiB heap was not refused with -ENOMEM naming memlock"
stats "$HOIST_DIR_1" | python3 "$S" check "d['pinned_refused'] >= 1" ||
	FAIL "daemon 1 did not count the refused registration"
# a job that fits still attaches on the same daemon
run 4 "$IT_BIN/it_barrier"

# ---- 4. peer loss ----------------------------------------------------------------
"$MN_SRC_DIR/peer_lost.sh" KILL "$MN_BIN/mn_lost" "$IT_BIN/it_kill" "$IT_BIN/it_putget" ||
	FAIL "peer loss over verbs (peer_lost.sh KILL)"
stats "$HOIST_DIR_0" | python3 "$S" check "d['transport_verbs'] == 1" "'tcp_requests' not in d" ||
	FAIL "daemon 0 after the peer loss"

[ "$fail" = 0 ] && log PASS
exit "$fail"
