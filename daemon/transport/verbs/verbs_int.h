/*
 * The verbs transport's private state and the functions its files share
 * (daemon/transport/verbs/; nothing outside this folder includes it).
 *
 * The files, each calling only the ones below it (no import cycle:
 * unit.daemon_layers):
 *   verbs.c        the transport_ops table, start/stop, poll/arm/flush/
 *                  timers, registration (mem_reg/dereg/rkey), orphan
 *   verbs_cm.c     connection management: rdma_cm events, connect/accept
 *                  with the keyed handshake in their private data, retries
 *   verbs_rma.c    the data path: verbs_rma (RDMA WRITE/READ, zero copy or
 *                  bounced, or into a pack), posting the work-request
 *                  rings, completion-queue polling, receives
 *   verbs_am.c     active messages (SENDs): queued until a connection is
 *                  up, packs sent and answered, the resolve protocol
 *                  (W_VRESOLVE), received messages dispatched, heartbeats
 *   verbs_conn.c   a peer's wire: its connections (made, ready, closed),
 *                  their work-request rings and bounce buffers, and what
 *                  fails with them (ring, queued messages, packs awaiting
 *                  replies), the peer's loss
 *   bounce.c       the bounce ring's allocator
 * The files' names carry the verbs_ prefix because hoistd has an am.c and
 * a stages/rma.c already (unit.daemon_layers names files by basename).
 */
#ifndef HOISTD_VERBS_INT_H
#define HOISTD_VERBS_INT_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <stdint.h>

#include "cluster.h"
#include "daemon.h"
#include "pack.h"
#include "transport.h"

#define V_RESOLVE_MS 2000       /* rdma_cm address/route resolution (rxe: >= 2000) */
#define V_RECV_BUF (64u << 10)  /* one active message: header + ext + payload */
#define V_NRECV 64              /* pre-posted receive buffers in the SRQ */
#define V_SIG_EVERY 16          /* signal at least every 16th work request */
#define V_INLINE_MAX 128        /* inline bytes asked of the device */
#define V_HS_LABEL "verbs-"    /* its handshake MACs (peer.h), apart from tcp's */
#define V_REJECT_AUTH "hoist-auth"
#define V_REJECT_BUSY "hoist-busy" /* out of resources for now: try again */
#define V_PACKS_INFLIGHT 16     /* packs awaiting their reply, per peer */

_Static_assert(sizeof(struct wire_hdr) + WIRE_MAX_EXT + WIRE_AM_MAX_PAYLOAD <= V_RECV_BUF,
	       "an active message fits one receive buffer");

enum { VK_PUT = 1, VK_GET, VK_SEND };
enum { VC_ADDR, VC_ROUTE, VC_CONNECT, VC_ACCEPT, VC_UP };
enum { RES_WAIT, RES_DONE, RES_FAILED };

/* One work request, built by verbs_rma()/vsend_frame() and posted by
 * vconn_post() (verbs_flush). */
struct vop {
	uint8_t kind;
	struct xp_cookie ck; /* ck.client NULL: nobody waits (AM, or the client left) */
	uint64_t pack_tag;   /* VK_SEND of a W_PACK: its tag (fails it if lost) */
	uint64_t bounce_end; /* bounce ring position released on completion */
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	uint8_t inl[V_INLINE_MAX];
};

struct vconn {
	struct rdma_cm_id *id;
	int32_t node;
	int outgoing;
	int state;
	uint32_t slot;
	uint16_t gen;
	uint8_t nonce[16];
	/* outgoing only: work requests [head, posted) posted, [posted, tail)
	 * built; free-running sequence numbers */
	struct vop *ring;
	uint32_t W;
	uint64_t head, posted, tail;
	uint64_t watch_head, watch_ns;  /* progress watch (timers) */
	char *bounce;
	struct ibv_mr *bounce_mr;
	uint64_t bsize, bhead, btail;
};

/* An active message waiting for its connection or for send space. */
struct vam {
	struct vam *next;
	uint64_t pack_tag; /* a W_PACK: its tag */
	uint32_t len;
	char buf[];
};

/* verbs' wire to a peer (its state, retries and heartbeat: the peer
 * layer's link, d->net.peers[node].link; last_heard_ns is its daemon's
 * last active message) */
struct vpeer {
	struct vconn *out, *in;
	struct vam *amq, **amq_tail;
	struct vpk *pk, **pk_tail; /* packs sent, awaiting W_PACK_REPLY (in order) */
	uint32_t npk;
};

/* A pack sent to a peer: its elements complete from the reply. */
struct vpk {
	struct vpk *next;
	uint64_t tag;
	struct pack_slot *s;
	uint32_t n;
};

struct vres {
	struct vres *next;
	struct addr_key key;
	int32_t node;
	int state;
	int err;
	uint64_t tag, sent_ns;
	struct addr_entry entry;
};

struct verbs {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	char *rbufs;
	struct ibv_mr *rmr;
	int watched;           /* its channels are in the progress loop's epoll */
	int armed;
	uint32_t max_inline;
	uint32_t W;
	uint32_t rd_atom, init_rd_atom;
	struct vpeer *peers;
	struct vconn **slots;
	uint16_t *gens;
	uint32_t nslots;
	struct vres *res;
	uint64_t next_tag;
	struct peer_replay replay; /* connect requests accepted (peer.h) */
	uint64_t sent_ts;      /* newest connect timestamp we sent */
	uint64_t charged;      /* bytes of its own buffers in the memlock budget */
	char *pkreply;         /* a pack's reply being built (WIRE_AM_MAX_PAYLOAD) */
	int own_net;           /* the address cache is ours to free */
	int started;           /* start succeeded: stop frees the cluster too */
};

/* This transport's state: the daemon keeps it as the running transport's
 * private pointer (d->xp_priv). */
#define VS(d) ((struct verbs *)(d)->xp_priv)

/* verbs_conn.c */
void vpinned_add(struct daemon *d, int64_t delta);
struct vconn *vconn_new(struct daemon *d, int32_t node, int outgoing);
void vconn_unslot(struct daemon *d, struct vconn *cn); /* its slot freed (rdma_conns) */
int vconnect_start(struct daemon *d, int32_t node);
struct vconn *vconn_ready(struct daemon *d, int32_t node, int *rc);
void vop_deliver(struct daemon *d, int32_t node, const struct vop *o, int res);
void vring_retire(struct daemon *d, struct vconn *cn, uint64_t upto, int res);
void vconn_close(struct daemon *d, struct vconn *cn, int res);
void vamq_fail(struct vpeer *vp);
void vpeer_lost(struct daemon *d, int32_t node, const char *why);
int64_t vbounce_alloc(struct vconn *cn, uint64_t len, uint64_t *end);
struct vop *vop_slot(struct vconn *cn);
struct vpk *vpk_take(struct vpeer *vp, uint64_t tag);
void vpack_fail_tag(struct daemon *d, int32_t node, uint64_t tag, int res);
void vpack_fail_inflight(struct daemon *d, int32_t node, int res);

/* verbs_am.c */
int vsend_frame(struct daemon *d, struct vconn *cn, const void *msg, uint32_t len,
		uint64_t pack_tag);
void vamq_push(struct daemon *d, int32_t node);
int verbs_am_send(struct daemon *d, int32_t node, uint8_t type, const void *ext, uint16_t hlen,
		  const void *payload, uint64_t plen);
int vpack_close(struct daemon *d, int32_t node);
enum xp_result vpack_add(struct daemon *d, struct vconn *cn, const struct xp_req *rq,
			 int *err);
void verbs_pack_release(struct daemon *d);
void vpack_reply(struct daemon *d, int32_t from, const struct wire_hdr *h, const char *ext,
		 const char *in);
void vam_recv(struct daemon *d, int32_t from, const char *buf, uint32_t len);
enum xp_result vresolve_miss(struct daemon *d, const struct addr_key *k, int32_t node,
			     struct addr_entry *out, int *err);
void vamq_requeue(struct daemon *d, struct vconn *cn, uint64_t seq);
void vheartbeat(struct daemon *d, int32_t node, uint64_t now);

/* verbs_rma.c */
void vconn_post(struct daemon *d, struct vconn *cn);
enum xp_result verbs_rma(struct daemon *d, const struct xp_req *rq, int *err);
void vrecv_repost(struct verbs *v, uint32_t i);
int vcq_drain(struct daemon *d);

/* verbs_cm.c */
int vcm_drain(struct daemon *d);

#endif
