/*
 * The tcp transport and the cluster it connects (progress thread).
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
 * (PeerHello) and has its own frame_integrity records and sequence. Losing
 * any lane loses the peer (all of its lanes and requests).
 */
#ifndef HOISTD_NET_H
#define HOISTD_NET_H

#include <netinet/in.h>
#include <stdint.h>

#include "addr_cache.h"
#include "frames.h"
#include "hoist_shm.h"
#include "transport.h"
#include "wire.h"

struct daemon;
struct client;
struct job;
struct loop;

/* per-peer counters (progress thread writes, stats reads) */
#define HOISTD_PEER_STATS(X)                                                                       \
	X(ops_out, "requests sent to the peer")                                                    \
	X(bytes_out, "payload bytes sent to the peer")                                             \
	X(ops_in, "requests served for the peer")                                                  \
	X(bytes_in, "payload bytes received from the peer")                                        \
	X(rtt_us, "last measured round trip (ping/pong), microseconds")                            \
	X(connects, "connections established to the peer")                                         \
	X(losses, "times the peer was declared lost")                                              \
	X(stalls, "times a client waited for credits or send buffer")                              \
	X(auth_failures, "handshakes from this address that failed authentication")                \
	X(packs_out, "packed-operation messages sent to the peer")                                 \
	X(ops_packed, "operations sent inside packs (ops_packed / packs_out: per pack)")          \
	X(hdr_bytes_saved, "header bytes (request + reply) saved by packing")                      \
	X(packs_mixed, "packs carrying operations of several local clients (processes)")        \
	X(packs_in, "packed-operation messages served for the peer")                               \
	X(packs_refused, "malformed packs or pack replies from the peer (refused whole: their operations fail with -EPROTO, the connection stays)") \
	X(integrity_failures, "records from the peer that failed the frame integrity check (connection dropped)")

#define STATS_FIELD(name, help) uint64_t name;
struct peer_stats { HOISTD_PEER_STATS(STATS_FIELD) };
#undef STATS_FIELD

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

	struct netconn *next;  /* daemon's list of incoming connections */
	int dead;              /* closed during an event batch: free after it */
};

/* One element of a pack: what its result completes. */
struct pack_slot {
	struct xp_cookie ck;   /* ck.client NULL once the client is gone */
	char *dst;             /* get: where its data lands */
	uint32_t len;
	uint8_t is_get;
	int32_t res;           /* from the reply */
};

/* The pack being filled for a peer (sent at the end of the progress pass,
 * when full, before any other request to the peer, or - aggregation
 * regions - when the region ends). */
struct pack_open {
	char *buf;             /* request payload, WIRE_AM_MAX_PAYLOAD */
	uint32_t plen;         /* request payload bytes so far */
	uint32_t rlen;         /* reply payload bytes at most */
	uint32_t nelem, cap;
	uint64_t job;
	struct pack_slot *slots;
	int hold;              /* only aggregation-region ops in it */
	int mixed;             /* ops of several clients */
	int grew;              /* ops added in this progress pass */
	struct client *first;  /* the client of its first op (cookie) */
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

enum peer_state { PEER_IDLE, PEER_CONNECTING, PEER_UP, PEER_LOST };

struct peer {
	int32_t node;
	char name[128];         /* host:port as configured */
	struct sockaddr_in addr;
	enum peer_state state;  /* written by progress, read by stats */
	struct lane *lanes;     /* tcp: our outgoing connections [nlanes] */
	uint32_t nlanes;
	uint32_t next_lane;     /* where the search for the least busy starts */
	uint32_t pack_lane;     /* the lane the open pack reserved a slot on */
	uint32_t window;        /* requests in flight per lane at most */
	uint64_t next_tag;      /* unique over the peer's lanes */
	uint64_t ping_sent_ns, ping_tag, last_ping_ns;
	uint64_t retry_after_ns;
	struct pack_open pack;
	struct peer_stats st;
};

struct net {
	int enabled;          /* more than one node configured */
	int32_t self;
	int32_t nnodes;
	struct peer *peers;   /* [nnodes]; peers[self] unused */
	int listen_fd;
	struct loop *loop;    /* the progress loop's epoll (d->loop) */
	struct netconn *incoming;
	struct netconn *graveyard; /* closed while an event is handled */
	int in_batch;
	uint8_t key[32];      /* cluster key digest */
	int frames_mode;      /* enum frames_mode (setting frame_integrity) */
	int frames_aes;       /* this CPU runs AES-256-GCM */
	uint8_t job_id_key[32]; /* keys cluster_job_id: from the cluster key, or random on one node */
	struct addr_cache cache;
	uint64_t next_ping_check_ns;
	uint64_t accept_paused_until; /* 0: the listening socket is watched */
	uint64_t next_flood_log_ns;   /* rate limit of the refusal log lines */
	uint64_t flood_unlogged;      /* refusals since the last such line */
};

/* cluster.c (main thread, before the threads start) */
int cluster_configure(struct daemon *d, char *err, size_t errlen);
/* The index of the one node list entry whose IPv4 address is one of
 * local[0..nlocal) (this host's interface addresses): how a daemon without
 * node_id finds itself. -ENOENT when none is; -EEXIST when several are
 * (*first and *second get the first two). */
int cluster_self_index(const struct net *n, const struct in_addr *local, int nlocal, int *first,
		       int *second);

/* A job's id on every node of the cluster: a keyed hash (BLAKE2b under a
 * key derived from the cluster key) of the owner's uid and the job key.
 * Jobs of different owners with one key are different jobs; nobody without
 * the cluster key can compute an id, let alone find two that collide. Never
 * 0. Any thread (job_id_key is immutable once the threads run). */
uint64_t cluster_job_id(const struct net *n, uint32_t uid, const char *key);

/* net.c is the tcp transport: see transport.h for its entry points. */

/* How often the transports look for silent peers, and the silence after
 * which a peer counts as lost: peer_timeout_ms less one check interval, so
 * that a peer is declared lost no later than peer_timeout_ms after its
 * last sign of life, whenever within the interval its silence began
 * (before, a stopped peer was noticed 5.06-5.20 s after it stopped with the
 * 5 s default). */
static inline uint64_t peer_check_interval_ns(uint64_t heartbeat_ms, uint64_t peer_timeout_ms)
{
	uint64_t g = heartbeat_ms * 1000000ull / 4, cap = peer_timeout_ms * 1000000ull / 4;
	return g < cap ? g : cap;
}

/* Heartbeats serve that promise: a healthy idle peer's answers can come
 * heartbeat_ms plus one check interval apart, which must stay well inside
 * the silence limit (under load too), so pings go at least every quarter
 * of peer_timeout_ms whatever heartbeat_ms says (main.c applies it). */
static inline uint64_t peer_heartbeat_ms(uint64_t heartbeat_ms, uint64_t peer_timeout_ms)
{
	uint64_t q = peer_timeout_ms / 4;
	return heartbeat_ms < q ? heartbeat_ms : q;
}

static inline uint64_t peer_silence_limit_ns(uint64_t heartbeat_ms, uint64_t peer_timeout_ms)
{
	return peer_timeout_ms * 1000000ull - peer_check_interval_ns(heartbeat_ms, peer_timeout_ms);
}

/* A peer node is gone (any transport): jobs with ranks there fail,
 * nothing of it stays cached. */
void net_node_lost(struct daemon *d, int32_t node);

#endif
