/*
 * libhoist internals. Not installed. Tests link the static archive and use
 * hoist__ctx() to reach the raw rings (e.g. to write malformed descriptors).
 *
 * Layering, bottom first: each file calls only files to its left, so no
 * two files of the client depend on each other (ring.h's comment says
 * what each layer holds):
 *
 *   shm/hoist_shm.h <- ring.h (inline) <- staging.c symheap.c symdata.c env.c error.c
 *   <- ctx.c <- wait.c <- ptr.c <- agg.c <- rma.c <- nodecoll.c <- vec.c sync.c coll.c p2p.c amo.c
 *   <- attach.c
 *
 * The inline functions below are thin: a ring.h fast path, and on "full"
 * the slow path of the layer that owns the policy (wait.c).
 */
#ifndef HOIST_CLIENT_INTERNAL_H
#define HOIST_CLIENT_INTERNAL_H

#include <errno.h>
#include <stdint.h>
#include <stddef.h>

#include "hoist.h"
#include "hoist_shm.h"
#include "ring.h"
#include "staging.h"
#include "symheap.h"

#define HOIST_API __attribute__((visibility("default")))

/* An operation that waits for a CQE (gets, quiet). */
struct hoist_op {
	uint8_t busy;
	uint8_t done;
	uint8_t copyout;   /* get into staging: 1 copy to dst when done, 2 scatter
			    * count elements of elem bytes at dst_stride; 3: a
			    * get whose result is in its CQE (HOIST_SQE_F_INLINE),
			    * copied to dst (len bytes) when reaped (wait.c) */
	int32_t res;
	int64_t stage_id;  /* staging record, -1 if none */
	uint64_t stage_off;
	void *dst;
	uint64_t len;
	struct hoist_op *next_nbi; /* list of nbi gets awaiting copy-out */
	ptrdiff_t dst_stride;
	uint64_t elem, count;
	uint8_t *arrived;  /* collective: [size] source blocks landed (partial CQEs) */
};

/* A split-phase collective (coll.c, nodecoll.c). */
struct hoist_req {
	struct hoist_op *op; /* its op slot; posted on the daemon path only */
	uint8_t kind;
	uint8_t node;        /* 1: a node collective (nodecoll.c) */
	uint8_t finished;    /* node: complete, result in rc */
	int32_t rc;
	uint32_t m;          /* node: its number */
	int size;
	uint8_t arrived[];   /* exchanges: [size], set by partial completions */
};

/* nodecoll.c: the node collectives of a one-node job */
struct hoist_ctx;
struct hoist_nc_rec;
void hoist__nc_setup(struct hoist_ctx *c);
void hoist__nc_release(struct hoist_ctx *c);
/* Run the collective of the descriptor-to-be (dst/src symmetric, len as
 * sqe.len) among the node's PEs; r is the caller's request (op slot
 * held). 0 or -errno; r->finished tells whether it is complete. */
int hoist__nc_start(struct hoist_ctx *c, struct hoist_req *r, void *dst, const void *src,
		    uint64_t len, int type, int op, int root, int blocking);
/* Complete r (blocking) or advance it (test): 1 complete, 0 not yet. */
int hoist__nc_progress(struct hoist_ctx *c, struct hoist_req *r, int blocking);
/* the wake check a blocking start deferred (hoist__nc_start), if still due */
void hoist__nc_wake(struct hoist_ctx *c);
/* hoist_wait_from for a node collective: until r's blocks are in dst */
int hoist__nc_wait_from(struct hoist_ctx *c, struct hoist_req *r);

/* A PE of the job attached to the same daemon (hoist_ptr, direct access). */
struct hoist_peer {
	int32_t rank;
	int32_t state;     /* 0: not mapped yet, 1: mapped at base, <0: -errno (stays) */
	char *base;        /* its symmetric heap, mapped MAP_SHARED (own heap for self) */
};

struct hoist_ctx {
	int initialized;
	int sock;          /* attach socket, kept open: hang-up = daemon died */
	int reply_timeout_ms; /* HOIST_ATTACH_TIMEOUT_MS: deadline of the daemon's
			       * immediate answers (attach accepted, PeersReply) */
	int rank, size;
	uint32_t spin_us;
	uint32_t wait_poll_ms; /* HOIST_WAIT_POLL_MS: bound of a p2p wait's sleep */
	uint32_t yield_long_us; /* HOIST_YIELD_LONG_US: a yield this long ends the spin (wait.c) */
	uint32_t crowded;       /* waits left that sleep without yielding first (wait.c) */
	int no_cpu_handoff;     /* HOIST_CPU_HANDOFF=0: waits ignore prog_cpu (wait.c) */

	struct hoist_ring ring; /* ctrl page, SQ, CQ, doorbell (ring.h) */
	size_t ring_bytes;      /* mapped at ring.ctrl */

	char *staging_base;
	struct staging stage;
	char *heap_base;
	uint64_t heap_bytes;    /* the heap file: all of it is mapped at heap_base */
	uint64_t heap_user;     /* [0, heap_user): the heap of hoist_malloc */
	struct symheap heap;
	/* symmetric global and static data (HOIST_INIT_SYMMETRIC_DATA,
	 * symdata.c): the executable's writable segment [data_lo, +data_len)
	 * lives at [data_off, +data_len) of the heap file; data_len 0: off */
	uintptr_t data_lo;
	uint64_t data_len, data_off;

	struct hoist_op *ops;  /* indexed by user_data - 1; ops[nops] is quiet's */
	uint32_t nops;
	uint32_t ops_free_hint;
	struct hoist_op *nbi_head, *nbi_tail;

	int auto_overlap;      /* 0: every put completes remotely before it returns */
	/* prefetch table published by the daemon (automatic overlap) */
	struct hoist_pf_slot *pf_table;
	char *pf_arena;
	uint64_t pf_region_bytes;
	uint32_t pf_slots, pf_cursor;
	uint32_t pf_gen;       /* phase runs started, counted like the daemon */
	uint64_t pf_fast;      /* gets served here (for tests) */
	int32_t sticky_err;    /* first failed deferred put, reported at quiet */
	int daemon_gone;       /* the daemon hung up: nothing goes on as if it lived */
	uint32_t barrier_target; /* epoch barrier_wait waits for */
	int barrier_pending;
	/* node barrier (sync.c): a one-node job's PEs synchronise among
	 * themselves in the wake line of the lowest rank's heap */
	struct hoist_heap_wake *nb_line; /* that line, once in use (else NULL) */
	uint32_t **nb_in;        /* [size]: every PE's nb_in (its own wake line) */
	uint32_t nb_k;           /* node barriers this PE arrived at */
	int nb_armed;            /* the pending wait is a node barrier's */
	uint64_t barriers_node;  /* barrier waits done in shared memory (tests) */
	uint64_t barriers_epoch; /* barrier waits on the daemon's epoch (tests) */
	uint64_t nb_sq_waits;    /* node barrier notifies that found the SQ full (tests) */
	uint64_t nb_kicks;       /* half-full SQ doorbells of node barriers (tests) */
	uint32_t nb_pend_n;      /* node barriers not yet told to the daemon (sync.c) */
	uint64_t nb_pend_phase;  /* their phase id (all the same) */
	uint64_t nb_notifies;    /* notify descriptors of node barriers posted (tests) */
	uint64_t nb_flush_wait;  /* of those, posted before a wait for the daemon (tests) */
	/* node collectives (nodecoll.c): a one-node job's PEs combine among
	 * themselves through their heaps (hoist_shm.h, struct hoist_nc_hdr) */
	int nc_on;                /* collectives take the node path */
	uint64_t nc_off;          /* the PEs' blocks: heap offset, the same everywhere */
	char **nc_base;           /* [size]: every PE's heap as mapped here */
	struct hoist_nc_rec *nc_rec; /* [HOIST_NC_SLOTS]: own collectives by slot */
	uint32_t nc_m;            /* node collectives started */
	uint32_t nc_done;         /* the done word as last published */
	uint32_t nc_lo;           /* every node collective below it is complete */
	uint32_t nc_done_min;     /* every other PE's done reached this when last read (they grow) */
	uint64_t nc_others_early; /* then: AND of their hoist_nc_hdr.early */
	uint64_t nc_early;        /* this PE's hoist_nc_hdr.early */
	int32_t nc_err;           /* could not set up (a peer's heap): every one fails */
	int32_t nc_sticky;        /* a failed eager collective found after it returned */
	int nc_wake_due;          /* a progress word stored, the sleepers not yet looked at */
	struct hoist_req *nc_spare; /* a node collective's request, kept for the next (no exchange) */
	int32_t nc_dead;          /* a node collective failed with -ECONNRESET: so do the later ones */
	uint64_t nc_checked_ns;   /* the last arriver's last liveness check (CLOCK_MONOTONIC),
				   * node barriers' and node collectives' */
	uint64_t colls_node;      /* collectives completed that way (tests, bench) */
	/* a job over several nodes: the node's PEs meet in their blocks, ONE
	 * posts a HOIST_COLL_F_NODE descriptor, the daemon answers in the
	 * anchor's slot (nodecoll.c) */
	int nc_mn;                /* this node's PEs are not all of the job */
	int32_t *nc_ranks;        /* [nc_n]: this node's ranks, ascending */
	int32_t nc_n;
	struct hoist_heap_wake *nc_line; /* the anchor's (lowest local rank's) wake line */
	uint32_t coll_calls;      /* collectives numbered so far: the daemon's count of
				   * this PE's HOIST_OP_COLL descriptors, node ones included */
	uint64_t colls_node_posted; /* node descriptors this PE posted (tests) */
	int posted_since_quiet;  /* a descriptor went out after the last quiet */
	uint32_t sq_ops_tail;    /* sq_tail after the last descriptor but a node
				  * barrier's notify (rma.c direct_base) */
	uint64_t quiets_posted;  /* quiet descriptors posted (hoist__quiet; tests) */
	uint64_t quiets_local;   /* quiets done without the daemon: nothing was
				  * posted since the last one (tests) */

	/* node-local direct access (ptr.c) */
	char job_key[256];
	struct hoist_peer *peers; /* local ranks, ascending, self included */
	uint32_t npeers;
	int peers_contig;         /* peers[i].rank == peers[0].rank + i */
	int direct;               /* HOIST_DIRECT: put/get to local PEs by memmove */
	uint64_t direct_puts, direct_gets, direct_bytes; /* done that way (tests, bench) */
	uint64_t gets_inline; /* gets posted with the result in the CQE (rma.c; tests) */
	uint64_t direct_amos;   /* atomics done that way (amo.c; tests) */
	uint64_t put_signals;   /* hoist_put_signal*: all, and those whose put */
	uint64_t direct_signals; /* ... the library stored itself (tests) */

	/* aggregation region (agg.c) */
	int agg_depth;         /* hoist_aggregate_begin nesting */
	int agg_broken;        /* a conflict ended it early: normal issue */
	uint64_t *agg_lo, *agg_hi; /* [size] box of aggregated puts per PE */
	char *agg_get_lo, *agg_get_hi; /* box of aggregated gets' local dst */
	uint64_t agg_early_ends; /* regions ended early (for tests) */
	uint64_t agg_ops;        /* operations aggregated (for tests) */
};

extern struct hoist_ctx hoist__g;

/* Where a symmetric address lies in the heap file: its offset *off and
 * the part of the file [*lo, *hi) it may range over: the heap proper, or
 * (symmetric data) the executable's data segment. 0 or -EFAULT. Every
 * translation of a symmetric address to a heap offset goes through here
 * (or hoist__sym_off). */
static inline int hoist__sym_region(const struct hoist_ctx *c, const void *p, uint64_t *off,
				    uint64_t *lo, uint64_t *hi)
{
	uintptr_t a = (uintptr_t)p, h = (uintptr_t)c->heap_base;
	if (a >= h && a - h <= c->heap_user) {
		*off = a - h;
		*lo = 0;
		*hi = c->heap_user;
		return 0;
	}
	if (a >= c->data_lo && a - c->data_lo < c->data_len) {
		*off = c->data_off + (a - c->data_lo);
		*lo = c->data_off;
		*hi = c->data_off + c->data_len;
		return 0;
	}
	return -EFAULT;
}

/* The heap-file offset of the symmetric range [p, p + n): 0, or -EFAULT
 * when it is not inside one part (heap or data segment). */
static inline int hoist__sym_off(const struct hoist_ctx *c, const void *p, uint64_t n, uint64_t *off)
{
	uint64_t lo, hi;
	if (hoist__sym_region(c, p, off, &lo, &hi) || !hoist_range_ok(*off, n, hi))
		return -EFAULT;
	return 0;
}

/* Test hook: the library's context (NULL before hoist_init). */
HOIST_API struct hoist_ctx *hoist__ctx(void);

/* env.c */
struct hoist_env {
	int rank, size;
	char job[256];
	char runtime_dir[256];
	uint64_t heap_bytes;
	uint32_t spin_us;
	int spin_set;
	int auto_overlap;  /* HOIST_AUTO, default 1 */
	int symmetric_data; /* HOIST_SYMMETRIC_DATA, default 0 */
	int direct;        /* HOIST_DIRECT, default 1 */
	int reply_timeout_ms; /* HOIST_ATTACH_TIMEOUT_MS, default 10000 */
	uint32_t wait_poll_ms; /* HOIST_WAIT_POLL_MS, default 50 */
	uint32_t yield_long_us; /* HOIST_YIELD_LONG_US, default 200; 0: off */
	int cpu_handoff;        /* HOIST_CPU_HANDOFF, default 1 */
	const char *job_from; /* where the job key came from, in words */
};
/* 0, or -EINVAL with err saying which variable holds what. */
int hoist__env_read(struct hoist_env *e, char *err, size_t errlen);
int hoist__runtime_dir(char *buf, size_t len);

/* wait.c: progress, waiting, and what to do when the SQ, the op slots or
 * staging run out */
int hoist__sqe_wait(struct hoist_ctx *c, struct hoist_sqe **out);
int hoist__reap(struct hoist_ctx *c);
int hoist__wait_op(struct hoist_ctx *c, struct hoist_op *op);
int hoist__op_alloc(struct hoist_ctx *c, struct hoist_op **out);
void hoist__op_free(struct hoist_ctx *c, struct hoist_op *op);
int hoist__check_daemon(struct hoist_ctx *c);
/* hoist__check_daemon at most once a millisecond per PE (the node
 * barrier's and node collectives' last arriver): 0 when not due */
int hoist__check_daemon_due(struct hoist_ctx *c);
int hoist__quiet(struct hoist_ctx *c);
int hoist__barrier_notify(struct hoist_ctx *c, uint64_t phase);
/* The phase id of a call site: object file hash and offset, the same in
 * every process of one program (sync.c). */
uint64_t hoist__site_id(uintptr_t addr);
int hoist__wait_epoch(struct hoist_ctx *c, uint32_t target);
/* How many PEs arrived at node barrier k (their nb_in reached it), counted
 * from PE from on and stopping at the first that did not */
int hoist__nb_arrived(const struct hoist_ctx *c, uint32_t k, int from);
/* Until node barrier k completed (every PE's nb_in reached it) or the daemon's epoch
 * reached barrier_target (0), or the job failed / the daemon left (-errno). */
int hoist__wait_node_barrier(struct hoist_ctx *c, uint32_t k);
/* Until op completed (its result) or the partial completion of pe came (0). */
int hoist__wait_arrival(struct hoist_ctx *c, struct hoist_op *op, int pe);

/* Posting: a free SQE in *out (0), waiting for the daemon to free one when
 * the SQ is full, or -errno (the daemon is gone). */
int hoist__nb_flush(struct hoist_ctx *c);

/* Node barriers not yet told to the daemon (sync.c) go first: the daemon
 * must count them before this PE's later descriptors (a caller that
 * remembers sq_tail before posting flushes before it reads it). */
static inline int hoist__sqe_get(struct hoist_ctx *c, struct hoist_sqe **out)
{
	if (__builtin_expect(c->nb_pend_n != 0, 0)) {
		int rc = hoist__nb_flush(c);
		if (rc)
			return rc;
	}
	if (__builtin_expect(hoist_ring_sqe_get(&c->ring, out) == 0, 1))
		return 0;
	return hoist__sqe_wait(c, out);
}

/* Publish the SQE hoist__sqe_get handed out. */
static inline void hoist__sqe_submit(struct hoist_ctx *c)
{
	c->posted_since_quiet = 1;
	hoist_ring_submit(&c->ring);
	c->sq_ops_tail = c->ring.sq_tail;
}

/* Publish an SQE the daemon need not see soon: no doorbell, however
 * long the daemon sleeps. It is seen at its next look at the rings (the
 * next descriptor that rings, the next wait for the daemon, which kicks,
 * or a full SQ, which kicks too). A node barrier's notify (sync.c). */
static inline void hoist__sqe_submit_lazy(struct hoist_ctx *c)
{
	c->posted_since_quiet = 1;
	hoist_ring_publish(&c->ring);
	c->sq_ops_tail = c->ring.sq_tail;
}

/* An nbi operation waits in the list hoist__quiet completes, in order */
static inline void hoist__nbi_append(struct hoist_ctx *c, struct hoist_op *op)
{
	op->next_nbi = NULL;
	if (c->nbi_tail)
		c->nbi_tail->next_nbi = op;
	else
		c->nbi_head = op;
	c->nbi_tail = op;
}

/* Before waiting for the daemon: wake it if it sleeps. */
static inline void hoist__kick(struct hoist_ctx *c)
{
	hoist_ring_kick(&c->ring);
}

/* ptr.c: node-local peers */
int hoist__peers_init(struct hoist_ctx *c, const int32_t *ranks, size_t n);
void hoist__peers_release(struct hoist_ctx *c);
int hoist__peer_map(struct hoist_ctx *c, struct hoist_peer *p);

/* A same-node writer's part of the heap wake line (hoist_shm.h): call
 * after storing into PE pe's heap through this process's mapping of it
 * (a direct put, the own heap included). pe must be on this node (mapped
 * by ptr.c, or the caller's own rank); anything else is ignored. Cheap
 * when pe does not sleep in hoist_wait_until* (a fence and one load),
 * else one FUTEX_WAKE. */
void hoist__heap_touched(struct hoist_ctx *c, int pe);

/* The same, for a caller that holds the mapping's base already (the
 * direct put: no second peer lookup on its 20 ns path) and that wrote
 * [off, off + len) of that heap (heap-file offsets): a PE sleeping on
 * other words is not woken (hoist_heap_touched_range). The FUTEX_WAKE and
 * the counting, rare, are out of line. */
void hoist__heap_wake(const struct hoist_ctx *c, struct hoist_heap_wake *w, int r);
static inline void hoist__heap_touched_at(const struct hoist_ctx *c, char *base, uint64_t off,
					  uint64_t len)
{
	struct hoist_heap_wake *w = hoist_heap_wake_of(base, c->heap_bytes);
	int r = hoist_heap_touched_range(w, off, len);
	if (r)
		hoist__heap_wake(c, w, r);
}

/* The local peer entry of pe, NULL if pe is on another node. */
static inline struct hoist_peer *hoist__peer_find(struct hoist_ctx *c, int pe)
{
	uint32_t n = c->npeers;
	if (!n || pe < c->peers[0].rank || pe > c->peers[n - 1].rank)
		return NULL;
	if (c->peers_contig)
		return &c->peers[pe - c->peers[0].rank];
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (c->peers[mid].rank < pe)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && c->peers[lo].rank == pe ? &c->peers[lo] : NULL;
}

/* agg.c: aggregation regions */
/* HOIST_SQE_F_AGG while a region aggregates, else 0 */
static inline uint8_t hoist__agg_flag(const struct hoist_ctx *c)
{
	return (c->agg_depth && !c->agg_broken) ? HOIST_SQE_F_AGG : 0;
}
/* Inside an aggregating region: may a put (remote [roff, +n) at pe, local
 * source src) / a get (remote [roff, +n) at pe into dst) be aggregated?
 * Records it; a conflict ends aggregation early (returns 0). */
int hoist__agg_put(struct hoist_ctx *c, int pe, uint64_t roff, uint64_t n, const void *src);
int hoist__agg_get(struct hoist_ctx *c, int pe, uint64_t roff, uint64_t n, const void *dst);
/* A conflict: what the region aggregated so far completes now (quiet), the
 * rest of the region issues normally. */
void hoist__agg_break(struct hoist_ctx *c);
/* *direct: the library stored the data itself (complete on return) */
int hoist__put_common(int pe, void *dst, const void *src, size_t n, int nbi, int *direct);
/* pe's heap mapped here when an operation to it may be done by the library
 * itself now (rma.c: the conditions of direct puts), else NULL. */
char *hoist__direct_base(struct hoist_ctx *c, int pe);

/* wait.c: staging space and staged gets' data */
/* a finished staged get: copy (or scatter) its data out */
void hoist__op_copyout(struct hoist_ctx *c, struct hoist_op *op);
int64_t hoist__stage_alloc_slow(struct hoist_ctx *c, uint64_t len, uint64_t *off);
/* Staging space for len bytes (record id, *off), making progress (and
 * quiet, which frees what nbi gets hold) until it frees up; -errno. */
static inline int64_t hoist__stage_alloc_wait(struct hoist_ctx *c, uint64_t len, uint64_t *off)
{
	int64_t id = staging_alloc(&c->stage, len, off);
	if (__builtin_expect(id != -EAGAIN, 1))
		return id;
	return hoist__stage_alloc_slow(c, len, off);
}

#define HOIST_CHUNK_BYTES (256u * 1024u)
/* Bytes of one staged piece: the arena may be smaller than
 * HOIST_CHUNK_BYTES (staging_bytes is a setting), and one allocation takes
 * at most half. */
static inline size_t hoist__chunk_bytes(const struct hoist_ctx *c)
{
	uint64_t m = staging_max_alloc(&c->stage);
	return m < HOIST_CHUNK_BYTES ? (size_t)m : HOIST_CHUNK_BYTES;
}

static inline uint64_t hoist__op_udata(struct hoist_ctx *c, struct hoist_op *op)
{
	return (uint64_t)(op - c->ops) + 1;
}

#endif
