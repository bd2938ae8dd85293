/*
 * verbs transport (progress thread): libibverbs + librdmacm between daemons.
 *
 * - rdma_cm listens on this node's IP and the port of the node list; every
 *   daemon connects lazily one RC queue pair to each peer it sends to (its
 *   "outgoing" connection, carrying all of its puts, gets and active
 *   messages to that peer, so they stay in order). Connections a peer made
 *   to us only carry that peer's active messages in (and its one-sided
 *   operations, which need no CPU here).
 * - The connect request's private data authenticates the connector (HMAC
 *   with the cluster key over a fresh timestamped nonce: replays are too old
 *   or already seen), the accept's private data the acceptor. The MACs, the
 *   replay window and the hello's rules are the peer layer's (peer.h).
 * - Puts are RDMA WRITEs and gets RDMA READs straight between the
 *   registered segments of the clients on both nodes. Small puts go inline;
 *   a put whose source is the client's staging arena is copied to a
 *   registered bounce ring first, because the client reuses staging as soon
 *   as the descriptor is consumed (heap sources are zero copy). Work
 *   requests are chained and posted once per progress pass (one doorbell),
 *   every V_SIG_EVERY-th and the last of each chain signaled; a signaled
 *   completion retires everything before it (RC completes in order).
 *   verbs reorders (transport_ops.reorders): packs are executed by the
 *   target's CPU, RDMA by its NIC, so the conflict stage orders a client's
 *   overlapping operations; this file only keeps a strided/vector
 *   descriptor's elements in list order (see verbs_rma).
 * - Active messages (wire.h frames: header, extension, payload) are SENDs
 *   into a shared receive queue of pre-posted buffers, reposted as each is
 *   consumed. An address-cache miss sends W_VRESOLVE; the operation waits
 *   (XP_STALL) until W_VRESOLVE_REPLY brings base, rkey and generation.
 * - Packed operations (small puts/gets, strided/vector elements,
 *   aggregation regions) are W_PACK active messages answered by
 *   W_PACK_REPLY ones, as tcp frames them; building, serving and answering
 *   them is the pack layer's (pack.h; see the packs section below).
 * - A failed completion, a disconnect, a reject after peer_timeout_ms of
 *   retries (the peer layer's backoff) fail the affected operations with
 *   -ECONNRESET and tear the connection down; the next operation
 *   reconnects (active messages the failure flushed are requeued for it).
 *   A lost peer goes through the peer layer's loss path (peer_lost: its
 *   jobs fail as with tcp); vpeer_drop is what it drops here.
 * - Heartbeats (the peer layer's policy): a PING active message every
 *   heartbeat_ms on each outgoing connection that is up, answered by the
 *   peer daemon's PONG; silent past the silence limit with a ping
 *   unanswered that long: the peer is lost (RDMA completions prove
 *   nothing: the device answers for a stopped daemon).
 * - The peer's state, retries and last sign of life are the peer layer's
 *   (d->net.peers[node].link); struct vpeer holds only the wire (its
 *   connections, queued active messages, packs awaiting replies).
 * - Registration: this file makes and releases the memory regions of a
 *   client's segments (mem_reg, mem_dereg) and names the heap's rkey
 *   (mem_rkey); the memlock budget, the grace period a departed client's
 *   regions are kept for (a peer's cached rkey of it stays harmless) and
 *   the pinned table are reg.c's.
 */
#include "cluster.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "am.h"
#include "bounce.h"
#include "loop.h"
#include "daemon.h"
#include "frames.h"
#include "log.h"
#include "pack.h"
#include "reg.h"
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


/* One work request, built by rma()/am_send() and posted by flush(). */
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

static void conn_close(struct daemon *d, struct vconn *cn, int res);
static void vpeer_lost(struct daemon *d, int32_t node, const char *why);
static void vpack_fail_inflight(struct daemon *d, int32_t node, int res);
static void vpack_fail_tag(struct daemon *d, int32_t node, uint64_t tag, int res);
static int vpack_close(struct daemon *d, int32_t node);

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* this transport's own registered buffers, in the memlock budget */
static void pinned_add(struct daemon *d, int64_t delta)
{
	VS(d)->charged += (uint64_t)delta;
	reg_pinned_add(d, delta);
}

/* ---- authentication ------------------------------------------------------ */

/* The MACs and the replay window are the peer layer's (peer.h): label
 * V_HS_LABEL, the 16-byte timestamped nonce of struct wire_vconnect. */

/* ---- connections --------------------------------------------------------- */

static struct vconn *conn_new(struct daemon *d, int32_t node, int outgoing)
{
	struct verbs *v = VS(d);
	uint32_t s;
	for (s = 0; s < v->nslots && v->slots[s]; s++)
		;
	if (s == v->nslots)
		return NULL;
	struct vconn *cn = calloc(1, sizeof(*cn));
	if (!cn)
		return NULL;
	cn->node = node;
	cn->outgoing = outgoing;
	cn->slot = s;
	cn->gen = ++v->gens[s];
	if (outgoing) {
		cn->W = v->W;
		cn->ring = calloc(cn->W, sizeof(*cn->ring));
		cn->bsize = (d->cfg.staging_bytes + 4095) & ~4095ull;
		/* active messages longer than the inline limit are copied here
		 * too: a frame that can never fit would block the peer's queue
		 * of active messages for good (staging_bytes may be 4 KiB) */
		if (cn->bsize < V_RECV_BUF)
			cn->bsize = V_RECV_BUF;
		cn->bounce = aligned_alloc(4096, cn->bsize);
		if (!cn->ring || !cn->bounce) {
			free(cn->ring);
			free(cn->bounce);
			free(cn);
			return NULL;
		}
	}
	v->slots[s] = cn;
	return cn;
}

static uint64_t wr_id_of(const struct vconn *cn, uint64_t seq)
{
	return (uint64_t)cn->slot << 48 | (uint64_t)cn->gen << 32 | (uint32_t)seq;
}

static int qp_create(struct daemon *d, struct vconn *cn)
{
	struct verbs *v = VS(d);
	static const uint32_t inl[] = {V_INLINE_MAX, 64, 0};
	for (unsigned i = 0; i < sizeof(inl) / sizeof(inl[0]); i++) {
		struct ibv_qp_init_attr qa = {
			.send_cq = v->cq, .recv_cq = v->cq, .srq = v->srq, .qp_type = IBV_QPT_RC,
			.cap = {.max_send_wr = cn->outgoing ? cn->W : 4, .max_send_sge = 1,
				.max_recv_sge = 1, .max_inline_data = inl[i]}};
		if (rdma_create_qp(cn->id, v->pd, &qa) == 0) {
			if (cn->outgoing && qa.cap.max_inline_data < v->max_inline)
				v->max_inline = qa.cap.max_inline_data;
			if (cn->outgoing && !cn->bounce_mr) {
				cn->bounce_mr = ibv_reg_mr(v->pd, cn->bounce, cn->bsize, IBV_ACCESS_LOCAL_WRITE);
				if (!cn->bounce_mr)
					return -errno;
				pinned_add(d, (int64_t)cn->bsize);
			}
			return 0;
		}
	}
	return errno ? -errno : -EIO;
}

static int connect_start(struct daemon *d, int32_t node)
{
	struct verbs *v = VS(d);
	struct net *n = &d->net;
	struct vpeer *vp = &v->peers[node];
	struct vconn *cn = conn_new(d, node, 1);
	if (!cn)
		return -ENOMEM;
	if (rdma_create_id(v->ch, &cn->id, cn, RDMA_PS_TCP)) {
		int rc = -errno;
		v->slots[cn->slot] = NULL;
		free(cn->ring);
		free(cn->bounce);
		free(cn);
		return rc;
	}
	vp->out = cn;
	peer_trying(&n->peers[node].link, now_ns());
	struct sockaddr_in src = n->peers[n->self].addr;
	src.sin_port = 0;
	cn->state = VC_ADDR;
	if (rdma_resolve_addr(cn->id, (struct sockaddr *)&src, (struct sockaddr *)&n->peers[node].addr,
			      V_RESOLVE_MS)) {
		int rc = -errno;
		conn_close(d, cn, -ECONNRESET);
		return rc;
	}
	return 0;
}

/* The outgoing connection to node when it can take work now; NULL with
 * *rc = 0 while it is being made, or *rc = -ECONNRESET while the peer
 * counts as lost. */
static struct vconn *conn_ready(struct daemon *d, int32_t node, int *rc)
{
	struct verbs *v = VS(d);
	struct peer *p = &d->net.peers[node];
	struct vpeer *vp = &v->peers[node];
	*rc = 0;
	if (vp->out)
		return vp->out->state == VC_UP ? vp->out : NULL;
	if (peer_may_try(&p->link, now_ns())) {
		*rc = -ECONNRESET;
		return NULL;
	}
	if (p->link.retry_at_ns)
		return NULL; /* backing off: timers() retries */
	int r = connect_start(d, node);
	if (r) {
		vpeer_lost(d, node, strerror(-r));
		*rc = -ECONNRESET;
	}
	return NULL;
}

static void op_deliver(struct daemon *d, int32_t node, const struct vop *o, int res)
{
	if (o->kind == VK_SEND) {
		/* a pack whose SEND failed is never answered */
		if (res && o->pack_tag && node >= 0)
			vpack_fail_tag(d, node, o->pack_tag, res);
		return;
	}
	if (!o->ck.client)
		return;
	progress_complete(d, &o->ck, res);
}

/* Retire [head, upto) with res (RC: everything before a completion is
 * done). The completion may issue more into the ring: copy first. */
static void ring_retire(struct daemon *d, struct vconn *cn, uint64_t upto, int res)
{
	while (cn->head < upto && cn->head < cn->tail) {
		struct vop o = cn->ring[cn->head % cn->W];
		cn->head++;
		if (o.bounce_end)
			cn->bhead = o.bounce_end;
		op_deliver(d, cn->node, &o, res);
	}
}

static void conn_close(struct daemon *d, struct vconn *cn, int res)
{
	struct verbs *v = VS(d);
	struct vpeer *vp = cn->node >= 0 ? &v->peers[cn->node] : NULL;
	if (vp && vp->out == cn)
		vp->out = NULL;
	if (vp && vp->in == cn)
		vp->in = NULL;
	v->slots[cn->slot] = NULL;
	if (cn->state == VC_UP)
		STAT_INC(&d->vst, rdma_disconnects);
	if (cn->id) {
		if (cn->state == VC_UP)
			rdma_disconnect(cn->id);
		if (cn->id->qp)
			rdma_destroy_qp(cn->id);
		rdma_destroy_id(cn->id);
		cn->id = NULL;
	}
	/* operations fail only now: their completions may issue more */
	if (cn->ring) {
		cn->posted = cn->tail;
		ring_retire(d, cn, cn->tail, res);
	}
	/* the packs sent on it wait for replies the peer may never send (it
	 * may have lost them with the connection): they fail, as the open
	 * one (the connection failed under the client's operations) */
	if (cn->outgoing && vp && res) {
		vpack_fail_inflight(d, cn->node, res);
		pack_fail_open(d, &d->net.peers[cn->node].pack, res);
	}
	if (cn->bounce_mr) {
		ibv_dereg_mr(cn->bounce_mr);
		pinned_add(d, -(int64_t)cn->bsize);
	}
	free(cn->bounce);
	free(cn->ring);
	free(cn);
}

static void amq_fail(struct vpeer *vp)
{
	while (vp->amq) {
		struct vam *a = vp->amq;
		vp->amq = a->next;
		free(a);
	}
	vp->amq_tail = &vp->amq;
}

/* The peer layer's loss path drops verbs' wire: every operation and
 * active message waiting for this peer fails, its connections close. */
static void vpeer_drop(struct daemon *d, int32_t node, void *arg)
{
	struct verbs *v = VS(d);
	struct vpeer *vp = &v->peers[node];
	(void)arg;
	amq_fail(vp);
	for (struct vres *r = v->res; r; r = r->next)
		if (r->node == node && r->state == RES_WAIT) {
			r->state = RES_FAILED;
			r->err = -ECONNRESET;
		}
	if (vp->out)
		conn_close(d, vp->out, -ECONNRESET);
	if (vp->in)
		conn_close(d, vp->in, -ECONNRESET);
	vpack_fail_inflight(d, node, -ECONNRESET);
	pack_fail_open(d, &d->net.peers[node].pack, -ECONNRESET);
}

static void vpeer_lost(struct daemon *d, int32_t node, const char *why)
{
	struct peer *p = &d->net.peers[node];
	peer_lost(d, node, &p->link, &p->st, p->name, why, vpeer_drop, NULL);
}

/* An outgoing attempt failed before it was up: retry with backoff while
 * within peer_timeout_ms of the first attempt. */
static void connect_failed(struct daemon *d, struct vconn *cn, const char *why)
{
	int32_t node = cn->node;
	struct peer_link *l = &d->net.peers[node].link;
	conn_close(d, cn, -ECONNRESET);
	if (peer_backoff(l, now_ns(), d->cfg.peer_timeout_ms * 1000000ull)) {
		vpeer_lost(d, node, why);
		return;
	}
	STAT_INC(&d->vst, rdma_cm_retries);
	hlog_debug("connection to node %d: %s; retrying in %u ms", node, why, l->backoff_ms);
}

/* ---- posting --------------------------------------------------------------- */

/* Room for len bytes in the bounce ring (contiguous). Its offset, or -1. */
static int64_t bounce_alloc(struct vconn *cn, uint64_t len, uint64_t *end)
{
	return bounce_ring_alloc(cn->bsize, &cn->bhead, &cn->btail, len, end);
}

static struct vop *op_slot(struct vconn *cn)
{
	struct vop *o = &cn->ring[cn->tail % cn->W];
	memset(o, 0, offsetof(struct vop, inl));
	o->wr.wr_id = wr_id_of(cn, cn->tail);
	o->wr.sg_list = &o->sge;
	o->wr.num_sge = 1;
	return o;
}

/* Put a wire frame on cn as a SEND. 0, or 1 when no room (retry later). */
static int send_frame(struct daemon *d, struct vconn *cn, const void *msg, uint32_t len,
		      uint64_t pack_tag)
{
	struct verbs *v = VS(d);
	if (cn->tail - cn->head >= cn->W)
		return 1;
	struct vop *o = op_slot(cn);
	if (len <= v->max_inline) {
		memcpy(o->inl, msg, len);
		o->sge = (struct ibv_sge){.addr = (uintptr_t)o->inl, .length = len};
		o->wr.send_flags = IBV_SEND_INLINE;
		STAT_INC(&d->vst, rdma_inline);
	} else {
		int64_t off = bounce_alloc(cn, len, &o->bounce_end);
		if (off < 0)
			return 1;
		memcpy(cn->bounce + off, msg, len);
		o->sge = (struct ibv_sge){.addr = (uintptr_t)(cn->bounce + off), .length = len,
					  .lkey = cn->bounce_mr->lkey};
	}
	o->kind = VK_SEND;
	o->pack_tag = pack_tag;
	o->wr.opcode = IBV_WR_SEND;
	cn->tail++;
	STAT_INC(&d->vst, rdma_sends);
	return 0;
}

/* Queued active messages go out once the connection is up. */
static void amq_push(struct daemon *d, int32_t node)
{
	struct vpeer *vp = &VS(d)->peers[node];
	struct vconn *cn = vp->out;
	if (!cn || cn->state != VC_UP)
		return;
	while (vp->amq) {
		struct vam *a = vp->amq;
		if (send_frame(d, cn, a->buf, a->len, a->pack_tag))
			return;
		vp->amq = a->next;
		if (!vp->amq)
			vp->amq_tail = &vp->amq;
		free(a);
	}
}

static void conn_post(struct daemon *d, struct vconn *cn)
{
	if (cn->posted == cn->tail || cn->state != VC_UP)
		return;
	uint64_t first = cn->posted;
	uint64_t nsig = 0;
	for (uint64_t s = first; s < cn->tail; s++) {
		struct vop *o = &cn->ring[s % cn->W];
		o->wr.next = s + 1 < cn->tail ? &cn->ring[(s + 1) % cn->W].wr : NULL;
		o->wr.send_flags &= ~(unsigned)IBV_SEND_SIGNALED;
		if (s + 1 == cn->tail || (s + 1) % V_SIG_EVERY == 0) {
			o->wr.send_flags |= IBV_SEND_SIGNALED;
			nsig++;
		}
	}
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(cn->id->qp, &cn->ring[first % cn->W].wr, &bad);
	STAT_INC(&d->vst, rdma_doorbells);
	if (rc) {
		hlog_warn("ibv_post_send to node %d: %s", cn->node, strerror(rc));
		conn_close(d, cn, -ECONNRESET);
		return;
	}
	STAT_ADD(&d->vst, rdma_wrs, cn->tail - first);
	STAT_ADD(&d->vst, rdma_signaled, nsig);
	cn->posted = cn->tail;
}

static void verbs_flush(struct daemon *d)
{
	struct verbs *v = VS(d);
	struct net *n = &d->net;
	pack_flush(d, 0, vpack_close); /* the open packs due at the end of a pass */
	for (int32_t i = 0; i < n->nnodes; i++) {
		struct vpeer *vp = &v->peers[i];
		if (vp->amq)
			amq_push(d, i);
		if (vp->out)
			conn_post(d, vp->out);
	}
}

/* ---- active messages --------------------------------------------------------- */

static int am_frame_pk(struct daemon *d, int32_t node, uint8_t type, uint64_t tag, const void *ext,
		       uint16_t hlen, const void *payload, uint64_t plen, uint64_t pack_tag)
{
	struct net *n = &d->net;
	if (!n->enabled || node < 0 || node >= n->nnodes || node == n->self)
		return -EINVAL;
	if (hlen > WIRE_MAX_EXT || plen > WIRE_AM_MAX_PAYLOAD)
		return -EMSGSIZE;
	int rc;
	struct vpeer *vp = &VS(d)->peers[node];
	struct vconn *cn = conn_ready(d, node, &rc);
	if (rc)
		return rc;
	uint32_t len = (uint32_t)(sizeof(struct wire_hdr) + hlen + plen);
	struct vam *a = malloc(sizeof(*a) + len);
	if (!a)
		return -ENOMEM;
	struct wire_hdr h = {.plen = (uint32_t)plen, .type = type, .hlen = hlen, .tag = tag};
	memcpy(a->buf, &h, sizeof(h));
	if (hlen)
		memcpy(a->buf + sizeof(h), ext, hlen);
	if (plen)
		memcpy(a->buf + sizeof(h) + hlen, payload, plen);
	a->len = len;
	a->pack_tag = pack_tag;
	if (cn && !vp->amq && send_frame(d, cn, a->buf, len, pack_tag) == 0) {
		free(a);
		return 0;
	}
	a->next = NULL;
	*vp->amq_tail = a;
	vp->amq_tail = &a->next;
	return 0;
}

static int am_frame(struct daemon *d, int32_t node, uint8_t type, uint64_t tag, const void *ext,
		    uint16_t hlen, const void *payload, uint64_t plen)
{
	return am_frame_pk(d, node, type, tag, ext, hlen, payload, plen, 0);
}

static int verbs_am_send(struct daemon *d, int32_t node, uint8_t type, const void *ext, uint16_t hlen,
			 const void *payload, uint64_t plen)
{
	struct net *n = &d->net;
	int rc;
	/* in order: what was packed for the node before goes first */
	if (n->enabled && node >= 0 && node < n->nnodes && node != n->self &&
	    n->peers[node].pack.nelem && (rc = vpack_close(d, node)))
		return rc;
	return am_frame(d, node, type, 0, ext, hlen, payload, plen);
}

/* ---- packs (wire.h: W_PACK as active messages) --------------------------------
 * As with tcp, the open pack of a peer (d->net.peers[node].pack) collects
 * small puts and gets, strided/vector elements and aggregation-region
 * operations; it goes out as one SEND (W_PACK, at most
 * WIRE_AM_MAX_PAYLOAD) when full, before any other request or active
 * message to the peer, and at the end of a progress pass unless it holds
 * only aggregation-region operations (pack_release). The target's daemon
 * executes it (pack.c) and answers with one W_PACK_REPLY SEND on its own
 * connection; replies come back in order, so the packs in flight are a
 * list per peer matched by tag.
 *
 * Ordering: the target's CPU executes a pack after the SEND arrives, so an
 * RDMA WRITE or READ posted after it could land first; a request that does
 * not go packed waits while packs to the node are unanswered, and a
 * packed put waits for an unfinished RDMA READ on the connection. */

static struct vpk *vpk_take(struct vpeer *vp, uint64_t tag)
{
	for (struct vpk **pp = &vp->pk, *x; (x = *pp); pp = &x->next) {
		if (x->tag != tag)
			continue;
		*pp = x->next;
		if (vp->pk_tail == &x->next)
			vp->pk_tail = pp;
		vp->npk--;
		return x;
	}
	return NULL;
}

static void vpk_fail(struct daemon *d, struct vpk *x, int res)
{
	pack_finish(d, x->s, x->n, res);
	free(x);
}

static void vpack_fail_tag(struct daemon *d, int32_t node, uint64_t tag, int res)
{
	struct vpk *x = vpk_take(&VS(d)->peers[node], tag);
	if (x)
		vpk_fail(d, x, res);
}

/* Every pack sent to node and unanswered fails; those still queued for a
 * connection are not sent any more. */
static void vpack_fail_inflight(struct daemon *d, int32_t node, int res)
{
	struct vpeer *vp = &VS(d)->peers[node];
	struct vam **pp = &vp->amq, *a;
	while ((a = *pp)) {
		if (a->pack_tag) {
			*pp = a->next;
			free(a);
		} else {
			pp = &a->next;
		}
	}
	vp->amq_tail = pp;
	struct vpk *x = vp->pk;
	vp->pk = NULL;
	vp->pk_tail = &vp->pk;
	vp->npk = 0;
	/* completions may open and send new packs: the list is fresh */
	while (x) {
		struct vpk *next = x->next;
		vpk_fail(d, x, res);
		x = next;
	}
}

/* Send the open pack: one SEND (queued while the connection is busy). */
static int vpack_close(struct daemon *d, int32_t node)
{
	struct verbs *v = VS(d);
	struct peer *p = &d->net.peers[node];
	struct vpeer *vp = &v->peers[node];
	struct pack_open *pk = &p->pack;
	if (!pk->nelem)
		return 0;
	struct vpk *x = malloc(sizeof(*x));
	if (!x)
		return -ENOMEM; /* stays open: a later close or the loss handles it */
	*x = (struct vpk){.tag = ++v->next_tag, .s = pk->slots, .n = pk->nelem};
	struct wire_pack w = {.job = pk->job, .nelem = pk->nelem};
	uint32_t plen = pk->plen;
	pack_count_sent(&p->st, pk);
	pack_reset(pk);
	/* listed first: the send may fail it (the connection is lost) */
	*vp->pk_tail = x;
	vp->pk_tail = &x->next;
	vp->npk++;
	uint64_t tag = x->tag;
	int rc = am_frame_pk(d, node, W_PACK, tag, &w, sizeof(w), pk->buf, plen, tag);
	if (rc)
		vpack_fail_tag(d, node, tag, rc);
	return rc;
}

/* Add one put/get to the node's open pack. XP_STARTED, XP_STALL or
 * XP_ERROR (*err). */
static enum xp_result vpack_add(struct daemon *d, struct vconn *cn, const struct xp_req *rq,
				int *err)
{
	int32_t node = rq->node;
	struct peer *p = &d->net.peers[node];
	struct vpeer *vp = &VS(d)->peers[node];
	struct pack_open *pk = &p->pack;
	uint32_t req, rep;
	int rc = pack_elem_size(rq->kind, rq->len, &req, &rep);
	if (rc)
		return xp_fail(err, rc);
	if (pack_must_close(pk, rq, req, rep) && (rc = vpack_close(d, node)))
		return xp_fail(err, rc);
	if (!pk->nelem) {
		if (vp->npk >= V_PACKS_INFLIGHT) {
			STAT_INC(&p->st, stalls);
			return XP_STALL;
		}
		if ((rc = pack_begin(pk, rq)))
			return xp_fail(err, rc);
	}
	if ((rc = pack_append(pk, rq)))
		return xp_fail(err, rc);
	STAT_INC(&p->st, ops_out);
	STAT_ADD(&p->st, bytes_out, rq->len);
	return XP_STARTED;
}

/* Send every open pack, held ones too (an aggregation region ended). */
static void verbs_pack_release(struct daemon *d)
{
	struct net *n = &d->net;
	if (n->enabled && VS(d))
		pack_flush(d, 1, vpack_close);
}

/* A peer's W_PACK: served by the pack layer (a malformed pack is refused
 * whole and answered -EPROTO, pack.h), its reply one SEND. */
static void serve_pack(struct daemon *d, int32_t from, const struct wire_hdr *h, const char *ext,
		       const char *payload)
{
	struct wire_pack w = {0};
	struct wire_pack_reply rep;
	if (h->hlen == sizeof(w))
		memcpy(&w, ext, sizeof(w));
	uint64_t rpos = pack_serve(d, from, &w, h->hlen == sizeof(w), payload, h->plen,
				   VS(d)->pkreply, &rep);
	if (am_frame(d, from, W_PACK_REPLY, h->tag, &rep, sizeof(rep), VS(d)->pkreply, rpos))
		hlog_debug("cannot answer a pack from node %d", from);
}

/* The reply to our pack: answered by the pack layer (get data to the
 * destinations, every element completed in order; a malformed reply fails
 * them all with -EPROTO). */
static void pack_reply(struct daemon *d, int32_t from, const struct wire_hdr *h, const char *ext,
		       const char *in)
{
	struct vpk *x = vpk_take(&VS(d)->peers[from], h->tag);
	if (!x) {
		hlog_debug("node %d answered a pack nobody waits for", from);
		return;
	}
	struct wire_pack_reply rep = {.status = -EPROTO}; /* a wrong header: malformed */
	if (h->hlen == sizeof(rep))
		memcpy(&rep, ext, sizeof(rep));
	else
		rep.nelem = x->n + 1;
	pack_answer(d, from, x->s, x->n, &rep, in, h->plen);
	free(x);
}

static void serve_resolve(struct daemon *d, int32_t from, uint64_t tag, const struct wire_target *t)
{
	struct wire_vresolve rep = {.name = *t};
	struct client *cl;
	rep.r.status = peer_target_client(d, t, &cl);
	if (!rep.r.status && reg_entry(d, cl, &rep.r.entry))
		rep.r.status = -ENOMEM; /* not registered */
	if (am_frame(d, from, W_VRESOLVE_REPLY, tag, &rep, sizeof(rep), NULL, 0))
		hlog_debug("cannot answer a resolve from node %d", from);
}

static void resolve_reply(struct daemon *d, int32_t from, uint64_t tag, const struct wire_vresolve *r)
{
	for (struct vres *x = VS(d)->res; x; x = x->next) {
		if (x->tag != tag || x->node != from || x->state != RES_WAIT)
			continue;
		if (r->r.status == 0 && r->r.entry.valid && r->r.entry.node == from) {
			x->entry = (struct addr_entry){.key = x->key, .node = from,
						       .base = r->r.entry.base, .len = r->r.entry.len,
						       .rkey = r->r.entry.rkey, .gen = r->r.entry.gen};
			addr_cache_insert(&d->net.cache, &x->entry);
			x->state = RES_DONE;
		} else {
			x->state = RES_FAILED;
			x->err = r->r.status ? r->r.status : -EPROTO;
		}
		return;
	}
}

/* One received message (already bounds-checked against byte_len). */
static void am_recv(struct daemon *d, int32_t from, const char *buf, uint32_t len)
{
	struct wire_hdr h;
	if (len < sizeof(h))
		return;
	memcpy(&h, buf, sizeof(h));
	if (h.hlen > WIRE_MAX_EXT || (uint64_t)sizeof(h) + h.hlen + h.plen != len) {
		hlog_warn("node %d sent a malformed active message; dropped", from);
		return;
	}
	const char *ext = buf + sizeof(h), *payload = ext + h.hlen;
	struct peer *p = &d->net.peers[from];
	STAT_INC(&d->vst, rdma_recvs);
	/* only the daemon's own messages prove it alive: the kernel (rxe) or
	 * the NIC answers RDMA for a stopped process */
	p->link.last_heard_ns = now_ns();
	STAT_INC(&p->st, ops_in);
	STAT_ADD(&p->st, bytes_in, h.plen);
	if (am_handles(h.type)) {
		if (am_dispatch(d, from, h.type, ext, h.hlen, payload, h.plen))
			hlog_warn("node %d sent a bad active message (type %u)", from, h.type);
		return;
	}
	switch (h.type) {
	case W_VRESOLVE: {
		struct wire_target t;
		if (h.hlen != sizeof(t) || h.plen)
			return;
		memcpy(&t, ext, sizeof(t));
		serve_resolve(d, from, h.tag, &t);
		return;
	}
	case W_VRESOLVE_REPLY: {
		struct wire_vresolve r;
		if (h.hlen != sizeof(r) || h.plen)
			return;
		memcpy(&r, ext, sizeof(r));
		resolve_reply(d, from, h.tag, &r);
		return;
	}
	case W_PACK:
		serve_pack(d, from, &h, ext, payload);
		return;
	case W_PACK_REPLY:
		pack_reply(d, from, &h, ext, payload);
		return;
	case W_PING:
		if (am_frame(d, from, W_PONG, h.tag, NULL, 0, NULL, 0))
			hlog_debug("cannot answer a ping from node %d", from);
		return;
	case W_PONG:
		peer_pong(&p->link, &p->st, h.tag, now_ns());
		return;
	default:
		hlog_warn("node %d sent an active message of unknown type %u", from, h.type);
	}
}

/* ---- data path ------------------------------------------------------------------ */

static struct vres *res_find(struct verbs *v, const struct addr_key *k, struct vres ***pp)
{
	struct vres **p = &v->res;
	for (; *p; p = &(*p)->next)
		if ((*p)->key.job == k->job && (*p)->key.pe == k->pe && (*p)->key.seg == k->seg) {
			if (pp)
				*pp = p;
			return *p;
		}
	return NULL;
}

/* Address-cache miss: the answer (XP_DONE, *out), the question on its way
 * (XP_STALL), or XP_ERROR (*err). */
static enum xp_result resolve_miss(struct daemon *d, const struct addr_key *k, int32_t node,
				   struct addr_entry *out, int *err)
{
	struct verbs *v = VS(d);
	struct vres **pp, *r = res_find(v, k, &pp);
	if (r && r->state == RES_DONE && now_ns() - r->sent_ns > 1000000000ull) {
		*pp = r->next; /* an old answer: the PE may have left since, ask again */
		free(r);
		r = NULL;
	}
	if (r) {
		if (r->state == RES_WAIT &&
		    now_ns() - r->sent_ns < d->cfg.peer_timeout_ms * 1000000ull)
			return XP_STALL;
		int rc = r->state == RES_DONE ? 0 : r->state == RES_FAILED ? r->err : -ETIMEDOUT;
		if (rc == 0)
			*out = r->entry;
		*pp = r->next;
		free(r);
		return rc ? xp_fail(err, rc) : XP_DONE;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return xp_fail(err, -ENOMEM);
	r->key = *k;
	r->node = node;
	r->tag = ++v->next_tag;
	r->sent_ns = now_ns();
	struct wire_target t = {.job = k->job, .pe = k->pe, .seg = k->seg};
	int rc = am_frame(d, node, W_VRESOLVE, r->tag, &t, sizeof(t), NULL, 0);
	if (rc) {
		free(r);
		return xp_fail(err, rc);
	}
	r->next = v->res;
	v->res = r;
	STAT_INC(&d->vst, rdma_resolves);
	return XP_STALL;
}

/* The registration among lmr (XP_NMR of them, a request's memory handle)
 * holding [p, p + len), or NULL. */
static struct ibv_mr *local_mr(void *const *lmr, const char *p, uint64_t len)
{
	for (int i = 0; lmr && i < XP_NMR; i++) {
		struct ibv_mr *mr = lmr[i];
		const char *b = mr ? mr->addr : NULL;
		if (b && p >= b && p - b <= (ptrdiff_t)mr->length &&
		    len <= mr->length - (uint64_t)(p - b))
			return mr;
	}
	return NULL;
}

/* Does the open pack or an unanswered one to node hold an element of the
 * strided/vector descriptor m? */
static int packs_hold(struct daemon *d, int32_t node, const struct xp_multi *m)
{
	const struct pack_open *pk = &d->net.peers[node].pack;
	for (uint32_t k = 0; k < pk->nelem; k++)
		if (pk->slots[k].ck.op.multi == m)
			return 1;
	for (const struct vpk *x = VS(d)->peers[node].pk; x; x = x->next)
		for (uint32_t k = 0; k < x->n; k++)
			if (x->s[k].ck.op.multi == m)
				return 1;
	return 0;
}

static enum xp_result verbs_rma(struct daemon *d, const struct xp_req *rq, int *err)
{
	uint8_t vk; /* this operation's kind on the ring */
	switch (rq->kind) {
	case XP_PUT:
		vk = VK_PUT;
		break;
	case XP_GET:
		vk = VK_GET;
		break;
	case XP_AMO: return xp_amo(d, rq, err);
	case XP_SEND:
	default: /* refused before anything is looked at, let alone posted */
		return xp_fail(err, xp_kind_refuse(d, rq->kind));
	}
	struct verbs *v = VS(d);
	struct net *n = &d->net;
	int32_t node = rq->node;
	if (!n->enabled || node < 0 || node >= n->nnodes || node == n->self)
		return xp_fail(err, -EINVAL);
	if (rq->len > (1u << 30))
		return xp_fail(err, -EMSGSIZE); /* libhoist splits; a raw descriptor may not */
	int rc;
	struct vconn *cn = conn_ready(d, node, &rc);
	if (!cn)
		return rc ? xp_fail(err, rc) : XP_STALL;
	struct peer *p = &n->peers[node];
	if (pack_eligible(d, rq))
		return vpack_add(d, cn, rq, err);
	/* Packs are executed by the target's CPU after their SEND arrived,
	 * RDMA by its NIC: verbs reorders (verbs_reorders), the conflict
	 * stage orders overlapping operations of a client. Only the elements
	 * of one strided/vector descriptor, which apply in list order, are
	 * this file's: one too large for a pack waits until every pack
	 * holding earlier elements of its descriptor was answered (a packed
	 * one after it is a SEND behind its RDMA on the queue pair). */
	if (rq->ck.op.multi && packs_hold(d, node, rq->ck.op.multi)) {
		if (p->pack.nelem && (rc = vpack_close(d, node)))
			return xp_fail(err, rc);
		STAT_INC(&d->vst, rdma_order_waits);
		return XP_STALL;
	}
	if (cn->tail - cn->head >= cn->W) {
		STAT_INC(&p->st, stalls);
		return XP_STALL;
	}
	struct addr_key key = {.job = rq->job, .pe = rq->pe, .seg = rq->seg};
	struct addr_entry miss;
	const struct addr_entry *e = addr_cache_lookup(&n->cache, &key);
	if (!e) {
		enum xp_result r = resolve_miss(d, &key, node, &miss, err);
		if (r != XP_DONE)
			return r;
		e = &miss;
	}
	if (!hoist_range_ok(rq->off, rq->len, e->len))
		return xp_fail(err, -EFAULT);
	uint64_t raddr = e->base + rq->off;
	struct vop *o = op_slot(cn);
	o->wr.wr.rdma.remote_addr = raddr;
	o->wr.wr.rdma.rkey = e->rkey;
	o->wr.num_sge = rq->len ? 1 : 0;
	uint32_t len = (uint32_t)rq->len;
	switch (rq->kind) {
	case XP_PUT:
		o->wr.opcode = IBV_WR_RDMA_WRITE;
		if (rq->len <= v->max_inline) {
			/* copied now: the descriptor and staging are the client's again
			 * once consumed */
			memcpy(o->inl, rq->laddr, rq->len);
			o->sge = (struct ibv_sge){.addr = (uintptr_t)o->inl, .length = len};
			o->wr.send_flags = IBV_SEND_INLINE;
			STAT_INC(&d->vst, rdma_inline);
		} else if (rq->flags & XP_RF_INPLACE) {
			struct ibv_mr *mr = local_mr(rq->lmr, rq->laddr, rq->len);
			if (!mr)
				return xp_fail(err, -EFAULT);
			o->sge = (struct ibv_sge){.addr = (uintptr_t)rq->laddr, .length = len,
						  .lkey = mr->lkey};
		} else {
			int64_t off = bounce_alloc(cn, rq->len, &o->bounce_end);
			if (off < 0) {
				STAT_INC(&p->st, stalls);
				return XP_STALL;
			}
			memcpy(cn->bounce + off, rq->laddr, rq->len);
			o->sge = (struct ibv_sge){.addr = (uintptr_t)(cn->bounce + off), .length = len,
						  .lkey = cn->bounce_mr->lkey};
			STAT_INC(&d->vst, rdma_bounced);
		}
		STAT_INC(&d->vst, rdma_writes);
		break;
	case XP_GET: {
		struct ibv_mr *mr = local_mr(rq->lmr, rq->laddr, rq->len);
		if (!mr)
			return xp_fail(err, -EFAULT);
		o->wr.opcode = IBV_WR_RDMA_READ;
		o->sge = (struct ibv_sge){.addr = (uintptr_t)rq->laddr, .length = len, .lkey = mr->lkey};
		STAT_INC(&d->vst, rdma_reads);
		break;
	}
	case XP_AMO:
	case XP_SEND:
		return xp_fail(err, xp_kind_refuse(d, rq->kind)); /* refused above already */
	}
	o->kind = vk;
	o->ck = rq->ck;
	cn->tail++;
	STAT_INC(&p->st, ops_out);
	STAT_ADD(&p->st, bytes_out, rq->len);
	return XP_STARTED;
}

/* ---- completions ------------------------------------------------------------------ */

/* Switches over libibverbs/librdmacm enums switch on int: those enums
 * grow with rdma-core, and -Wswitch-enum is for hoist's own kinds. */
static int wc_errno(enum ibv_wc_status s)
{
	switch ((int)s) {
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
		return -ECONNRESET; /* a stale key: the PE left */
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return -ETIMEDOUT;
	default:
		return -ECONNRESET;
	}
}

static struct vconn *conn_by_qp(struct verbs *v, uint32_t qpn)
{
	for (uint32_t s = 0; s < v->nslots; s++) {
		struct vconn *cn = v->slots[s];
		if (cn && cn->id && cn->id->qp && cn->id->qp->qp_num == qpn)
			return cn;
	}
	return NULL;
}

static void recv_repost(struct verbs *v, uint32_t i)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(v->rbufs + (size_t)i * V_RECV_BUF),
			      .length = V_RECV_BUF, .lkey = v->rmr->lkey};
	struct ibv_recv_wr wr = {.wr_id = (1ull << 63) | i, .sg_list = &sge, .num_sge = 1}, *bad;
	if (ibv_post_srq_recv(v->srq, &wr, &bad))
		hlog_err("cannot repost a receive buffer");
}

/* The active messages after the failed work request at seq were flushed,
 * not sent (RC executes in order): they go back to the front of the
 * peer's queue for the reconnection, so that barrier, membership and
 * resolve messages of other jobs are not lost with the connection. */
static void amq_requeue(struct daemon *d, struct vconn *cn, uint64_t seq)
{
	struct vpeer *vp = &VS(d)->peers[cn->node];
	struct vam *first = NULL, **tail = &first;
	for (uint64_t k = seq + 1; k < cn->tail; k++) {
		struct vop *o = &cn->ring[k % cn->W];
		if (o->kind != VK_SEND || o->pack_tag)
			continue; /* a pack fails with the connection (conn_close) */
		struct vam *a = malloc(sizeof(*a) + o->sge.length);
		if (!a)
			break;
		a->len = o->sge.length;
		a->pack_tag = 0;
		memcpy(a->buf, (const void *)(uintptr_t)o->sge.addr, a->len);
		a->next = NULL;
		*tail = a;
		tail = &a->next;
		o->kind = 0; /* so that nothing else counts it */
	}
	if (!first)
		return;
	*tail = vp->amq;
	if (!vp->amq)
		vp->amq_tail = tail;
	vp->amq = first;
}

static void wc_handle(struct daemon *d, const struct ibv_wc *wc)
{
	struct verbs *v = VS(d);
	if (wc->wr_id >> 63) { /* receive */
		uint32_t i = (uint32_t)(wc->wr_id & 0xffffffffu);
		if (i >= V_NRECV)
			return;
		if (wc->status == IBV_WC_SUCCESS) {
			struct vconn *cn = conn_by_qp(v, wc->qp_num);
			if (cn && cn->node >= 0 && (cn->state == VC_UP || cn->state == VC_ACCEPT))
				am_recv(d, cn->node, v->rbufs + (size_t)i * V_RECV_BUF, wc->byte_len);
		}
		recv_repost(v, i);
		return;
	}
	uint32_t slot = (uint32_t)(wc->wr_id >> 48);
	uint16_t gen = (uint16_t)(wc->wr_id >> 32);
	struct vconn *cn = slot < v->nslots ? v->slots[slot] : NULL;
	if (!cn || cn->gen != gen || !cn->ring)
		return; /* a connection closed meanwhile */
	uint64_t seq = cn->head + (uint32_t)((uint32_t)wc->wr_id - (uint32_t)cn->head);
	if (wc->status == IBV_WC_SUCCESS) {
		ring_retire(d, cn, seq + 1, 0);
		return;
	}
	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		return; /* follows the error that closes the connection */
	STAT_INC(&d->vst, rdma_wc_errors);
	int32_t node = cn->node;
	hlog_warn("work request to node %d failed: %s (vendor error 0x%x); reconnecting", node,
		  ibv_wc_status_str(wc->status), wc->vendor_err);
	ring_retire(d, cn, seq, 0);
	if (cn->head == seq && cn->head < cn->tail) {
		struct vop o = cn->ring[cn->head % cn->W];
		cn->head++;
		if (o.bounce_end)
			cn->bhead = o.bounce_end;
		op_deliver(d, cn->node, &o, wc_errno(wc->status));
	}
	/* the peer is gone or unreachable: as a disconnect */
	if (wc->status == IBV_WC_RETRY_EXC_ERR) {
		vpeer_lost(d, node, "no response (transport retries exceeded)");
		return;
	}
	if (v->slots[slot] == cn && cn->gen == gen) {
		amq_requeue(d, cn, seq);
		conn_close(d, cn, -ECONNRESET);
	}
	addr_cache_invalidate_node(&d->net.cache, node);
}

static int cq_drain(struct daemon *d)
{
	struct verbs *v = VS(d);
	struct ibv_wc wc[32];
	int total = 0, k;
	do {
		k = ibv_poll_cq(v->cq, 32, wc);
		for (int i = 0; i < k; i++)
			wc_handle(d, &wc[i]);
		if (k > 0)
			total += k;
	} while (k == 32);
	return total;
}

/* ---- connection management -------------------------------------------------------- */

/* Close a connection a peer made to us. The messages it delivered before
 * may still wait in the CQ: a receive is matched to its sender through the
 * queue pair, which is gone after the close, so they are taken first (the
 * peer saw them complete and does not send them again). The drain may
 * close the connection itself (a lost peer). */
static void in_close(struct daemon *d, struct vconn *cn)
{
	struct verbs *v = VS(d);
	uint32_t slot = cn->slot;
	uint16_t gen = cn->gen;
	cq_drain(d);
	cn = v->slots[slot];
	if (cn && cn->gen == gen)
		conn_close(d, cn, -ECONNRESET);
}

static void conn_param(struct verbs *v, struct rdma_conn_param *cp, const void *pd, uint8_t plen)
{
	memset(cp, 0, sizeof(*cp));
	cp->private_data = pd;
	cp->private_data_len = plen;
	cp->responder_resources = (uint8_t)v->rd_atom;
	cp->initiator_depth = (uint8_t)v->init_rd_atom;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7; /* an empty SRQ only delays */
}

static void on_connect_request(struct daemon *d, struct rdma_cm_id *id, const void *pdata,
			       uint8_t plen)
{
	struct verbs *v = VS(d);
	struct net *n = &d->net;
	struct wire_vconnect req;
	const char *why = "malformed connect request";
	const char *rej = V_REJECT_AUTH;
	if (plen < sizeof(req))
		goto refuse;
	memcpy(&req, pdata, sizeof(req));
	why = "wrong version or node list";
	if (!peer_hello_ok(req.version, req.nnodes, req.node, n->self, n->nnodes))
		goto refuse;
	uint64_t ts;
	memcpy(&ts, req.nonce, sizeof(ts));
	uint64_t now = wall_ns();
	why = "it does not hold the cluster key";
	if (peer_hs_verify(n->key, V_HS_LABEL, "connector", req.nonce, sizeof(req.nonce), n->self,
			   req.node, req.mac, sizeof(req.mac))) {
		STAT_INC(&n->peers[req.node].st, auth_failures);
		goto refuse;
	}
	why = "a replayed connect request";
	if (!peer_fresh(&v->replay, req.node, ts, req.nonce, now))
		goto refuse;
	struct vpeer *vp = &v->peers[req.node];
	if (vp->in) /* it reconnects: its old connection is dead */
		in_close(d, vp->in);
	struct vconn *cn = conn_new(d, req.node, 0);
	why = "out of connection slots";
	rej = V_REJECT_BUSY;
	if (!cn)
		goto refuse;
	cn->id = id;
	id->context = cn;
	int rc = qp_create(d, cn);
	if (rc) {
		hlog_warn("cannot create a queue pair for node %d: %s", req.node, strerror(-rc));
		cn->id = NULL;
		v->slots[cn->slot] = NULL;
		free(cn);
		why = "cannot create a queue pair";
		goto refuse;
	}
	vp->in = cn;
	cn->state = VC_ACCEPT;
	struct wire_vconnect rep = {.version = WIRE_VERSION, .nnodes = (uint16_t)n->nnodes,
				    .node = n->self};
	memcpy(rep.nonce, req.nonce, 16);
	peer_hs_mac(n->key, V_HS_LABEL, "acceptor", req.nonce, sizeof(req.nonce), n->self, req.node,
		    rep.mac);
	struct rdma_conn_param cp;
	conn_param(v, &cp, &rep, sizeof(rep));
	if (rdma_accept(id, &cp)) {
		hlog_warn("rdma_accept for node %d: %m", req.node);
		conn_close(d, cn, -ECONNRESET);
	}
	/* a peer that reconnects is alive: a lost mark from earlier is void */
	peer_alive(&n->peers[req.node].link);
	return;
refuse:
	hlog_warn("refused an rdma connection: %s", why);
	rdma_reject(id, rej, (uint8_t)(strlen(rej) + 1));
	rdma_destroy_id(id);
}

static void on_established(struct daemon *d, struct vconn *cn, const void *pdata, uint8_t plen)
{
	struct net *n = &d->net;
	struct peer *p = &n->peers[cn->node];
	if (!cn->outgoing) {
		cn->state = VC_UP;
		return;
	}
	struct wire_vconnect rep;
	if (plen < sizeof(rep) || (memcpy(&rep, pdata, sizeof(rep)), 0) || rep.node != cn->node ||
	    memcmp(rep.nonce, cn->nonce, 16) ||
	    peer_hs_verify(n->key, V_HS_LABEL, "acceptor", cn->nonce, sizeof(cn->nonce), cn->node,
			   n->self, rep.mac, sizeof(rep.mac))) {
		STAT_INC(&p->st, auth_failures);
		hlog_warn("peer %s failed authentication (wrong cluster key or node list?)", p->name);
		cn->state = VC_UP; /* so that close disconnects */
		vpeer_lost(d, cn->node, "authentication failed");
		return;
	}
	cn->state = VC_UP;
	peer_up(&p->link, now_ns()); /* the accept came from its daemon */
	STAT_INC(&p->st, connects);
	hlog_info("connected to node %d (%s) over %s", cn->node, p->name,
		  ibv_get_device_name(cn->id->verbs->device));
	amq_push(d, cn->node);
}

static void cm_event(struct daemon *d, struct rdma_cm_event *ev)
{
	struct verbs *v = VS(d);
	struct net *n = &d->net;
	enum rdma_cm_event_type type = ev->event;
	int status = ev->status;
	struct rdma_cm_id *id = ev->id;
	uint8_t pdata[UINT8_MAX];
	uint8_t plen = ev->param.conn.private_data_len;
	if (plen && ev->param.conn.private_data)
		memcpy(pdata, ev->param.conn.private_data, plen);
	else
		plen = 0;
	/* private data lives until the ack; the id may be destroyed after it */
	rdma_ack_cm_event(ev);
	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		on_connect_request(d, id, pdata, plen);
		return;
	}
	struct vconn *cn = id ? id->context : NULL;
	if (!cn || id == v->listen)
		return;
	switch ((int)type) { /* see wc_errno() */
	case RDMA_CM_EVENT_ADDR_RESOLVED: {
		uint8_t to = 16; /* 4.096 us * 2^16 = 268 ms per try, 7 tries */
		rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &to, sizeof(to));
		cn->state = VC_ROUTE;
		if (rdma_resolve_route(id, V_RESOLVE_MS))
			connect_failed(d, cn, "rdma_resolve_route failed");
		return;
	}
	case RDMA_CM_EVENT_ROUTE_RESOLVED: {
		int rc = qp_create(d, cn);
		if (rc) {
			hlog_warn("cannot create a queue pair for node %d: %s", cn->node, strerror(-rc));
			vpeer_lost(d, cn->node, "cannot create a queue pair");
			return;
		}
		struct wire_vconnect req = {.version = WIRE_VERSION, .nnodes = (uint16_t)n->nnodes,
					    .node = n->self};
		uint64_t ts = peer_next_ts(&v->sent_ts, wall_ns());
		memcpy(req.nonce, &ts, sizeof(ts));
		randombytes_buf(req.nonce + 8, 8);
		memcpy(cn->nonce, req.nonce, 16);
		peer_hs_mac(n->key, V_HS_LABEL, "connector", req.nonce, sizeof(req.nonce), cn->node, n->self,
		    req.mac);
		struct rdma_conn_param cp;
		conn_param(v, &cp, &req, sizeof(req));
		cn->state = VC_CONNECT;
		if (rdma_connect(id, &cp))
			connect_failed(d, cn, "rdma_connect failed");
		return;
	}
	case RDMA_CM_EVENT_ESTABLISHED:
		on_established(d, cn, pdata, plen);
		return;
	case RDMA_CM_EVENT_REJECTED:
		if (cn->outgoing && plen >= sizeof(V_REJECT_AUTH) &&
		    !memcmp(pdata, V_REJECT_AUTH, sizeof(V_REJECT_AUTH))) {
			STAT_INC(&n->peers[cn->node].st, auth_failures);
			vpeer_lost(d, cn->node, "it refused our authentication");
			return;
		}
		/* nobody listening yet (status 8): retry */
		/* fall through */
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (cn->outgoing && cn->state != VC_UP) {
			char why[96];
			snprintf(why, sizeof(why), "%s (status %d)", rdma_event_str(type), status);
			connect_failed(d, cn, why);
		} else if (cn->outgoing) {
			vpeer_lost(d, cn->node, rdma_event_str(type));
		} else {
			conn_close(d, cn, -ECONNRESET);
		}
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (cn->outgoing)
			vpeer_lost(d, cn->node, "disconnected");
		else
			in_close(d, cn); /* its requests only */
		return;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		vpeer_lost(d, cn->node, "RDMA device removed");
		return;
	default:
		return;
	}
}

static int cm_drain(struct daemon *d)
{
	struct rdma_cm_event *ev;
	int k = 0;
	while (rdma_get_cm_event(VS(d)->ch, &ev) == 0) {
		cm_event(d, ev);
		k++;
	}
	return k;
}

/* ---- progress ---------------------------------------------------------------------- */

/* Busy passes poll the CQ (user space); the channels' descriptors are in
 * the progress loop's epoll, looked at every 32nd busy pass (fd_pass_mask:
 * rdma_cm events are rare, and the completion channel only matters when
 * armed, i.e. when the loop sleeps), and whenever it sleeps. */
static int verbs_poll(struct daemon *d)
{
	return cq_drain(d);
}

/* The loop is about to sleep: arm the completion channel, then look once
 * more (a completion between the last poll and the arming raises no
 * event). */
static int verbs_arm(struct daemon *d)
{
	struct verbs *v = VS(d);
	int work = cq_drain(d);
	if (work)
		return work;
	if (!v->armed && ibv_req_notify_cq(v->cq, 0) == 0)
		v->armed = 1;
	return cq_drain(d);
}

static int cm_ready(struct daemon *d, void *arg, uint32_t events)
{
	(void)arg;
	(void)events;
	return cm_drain(d);
}

static int cq_ready(struct daemon *d, void *arg, uint32_t events)
{
	(void)arg;
	(void)events;
	struct verbs *v = VS(d);
	struct ibv_cq *cq;
	void *ctx;
	while (ibv_get_cq_event(v->cch, &cq, &ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		v->armed = 0;
	}
	return cq_drain(d);
}

/* Heartbeats on an outgoing connection that is up, as tcp has them (the
 * peer layer's policy): a PING every heartbeat_ms while none is
 * unanswered; a peer whose daemon said nothing for the silence limit since
 * a ping went unanswered is lost. Completions of RDMA operations do not
 * count: a stopped (SIGSTOP) or hung daemon's device still completes
 * them. */
static void heartbeat(struct daemon *d, int32_t node, uint64_t now)
{
	struct peer *p = &d->net.peers[node];
	struct peer_link *l = &p->link;
	uint64_t silent = peer_silence_limit_ns(d->cfg.heartbeat_ms, d->cfg.peer_timeout_ms);
	uint64_t heard = l->last_heard_ns > l->ping_sent_ns ? l->last_heard_ns : l->ping_sent_ns;
	if (peer_silent(now, heard, l->ping_sent_ns != 0, silent)) {
		char why[120];
		snprintf(why, sizeof(why), "no answer within peer_timeout_ms (silent for %llu ms)",
			 (unsigned long long)((now - l->last_heard_ns) / 1000000));
		vpeer_lost(d, node, why);
		return;
	}
	if (peer_ping_due(l, now, d->cfg.heartbeat_ms)) {
		if (am_frame(d, node, W_PING, l->ping_tag, NULL, 0, NULL, 0))
			peer_ping_unsent(l);
		else
			STAT_INC(&d->vst, rdma_pings);
	}
}

static void verbs_timers(struct daemon *d, uint64_t now)
{
	struct verbs *v = VS(d);
	struct net *n = &d->net;
	uint64_t to = d->cfg.peer_timeout_ms * 1000000ull;
	/* answers nobody picked up (the cache served the waiting operation) */
	for (struct vres **pp = &v->res, *r; (r = *pp);) {
		if (r->state != RES_WAIT && now - r->sent_ns > 1000000000ull) {
			*pp = r->next;
			free(r);
		} else {
			pp = &r->next;
		}
	}
	int ping_due = peer_check_due(&n->next_ping_check_ns, now, d->cfg.heartbeat_ms,
				      d->cfg.peer_timeout_ms);
	for (int32_t i = 0; i < n->nnodes; i++) {
		struct vpeer *vp = &v->peers[i];
		struct peer_link *l = &n->peers[i].link;
		if (i == n->self)
			continue;
		if (vp->out && vp->out->state != VC_UP && l->first_try_ns &&
		    now - l->first_try_ns > to + 2 * V_RESOLVE_MS * 1000000ull) {
			vpeer_lost(d, i, "no connection within peer_timeout_ms");
			continue;
		}
		struct vconn *cn = vp->out;
		if (cn && cn->state == VC_UP && cn->head < cn->posted) {
			/* posted work that does not complete: say so once a second */
			if (cn->head != cn->watch_head) {
				cn->watch_head = cn->head;
				cn->watch_ns = now;
			} else if (now - cn->watch_ns > 2000000000ull) {
				hlog_warn("node %d: %llu work requests posted, none completed for %llu ms",
					  i, (unsigned long long)(cn->posted - cn->head),
					  (unsigned long long)((now - cn->watch_ns) / 1000000));
				cn->watch_ns = now - 1000000000ull;
			}
		}
		if (!vp->out && l->retry_at_ns && now >= l->retry_at_ns) {
			l->retry_at_ns = 0;
			int rc = connect_start(d, i);
			if (rc)
				vpeer_lost(d, i, strerror(-rc));
		} else if (!vp->out && !l->retry_at_ns && vp->amq) {
			int rc; /* requeued messages wait for a connection */
			conn_ready(d, i, &rc);
		}
		if (cn && cn->state == VC_UP && vp->out == cn && ping_due)
			heartbeat(d, i, now);
	}
}

static void verbs_orphan(struct daemon *d, struct client *c)
{
	struct verbs *v = VS(d);
	for (uint32_t s = 0; s < v->nslots; s++) {
		struct vconn *cn = v->slots[s];
		if (!cn || !cn->ring)
			continue;
		for (uint64_t k = cn->head; k != cn->tail; k++)
			if (cn->ring[k % cn->W].ck.client == c)
				cn->ring[k % cn->W].ck.client = NULL;
	}
	for (int32_t i = 0; d->net.enabled && i < d->net.nnodes; i++) {
		struct pack_open *pk = &d->net.peers[i].pack;
		for (uint32_t e = 0; e < pk->nelem; e++)
			if (pk->slots[e].ck.client == c)
				pk->slots[e].ck.client = NULL;
		for (struct vpk *x = v->peers[i].pk; x; x = x->next)
			for (uint32_t e = 0; e < x->n; e++)
				if (x->s[e].ck.client == c)
					x->s[e].ck.client = NULL;
	}
}

/* ---- registration (reg.c calls these) ------------------------------------------------ */

/* mem_reg: the memory regions of a client's mapped segments (control
 * thread, at attach; reg.c checked the budget). The heap is remotely
 * readable and writable, staging and the prefetch region local only. */
static int verbs_mem_reg(struct daemon *d, struct client *c, char *why, size_t whylen)
{
	struct verbs *v = VS(d);
	if (!v)
		return 0;
	const struct region *rg[3] = {&c->heap, &c->staging, &c->pf};
	const int acc[3] = {IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
			    IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_LOCAL_WRITE};
	for (int i = 0; i < 3; i++) {
		if (!rg[i]->base)
			continue;
		c->mr[i] = ibv_reg_mr(v->pd, rg[i]->base, rg[i]->bytes, acc[i]);
		if (!c->mr[i]) {
			int rc = errno ? -errno : -ENOMEM;
			snprintf(why, whylen,
				 "cannot register %llu bytes with the RDMA device: %s (raise the memlock "
				 "limit: ulimit -l / RLIMIT_MEMLOCK, LimitMEMLOCK= in systemd)",
				 (unsigned long long)rg[i]->bytes, strerror(-rc));
			return rc; /* reg.c releases the ones made */
		}
	}
	return 0;
}

static void verbs_mem_dereg(struct daemon *d, void *const *mr)
{
	(void)d;
	for (int i = 0; i < XP_NMR; i++)
		if (mr[i])
			ibv_dereg_mr(mr[i]);
}

static uint32_t verbs_mem_rkey(const void *mr)
{
	return ((const struct ibv_mr *)mr)->rkey;
}

/* ---- start / stop -------------------------------------------------------------------- */

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

/* The GID index of ip's IPv4-mapped RoCE v2 GID on (ctx, port), or -1. */
static int gid_index_of(struct ibv_context *ctx, uint8_t port, const struct sockaddr_in *ip)
{
	struct ibv_port_attr pa;
	if (ibv_query_port(ctx, port, &pa))
		return -1;
	uint8_t want[16] = {0};
	want[10] = want[11] = 0xff;
	memcpy(want + 12, &ip->sin_addr, 4);
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		struct ibv_gid_entry e;
		if (ibv_query_gid_ex(ctx, port, (uint32_t)i, &e, 0))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && !memcmp(e.gid.raw, want, 16))
			return i;
	}
	return -1;
}

static void verbs_stop(struct daemon *d);

static int verbs_start(struct daemon *d)
{
	struct net *n = &d->net;
	struct peer *me = &n->peers[n->self];
	char ip[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &me->addr.sin_addr, ip, sizeof(ip));
	struct verbs *v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	d->xp_priv = v;
	int rc = -ENODEV;
	if (!(v->ch = rdma_create_event_channel()) ||
	    rdma_create_id(v->ch, &v->listen, NULL, RDMA_PS_TCP)) {
		rc = errno ? -errno : -ENODEV;
		hlog_info("verbs: rdma_cm unavailable: %s", strerror(-rc));
		goto fail;
	}
	if (rdma_bind_addr(v->listen, (struct sockaddr *)&me->addr) || !v->listen->verbs) {
		rc = -ENODEV;
		hlog_info("verbs: no RDMA device owns %s (this node's address)", ip);
		goto fail;
	}
	v->ctx = v->listen->verbs;
	const char *dev = ibv_get_device_name(v->ctx->device);
	uint8_t port = v->listen->port_num;
	int gid = gid_index_of(v->ctx, port, &me->addr);
	if (d->cfg.rdma_device[0] && strcmp(d->cfg.rdma_device, dev)) {
		hlog_err("verbs: rdma_device=%s, but %s belongs to %s", d->cfg.rdma_device, ip, dev);
		rc = -EINVAL;
		goto fail;
	}
	if (d->cfg.rdma_port && d->cfg.rdma_port != port) {
		hlog_err("verbs: rdma_port=%llu, but rdma_cm reaches %s through port %u of %s",
			 (unsigned long long)d->cfg.rdma_port, ip, port, dev);
		rc = -EINVAL;
		goto fail;
	}
	if (strcmp(d->cfg.rdma_gid_index, "auto") && atoi(d->cfg.rdma_gid_index) != gid) {
		hlog_err("verbs: rdma_gid_index=%s, but the RoCE v2 GID of %s on %s port %u is index %d",
			 d->cfg.rdma_gid_index, ip, dev, port, gid);
		rc = -EINVAL;
		goto fail;
	}
	struct ibv_device_attr da;
	if (ibv_query_device(v->ctx, &da)) {
		rc = -errno;
		goto fail;
	}
	v->rd_atom = da.max_qp_rd_atom < 16 ? (uint32_t)da.max_qp_rd_atom : 16;
	v->init_rd_atom = da.max_qp_init_rd_atom < 16 ? (uint32_t)da.max_qp_init_rd_atom : 16;
	v->W = (uint32_t)d->cfg.credit_window;
	if (v->W < 8)
		v->W = 8;
	if (v->W > (uint32_t)da.max_qp_wr)
		v->W = (uint32_t)da.max_qp_wr;
	v->max_inline = V_INLINE_MAX;
	v->nslots = 2u * (uint32_t)n->nnodes + 8;
	if (v->nslots > 1u << 15)
		v->nslots = 1u << 15; /* wr_id: slot in bits 48..62, bit 63 marks receives */
	uint64_t cqe = (uint64_t)v->nslots * (v->W + 4) + V_NRECV;
	if (cqe > (uint64_t)da.max_cqe) {
		/* the completion queue must hold every send queue's completions
		 * (a flushed queue completes all of its work requests) and the
		 * receives: an overrun puts the CQ, and every queue pair, in
		 * error. Fewer work requests in flight per peer then. */
		cqe = (uint64_t)da.max_cqe;
		uint64_t w = cqe > V_NRECV ? (cqe - V_NRECV) / v->nslots : 0;
		v->W = w > 4 + 1 ? (uint32_t)(w - 4) : 1;
		hlog_info("verbs: %s holds %llu completions: %u work requests in flight per peer", dev,
			  (unsigned long long)cqe, v->W);
	}
	if (!(v->pd = ibv_alloc_pd(v->ctx)) || !(v->cch = ibv_create_comp_channel(v->ctx)) ||
	    !(v->cq = ibv_create_cq(v->ctx, (int)cqe, NULL, v->cch, 0))) {
		rc = errno ? -errno : -ENOMEM;
		hlog_err("verbs: cannot set up %s: %s", dev, strerror(-rc));
		goto fail;
	}
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = V_NRECV, .max_sge = 1}};
	v->rbufs = aligned_alloc(4096, (size_t)V_NRECV * V_RECV_BUF);
	if (!v->rbufs || !(v->srq = ibv_create_srq(v->pd, &sa)) ||
	    !(v->rmr = ibv_reg_mr(v->pd, v->rbufs, (size_t)V_NRECV * V_RECV_BUF,
				  IBV_ACCESS_LOCAL_WRITE))) {
		rc = errno ? -errno : -ENOMEM;
		hlog_err("verbs: cannot set up the receive queue on %s: %s", dev, strerror(-rc));
		goto fail;
	}
	for (uint32_t i = 0; i < V_NRECV; i++)
		recv_repost(v, i);
	v->peers = calloc((size_t)n->nnodes, sizeof(*v->peers));
	v->slots = calloc(v->nslots, sizeof(*v->slots));
	v->gens = calloc(v->nslots, sizeof(*v->gens));
	v->replay.last_ts = calloc((size_t)n->nnodes, sizeof(*v->replay.last_ts));
	v->pkreply = malloc(WIRE_AM_MAX_PAYLOAD);
	if (!v->peers || !v->slots || !v->gens || !v->replay.last_ts || !v->pkreply) {
		rc = -ENOMEM;
		goto fail;
	}
	for (int32_t i = 0; i < n->nnodes; i++) {
		v->peers[i].amq_tail = &v->peers[i].amq;
		v->peers[i].pk_tail = &v->peers[i].pk;
	}
	/* the memlock budget: d->pinned_limit, set by main() for every transport */
	pinned_add(d, (int64_t)V_NRECV * V_RECV_BUF);
	if (set_nonblock(v->ch->fd) || set_nonblock(v->cch->fd) || ibv_req_notify_cq(v->cq, 0)) {
		rc = -EIO;
		goto fail;
	}
	v->armed = 1;
	if ((rc = loop_add(&d->loop, v->ch->fd, EPOLLIN, cm_ready, NULL)))
		goto fail;
	if ((rc = loop_add(&d->loop, v->cch->fd, EPOLLIN, cq_ready, NULL))) {
		loop_del(&d->loop, v->ch->fd);
		goto fail;
	}
	v->watched = 1;
	/* the address cache, as tcp has it */
	if ((rc = addr_cache_init(&n->cache, (uint32_t)d->cfg.addr_cache_entries))) {
		rc = -ENOMEM;
		goto fail;
	}
	v->own_net = 1;
	if (rdma_listen(v->listen, 64)) {
		rc = -errno;
		hlog_err("verbs: cannot listen on %s: %s", me->name, strerror(-rc));
		goto fail;
	}
	v->started = 1;
	__atomic_store_n(&d->vst.transport_verbs, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&d->vst.rdma_port, port, __ATOMIC_RELAXED);
	__atomic_store_n(&d->vst.rdma_gid_index, (uint64_t)(gid < 0 ? 0 : gid), __ATOMIC_RELAXED);
	hlog_info("node %d of %d, listening on %s over verbs: device %s port %u gid index %d, "
		  "max inline %u, memlock budget %llu bytes", n->self, n->nnodes, me->name, dev, port,
		  gid, v->max_inline, (unsigned long long)d->pinned_limit);
	if (n->frames_mode != FRAMES_OFF)
		hlog_warn("frame_integrity=%s does not cover transport verbs: RDMA WRITE/READ are placed "
			  "by the NIC and daemon messages travel as plain SENDs; only the connection "
			  "handshake is authenticated (cluster key). Use tcp where frames must be "
			  "integrity-protected",
			  frames_mode_name(n->frames_mode));
	return 0;
fail:
	verbs_stop(d);
	return rc;
}

static void verbs_stop(struct daemon *d)
{
	struct verbs *v = VS(d);
	struct net *n = &d->net;
	if (!v)
		return;
	/* packs: nobody to tell any more */
	for (int32_t i = 0; v->peers && i < n->nnodes; i++) {
		struct vpeer *vp = &v->peers[i];
		while (vp->pk) {
			struct vpk *x = vp->pk;
			vp->pk = x->next;
			free(x->s);
			free(x);
		}
		vp->pk_tail = &vp->pk;
		vp->npk = 0;
		if (n->peers) {
			free(n->peers[i].pack.slots);
			free(n->peers[i].pack.buf);
			n->peers[i].pack = (struct pack_open){0};
		}
	}
	for (uint32_t s = 0; v->slots && s < v->nslots; s++) {
		struct vconn *cn = v->slots[s];
		if (!cn)
			continue;
		for (uint64_t k = cn->head; cn->ring && k != cn->tail; k++)
			cn->ring[k % cn->W].ck.client = NULL; /* nobody to tell any more */
		conn_close(d, cn, -ECONNRESET);
	}
	for (int32_t i = 0; v->peers && i < n->nnodes; i++)
		amq_fail(&v->peers[i]);
	while (v->res) {
		struct vres *r = v->res;
		v->res = r->next;
		free(r);
	}
	/* the clients' regions: reg_release_all (progress_stop) released
	 * them before, the protection domain goes now */
	if (v->watched) {
		loop_del(&d->loop, v->ch->fd);
		loop_del(&d->loop, v->cch->fd);
	}
	if (v->listen)
		rdma_destroy_id(v->listen);
	if (v->rmr)
		ibv_dereg_mr(v->rmr);
	if (v->srq)
		ibv_destroy_srq(v->srq);
	if (v->cq)
		ibv_destroy_cq(v->cq);
	if (v->cch)
		ibv_destroy_comp_channel(v->cch);
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	if (v->ch)
		rdma_destroy_event_channel(v->ch);
	free(v->rbufs);
	free(v->pkreply);
	free(v->peers);
	free(v->slots);
	free(v->gens);
	free(v->replay.last_ts);
	if (v->own_net)
		addr_cache_fini(&n->cache);
	if (v->started) {
		free(n->peers);
		n->peers = NULL;
		sodium_memzero(n->key, sizeof(n->key));
	}
	reg_pinned_add(d, -(int64_t)v->charged);
	free(v);
	d->xp_priv = NULL;
	__atomic_store_n(&d->vst.transport_verbs, 0, __ATOMIC_RELAXED);
}

/* Packed operations are executed by the target's CPU after their SEND
 * arrived, RDMA WRITEs and READs by its NIC: an operation may overtake an
 * earlier one to the same node, so the conflict stage orders them. */
static int verbs_reorders(const struct daemon *d)
{
	(void)d;
	return 1;
}

const struct transport_ops verbs_transport = {
	.name = "verbs",
	.start = verbs_start,
	.stop = verbs_stop,
	.rma = verbs_rma,
	.am_send = verbs_am_send,
	.poll = verbs_poll,
	.arm = verbs_arm,
	.fd_pass_mask = 31,
	.flush = verbs_flush,
	.timers = verbs_timers,
	.orphan = verbs_orphan,
	.pack_release = verbs_pack_release,
	.mem_reg = verbs_mem_reg,
	.mem_dereg = verbs_mem_dereg,
	.mem_rkey = verbs_mem_rkey,
	.rdma = 1,
	.reorders = verbs_reorders, /* packs by the CPU, RDMA by the NIC */
};
