/*
 * verbs transport: the data path (see verbs_int.h for the files).
 *
 * verbs_rma takes the engine's neutral request: a small put or get goes
 * into the node's open pack (verbs_am.c), any other one is an RDMA WRITE
 * (inline, zero copy from a registered heap, or through the bounce ring
 * when its source is the client's staging arena) or an RDMA READ on the
 * outgoing connection's work-request ring, with the remote address and
 * rkey from the address cache (a miss asks the peer: vresolve_miss). The
 * rings are posted once per progress pass (vconn_post, one doorbell per
 * chain, every V_SIG_EVERY-th and the last work request signaled).
 * Completions (vcq_drain) retire the ring up to a signaled one, fail it on
 * an error (and reconnect), and hand received active messages to vam_recv.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "verbs_int.h"

/* ---- posting --------------------------------------------------------------- */

void vconn_post(struct daemon *d, struct vconn *cn)
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
		vconn_close(d, cn, -ECONNRESET);
		return;
	}
	STAT_ADD(&d->vst, rdma_wrs, cn->tail - first);
	STAT_ADD(&d->vst, rdma_signaled, nsig);
	cn->posted = cn->tail;
}

/* ---- data path ------------------------------------------------------------------ */

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

enum xp_result verbs_rma(struct daemon *d, const struct xp_req *rq, int *err)
{
	uint8_t vk; /* this operation's kind on the ring */
	switch (rq->kind) {
	case XP_PUT:
		vk = VK_PUT;
		break;
	case XP_GET:
		vk = VK_GET;
		break;
	case XP_AMO: /* a non-fetching one may join the pack, else W_AMO */
		if (!pack_eligible(d, rq))
			return xp_amo(d, rq, err);
		vk = VK_SEND; /* never posted as such: packed below */
		break;
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
	struct vconn *cn = vconn_ready(d, node, &rc);
	if (!cn)
		return rc ? xp_fail(err, rc) : XP_STALL;
	struct peer *p = &n->peers[node];
	if (pack_eligible(d, rq))
		return vpack_add(d, cn, rq, err);
	if (rq->kind == XP_AMO) /* pack_eligible said yes above */
		return xp_fail(err, xp_kind_refuse(d, rq->kind));
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
	/* counted once per access (this one may stall below and come back):
	 * a hit when it is posted, a miss when its resolve is sent */
	const struct addr_entry *e = addr_cache_find(&n->cache, &key);
	int hit = e != NULL;
	if (!e) {
		enum xp_result r = vresolve_miss(d, &key, node, &miss, err);
		if (r != XP_DONE)
			return r;
		e = &miss;
	}
	if (!hoist_range_ok(rq->off, rq->len, e->len))
		return xp_fail(err, -EFAULT);
	uint64_t raddr = e->base + rq->off;
	struct vop *o = vop_slot(cn);
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
			int64_t off = vbounce_alloc(cn, rq->len, &o->bounce_end);
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
		STAT_INC(&d->vst, rdma_msgs_out);
		STAT_ADD(&d->vst, rdma_bytes_out, rq->len);
		break;
	case XP_GET: {
		struct ibv_mr *mr = local_mr(rq->lmr, rq->laddr, rq->len);
		if (!mr)
			return xp_fail(err, -EFAULT);
		o->wr.opcode = IBV_WR_RDMA_READ;
		o->sge = (struct ibv_sge){.addr = (uintptr_t)rq->laddr, .length = len, .lkey = mr->lkey};
		STAT_INC(&d->vst, rdma_reads);
		STAT_INC(&d->vst, rdma_msgs_out);
		STAT_ADD(&d->vst, rdma_bytes_in, rq->len);
		break;
	}
	case XP_AMO:
	case XP_SEND:
		return xp_fail(err, xp_kind_refuse(d, rq->kind)); /* refused above already */
	}
	o->kind = vk;
	o->ck = rq->ck;
	cn->tail++;
	if (hit)
		addr_cache_count(&n->cache, 1);
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

void vrecv_repost(struct verbs *v, uint32_t i)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(v->rbufs + (size_t)i * V_RECV_BUF),
			      .length = V_RECV_BUF, .lkey = v->rmr->lkey};
	struct ibv_recv_wr wr = {.wr_id = (1ull << 63) | i, .sg_list = &sge, .num_sge = 1}, *bad;
	if (ibv_post_srq_recv(v->srq, &wr, &bad))
		hlog_err("cannot repost a receive buffer");
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
				vam_recv(d, cn->node, v->rbufs + (size_t)i * V_RECV_BUF, wc->byte_len);
		}
		vrecv_repost(v, i);
		return;
	}
	uint32_t slot = (uint32_t)(wc->wr_id >> 48);
	uint16_t gen = (uint16_t)(wc->wr_id >> 32);
	struct vconn *cn = slot < v->nslots ? v->slots[slot] : NULL;
	if (!cn || cn->gen != gen || !cn->ring)
		return; /* a connection closed meanwhile */
	uint64_t seq = cn->head + (uint32_t)((uint32_t)wc->wr_id - (uint32_t)cn->head);
	if (wc->status == IBV_WC_SUCCESS) {
		vring_retire(d, cn, seq + 1, 0);
		return;
	}
	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		return; /* follows the error that closes the connection */
	STAT_INC(&d->vst, rdma_wc_errors);
	int32_t node = cn->node;
	hlog_warn("work request to node %d failed: %s (vendor error 0x%x); reconnecting", node,
		  ibv_wc_status_str(wc->status), wc->vendor_err);
	vring_retire(d, cn, seq, 0);
	if (cn->head == seq && cn->head < cn->tail) {
		struct vop o = cn->ring[cn->head % cn->W];
		cn->head++;
		if (o.bounce_end)
			cn->bhead = o.bounce_end;
		vop_deliver(d, cn->node, &o, wc_errno(wc->status));
	}
	/* the peer is gone or unreachable: as a disconnect */
	if (wc->status == IBV_WC_RETRY_EXC_ERR) {
		vpeer_lost(d, node, "no response (transport retries exceeded)");
		return;
	}
	if (v->slots[slot] == cn && cn->gen == gen) {
		vamq_requeue(d, cn, seq);
		vconn_close(d, cn, -ECONNRESET);
	}
	addr_cache_invalidate_node(&d->net.cache, node);
}

int vcq_drain(struct daemon *d)
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
