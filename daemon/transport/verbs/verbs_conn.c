/*
 * verbs transport: a peer's wire (see verbs_int.h for the files).
 *
 * The connections to a peer (vpeer.out, the one we made and send on;
 * vpeer.in, the one it made), made on demand (vconn_ready, vconnect_start)
 * and closed (vconn_close); an outgoing connection's work-request ring
 * (vop_slot, vring_retire: RC completes in order) and bounce buffer; and
 * what fails with a connection or a lost peer: the ring's operations, the
 * queued active messages, the packs sent and awaiting their replies
 * (vpack_fail_inflight). The peer layer's loss path (peer_lost) drops the
 * wire through vpeer_drop. This file calls no other of verbs' files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bounce.h"
#include "log.h"
#include "reg.h"
#include "verbs_int.h"

/* this transport's own registered buffers, in the memlock budget */
void vpinned_add(struct daemon *d, int64_t delta)
{
	VS(d)->charged += (uint64_t)delta;
	reg_pinned_add(d, delta);
}

/* ---- connections --------------------------------------------------------- */

struct vconn *vconn_new(struct daemon *d, int32_t node, int outgoing)
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
	STAT_INC(&d->vst, rdma_conns);
	return cn;
}

void vconn_unslot(struct daemon *d, struct vconn *cn)
{
	struct verbs *v = VS(d);
	if (v->slots[cn->slot] != cn)
		return;
	v->slots[cn->slot] = NULL;
	STAT_ADD(&d->vst, rdma_conns, (uint64_t)-1);
}

static uint64_t wr_id_of(const struct vconn *cn, uint64_t seq)
{
	return (uint64_t)cn->slot << 48 | (uint64_t)cn->gen << 32 | (uint32_t)seq;
}

int vconnect_start(struct daemon *d, int32_t node)
{
	struct verbs *v = VS(d);
	struct net *n = &d->net;
	struct vpeer *vp = &v->peers[node];
	struct vconn *cn = vconn_new(d, node, 1);
	if (!cn)
		return -ENOMEM;
	if (rdma_create_id(v->ch, &cn->id, cn, RDMA_PS_TCP)) {
		int rc = -errno;
		vconn_unslot(d, cn);
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
		vconn_close(d, cn, -ECONNRESET);
		return rc;
	}
	return 0;
}

/* The outgoing connection to node when it can take work now; NULL with
 * *rc = 0 while it is being made, or *rc = -ECONNRESET while the peer
 * counts as lost. */
struct vconn *vconn_ready(struct daemon *d, int32_t node, int *rc)
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
	int r = vconnect_start(d, node);
	if (r) {
		vpeer_lost(d, node, strerror(-r));
		*rc = -ECONNRESET;
	}
	return NULL;
}

void vop_deliver(struct daemon *d, int32_t node, const struct vop *o, int res)
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
void vring_retire(struct daemon *d, struct vconn *cn, uint64_t upto, int res)
{
	while (cn->head < upto && cn->head < cn->tail) {
		struct vop o = cn->ring[cn->head % cn->W];
		cn->head++;
		if (o.bounce_end)
			cn->bhead = o.bounce_end;
		vop_deliver(d, cn->node, &o, res);
	}
}

void vconn_close(struct daemon *d, struct vconn *cn, int res)
{
	struct verbs *v = VS(d);
	struct vpeer *vp = cn->node >= 0 ? &v->peers[cn->node] : NULL;
	if (vp && vp->out == cn)
		vp->out = NULL;
	if (vp && vp->in == cn)
		vp->in = NULL;
	vconn_unslot(d, cn);
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
		vring_retire(d, cn, cn->tail, res);
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
		vpinned_add(d, -(int64_t)cn->bsize);
	}
	free(cn->bounce);
	free(cn->ring);
	free(cn);
}

void vamq_fail(struct vpeer *vp)
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
	vamq_fail(vp);
	for (struct vres *r = v->res; r; r = r->next)
		if (r->node == node && r->state == RES_WAIT) {
			r->state = RES_FAILED;
			r->err = -ECONNRESET;
		}
	if (vp->out)
		vconn_close(d, vp->out, -ECONNRESET);
	if (vp->in)
		vconn_close(d, vp->in, -ECONNRESET);
	vpack_fail_inflight(d, node, -ECONNRESET);
	pack_fail_open(d, &d->net.peers[node].pack, -ECONNRESET);
}

void vpeer_lost(struct daemon *d, int32_t node, const char *why)
{
	struct peer *p = &d->net.peers[node];
	peer_lost(d, node, &p->link, &p->st, p->name, why, vpeer_drop, NULL);
}

/* ---- the work-request ring and the bounce buffer ------------------------- */

/* Room for len bytes in the bounce ring (contiguous). Its offset, or -1. */
int64_t vbounce_alloc(struct vconn *cn, uint64_t len, uint64_t *end)
{
	return bounce_ring_alloc(cn->bsize, &cn->bhead, &cn->btail, len, end);
}

struct vop *vop_slot(struct vconn *cn)
{
	struct vop *o = &cn->ring[cn->tail % cn->W];
	memset(o, 0, offsetof(struct vop, inl));
	o->wr.wr_id = wr_id_of(cn, cn->tail);
	o->wr.sg_list = &o->sge;
	o->wr.num_sge = 1;
	return o;
}

/* ---- packs awaiting replies (they fail with the connection) ------------- */

struct vpk *vpk_take(struct vpeer *vp, uint64_t tag)
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

void vpack_fail_tag(struct daemon *d, int32_t node, uint64_t tag, int res)
{
	struct vpk *x = vpk_take(&VS(d)->peers[node], tag);
	if (x)
		vpk_fail(d, x, res);
}

/* Every pack sent to node and unanswered fails; those still queued for a
 * connection are not sent any more. */
void vpack_fail_inflight(struct daemon *d, int32_t node, int res)
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
