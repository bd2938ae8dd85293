/*
 * The tcp transport's own types (progress thread).
 *
 * Each daemon opens tcp_lanes connections (lanes) to every peer it sends
 * to and carries its requests there; the peer answers each request on the
 * connection it came by, in that connection's order. Requests are spread
 * over the lanes (the one with the fewest in flight), and a put or get of
 * at least TCP_STRIPE_MIN bytes is cut into one chunk per lane whose
 * completions make one completion (struct stripe). With one lane a peer's
 * requests are served in issue order; with several they are not, and the
 * transport says so (transport_ops.reorders): the conflict stage orders
 * overlapping accesses. Active messages (barrier, membership,
 * collectives) always take lane 0, so they stay in order among
 * themselves. Connections a peer opened to us carry that peer's requests,
 * which we serve. Every connection starts with the keyed handshake
 * (PeerHello; its MACs are the peer layer's, peer.h) and has its own
 * frame_integrity records and sequence. Losing any lane loses the peer
 * (all of its lanes and requests; the peer layer's loss path).
 */
#ifndef HOISTD_TCP_H
#define HOISTD_TCP_H

#include <stdint.h>

#include "cluster.h"
#include "frames.h"

/* Bytes queued for one socket. */
struct outbuf {
	char *buf;
	uint64_t cap, head, tail; /* pending bytes are [head, tail) */
};

enum conn_phase {
	PH_CONNECTING,  /* outgoing: connect() in progress */
	PH_WAIT_HELLO,  /* outgoing: sent hello, wait for the acceptor's */
	PH_WAIT_FIRST,  /* incoming: wait for the connector's hello */
	PH_WAIT_AUTH,   /* incoming: sent hello+mac, wait for auth */
	PH_UP,
};

enum rx_state { RX_HDR, RX_EXT, RX_PAYLOAD };

struct netconn {
	int fd;
	int outgoing;          /* 1: we connected (requests out, replies in) */
	int32_t node;          /* peer node (incoming: known after hello) */
	uint32_t lane;         /* outgoing: its index in the peer's lanes */
	enum conn_phase phase;
	struct outbuf out;
	uint32_t epoll_events;
	uint8_t nonce[32];     /* ours, for the peer's mac */
	uint8_t peer_nonce[32]; /* incoming: the connector's (session keys) */
	uint64_t born_ns;      /* the handshake must end by born + handshake_timeout_ms */
	uint8_t peer_aes;      /* incoming: the connector can use AES-256-GCM */
	uint64_t last_rx_ns;   /* last sign of life: bytes in, or bytes taken */

	/* receive: a read buffer parsed in place; payloads go straight to
	 * their destination. Plain frames: the parse window [rpos, rlen) of
	 * rin = rbuf. Records (fr set): rbuf holds raw record bytes
	 * [xpos, xlen); the window is the body of the last record opened. */
	char *rbuf;
	const char *rin;
	uint32_t rlen, rpos;
	uint32_t xpos, xlen;
	struct frames *fr;     /* frame_integrity mac/encrypt, once PH_UP */
	struct outbuf sealed;  /* records sealed from out, not yet sent */
	uint32_t short_read;   /* the last recv returned less than asked */
	uint32_t rx_held;      /* its read stopped for the clients' rings (tcp_rx_batch):
				* frames may wait in rbuf, where epoll does not see them */
	enum rx_state rx;
	struct wire_hdr hdr;
	uint8_t ext[WIRE_MAX_EXT];
	uint32_t ext_got;
	char *pdst;            /* payload destination, NULL: discard */
	uint64_t pgot;
	void *pctx;            /* what the payload belongs to */
	/* a W_PACK_REPLY is parsed while it streams in: get data goes
	 * straight to each element's destination */
	uint8_t pk_stream, pk_err;
	uint32_t pk_k, pk_hgot;     /* element, bytes of its result header */
	uint64_t pk_dgot, pk_dlen;  /* its data bytes so far, padded length */
	struct wire_pack_res pk_res;

	struct progress_stats *pst; /* the daemon's: tcp_msgs_*, tcp_bytes_*, tcp_conns */
	struct netconn *next;  /* daemon's list of incoming connections */
	int dead;              /* closed during an event batch: free after it */
};

/* Chunks of one striped put/get still in flight, and the first error:
 * the operation completes (its cookie, which every chunk carries) with
 * the last chunk. */
struct stripe {
	uint32_t left;
	int32_t res;
};

/* A request we sent and await the reply of (ring per lane). */
struct inflight {
	uint64_t tag;
	uint8_t type;        /* W_PUT_* / W_GET_* */
	struct xp_cookie ck; /* what the progress engine wants back;
			      * ck.client NULL once the client is gone */
	char *dst;           /* get: where the data lands */
	uint64_t len;
	struct addr_key key; /* to fill the cache from the reply */
	struct pack_slot *pk; /* W_PACK: its elements (owned) */
	uint32_t npk;
	struct stripe *stripe; /* one chunk of a striped operation, or NULL */
};

/* One connection to a peer and the requests it carries, answered in order. */
struct lane {
	struct netconn *conn;
	struct inflight *ring;
	uint64_t ring_head, ring_tail; /* free-running */
	uint8_t ping_due;              /* a ping went on it, its pong not back */
};

/* Puts and gets of at least this many bytes are striped over the lanes
 * (tcp_lanes > 1): one chunk per lane. */
#define TCP_STRIPE_MIN (256u * 1024u)

#endif
