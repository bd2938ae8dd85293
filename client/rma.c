/*
 * put / get and their nonblocking forms. Payloads of up to 16 bytes travel
 * inline in the descriptor; larger ones are copied into the staging arena
 * in chunks (so the source is reusable on return) and pipelined: the
 * client fills chunk k+1 while the daemon moves chunk k.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define GET_PIPELINE 8
/* one descriptor never moves more than this (the transports frame it) */
#define SQE_MAX_BYTES (4u << 20)

static inline int check_target(struct hoist_ctx *c, int pe, const void *sym, size_t n,
			       uint64_t *off)
{
	if (!c->initialized)
		return -ENOTCONN;
	if (pe < 0 || pe >= c->size)
		return -EINVAL;
	return hoist__sym_off(c, sym, n, off);
}

/*
 * Same-node put/get by the library itself: one memmove between this
 * process's mappings of the two heaps (ptr.c), no descriptor, no round
 * trip. It must give exactly what the daemon would:
 *
 * - Ordering with this PE's earlier operations. Only when the daemon has
 *   consumed every descriptor we posted (sq_head reached sq_ops_tail: the
 *   tail but for node barriers' lazy notifies, which carry no data and
 *   are never held in a one-node job, sync.c, barrier.c; fast_get asks
 *   for the whole tail). The daemon executes a put or get to a PE of this node
 *   the moment it consumes it (self.c: never deferred by HOIST_AUTO, never
 *   prefetched) and publishes sq_head with a release after the copy, so
 *   every earlier put to the same PE has landed and a direct load sees it;
 *   a direct store cannot overtake one. What may still be in flight then
 *   targets other nodes (deferred or transported puts, gets into the own
 *   heap); put ordering (fence) is per target PE, and touching the buffer
 *   of an nbi operation before quiet is undefined either way. Nbi gets
 *   waiting for their copy-out at quiet (nbi_head) would land after a
 *   direct access to the same buffer: with any of them, the daemon path.
 * - Later operations: our stores precede the release of sq_tail of
 *   anything we post afterwards, and a barrier publishes them to the
 *   other PEs like the daemon's copies (notify -> epoch release, or the
 *   node barrier's arrival chain, sync.c).
 * - Errors: a job whose PE died has job_error set; then the daemon decides
 *   (-ECONNRESET for the dead PE). Bounds were checked by check_target.
 *
 * Measured (bench/run-ptr.sh, 2-CPU VM): get 8 B 15 ns vs 1.3 us through
 * the daemon, 64 KiB 1.9 vs 20 us (one copy instead of two, no round
 * trip); put 8 B 19 vs 125 ns. Faster at every size, so it is on by
 * default; HOIST_DIRECT=0 switches it off (always the daemon).
 */
static inline char *direct_base(struct hoist_ctx *c, int pe)
{
	if (!c->direct)
		return NULL;
	struct hoist_peer *p = hoist__peer_find(c, pe);
	if (!p || p->state < 0 || c->nbi_head || c->agg_depth || c->daemon_gone ||
	    __atomic_load_n(&c->ring.ctrl->job_error, __ATOMIC_RELAXED))
		return NULL;
	/* pairs with the daemon's hoist_store_release(&ctrl->sq_head) after
	 * it executed what it consumed */
	if ((int32_t)(hoist_load_acquire(&c->ring.ctrl->sq_head) - c->sq_ops_tail) < 0)
		return NULL;
	if (p->state == 0 && hoist__peer_map(c, p))
		return NULL;
	return p->base;
}

/* For the other operations that take the direct path (amo.c): the same
 * conditions. */
char *hoist__direct_base(struct hoist_ctx *c, int pe)
{
	return direct_base(c, pe);
}

/* *direct: done by the library itself (complete on return). */
static int put_common(int pe, void *dst, const void *src, size_t n, int nbi, int *direct)
{
	struct hoist_ctx *c = &hoist__g;
	uint64_t roff;
	*direct = 0;
	int rc = check_target(c, pe, dst, n, &roff);
	if (rc)
		return rc;
	if (n == 0)
		return 0;
	if (!src)
		return -EINVAL;
	char *base = direct_base(c, pe);
	if (base) {
		memmove(base + roff, src, n); /* src may overlap: own heap, a hoist_ptr */
		hoist__heap_touched_at(c, base, roff, n); /* pe may wait for it (p2p.c) */
		c->direct_puts++;
		c->direct_bytes += n;
		*direct = 1;
		return 0;
	}
	struct hoist_sqe *sqe;
	uint8_t agg = c->agg_depth ? (uint8_t)(hoist__agg_put(c, pe, roff, n, src) ? HOIST_SQE_F_AGG : 0) : 0;

	if (n <= HOIST_INLINE_MAX) {
		if ((rc = hoist__sqe_get(c, &sqe)))
			return rc;
		*sqe = (struct hoist_sqe){.opcode = HOIST_OP_PUT, .flags = HOIST_SQE_F_INLINE | agg, .pe = pe,
					  .remote_off = roff, .len = n};
		memcpy(sqe->inline_data, src, n);
		hoist__sqe_submit(c);
		return 0;
	}
	uint64_t loff;
	if (nbi && hoist__sym_off(c, src, n, &loff) == 0) {
		/* zero copy: the daemon reads the source in place before quiet */
		for (size_t done = 0; done < n;) {
			size_t len = n - done < SQE_MAX_BYTES ? n - done : SQE_MAX_BYTES;
			if ((rc = hoist__sqe_get(c, &sqe)))
				return rc;
			*sqe = (struct hoist_sqe){.opcode = HOIST_OP_PUT, .flags = HOIST_SQE_F_LOCAL_HEAP | agg,
						  .pe = pe, .remote_off = roff + done, .len = len,
						  .local_off = loff + done};
			hoist__sqe_submit(c);
			done += len;
		}
		return 0;
	}
	for (size_t done = 0; done < n;) {
		size_t len = n - done < hoist__chunk_bytes(c) ? n - done : hoist__chunk_bytes(c);
		uint64_t soff;
		int64_t id = hoist__stage_alloc_wait(c, len, &soff);
		if (id < 0)
			return (int)id;
		memcpy(c->staging_base + soff, (const char *)src + done, len);
		if ((rc = hoist__sqe_get(c, &sqe))) {
			staging_release(&c->stage, id);
			return rc;
		}
		*sqe = (struct hoist_sqe){.opcode = HOIST_OP_PUT, .flags = agg, .pe = pe,
					  .remote_off = roff + done, .len = len, .local_off = soff};
		staging_bind_sq(&c->stage, id, c->ring.sq_tail);
		hoist__sqe_submit(c);
		done += len;
	}
	return 0;
}

int hoist__put_common(int pe, void *dst, const void *src, size_t n, int nbi, int *direct)
{
	return put_common(pe, dst, src, n, nbi, direct);
}

HOIST_API int hoist_put(int pe, void *dst, const void *src, size_t n)
{
	int direct;
	int rc = put_common(pe, dst, src, n, 0, &direct);
	/* HOIST_AUTO=0, the blocking baseline: the put is remotely complete
	 * before the call returns (a quiet orders every piece of it); inside
	 * an aggregating region the region's end does that. A direct put is
	 * complete already; the quiet is still owed to what was posted since
	 * the last one (its errors are reported here). */
	if (rc == 0 && !hoist__g.auto_overlap && n && !hoist__agg_flag(&hoist__g) &&
	    (!direct || hoist__g.posted_since_quiet))
		rc = hoist__quiet(&hoist__g);
	return rc;
}

HOIST_API int hoist_put_nbi(int pe, void *dst, const void *src, size_t n)
{
	int direct;
	return put_common(pe, dst, src, n, 1, &direct);
}

/* Post one GET of len bytes at roff into (heap or staging) local_off. */
static int post_get(struct hoist_ctx *c, int pe, uint64_t roff, uint64_t len, uint64_t local_off,
		    int to_heap, uint64_t user_data)
{
	struct hoist_sqe *sqe;
	int rc = hoist__sqe_get(c, &sqe);
	if (rc)
		return rc;
	/* the daemon serves this one from (usually) the slot at the cursor:
	 * the next get of the run is expected one further (fast_get) */
	c->pf_cursor++;
	*sqe = (struct hoist_sqe){.opcode = HOIST_OP_GET,
				  .flags = (uint8_t)((to_heap ? HOIST_SQE_F_LOCAL_HEAP : 0) |
						     (user_data ? HOIST_SQE_F_CQE : 0) |
						     hoist__agg_flag(c)),
				  .pe = pe, .user_data = user_data, .remote_off = roff, .len = len,
				  .local_off = local_off};
	hoist__sqe_submit(c);
	return 0;
}

/* A small get from a PE of this node through the daemon (the direct path
 * is off or not allowed now): its result comes back in the completion
 * (HOIST_SQE_F_INLINE, <= HOIST_CQE_DATA_MAX bytes), which reap_one
 * (wait.c) copies to dst, wherever dst is (private memory or the own
 * heap). No staging buffer: the client reads the CQE's line anyway, and
 * a staged result was one more line to fetch from the daemon's core after
 * it, plus the staging record's allocation and release (issue 16: a get
 * 8 B through the daemon). nbi: linked for quiet, which only waits. Other
 * nodes' PEs keep the staged path: their data land after the descriptor
 * was consumed, where no CQE slot is reserved for them (and verbs reads
 * into registered memory only). */
static int get_inline(struct hoist_ctx *c, void *dst, int pe, uint64_t roff, size_t n, int nbi)
{
	struct hoist_op *op;
	int rc = hoist__op_alloc(c, &op);
	if (rc)
		return rc;
	op->dst = dst;
	op->len = n;
	op->copyout = 3;
	struct hoist_sqe *sqe;
	if ((rc = hoist__sqe_get(c, &sqe))) {
		hoist__op_free(c, op);
		return rc;
	}
	c->pf_cursor++; /* as post_get: every get posted moves the cursor */
	*sqe = (struct hoist_sqe){.opcode = HOIST_OP_GET, .flags = HOIST_SQE_F_INLINE | HOIST_SQE_F_CQE,
				  .pe = pe, .user_data = hoist__op_udata(c, op), .remote_off = roff,
				  .len = n};
	hoist__sqe_submit(c);
	c->gets_inline++;
	if (nbi) {
		hoist__nbi_append(c, op);
		return 0;
	}
	rc = hoist__wait_op(c, op);
	/* not done: the daemon is gone, and a completion that came now would
	 * deliver into dst after we returned; the slot stays taken */
	if (op->done)
		hoist__op_free(c, op);
	return rc;
}

/* The inline path applies: a small get from this node, outside an
 * aggregating region (whose gets complete at its end, in packs). */
static inline int inline_ok(struct hoist_ctx *c, int pe, size_t n)
{
	return n <= HOIST_CQE_DATA_MAX && !hoist__agg_flag(c) && hoist__peer_find(c, pe);
}

/* Finish a staged get: wait, copy out, free. Keeps the first error. */
static void get_finish(struct hoist_ctx *c, struct hoist_op *op, int *err)
{
	int rc = hoist__wait_op(c, op);
	if (rc == 0 && op->copyout)
		hoist__op_copyout(c, op);
	if (rc && !*err)
		*err = rc;
	hoist__op_free(c, op);
}

/* A get the daemon prefetched: copy it from the shared arena ourselves,
 * no round trip. Valid only while the daemon has consumed everything we
 * posted (an own put that invalidated the slot has then been seen). The
 * k-th get of a phase is usually the k-th prefetch (the daemon keeps the
 * program's order, phase_take): look near a cursor, the slot the next get
 * is expected at. It moves past a slot served here and by one for every
 * get posted to the daemon (post_get), which served that get from a slot
 * the client never saw; looked at are the cursor, the FAST_AHEAD - 1 after
 * it and the FAST_BEHIND before it (a posted get that was a miss left the
 * cursor one too far). A cursor that moved only with gets served here lost
 * its way for the rest of the run once 16 gets in a row had gone to the
 * daemon (the client ahead of the prefetches): every later get then took
 * the round trip although its prefetch had landed. */
#define FAST_AHEAD 16u
#define FAST_BEHIND 8u
static int fast_get(struct hoist_ctx *c, void *dst, int pe, uint64_t roff, size_t n)
{
	/* pairs with the daemon's hoist_store_release(&ctrl->sq_head) */
	if (!c->pf_table || hoist_load_acquire(&c->ring.ctrl->sq_head) != c->ring.sq_tail)
		return 0;
	uint32_t look = c->pf_slots < FAST_AHEAD + FAST_BEHIND ? c->pf_slots : FAST_AHEAD + FAST_BEHIND;
	for (uint32_t k = 0; k < look; k++) {
		/* ahead first, then behind (k - FAST_AHEAD + 1 back) */
		uint32_t step = k < FAST_AHEAD ? c->pf_cursor + k
					       : c->pf_cursor + c->pf_slots - (k - FAST_AHEAD + 1);
		uint32_t i = step % c->pf_slots;
		struct hoist_pf_slot *s = &c->pf_table[i];
		/* pairs with the daemon's release when it published the slot */
		if (hoist_load_acquire(&s->state) != HOIST_PF_READY || s->gen != c->pf_gen ||
		    s->pe != pe || s->off != roff || s->len != n)
			continue;
		memcpy(dst, c->pf_arena + s->arena_off, n);
		hoist_store_relaxed(&s->state, HOIST_PF_TAKEN);
		c->pf_cursor = i + 1;
		c->pf_fast++;
		return 1;
	}
	return 0;
}

HOIST_API int hoist_get(void *dst, int pe, const void *src, size_t n)
{
	struct hoist_ctx *c = &hoist__g;
	uint64_t roff;
	int rc = check_target(c, pe, src, n, &roff);
	if (rc)
		return rc;
	if (n == 0)
		return 0;
	if (!dst)
		return -EINVAL;
	/* inside an aggregation region a get completes at the region's end */
	if (c->agg_depth && hoist__agg_get(c, pe, roff, n, dst))
		return hoist_get_nbi(dst, pe, src, n);
	char *base = direct_base(c, pe);
	if (base) {
		memmove(dst, base + roff, n);
		c->direct_gets++;
		c->direct_bytes += n;
		return 0;
	}
	/* before fast_get: the daemon never prefetches from this node's
	 * PEs, and fast_get's look at sq_head (a line the daemon wrote at
	 * its last drain) was one more transfer on every such get */
	if (inline_ok(c, pe, n))
		return get_inline(c, dst, pe, roff, n, 0);
	if (fast_get(c, dst, pe, roff, n))
		return 0;
	struct hoist_op *op;

	uint64_t loff;
	if (hoist__sym_off(c, dst, n, &loff) == 0) { /* straight into our own heap */
		if (n <= SQE_MAX_BYTES) {
			if ((rc = hoist__op_alloc(c, &op)))
				return rc;
			rc = post_get(c, pe, roff, n, loff, 1, hoist__op_udata(c, op));
			if (rc == 0)
				rc = hoist__wait_op(c, op);
			hoist__op_free(c, op);
			return rc;
		}
		/* big: pieces without completions, then one quiet orders them */
		for (size_t done = 0; done < n; done += SQE_MAX_BYTES) {
			size_t len = n - done < SQE_MAX_BYTES ? n - done : SQE_MAX_BYTES;
			if ((rc = post_get(c, pe, roff + done, len, loff + done, 1, 0)))
				return rc;
		}
		return hoist__quiet(c);
	}

	struct hoist_op *inflight[GET_PIPELINE];
	unsigned first = 0, count = 0;
	/* never hold more op slots than exist (cq_entries is a setting) */
	unsigned depth = c->nops < GET_PIPELINE ? c->nops : GET_PIPELINE;
	int err = 0;
	for (size_t done = 0; done < n && !err;) {
		size_t len = n - done < hoist__chunk_bytes(c) ? n - done : hoist__chunk_bytes(c);
		if (count == depth) {
			get_finish(c, inflight[first], &err);
			first = (first + 1) % GET_PIPELINE;
			count--;
		}
		if ((rc = hoist__op_alloc(c, &op))) {
			err = rc;
			break;
		}
		uint64_t soff;
		int64_t id;
		while ((id = staging_alloc(&c->stage, len, &soff)) == -EAGAIN && count) {
			get_finish(c, inflight[first], &err); /* frees its staging */
			first = (first + 1) % GET_PIPELINE;
			count--;
		}
		if (id == -EAGAIN)
			id = hoist__stage_alloc_wait(c, len, &soff);
		if (id < 0) {
			hoist__op_free(c, op);
			err = (int)id;
			break;
		}
		op->stage_id = id;
		op->stage_off = soff;
		op->dst = (char *)dst + done;
		op->len = len;
		op->copyout = 1;
		if ((rc = post_get(c, pe, roff + done, len, soff, 0, hoist__op_udata(c, op)))) {
			hoist__op_free(c, op);
			err = rc;
			break;
		}
		inflight[(first + count) % GET_PIPELINE] = op;
		count++;
		done += len;
	}
	while (count) {
		get_finish(c, inflight[first], &err);
		first = (first + 1) % GET_PIPELINE;
		count--;
	}
	return err;
}

HOIST_API int hoist_get_nbi(void *dst, int pe, const void *src, size_t n)
{
	struct hoist_ctx *c = &hoist__g;
	uint64_t roff;
	int rc = check_target(c, pe, src, n, &roff);
	if (rc)
		return rc;
	if (n == 0)
		return 0;
	if (!dst)
		return -EINVAL;
	char *base = direct_base(c, pe);
	if (base) { /* complete at once, which an nbi get may be */
		memmove(dst, base + roff, n);
		c->direct_gets++;
		c->direct_bytes += n;
		return 0;
	}
	uint64_t loff;
	if (hoist__sym_off(c, dst, n, &loff) == 0) { /* completes by quiet; errors are sticky */
		for (size_t done = 0; done < n; done += SQE_MAX_BYTES) {
			size_t len = n - done < SQE_MAX_BYTES ? n - done : SQE_MAX_BYTES;
			if ((rc = post_get(c, pe, roff + done, len, loff + done, 1, 0)))
				return rc;
		}
		return 0;
	}
	/* into private memory: in the completion rather than staged (the
	 * ones into the own heap above need no op slot, these take one
	 * either way) */
	if (inline_ok(c, pe, n))
		return get_inline(c, dst, pe, roff, n, 1);

	for (size_t done = 0; done < n;) {
		size_t len = n - done < hoist__chunk_bytes(c) ? n - done : hoist__chunk_bytes(c);
		struct hoist_op *op;
		if ((rc = hoist__op_alloc(c, &op)))
			return rc;
		uint64_t soff;
		int64_t id = hoist__stage_alloc_wait(c, len, &soff);
		if (id < 0) {
			hoist__op_free(c, op);
			return (int)id;
		}
		op->stage_id = id;
		op->stage_off = soff;
		op->dst = (char *)dst + done;
		op->len = len;
		op->copyout = 1;
		if ((rc = post_get(c, pe, roff + done, len, soff, 0, hoist__op_udata(c, op)))) {
			hoist__op_free(c, op);
			return rc;
		}
		hoist__nbi_append(c, op);
		done += len;
	}
	return 0;
}
