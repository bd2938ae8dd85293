/*
 * Counters, listed once. The tables generate the struct fields, the
 * protobuf name/value lists of the stats socket, the schema sent with them
 * (kind and help of every name), and through those every output of
 * hoistctl (table, JSON, Prometheus metrics).
 *
 * X(name, kind, help): kind is COUNTER (only ever grows; hoistctl metrics
 * names it hoist_<section>_<name>_total) or GAUGE (a level that may go
 * down, or a fixed fact such as a port number).
 */
#ifndef HOISTD_STATS_H
#define HOISTD_STATS_H

#include <stdint.h>

/* per client; written only by the progress thread */
#define HOISTD_CLIENT_STATS(X)                                                                     \
	X(puts, COUNTER, "put descriptors executed")                                                        \
	X(gets, COUNTER, "get descriptors executed")                                                        \
	X(put_bytes, COUNTER, "bytes written by puts")                                                      \
	X(get_bytes, COUNTER, "bytes read by gets")                                                         \
	X(gets_inline, COUNTER, "gets whose result went back in their completion (HOIST_SQE_F_INLINE: <= 16 B, same node)") \
	X(quiets, COUNTER, "quiet descriptors")                                                             \
	X(fences, COUNTER, "fence descriptors")                                                             \
	X(barriers, COUNTER, "barrier notifies")                                                            \
	X(nops, COUNTER, "no-op descriptors")                                                               \
	X(rejected, COUNTER, "malformed descriptors rejected by validation")                                \
	X(errors, COUNTER, "descriptors completed with an error (including rejected)")                     \
	X(sq_full, COUNTER, "drain passes that found the submission ring full (the client could post no more)") \
	X(cq_full, COUNTER, "times draining paused because the completion ring was full")                  \
	X(wakeups, COUNTER, "futex wakes sent to this client")                                              \
	X(wakeups_skipped, COUNTER, "completion flushes while it slept waiting for another completion: no wake")       \
	X(heap_wakes, COUNTER, "futex wakes sent to this client's hoist_wait_until (its heap changed where it waits)") \
	X(heap_wakes_skipped, COUNTER, "writes into this client's heap while it slept in hoist_wait_until on other words: no wake") \
	X(heap_wakes_direct, COUNTER, "futex wakes this client sent to same-node PEs' hoist_wait_until by its direct puts and atomics (the client counts)") \
	X(heap_wakes_direct_skipped, COUNTER, "direct puts and atomics of this client into a sleeping same-node PE's heap away from its waited words: no wake (the client counts)") \
	X(p2p_waits, COUNTER, "hoist_wait_until* calls that had to wait (the client counts)")              \
	X(p2p_sleeps, COUNTER, "sleeps of those waits on the heap wake line (the client counts)")         \
	X(p2p_wakeups, COUNTER, "of those sleeps, the ones a writer ended (the client counts)")           \
	X(wait_yields, COUNTER, "sched_yield calls of waits for the daemon (completions, barriers, a free ring slot) and node barriers (the client counts)")            \
	X(wait_long_yields, COUNTER, "of those, yields back only after HOIST_YIELD_LONG_US: the wait slept at once, except a ring-full wait, which keeps yielding (the client counts)") \
	X(wait_sleeps, COUNTER, "futex sleeps of waits for the daemon and node barriers (the client counts)")                 \
	X(wait_handoffs, COUNTER, "waits for a completion that began on the progress thread's CPU: yielded at once")  \
	X(batches, COUNTER, "drain passes that found work")                                                 \
	X(deferred_puts, COUNTER, "remote puts completed lazily (automatic overlap)")                       \
	X(conflicts, COUNTER, "accesses that overlapped an outstanding put (ordered after it)")             \
	X(conflict_box, COUNTER, "conflict checks answered by the bounding box alone")                      \
	X(conflict_precise, COUNTER, "conflict checks that searched the interval tree")                     \
	X(forced_completions, COUNTER, "stalls because max_outstanding_puts was reached")                   \
	X(phases, COUNTER, "program phases started")                                                        \
	X(pf_notify_ns, COUNTER, "ns the progress thread spent ending a phase run and preparing the next at a barrier notify (overlap_notify: O(gets of the phase), on the barrier's path)") \
	X(pf_issued, COUNTER, "prefetches issued")                                                          \
	X(pf_hits, COUNTER, "gets served from a landed prefetch")                                           \
	X(pf_waits, COUNTER, "gets served from a prefetch they waited for")                                 \
	X(pf_fast_hits, COUNTER, "gets the client served itself from a landed prefetch (no round trip)")   \
	X(pf_late, COUNTER, "predicted gets not prefetched in time: not issued yet and no room to issue it on demand (fetched as normal gets)") \
	X(pf_demand, COUNTER, "predicted gets that found their prefetch not issued yet and issued it at once (then waited for it)") \
	X(pf_misses, COUNTER, "gets that no prefetch predicted (recorded for next time); by reason: pf_miss_*") \
	X(pf_miss_cold, COUNTER, "misses in a phase's first run (nothing recorded yet)")                  \
	X(pf_miss_new, COUNTER, "misses of gets the phase's last run did not do (the pattern changed or grew)") \
	X(pf_miss_invalid, COUNTER, "predicted gets whose prediction an own put invalidated (fetched for real)") \
	X(pf_miss_full, COUNTER, "misses not recorded: the phase already holds phase_max_gets gets")     \
	X(pf_wasted, COUNTER, "prefetches nobody used (mispredictions, dropped)")                           \
	X(pf_skipped, COUNTER, "predictions not prefetched (same node, unprofitable, no room)")            \
	X(pf_skip_room, COUNTER, "... of them because the arena half (prefetch_arena_bytes / 2) was full") \
	X(pf_periodic, COUNTER, "phase runs predicted from a run before the last (a period of 2 or more, e.g. a double buffer)") \
	X(pf_backoffs, COUNTER, "times a phase's prefetch was stopped: its predictions went mostly unused in 2 runs in a row") \
	X(pf_dry, COUNTER, "runs of backed-off phases: predicted and checked, nothing prefetched") \
	X(pf_invalidated, COUNTER, "own puts that invalidated predictions")                                 \
	X(pf_chunks, COUNTER, "prefetch chunks issued")                                                     \
	X(pf_history, GAUGE, "gets remembered across the client's phases now (a gauge)")                \
	X(colls, COUNTER, "collective descriptors executed")                                                \
	X(colls_capped, COUNTER, "collectives that waited: max_pending_colls of the job unfinished")       \
	X(multi_ops, COUNTER, "strided and vector descriptors executed")                                    \
	X(multi_elems, COUNTER, "elements of strided and vector descriptors")                               \
	X(agg_ops, COUNTER, "puts/gets and non-fetching atomics issued inside aggregation regions")                                  \
	X(agg_releases, COUNTER, "aggregation regions whose held packs were sent (end or early end)")     \
	X(conflict_waits, COUNTER, "accesses that waited for an overlapping put to complete (unordered transport)") \
	X(amo_fetch, COUNTER, "atomics executed for the client: fetch")                                    \
	X(amo_set, COUNTER, "atomics executed for the client: set")                                        \
	X(amo_swap, COUNTER, "atomics executed for the client: swap and compare-and-swap")                \
	X(amo_add, COUNTER, "atomics executed for the client: add, inc and their fetching forms")          \
	X(amo_bitwise, COUNTER, "atomics executed for the client: and, or, xor and their fetching forms") \
	X(amo_self, COUNTER, "atomics to PEs of this node executed by the daemon (the library's direct ones are not counted)") \
	X(amo_remote, COUNTER, "atomics sent to the daemon of another node (tcp, verbs)")               \
	X(signal_self, COUNTER, "put-with-signal signals (atomics, also counted above) to PEs of this node executed by the daemon") \
	X(signal_remote, COUNTER, "put-with-signal signals (atomics, also counted above) sent to the daemon of another node") \
	X(signal_waits, COUNTER, "put-with-signal signals that waited in the daemon until the client's earlier operations completed (the library posted no quiet before them)") \
	X(signals_dropped, COUNTER, "put-with-signal signals not sent (-EIO) because an operation of the client that asked no completion failed since its last quiet or barrier") \
	X(amo_deferred, COUNTER, "non-fetching atomics to other nodes completed lazily (automatic overlap: the client did not wait)") \
	X(amo_packed, COUNTER, "non-fetching atomics sent to other nodes inside packs (coalesced or aggregated)")

/* per daemon; progress-thread counters (control-thread ones are separate) */
#define HOISTD_PROGRESS_STATS(X)                                                                   \
	X(loops_busy, COUNTER, "progress passes that found work")                                           \
	X(sleeps, COUNTER, "times the progress thread went to sleep")                                       \
	X(doorbells, COUNTER, "doorbell wakeups of the progress thread")                                    \
	X(prog_yields, COUNTER, "sched_yield calls of the idle progress thread in its spin_us window")       \
	X(prog_long_yields, COUNTER, "of those, yields back only after yield_long_us: it slept at once")     \
	X(prog_handoffs, COUNTER, "yields right after work: a client waited on the progress thread's CPU") \
	X(commands, COUNTER, "control-plane commands handled")                                              \
	X(coll_done, COUNTER, "collectives completed on this node (once per collective, not per PE)")       \
	X(coll_node, COUNTER, "node collective descriptors: one for every local PE (HOIST_COLL_F_NODE)")  \
	X(coll_failed, COUNTER, "collectives failed (invalid, mismatched, or a PE or node lost)")           \
	X(coll_broadcast, COUNTER, "broadcasts completed")                                                  \
	X(coll_inbox, COUNTER, "eager broadcasts from another node written into the node's inbox")          \
	X(coll_inbox_early, COUNTER, "of those, written as their data came, before the node's descriptor") \
	X(coll_reduce, COUNTER, "reduces completed")                                                        \
	X(coll_allreduce, COUNTER, "allreduces completed")                                                  \
	X(coll_allgather, COUNTER, "allgathers completed")                                                  \
	X(coll_alltoall, COUNTER, "alltoalls completed")                                                    \
	X(coll_msgs_out, COUNTER, "collective chunks sent to other nodes")                                  \
	X(coll_bytes_out, COUNTER, "collective payload bytes sent to other nodes")                          \
	X(coll_bytes_in, COUNTER, "collective payload bytes received from other nodes")                     \
	X(coll_early, COUNTER, "collective chunks that arrived before this node was ready for them")        \
	X(am_refused, COUNTER, "active messages refused: a type no stage registered, malformed, or refused by its handler") \
	X(xp_kind_refused, COUNTER, "transport operations of a kind the transport does not run (refused, never executed)") \
	X(tcp_requests, COUNTER, "requests and messages queued on tcp connections")                         \
	X(tcp_stripes, COUNTER, "puts/gets of at least 256 KiB striped over several tcp lanes (tcp_lanes)") \
	X(tcp_msgs_out, COUNTER, "frames queued to other daemons, every kind (handshakes, requests, replies, daemon messages); heartbeat pings and pongs not") \
	X(tcp_bytes_out, COUNTER, "bytes of those frames: header, extension and payload (frame_integrity's record overhead not)") \
	X(tcp_msgs_in, COUNTER, "frames received from other daemons, every kind; heartbeat pings and pongs not") \
	X(tcp_bytes_in, COUNTER, "bytes of those frames: header, extension and payload") \
	X(tcp_busy_polls, COUNTER, "busy polls for an awaited reply (tcp_busy_poll_us): passes that read the reply connections directly instead of going back to epoll") \
	X(tcp_busy_poll_hits, COUNTER, "of those, the ones that found the reply (or other frames) on a connection they read") \
	X(tcp_rx_breaks, COUNTER, "reads of a tcp connection cut short after tcp_rx_batch frames because a client's ring held descriptors; the rest is read once the rings were drained") \
	X(tcp_conns, GAUGE, "tcp connections to and from other daemons open now, handshakes in progress included (tcp_lanes outgoing per peer this node sent to, and the peers' incoming ones)") \
	X(peer_conns_dropped, COUNTER, "incoming peer connections dropped unauthenticated (deadline or cap)") \
	X(accept_pauses, COUNTER, "times accepting peer connections paused: out of file descriptors") \
	X(amo_served, COUNTER, "atomics executed here for PEs of other nodes (W_AMO or packed)") \
	X(amo_served_packed, COUNTER, "of those, atomics that arrived inside packs (W_PACK)")

/* verbs transport (progress thread; pinned_* by the control thread) */
#define HOISTD_VERBS_STATS(X)                                                                      \
	X(transport_verbs, GAUGE, "1: daemons talk over verbs (RDMA), 0: over tcp")                      \
	X(rdma_port, GAUGE, "verbs: device port in use")                                                  \
	X(rdma_gid_index, GAUGE, "verbs: GID index of this node's IP (IPv4-mapped RoCE v2)")              \
	X(rdma_writes, COUNTER, "RDMA WRITEs posted (puts)")                                                \
	X(rdma_reads, COUNTER, "RDMA READs posted (gets)")                                                  \
	X(rdma_inline, COUNTER, "WRITEs and SENDs posted inline")                                           \
	X(rdma_bounced, COUNTER, "puts copied to a registered bounce buffer (staged source)")             \
	X(rdma_sends, COUNTER, "active messages sent (SEND)")                                               \
	X(rdma_recvs, COUNTER, "active messages received (SRQ)")                                            \
	X(rdma_doorbells, COUNTER, "ibv_post_send calls (each carries a chain of WRs)")                     \
	X(rdma_wrs, COUNTER, "work requests posted")                                                        \
	X(rdma_signaled, COUNTER, "work requests posted signaled")                                          \
	X(rdma_order_waits, COUNTER, "strided/vector elements too large for a pack held until the packs with earlier elements of their descriptor were answered")   \
	X(rdma_resolves, COUNTER, "address-resolve requests sent (cache misses)")                           \
	X(rdma_wc_errors, COUNTER, "failed work completions")                                               \
	X(rdma_cm_retries, COUNTER, "connection attempts retried (REJECTED, unreachable)")                  \
	X(rdma_disconnects, COUNTER, "connections torn down")                                               \
	X(rdma_pings, COUNTER, "heartbeat pings sent (SEND; answered by the peer daemon)")                  \
	X(rdma_msgs_out, COUNTER, "work requests to other daemons, every kind: SENDs (daemon messages, packs, replies, resolves), RDMA WRITEs and READs; heartbeat pings and pongs not (tcp_msgs_out's counterpart)") \
	X(rdma_bytes_out, COUNTER, "bytes those carry out: a SEND's frame (header, extension, payload), a WRITE's data") \
	X(rdma_msgs_in, COUNTER, "SENDs received from other daemons, every kind; heartbeat pings and pongs not (the peers' WRITEs and READs are one-sided: this CPU never sees them)") \
	X(rdma_bytes_in, COUNTER, "bytes those carried in, plus the data this daemon's READs fetch (counted when posted)") \
	X(rdma_conns, GAUGE, "rdma connections (queue pairs) to and from other daemons now, being made included (one outgoing per peer this node sent to, and the peers' incoming ones)") \
	X(pinned_bytes, GAUGE, "bytes registered (pinned) for client segments now")                      \
	X(pinned_limit, GAUGE, "pinned-bytes budget (memlock_bytes or RLIMIT_MEMLOCK)")                  \
	X(pinned_refused, COUNTER, "attaches refused by the pinned-bytes budget")                          \
	X(pinned_deferred, COUNTER, "departed clients whose registrations were kept for a grace period")  \
	X(pinned_grace_cut, COUNTER, "deferred registrations released early for the pinned-bytes budget")

#define HOISTD_CONTROL_STATS(X)                                                                    \
	X(attaches, COUNTER, "clients attached")                                                            \
	X(attach_refused, COUNTER, "attach requests refused")                                               \
	X(detaches, COUNTER, "clients that finalized cleanly")                                              \
	X(client_deaths, COUNTER, "clients that vanished without finalizing")                               \
	X(jobs_started, COUNTER, "jobs whose ranks all attached")                                           \
	X(jobs_timed_out, COUNTER, "jobs that did not assemble within job_timeout_ms")                      \
	X(stats_requests, COUNTER, "stats socket requests")                                                 \
	X(peer_requests, COUNTER, "requests for node-local peer heaps (hoist_ptr)")                         \
	X(peer_refused, COUNTER, "peer heap requests or ranks refused (other job, remote, bad request)")    \
	X(peer_heaps_sent, COUNTER, "peer heap fds handed to clients")                                 \
	X(halfopen_conns, GAUGE, "attach and stats connections that have not sent their request now")  \
	X(halfopen_timeouts, COUNTER, "connections dropped: no request within request_timeout_ms")     \
	X(halfopen_evicted, COUNTER, "connections dropped without a request: max_halfopen reached")   \
	X(stats_busy, COUNTER, "stats requests refused: too many replies being sent at once")         \
	X(stats_stalled, COUNTER, "stats replies abandoned: the reader took nothing for 10 s")

/* per phase of a client (automatic overlap): the most recent phases */
#define HOISTD_PHASE_STATS(X)                                                                      \
	X(runs, COUNTER, "times the phase ran")                                                             \
	X(served, COUNTER, "gets served by prefetch (client or daemon)")                                    \
	X(misses, COUNTER, "gets not predicted (recorded)")                                                 \
	X(wasted, COUNTER, "prefetches not used")                                                           \
	X(history, GAUGE, "gets remembered for the phase now")
#define PHASE_STATS_MAX 16

/* the kind column of the tables, as a value: STATS_KIND_##kind */
enum stats_kind { STATS_KIND_COUNTER = 0, STATS_KIND_GAUGE = 1 };

#define STATS_FIELD(name, kind, help) uint64_t name;
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
