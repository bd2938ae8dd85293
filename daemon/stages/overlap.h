/*
 * Automatic overlap (seed 000, sections 3-4), per client, progress thread.
 *
 * - Put deferral: a put leaves at once and is completed lazily (quiet,
 *   fence, barrier notify); its remote range stays in the client's conflict
 *   lists (conflict.c) until its completion arrives, in whatever order
 *   completions come (each put retires alone). The conflict stage decides
 *   the order: a get or put (or the bounding box of a strided/vector one)
 *   that overlaps an outstanding put of the same client goes right behind
 *   it when the transport delivers in order per peer (xp_ordered(): no
 *   transport_ops.reorders, or it says no), and otherwise (tcp with
 *   tcp_lanes > 1; verbs, whose packs the target's CPU executes while its
 *   NIC executes RDMA) waits at the ring head until every overlapping put
 *   completed (conflict_waits); there a put also waits for overlapping
 *   unfinished gets of the client (tracked only on such transports).
 *   Without this stage (HOIST_AUTO=0: no struct overlap) a fence or quiet
 *   orders, and on such a transport each chunk descriptor of a
 *   strided/vector put waits for everything earlier (multi.c). The
 *   transports keep no ordering rules of their own, but for the elements
 *   of one strided/vector descriptor, which apply in list order: tcp binds
 *   them to one lane, verbs holds one that goes unpacked (too large for a
 *   pack) until the packs holding earlier elements of its descriptor were
 *   answered. A cap on outstanding puts
 *   stalls the client until completions retire some.
 * - Phase prefetch: a barrier notify (or hoist_phase) names the phase that
 *   starts next; the notify also prepares that run (predictions, arena
 *   places: O(gets), hidden behind the barrier). When it starts (the
 *   barrier completed, here, right after the clients were woken), the gets
 *   recorded for it last time (phase.c) are issued as prefetches into the
 *   client's prefetch arena in the order of the last run's gets, through a
 *   window of prefetch_chunk per destination node: once half of a node's
 *   window has landed it is filled again, so the link never idles between
 *   chunks and the first get waits for its own prefetch only, whatever the
 *   number queued behind it. A get that matches a landed prefetch is
 *   served from the arena without touching the network; one that matches a
 *   prefetch in flight waits for that one; one whose prefetch has not left
 *   yet (the client got ahead of the window) issues it at once and waits
 *   for it (pf_demand); a miss is issued normally and recorded, counted by
 *   reason (pf_miss_cold/new/invalid/full). An own put overlapping a
 *   prediction invalidates it. At the notify that ends the phase, the
 *   gets the client served itself from the shared table (HOIST_PF_TAKEN)
 *   are handed to the phase table at their place among the run's gets
 *   (phase_take: the next run keeps the program's order, which the
 *   client's lookup near its cursor relies on), and unused predictions
 *   are dropped.
 *   Gets whose lead time (get time minus phase start, measured when
 *   recorded) cannot pay for the extra copy are not prefetched; nor are
 *   gets from PEs of this node (one copy is already all they cost).
 * - The arena has two halves used by alternate phases, so a misprediction
 *   still in flight never lands on data of the next phase.
 */
#ifndef HOISTD_OVERLAP_H
#define HOISTD_OVERLAP_H

#include <stdint.h>

#include "conflict.h"
#include "hoist_shm.h"
#include "phase.h"

struct daemon;
struct client;

enum pf_state { PF_NONE = 0, PF_QUEUED, PF_ISSUED, PF_READY, PF_FAILED, PF_TAKEN };

struct pf_slot {
	uint64_t arena_off;
	int32_t node;
	int32_t res;       /* result of a landed prefetch */
	uint8_t state;     /* enum pf_state */
	uint8_t waiting;   /* a get arrived while it was in flight */
	uint8_t w_want_cqe;
	uint8_t w_opcode;
	uint64_t w_user_data;
	char *w_dst;
};

/* Puts that continue one another (the next starts where the last ended,
 * same PE) are kept as one run outside the tree until a put breaks the
 * run: small puts walking through an array then cost no tree insertion
 * each (they dominated the small-put message rate). The run completes
 * with its newest put. */
struct put_run {
	int active;
	int32_t pe;
	uint64_t start, end;
	uint64_t first, seq; /* sequences of its oldest and newest put */
	uint32_t n, done;    /* its puts, and how many of them completed */
};

struct overlap {
	struct conflict conf;
	struct conflict gconf;  /* unfinished gets (unordered transports only;
				 * cap 0 otherwise) */
	struct put_run run;
	struct phase_table ph;
	uint64_t put_seq;
	uint32_t nputs, conf_cap; /* outstanding puts, and their cap */
	uint32_t decided;       /* sq index + 1 whose overlap check is done */
	uint32_t waiting;       /* sq index + 1 waiting for a conflicting put */
	int ordered;            /* the transport delivers in order per peer */
	/* phases */
	int in_phase;
	int32_t box_wait;   /* slot a strided/vector get waits for (stalled), -1 none */
	int32_t box_pe;     /* ... and the box it asked for */
	uint64_t box_off, box_len;
	uint64_t gen;           /* phase runs started (also tags prefetches) */
	uint64_t phase_start_ns;
	uint64_t next_phase;    /* named by the last notify */
	uint64_t cur_phase;     /* the phase running now */
	uint64_t run_start[3];  /* served, misses, wasted at its start */
	int next_set;
	/* prefetch arena (shared with the client after the slot table): two
	 * halves, by gen parity */
	struct hoist_pf_slot *table; /* [nslots], what the client may read */
	char *arena;
	uint64_t half_bytes, used;
	uint32_t half_inflight[2];
	struct pf_slot *slots;  /* [max_gets], parallel to the phase's entries */
	uint32_t nslots;
	uint32_t *node_out;     /* [nnodes] prefetches in flight this phase */
	uint32_t *node_cursor;  /* [nnodes] next entry to consider */
	int32_t nnodes;
	uint32_t chunk;         /* window per node (prefetch_chunk) */
	uint32_t table_n;       /* slots the prepared/current run may publish */
	uint8_t prepared;       /* the notify prepared the next run (phase_begin) */
	uint8_t stalled;        /* a window stalled with nothing in flight to retry it */
};

int overlap_create(struct daemon *d, struct client *c); /* 0 or -errno */
void overlap_destroy(struct client *c);

/* A remote put is about to be issued: conflict and invalidation checks.
 * 0: go (*seq is its sequence for overlap_put_issued), 1: stall (the cap,
 * or behind an unfinished overlapping put on an unordered transport). */
int overlap_put_begin(struct client *c, const struct hoist_sqe *sqe, uint64_t *seq);
void overlap_put_issued(struct client *c, const struct hoist_sqe *sqe, uint64_t seq);
/* A put or atomic to pe was refused (-ECONNRESET: the PE or its node is
 * gone) before overlap_put_begin saw it: a get after it must not be served
 * from a prefetch that read pe before it (not by the daemon, not from the
 * client's fast table): every prediction of pe in this phase is dropped. */
void overlap_put_refused(struct client *c, int32_t pe);
void overlap_put_done(struct client *c, int32_t pe, uint64_t seq);

/* A remote access to [off, off+len) (write: a put) that is not a plain
 * get: conflict check only, not recorded for prefetch. 1: wait (behind an
 * unfinished put, or a put behind an unfinished get), 0: go. */
int overlap_access(struct client *c, int32_t pe, uint64_t off, uint64_t len, int write);

/* Unfinished gets, tracked on an unordered transport only (so that a later
 * overlapping put waits until they read their range): the sequence the
 * next get gets (0: not tracked), its record once issued, its completion
 * (any order). */
uint64_t overlap_get_seq(struct client *c);
void overlap_get_issued(struct client *c, int32_t pe, uint64_t off, uint64_t len, uint64_t gseq);
void overlap_get_done(struct client *c, int32_t pe, uint64_t gseq);

/* Nothing of the client is in flight (quiet, barrier): every put it
 * recorded completed. */
void overlap_quiesced(struct client *c);

/* A remote get: 1 = served now (*res), 2 = will complete when its
 * prefetch lands, 3 = wait (behind an unfinished put; call again), 0 =
 * issue it normally (it was checked and recorded). */
int overlap_get(struct daemon *d, struct client *c, const struct hoist_sqe *sqe, int32_t node,
		int *res);

/* A remote strided/vector get whose elements lie in [off, off+len) (its
 * bounding box, payload bytes of data): recorded for phase prefetch as one
 * contiguous unit when the box is dense enough (at most 4x the payload and
 * half the arena). 1 = the box has landed: *box points at its data in the
 * arena (the caller gathers the elements), 0 = issue it normally, -EAGAIN =
 * the box is in flight: stall the descriptor and call again with the same
 * box (the phase table is not consulted twice), -EBUSY = the box overlaps
 * an unfinished put: stall and call again. */
int overlap_get_box(struct daemon *d, struct client *c, int32_t pe, uint64_t off, uint64_t len,
		    uint64_t payload, int32_t node, const char **box);

/* Notify: drop this phase's mispredictions, and prepare the next phase's
 * run (its predictions, which to prefetch, their arena places), so that the
 * start only issues. */
void overlap_notify(struct daemon *d, struct client *c, uint64_t next_phase);
/* The next phase starts (barrier completed, or hoist_phase): the first
 * window of prefetches per node leaves. */
void overlap_phase_start(struct daemon *d, struct client *c);
/* A prefetch landed (or failed). */
void overlap_prefetch_done(struct daemon *d, struct client *c, uint32_t slot, uint64_t gen,
			   int res);
/* Does [p, p+n) lie in the client's arena? (orphaning in-flight data) */
int overlap_owns(const struct client *c, const char *p);

#endif
