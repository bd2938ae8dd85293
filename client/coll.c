/*
 * Collectives. In a job whose PEs are all on this node (HOIST_DIRECT=1,
 * after the first barrier) they run among the PEs through shared memory,
 * without the daemon (nodecoll.c); the rest of this comment is the daemon
 * path of every other job. Each call posts ONE descriptor (HOIST_OP_COLL); this node's
 * daemon gathers the local PEs' contributions from their heaps, runs the
 * inter-node algorithm with the other daemons and writes every local PE's
 * dst before its completion. Split-phase forms return a request; for
 * allgather/alltoall the daemon also reports each source PE's block as it
 * lands (partial completions), which hoist_wait_from() waits for.
 *
 * Arguments are checked by the daemon, not here: an invalid call must
 * still take its place in the job's sequence of collectives so that the
 * collective fails on every PE instead of leaving the others waiting.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

_Static_assert(HOIST_INT32 == 0 && HOIST_FLOAT == HOIST_COLL_TYPE_FLOAT &&
		       HOIST_DOUBLE + 1 == HOIST_COLL_TYPES,
	       "hoist_type_t numbering is the wire's");
_Static_assert(HOIST_SUM == 0 && HOIST_AND == HOIST_COLL_OP_AND && HOIST_XOR + 1 == HOIST_COLL_OPS,
	       "hoist_op_t numbering is the wire's");

/* Heap offset of p, or an offset the daemon rejects (-EFAULT). */
static uint64_t heap_off(const struct hoist_ctx *c, const void *p)
{
	uint64_t off;
	if (!p || hoist__sym_off(c, p, 1, &off))
		return UINT64_MAX;
	return off;
}

static uint8_t small(int v)
{
	return v < 0 || v > 255 ? 255 : (uint8_t)v;
}

static int coll_start(uint8_t kind, void *dst, const void *src, uint64_t len, int type, int op,
		      int root, int want_partial, hoist_req_t **out)
{
	struct hoist_ctx *c = &hoist__g;
	if (!c->initialized)
		return -ENOTCONN;
	int exch = kind == HOIST_COLL_ALLGATHER || kind == HOIST_COLL_ALLTOALL;
	struct hoist_req *r = c->nc_spare; /* a malloc and a free were a tenth of a node broadcast */
	if (r && !exch)
		c->nc_spare = NULL;
	else
		r = malloc(sizeof(*r) + (exch ? (size_t)c->size : 0));
	if (!r)
		return -ENOMEM;
	/* nbi gets into src must have landed: only a quiet copies them out.
	 * Its error (an earlier operation's) is returned, but the collective
	 * is posted all the same: skipping it would shift this PE's numbering
	 * of the job's collectives, and the others would wait for it forever
	 * or pair its next collective with this one. */
	int pre = 0;
	if (c->nbi_head || c->nc_on) /* node path: nobody else waits for our puts */
		pre = hoist__quiet(c);
	int rc = hoist__op_alloc(c, &r->op);
	if (rc) {
		free(r);
		return rc;
	}
	*r = (struct hoist_req){.op = r->op, .kind = kind, .size = c->size};
	if (exch)
		memset(r->arrived, 0, (size_t)c->size);
	if (c->nc_on) /* every PE on this node: among the PEs (nodecoll.c) */
		hoist__nc_start(c, r, dst, src, len, type, op, root, 0);
	if (r->node) {
		if (c->nc_sticky && !pre) /* an earlier eager one failed after it returned */
			pre = c->nc_sticky;
		c->nc_sticky = 0;
		*out = r;
		return pre;
	}
	r->op->arrived = exch ? r->arrived : NULL;
	struct hoist_coll_args a = {.kind = kind, .flags = want_partial ? HOIST_COLL_F_PARTIAL : 0};
	if (kind == HOIST_COLL_REDUCE || kind == HOIST_COLL_ALLREDUCE) {
		a.type = small(type);
		a.op = small(op);
	}
	struct hoist_sqe *sqe;
	rc = hoist__sqe_get(c, &sqe);
	if (rc) {
		hoist__op_free(c, r->op);
		free(r);
		return rc;
	}
	*sqe = (struct hoist_sqe){.opcode = HOIST_OP_COLL,
				  .pe = root,
				  .user_data = hoist__op_udata(c, r->op),
				  .remote_off = heap_off(c, dst),
				  .local_off = heap_off(c, src),
				  .len = len};
	memcpy(sqe->inline_data, &a, sizeof(a));
	hoist__sqe_submit(c);
	c->coll_calls++; /* the daemon's number of it: node descriptors carry theirs */
	*out = r;
	return pre;
}

/* A blocking collective on the node path once the peers are mapped: the
 * request lives on the stack and holds no op slot (nothing outlives the
 * call), the same steps as coll_start + hoist_wait otherwise. 1 when it
 * ran (result in *out), 0 when the caller takes the general path. */
static int node_blocking(struct hoist_ctx *c, uint8_t kind, void *dst, const void *src,
			 uint64_t len, int type, int op, int root, int *out)
{
	if (!c->initialized || !c->nc_on || !c->nc_base)
		return 0;
	struct hoist_req r = {.kind = kind, .size = c->size};
	int pre = hoist__quiet(c); /* as coll_start: earlier puts and gets complete first */
	hoist__nc_start(c, &r, dst, src, len, type, op, root, 1);
	if (c->nc_sticky && !pre) /* an earlier eager one failed after it returned */
		pre = c->nc_sticky;
	c->nc_sticky = 0;
	hoist__nc_progress(c, &r, 1); /* and every earlier one */
	hoist__nc_wake(c);
	int rc = r.rc;
	if (!rc)
		rc = c->nc_sticky;
	c->nc_sticky = 0;
	*out = pre ? pre : rc;
	return 1;
}

static int finish(hoist_req_t *r, int rc)
{
	int wrc = hoist_wait(r);
	return rc ? rc : wrc;
}

/* coll_start posted the descriptor iff r is set; its error is then still
 * reported, after the collective was waited for. A NULL request pointer is
 * an error, but the descriptor is still posted (and waited for): the other
 * PEs are not left waiting. */
static int start_or_finish(int rc, hoist_req_t *r, hoist_req_t **req)
{
	if (!r)
		return rc;
	if (rc || !req)
		return finish(r, rc ? rc : -EINVAL);
	*req = r;
	return 0;
}

static uint64_t bytes_of(size_t count, hoist_type_t type)
{
	uint64_t es = (unsigned)type < HOIST_COLL_TYPES ? hoist_coll_type_size((uint8_t)type) : 1;
	if (count > UINT64_MAX / es)
		return UINT64_MAX; /* the daemon rejects it */
	return (uint64_t)count * es;
}

HOIST_API int hoist_broadcast_start(void *dst, const void *src, size_t nbytes, int root,
				   hoist_req_t **req)
{
	hoist_req_t *r = NULL;
	int rc = coll_start(HOIST_COLL_BROADCAST, dst, src, nbytes, 0, 0, root, 0, &r);
	return start_or_finish(rc, r, req);
}

HOIST_API int hoist_reduce_start(void *dst, const void *src, size_t count, hoist_type_t type,
				hoist_op_t op, int root, hoist_req_t **req)
{
	hoist_req_t *r = NULL;
	int rc = coll_start(HOIST_COLL_REDUCE, dst, src, bytes_of(count, type), (int)type, (int)op,
			    root, 0, &r);
	return start_or_finish(rc, r, req);
}

HOIST_API int hoist_allreduce_start(void *dst, const void *src, size_t count, hoist_type_t type,
				   hoist_op_t op, hoist_req_t **req)
{
	hoist_req_t *r = NULL;
	int rc = coll_start(HOIST_COLL_ALLREDUCE, dst, src, bytes_of(count, type), (int)type,
			    (int)op, 0, 0, &r);
	return start_or_finish(rc, r, req);
}

HOIST_API int hoist_allgather_start(void *dst, const void *src, size_t nbytes, hoist_req_t **req)
{
	hoist_req_t *r = NULL;
	int rc = coll_start(HOIST_COLL_ALLGATHER, dst, src, nbytes, 0, 0, 0, 1, &r);
	return start_or_finish(rc, r, req);
}

HOIST_API int hoist_alltoall_start(void *dst, const void *src, size_t nbytes, hoist_req_t **req)
{
	hoist_req_t *r = NULL;
	int rc = coll_start(HOIST_COLL_ALLTOALL, dst, src, nbytes, 0, 0, 0, 1, &r);
	return start_or_finish(rc, r, req);
}

HOIST_API int hoist_broadcast(void *dst, const void *src, size_t nbytes, int root)
{
	int nrc;
	if (node_blocking(&hoist__g, HOIST_COLL_BROADCAST, dst, src, nbytes, 0, 0, root, &nrc))
		return nrc;
	hoist_req_t *r = NULL;
	int rc = coll_start(HOIST_COLL_BROADCAST, dst, src, nbytes, 0, 0, root, 0, &r);
	return r ? finish(r, rc) : rc;
}

HOIST_API int hoist_reduce(void *dst, const void *src, size_t count, hoist_type_t type,
			   hoist_op_t op, int root)
{
	int nrc;
	if (node_blocking(&hoist__g, HOIST_COLL_REDUCE, dst, src, bytes_of(count, type), (int)type,
			  (int)op, root, &nrc))
		return nrc;
	hoist_req_t *r = NULL;
	int rc = coll_start(HOIST_COLL_REDUCE, dst, src, bytes_of(count, type), (int)type, (int)op,
			    root, 0, &r);
	return r ? finish(r, rc) : rc;
}

HOIST_API int hoist_allreduce(void *dst, const void *src, size_t count, hoist_type_t type,
			      hoist_op_t op)
{
	int nrc;
	if (node_blocking(&hoist__g, HOIST_COLL_ALLREDUCE, dst, src, bytes_of(count, type), (int)type,
			  (int)op, 0, &nrc))
		return nrc;
	hoist_req_t *r = NULL;
	int rc = coll_start(HOIST_COLL_ALLREDUCE, dst, src, bytes_of(count, type), (int)type,
			    (int)op, 0, 0, &r);
	return r ? finish(r, rc) : rc;
}

HOIST_API int hoist_allgather(void *dst, const void *src, size_t nbytes)
{
	int nrc;
	if (node_blocking(&hoist__g, HOIST_COLL_ALLGATHER, dst, src, nbytes, 0, 0, 0, &nrc))
		return nrc;
	hoist_req_t *r = NULL;
	int rc = coll_start(HOIST_COLL_ALLGATHER, dst, src, nbytes, 0, 0, 0, 0, &r);
	return r ? finish(r, rc) : rc;
}

HOIST_API int hoist_alltoall(void *dst, const void *src, size_t nbytes)
{
	int nrc;
	if (node_blocking(&hoist__g, HOIST_COLL_ALLTOALL, dst, src, nbytes, 0, 0, 0, &nrc))
		return nrc;
	hoist_req_t *r = NULL;
	int rc = coll_start(HOIST_COLL_ALLTOALL, dst, src, nbytes, 0, 0, 0, 0, &r);
	return r ? finish(r, rc) : rc;
}

HOIST_API int hoist_wait(hoist_req_t *req)
{
	struct hoist_ctx *c = &hoist__g;
	if (!req)
		return -EINVAL;
	if (!c->initialized) {
		free(req);
		return -ENOTCONN;
	}
	struct hoist_op *op = req->op;
	if (req->node) { /* its op slot was only held */
		hoist__nc_progress(c, req, 1); /* and every earlier one */
		int rc = req->rc;
		if (!rc) /* an earlier eager broadcast's root learns here of its error */
			rc = c->nc_sticky;
		c->nc_sticky = 0;
		hoist__op_free(c, op);
		if (!c->nc_spare && req->kind != HOIST_COLL_ALLGATHER && req->kind != HOIST_COLL_ALLTOALL)
			c->nc_spare = req; /* the next collective's (coll_start) */
		else
			free(req);
		return rc;
	}
	int rc = op->done ? op->res : hoist__wait_op(c, op);
	op->arrived = NULL; /* req's memory goes */
	if (op->done) /* else the daemon is gone: the slot stays taken */
		hoist__op_free(c, op);
	free(req);
	return rc;
}

HOIST_API int hoist_test(hoist_req_t *req)
{
	struct hoist_ctx *c = &hoist__g;
	if (!req)
		return -EINVAL;
	if (!c->initialized)
		return -ENOTCONN;
	if (req->node)
		return hoist__nc_progress(c, req, 0) ? 1 : 0;
	hoist__kick(c);
	hoist__reap(c);
	if (!req->op->done) {
		int rc = hoist__check_daemon(c);
		return rc ? rc : 0;
	}
	return 1;
}

HOIST_API int hoist_wait_from(hoist_req_t *req, int pe)
{
	struct hoist_ctx *c = &hoist__g;
	if (!req || pe < 0 || pe >= req->size ||
	    (req->kind != HOIST_COLL_ALLGATHER && req->kind != HOIST_COLL_ALLTOALL))
		return -EINVAL;
	if (!c->initialized)
		return -ENOTCONN;
	if (req->node) /* every block lands at once, maybe before the end */
		return hoist__nc_wait_from(c, req);
	if (!req->op->arrived)
		return -EINVAL;
	return hoist__wait_arrival(c, req->op, pe);
}
