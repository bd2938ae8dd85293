/*
 * The transport interface: how the progress engine moves a client's put or
 * get to a PE and sends active messages to another daemon. Shaped after
 * RDMA: a put is written into the target segment without the target
 * application taking part, a get is served by the target side, every
 * operation completes on its own (progress_complete()), and active
 * messages carry everything the daemons say to each other (barrier rounds,
 * membership, departures; see am.c).
 *
 * Users: self (PEs of this node: one copy between mapped segments,
 * local.c) and tcp (net.c). A verbs transport implements the same table.
 */
#ifndef HOISTD_TRANSPORT_H
#define HOISTD_TRANSPORT_H

#include <stdint.h>

#include "hoist_shm.h"

struct daemon;
struct client;
struct xp_multi; /* a multi-element descriptor in progress (progress.c) */

/* What a transport operation does. Every switch over it lists every kind
 * (hoistd_core builds with -Wswitch-enum): a kind a transport does not
 * implement is refused with an error, never run as something else. */
enum xp_kind {
	XP_PUT = 1, /* local buffer -> remote segment */
	XP_GET,     /* remote segment -> local buffer */
	XP_AMO,     /* remote atomic: declared for the atomics issue; refused */
	XP_SEND,    /* a message to the remote daemon (am_send); rma() refuses it */
};

/* rma() results: an enum, never an -errno (that comes back in *err) */
enum xp_result {
	XP_DONE = 1, /* completed during the call */
	XP_STARTED,  /* issued; progress_complete() reports the end */
	XP_STALL,    /* no credit or buffer space now: retry later */
	XP_ERROR,    /* failed now: *err is the -errno */
};

/* A kind rma() does not execute: counted (xp_kind_refused), and the
 * -errno to fail it with: -EOPNOTSUPP for a known kind this path does not
 * implement (AMO, SEND), -EPROTO for a value that is no kind at all. */
int xp_kind_refuse(struct daemon *d, enum xp_kind kind);

/* rma()'s failure: *err = rc (an -errno), XP_ERROR. */
static inline enum xp_result xp_fail(int *err, int rc)
{
	*err = rc;
	return XP_ERROR;
}

/* What the progress engine needs back when an operation completes. */
struct xp_op {
	uint8_t prefetch; /* a daemon prefetch into the arena: (slot, gen) */
	uint32_t slot;
	uint64_t gen;
	uint64_t seq;     /* a put's sequence in the conflict lists, 0 none */
	char *dst;        /* a get's destination, NULL: the descriptor's buffer */
	struct xp_multi *multi; /* one element of a strided/vector descriptor:
				 * the descriptor completes with its last one */
};

struct transport_ops {
	const char *name;
	int (*start)(struct daemon *d);   /* 0 or -errno */
	void (*stop)(struct daemon *d);
	/* Client c's put (kind XP_PUT) or get (XP_GET) descriptor to PE
	 * sqe->pe, hosted by node; op (may be NULL) comes back with the
	 * completion. Elements of strided and vector descriptors come here one
	 * by one (op->multi set); a transport may pack them and other small
	 * operations for one node into one message (tcp: W_PACK), or send each
	 * alone. Client operations count in c->outstanding until they
	 * complete; prefetches do not. Any other kind: XP_ERROR with
	 * xp_kind_refuse()'s -errno, nothing issued. XP_ERROR sets *err. */
	enum xp_result (*rma)(struct daemon *d, struct client *c, enum xp_kind kind,
			      const struct hoist_sqe *sqe, int32_t node, const struct xp_op *op,
			      int *err);
	/* One-way active message (wire.h type, extension header, payload of
	 * at most WIRE_AM_MAX_PAYLOAD bytes);
	 * connects on first use. 0 or -errno. */
	int (*am_send)(struct daemon *d, int32_t node, uint8_t type, const void *ext, uint16_t hlen,
		       const void *payload, uint64_t plen);
	/* Make progress: sockets/completion queues; may sleep timeout_ms
	 * (also on the doorbell and command queue). Returns work done. */
	int (*poll)(struct daemon *d, int timeout_ms);
	void (*flush)(struct daemon *d);               /* push queued output */
	void (*timers)(struct daemon *d, uint64_t now); /* heartbeats, timeouts */
	/* The client leaves: forget it in everything still in flight. */
	void (*orphan)(struct daemon *d, struct client *c);
	/* Optional (NULL: operations are never held back). Packing transports
	 * may hold operations of aggregation regions (HOIST_SQE_F_AGG) in an
	 * open pack across progress passes; this sends every held pack now. */
	void (*pack_release)(struct daemon *d);
};

extern const struct transport_ops self_transport;
extern const struct transport_ops tcp_transport;
extern const struct transport_ops verbs_transport;

/* verbs.c: registration of a client's segments against the memlock budget
 * (control thread, at attach). 0, or -ENOMEM/-errno with why filled for
 * the client. No-op with tcp. */
int verbs_client_register(struct daemon *d, struct client *c, char *why, size_t whylen);
void verbs_client_deregister(struct daemon *d, struct client *c);
/* verbs.c: the client is being freed: its registrations and segments stay
 * for a grace period (a peer may still use a cached rkey). No-op with tcp. */
void verbs_client_retire(struct daemon *d, struct client *c);

#endif
