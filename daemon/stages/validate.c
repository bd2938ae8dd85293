#include "validate.h"

#include <errno.h>
#include <string.h>

#include "hoist_amo.h"

/* Element i of a strided descriptor at remote_off + i*stride: every one
 * inside [0, heap) iff the first and the last are (offsets are linear in
 * i). Overflow anywhere is outside. A descriptor that moves nothing (count
 * 0 or element size 0) is checked all the same (issue 14): its local range
 * (0 bytes at local_off), its first element and, with count > 0, its last
 * element must be inside their segments; only then is it a no-op. */
static int strided_ok(const struct hoist_sqe *sqe, const struct validate_geom *g)
{
	int64_t stride;
	uint64_t count;
	memcpy(&stride, sqe->inline_data, 8);
	memcpy(&count, sqe->inline_data + 8, 8);
	uint64_t total;
	if (__builtin_mul_overflow(count, sqe->len, &total))
		return -EINVAL;
	uint64_t local_size = (sqe->flags & HOIST_SQE_F_LOCAL_HEAP) ? g->heap_bytes : g->staging_bytes;
	if (!hoist_range_ok(sqe->local_off, total, local_size))
		return -EFAULT;
	if (!hoist_range_ok(sqe->remote_off, sqe->len, g->heap_bytes))
		return -EFAULT;
	if (count == 0)
		return 0; /* no element: a no-op */
	__int128 last = (__int128)sqe->remote_off + (__int128)stride * (__int128)(count - 1);
	if (last < 0 || last > (__int128)g->heap_bytes ||
	    !hoist_range_ok((uint64_t)last, sqe->len, g->heap_bytes))
		return -EFAULT;
	return 0;
}

/* The list itself is checked element by element when the daemon copies
 * it (multi.c); here its place and the local data. */
static int vec_ok(const struct hoist_sqe *sqe, const struct validate_geom *g)
{
	uint64_t nvec, list_off;
	memcpy(&nvec, sqe->inline_data, 8);
	memcpy(&list_off, sqe->inline_data + 8, 8);
	if (nvec == 0 && sqe->len)
		return -EINVAL;
	if (nvec > HOIST_VEC_MAX)
		return -EINVAL;
	/* nvec 0: an empty list, still at a place inside staging (issue 14) */
	if (!hoist_range_ok(list_off, nvec * sizeof(struct hoist_vec_elem), g->staging_bytes))
		return -EFAULT;
	uint64_t local_size = (sqe->flags & HOIST_SQE_F_LOCAL_HEAP) ? g->heap_bytes : g->staging_bytes;
	if (!hoist_range_ok(sqe->local_off, sqe->len, local_size))
		return -EFAULT;
	if (sqe->remote_off > g->heap_bytes)
		return -EFAULT;
	return 0;
}

/* An atomic: a known (op, type), len its operand size, the target word
 * naturally aligned and inside the heap; a fetching one's result place
 * inside its segment. Only the CQE, LOCAL_HEAP, SIGNAL and AGG flags; a
 * signal (put-with-signal) is a SET or ADD on HOIST_UINT64; AGG (an
 * aggregation region holds it in a pack) only on a non-fetching atomic
 * without a signal. */
static int amo_ok(const struct hoist_sqe *sqe, const struct validate_geom *g)
{
	if ((sqe->flags & ~(HOIST_SQE_F_CQE | HOIST_SQE_F_LOCAL_HEAP | HOIST_SQE_F_SIGNAL |
			    HOIST_SQE_F_AGG)) ||
	    sqe->reserved1)
		return -EINVAL;
	if ((sqe->flags & HOIST_SQE_F_AGG) &&
	    ((sqe->flags & HOIST_SQE_F_SIGNAL) || hoist_amo_fetching(sqe->amo_op)))
		return -EINVAL;
	if ((sqe->flags & HOIST_SQE_F_SIGNAL) &&
	    ((sqe->amo_op != HOIST_AMO_OP_SET && sqe->amo_op != HOIST_AMO_OP_ADD) ||
	     sqe->amo_type != HOIST_AMO_T_UINT64))
		return -EINVAL;
	if (hoist_amo_valid(sqe->amo_op, sqe->amo_type) || sqe->len != hoist_amo_size(sqe->amo_type))
		return -EINVAL;
	if (sqe->pe < 0 || sqe->pe >= g->job_size || sqe->seg != HOIST_SEG_HEAP)
		return -EINVAL;
	if (!hoist_range_ok(sqe->remote_off, sqe->len, g->heap_bytes))
		return -EFAULT;
	if (sqe->remote_off % sqe->len)
		return -EINVAL;
	uint64_t local_size = (sqe->flags & HOIST_SQE_F_LOCAL_HEAP) ? g->heap_bytes : g->staging_bytes;
	if (hoist_amo_fetching(sqe->amo_op) && !hoist_range_ok(sqe->local_off, sqe->len, local_size))
		return -EFAULT;
	return 0;
}

int validate_sqe(const struct hoist_sqe *sqe, const struct validate_geom *g)
{
	if (sqe->opcode == HOIST_OP_INVALID || sqe->opcode >= HOIST_OP__COUNT)
		return -EINVAL;
	/* a collective is checked when it executes (validate_coll): even an
	 * invalid one must count as this PE's part, or the others would wait */
	if (sqe->opcode == HOIST_OP_COLL)
		return 0;
	if (sqe->flags & ~HOIST_SQE_F__ALL)
		return -EINVAL;
	if (sqe->opcode == HOIST_OP_AMO)
		return amo_ok(sqe, g);
	if (sqe->flags & HOIST_SQE_F_SIGNAL) /* atomics only */
		return -EINVAL;
	if ((sqe->flags & HOIST_SQE_F_LAZY) && sqe->opcode != HOIST_OP_BARRIER_NOTIFY)
		return -EINVAL; /* barrier notifies only */
	if (sqe->reserved0 || sqe->reserved1)
		return -EINVAL;

	switch (sqe->opcode) {
	case HOIST_OP_PUT:
	case HOIST_OP_GET:
		break;
	case HOIST_OP_PUT_STRIDED:
	case HOIST_OP_GET_STRIDED:
	case HOIST_OP_PUT_VEC:
	case HOIST_OP_GET_VEC:
		if (sqe->flags & HOIST_SQE_F_INLINE) /* inline_data holds parameters */
			return -EINVAL;
		if (sqe->pe < 0 || sqe->pe >= g->job_size || sqe->seg != HOIST_SEG_HEAP)
			return -EINVAL;
		if (sqe->opcode == HOIST_OP_PUT_STRIDED || sqe->opcode == HOIST_OP_GET_STRIDED)
			return strided_ok(sqe, g);
		return vec_ok(sqe, g);
	case HOIST_OP_FENCE:
	case HOIST_OP_QUIET:
	case HOIST_OP_BARRIER_NOTIFY:
	case HOIST_OP_PHASE:
	case HOIST_OP_NOP:
		/* no operands (remote_off of NOTIFY/PHASE is a phase id); data
		 * flags make no sense */
		if (sqe->flags & (HOIST_SQE_F_INLINE | HOIST_SQE_F_LOCAL_HEAP | HOIST_SQE_F_AGG))
			return -EINVAL;
		/* len of a NOTIFY: how many node barriers it stands for, more
		 * than one only lazy (client/sync.c) */
		if (sqe->opcode == HOIST_OP_BARRIER_NOTIFY && sqe->len > 1 &&
		    (!(sqe->flags & HOIST_SQE_F_LAZY) || sqe->len > HOIST_NOTIFY_MAX))
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}

	if (sqe->pe < 0 || sqe->pe >= g->job_size)
		return -EINVAL;
	if (sqe->seg != HOIST_SEG_HEAP)
		return -EINVAL;
	if (!hoist_range_ok(sqe->remote_off, sqe->len, g->heap_bytes))
		return -EFAULT;

	if (sqe->flags & HOIST_SQE_F_INLINE) {
		if (sqe->flags & HOIST_SQE_F_LOCAL_HEAP)
			return -EINVAL;
		if (sqe->opcode == HOIST_OP_PUT)
			return sqe->len > HOIST_INLINE_MAX ? -EINVAL : 0;
		/* a get whose result travels in its completion: it needs one
		 * (CQE), fits its data[], and is not held in a pack (AGG: it
		 * would complete later, without its data) */
		if (sqe->len == 0 || sqe->len > HOIST_CQE_DATA_MAX || !(sqe->flags & HOIST_SQE_F_CQE) ||
		    (sqe->flags & HOIST_SQE_F_AGG) || sqe->local_off)
			return -EINVAL;
		return 0;
	}
	uint64_t local_size = (sqe->flags & HOIST_SQE_F_LOCAL_HEAP) ? g->heap_bytes : g->staging_bytes;
	if (!hoist_range_ok(sqe->local_off, sqe->len, local_size))
		return -EFAULT;
	return 0;
}

int validate_coll(const struct hoist_sqe *sqe, const struct validate_geom *g)
{
	struct hoist_coll_args a;
	memcpy(&a, sqe->inline_data, sizeof(a));
	if ((sqe->flags & ~HOIST_SQE_F_CQE) || sqe->reserved0 || sqe->reserved1 ||
	    sqe->seg != HOIST_SEG_HEAP || a.reserved0 || a.reserved1 ||
	    (a.flags & ~HOIST_COLL_F_PARTIAL))
		return -EINVAL;
	if (a.kind < HOIST_COLL_BROADCAST || a.kind >= HOIST_COLL__COUNT)
		return -EINVAL;
	int rooted = a.kind == HOIST_COLL_BROADCAST || a.kind == HOIST_COLL_REDUCE;
	if (rooted ? (sqe->pe < 0 || sqe->pe >= g->job_size) : sqe->pe != 0)
		return -EINVAL;
	uint64_t dlen = sqe->len, slen = sqe->len;
	switch (a.kind) {
	case HOIST_COLL_REDUCE:
	case HOIST_COLL_ALLREDUCE:
		if (a.type >= HOIST_COLL_TYPES || a.op >= HOIST_COLL_OPS)
			return -EINVAL;
		if (a.type >= HOIST_COLL_TYPE_FLOAT && a.op >= HOIST_COLL_OP_AND)
			return -EINVAL; /* bitwise operations on floating point */
		if (sqe->len % hoist_coll_type_size(a.type))
			return -EINVAL;
		break;
	case HOIST_COLL_ALLTOALL:
	case HOIST_COLL_ALLGATHER:
		if (a.type || a.op)
			return -EINVAL;
		if (g->job_size > 0 && sqe->len > g->heap_bytes / (uint64_t)g->job_size)
			return -EFAULT;
		dlen = sqe->len * (uint64_t)g->job_size;
		if (a.kind == HOIST_COLL_ALLTOALL)
			slen = dlen;
		break;
	default:
		if (a.type || a.op)
			return -EINVAL;
		break;
	}
	if (!hoist_range_ok(sqe->remote_off, dlen, g->heap_bytes) ||
	    !hoist_range_ok(sqe->local_off, slen, g->heap_bytes))
		return -EFAULT;
	return 0;
}
