#include "validate.h"

#include <errno.h>

int validate_sqe(const struct hoist_sqe *sqe, const struct validate_geom *g)
{
	if (sqe->opcode == HOIST_OP_INVALID || sqe->opcode >= HOIST_OP__COUNT)
		return -EINVAL;
	if (sqe->flags & ~HOIST_SQE_F__ALL)
		return -EINVAL;
	if (sqe->reserved0 || sqe->reserved1)
		return -EINVAL;

	switch (sqe->opcode) {
	case HOIST_OP_PUT:
	case HOIST_OP_GET:
		break;
	case HOIST_OP_FENCE:
	case HOIST_OP_QUIET:
	case HOIST_OP_BARRIER_NOTIFY:
	case HOIST_OP_PHASE:
	case HOIST_OP_NOP:
		/* no operands (remote_off of NOTIFY/PHASE is a phase id); data
		 * flags make no sense */
		if (sqe->flags & (HOIST_SQE_F_INLINE | HOIST_SQE_F_LOCAL_HEAP))
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
		if (sqe->opcode != HOIST_OP_PUT || sqe->len > HOIST_INLINE_MAX ||
		    (sqe->flags & HOIST_SQE_F_LOCAL_HEAP))
			return -EINVAL;
		return 0;
	}
	uint64_t local_size = (sqe->flags & HOIST_SQE_F_LOCAL_HEAP) ? g->heap_bytes : g->staging_bytes;
	if (!hoist_range_ok(sqe->local_off, sqe->len, local_size))
		return -EFAULT;
	return 0;
}
