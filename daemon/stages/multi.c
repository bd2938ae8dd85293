/*
 * The strided/vector engine: a PUT/GET_STRIDED or PUT/GET_VEC descriptor
 * is cut into elements. On this node each element is a copy; to another
 * node each goes to the transport as its own request (packed by it), and
 * the descriptor completes with its last element (complete.c). The
 * conflict and put deferral stages (overlap.c) see the bounding box of the
 * remote elements. A long descriptor yields after a pass's worth and
 * resumes on the next pass (c->multi keeps its place).
 */
#include "multi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "overlap.h"

/* What one strided/vector descriptor may do in one progress pass, so that
 * a descriptor of millions of elements (element 1 B, stride 0, count =
 * heap size) cannot hold the progress thread, and every job of the node,
 * for seconds: it resumes on the next pass, after the other clients. */
#define MULTI_PASS_ELEMS 65536u
#define MULTI_PASS_BYTES (16ull << 20)

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
	uint64_t lo = UINT64_MAX, hi = 0; /* the pass's elements' bounding box */
	for (unsigned n = 0; t && m->next < m->count; n++) {
		if (n == MULTI_PASS_ELEMS || bytes >= MULTI_PASS_BYTES) {
			if (put) /* this pass's elements */
				client_heap_touched_range(d, t, lo, hi - lo);
			return EXEC_YIELD;
		}
		uint64_t off, len;
		multi_elem(sqe, m, m->next, &off, &len);
		if (off < lo)
			lo = off;
		if (off + len > hi)
			hi = off + len;
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
	if (put && bytes) /* t may wait for it */
		client_heap_touched_range(d, t, lo, hi - lo);
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
enum exec_result multi_exec(struct daemon *d, struct client *c, const struct hoist_sqe *sqe,
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
				if (kind == XP_PUT)
					overlap_put_refused(c, sqe->pe); /* see rma() */
				return EXEC_DONE;
			}
			if (!j->prog_ready)
				return EXEC_STALL;
			node = j->node_of[sqe->pe];
			if (node == d->net.self) {
				*res = -ECONNRESET;
				if (kind == XP_PUT)
					overlap_put_refused(c, sqe->pe);
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
