/*
 * verbs transport: active messages (see verbs_int.h for the files).
 *
 * Active messages (wire.h frames: header, extension, payload) are SENDs
 * on the outgoing connection, inline or copied to its bounce ring
 * (vsend_frame), queued while the connection is not up or its ring is full
 * (vamq_push sends them later). Received ones come from the shared receive
 * queue (vam_recv): the daemon's own handlers (am.h), packs and their
 * replies, the resolve protocol (W_VRESOLVE: base, rkey and generation of
 * a peer's segment on an address-cache miss), PING/PONG heartbeats.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am.h"
#include "log.h"
#include "reg.h"
#include "verbs_int.h"

/* ---- active messages --------------------------------------------------------- */

/* Put a wire frame on cn as a SEND. 0, or 1 when no room (retry later). */
int vsend_frame(struct daemon *d, struct vconn *cn, const void *msg, uint32_t len,
		uint64_t pack_tag)
{
	struct verbs *v = VS(d);
	if (cn->tail - cn->head >= cn->W)
		return 1;
	struct vop *o = vop_slot(cn);
	if (len <= v->max_inline) {
		memcpy(o->inl, msg, len);
		o->sge = (struct ibv_sge){.addr = (uintptr_t)o->inl, .length = len};
		o->wr.send_flags = IBV_SEND_INLINE;
		STAT_INC(&d->vst, rdma_inline);
	} else {
		int64_t off = vbounce_alloc(cn, len, &o->bounce_end);
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
	struct wire_hdr h;
	memcpy(&h, msg, sizeof(h)); /* every frame starts with one (am_frame_pk) */
	if (h.type != W_PING && h.type != W_PONG) { /* they come with time, not with work */
		STAT_INC(&d->vst, rdma_msgs_out);
		STAT_ADD(&d->vst, rdma_bytes_out, len);
	}
	return 0;
}

/* Queued active messages go out once the connection is up. */
void vamq_push(struct daemon *d, int32_t node)
{
	struct vpeer *vp = &VS(d)->peers[node];
	struct vconn *cn = vp->out;
	if (!cn || cn->state != VC_UP)
		return;
	while (vp->amq) {
		struct vam *a = vp->amq;
		if (vsend_frame(d, cn, a->buf, a->len, a->pack_tag))
			return;
		vp->amq = a->next;
		if (!vp->amq)
			vp->amq_tail = &vp->amq;
		free(a);
	}
}

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
	struct vconn *cn = vconn_ready(d, node, &rc);
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
	if (cn && !vp->amq && vsend_frame(d, cn, a->buf, len, pack_tag) == 0) {
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

int verbs_am_send(struct daemon *d, int32_t node, uint8_t type, const void *ext, uint16_t hlen,
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
 * RDMA WRITE or READ posted after it could land first: verbs reorders, and
 * the conflict stage holds a client's overlapping operations. verbs keeps
 * only a strided/vector descriptor's elements in list order (verbs_rma,
 * packs_hold in verbs_rma.c). */

/* Send the open pack: one SEND (queued while the connection is busy). */
int vpack_close(struct daemon *d, int32_t node)
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
enum xp_result vpack_add(struct daemon *d, struct vconn *cn, const struct xp_req *rq,
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
void verbs_pack_release(struct daemon *d)
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
void vpack_reply(struct daemon *d, int32_t from, const struct wire_hdr *h, const char *ext,
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
		/* what the miss cost: the round trip its access waited for */
		addr_cache_resolved(&d->net.cache, now_ns() - x->sent_ns);
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
void vam_recv(struct daemon *d, int32_t from, const char *buf, uint32_t len)
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
	if (h.type != W_PING && h.type != W_PONG) {
		STAT_INC(&d->vst, rdma_msgs_in);
		STAT_ADD(&d->vst, rdma_bytes_in, len);
	}
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
		vpack_reply(d, from, &h, ext, payload);
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

/* ---- the resolve protocol (W_VRESOLVE): an address-cache miss -------------- */

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
 * (XP_STALL), or XP_ERROR (*err). A question sent counts the access's miss
 * (addr_cache_misses == rdma_resolves); its retries, and other accesses to
 * the key while the question is out, wait for the same answer. */
enum xp_result vresolve_miss(struct daemon *d, const struct addr_key *k, int32_t node,
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
	addr_cache_count(&d->net.cache, 0); /* the access's miss (verbs_rma) */
	return XP_STALL;
}

/* ---- failed connections, heartbeats --------------------------------------- */

/* The active messages after the failed work request at seq were flushed,
 * not sent (RC executes in order): they go back to the front of the
 * peer's queue for the reconnection, so that barrier, membership and
 * resolve messages of other jobs are not lost with the connection. */
void vamq_requeue(struct daemon *d, struct vconn *cn, uint64_t seq)
{
	struct vpeer *vp = &VS(d)->peers[cn->node];
	struct vam *first = NULL, **tail = &first;
	for (uint64_t k = seq + 1; k < cn->tail; k++) {
		struct vop *o = &cn->ring[k % cn->W];
		if (o->kind != VK_SEND || o->pack_tag)
			continue; /* a pack fails with the connection (vconn_close) */
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

/* Heartbeats on an outgoing connection that is up, as tcp has them (the
 * peer layer's policy): a PING every heartbeat_ms while none is
 * unanswered; a peer whose daemon said nothing for the silence limit since
 * a ping went unanswered is lost. Completions of RDMA operations do not
 * count: a stopped (SIGSTOP) or hung daemon's device still completes
 * them. */
void vheartbeat(struct daemon *d, int32_t node, uint64_t now)
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
