/*
 * verbs transport (progress thread): libibverbs + librdmacm between daemons.
 * This file is its transport_ops table (start/stop, poll/arm/flush/timers,
 * registration, orphan); the rest is split by what it does, files listed
 * in verbs_int.h: verbs_cm.c (connection management), verbs_rma.c (RDMA
 * and completions), verbs_am.c (active messages, packs, resolve,
 * heartbeats), verbs_conn.c (a peer's connections, rings and their loss).
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
 *   overlapping operations; verbs only keeps a strided/vector
 *   descriptor's elements in list order (see verbs_rma).
 * - Active messages (wire.h frames: header, extension, payload) are SENDs
 *   into a shared receive queue of pre-posted buffers, reposted as each is
 *   consumed. An address-cache miss sends W_VRESOLVE; the operation waits
 *   (XP_STALL) until W_VRESOLVE_REPLY brings base, rkey and generation.
 * - Packed operations (small puts/gets, strided/vector elements,
 *   aggregation regions) are W_PACK active messages answered by
 *   W_PACK_REPLY ones, as tcp frames them; building, serving and answering
 *   them is the pack layer's (pack.h; see the packs section of verbs_am.c).
 * - A failed completion, a disconnect, a reject after peer_timeout_ms of
 *   retries (the peer layer's backoff) fail the affected operations with
 *   -ECONNRESET and tear the connection down; the next operation
 *   reconnects (active messages the failure flushed are requeued for it).
 *   A lost peer goes through the peer layer's loss path (peer_lost: its
 *   jobs fail as with tcp); vpeer_drop (verbs_conn.c) is what it drops.
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
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "frames.h"
#include "log.h"
#include "loop.h"
#include "reg.h"
#include "verbs_int.h"

/* ---- progress ---------------------------------------------------------------------- */

/* The end of a progress pass: the open packs due, queued active messages,
 * every ring's built work requests posted (one doorbell per connection). */
static void verbs_flush(struct daemon *d)
{
	struct verbs *v = VS(d);
	struct net *n = &d->net;
	pack_flush(d, 0, vpack_close); /* the open packs due at the end of a pass */
	for (int32_t i = 0; i < n->nnodes; i++) {
		struct vpeer *vp = &v->peers[i];
		if (vp->amq)
			vamq_push(d, i);
		if (vp->out)
			vconn_post(d, vp->out);
	}
}

/* Busy passes poll the CQ (user space); the channels' descriptors are in
 * the progress loop's epoll, looked at every 32nd busy pass (fd_pass_mask:
 * rdma_cm events are rare, and the completion channel only matters when
 * armed, i.e. when the loop sleeps), and whenever it sleeps. */
static int verbs_poll(struct daemon *d)
{
	return vcq_drain(d);
}

/* The loop is about to sleep: arm the completion channel, then look once
 * more (a completion between the last poll and the arming raises no
 * event). */
static int verbs_arm(struct daemon *d)
{
	struct verbs *v = VS(d);
	int work = vcq_drain(d);
	if (work)
		return work;
	if (!v->armed && ibv_req_notify_cq(v->cq, 0) == 0)
		v->armed = 1;
	return vcq_drain(d);
}

static int cm_ready(struct daemon *d, void *arg, uint32_t events)
{
	(void)arg;
	(void)events;
	return vcm_drain(d);
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
	return vcq_drain(d);
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
			int rc = vconnect_start(d, i);
			if (rc)
				vpeer_lost(d, i, strerror(-rc));
		} else if (!vp->out && !l->retry_at_ns && vp->amq) {
			int rc; /* requeued messages wait for a connection */
			vconn_ready(d, i, &rc);
		}
		if (cn && cn->state == VC_UP && vp->out == cn && ping_due)
			vheartbeat(d, i, now);
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
		vrecv_repost(v, i);
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
	vpinned_add(d, (int64_t)V_NRECV * V_RECV_BUF);
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
		vconn_close(d, cn, -ECONNRESET);
	}
	for (int32_t i = 0; v->peers && i < n->nnodes; i++)
		vamq_fail(&v->peers[i]);
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
