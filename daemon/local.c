/*
 * The same-node transport: both PEs' segments are mapped in this daemon,
 * so a put or get is one copy. memmove, because a PE may target itself
 * with overlapping ranges. Arguments were validated (validate.c).
 */
#include "daemon.h"

#include <errno.h>
#include "transport.h"

#include <string.h>

static int local_put(struct client *src, const struct hoist_sqe *sqe, struct client *dst)
{
	const void *from = (sqe->flags & HOIST_SQE_F_INLINE) ? (const void *)sqe->inline_data
							    : client_buf(src, sqe);
	memmove((char *)dst->heap.base + sqe->remote_off, from, sqe->len);
	return 0;
}

static int local_get(struct client *src, const struct hoist_sqe *sqe, struct client *dst)
{
	memmove(client_buf(src, sqe), (char *)dst->heap.base + sqe->remote_off, sqe->len);
	return 0;
}

/* node is this node; the target PE is attached here (the caller checked) */
static enum xp_result self_rma(struct daemon *d, struct client *c, enum xp_kind kind,
			       const struct hoist_sqe *sqe, int32_t node, const struct xp_op *op,
			       int *err)
{
	(void)node;
	(void)op;
	struct client *t = c->job->pe[sqe->pe];
	switch (kind) {
	case XP_PUT:
		if (!t)
			return xp_fail(err, -ECONNRESET);
		local_put(c, sqe, t);
		return XP_DONE;
	case XP_GET:
		if (!t)
			return xp_fail(err, -ECONNRESET);
		local_get(c, sqe, t);
		return XP_DONE;
	case XP_AMO:
	case XP_SEND:
		break;
	}
	return xp_fail(err, xp_kind_refuse(d, kind)); /* not run here, or no kind at all */
}

const struct transport_ops self_transport = {
	.name = "self",
	.rma = self_rma,
};
