/*
 * verbs transport: connection management (see verbs_int.h for the files).
 *
 * rdma_cm events on the event channel (vcm_drain): an outgoing connection
 * resolves the peer's address and route, creates its queue pair and
 * connects with the keyed handshake in the private data (HMAC with the
 * cluster key over a fresh timestamped nonce, the peer layer's MACs and
 * replay window); a connect request is checked, accepted with the
 * acceptor's MAC, or rejected (V_REJECT_AUTH: lost for good;
 * V_REJECT_BUSY: try again); failures before a connection is up retry
 * with the peer layer's backoff (connect_failed), a disconnect of an
 * outgoing connection loses the peer.
 */
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "verbs_int.h"

/* ---- authentication ------------------------------------------------------ */

/* The MACs and the replay window are the peer layer's (peer.h): label
 * V_HS_LABEL, the 16-byte timestamped nonce of struct wire_vconnect. */

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- queue pairs, retries ------------------------------------------------ */

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
				vpinned_add(d, (int64_t)cn->bsize);
			}
			return 0;
		}
	}
	return errno ? -errno : -EIO;
}

/* An outgoing attempt failed before it was up: retry with backoff while
 * within peer_timeout_ms of the first attempt. */
static void connect_failed(struct daemon *d, struct vconn *cn, const char *why)
{
	int32_t node = cn->node;
	struct peer_link *l = &d->net.peers[node].link;
	vconn_close(d, cn, -ECONNRESET);
	if (peer_backoff(l, now_ns(), d->cfg.peer_timeout_ms * 1000000ull)) {
		vpeer_lost(d, node, why);
		return;
	}
	STAT_INC(&d->vst, rdma_cm_retries);
	hlog_debug("connection to node %d: %s; retrying in %u ms", node, why, l->backoff_ms);
}

/* ---- rdma_cm events -------------------------------------------------------------- */

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
	vcq_drain(d);
	cn = v->slots[slot];
	if (cn && cn->gen == gen)
		vconn_close(d, cn, -ECONNRESET);
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
	struct vconn *cn = vconn_new(d, req.node, 0);
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
		vconn_unslot(d, cn);
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
		vconn_close(d, cn, -ECONNRESET);
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
	vamq_push(d, cn->node);
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
			vconn_close(d, cn, -ECONNRESET);
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

int vcm_drain(struct daemon *d)
{
	struct rdma_cm_event *ev;
	int k = 0;
	while (rdma_get_cm_event(VS(d)->ch, &ev) == 0) {
		cm_event(d, ev);
		k++;
	}
	return k;
}
