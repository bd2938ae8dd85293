/*
 * Counters, listed once. The tables generate the struct fields, the
 * protobuf name/value lists of the stats socket, and through those every
 * output of hoistctl (table and JSON).
 */
#ifndef HOISTD_STATS_H
#define HOISTD_STATS_H

#include <stdint.h>

/* per client; written only by the progress thread */
#define HOISTD_CLIENT_STATS(X)                                                                     \
	X(puts, "put descriptors executed")                                                        \
	X(gets, "get descriptors executed")                                                        \
	X(put_bytes, "bytes written by puts")                                                      \
	X(get_bytes, "bytes read by gets")                                                         \
	X(quiets, "quiet descriptors")                                                             \
	X(fences, "fence descriptors")                                                             \
	X(barriers, "barrier notifies")                                                            \
	X(nops, "no-op descriptors")                                                               \
	X(rejected, "malformed descriptors rejected by validation")                                \
	X(errors, "descriptors completed with an error (including rejected)")                     \
	X(cq_full, "times draining paused because the completion ring was full")                  \
	X(wakeups, "futex wakes sent to this client")                                              \
	X(batches, "drain passes that found work")                                                 \
	X(deferred_puts, "remote puts completed lazily (automatic overlap)")                       \
	X(conflicts, "accesses that overlapped an outstanding put (ordered after it)")             \
	X(conflict_box, "conflict checks answered by the bounding box alone")                      \
	X(conflict_precise, "conflict checks that searched the interval tree")                     \
	X(forced_completions, "stalls because max_outstanding_puts was reached")                   \
	X(phases, "program phases started")                                                        \
	X(pf_issued, "prefetches issued")                                                          \
	X(pf_hits, "gets served from a landed prefetch")                                           \
	X(pf_waits, "gets served from a prefetch they waited for")                                 \
	X(pf_fast_hits, "gets the client served itself from a landed prefetch (no round trip)")   \
	X(pf_late, "predicted gets whose chunk had not left yet")                                  \
	X(pf_misses, "gets that no prefetch predicted (recorded for next time)")                   \
	X(pf_wasted, "prefetches nobody used (mispredictions, dropped)")                           \
	X(pf_skipped, "predictions not prefetched (same node, unprofitable, no room)")            \
	X(pf_invalidated, "own puts that invalidated predictions")                                 \
	X(pf_chunks, "prefetch chunks issued")                                                     \
	X(pf_history, "gets remembered across the client's phases now (a gauge)")                \
	X(colls, "collective descriptors executed")                                                \
	X(colls_capped, "collectives that waited: max_pending_colls of the job unfinished")       \
	X(multi_ops, "strided and vector descriptors executed")                                    \
	X(multi_elems, "elements of strided and vector descriptors")                               \
	X(agg_ops, "puts/gets issued inside aggregation regions")                                  \
	X(agg_releases, "aggregation regions whose held packs were sent (end or early end)")

/* per daemon; progress-thread counters (control-thread ones are separate) */
#define HOISTD_PROGRESS_STATS(X)                                                                   \
	X(loops_busy, "progress passes that found work")                                           \
	X(sleeps, "times the progress thread went to sleep")                                       \
	X(doorbells, "doorbell wakeups of the progress thread")                                    \
	X(commands, "control-plane commands handled")                                              \
	X(coll_done, "collectives completed on this node (once per collective, not per PE)")       \
	X(coll_failed, "collectives failed (invalid, mismatched, or a PE or node lost)")           \
	X(coll_broadcast, "broadcasts completed")                                                  \
	X(coll_reduce, "reduces completed")                                                        \
	X(coll_allreduce, "allreduces completed")                                                  \
	X(coll_allgather, "allgathers completed")                                                  \
	X(coll_alltoall, "alltoalls completed")                                                    \
	X(coll_msgs_out, "collective chunks sent to other nodes")                                  \
	X(coll_bytes_out, "collective payload bytes sent to other nodes")                          \
	X(coll_bytes_in, "collective payload bytes received from other nodes")                     \
	X(coll_early, "collective chunks that arrived before this node was ready for them")        \
	X(tcp_requests, "requests and messages queued on tcp connections")                         \
	X(peer_conns_dropped, "incoming peer connections dropped unauthenticated (deadline or cap)") \
	X(accept_pauses, "times accepting peer connections paused: out of file descriptors")

/* verbs transport (progress thread; pinned_* by the control thread) */
#define HOISTD_VERBS_STATS(X)                                                                      \
	X(transport_verbs, "1: daemons talk over verbs (RDMA), 0: over tcp")                      \
	X(rdma_port, "verbs: device port in use")                                                  \
	X(rdma_gid_index, "verbs: GID index of this node's IP (IPv4-mapped RoCE v2)")              \
	X(rdma_writes, "RDMA WRITEs posted (puts)")                                                \
	X(rdma_reads, "RDMA READs posted (gets)")                                                  \
	X(rdma_inline, "WRITEs and SENDs posted inline")                                           \
	X(rdma_bounced, "puts copied to a registered bounce buffer (staged source)")             \
	X(rdma_sends, "active messages sent (SEND)")                                               \
	X(rdma_recvs, "active messages received (SRQ)")                                            \
	X(rdma_doorbells, "ibv_post_send calls (each carries a chain of WRs)")                     \
	X(rdma_wrs, "work requests posted")                                                        \
	X(rdma_signaled, "work requests posted signaled")                                          \
	X(rdma_order_waits, "gets/puts held until an overlapping unfinished put/get completed")   \
	X(rdma_resolves, "address-resolve requests sent (cache misses)")                           \
	X(rdma_wc_errors, "failed work completions")                                               \
	X(rdma_cm_retries, "connection attempts retried (REJECTED, unreachable)")                  \
	X(rdma_disconnects, "connections torn down")                                               \
	X(rdma_pings, "heartbeat pings sent (SEND; answered by the peer daemon)")                  \
	X(pinned_bytes, "bytes registered (pinned) for client segments now")                      \
	X(pinned_limit, "pinned-bytes budget (memlock_bytes or RLIMIT_MEMLOCK)")                  \
	X(pinned_refused, "attaches refused by the pinned-bytes budget")                          \
	X(pinned_deferred, "departed clients whose registrations were kept for a grace period")  \
	X(pinned_grace_cut, "deferred registrations released early for the pinned-bytes budget")

#define HOISTD_CONTROL_STATS(X)                                                                    \
	X(attaches, "clients attached")                                                            \
	X(attach_refused, "attach requests refused")                                               \
	X(detaches, "clients that finalized cleanly")                                              \
	X(client_deaths, "clients that vanished without finalizing")                               \
	X(jobs_started, "jobs whose ranks all attached")                                           \
	X(jobs_timed_out, "jobs that did not assemble within job_timeout_ms")                      \
	X(stats_requests, "stats socket requests")                                                 \
	X(peer_requests, "requests for node-local peer heaps (hoist_ptr)")                         \
	X(peer_refused, "peer heap requests or ranks refused (other job, remote, bad request)")    \
	X(peer_heaps_sent, "peer heap fds handed to clients")

/* per phase of a client (automatic overlap): the most recent phases */
#define HOISTD_PHASE_STATS(X)                                                                      \
	X(runs, "times the phase ran")                                                             \
	X(served, "gets served by prefetch (client or daemon)")                                    \
	X(misses, "gets not predicted (recorded)")                                                 \
	X(wasted, "prefetches not used")                                                           \
	X(history, "gets remembered for the phase now")
#define PHASE_STATS_MAX 16

#define STATS_FIELD(name, help) uint64_t name;
struct phase_stats_row {
	uint64_t id; /* 0: unused row */
	uint64_t last_gen;
	HOISTD_PHASE_STATS(STATS_FIELD)
};
struct client_stats {
	HOISTD_CLIENT_STATS(STATS_FIELD)
};
struct progress_stats { HOISTD_PROGRESS_STATS(STATS_FIELD) };
struct control_stats { HOISTD_CONTROL_STATS(STATS_FIELD) };
struct verbs_stats { HOISTD_VERBS_STATS(STATS_FIELD) };
#undef STATS_FIELD

/* Single writer, concurrent readers: relaxed atomics (plain mov on x86). */
#define STAT_ADD(st, field, v)                                                                     \
	__atomic_store_n(&(st)->field, __atomic_load_n(&(st)->field, __ATOMIC_RELAXED) + (v),     \
			 __ATOMIC_RELAXED)
#define STAT_INC(st, field) STAT_ADD(st, field, 1)
#define STAT_READ(st, field) __atomic_load_n(&(st)->field, __ATOMIC_RELAXED)

#endif
