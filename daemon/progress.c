/*
 * The progress thread: drains every client's submission ring in batches,
 * validates each descriptor, routes it (same node: local.c), posts
 * completions, and sleeps when there is nothing to do.
 *
 * Adaptive polling: after its last work the thread spins for spin_us, then
 * sets HOIST_SQ_NEED_WAKEUP in every client's control page, rechecks every
 * ring (Dekker with the client's tail store) and sleeps in the loop's one
 * epoll (loop.h): the doorbell eventfd, the command queue and the
 * transport's descriptors. Clients ring the doorbell only when they see
 * the flag.
 */
#include "daemon.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "am.h"
#include "coll.h"
#include "loop.h"
#include "overlap.h"
#include "reg.h"
#include "hoist_futex.h"
#include "log.h"
#include "validate.h"

#define GRACE_NS (20u * 1000u) /* looking on after announcing sleep */
#define SLEEP_MAX_MS 100       /* longest sleep without a doorbell */

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void cq_flush(struct client *c);

static void cq_post_flags(struct client *c, uint64_t user_data, int32_t res, uint8_t opcode,
			  uint16_t flags)
{
	struct hoist_cqe *e = &c->cq[c->cq_tail & c->cq_mask];
	e->user_data = user_data;
	e->res = res;
	e->opcode = opcode;
	e->flags = flags;
	c->cq_tail++;
	if (res < 0)
		STAT_INC(&c->st, errors);
}

static void cq_post(struct client *c, uint64_t user_data, int32_t res, uint8_t opcode)
{
	cq_post_flags(c, user_data, res, opcode, 0);
}

static void cq_flush(struct client *c)
{
	if (c->cq_published == c->cq_tail)
		return;
	c->cq_published = c->cq_tail;
	/* pairs with hoist_load_acquire(&ctrl->cq_tail) in the client's reap */
	hoist_store_release(&c->ctrl->cq_tail, c->cq_tail);
	client_wake(c, &c->ctrl->cq_tail, HOIST_CQ_WAITING);
}

/* A remote operation finished (net.c). The drain loop reserved no CQ slot
 * for it, so check: only a failed put that asked for no completion may be
 * dropped when the ring is full (the client needs one sticky error). */
void progress_cqe(struct client *c, uint64_t user_data, int32_t res, uint8_t opcode)
{
	uint32_t head = hoist_load_acquire(&c->ctrl->cq_head);
	if (c->cq_tail - head >= c->cq_entries) {
		STAT_INC(&c->st, cq_full);
		if (res)
			STAT_INC(&c->st, errors);
		return;
	}
	cq_post(c, user_data, res, opcode);
	cq_flush(c);
}

void progress_cqe_partial(struct client *c, uint64_t user_data, int32_t pe)
{
	/* the client's op slots (cq_entries / 2, plus quiet's) each await one
	 * completion: partial ones use only the other half, so a final
	 * completion always finds room; one dropped here is made up for by
	 * the final one (hoist_wait_from treats the end as every arrival) */
	uint32_t head = hoist_load_acquire(&c->ctrl->cq_head);
	if (c->cq_tail - head + 2 >= c->cq_entries / 2)
		return;
	cq_post_flags(c, user_data, pe, HOIST_OP_COLL, HOIST_CQE_F_PARTIAL);
	cq_flush(c);
}

/* A strided or vector descriptor in progress: issued element by element
 * through the transport (which packs them), completed by its last
 * element. It outlives its client if that leaves with elements in flight. */
struct xp_multi {
	uint64_t user_data;
	uint8_t opcode;
	uint8_t want_cqe;
	int issuing;        /* elements still to issue: the descriptor is at sq_head */
	int32_t pe;
	int32_t res;        /* the first element error */
	uint64_t seq;       /* overlap: the bounding box's put sequence, 0 none */
	uint64_t gseq;      /* overlap: the bounding box's get sequence, 0 none */
	uint64_t pending;   /* elements issued, not complete */
	uint64_t next;      /* next element to issue */
	uint64_t count;
	uint64_t local_pos; /* local offset of element next */
	int local;          /* the target is a PE of this node: copies, no transport */
	enum xp_kind kind;  /* of every element */
	struct hoist_vec_elem *vec; /* private copy of a VEC list */
	struct hoist_sqe sqe;       /* the descriptor as validated and started */
};

static void multi_free(struct xp_multi *m)
{
	free(m->vec);
	free(m);
}

/* The descriptor's last element completed and nothing is left to issue. */
static void multi_finish(struct client *c, struct xp_multi *m)
{
	if (c) {
		if (m->seq && c->ov)
			overlap_put_done(c, m->pe, m->seq);
		if (m->gseq)
			overlap_get_done(c, m->pe, m->gseq);
		if (m->res || m->want_cqe)
			progress_cqe(c, m->user_data, m->res, m->opcode);
	}
	multi_free(m);
}

static void multi_elem_done(struct client *c, struct xp_multi *m, int32_t res)
{
	if (res && !m->res)
		m->res = res;
	m->pending--;
	if (!m->pending && !m->issuing)
		multi_finish(c, m);
}

void progress_complete(struct daemon *d, const struct xp_cookie *ck, int32_t res)
{
	struct client *c = ck->client;
	const struct xp_op *op = &ck->op;
	if (op->multi) {
		if (c)
			c->outstanding--;
		multi_elem_done(c, op->multi, res);
		return;
	}
	if (!c)
		return; /* the client left meanwhile */
	if (op->prefetch) {
		overlap_prefetch_done(d, c, op->slot, op->gen, res);
		return;
	}
	if (op->seq && c->ov)
		overlap_put_done(c, ck->pe, op->seq);
	if (op->gseq)
		overlap_get_done(c, ck->pe, op->gseq);
	c->outstanding--;
	if (!res && !ck->want_cqe)
		return;
	progress_cqe(c, ck->user_data, res, ck->opcode);
}

struct job *progress_job_find(struct daemon *d, uint64_t id)
{
	for (struct job *j = d->pjobs; j; j = j->prog_next)
		if (j->id == id)
			return j;
	return NULL;
}

static void client_break(struct client *c, const char *why)
{
	if (c->broken)
		return;
	c->broken = 1;
	hlog_warn("client pid %d (job %s rank %d) broke the ring protocol: %s; no longer served",
		  (int)c->pid, c->job->key, c->rank, why);
}

/* DONE: *res is the result. STALL: retry on a later pass (waits for
 * something). ASYNC: completes later. YIELD: made progress but stops for
 * the other clients' sake; the next pass resumes it at once. */
enum exec_result { EXEC_DONE, EXEC_STALL, EXEC_ASYNC, EXEC_YIELD };

/* What one strided/vector descriptor may do in one progress pass, so that
 * a descriptor of millions of elements (element 1 B, stride 0, count =
 * heap size) cannot hold the progress thread, and every job of the node,
 * for seconds: it resumes on the next pass, after the other clients. */
#define MULTI_PASS_ELEMS 65536u
#define MULTI_PASS_BYTES (16ull << 20)

/* The cap on outstanding puts: the descriptor waits for completions. Puts
 * this client's aggregation region holds back in open packs would never
 * complete while it waits (the region's end is a later descriptor): they
 * go now, as when a conflict ends a region early. */
static enum exec_result cap_stall(struct daemon *d, struct client *c)
{
	if (c->agg_held) {
		c->agg_held = 0;
		STAT_INC(&c->st, agg_releases);
		if (d->xport->pack_release)
			d->xport->pack_release(d);
	}
	return EXEC_STALL;
}

int xp_kind_refuse(struct daemon *d, enum xp_kind kind)
{
	STAT_INC(&d->pst, xp_kind_refused);
	switch (kind) {
	case XP_PUT:
	case XP_GET:
	case XP_AMO:
	case XP_SEND:
		return -EOPNOTSUPP; /* a kind, but not one this path runs */
	}
	return -EPROTO; /* no kind at all */
}

/* The transport kind of a validated put/get descriptor or of the elements
 * of a strided/vector one. 0, or -EINVAL for any other opcode (counted: it
 * reached the transport path, which validation should have prevented). */
static int op_kind(struct daemon *d, uint8_t opcode, enum xp_kind *kind)
{
	switch ((enum hoist_opcode)opcode) {
	case HOIST_OP_PUT:
	case HOIST_OP_PUT_STRIDED:
	case HOIST_OP_PUT_VEC:
		*kind = XP_PUT;
		return 0;
	case HOIST_OP_GET:
	case HOIST_OP_GET_STRIDED:
	case HOIST_OP_GET_VEC:
		*kind = XP_GET;
		return 0;
	case HOIST_OP_INVALID:
	case HOIST_OP_QUIET:
	case HOIST_OP_FENCE:
	case HOIST_OP_BARRIER_NOTIFY:
	case HOIST_OP_NOP:
	case HOIST_OP_PHASE:
	case HOIST_OP_COLL:
	case HOIST_OP__COUNT:
		break;
	}
	STAT_INC(&d->pst, xp_kind_refused);
	return -EINVAL;
}

/* The neutral request for client c's validated put/get descriptor (kind
 * from op_kind) to the daemon of node: all a transport gets to see. */
static void req_from_sqe(struct xp_req *rq, struct client *c, enum xp_kind kind,
			 const struct hoist_sqe *sqe, int32_t node)
{
	/* inline data (puts only, never with LOCAL_HEAP: validate.c) lives in
	 * the drain's copy of the descriptor: a put's data is read at once */
	char *laddr = (sqe->flags & HOIST_SQE_F_INLINE) ? (char *)sqe->inline_data
							: client_buf(c, sqe);
	uint32_t flags = 0;
	if (sqe->flags & HOIST_SQE_F_LOCAL_HEAP)
		flags |= XP_RF_INPLACE;
	if (sqe->flags & HOIST_SQE_F_AGG)
		flags |= XP_RF_PACK | XP_RF_HOLD;
	*rq = (struct xp_req){.kind = kind, .flags = flags, .laddr = laddr, .lmr = c->mr,
			      .node = node, .job = c->job->id, .pe = sqe->pe, .seg = sqe->seg,
			      .off = sqe->remote_off, .len = sqe->len,
			      .ck = {.client = c, .user_data = sqe->user_data, .pe = sqe->pe,
				     .opcode = sqe->opcode,
				     .want_cqe = (sqe->flags & HOIST_SQE_F_CQE) != 0}};
}

static void count_rma(struct client *c, enum xp_kind kind, uint64_t len)
{
	switch (kind) {
	case XP_PUT:
		STAT_INC(&c->st, puts);
		STAT_ADD(&c->st, put_bytes, len);
		break;
	case XP_GET:
		STAT_INC(&c->st, gets);
		STAT_ADD(&c->st, get_bytes, len);
		break;
	case XP_AMO:
	case XP_SEND:
		break;
	}
}

/* A put or get: same node by copy, other nodes through the transport. */
static enum exec_result rma(struct daemon *d, struct client *c, const struct hoist_sqe *sqe, int *res)
{
	struct job *j = c->job;
	struct client *t = j->pe[sqe->pe];
	enum xp_kind kind;
	enum xp_result r;
	struct xp_req rq;
	int err = 0;
	if ((*res = op_kind(d, sqe->opcode, &kind)))
		return EXEC_DONE;
	if (t) {
		req_from_sqe(&rq, c, kind, sqe, d->net.self);
		rq.rmap = t->heap.base; /* validated: the heap is the one segment */
		r = self_transport.rma(d, &rq, &err);
	} else if (j->pe_gone[sqe->pe]) {
		*res = -ECONNRESET; /* the target PE is gone */
		return EXEC_DONE;
	} else if (!j->prog_ready) {
		return EXEC_STALL; /* JOB_READY is on its way */
	} else {
		int32_t node = j->node_of[sqe->pe];
		if (node == d->net.self) {
			*res = -ECONNRESET;
			return EXEC_DONE;
		}
		req_from_sqe(&rq, c, kind, sqe, node);
		struct xp_op *op = &rq.ck.op;
		struct overlap *o = c->ov;
		/* the overlap stage looks at each descriptor once, even when the
		 * transport makes it wait */
		if (o && o->decided != c->sq_head + 1) {
			switch (kind) {
			case XP_PUT:
				if (overlap_put_begin(c, sqe, &op->seq))
					return cap_stall(d, c);
				break;
			case XP_GET: {
				int hit = overlap_get(d, c, sqe, node, res);
				if (hit == 3)
					return cap_stall(d, c); /* behind an unfinished put */
				if (hit) {
					count_rma(c, kind, sqe->len);
					return hit == 1 ? EXEC_DONE : EXEC_ASYNC;
				}
				break;
			}
			case XP_AMO:
			case XP_SEND:
				break; /* not an overlap candidate */
			}
			o->decided = c->sq_head + 1;
		} else if (o && kind == XP_PUT) {
			op->seq = o->put_seq + 1;
		}
		if (o && kind == XP_GET)
			op->gseq = overlap_get_seq(c);
		r = d->xport->rma(d, &rq, &err);
		if (r == XP_STARTED)
			c->outstanding++; /* until the cookie comes back */
		if (o && kind == XP_PUT && r == XP_STARTED)
			overlap_put_issued(c, sqe, op->seq);
		if (op->gseq && r == XP_STARTED)
			overlap_get_issued(c, sqe->pe, sqe->remote_off, sqe->len, op->gseq);
	}
	switch (r) {
	case XP_STALL:
		return EXEC_STALL;
	case XP_ERROR:
		*res = err;
		return EXEC_DONE;
	case XP_DONE:
	case XP_STARTED:
		break;
	}
	count_rma(c, kind, sqe->len);
	return r == XP_DONE ? EXEC_DONE : EXEC_ASYNC;
}

static int is_strided(uint8_t opcode)
{
	return opcode == HOIST_OP_PUT_STRIDED || opcode == HOIST_OP_GET_STRIDED;
}

/* Element k of a multi descriptor: remote offset and length. */
static void multi_elem(const struct hoist_sqe *sqe, const struct xp_multi *m, uint64_t k,
		       uint64_t *off, uint64_t *len)
{
	if (m->vec) {
		*off = sqe->remote_off + m->vec[k].off;
		*len = m->vec[k].len;
		return;
	}
	int64_t stride;
	memcpy(&stride, sqe->inline_data, 8);
	*off = (uint64_t)((int64_t)sqe->remote_off + stride * (int64_t)k); /* validated */
	*len = sqe->len;
}

/* A new multi descriptor: copy (and check) a VEC list, bounding box of
 * its remote elements. 0 or -errno. */
static int multi_new(struct client *c, const struct hoist_sqe *sqe, struct xp_multi **out,
		     uint64_t *lo, uint64_t *hi)
{
	struct xp_multi *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->sqe = *sqe;
	m->user_data = sqe->user_data;
	m->opcode = sqe->opcode;
	m->want_cqe = (sqe->flags & HOIST_SQE_F_CQE) != 0;
	m->pe = sqe->pe;
	m->issuing = 1;
	uint64_t v[2];
	memcpy(v, sqe->inline_data, sizeof(v));
	if (is_strided(sqe->opcode)) {
		m->count = sqe->len ? v[1] : 0;
		int64_t stride = (int64_t)v[0];
		uint64_t last = sqe->remote_off + (uint64_t)(stride * (int64_t)(m->count ? m->count - 1 : 0));
		*lo = stride < 0 ? last : sqe->remote_off;
		*hi = (stride < 0 ? sqe->remote_off : last) + sqe->len;
	} else {
		m->count = v[0];
		if (m->count) {
			/* a private copy: the client may rewrite its staging meanwhile */
			m->vec = malloc(m->count * sizeof(*m->vec));
			if (!m->vec) {
				free(m);
				return -ENOMEM;
			}
			memcpy(m->vec, (char *)c->staging.base + v[1], m->count * sizeof(*m->vec));
		}
		uint64_t sum = 0, heap = c->heap.bytes;
		*lo = UINT64_MAX;
		*hi = 0;
		for (uint64_t k = 0; k < m->count; k++) {
			uint64_t off = m->vec[k].off, len = m->vec[k].len;
			if (off > heap || !hoist_range_ok(sqe->remote_off + off, len, heap)) {
				multi_free(m);
				return -EFAULT;
			}
			if (__builtin_add_overflow(sum, len, &sum)) {
				multi_free(m);
				return -EINVAL;
			}
			if (!len)
				continue;
			if (sqe->remote_off + off < *lo)
				*lo = sqe->remote_off + off;
			if (sqe->remote_off + off + len > *hi)
				*hi = sqe->remote_off + off + len;
		}
		if (sum != sqe->len) {
			multi_free(m);
			return -EINVAL;
		}
		if (*lo > *hi)
			*lo = *hi = 0;
	}
	*out = m;
	return 0;
}

static void multi_count(struct client *c, const struct hoist_sqe *sqe, const struct xp_multi *m)
{
	uint64_t bytes = sqe->len * (is_strided(sqe->opcode) ? m->count : 1);
	STAT_INC(&c->st, multi_ops);
	STAT_ADD(&c->st, multi_elems, m->count);
	switch (m->kind) {
	case XP_PUT:
		STAT_ADD(&c->st, put_bytes, bytes);
		break;
	case XP_GET:
		STAT_ADD(&c->st, get_bytes, bytes);
		break;
	case XP_AMO:
	case XP_SEND:
		break;
	}
}

/* A get's elements from a copy of their bounding box starting at lo. */
static void multi_gather(const struct hoist_sqe *sqe, const struct xp_multi *m, char *local,
			 const char *box, uint64_t lo)
{
	uint64_t pos = 0;
	for (uint64_t k = 0; k < m->count; k++) {
		uint64_t off, len;
		multi_elem(sqe, m, k, &off, &len);
		memcpy(local + pos, box + (off - lo), len);
		pos += len;
	}
}

/* Same node: every element is one copy, in index order, at most a pass's
 * worth at a time (then YIELD; c->multi keeps the place). A target that
 * left half-way fails the rest with -ECONNRESET. */
static enum exec_result multi_local(struct daemon *d, struct client *c, struct xp_multi *m,
				     int *res)
{
	const struct hoist_sqe *sqe = &m->sqe;
	struct client *t = c->job->pe[sqe->pe];
	int put = -1;
	switch (m->kind) {
	case XP_PUT:
		put = 1;
		break;
	case XP_GET:
		put = 0;
		break;
	case XP_AMO:
	case XP_SEND:
		break;
	}
	if (put < 0) { /* not a copy: nothing runs */
		*res = xp_kind_refuse(d, m->kind);
		c->multi = NULL;
		multi_free(m);
		return EXEC_DONE;
	}
	char *local = client_buf(c, sqe);
	uint64_t bytes = 0;
	for (unsigned n = 0; t && m->next < m->count; n++) {
		if (n == MULTI_PASS_ELEMS || bytes >= MULTI_PASS_BYTES)
			return EXEC_YIELD;
		uint64_t off, len;
		multi_elem(sqe, m, m->next, &off, &len);
		char *remote = (char *)t->heap.base + off;
		if (put)
			memmove(remote, local + m->local_pos, len);
		else
			memmove(local + m->local_pos, remote, len);
		m->local_pos += len;
		bytes += len;
		m->next++;
	}
	*res = m->next < m->count ? -ECONNRESET : 0;
	c->multi = NULL;
	multi_free(m);
	return EXEC_DONE;
}

/* A strided or vector descriptor. The elements go to the transport one by
 * one; tcp packs them (no per-element message), one without packing sends
 * each alone. Conflict checks and the put deferral use the bounding box of
 * the remote elements. A get is recorded for phase prefetch as its
 * bounding box when that is dense (at most 4x its data): when the phase
 * runs again the box is prefetched like a plain get and the elements are
 * gathered from it; sparser ones are not (the box would move up to
 * stride/len times the data). Resumable: a stall keeps the state in
 * c->multi and the same descriptor comes back. */
static enum exec_result multi_exec(struct daemon *d, struct client *c, const struct hoist_sqe *sqe,
				   int *res)
{
	struct job *j = c->job;
	struct xp_multi *m = c->multi;
	int32_t node = -1;
	if (!m) {
		enum xp_kind kind;
		if ((*res = op_kind(d, sqe->opcode, &kind)))
			return EXEC_DONE;
		struct client *t = j->pe[sqe->pe];
		if (!t) {
			if (j->pe_gone[sqe->pe]) {
				*res = -ECONNRESET;
				return EXEC_DONE;
			}
			if (!j->prog_ready)
				return EXEC_STALL;
			node = j->node_of[sqe->pe];
			if (node == d->net.self) {
				*res = -ECONNRESET;
				return EXEC_DONE;
			}
		}
		/* No conflict stage (HOIST_AUTO=0) on a transport that may
		 * reorder: the library posts a strided/vector put as one
		 * descriptor per chunk and quiets after the last, and elements
		 * apply in list order, so each chunk waits until everything
		 * earlier completed. */
		if (!t && !c->ov && kind == XP_PUT && c->outstanding && !xp_ordered(d->xport, d))
			return cap_stall(d, c);
		uint64_t lo, hi;
		*res = multi_new(c, sqe, &m, &lo, &hi);
		if (*res)
			return EXEC_DONE;
		m->kind = kind;
		if (t) {
			multi_count(c, sqe, m);
			m->local = 1;
			c->multi = m;
			return multi_local(d, c, m, res);
		}
		struct overlap *o = c->ov;
		if (o && hi > lo) {
			struct hoist_sqe box = {.opcode = HOIST_OP_PUT, .pe = sqe->pe, .remote_off = lo,
						.len = hi - lo};
			switch (kind) {
			case XP_PUT:
				if (overlap_put_begin(c, &box, &m->seq)) {
					multi_free(m);
					return cap_stall(d, c); /* cap: completions first */
				}
				overlap_put_issued(c, &box, m->seq);
				if (o->put_seq != m->seq)
					m->seq = 0; /* not recorded */
				break;
			case XP_GET: {
				const char *pf = NULL;
				uint64_t bytes = sqe->len * (is_strided(sqe->opcode) ? m->count : 1);
				int hit = overlap_get_box(d, c, sqe->pe, lo, hi - lo, bytes, node, &pf);
				if (hit < 0) {
					multi_free(m);
					if (hit == -EBUSY) /* behind an unfinished put */
						return cap_stall(d, c);
					return EXEC_STALL; /* its box is in flight */
				}
				if (hit) {
					/* served from the phase's prefetch of the box */
					multi_count(c, sqe, m);
					multi_gather(sqe, m, client_buf(c, sqe), pf, lo);
					multi_free(m);
					return EXEC_DONE;
				}
				/* unordered transport: a later put waits until the
				 * box was read (retired when the descriptor completes) */
				m->gseq = overlap_get_seq(c);
				overlap_get_issued(c, sqe->pe, lo, hi - lo, m->gseq);
				break;
			}
			case XP_AMO:
			case XP_SEND:
				break; /* not an overlap candidate */
			}
		}
		multi_count(c, sqe, m);
		c->multi = m;
	} else if (m->local) {
		return multi_local(d, c, m, res);
	} else {
		node = j->node_of[sqe->pe];
	}
	for (unsigned n = 0; m->next < m->count; n++) {
		if (n == MULTI_PASS_ELEMS)
			return EXEC_YIELD; /* resumes at m->next */
		uint64_t off, len;
		multi_elem(sqe, m, m->next, &off, &len);
		if (len) {
			uint32_t flags = XP_RF_PACK;
			if (sqe->flags & HOIST_SQE_F_LOCAL_HEAP)
				flags |= XP_RF_INPLACE;
			if (sqe->flags & HOIST_SQE_F_AGG)
				flags |= XP_RF_HOLD;
			struct xp_req rq = {.kind = m->kind, .flags = flags,
					    .laddr = client_buf(c, sqe) + m->local_pos, .lmr = c->mr,
					    .node = node, .job = j->id, .pe = sqe->pe, .seg = sqe->seg,
					    .off = off, .len = len,
					    .ck = {.client = c, .pe = sqe->pe, .opcode = sqe->opcode,
						   .op = {.multi = m}}};
			int err = -ECONNRESET;
			enum xp_result r = j->pe_gone[sqe->pe] ? XP_ERROR : d->xport->rma(d, &rq, &err);
			switch (r) {
			case XP_STALL:
				return EXEC_STALL; /* resumes at m->next */
			case XP_ERROR:
				if (!m->res)
					m->res = err;
				break;
			case XP_STARTED:
				m->pending++;
				c->outstanding++;
				break;
			case XP_DONE:
				break;
			}
		}
		m->local_pos += len;
		m->next++;
	}
	c->multi = NULL;
	m->issuing = 0;
	if (sqe->flags & HOIST_SQE_F_AGG) {
		c->agg_held = 1;
		STAT_ADD(&c->st, agg_ops, m->count);
	}
	if (m->pending)
		return EXEC_ASYNC;
	/* nothing in flight: every element failed at once */
	*res = m->res;
	if (m->seq && c->ov)
		overlap_put_done(c, m->pe, m->seq);
	multi_free(m);
	return EXEC_DONE;
}

/* Execute one validated descriptor; *res is its result when DONE. */
static enum exec_result execute(struct daemon *d, struct client *c, const struct hoist_sqe *sqe,
				int *res)
{
	*res = 0;
	/* Only puts and gets join a region. A collective reaches here with any
	 * flags (validate_coll rejects them when it runs, so that it still
	 * counts as this PE's part); one carrying the aggregation flag must
	 * end the region too, or it waits for held puts that wait for it
	 * (issue 14 defect 5: the ring hung instead of -EINVAL). */
	int agg = (sqe->flags & HOIST_SQE_F_AGG) && sqe->opcode != HOIST_OP_COLL;
	if (c->agg_held && !agg) {
		/* the aggregation region ended (or ends early): its held packs go */
		c->agg_held = 0;
		STAT_INC(&c->st, agg_releases);
		if (d->xport->pack_release)
			d->xport->pack_release(d);
	}
	switch (sqe->opcode) {
	case HOIST_OP_PUT:
	case HOIST_OP_GET:
		if (sqe->flags & HOIST_SQE_F_AGG) {
			enum exec_result er = rma(d, c, sqe, res);
			if (er == EXEC_DONE || er == EXEC_ASYNC) {
				c->agg_held = 1;
				STAT_INC(&c->st, agg_ops);
			}
			return er;
		}
		return rma(d, c, sqe, res);
	case HOIST_OP_PUT_STRIDED:
	case HOIST_OP_GET_STRIDED:
	case HOIST_OP_PUT_VEC:
	case HOIST_OP_GET_VEC:
		return multi_exec(d, c, sqe, res);
	case HOIST_OP_QUIET:
		if (c->outstanding)
			return EXEC_STALL;
		STAT_INC(&c->st, quiets);
		return EXEC_DONE;
	case HOIST_OP_FENCE:
		/* A transport that delivers one client's operations to one node
		 * in order (same node: at once; tcp with one connection per peer;
		 * verbs: RC) orders the puts already. On any other one a fence
		 * waits until everything issued before it completed. */
		if (!xp_ordered(d->xport, d) && c->outstanding)
			return cap_stall(d, c);
		STAT_INC(&c->st, fences);
		return EXEC_DONE;
	case HOIST_OP_BARRIER_NOTIFY:
		/* the node map decides who takes part: wait for JOB_READY */
		if (c->outstanding || !c->job->prog_ready)
			return EXEC_STALL;
		/* between notify and wait: the ending phase's mispredictions go */
		overlap_notify(d, c, sqe->remote_off);
		*res = barrier_notify(d, c);
		return EXEC_DONE;
	case HOIST_OP_PHASE:
		if (!c->job->prog_ready)
			return EXEC_STALL; /* prefetch targets need the node map */
		overlap_notify(d, c, sqe->remote_off);
		overlap_phase_start(d, c);
		return EXEC_DONE;
	case HOIST_OP_NOP:
		STAT_INC(&c->st, nops);
		return EXEC_DONE;
	case HOIST_OP_COLL:
		/* the daemon reads src after this client's earlier puts and gets
		 * completed; the node map decides who takes part */
		if (c->outstanding || !c->job->prog_ready)
			return EXEC_STALL;
		/* each unfinished collective costs 64 B per rank of the job:
		 * one that runs ahead of the others waits for them */
		if (c->coll_seq - c->job->coll_base >= d->cfg.max_pending_colls) {
			if (!c->coll_capped) {
				c->coll_capped = 1;
				STAT_INC(&c->st, colls_capped);
			}
			return EXEC_STALL;
		}
		c->coll_capped = 0;
		*res = coll_post(d, c, sqe);
		return *res ? EXEC_DONE : EXEC_ASYNC;
	}
	*res = -EINVAL;
	return EXEC_DONE;
}

/* Drain up to `batch` descriptors of one client. Returns how many, plus 1
 * when a long strided/vector descriptor made progress and yielded. */
static unsigned drain(struct daemon *d, struct client *c)
{
	struct hoist_ctrl *ctrl = c->ctrl;
	/* pairs with hoist_store_release(&ctrl->sq_tail) in hoist__sqe_submit */
	uint32_t tail = hoist_load_acquire(&ctrl->sq_tail);
	uint32_t avail = tail - c->sq_head;
	if (!avail)
		return 0;
	if (avail > c->sq_entries) {
		client_break(c, "sq_tail ahead of the ring");
		return 0;
	}
	if (avail == c->sq_entries) STAT_INC(&c->st, sq_full);
	int capped = avail > d->cfg.batch;
	if (capped)
		avail = (uint32_t)d->cfg.batch;

	struct validate_geom geom = {
		.job_size = c->job->size,
		.heap_bytes = c->heap.bytes,
		.staging_bytes = c->staging.bytes,
	};
	/* pairs with the client's hoist_store_release(&ctrl->cq_head) */
	uint32_t cq_head = hoist_load_acquire(&ctrl->cq_head);
	if (c->cq_tail - cq_head > c->cq_entries) {
		client_break(c, "cq_head ahead of the ring");
		return 0;
	}
	unsigned done = 0, yielded = 0;
	while (done < avail) {
		if (c->cq_tail - cq_head >= c->cq_entries) {
			cq_head = hoist_load_acquire(&ctrl->cq_head);
			if (c->cq_tail - cq_head >= c->cq_entries) {
				STAT_INC(&c->st, cq_full);
				break; /* the client must reap first */
			}
		}
		/* One copy of the descriptor: the client may scribble on the
		 * slot while we work, we only trust our copy. */
		struct hoist_sqe sqe;
		if (c->multi) /* a stalled strided/vector descriptor resumes with
			       * the copy it started from: its state (count,
			       * elements issued, local position) belongs to that
			       * one, not to what the client wrote to the slot since */
			sqe = c->multi->sqe;
		else
			memcpy(&sqe, &c->sq[c->sq_head & c->sq_mask], sizeof(sqe));
		int res = validate_sqe(&sqe, &geom);
		if (res) {
			STAT_INC(&c->st, rejected);
			cq_post(c, sqe.user_data, res, sqe.opcode);
		} else {
			enum exec_result er = execute(d, c, &sqe, &res);
			if (er == EXEC_YIELD) {
				yielded = 1; /* resumes first thing next pass */
				d->more_pending = 1;
				break;
			}
			if (er == EXEC_STALL)
				break; /* retry on a later pass */
			if (er == EXEC_DONE && (res || (sqe.flags & HOIST_SQE_F_CQE)))
				cq_post(c, sqe.user_data, res, sqe.opcode);
		}
		c->sq_head++;
		done++;
	}
	if (capped && done == avail)
		d->more_pending = 1; /* the next pass has work at once */
	if (done) {
		/* pairs with hoist_load_acquire(&ctrl->sq_head) in the client:
		 * consumed descriptors and their staged payloads may be reused */
		hoist_store_release(&ctrl->sq_head, c->sq_head);
		STAT_INC(&c->st, batches);
	}
	cq_flush(c);
	return done + yielded;
}

static void client_retire(struct daemon *d, struct client *c)
{
	struct job *j = c->job;
	struct client **pp = &d->active;
	while (*pp && *pp != c)
		pp = &(*pp)->prog_next;
	if (*pp)
		*pp = c->prog_next;
	if (c->multi) { /* its descriptor will not resume */
		struct xp_multi *m = c->multi;
		c->multi = NULL;
		m->issuing = 0;
		if (!m->pending)
			multi_free(m);
	}
	if (c->agg_held && d->xport->pack_release)
		d->xport->pack_release(d);
	d->xport->orphan(d, c);
	overlap_destroy(c);
	reg_unpin(d, c);
	barrier_depart(d, j, c, c->clean_detach);
	if (--j->local == 0) { /* the job has no client here any more */
		struct job **jp = &d->pjobs;
		while (*jp && *jp != j)
			jp = &(*jp)->prog_next;
		if (*jp)
			*jp = j->prog_next;
		coll_job_free(j);
	}
	if (cmdq_push(&d->to_control, CMD_CLIENT_FREE, c))
		hlog_err("out of memory handing client %llu back; leaking it",
			 (unsigned long long)c->id);
}

static void client_add(struct daemon *d, struct client *c)
{
	struct job *j = c->job;
	if (j->local++ == 0) {
		j->prog_next = d->pjobs;
		d->pjobs = j;
	}
	j->pe[c->rank] = c;
	if (!c->blocking && overlap_create(d, c))
		hlog_warn("job %s rank %d: no memory for automatic overlap; running without it",
			  j->key, c->rank);
	if (reg_pin(d, c))
		hlog_warn("pinned table full: job %s rank %d is reachable by name only", j->key,
			  c->rank);
	c->prog_next = d->active;
	d->active = c;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* Every rank's node is known: derive the job's node list. */
static void job_ready(struct daemon *d, struct job *j)
{
	int32_t n = 0, *nodes = malloc((size_t)j->size * sizeof(*nodes));
	if (!nodes) {
		job_fail(j, -ENOMEM);
		return;
	}
	j->nlocal = 0;
	for (int32_t r = 0; r < j->size; r++) {
		if (j->node_of[r] == d->net.self)
			j->nlocal++;
		nodes[n++] = j->node_of[r];
	}
	qsort(nodes, (size_t)n, sizeof(*nodes), cmp_i32);
	int32_t u = 0;
	for (int32_t i = 0; i < n; i++)
		if (i == 0 || nodes[i] != nodes[u - 1])
			nodes[u++] = nodes[i];
	j->nodes = nodes;
	j->nnodes = u;
	for (int32_t i = 0; i < u; i++)
		if (nodes[i] == d->net.self)
			j->my_idx = i;
	j->prog_ready = 1;
	job_gone_early_apply(d, j);
}

static void announce(struct daemon *d, struct announce *a)
{
	for (int32_t node = 0; node < d->net.nnodes; node++) {
		if (node == d->net.self || (a->to_node >= 0 && a->to_node != node))
			continue;
		am_send_member(d, node, a); /* unreachable now: it will ask us */
	}
}

static int handle_commands(struct daemon *d)
{
	int stop = 0;
	struct cmd *cmd = cmdq_take_all(&d->to_progress);
	while (cmd) {
		struct cmd *next = cmd->next;
		STAT_INC(&d->pst, commands);
		switch (cmd->type) {
		case CMD_CLIENT_ADD:
			client_add(d, cmd->obj);
			break;
		case CMD_JOB_READY:
			job_ready(d, cmd->obj);
			break;
		case CMD_ANNOUNCE:
			announce(d, cmd->obj);
			free(cmd->obj);
			break;
		case CMD_CLIENT_GONE: {
			struct client *c = cmd->obj;
			drain(d, c); /* what it posted before dying still runs */
			client_retire(d, c);
			break;
		}
		case CMD_STOP:
			stop = 1;
			break;
		case CMD_CLIENT_FREE:
		case CMD_MEMBER:
			break;
		}
		free(cmd);
		cmd = next;
	}
	return stop;
}

static unsigned poll_all(struct daemon *d)
{
	unsigned work = 0;
	for (struct client *c = d->active; c; c = c->prog_next)
		if (!c->broken)
			work += drain(d, c);
	return work;
}

static void set_need_wakeup(struct daemon *d, int on)
{
	for (struct client *c = d->active; c; c = c->prog_next) {
		uint32_t f = hoist_load_relaxed(&c->ctrl->sq_flags);
		hoist_store_relaxed(&c->ctrl->sq_flags, on ? (f | HOIST_SQ_NEED_WAKEUP)
							    : (f & ~HOIST_SQ_NEED_WAKEUP));
	}
}

/* The doorbell rang (a client saw HOIST_SQ_NEED_WAKEUP): it only wakes
 * the loop up; the rings are looked at on the next pass. */
static int doorbell_event(struct daemon *d, void *arg, uint32_t events)
{
	(void)arg;
	(void)events;
	uint64_t v;
	ssize_t r = read(d->doorbell_fd, &v, sizeof(v));
	(void)r;
	STAT_INC(&d->pst, doorbells);
	return 0;
}

/* Commands are waiting: the next pass takes them (handle_commands), which
 * also drains the eventfd. */
static int cmdq_event(struct daemon *d, void *arg, uint32_t events)
{
	(void)d;
	(void)arg;
	(void)events;
	return 0;
}

static void *progress_main(void *arg)
{
	struct daemon *d = arg;
	uint64_t spin_ns = d->cfg.spin_us * 1000u;
	uint64_t last_work = now_ns();
	unsigned idle = 0, passes = 0;
	/* a network transport runs (more than one node); with one node only
	 * the rings, the commands and the doorbell need looking at */
	int net = d->net.enabled;

	for (;;) {
		if (cmdq_pending(&d->to_progress) && handle_commands(d))
			break;
		d->more_pending = 0;
		unsigned work = poll_all(d);
		if (net) {
			/* the transport is looked at on every pass: a remote reply
			 * is what a waiting client needs next. What the drain
			 * queued leaves first (verbs: one doorbell for the batch).
			 * Its descriptors: every pass (tcp: the sockets are its
			 * completions) or every few (verbs: the completion queue
			 * is polled in user space, poll()). */
			d->xport->flush(d);
			if (d->xport->poll)
				work += (unsigned)d->xport->poll(d);
			if ((++passes & d->xport->fd_pass_mask) == 0)
				work += (unsigned)loop_wait(&d->loop, 0);
			d->xport->flush(d);
		}
		if (work) {
			STAT_INC(&d->pst, loops_busy);
			idle = 0;
			continue;
		}
		/* read the clock (and maybe yield) only every few idle passes;
		 * with peers a pass costs an epoll_wait, so fewer of them: a PE
		 * waiting for this core should not wait ~20 us for it */
		if ((++idle & (net ? 7u : 63u)) != 0) {
			hoist_cpu_relax();
			continue;
		}
		uint64_t t = now_ns();
		if (idle == (net ? 8u : 64u))
			last_work = t;
		if (net)
			d->xport->timers(d, t);
		reg_timers(d, t); /* registrations whose grace period ended */
		if (t - last_work < spin_ns) {
			/* a PE waiting for us may share this core: let it run */
			sched_yield();
			continue;
		}
		/* Going to sleep: announce it, then keep looking for a grace
		 * period. Clients fence only before they wait (hoist__kick), so a
		 * descriptor published just now may have missed the flag; it
		 * shows up here within far less than the grace period. */
		set_need_wakeup(d, 1);
		hoist_smp_mb();
		unsigned found = 0;
		for (uint64_t g0 = now_ns(); !found && now_ns() - g0 < GRACE_NS;) {
			found = poll_all(d) || cmdq_pending(&d->to_progress);
			hoist_cpu_relax();
		}
		if (found) {
			set_need_wakeup(d, 0);
			idle = 0;
			continue;
		}
		STAT_INC(&d->pst, sleeps);
		/* doorbell, commands, the transport's descriptors. Bounded: the
		 * safety net behind the grace period, heartbeats, and the
		 * watchdog's proof of life. The transport arms what must wake
		 * us (verbs: the completion channel); work it found meanwhile
		 * means no sleep. */
		int timeout = SLEEP_MAX_MS;
		if (net && (int)(d->cfg.heartbeat_ms / 4) + 1 < timeout)
			timeout = (int)(d->cfg.heartbeat_ms / 4) + 1;
		if (net && d->xport->arm && d->xport->arm(d))
			timeout = 0;
		loop_wait(&d->loop, timeout);
		if (net)
			d->xport->flush(d);
		__atomic_store_n(&d->heartbeat, d->heartbeat + 1, __ATOMIC_RELAXED);
		set_need_wakeup(d, 0);
		idle = 0;
	}
	/* stopping: tell every client the daemon is gone */
	for (struct client *c = d->active; c; c = c->prog_next) {
		__atomic_store_n(&c->ctrl->job_error, -ECONNRESET, __ATOMIC_RELEASE);
		client_wake(c, &c->ctrl->barrier_epoch, HOIST_EPOCH_WAITING);
		client_wake(c, &c->ctrl->cq_tail, HOIST_CQ_WAITING);
	}
	return NULL;
}

static const struct transport_ops *const transports[] = {&self_transport, &tcp_transport,
							  &verbs_transport};

const struct transport_ops *transport_find(const char *name)
{
	for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++)
		if (!strcmp(transports[i]->name, name))
			return transports[i];
	return NULL;
}

/* Setting transport=: the transports to start, the first that starts
 * wins. Without peers (one node): self, which starts nothing - no network
 * transport, no socket, same-node copies only. */
static const struct {
	const char *setting;
	const char *order[2];
} transport_choices[] = {
	{"tcp", {"tcp", NULL}},
	{"verbs", {"verbs", NULL}},
	{"auto", {"verbs", "tcp"}},
};

int progress_start(struct daemon *d)
{
	int rc = reg_init(d);
	if (rc)
		return rc;
	if ((rc = loop_init(&d->loop, d)) ||
	    (rc = loop_add(&d->loop, d->doorbell_fd, EPOLLIN, doorbell_event, NULL)) ||
	    (rc = loop_add(&d->loop, d->to_progress.efd, EPOLLIN, cmdq_event, NULL))) {
		loop_fini(&d->loop);
		reg_fini(d);
		return rc;
	}
	rc = -EINVAL;
	const char *want = d->cfg.transport;
	const char *const *order = NULL;
	static const char *const no_peers[2] = {"self", NULL};
	for (size_t i = 0; i < sizeof(transport_choices) / sizeof(transport_choices[0]); i++)
		if (!strcmp(transport_choices[i].setting, want))
			order = transport_choices[i].order;
	if (!order) {
		hlog_err("transport %s: not one of auto, verbs, tcp", want);
		loop_fini(&d->loop);
		reg_fini(d);
		return -EINVAL;
	}
	if (!d->net.enabled)
		order = no_peers;
	d->xport = NULL;
	for (size_t i = 0; i < 2 && order[i]; i++) {
		const struct transport_ops *t = transport_find(order[i]);
		d->xport = t;
		rc = t->start ? t->start(d) : 0;
		if (!rc)
			break;
		d->xport = NULL;
		if (!t->rdma)
			break;
		if (i + 1 < 2 && order[i + 1])
			hlog_info("transport %s: no usable RDMA device for this node's address; using %s",
				  want, order[i + 1]);
		else
			hlog_err("transport %s: no usable RDMA device for this node's address (%s)",
				 t->name, strerror(-rc));
	}
	if (!d->xport) {
		loop_fini(&d->loop);
		reg_fini(d);
		return rc;
	}
	if (d->net.enabled)
		hlog_info("transport: %s (setting transport=%s)", d->xport->name, want);
	else
		hlog_info("transport: %s (one node: no network transport, same-node copies only)",
			  d->xport->name);
	if (d->net.enabled && !d->xport->frames && d->net.frames_mode != FRAMES_OFF)
		hlog_warn("frame_integrity=%s does not cover transport %s: RDMA WRITE/READ are placed "
			  "by the NIC and daemon messages travel as plain SENDs; only the connection "
			  "handshake is authenticated (cluster key). Use tcp where frames must be "
			  "integrity-protected",
			  frames_mode_name(d->net.frames_mode), d->xport->name);
	rc = pthread_create(&d->progress_tid, NULL, progress_main, d);
	if (rc) {
		if (d->xport->stop)
			d->xport->stop(d);
		loop_fini(&d->loop);
		reg_fini(d);
	}
	return -rc;
}

void progress_stop(struct daemon *d)
{
	cmdq_push(&d->to_progress, CMD_STOP, NULL);
	pthread_join(d->progress_tid, NULL);
	for (struct job *j = d->pjobs; j; j = j->prog_next) {
		free(j->nodes);
		j->nodes = NULL;
		coll_job_free(j);
	}
	reg_release_all(d); /* before the transport that made the handles stops */
	if (d->xport->stop)
		d->xport->stop(d);
	loop_fini(&d->loop);
	reg_fini(d);
	/* the cluster: a transport that started frees it in stop */
	free(d->net.peers);
	d->net.peers = NULL;
}
