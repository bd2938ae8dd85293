/*
 * The put/get stage: one validated put or get descriptor becomes a neutral
 * transport request (struct xp_req). A target PE on this node is served by
 * the self transport (a copy); any other goes through the conflict and put
 * deferral stage (overlap.c: it may hold the descriptor, or serve a get
 * from a phase prefetch) and then to the node's transport, which completes
 * it at once or hands its cookie back later to complete.c. Also the kind
 * mapping (op_kind) and the outstanding-put cap that the strided/vector
 * engine (multi.c) shares.
 */
#include "rma.h"

#include <errno.h>
#include <string.h>

#include "daemon.h"
#include "hoist_amo.h"
#include "overlap.h"

/* The cap on outstanding puts: the descriptor waits for completions. Puts
 * this client's aggregation region holds back in open packs would never
 * complete while it waits (the region's end is a later descriptor): they
 * go now, as when a conflict ends a region early. */
enum exec_result cap_stall(struct daemon *d, struct client *c)
{
	if (c->agg_held) {
		c->agg_held = 0;
		STAT_INC(&c->st, agg_releases);
		if (d->xport->pack_release)
			d->xport->pack_release(d);
	}
	return EXEC_STALL;
}

/* The transport kind of a validated put/get descriptor or of the elements
 * of a strided/vector one. 0, or -EINVAL for any other opcode (counted: it
 * reached the transport path, which validation should have prevented). */
int op_kind(struct daemon *d, uint8_t opcode, enum xp_kind *kind)
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
	case HOIST_OP_AMO:
		*kind = XP_AMO;
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
	/* an atomic: its operands are inline, laddr is where a fetching one's
	 * old value lands; a non-fetching one has none, and its local_off is
	 * unchecked (validate.c), so no pointer is formed from it */
	/* an inline get (same node only, rma()) lands in the client's
	 * scratch, which the engine copies into its completion */
	char *laddr = NULL;
	if (kind == XP_GET && (sqe->flags & HOIST_SQE_F_INLINE))
		laddr = (char *)c->get_inline;
	else if (kind != XP_AMO || hoist_amo_fetching(sqe->amo_op))
		laddr = (sqe->flags & HOIST_SQE_F_INLINE) ? (char *)sqe->inline_data
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
	if (kind == XP_AMO) {
		/* never in place; a non-fetching one without a signal may travel
		 * in a pack (coalesced, or held by an aggregation region: the
		 * flags above), a fetching one or a signal always alone */
		rq->flags &= XP_RF_PACK | XP_RF_HOLD;
		if (hoist_amo_fetching(sqe->amo_op) || (sqe->flags & HOIST_SQE_F_SIGNAL))
			rq->flags = XP_RF_ALONE;
		rq->amo.op = sqe->amo_op;
		rq->amo.type = sqe->amo_type;
		memcpy(&rq->amo.value, sqe->inline_data, 8);
		memcpy(&rq->amo.cmp, sqe->inline_data + 8, 8);
	}
}

/* An atomic by kind (stats.h: amo_*). */
static void count_amo(struct client *c, uint8_t op)
{
	switch ((enum hoist_amo_op)op) {
	case HOIST_AMO_OP_FETCH:
		STAT_INC(&c->st, amo_fetch);
		break;
	case HOIST_AMO_OP_SET:
		STAT_INC(&c->st, amo_set);
		break;
	case HOIST_AMO_OP_SWAP:
	case HOIST_AMO_OP_CSWAP:
		STAT_INC(&c->st, amo_swap);
		break;
	case HOIST_AMO_OP_ADD:
	case HOIST_AMO_OP_FETCH_ADD:
	case HOIST_AMO_OP_INC:
	case HOIST_AMO_OP_FETCH_INC:
		STAT_INC(&c->st, amo_add);
		break;
	case HOIST_AMO_OP_AND:
	case HOIST_AMO_OP_OR:
	case HOIST_AMO_OP_XOR:
	case HOIST_AMO_OP_FETCH_AND:
	case HOIST_AMO_OP_FETCH_OR:
	case HOIST_AMO_OP_FETCH_XOR:
	case HOIST_AMO_OP__COUNT:
		STAT_INC(&c->st, amo_bitwise);
		break;
	}
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
	case XP_AMO: /* by kind in rma(), which sees the descriptor */
	case XP_SEND:
		break;
	}
}

/* A put, get or atomic: same node by the self transport (a copy, or the
 * CPU atomic), other nodes through the transport. For the conflict and
 * put deferral stage an atomic is a put that also reads: it waits behind
 * an overlapping unfinished put (and, on an unordered transport, get),
 * invalidates overlapping phase predictions, and later accesses to its
 * range wait for it as for a put. A non-fetching one is deferred like a
 * put (the client does not wait for it under HOIST_AUTO=1: amo_deferred)
 * and may travel in a pack with other small operations for its node
 * (pack.c, WIRE_PACK_AMO). */
enum exec_result rma(struct daemon *d, struct client *c, const struct hoist_sqe *sqe, int *res)
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
		r = d->local->rma(d, &rq, &err);
		if (r == XP_DONE && (kind == XP_PUT || kind == XP_AMO))
			client_heap_touched_range(d, t, rq.off, rq.len); /* t may wait for it */
		if (kind == XP_AMO && r == XP_DONE) {
			STAT_INC(&c->st, amo_self);
			if (sqe->flags & HOIST_SQE_F_SIGNAL)
				STAT_INC(&c->st, signal_self);
		}
	} else if (j->pe_gone[sqe->pe]) {
		*res = -ECONNRESET; /* the target PE is gone */
		if (kind == XP_PUT || kind == XP_AMO)
			overlap_put_refused(c, sqe->pe); /* its prefetches are stale */
		return EXEC_DONE;
	} else if (!j->prog_ready) {
		return EXEC_STALL; /* JOB_READY is on its way */
	} else {
		int32_t node = j->node_of[sqe->pe];
		if (node == d->net.self) {
			*res = -ECONNRESET;
			if (kind == XP_PUT || kind == XP_AMO)
				overlap_put_refused(c, sqe->pe);
			return EXEC_DONE;
		}
		if (kind == XP_GET && (sqe->flags & HOIST_SQE_F_INLINE)) {
			/* its data would land after this descriptor's CQE slot
			 * is gone: the client sends these to its own node only */
			*res = -EINVAL;
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
			case XP_AMO:
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
			case XP_SEND:
				break; /* not an overlap candidate */
			}
			o->decided = c->sq_head + 1;
		} else if (o && (kind == XP_PUT || kind == XP_AMO)) {
			op->seq = o->put_seq + 1;
		}
		if (o && kind == XP_GET)
			op->gseq = overlap_get_seq(c);
		r = d->xport->rma(d, &rq, &err);
		if (r == XP_STARTED)
			c->outstanding++; /* until the cookie comes back */
		if (o && (kind == XP_PUT || kind == XP_AMO) && r == XP_STARTED)
			overlap_put_issued(c, sqe, op->seq);
		if (kind == XP_AMO && r == XP_STARTED) {
			STAT_INC(&c->st, amo_remote);
			if (sqe->flags & HOIST_SQE_F_SIGNAL)
				STAT_INC(&c->st, signal_remote);
		}
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
	if (kind == XP_AMO)
		count_amo(c, sqe->amo_op);
	else
		count_rma(c, kind, sqe->len);
	return r == XP_DONE ? EXEC_DONE : EXEC_ASYNC;
}
