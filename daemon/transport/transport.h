/*
 * The transport interface (v2, shaped after UCX's uct): how the progress
 * engine moves data to and from a PE and sends active messages to another
 * daemon. The engine (rma.c, multi.c) turns a client's descriptor into neutral
 * requests (struct xp_req): a kind, the local address and its memory
 * handle, the remote node/job/PE/segment/offset/length, and a completion
 * cookie. A transport never sees a client descriptor. It answers with an
 * enum xp_result (the -errno, if any, separately), and reports the end of
 * an operation it started by handing the cookie back (progress_complete(),
 * complete.c);
 * the engine counts outstanding operations and completes them.
 *
 * Shaped after RDMA: a put is written into the target segment without the
 * target application taking part, a get is served by the target side, and
 * active messages carry everything the daemons say to each other (barrier
 * rounds, membership, departures; see am.c).
 *
 * Users: self (PEs of this node: one copy between mapped segments,
 * self.c; the whole transport of a one-node daemon, which starts no
 * network transport), tcp (tcp.c) and verbs (verbs/), picked by name
 * (transport_find()). Memory registration goes through reg.h, waking up
 * through the progress loop (loop.h).
 */
#ifndef HOISTD_TRANSPORT_H
#define HOISTD_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

struct daemon;
struct client;
struct xp_multi; /* a multi-element descriptor in progress (multi.h) */

/* What a transport operation does. Every switch over it lists every kind
 * (hoistd_core builds with -Wswitch-enum): a kind a transport does not
 * implement is refused with an error, never run as something else. */
enum xp_kind {
	XP_PUT = 1, /* local buffer -> remote segment */
	XP_GET,     /* remote segment -> local buffer */
	XP_AMO,     /* remote atomic: rq->amo; a CPU atomic at the target node
		     * (self: on rmap; tcp, verbs: xp_amo()) */
	XP_SEND,    /* a message to the remote daemon (am_send); rma() refuses it */
};

/* rma() results: an enum, never an -errno (that comes back in *err) */
enum xp_result {
	XP_DONE = 1, /* completed during the call */
	XP_STARTED,  /* issued; progress_complete() reports the end */
	XP_STALL,    /* no credit or buffer space now: retry later */
	XP_ERROR,    /* failed now: *err is the -errno */
};

/* A kind rma() does not execute (transport.c): counted (xp_kind_refused),
 * and the -errno to fail it with: -EOPNOTSUPP for a known kind this path
 * does not implement (SEND), -EPROTO for a value that is no kind at
 * all. */
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
	uint64_t gseq;    /* a get's sequence in the unfinished-get lists
			   * (unordered transports), 0 none */
	struct xp_multi *multi; /* one element of a strided/vector descriptor:
				 * the descriptor completes with its last one */
};

/* The completion cookie: the engine's, carried by the transport untouched
 * and handed back to progress_complete(). The one thing a transport does
 * with it: when the client leaves (orphan), clear .client in every cookie
 * it holds for that client. */
struct xp_cookie {
	struct client *client; /* who waits; NULL: nobody any more */
	uint64_t user_data;
	int32_t pe;
	uint8_t opcode;        /* of the completion */
	uint8_t want_cqe;
	struct xp_op op;
};

/* struct xp_req.flags */
#define XP_RF_INPLACE 0x1u /* laddr stays valid and unchanged until the
			    * completion (the owner's heap): a put may read it
			    * in place (verbs: zero copy) instead of copying it */
#define XP_RF_PACK    0x2u /* travels in a pack when it fits one (an element
			    * of a strided/vector descriptor, or an
			    * aggregation-region op) */
#define XP_RF_HOLD    0x4u /* aggregation region: its pack may be held open
			    * across progress passes (see pack_release) */
#define XP_RF_ALONE   0x8u /* never packed (a prefetch, a fetching atomic,
			    * a put-with-signal's signal) */

/* One operation, as the engine asks a transport for it. */
struct xp_req {
	enum xp_kind kind;
	uint32_t flags;         /* XP_RF_* */
	/* local side: a put's data (read now unless XP_RF_INPLACE), where a
	 * get's data lands; and the memory handle covering it: the owner's
	 * registrations (verbs: struct ibv_mr *, XP_NMR of them, NULL
	 * entries skipped), NULL if none */
	char *laddr;
	void *const *lmr;
	/* remote side */
	char *rmap;             /* the target segment where it is mapped in
				 * this daemon (a PE of this node: self), or NULL */
	int32_t node;           /* the daemon hosting pe */
	uint64_t job;           /* wire job id */
	int32_t pe;
	uint32_t seg;
	uint64_t off;
	uint64_t len;
	/* XP_AMO: len is the operand size (4 or 8), laddr where a fetching
	 * op's old value lands (len bytes; NULL for a non-fetching op, which
	 * a network transport may pack: pack_eligible, WIRE_PACK_AMO) */
	struct {
		uint8_t op;   /* enum hoist_amo_op (hoist_amo.h) */
		uint8_t type; /* hoist_type_t numbering */
		uint64_t value, cmp;
	} amo;
	/* completion */
	struct xp_cookie ck;
};
#define XP_NMR 3

/* XP_AMO for a transport whose peer daemon executes it (tcp, verbs; one
 * implementation, amo.c) when it does not travel in a pack (fetching,
 * signal, coalescing off): a W_AMO request to the target node's daemon,
 * which runs the CPU atomic and answers W_AMO_REPLY; the reply writes the
 * old value at rq->laddr and hands rq->ck to progress_complete().
 * XP_STARTED, or XP_ERROR with *err. */
enum xp_result xp_amo(struct daemon *d, const struct xp_req *rq, int *err);
/* The requests of xp_amo in flight: forget client c (it left), or fail
 * those to node (lost) with -ECONNRESET. */
void xp_amo_orphan(struct daemon *d, struct client *c);
void xp_amo_node_lost(struct daemon *d, int32_t node);
/* Wake the PEs whose heap an atomic served for another node changed (their
 * replies are queued first): the progress loop calls it after every
 * transport flush. */
void xp_amo_wake(struct daemon *d);
/* Atomics of xp_amo awaiting their reply. */
uint32_t xp_amo_inflight(const struct daemon *d);
/* At stop: free the table (what is still in flight completes nowhere). */
void xp_amo_free(struct daemon *d);

struct transport_ops {
	const char *name;
	int (*start)(struct daemon *d);   /* 0 or -errno */
	void (*stop)(struct daemon *d);
	/* Issue request rq (XP_PUT, XP_GET, or XP_AMO: self executes it on
	 * rmap, a network transport packs a pack_eligible() one or hands it
	 * to xp_amo()). Strided and vector elements
	 * come one by one (XP_RF_PACK); a transport may pack them and other
	 * small operations for one node into one message (tcp: W_PACK), or
	 * send each alone. XP_STARTED: rq->ck comes back through
	 * progress_complete() exactly once. Any other kind: XP_ERROR with
	 * xp_kind_refuse()'s -errno, nothing issued. XP_ERROR sets *err. */
	enum xp_result (*rma)(struct daemon *d, const struct xp_req *rq, int *err);
	/* One-way active message (wire.h type, extension header, payload of
	 * at most WIRE_AM_MAX_PAYLOAD bytes);
	 * connects on first use. 0 or -errno. */
	int (*am_send)(struct daemon *d, int32_t node, uint8_t type, const void *ext, uint16_t hlen,
		       const void *payload, uint64_t plen);
	/* Waking up is the progress loop's (loop.h): a transport adds its
	 * descriptors to d->loop with a callback at start and removes them
	 * at stop; it never waits itself. Optional (NULL: nothing to do):
	 * progress that needs no descriptor, on every busy pass (verbs: poll
	 * the completion queue). Returns work done. */
	int (*poll)(struct daemon *d);
	/* Optional: the loop is about to sleep: arm what must wake it (verbs:
	 * request a completion event) and return the work found meanwhile
	 * (non-zero: the loop does not sleep). */
	int (*arm)(struct daemon *d);
	void (*flush)(struct daemon *d);               /* push queued output */
	void (*timers)(struct daemon *d, uint64_t now); /* heartbeats, timeouts */
	/* The client leaves: forget it in everything still in flight. */
	void (*orphan)(struct daemon *d, struct client *c);
	/* Optional (NULL: operations are never held back). Packing transports
	 * may hold operations of aggregation regions (HOIST_SQE_F_AGG) in an
	 * open pack across progress passes; this sends every held pack now. */
	void (*pack_release)(struct daemon *d);
	/* Optional (NULL: nothing to register; the memory handle a request
	 * carries then stays empty, and nothing counts against the memlock
	 * budget). Only the transport's own part of registration: reg.c does
	 * the budget, the grace period and the pinned table, and calls these.
	 * mem_reg (control thread, at attach): make the handles of the
	 * client's segments that are mapped (heap, staging, prefetch region)
	 * in c->mr: 0, or -errno with why filled for the client (reg.c then
	 * hands what it made to mem_dereg). mem_dereg (any thread): release
	 * the non-NULL handles of mr[XP_NMR]. mem_rkey: the remote key a peer
	 * addresses the heap's handle with (NULL: the pinned table's own). */
	int (*mem_reg)(struct daemon *d, struct client *c, char *why, size_t whylen);
	void (*mem_dereg)(struct daemon *d, void *const *mr);
	uint32_t (*mem_rkey)(const void *mr);
	/* busy passes look at the loop's descriptors when (pass & mask) == 0:
	 * 0 every pass (tcp: the sockets are its completions), 31 every 32nd
	 * (verbs: rdma_cm events, rare, cost a system call) */
	uint32_t fd_pass_mask;
	/* Optional (NULL: never). Nonzero when this daemon's transport may
	 * deliver one client's operations to one node out of issue order
	 * (tcp with tcp_lanes > 1). Otherwise (one connection per peer, an RC
	 * queue pair, same node) the conflict stage lets an access go right
	 * behind an overlapping unfinished put; on a reordering one such an
	 * access waits for the put's completion, a put for an overlapping
	 * unfinished get, and a fence for every earlier operation. Asked when
	 * a client attaches; the answer must not change while the daemon runs. */
	int (*reorders)(const struct daemon *d);
	uint8_t rdma;   /* start() needs an RDMA device for this node's address */
};

/* Does t (NULL: none, one node) deliver in issue order per peer? */
static inline int xp_ordered(const struct transport_ops *t, const struct daemon *d)
{
	return !t || !t->reorders || !t->reorders(d);
}

extern const struct transport_ops self_transport;
extern const struct transport_ops tcp_transport;
extern const struct transport_ops verbs_transport;

/* The transport named name ("self", "tcp", "verbs"), or NULL. */
const struct transport_ops *transport_find(const char *name);
/* The names to try, in order (at most 2, NULL-terminated), for the value
 * of setting transport= (auto, verbs, tcp); with network 0 (one node)
 * only "self". NULL: not a value of the setting. */
const char *const *transport_order(const char *setting, int network);

#endif
