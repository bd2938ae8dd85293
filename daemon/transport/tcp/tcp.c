/*
 * tcp transport (progress thread): its wire. Connections (tcp_lanes per
 * peer), the handshake's frames (PeerHello), framing with partial reads and
 * writes, credits, striping of large transfers over the lanes, the address
 * cache on the request side and the pinned table's keys (reg.c) on the
 * serving side, pings on every lane and which lane is silent. A read
 * gives way to the clients' rings every tcp_rx_batch frames (rx_yield). What it
 * shares with verbs is the peer layer's (peer.h): peer state and retries,
 * when a ping is due and when silence means lost, the loss path (tcp drops
 * its lanes in peer_drop), the handshake's MACs and hello rules,
 * resolution by name. See wire.h for the frames and tcp.h for the objects.
 */
#include "tcp.h"

#include <errno.h>
#include <netinet/tcp.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "am.h"
#include "cmdq.h"
#include "loop.h"
#include "overlap.h"
#include "pack.h"
#include "reg.h"
#include "daemon.h"
#include "transport.h"
#include "hoist.pb-c.h"
#include "log.h"

#define RBUF_BYTES (256u * 1024u)
#define HS_MAX 512u
#define ACCEPT_PAUSE_NS (100000000ull) /* out of descriptors: accept again after 100 ms */

static void conn_free(struct daemon *d, struct netconn *c);
static void busy_arm(struct daemon *d);
static void conn_event(struct daemon *d, struct netconn *c, uint32_t ev);
static void conn_release(struct netconn *c);
static void tcp_peer_lost(struct daemon *d, struct peer *p, const char *why);
static int pack_close(struct daemon *d, int32_t node);
static struct lane *lane_for(const struct daemon *d, struct peer *p, const struct xp_req *rq,
			     uint64_t plen);
static uint32_t lane_bound(const struct peer *p, const struct xp_req *rq);
static int busy_other_work(struct daemon *d);

/* ---- output buffers ---------------------------------------------------- */

static uint64_t ob_pending(const struct outbuf *o)
{
	return o->tail - o->head;
}

static int ob_reserve(struct outbuf *o, uint64_t n)
{
	if (o->cap - o->tail >= n)
		return 0;
	if (o->head) { /* compact */
		memmove(o->buf, o->buf + o->head, o->tail - o->head);
		o->tail -= o->head;
		o->head = 0;
		if (o->cap - o->tail >= n)
			return 0;
	}
	uint64_t cap = o->cap ? o->cap : 65536;
	while (cap - o->tail < n)
		cap *= 2;
	char *b = realloc(o->buf, cap);
	if (!b)
		return -ENOMEM;
	o->buf = b;
	o->cap = cap;
	return 0;
}

static void ob_append(struct outbuf *o, const void *p, uint64_t n)
{
	memcpy(o->buf + o->tail, p, n);
	o->tail += n;
}

/* One frame of bytes (header + ext + payload) sent on c: counted in
 * tcp_msgs_out/tcp_bytes_out, but for heartbeats, which come with time,
 * not with operations. */
static void tx_count(struct netconn *c, uint8_t type, uint64_t bytes)
{
	if (type == W_PING || type == W_PONG)
		return;
	STAT_INC(c->pst, tcp_msgs_out);
	STAT_ADD(c->pst, tcp_bytes_out, bytes);
}

/* header + ext + payload into the connection's buffer */
static int frame_queue(struct netconn *c, uint8_t type, uint64_t tag, const void *ext, uint16_t hlen,
		       const void *payload, uint64_t plen)
{
	struct wire_hdr h = {.plen = (uint32_t)plen, .type = type, .hlen = hlen, .tag = tag};
	if (ob_reserve(&c->out, sizeof(h) + hlen + plen))
		return -ENOMEM;
	ob_append(&c->out, &h, sizeof(h));
	if (hlen)
		ob_append(&c->out, ext, hlen);
	if (plen)
		ob_append(&c->out, payload, plen);
	tx_count(c, type, sizeof(h) + hlen + plen);
	return 0;
}

/* ---- the progress loop's epoll (loop.h) --------------------------------- */

/* Events on a connection. A connection closed meanwhile (this event's
 * handling may lose a peer, closing others) is freed after it, not under
 * the code still using it (graveyard). */
static int conn_ready(struct daemon *d, void *arg, uint32_t events)
{
	struct net *n = &d->net;
	struct netconn *c = arg;
	if (c->dead)
		return 0;
	n->in_batch = 1;
	conn_event(d, c, events);
	n->in_batch = 0;
	while (n->graveyard) {
		struct netconn *g = n->graveyard;
		n->graveyard = g->next;
		conn_release(g);
	}
	return 1;
}

static void ep_watch(struct net *n, struct netconn *c, uint32_t events)
{
	if (c->epoll_events == events)
		return;
	int rc = c->epoll_events ? loop_mod(n->loop, c->fd, events)
				 : loop_add(n->loop, c->fd, events, conn_ready, c);
	if (rc == 0)
		c->epoll_events = events;
}

/* ---- sockets ----------------------------------------------------------- */

static void sock_tune(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static struct netconn *conn_new(struct daemon *d, int fd, int outgoing, int32_t node)
{
	struct netconn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->rbuf = malloc(RBUF_BYTES);
	if (!c->rbuf) {
		free(c);
		return NULL;
	}
	c->rin = c->rbuf;
	c->fd = fd;
	c->outgoing = outgoing;
	c->node = node;
	c->last_rx_ns = c->born_ns = now_ns();
	c->pst = &d->pst;
	STAT_INC(c->pst, tcp_conns);
	return c;
}

/* Bytes not yet taken by the socket: plain frames and sealed records. */
static uint64_t conn_pending(const struct netconn *c)
{
	return ob_pending(&c->out) + ob_pending(&c->sealed);
}

/* Sealed bytes queued ahead of the socket before sealing more: four
 * records. (One record per send measured ~40% less 1 MiB put bandwidth
 * on a shared 2-CPU machine than four or sixteen: more sends and wake-ups
 * of the receiver for the same bytes.) */
#define SEAL_AHEAD (4u * FRAMES_REC_MAX)

/* Seal queued plain frames into records (frame_integrity mac/encrypt).
 * 0 or -errno. */
static int conn_seal(struct netconn *c)
{
	while (ob_pending(&c->out) && ob_pending(&c->sealed) < SEAL_AHEAD) {
		uint64_t n = ob_pending(&c->out);
		if (n > FRAMES_REC_MAX)
			n = FRAMES_REC_MAX;
		if (ob_reserve(&c->sealed, n + FRAMES_OVERHEAD))
			return -ENOMEM;
		int rc = frames_seal(c->fr, c->out.buf + c->out.head, (uint32_t)n,
				     (uint8_t *)c->sealed.buf + c->sealed.tail);
		if (rc)
			return rc;
		c->sealed.tail += n + FRAMES_OVERHEAD;
		c->out.head += n;
	}
	return 0;
}

/* Write what the socket takes. 0, or -errno when the connection broke. */
static int conn_flush(struct daemon *d, struct netconn *c)
{
	for (;;) {
		struct outbuf *o = &c->out;
		if (c->fr) {
			int rc = conn_seal(c);
			if (rc)
				return rc;
			o = &c->sealed;
		}
		if (!ob_pending(o))
			break;
		ssize_t w = send(c->fd, o->buf + o->head, ob_pending(o), MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				ep_watch(&d->net, c, EPOLLIN | EPOLLOUT);
				return 0;
			}
			if (errno == EINTR)
				continue;
			return -errno;
		}
		o->head += (uint64_t)w;
		/* the peer takes our bytes: it is alive, even if it has nothing
		 * to say (its ping may queue behind the data it is reading) */
		c->last_rx_ns = now_ns();
	}
	c->out.head = c->out.tail = 0;
	c->sealed.head = c->sealed.tail = 0;
	ep_watch(&d->net, c, EPOLLIN);
	return 0;
}

/* ---- handshake --------------------------------------------------------- */

/* tcp's handshake MACs (peer.h): label "", the 32-byte nonces. */
#define TCP_HS_LABEL ""

/* Handshake frames go straight to the fresh socket (they are tiny), never
 * through the output buffer that already holds queued requests. */
static int hs_send(struct daemon *d, struct netconn *c, uint8_t type, const uint8_t *mac)
{
	Hoist__PeerHello h = HOIST__PEER_HELLO__INIT;
	h.proto_version = WIRE_VERSION;
	h.node_id = (uint32_t)d->net.self;
	h.cluster_nodes = (uint32_t)d->net.nnodes;
	h.frame_integrity = (uint32_t)d->net.frames_mode;
	h.frame_aes = (uint32_t)d->net.frames_aes;
	if (type == W_HELLO) {
		randombytes_buf(c->nonce, sizeof(c->nonce));
		h.nonce.data = c->nonce;
		h.nonce.len = sizeof(c->nonce);
	}
	if (mac) {
		h.mac.data = (uint8_t *)mac;
		h.mac.len = 32;
	}
	uint8_t buf[sizeof(struct wire_hdr) + HS_MAX];
	size_t plen = hoist__peer_hello__get_packed_size(&h);
	if (plen > HS_MAX)
		return -EMSGSIZE;
	struct wire_hdr hdr = {.plen = (uint32_t)plen, .type = type};
	memcpy(buf, &hdr, sizeof(hdr));
	hoist__peer_hello__pack(&h, buf + sizeof(hdr));
	ssize_t w = send(c->fd, buf, sizeof(hdr) + plen, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (w != (ssize_t)(sizeof(hdr) + plen))
		return -EIO;
	tx_count(c, type, sizeof(hdr) + plen);
	return 0;
}

/* Every daemon of a cluster uses the same frame_integrity: 0, or
 * -EPROTONOSUPPORT (logged with both modes). */
static int hs_mode_check(struct daemon *d, const Hoist__PeerHello *h, int32_t node)
{
	int mine = d->net.frames_mode;
	if (h->frame_integrity == (uint32_t)mine)
		return 0;
	hlog_warn("refused node %d: frame_integrity mismatch (this daemon: %s, node %d: %s); every "
		  "daemon of a cluster must use the same",
		  node, frames_mode_name(mine), node,
		  frames_mode_name(h->frame_integrity <= FRAMES_ENCRYPT ? (int)h->frame_integrity : -1));
	return -EPROTONOSUPPORT;
}

/* The handshake is done: from here on frames travel in records (unless
 * frame_integrity is off), each direction under its own session key. Bytes
 * already read behind the handshake's last frame are record bytes. */
static int conn_records_start(struct net *n, struct netconn *c, const uint8_t *peer_nonce,
			      int peer_aes)
{
	if (n->frames_mode == FRAMES_OFF)
		return 0;
	size_t sz = (sizeof(struct frames) + 63) & ~(size_t)63;
	struct frames *f = aligned_alloc(64, sz);
	if (!f)
		return -ENOMEM;
	int co = c->outgoing;
	frames_init(f, n->frames_mode, n->frames_aes && peer_aes, n->key, co,
		    co ? c->nonce : peer_nonce, co ? peer_nonce : c->nonce, co ? n->self : c->node,
		    co ? c->node : n->self);
	c->fr = f;
	c->xpos = c->rpos;
	c->xlen = c->rlen;
	c->rpos = c->rlen; /* the parse window is empty: the next record fills it */
	hlog_debug("node %d: frames in records (%s, %s)", c->node, frames_mode_name(f->mode),
		   frames_aead_name(f->aes));
	return 0;
}

/* Every lane of the peer finished its handshake. */
static int peer_lanes_up(const struct peer *p)
{
	for (uint32_t k = 0; k < p->nlanes; k++)
		if (!p->lanes[k].conn || p->lanes[k].conn->phase != PH_UP)
			return 0;
	return 1;
}

static int hs_check(struct daemon *d, const Hoist__PeerHello *h)
{
	return h && peer_hello_ok(h->proto_version, h->cluster_nodes, h->node_id, d->net.self,
				  d->net.nnodes);
}

/* A handshake frame arrived (payload in c->rbuf-independent scratch). */
static int hs_frame(struct daemon *d, struct netconn *c, const uint8_t *payload, uint32_t plen)
{
	struct net *n = &d->net;
	Hoist__PeerHello *h = hoist__peer_hello__unpack(NULL, plen, payload);
	int rc = -EPROTO;
	uint8_t mac[32];
	if (!h)
		return -EPROTO;
	if (c->outgoing && c->phase == PH_WAIT_HELLO && c->hdr.type == W_HELLO) {
		/* acceptor's answer: check its mac over our nonce, prove ours */
		struct peer *p = &n->peers[c->node];
		if (!hs_check(d, h) || (int32_t)h->node_id != c->node || h->nonce.len != 32 ||
		    peer_hs_verify(n->key, TCP_HS_LABEL, "acceptor", c->nonce, sizeof(c->nonce),
				   c->node, n->self, h->mac.data, h->mac.len)) {
			STAT_INC(&p->st, auth_failures);
			hlog_warn("peer %s failed authentication (wrong cluster key or node list?)",
				  p->name);
			rc = -EACCES;
			goto out;
		}
		if ((rc = hs_mode_check(d, h, c->node)))
			goto out;
		peer_hs_mac(n->key, TCP_HS_LABEL, "connector", h->nonce.data, h->nonce.len, c->node,
			    n->self, mac);
		if ((rc = hs_send(d, c, W_AUTH, mac)))
			goto out;
		if ((rc = conn_records_start(n, c, h->nonce.data, h->frame_aes == 1)))
			goto out;
		c->phase = PH_UP;
		STAT_INC(&p->st, connects);
		if (peer_lanes_up(p)) {
			peer_up(&p->link, now_ns());
			hlog_info("connected to node %d (%s, %u lane%s)", p->node, p->name, p->nlanes,
				  p->nlanes == 1 ? "" : "s");
		}
		rc = conn_flush(d, c); /* requests queued while connecting */
	} else if (!c->outgoing && c->phase == PH_WAIT_FIRST && c->hdr.type == W_HELLO) {
		if (!hs_check(d, h) || h->nonce.len != 32) {
			hlog_warn("refused a peer connection: bad hello (version, node id or node count)");
			goto out;
		}
		c->node = (int32_t)h->node_id;
		memcpy(c->peer_nonce, h->nonce.data, sizeof(c->peer_nonce));
		c->peer_aes = h->frame_aes == 1;
		peer_hs_mac(n->key, TCP_HS_LABEL, "acceptor", h->nonce.data, h->nonce.len, n->self,
			    c->node, mac);
		if ((rc = hs_send(d, c, W_HELLO, mac)))
			goto out;
		/* a mismatch is refused after our hello, so that the connector
		 * (which checks our mac first) names both modes too */
		if ((rc = hs_mode_check(d, h, c->node)))
			goto out;
		c->phase = PH_WAIT_AUTH;
	} else if (!c->outgoing && c->phase == PH_WAIT_AUTH && c->hdr.type == W_AUTH) {
		if (peer_hs_verify(n->key, TCP_HS_LABEL, "connector", c->nonce, sizeof(c->nonce),
				   n->self, c->node, h->mac.data, h->mac.len)) {
			STAT_INC(&n->peers[c->node].st, auth_failures);
			hlog_warn("refused node %d: it does not hold the cluster key", c->node);
			rc = -EACCES;
			goto out;
		}
		if ((rc = conn_records_start(n, c, c->peer_nonce, c->peer_aes)))
			goto out;
		c->phase = PH_UP;
		/* it is alive: a lost mark from an earlier attempt is void */
		peer_alive(&n->peers[c->node].link);
		rc = 0;
	}
out:
	hoist__peer_hello__free_unpacked(h, NULL);
	return rc;
}

/* ---- connections ------------------------------------------------------- */

/* Open lane k of the peer: each lane is a connection of its own, with its
 * own handshake, records and ring of requests. */
static int lane_connect(struct daemon *d, struct peer *p, uint32_t k)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	sock_tune(fd);
	if (connect(fd, (struct sockaddr *)&p->addr, sizeof(p->addr)) < 0 && errno != EINPROGRESS) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	struct netconn *c = conn_new(d, fd, 1, p->node);
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->phase = PH_CONNECTING;
	c->lane = k;
	struct lane *l = &p->lanes[k];
	l->conn = c;
	l->ring_head = l->ring_tail = 0;
	l->ping_due = 0;
	ep_watch(&d->net, c, EPOLLIN | EPOLLOUT);
	return 0;
}

/* Open every lane (a failure leaves the ones opened to tcp_peer_lost). */
static int peer_connect(struct daemon *d, struct peer *p)
{
	peer_trying(&p->link, now_ns());
	for (uint32_t k = 0; k < p->nlanes; k++) {
		int rc = lane_connect(d, p, k);
		if (rc)
			return rc;
	}
	return 0;
}

/* Make sure a usable outgoing connection exists or is being made.
 * 0, or -ECONNRESET while the peer counts as lost. */
static int peer_ensure(struct daemon *d, struct peer *p)
{
	if (p->link.state == PEER_UP || p->link.state == PEER_CONNECTING)
		return 0;
	if (peer_may_try(&p->link, now_ns()))
		return -ECONNRESET;
	int rc = peer_connect(d, p);
	if (rc) {
		tcp_peer_lost(d, p, strerror(-rc));
		return -ECONNRESET;
	}
	return 0;
}

static void conn_unlink(struct net *n, struct netconn *c)
{
	struct netconn **pp = &n->incoming;
	while (*pp && *pp != c)
		pp = &(*pp)->next;
	if (*pp)
		*pp = c->next;
}

/* c's read goes on: it is no longer waiting in net_poll's list */
static void rx_unhold(struct net *n, struct netconn *c)
{
	if (c->rx_held) {
		c->rx_held = 0;
		n->rx_held--;
	}
}

static void conn_release(struct netconn *c)
{
	STAT_ADD(c->pst, tcp_conns, (uint64_t)-1);
	free(c->pctx); /* a frame's context not handed on yet */
	if (c->fr) {
		frames_wipe(c->fr);
		free(c->fr);
	}
	free(c->sealed.buf);
	free(c->out.buf);
	free(c->rbuf);
	free(c);
}

/* Close now; free now, or after the event being handled (conn_ready),
 * whose code may still use it. */
static void conn_free(struct daemon *d, struct netconn *c)
{
	rx_unhold(&d->net, c);
	if (!c->outgoing)
		conn_unlink(&d->net, c);
	loop_del(d->net.loop, c->fd);
	close(c->fd);
	c->fd = -1;
	if (d->net.in_batch) {
		c->dead = 1;
		c->next = d->net.graveyard;
		d->net.graveyard = c;
		return;
	}
	conn_release(c);
}

/* Request f (not a pack) ended with res: complete its operation, or, one
 * chunk of a striped one, the operation once its last chunk ended (with
 * the first error of any chunk). f may be reused by what the completion
 * issues. */
static void inflight_complete(struct daemon *d, const struct inflight *f, int32_t res)
{
	struct xp_cookie ck = f->ck;
	struct stripe *s = f->stripe;
	if (s) {
		if (res && !s->res)
			s->res = res;
		if (--s->left)
			return;
		res = s->res;
		free(s);
	}
	progress_complete(d, &ck, res);
}

/* Every request still waiting on the lane fails. */
static void lane_fail(struct daemon *d, const struct peer *p, struct lane *l)
{
	while (l->ring_head != l->ring_tail) {
		struct inflight *f = &l->ring[l->ring_head++ % p->window];
		if (f->type == W_PACK) {
			struct pack_slot *s = f->pk;
			uint32_t ns = f->npk;
			f->pk = NULL;
			f->npk = 0;
			pack_finish(d, s, ns, -ECONNRESET);
			continue;
		}
		inflight_complete(d, f, -ECONNRESET);
	}
	l->ring_head = l->ring_tail = 0;
}

/* The peer layer's loss path drops tcp's wire: every connection to and
 * from the peer, every request still waiting on any lane (losing one lane
 * loses the peer), the open pack. */
static void peer_drop(struct daemon *d, int32_t node, void *arg)
{
	struct net *n = &d->net;
	struct peer *p = arg;
	for (uint32_t k = 0; k < p->nlanes; k++) {
		struct lane *l = &p->lanes[k];
		if (l->conn) {
			conn_free(d, l->conn);
			l->conn = NULL;
		}
	}
	for (struct netconn *c = n->incoming, *next; c; c = next) {
		next = c->next;
		if (c->node == node)
			conn_free(d, c);
	}
	for (uint32_t k = 0; k < p->nlanes; k++)
		lane_fail(d, p, &p->lanes[k]);
	pack_fail_open(d, &p->pack, -ECONNRESET);
}

static void tcp_peer_lost(struct daemon *d, struct peer *p, const char *why)
{
	peer_lost(d, p->node, &p->link, &p->st, p->name, why, peer_drop, p);
}

/* A connection broke or misbehaved. */
static void conn_fail(struct daemon *d, struct netconn *c, const char *why)
{
	struct net *n = &d->net;
	if (c->outgoing || c->phase == PH_UP) {
		tcp_peer_lost(d, &n->peers[c->node], why); /* frees c */
		return;
	}
	conn_free(d, c); /* an unauthenticated stranger: just drop it */
}

/* One line per ten seconds at most about strangers we turned away: a flood
 * must not become a flood of log lines. */
static void flood_log(struct net *n, const char *what)
{
	uint64_t now = now_ns();
	n->flood_unlogged++;
	if (now < n->next_flood_log_ns)
		return;
	hlog_warn("peer connections: %s (%llu such event(s) since the last line)", what,
		  (unsigned long long)n->flood_unlogged);
	n->flood_unlogged = 0;
	n->next_flood_log_ns = now + 10000000000ull;
}

static void listen_watch(struct net *n, uint32_t events)
{
	loop_mod(n->loop, n->listen_fd, events);
}

/* Out of descriptors: stop looking at the listening socket for a while
 * (level-triggered epoll would report it ready on every pass, a busy loop)
 * and take it up again from the timers. */
static void accept_pause(struct daemon *d, int err)
{
	struct net *n = &d->net;
	n->accept_paused_until = now_ns() + ACCEPT_PAUSE_NS;
	listen_watch(n, 0);
	STAT_INC(&d->pst, accept_pauses);
	char what[160];
	snprintf(what, sizeof(what), "accept: %s; not accepting for %llu ms", strerror(err),
		 (unsigned long long)(ACCEPT_PAUSE_NS / 1000000));
	flood_log(n, what);
}

/* Connections not yet authenticated (incoming): at most max_pending_peers;
 * a newcomer beyond that pushes out the oldest, so that a stranger holding
 * many open cannot keep a real peer from getting through for long. */
static void pending_cap(struct daemon *d)
{
	struct net *n = &d->net;
	uint64_t pending = 0;
	struct netconn *oldest = NULL;
	for (struct netconn *c = n->incoming; c; c = c->next)
		if (c->phase != PH_UP && !c->dead) {
			pending++;
			oldest = c; /* the list is newest first */
		}
	if (pending <= d->cfg.max_pending_peers || !oldest)
		return;
	STAT_INC(&d->pst, peer_conns_dropped);
	char what[120];
	snprintf(what, sizeof(what), "more than max_pending_peers=%llu in their handshake; dropped "
		 "the oldest", (unsigned long long)d->cfg.max_pending_peers);
	flood_log(n, what);
	conn_free(d, oldest);
}

static void accept_all(struct daemon *d)
{
	struct net *n = &d->net;
	for (;;) {
		int fd = accept4(n->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				accept_pause(d, errno);
			return;
		}
		sock_tune(fd);
		struct netconn *c = conn_new(d, fd, 0, -1);
		if (!c) {
			close(fd);
			accept_pause(d, ENOMEM);
			return;
		}
		c->phase = PH_WAIT_FIRST;
		c->next = n->incoming;
		n->incoming = c;
		ep_watch(n, c, EPOLLIN);
		pending_cap(d);
	}
}

/* ---- serving a peer's requests ---------------------------------------- */

/* A target by name: (job, PE, segment, offset). */
static int resolve_name(struct daemon *d, const struct wire_target *t, char **dst,
			struct wire_entry *entry)
{
	struct client *cl;
	int rc = peer_target_client(d, t, &cl);
	if (rc)
		return rc;
	if (!hoist_range_ok(t->off, t->len, cl->heap.bytes))
		return -EFAULT;
	*dst = (char *)cl->heap.base + t->off;
	if (reg_entry(d, cl, entry)) /* not in the pinned table: by name only */
		memset(entry, 0, sizeof(*entry));
	return 0;
}

/* Resolve a request's target to local memory. 0 and *dst, or -errno. */
static int resolve(struct daemon *d, struct netconn *c, char **dst, uint64_t *len,
		   struct wire_entry *entry)
{
	memset(entry, 0, sizeof(*entry));
	if (c->hdr.type == W_PUT_AM || c->hdr.type == W_GET_AM) {
		if (c->hdr.hlen != sizeof(struct wire_target))
			return -EPROTO;
		struct wire_target t;
		memcpy(&t, c->ext, sizeof(t));
		*len = t.len;
		return resolve_name(d, &t, dst, entry);
	}
	if (c->hdr.hlen != sizeof(struct wire_direct))
		return -EPROTO;
	struct wire_direct w;
	memcpy(&w, c->ext, sizeof(w));
	*len = w.len;
	if (w.name.len != w.len)
		return -EPROTO;
	const struct reg_pin *p = reg_find(d, w.rkey, w.gen);
	if (!p)
		return resolve_name(d, &w.name, dst, entry); /* stale key */
	uint64_t base = (uint64_t)(uintptr_t)p->base;
	if (w.addr < base || !hoist_range_ok(w.addr - base, w.len, p->len))
		return -EFAULT;
	*dst = p->base + (w.addr - base);
	return 0;
}

/* A put's payload is in the target's heap: wake the PE if it waits in
 * hoist_wait_until* on words it covers (the header still names it; the
 * payload went to pdst). */
static void put_landed(struct daemon *d, struct netconn *c)
{
	struct wire_target t;
	if (c->hdr.type == W_PUT_AM) {
		memcpy(&t, c->ext, sizeof(t));
	} else {
		struct wire_direct w;
		memcpy(&w, c->ext, sizeof(w));
		t = w.name;
	}
	struct client *cl;
	if (peer_target_client(d, &t, &cl) != 0)
		return;
	char *base = cl->heap.base;
	if (c->pdst >= base && c->pdst < base + cl->heap.bytes)
		client_heap_touched_range(d, cl, (uint64_t)(c->pdst - base), c->hdr.plen);
	else
		client_heap_touched(d, cl);
}

static void serve_get(struct daemon *d, struct netconn *c, struct peer *p)
{
	char *src = NULL;
	uint64_t len = 0;
	struct wire_reply r = {0};
	r.status = resolve(d, c, &src, &len, &r.entry);
	if (r.status == 0 && len > WIRE_MAX_PAYLOAD)
		r.status = -EMSGSIZE;
	if (r.status == 0) {
		STAT_INC(&p->st, ops_in);
		STAT_ADD(&p->st, bytes_in, len);
	}
	if (frame_queue(c, W_GET_REPLY, c->hdr.tag, &r, sizeof(r), src, r.status ? 0 : len))
		hlog_err("out of memory answering node %d", c->node);
}

/* A peer's W_PACK (payload in c->pctx): served by the pack layer (a
 * malformed one is refused whole and answered -EPROTO, pack.h), the reply
 * written in place into the send buffer. */
static int serve_pack(struct daemon *d, struct netconn *c)
{
	struct wire_pack w;
	memcpy(&w, c->ext, sizeof(w));
	uint64_t hl = sizeof(struct wire_hdr) + sizeof(struct wire_pack_reply);
	if (ob_reserve(&c->out, hl + WIRE_AM_MAX_PAYLOAD))
		return -ENOMEM;
	char *frame = c->out.buf + c->out.tail;
	struct wire_pack_reply rep;
	uint64_t rpos = pack_serve(d, c->node, &w, c->hdr.hlen == sizeof(w), c->pctx, c->hdr.plen,
				   frame + hl, &rep);
	struct wire_hdr h = {.plen = (uint32_t)rpos, .type = W_PACK_REPLY,
			     .hlen = sizeof(struct wire_pack_reply), .tag = c->hdr.tag};
	memcpy(frame, &h, sizeof(h));
	memcpy(frame + sizeof(h), &rep, sizeof(rep));
	c->out.tail += hl + rpos;
	tx_count(c, W_PACK_REPLY, hl + rpos);
	return 0;
}

/* Bytes of our pack f's reply as they arrive: element results and get
 * data straight to the destinations (no staging copy). Checked as it goes
 * (pack_res_ok); a malformed reply marks pk_err, the rest of its bytes is
 * skipped and the frame's end fails every element (pack.h's rule). A client that left has its slots cleared
 * (net_orphan_client): its data is dropped. */
static void pack_stream(struct netconn *c, struct inflight *f, const char *in, uint64_t n)
{
	if (!f)
		c->pk_err = 1;
	while (n && !c->pk_err) {
		if (c->pk_hgot < sizeof(c->pk_res)) {
			uint32_t take = (uint32_t)sizeof(c->pk_res) - c->pk_hgot;
			if (take > n)
				take = (uint32_t)n;
			memcpy((char *)&c->pk_res + c->pk_hgot, in, take);
			c->pk_hgot += take;
			in += take;
			n -= take;
			if (c->pk_hgot < sizeof(c->pk_res))
				return;
			struct wire_pack_res r = c->pk_res;
			struct pack_slot *s = c->pk_k < f->npk ? &f->pk[c->pk_k] : NULL;
			if (!s || !pack_res_ok(s, &r)) {
				c->pk_err = 1;
				return;
			}
			s->res = r.status;
			c->pk_dgot = 0;
			c->pk_dlen = wire_pad8(r.len);
		}
		uint64_t take = c->pk_dlen - c->pk_dgot;
		if (take > n)
			take = n;
		struct pack_slot *s = &f->pk[c->pk_k];
		if (take && c->pk_dgot < c->pk_res.len && s->ck.client) {
			uint64_t data = c->pk_res.len - c->pk_dgot;
			memcpy(s->dst + c->pk_dgot, in, take < data ? take : data);
		}
		c->pk_dgot += take;
		in += take;
		n -= take;
		if (c->pk_dgot == c->pk_dlen) {
			c->pk_k++;
			c->pk_hgot = 0;
		}
	}
}

/* The reply to our pack f is complete: every element in order, or, a
 * malformed reply, every element fails with -EPROTO (pack.h's rule: the
 * connection stays). */
static int pack_reply(struct daemon *d, struct netconn *c, struct lane *l, struct inflight *f)
{
	if (!f || f->type != W_PACK)
		return -EPROTO; /* rx_hdr checked it; the ring did not change since */
	struct wire_pack_reply rep = {0};
	if (c->hdr.hlen == sizeof(rep))
		memcpy(&rep, c->ext, sizeof(rep));
	int bad = c->pk_err || rep.nelem != f->npk || rep.status > 0 ||
		  (!rep.status && (c->pk_k != f->npk || c->pk_hgot));
	struct pack_slot *s = f->pk;
	uint32_t ns = f->npk;
	f->pk = NULL;
	f->npk = 0;
	l->ring_head++; /* completions may issue more into this ring */
	if (bad)
		pack_refused(d, c->node, "pack reply");
	pack_finish(d, s, ns, bad ? -EPROTO : rep.status);
	return 0;
}

/* ---- completing our own requests -------------------------------------- */

/* The lane an outgoing connection is (our requests, their replies). */
static struct lane *conn_lane(struct daemon *d, const struct netconn *c)
{
	return &d->net.peers[c->node].lanes[c->lane];
}

/* The oldest request on c's lane, if its tag is tag (replies come in order
 * per connection); NULL otherwise, and on a connection a peer opened. */
static struct inflight *ring_front(struct daemon *d, const struct netconn *c, uint64_t tag)
{
	if (!c->outgoing)
		return NULL;
	struct lane *l = conn_lane(d, c);
	if (l->ring_head == l->ring_tail)
		return NULL;
	struct inflight *f = &l->ring[l->ring_head % d->net.peers[c->node].window];
	return f->tag == tag ? f : NULL;
}

static void reply_done(struct daemon *d, struct netconn *c, struct inflight *f,
		       const struct wire_reply *r)
{
	struct peer *p = &d->net.peers[c->node];
	if (r->entry.valid && r->status == 0) {
		struct addr_entry e = {.key = f->key, .node = p->node, .base = r->entry.base,
				       .len = r->entry.len, .rkey = r->entry.rkey, .gen = r->entry.gen};
		addr_cache_insert(&d->net.cache, &e);
	} else if (r->status == -ECONNRESET) {
		/* the PE left: whatever we cached for it is stale */
		addr_cache_invalidate(&d->net.cache, &f->key, UINT32_MAX);
	}
	struct inflight done = *f; /* the completion may issue more into this slot */
	conn_lane(d, c)->ring_head++;
	inflight_complete(d, &done, r->status);
}

/* ---- receive state machine -------------------------------------------- */

/* Header (and extension) complete: decide where the payload goes. */
static int rx_begin(struct daemon *d, struct netconn *c)
{
	struct wire_hdr *h = &c->hdr;
	c->pdst = NULL;
	c->pgot = 0;
	c->pctx = NULL;
	c->pk_stream = 0;
	if (c->phase != PH_UP) {
		if ((h->type != W_HELLO && h->type != W_AUTH) || h->plen > HS_MAX || h->hlen)
			return -EPROTO;
		c->pctx = malloc(HS_MAX);
		c->pdst = c->pctx;
		return c->pdst ? 0 : -ENOMEM;
	}
	struct peer *p = &d->net.peers[c->node];
	switch (h->type) {
	case W_PUT_AM:
	case W_PUT_DIRECT: {
		if (c->outgoing)
			return -EPROTO;
		struct wire_reply *r = malloc(sizeof(*r));
		if (!r)
			return -ENOMEM;
		memset(r, 0, sizeof(*r));
		uint64_t len = 0;
		char *dst = NULL;
		r->status = resolve(d, c, &dst, &len, &r->entry);
		if (r->status == 0 && len != h->plen)
			r->status = -EPROTO;
		if (r->status == 0)
			c->pdst = dst;
		c->pctx = r;
		(void)p;
		return 0;
	}
	case W_GET_REPLY: {
		struct inflight *f = ring_front(d, c, h->tag);
		if (!f || f->type == W_PACK || h->hlen != sizeof(struct wire_reply))
			return -EPROTO;
		struct wire_reply r;
		memcpy(&r, c->ext, sizeof(r));
		if (r.status == 0 && h->plen != f->len)
			return -EPROTO;
		if (f->ck.client && r.status == 0)
			c->pdst = f->dst;
		return 0;
	}
	case W_PACK:
	case W_PACK_REPLY: {
		/* not a pack at all (on the wrong connection, larger than any
		 * pack, a reply to no pack of ours): a framing error, the
		 * connection drops; a malformed content is the pack layer's
		 * (pack.h: refused, the connection stays) */
		if (h->plen > WIRE_AM_MAX_PAYLOAD) {
			hlog_warn("node %d sent a pack frame of %u bytes; dropping the connection",
				  c->node, h->plen);
			return -EPROTO;
		}
		if (h->type == W_PACK) {
			if (c->outgoing)
				return -EPROTO;
			c->pctx = malloc(h->plen ? h->plen : 1);
			c->pdst = c->pctx;
			return c->pctx ? 0 : -ENOMEM;
		}
		struct inflight *f = ring_front(d, c, h->tag);
		if (!f || f->type != W_PACK)
			return -EPROTO;
		struct wire_pack_reply rep = {0};
		if (h->hlen == sizeof(rep))
			memcpy(&rep, c->ext, sizeof(rep));
		c->pk_stream = 1;
		c->pk_k = c->pk_hgot = 0;
		c->pk_err = h->hlen != sizeof(rep) || (rep.status && h->plen);
		return 0;
	}
	default:
		/* a daemon message: whatever a stage registered (am.h), its
		 * shape checked before a byte of payload is buffered */
		if (!am_handles(h->type))
			return h->plen ? -EPROTO : 0;
		if (!am_payload_ok(h->type, c->ext, h->hlen, h->plen))
			return -EPROTO;
		c->pctx = malloc(h->plen ? h->plen : 1);
		c->pdst = c->pctx;
		return c->pctx ? 0 : -ENOMEM;
	}
}

static int rx_end(struct daemon *d, struct netconn *c)
{
	struct wire_hdr *h = &c->hdr;
	int rc = 0;
	if (h->type != W_PING && h->type != W_PONG) {
		STAT_INC(&d->pst, tcp_msgs_in);
		STAT_ADD(&d->pst, tcp_bytes_in, sizeof(*h) + h->hlen + h->plen);
	}
	if (c->phase != PH_UP) {
		rc = hs_frame(d, c, c->pctx, h->plen);
		free(c->pctx);
		c->pctx = NULL;
		return rc;
	}
	struct net *n = &d->net;
	struct peer *p = &n->peers[c->node];
	switch (h->type) {
	case W_PUT_AM:
	case W_PUT_DIRECT: {
		struct wire_reply *r = c->pctx;
		if (r->status == 0) {
			STAT_INC(&p->st, ops_in);
			STAT_ADD(&p->st, bytes_in, h->plen);
			put_landed(d, c);
		}
		rc = frame_queue(c, W_ACK, h->tag, r, sizeof(*r), NULL, 0);
		free(r);
		c->pctx = NULL;
		return rc;
	}
	case W_GET_AM:
	case W_GET_DIRECT:
		if (c->outgoing)
			return -EPROTO;
		serve_get(d, c, p);
		return 0;
	case W_ACK:
	case W_GET_REPLY: {
		struct inflight *f = ring_front(d, c, h->tag);
		if (!f || f->type == W_PACK || h->hlen != sizeof(struct wire_reply))
			return -EPROTO;
		struct wire_reply r;
		memcpy(&r, c->ext, sizeof(r));
		reply_done(d, c, f, &r);
		return 0;
	}
	case W_PACK:
	case W_PACK_REPLY: {
		if (h->type == W_PACK)
			rc = serve_pack(d, c);
		else
			rc = pack_reply(d, c, conn_lane(d, c), ring_front(d, c, h->tag));
		free(c->pctx);
		c->pctx = NULL;
		return rc;
	}
	case W_PING:
		return frame_queue(c, W_PONG, h->tag, NULL, 0, NULL, 0);
	case W_PONG:
		if (!c->outgoing || h->tag != p->link.ping_tag)
			return 0;
		conn_lane(d, c)->ping_due = 0;
		peer_pong(&p->link, &p->st, h->tag, now_ns()); /* the first lane to answer times it */
		return 0;
	default: {
		/* a daemon message (rx_begin checked it is registered): the
		 * stage's handler, by type (am.c) */
		int rc2 = am_dispatch(d, c->node, h->type, c->ext, h->hlen, c->pctx, h->plen);
		free(c->pctx);
		c->pctx = NULL;
		return rc2;
	}
	}
}

/* A frame is complete: act on it, then expect the next header. */
static int rx_frame_done(struct daemon *d, struct netconn *c)
{
	int rc = rx_end(d, c);
	if (rc)
		return rc;
	c->rx = RX_HDR;
	c->ext_got = 0;
	return 0;
}

/* Records (frame_integrity mac/encrypt): open the next complete record
 * in rbuf and make its body the parse window, reading more when none is
 * complete. Nothing of a record is parsed (nor reaches its destination)
 * before its tag is verified. 1: a window; 0: wait for more bytes (epoll
 * is level-triggered); -EBADMSG: a record failed the check; -errno. */
static int rec_next(struct daemon *d, struct netconn *c)
{
	for (;;) {
		uint32_t have = c->xlen - c->xpos, blen = 0;
		int bad = 0;
		if (have >= FRAMES_HDR) {
			bad = frames_body_len((const uint8_t *)c->rbuf + c->xpos, &blen) != 0;
			if (!bad && have >= blen + FRAMES_OVERHEAD) {
				bad = frames_open(c->fr, (uint8_t *)c->rbuf + c->xpos, blen) != 0;
				if (!bad) {
					c->rin = c->rbuf + c->xpos + FRAMES_HDR;
					c->rpos = 0;
					c->rlen = blen;
					c->xpos += blen + FRAMES_OVERHEAD;
					return 1;
				}
			}
		}
		if (bad) {
			struct peer *p = &d->net.peers[c->node];
			STAT_INC(&p->st, integrity_failures);
			hlog_warn("node %d (%s): frame integrity check failed (record %llu, %s %s): "
				  "dropping the connection",
				  c->node, p->name, (unsigned long long)c->fr->rx.seq,
				  frames_mode_name(c->fr->mode), frames_aead_name(c->fr->aes));
			return -EBADMSG;
		}
		if (c->short_read) {
			c->short_read = 0;
			return 0;
		}
		/* room for a whole record behind what we have */
		if (c->xpos && RBUF_BYTES - c->xpos < FRAMES_REC_MAX + FRAMES_OVERHEAD) {
			memmove(c->rbuf, c->rbuf + c->xpos, have);
			c->xpos = 0;
			c->xlen = have;
		} else if (c->xpos == c->xlen) {
			c->xpos = c->xlen = 0;
		}
		uint32_t room = RBUF_BYTES - c->xlen;
		ssize_t r = recv(c->fd, c->rbuf + c->xlen, room, MSG_DONTWAIT);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0)
			return (errno == EAGAIN || errno == EINTR) ? 0 : -errno;
		c->xlen += (uint32_t)r;
		c->short_read = (uint32_t)r < room;
		c->last_rx_ns = now_ns();
	}
}

/* A frame of c was acted on. After tcp_rx_batch of them in this read, a
 * client ring that holds descriptors (or a command) stops the read: 1.
 * What is left (in rbuf, or in the socket) is read by net_poll on the
 * same pass, after the next drain of the rings. Without it one read took
 * a whole prefetch window (64 landings of 4 KiB: 256 KiB) before the
 * client's first get of the phase was looked at (issue 16). */
static int rx_yield(struct daemon *d, struct netconn *c, uint32_t *frames)
{
	uint32_t batch = d->cfg.tcp_rx_batch;
	if (!batch || ++*frames < batch)
		return 0;
	*frames = 0;
	if (!busy_other_work(d))
		return 0;
	if (!c->rx_held) {
		c->rx_held = 1;
		d->net.rx_held++;
	}
	STAT_INC(&d->pst, tcp_rx_breaks);
	return 1;
}

/* Parse what is buffered; read big payloads straight into place (plain
 * frames only: records are verified in rbuf first, then copied). Stops
 * early for the clients' rings (rx_yield). */
static int conn_read(struct daemon *d, struct netconn *c)
{
	uint32_t frames = 0;
	rx_unhold(&d->net, c);
	for (;;) {
		if (c->rpos == c->rlen && c->fr) {
			int rc = rec_next(d, c);
			if (rc <= 0)
				return rc;
		} else if (c->rpos == c->rlen) {
			/* big payload with a destination: skip the bounce buffer */
			if (c->rx == RX_PAYLOAD && c->hdr.plen - c->pgot >= RBUF_BYTES / 2) {
				char tmp[4096];
				char *to = c->pdst ? c->pdst + c->pgot : tmp;
				size_t want = c->pdst ? c->hdr.plen - c->pgot : sizeof(tmp);
				if (want > c->hdr.plen - c->pgot)
					want = c->hdr.plen - c->pgot;
				ssize_t r = recv(c->fd, to, want, MSG_DONTWAIT);
				if (r == 0)
					return -ECONNRESET;
				if (r < 0)
					return (errno == EAGAIN || errno == EINTR) ? 0 : -errno;
				c->pgot += (uint64_t)r;
				c->last_rx_ns = now_ns();
				if (c->pgot == c->hdr.plen) {
					int rc = rx_frame_done(d, c);
					if (rc)
						return rc;
					if (rx_yield(d, c, &frames))
						return 0;
				}
				continue;
			}
			if (c->short_read) {
				/* the last read did not fill the buffer: the socket is
				 * most likely empty, and epoll (level-triggered) tells
				 * us about any rest; skip the recv that would say EAGAIN */
				c->short_read = 0;
				return 0;
			}
			ssize_t r = recv(c->fd, c->rbuf, RBUF_BYTES, MSG_DONTWAIT);
			if (r == 0)
				return -ECONNRESET;
			if (r < 0)
				return (errno == EAGAIN || errno == EINTR) ? 0 : -errno;
			c->rin = c->rbuf;
			c->rlen = (uint32_t)r;
			c->rpos = 0;
			c->short_read = (uint32_t)r < RBUF_BYTES;
			c->last_rx_ns = now_ns();
		}
		uint32_t avail = c->rlen - c->rpos;
		const char *in = c->rin + c->rpos;
		switch (c->rx) {
		case RX_HDR: {
			uint32_t need = (uint32_t)sizeof(c->hdr) - c->ext_got;
			uint32_t take = avail < need ? avail : need;
			memcpy((char *)&c->hdr + c->ext_got, in, take);
			c->rpos += take;
			c->ext_got += take;
			if (c->ext_got < sizeof(c->hdr))
				break;
			if (c->hdr.type == 0 || c->hdr.type >= W__COUNT || c->hdr.hlen > WIRE_MAX_EXT ||
			    c->hdr.plen > WIRE_MAX_PAYLOAD)
				return -EPROTO;
			c->ext_got = 0;
			c->rx = RX_EXT;
		}
			/* fall through */
		case RX_EXT: {
			uint32_t need = c->hdr.hlen - c->ext_got;
			avail = c->rlen - c->rpos;
			uint32_t take = avail < need ? avail : need;
			memcpy(c->ext + c->ext_got, c->rin + c->rpos, take);
			c->rpos += take;
			c->ext_got += take;
			if (c->ext_got < c->hdr.hlen)
				break;
			int rc = rx_begin(d, c);
			if (rc)
				return rc;
			c->rx = RX_PAYLOAD;
		}
			/* fall through */
		case RX_PAYLOAD: {
			uint64_t need = c->hdr.plen - c->pgot;
			avail = c->rlen - c->rpos;
			uint64_t take = avail < need ? avail : need;
			if (c->pdst && take)
				memcpy(c->pdst + c->pgot, c->rin + c->rpos, take);
			else if (c->pk_stream && take)
				pack_stream(c, ring_front(d, c, c->hdr.tag),
					    c->rin + c->rpos, take);
			c->rpos += (uint32_t)take;
			c->pgot += take;
			if (c->pgot < c->hdr.plen)
				break;
			int rc = rx_frame_done(d, c);
			if (rc)
				return rc;
			if (rx_yield(d, c, &frames))
				return 0;
			break;
		}
		}
	}
}

static void conn_event(struct daemon *d, struct netconn *c, uint32_t ev)
{
	if (c->phase == PH_CONNECTING) {
		if (!(ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		int err = 0;
		socklen_t el = sizeof(err);
		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err || (ev & (EPOLLERR | EPOLLHUP))) {
			conn_fail(d, c, err ? strerror(err) : "connection refused");
			return;
		}
		if (hs_send(d, c, W_HELLO, NULL)) {
			conn_fail(d, c, "cannot send hello");
			return;
		}
		c->phase = PH_WAIT_HELLO;
		ep_watch(&d->net, c, EPOLLIN);
		return;
	}
	int rc = 0;
	if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
		rc = conn_read(d, c);
	if (rc) {
		conn_fail(d, c, rc == -ECONNRESET ? "connection closed" :
				rc == -EPROTO ? "protocol error" :
				rc == -EACCES ? "authentication failed" :
				rc == -EBADMSG ? "frame integrity check failed" :
				rc == -EPROTONOSUPPORT ? "frame_integrity mismatch" : strerror(-rc));
		return;
	}
	if (c->phase == PH_UP && (conn_pending(c) || (ev & EPOLLOUT))) {
		rc = conn_flush(d, c);
		if (rc)
			conn_fail(d, c, strerror(-rc));
	}
}

/* ---- public ------------------------------------------------------------ */

static int listen_ready(struct daemon *d, void *arg, uint32_t events)
{
	(void)arg;
	(void)events;
	accept_all(d);
	return 1;
}

/* Started only with peers (one node: progress_start runs self). */
static int net_start(struct daemon *d)
{
	struct net *n = &d->net;
	int rc;
	n->loop = &d->loop;
	if ((rc = addr_cache_init(&n->cache, (uint32_t)d->cfg.addr_cache_entries)))
		return rc;
	if (!n->enabled)
		return 0; /* nothing to listen for */
	for (int32_t i = 0; i < n->nnodes; i++) {
		struct peer *p = &n->peers[i];
		p->window = (uint32_t)d->cfg.credit_window;
		p->lanes = calloc(d->cfg.tcp_lanes, sizeof(*p->lanes));
		if (!p->lanes)
			return -ENOMEM;
		p->nlanes = (uint32_t)d->cfg.tcp_lanes;
		for (uint32_t k = 0; k < p->nlanes; k++)
			if (!(p->lanes[k].ring = calloc(p->window, sizeof(*p->lanes[k].ring))))
				return -ENOMEM;
	}
	struct peer *me = &n->peers[n->self];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&me->addr, sizeof(me->addr)) < 0 || listen(fd, 128) < 0) {
		rc = -errno;
		close(fd);
		hlog_err("cannot listen on %s (node %d): %s", me->name, n->self, strerror(-rc));
		return rc;
	}
	n->listen_fd = fd;
	if ((rc = loop_add(n->loop, fd, EPOLLIN, listen_ready, NULL)))
		return rc;
	hlog_info("node %d of %d, listening on %s", n->self, n->nnodes, me->name);
	return 0;
}

static void net_stop(struct daemon *d)
{
	struct net *n = &d->net;
	while (n->incoming)
		conn_free(d, n->incoming);
	for (int32_t i = 0; n->peers && i < n->nnodes; i++) {
		struct peer *p = &n->peers[i];
		for (uint32_t k = 0; k < p->nlanes; k++) {
			struct lane *l = &p->lanes[k];
			if (l->conn)
				conn_free(d, l->conn);
			for (uint64_t s = l->ring_head; l->ring && s != l->ring_tail; s++) {
				struct inflight *f = &l->ring[s % p->window];
				free(f->pk);
				if (f->stripe && --f->stripe->left == 0)
					free(f->stripe);
			}
			free(l->ring);
		}
		free(p->lanes);
		free(p->pack.buf);
		free(p->pack.slots);
	}
	free(n->peers);
	n->peers = NULL;
	if (n->listen_fd >= 0) {
		loop_del(n->loop, n->listen_fd);
		close(n->listen_fd);
	}
	addr_cache_fini(&n->cache);
	sodium_memzero(n->key, sizeof(n->key));
}

static void net_flush(struct daemon *d)
{
	struct net *n = &d->net;
	int rc;
	if (!n->enabled)
		return;
	pack_flush(d, 0, pack_close); /* the open packs due at the end of a pass */
	for (int32_t i = 0; i < n->nnodes; i++) {
		struct peer *p = &n->peers[i];
		for (uint32_t k = 0; k < p->nlanes; k++) {
			struct netconn *c = p->lanes[k].conn;
			if (c && c->phase == PH_UP && conn_pending(c) && (rc = conn_flush(d, c))) {
				tcp_peer_lost(d, p, strerror(-rc));
				break;
			}
		}
	}
	for (struct netconn *c = n->incoming, *next; c; c = next) {
		next = c->next;
		if (c->phase == PH_UP && conn_pending(c) && (rc = conn_flush(d, c))) {
			conn_fail(d, c, strerror(-rc));
			next = n->incoming; /* the peer's other lanes went too */
		}
	}
}

/* A lane of the peer that waits for an answer (its handshake, a pong, a
 * reply) heard nothing for longer than silent: the peer is lost, 1. */
static int lanes_silent(struct daemon *d, struct peer *p, uint64_t now, uint64_t silent)
{
	for (uint32_t k = 0; k < p->nlanes; k++) {
		const struct lane *l = &p->lanes[k];
		const struct netconn *c = l->conn;
		if (!c)
			continue;
		if (peer_silent(now, c->last_rx_ns,
				c->phase != PH_UP || l->ping_due || l->ring_head != l->ring_tail, silent)) {
			char why[120];
			snprintf(why, sizeof(why),
				 "no answer within peer_timeout_ms (lane %u silent for %llu ms)", k,
				 (unsigned long long)((now - c->last_rx_ns) / 1000000));
			tcp_peer_lost(d, p, why);
			return 1;
		}
	}
	return 0;
}

static void net_timers(struct daemon *d, uint64_t now)
{
	struct net *n = &d->net;
	if (!n->enabled ||
	    !peer_check_due(&n->next_ping_check_ns, now, d->cfg.heartbeat_ms, d->cfg.peer_timeout_ms))
		return;
	uint64_t silent = peer_silence_limit_ns(d->cfg.heartbeat_ms, d->cfg.peer_timeout_ms);
	for (int32_t i = 0; i < n->nnodes; i++) {
		struct peer *p = &n->peers[i];
		if (i == n->self || !p->nlanes || !p->lanes[0].conn || lanes_silent(d, p, now, silent))
			continue;
		if (!peer_lanes_up(p) || !peer_ping_due(&p->link, now, d->cfg.heartbeat_ms))
			continue;
		/* every lane is pinged (the peer judges each connection by what
		 * it hears on it); a lane whose pong does not come is silent */
		for (uint32_t k = 0; k < p->nlanes; k++) {
			struct lane *l = &p->lanes[k];
			if (!l->ping_due && !frame_queue(l->conn, W_PING, p->link.ping_tag, NULL, 0, NULL, 0))
				l->ping_due = 1;
		}
	}
	uint64_t hs = d->cfg.handshake_timeout_ms * 1000000ull;
	uint64_t silent_in = peer_silence_limit_in_ns(d->cfg.heartbeat_ms, d->cfg.peer_timeout_ms);
	for (struct netconn *c = n->incoming, *next; c; c = next) {
		next = c->next;
		if (c->phase != PH_UP && now - c->born_ns > hs) {
			/* a byte now and then does not keep a stranger here */
			STAT_INC(&d->pst, peer_conns_dropped);
			flood_log(n, "a connection did not complete the handshake within "
				     "handshake_timeout_ms; dropped");
			conn_free(d, c);
		} else if (peer_silent(now, c->last_rx_ns, 1, silent_in)) {
			/* it always awaits the peer's pings */
			char why[120];
			snprintf(why, sizeof(why), "silent longer than peer_timeout_ms (%llu ms)",
				 (unsigned long long)((now - c->last_rx_ns) / 1000000));
			conn_fail(d, c, why);
			next = n->incoming; /* the peer's other lanes went too */
		}
	}
	if (n->accept_paused_until && now >= n->accept_paused_until) {
		n->accept_paused_until = 0;
		listen_watch(n, EPOLLIN);
	}
}

static struct peer *peer_for(struct daemon *d, int32_t node)
{
	struct net *n = &d->net;
	if (!n->enabled || node < 0 || node >= n->nnodes || node == n->self)
		return NULL;
	return &n->peers[node];
}

/* ---- busy polling for replies (setting tcp_busy_poll_us) ----------------
 * A request (put, get, pack, atomic) just went out and its reply is what a
 * client waits for. The progress loop's idle passes look at every
 * descriptor through epoll_wait and yield the CPU every few passes; a
 * yield on a loaded machine can give the CPU away for a whole time slice
 * while the reply sits in the socket. For tcp_busy_poll_us after the last
 * request was queued, the transport's poll reads the connections the
 * replies come on (the lanes with requests in flight; with atomics in
 * flight also the connections the peers opened to us, which carry
 * W_AMO_REPLY) with a one-byte MSG_PEEK, and hands a readable one to its
 * event handler at once. It stops as soon as the pass has anything else to
 * do (a client posted descriptors, a command came), when nothing is in
 * flight any more, and when the time is up; every 8th round it also runs
 * the loop's epoll once without waiting, so requests of other daemons are
 * served meanwhile. tcp_busy_polls counts the polls, tcp_busy_poll_hits
 * those that found a connection readable. Off by default (0): with more
 * busy threads than CPUs the thread that does not yield keeps the CPU the
 * peer daemon or the PE needs, and gets measured slower (bench/README.md,
 * run-tcplat.sh). */

static void busy_arm(struct daemon *d)
{
	uint64_t us = d->cfg.tcp_busy_poll_us;
	if (us)
		d->net.busy_until_ns = now_ns() + us * 1000u;
}

/* The pass has other work than waiting for a reply. */
static int busy_other_work(struct daemon *d)
{
	if (cmdq_pending(&d->to_progress))
		return 1;
	for (struct client *c = d->active; c; c = c->prog_next)
		if (!c->broken &&
		    (c->multi || hoist_sqe_ready(&c->sq[c->sq_head & c->sq_mask], c->sq_head, c->sq_entries)))
			return 1;
	return 0;
}

/* c's socket has bytes (or its end: the handler then sees the close). */
static int busy_peek(const struct netconn *c)
{
	char b;
	if (c->dead || c->phase != PH_UP)
		return 0;
	ssize_t r = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	return r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static int busy_hit(struct daemon *d, struct netconn *c)
{
	STAT_INC(&d->pst, tcp_busy_poll_hits);
	c->short_read = 0; /* the bytes are there: read them */
	conn_ready(d, c, EPOLLIN);
	return 1;
}

/* Go on reading the connections whose read stopped for the rings
 * (rx_yield): their frames may sit in rbuf, which epoll does not see. */
static int rx_resume(struct daemon *d)
{
	struct net *n = &d->net;
	int work = 0;
	for (int32_t i = 0; i < n->nnodes && n->rx_held; i++) {
		struct peer *p = &n->peers[i];
		for (uint32_t k = 0; k < p->nlanes && n->rx_held; k++) {
			struct netconn *c = p->lanes[k].conn;
			if (c && c->rx_held)
				work += conn_ready(d, c, EPOLLIN);
		}
	}
	/* one incoming connection per pass: handling it may free others of
	 * the list (a peer lost), so the walk does not go on after it */
	for (struct netconn *c = n->incoming; c && n->rx_held; c = c->next)
		if (c->rx_held) {
			work += conn_ready(d, c, EPOLLIN);
			break;
		}
	return work;
}

static int net_poll(struct daemon *d)
{
	struct net *n = &d->net;
	if (n->rx_held)
		return rx_resume(d);
	if (!n->busy_until_ns)
		return 0;
	if (now_ns() >= n->busy_until_ns) {
		n->busy_until_ns = 0;
		return 0;
	}
	if (busy_other_work(d))
		return 0; /* drain first; the window stays open */
	STAT_INC(&d->pst, tcp_busy_polls);
	for (unsigned round = 1;; round++) {
		int awaited = 0;
		for (int32_t i = 0; i < n->nnodes; i++) {
			struct peer *p = &n->peers[i];
			for (uint32_t k = 0; k < p->nlanes; k++) {
				struct lane *l = &p->lanes[k];
				if (!l->conn || l->ring_head == l->ring_tail)
					continue;
				awaited = 1;
				if (busy_peek(l->conn))
					return busy_hit(d, l->conn);
			}
		}
		if (xp_amo_inflight(d)) {
			for (struct netconn *c = n->incoming; c; c = c->next) {
				awaited = 1;
				if (busy_peek(c))
					return busy_hit(d, c);
			}
		}
		if (!awaited)
			break;
		if ((round & 7) == 0) {
			int work = loop_wait(n->loop, 0);
			if (work)
				return work;
		}
		if (now_ns() >= n->busy_until_ns || busy_other_work(d))
			break;
		hoist_cpu_relax();
	}
	n->busy_until_ns = 0;
	return 0;
}

/* ---- packs (wire.h: W_PACK) ---------------------------------------------
 * The open pack of a peer collects puts and gets for its PEs; it leaves
 * (on the lane its first operation reserved a ring slot on) when full,
 * before any other request to that peer (with one lane: in issue order),
 * and at the end of each progress pass (net_flush) unless it holds only
 * operations of aggregation regions, which wait for pack_release.
 * Building, serving, answering and failing packs is the pack layer's
 * (pack.h, with its rule for a malformed pack); this file carries them as
 * frames, the packs in flight in the lanes' rings. */

#define PACK_MAX WIRE_AM_MAX_PAYLOAD

/* Send node's open pack (it has a ring slot reserved by pack_add). */
static int pack_close(struct daemon *d, int32_t node)
{
	struct peer *p = &d->net.peers[node];
	struct pack_open *pk = &p->pack;
	if (!pk->nelem)
		return 0;
	struct wire_pack w = {.job = pk->job, .nelem = pk->nelem};
	uint64_t tag = ++p->next_tag;
	struct lane *l = &p->lanes[p->pack_lane];
	int rc = frame_queue(l->conn, W_PACK, tag, &w, sizeof(w), pk->buf, pk->plen);
	if (rc)
		return rc; /* stays open; peer_lost or a later close handles it */
	struct inflight *f = &l->ring[l->ring_tail++ % p->window];
	*f = (struct inflight){.tag = tag, .type = W_PACK, .pk = pk->slots, .npk = pk->nelem};
	pack_count_sent(&p->st, pk);
	pack_reset(pk);
	busy_arm(d);
	return 0;
}

/* Add one put/get/non-fetching atomic to the peer's open pack.
 * XP_STARTED, XP_STALL or XP_ERROR (*err). */
static enum xp_result pack_add(struct daemon *d, struct peer *p, const struct xp_req *rq, int *err)
{
	struct pack_open *pk = &p->pack;
	uint32_t req, rep;
	int rc = pack_elem_size(rq->kind, rq->len, &req, &rep);
	if (rc)
		return xp_fail(err, rc);
	/* an element bound to another lane than the pack's must not overtake
	 * its descriptor's earlier elements */
	int elsewhere = pk->nelem && lane_bound(p, rq) < p->nlanes && lane_bound(p, rq) != p->pack_lane;
	if ((pack_must_close(pk, rq, req, rep) || elsewhere) && (rc = pack_close(d, p->node)))
		return xp_fail(err, rc);
	if (!pk->nelem) {
		/* a pack takes one ring slot and goes to the send buffer whole */
		struct lane *l = lane_for(d, p, rq, PACK_MAX);
		if (!l) {
			STAT_INC(&p->st, stalls);
			return XP_STALL;
		}
		if ((rc = pack_begin(pk, rq)))
			return xp_fail(err, rc);
		p->pack_lane = (uint32_t)(l - p->lanes);
	}
	if ((rc = pack_append(pk, rq)))
		return xp_fail(err, rc);
	STAT_INC(&p->st, ops_out);
	STAT_ADD(&p->st, bytes_out, rq->len);
	return XP_STARTED;
}

/* Send every open pack, held ones too (an aggregation region ended). */
static void net_pack_release(struct daemon *d)
{
	struct net *n = &d->net;
	if (n->enabled)
		pack_flush(d, 1, pack_close);
}

/* ---- lanes ---------------------------------------------------------------
 * Requests to a peer are spread over its lanes: each goes on the lane with
 * the fewest requests in flight (ties: the search starts one lane further
 * each time). A put or get of at least TCP_STRIPE_MIN bytes, with several
 * lanes, is cut into one chunk per lane (equal sizes, multiples of 64
 * bytes, the last one shorter), sent as requests of their own; the
 * operation completes with its last chunk (struct stripe). The elements of
 * one strided/vector descriptor may overlap each other and are applied in
 * list order (hoist.h): they all take one lane (picked by the descriptor),
 * alone or in packs on that lane, and are never striped. */

/* The lane every element of rq's strided/vector descriptor takes, or
 * p->nlanes: rq may take any lane. */
static uint32_t lane_bound(const struct peer *p, const struct xp_req *rq)
{
	if (!rq->ck.op.multi)
		return p->nlanes;
	return (uint32_t)(((uintptr_t)rq->ck.op.multi / 64) % p->nlanes);
}

/* The lane can take one more request carrying plen payload bytes. */
static int lane_room(const struct daemon *d, const struct peer *p, const struct lane *l,
		     uint64_t plen)
{
	const struct outbuf *o = &l->conn->out;
	return l->ring_tail - l->ring_head < p->window &&
	       !(ob_pending(o) && ob_pending(o) + plen > d->cfg.tcp_buffer_bytes);
}

/* The least busy lane that has room for plen payload bytes, or NULL. */
static struct lane *lane_pick(const struct daemon *d, struct peer *p, uint64_t plen)
{
	struct lane *best = NULL;
	uint32_t start = p->next_lane++;
	for (uint32_t i = 0; i < p->nlanes; i++) {
		struct lane *l = &p->lanes[(start + i) % p->nlanes];
		if (lane_room(d, p, l, plen) &&
		    (!best || l->ring_tail - l->ring_head < best->ring_tail - best->ring_head))
			best = l;
	}
	return best;
}

/* The lane rq goes on (its descriptor's, or the least busy) if it has room
 * for plen payload bytes, else NULL. */
static struct lane *lane_for(const struct daemon *d, struct peer *p, const struct xp_req *rq,
			     uint64_t plen)
{
	uint32_t k = lane_bound(p, rq);
	if (k == p->nlanes)
		return lane_pick(d, p, plen);
	return lane_room(d, p, &p->lanes[k], plen) ? &p->lanes[k] : NULL;
}

/* Send bytes [at, at + len) of operation rq on lane l as one request (by
 * address when the target's registration is cached, by name otherwise);
 * s: the stripe it is a chunk of, or NULL. 0 or -errno (nothing queued). */
static int lane_request(struct daemon *d, struct peer *p, struct lane *l, const struct xp_req *rq,
			uint64_t at, uint64_t len, struct stripe *s)
{
	int put = rq->kind == XP_PUT; /* net_rma let only XP_PUT and XP_GET through */
	struct addr_key key = {.job = rq->job, .pe = rq->pe, .seg = rq->seg};
	const struct addr_entry *e = addr_cache_lookup(&d->net.cache, &key);
	struct wire_target t = {.job = rq->job, .pe = rq->pe, .seg = rq->seg, .off = rq->off + at,
				.len = len};
	uint64_t tag = ++p->next_tag;
	uint8_t type;
	int rc;
	if (e) {
		struct wire_direct w = {.rkey = e->rkey, .gen = e->gen, .addr = e->base + t.off,
					.len = len, .name = t};
		type = put ? W_PUT_DIRECT : W_GET_DIRECT;
		rc = frame_queue(l->conn, type, tag, &w, sizeof(w), rq->laddr + at, put ? len : 0);
	} else {
		type = put ? W_PUT_AM : W_GET_AM;
		rc = frame_queue(l->conn, type, tag, &t, sizeof(t), rq->laddr + at, put ? len : 0);
	}
	if (rc)
		return rc;
	struct inflight *f = &l->ring[l->ring_tail++ % p->window];
	*f = (struct inflight){.tag = tag, .type = type, .ck = rq->ck, .len = len, .key = key,
			       .stripe = s};
	if (!put) /* where its reply's data lands */
		f->dst = rq->laddr + at;
	STAT_INC(&p->st, ops_out);
	STAT_ADD(&p->st, bytes_out, len);
	STAT_INC(&d->pst, tcp_requests);
	busy_arm(d);
	return 0;
}

/* rq striped over the peer's lanes: every chunk's lane must have room, or
 * nothing is sent. */
static enum xp_result rma_striped(struct daemon *d, struct peer *p, const struct xp_req *rq,
				  int *err)
{
	uint64_t chunk = ((rq->len + p->nlanes - 1) / p->nlanes + 63) & ~63ull;
	uint32_t n = (uint32_t)((rq->len + chunk - 1) / chunk);
	uint64_t plen = rq->kind == XP_PUT ? chunk : 0;
	for (uint32_t k = 0; k < n; k++)
		if (!lane_room(d, p, &p->lanes[k], plen)) {
			STAT_INC(&p->st, stalls);
			return XP_STALL;
		}
	struct stripe *s = malloc(sizeof(*s));
	if (!s)
		return xp_fail(err, -ENOMEM);
	*s = (struct stripe){.left = n};
	for (uint32_t k = 0; k < n; k++) {
		uint64_t at = k * chunk, len = rq->len - at < chunk ? rq->len - at : chunk;
		int rc = lane_request(d, p, &p->lanes[k], rq, at, len, s);
		if (rc && !k) {
			free(s);
			return xp_fail(err, rc);
		}
		if (rc) { /* the chunks sent complete the operation, with rc */
			s->res = rc;
			s->left = k;
			break;
		}
	}
	STAT_INC(&d->pst, tcp_stripes);
	return XP_STARTED;
}

static enum xp_result net_rma(struct daemon *d, const struct xp_req *rq, int *err)
{
	uint64_t plen; /* payload bytes the request carries */
	switch (rq->kind) {
	case XP_PUT:
		plen = rq->len;
		break;
	case XP_GET:
		plen = 0;
		break;
	case XP_AMO: /* a non-fetching one may join the pack, else W_AMO */
		if (!pack_eligible(d, rq))
			return xp_amo(d, rq, err);
		plen = 0;
		break;
	case XP_SEND:
	default: /* refused before anything is looked at, let alone sent */
		return xp_fail(err, xp_kind_refuse(d, rq->kind));
	}
	struct peer *p = peer_for(d, rq->node);
	if (!p)
		return xp_fail(err, -EINVAL);
	if (rq->len > WIRE_MAX_PAYLOAD)
		return xp_fail(err, -EMSGSIZE); /* libhoist splits; a raw descriptor may not */
	int rc = peer_ensure(d, p);
	if (rc)
		return xp_fail(err, rc);
	if (pack_eligible(d, rq))
		return pack_add(d, p, rq, err);
	if (rq->kind == XP_AMO) /* pack_eligible said yes above */
		return xp_fail(err, xp_kind_refuse(d, rq->kind));
	/* what was packed before goes first (with one lane: in issue order) */
	if (p->pack.nelem && (rc = pack_close(d, p->node)))
		return xp_fail(err, rc);
	if (p->nlanes > 1 && rq->len >= TCP_STRIPE_MIN && lane_bound(p, rq) == p->nlanes)
		return rma_striped(d, p, rq, err);
	struct lane *l = lane_for(d, p, rq, plen);
	if (!l) {
		STAT_INC(&p->st, stalls);
		return XP_STALL;
	}
	if ((rc = lane_request(d, p, l, rq, 0, rq->len, NULL)))
		return xp_fail(err, rc);
	return XP_STARTED;
}

/* Several lanes deliver a client's operations out of issue order. */
static int net_reorders(const struct daemon *d)
{
	return d->cfg.tcp_lanes > 1;
}

static int net_am_send(struct daemon *d, int32_t node, uint8_t type, const void *ext, uint16_t hlen,
		       const void *payload, uint64_t plen)
{
	struct peer *p = peer_for(d, node);
	if (!p)
		return -EINVAL;
	int rc = peer_ensure(d, p);
	if (rc)
		return rc;
	if (p->pack.nelem && (rc = pack_close(d, p->node)))
		return rc;
	STAT_INC(&d->pst, tcp_requests);
	/* lane 0: the messages to a node stay in order among themselves */
	rc = frame_queue(p->lanes[0].conn, type, 0, ext, hlen, payload, plen);
	if (rc == 0 && type == W_AMO)
		busy_arm(d); /* its W_AMO_REPLY comes back */
	return rc;
}

/* Client c left: the lane's requests forget it, and a reply's data being
 * received for it right now (into its prefetch arena, staging or heap)
 * goes nowhere. */
static void lane_orphan(const struct peer *p, struct lane *l, struct client *c)
{
	for (uint64_t k = l->ring_head; k != l->ring_tail; k++) {
		struct inflight *f = &l->ring[k % p->window];
		if (f->ck.client == c)
			f->ck.client = NULL;
		for (uint32_t e = 0; e < f->npk; e++)
			if (f->pk[e].ck.client == c)
				f->pk[e].ck.client = NULL;
	}
	struct netconn *cn = l->conn;
	if (cn && cn->rx == RX_PAYLOAD && cn->pdst &&
	    (overlap_owns(c, cn->pdst) ||
	     (cn->pdst >= (char *)c->staging.base &&
	      cn->pdst < (char *)c->staging.base + c->staging.bytes) ||
	     (cn->pdst >= (char *)c->heap.base && cn->pdst < (char *)c->heap.base + c->heap.bytes)))
		cn->pdst = NULL;
}

static void net_orphan_client(struct daemon *d, struct client *c)
{
	struct net *n = &d->net;
	if (!n->enabled)
		return;
	for (int32_t i = 0; i < n->nnodes; i++) {
		struct peer *p = &n->peers[i];
		for (uint32_t k = 0; k < p->nlanes; k++)
			lane_orphan(p, &p->lanes[k], c);
		for (uint32_t e = 0; e < p->pack.nelem; e++)
			if (p->pack.slots[e].ck.client == c)
				p->pack.slots[e].ck.client = NULL;
	}
	/* a payload being received for it right now goes nowhere */
	for (struct netconn *cn = n->incoming; cn; cn = cn->next)
		if (cn->rx == RX_PAYLOAD && cn->pdst >= (char *)c->heap.base &&
		    cn->pdst < (char *)c->heap.base + c->heap.bytes)
			cn->pdst = NULL;
}

const struct transport_ops tcp_transport = {
	.reorders = net_reorders, /* tcp_lanes > 1 */
	.name = "tcp",
	.start = net_start,
	.stop = net_stop,
	.rma = net_rma,
	.am_send = net_am_send,
	.flush = net_flush,
	.poll = net_poll, /* tcp_busy_poll_us */
	.timers = net_timers,
	.orphan = net_orphan_client,
	.pack_release = net_pack_release,
};
