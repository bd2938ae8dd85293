/*
 * The same-node transport: both PEs' segments are mapped in this daemon,
 * so a put or get is one copy. memmove, because a PE may target itself
 * with overlapping ranges. An atomic is the CPU atomic on the target word. Arguments were validated (validate.c).
 * Sees requests only (transport.h), never a client or its descriptor.
 */
#include "daemon.h"

#include <errno.h>
#include "transport.h"

#include <string.h>

#include "hoist_amo.h"

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
	case XP_AMO: {
		/* the CPU atomic on the target's memory (transport/amo.c's
		 * design): the same one the library's direct path and a target
		 * daemon serving W_AMO run; arguments validated (validate.c) */
		uint64_t old;
		if (!remote)
			return xp_fail(err, -ECONNRESET);
		hoist_amo_apply(remote, rq->amo.op, (uint32_t)rq->len, rq->amo.value, rq->amo.cmp,
				&old);
		/* the engine wakes a waiter of the target (stages/rma.c) */
		if (rq->laddr)
			memcpy(rq->laddr, &old, rq->len); /* little endian: the low bytes */
		return XP_DONE;
	}
	case XP_SEND:
		break;
	}
	return xp_fail(err, xp_kind_refuse(d, rq->kind)); /* not run here, or no kind at all */
}

/* Another daemon: there is none (one node). */
static int self_am_send(struct daemon *d, int32_t node, uint8_t type, const void *ext,
			uint16_t hlen, const void *payload, uint64_t plen)
{
	(void)d, (void)node, (void)type, (void)ext, (void)hlen, (void)payload, (void)plen;
	return -EHOSTUNREACH;
}

/* Nothing in flight: every operation completed during its call. */
static void self_orphan(struct daemon *d, struct client *c)
{
	(void)d, (void)c;
}

/* The transport of a one-node daemon too (progress_start): no start, no
 * descriptors, nothing to flush or time; nothing registered. */
const struct transport_ops self_transport = {
	.name = "self",
	.rma = self_rma,
	.am_send = self_am_send,
	.orphan = self_orphan,
	/* in order: a copy during the call */
};
