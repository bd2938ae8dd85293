/*
 * The same-node transport: both PEs' segments are mapped in this daemon,
 * so a put or get is one copy. memmove, because a PE may target itself
 * with overlapping ranges. Arguments were validated (validate.c).
 * Sees requests only (transport.h), never a client or its descriptor.
 */
#include "daemon.h"

#include <errno.h>
#include "transport.h"

#include <string.h>

/* rq->rmap: the target PE's segment, mapped here (the engine checked the
 * PE is attached) */
static enum xp_result self_rma(struct daemon *d, const struct xp_req *rq, int *err)
{
	char *remote = rq->rmap ? rq->rmap + rq->off : NULL;
	switch (rq->kind) {
	case XP_PUT:
		if (!remote)
			return xp_fail(err, -ECONNRESET);
		memmove(remote, rq->laddr, rq->len);
		return XP_DONE;
	case XP_GET:
		if (!remote)
			return xp_fail(err, -ECONNRESET);
		memmove(rq->laddr, remote, rq->len);
		return XP_DONE;
	case XP_AMO:
	case XP_SEND:
		break;
	}
	return xp_fail(err, xp_kind_refuse(d, rq->kind)); /* not run here, or no kind at all */
}

const struct transport_ops self_transport = {
	.name = "self",
	.rma = self_rma,
	/* in order: a copy during the call */
};
