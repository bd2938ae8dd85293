/*
 * The peer layer (progress thread): what every network transport (tcp in
 * tcp.c, verbs in verbs/) knows about a peer node, decided in one place.
 *
 * - The per-node state machine (struct peer_link): idle, connecting, up,
 *   lost; when the first attempt of a connection began, the retry backoff
 *   of a failed attempt, when a lost peer may be tried again, the last
 *   sign of life and the heartbeat's ping.
 * - The heartbeat policy: how often the transports look (the check
 *   interval), when a ping is due, and when silence means lost, for the
 *   settings heartbeat_ms and peer_timeout_ms.
 * - The loss path (peer_lost): mark the node lost, count and log it once,
 *   let the transport drop its wire (connections, requests in flight), fail
 *   the jobs with ranks there and forget its cached addresses.
 * - The keyed handshake: the HMAC both sides compute (one function, the
 *   transport's label keeps tcp and verbs MACs apart), its constant-time
 *   check, the hello's sanity rules (version, node list) and the replay
 *   window of timestamped nonces (verbs' connect requests).
 * - Address resolution by name (job, PE, segment) on the serving side.
 * - The per-peer counters (HOISTD_PEER_STATS).
 *
 * A transport keeps only its wire: sockets, lanes and frames (tcp), queue
 * pairs, rdma_cm and the shared receive queue (verbs).
 */
#ifndef HOISTD_PEER_H
#define HOISTD_PEER_H

#include <stddef.h>
#include <stdint.h>

struct daemon;
struct client;
struct wire_target;

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
	X(amos_packed, "non-fetching atomics sent inside packs (also in ops_packed)")             \
	X(packs_in, "packed-operation messages served for the peer")                               \
	X(packs_refused, "malformed packs or pack replies from the peer (refused whole: their operations fail with -EPROTO, the connection stays)") \
	X(integrity_failures, "records from the peer that failed the frame integrity check (connection dropped)")

#define STATS_FIELD(name, help) uint64_t name;
struct peer_stats { HOISTD_PEER_STATS(STATS_FIELD) };
#undef STATS_FIELD

enum peer_state { PEER_IDLE, PEER_CONNECTING, PEER_UP, PEER_LOST };

/* A lost peer is tried again no sooner than this after it was lost. */
#define PEER_RETRY_NS (1000000000ull)
/* A failed connection attempt is retried after a backoff that doubles
 * from PEER_BACKOFF_MIN_MS to PEER_BACKOFF_MAX_MS. */
#define PEER_BACKOFF_MIN_MS 20u
#define PEER_BACKOFF_MAX_MS 1000u

/* One peer node's state, as every transport sees it. */
struct peer_link {
	enum peer_state state;  /* written by progress, read by stats (relaxed) */
	uint64_t first_try_ns;  /* the current connection attempt began; 0: none */
	uint64_t retry_at_ns;   /* a failed attempt is retried then; 0: none due */
	uint32_t backoff_ms;    /* the last retry's backoff */
	uint64_t retry_after_ns; /* lost: not tried again before */
	uint64_t last_heard_ns; /* the peer daemon's last sign of life */
	uint64_t ping_sent_ns;  /* a ping is unanswered since; 0: none */
	uint64_t ping_tag;      /* the latest ping's tag */
	uint64_t last_ping_ns;  /* the latest ping went (or the link came up) */
};

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

/* The silence limit of a connection the peer opened to us, which hears
 * only the peer's pings when idle: they come every heartbeat_ms plus one
 * check interval, so never less than that (nor more than peer_timeout_ms). */
static inline uint64_t peer_silence_limit_in_ns(uint64_t heartbeat_ms, uint64_t peer_timeout_ms)
{
	uint64_t silent = peer_silence_limit_ns(heartbeat_ms, peer_timeout_ms);
	uint64_t g = peer_check_interval_ns(heartbeat_ms, peer_timeout_ms);
	uint64_t floor = heartbeat_ms * 1000000ull + 2 * g, to = peer_timeout_ms * 1000000ull;
	uint64_t s = silent > floor ? silent : floor;
	return s < to ? s : to;
}

/* The periodic check is due at now: 1 (and *next moves one interval on). */
int peer_check_due(uint64_t *next, uint64_t now, uint64_t heartbeat_ms, uint64_t peer_timeout_ms);

/* A ping is due on an up link: none unanswered and heartbeat_ms passed
 * since the last. 1: the caller sends one tagged l->ping_tag (the link
 * counts it as sent at now; peer_ping_unsent if it could not go). */
int peer_ping_due(struct peer_link *l, uint64_t now, uint64_t heartbeat_ms);
void peer_ping_unsent(struct peer_link *l);
/* A pong with tag came: 1 when it answers the ping in flight (the round
 * trip goes to st->rtt_us), 0 for a stale one. */
int peer_pong(struct peer_link *l, struct peer_stats *st, uint64_t tag, uint64_t now);

/* Silence means lost: the transport waits for an answer (awaiting) and has
 * heard nothing for longer than limit since heard_ns (the later of the
 * last sign of life and when it started waiting). */
int peer_silent(uint64_t now, uint64_t heard_ns, int awaiting, uint64_t limit);

/* Connection attempts. peer_may_try: 0, or -ECONNRESET while a lost peer
 * must not be tried yet. peer_trying: an attempt starts (the state turns
 * connecting unless up). peer_up: the link is up and authenticated (heard
 * at now; the heartbeat starts over, the backoff too). peer_alive: the
 * peer reached us itself: a lost mark from an earlier attempt is void. */
int peer_may_try(const struct peer_link *l, uint64_t now);
void peer_trying(struct peer_link *l, uint64_t now);
void peer_up(struct peer_link *l, uint64_t now);
void peer_alive(struct peer_link *l);

/* An attempt failed before the link was up: 0 with l->retry_at_ns set
 * (backoff doubled, within its bounds), or -ETIMEDOUT when the attempt
 * began more than timeout_ns ago (the peer is lost). */
int peer_backoff(struct peer_link *l, uint64_t now, uint64_t timeout_ns);

/* The loss path. Marks the node lost (and when it may be tried again),
 * counts and logs the loss once, calls drop(d, node, arg) - the
 * transport's wire: its connections and the requests they carry fail -
 * then fails the jobs with ranks on the node and forgets its cached
 * addresses (peer_jobs_lost). l, st and name are the node's. */
void peer_lost(struct daemon *d, int32_t node, struct peer_link *l, struct peer_stats *st,
	       const char *name, const char *why,
	       void (*drop)(struct daemon *d, int32_t node, void *arg), void *arg);
/* A peer node is gone (any transport, or a daemon's lost mark): jobs with
 * ranks there fail, nothing of it stays cached. */
void peer_jobs_lost(struct daemon *d, int32_t node);

/* ---- the keyed handshake ---------------------------------------------- */

/* HMAC-SHA256 under the cluster key over label, role, nonce, acceptor and
 * connector node ids (host order, as both sides of one build compute it).
 * label names the transport ("" for tcp, "verbs-" for verbs) so that a MAC
 * of one never passes for the other; role ("acceptor", "connector") that
 * one side's proof never passes for the other's. */
void peer_hs_mac(const uint8_t key[32], const char *label, const char *role, const uint8_t *nonce,
		 size_t nlen, int32_t acceptor, int32_t connector, uint8_t out[32]);
/* The peer's mac (maclen bytes) is that MAC: 0, or -EACCES (constant time). */
int peer_hs_verify(const uint8_t key[32], const char *label, const char *role, const uint8_t *nonce,
		   size_t nlen, int32_t acceptor, int32_t connector, const uint8_t *mac,
		   size_t maclen);
/* A hello names this build's wire version, our node count and another node
 * of the list: 1, else 0. */
int peer_hello_ok(uint32_t version, uint32_t nnodes, int64_t node, int32_t self, int32_t our_nnodes);

/* Replay window of timestamped nonces (16 bytes, the first 8 the sender's
 * wall clock in ns). A request is fresh when its timestamp is within
 * PEER_AUTH_WINDOW_NS of ours, later than the last one accepted from that
 * node (senders send increasing ones) and its nonce is not among the last
 * PEER_SEEN_MAX accepted. The recent nonces alone are no defence: a
 * request captured on the wire can be replayed within the window once
 * PEER_SEEN_MAX others pushed its nonce out (a large cluster starting). */
#define PEER_AUTH_WINDOW_NS (120ull * 1000000000ull)
#define PEER_SEEN_MAX 128u
struct peer_replay {
	uint8_t seen[PEER_SEEN_MAX][16];
	uint32_t nseen;
	uint64_t *last_ts; /* [nnodes] */
};
/* 1 (and remembered) or 0 (refuse it). */
int peer_fresh(struct peer_replay *r, int32_t node, uint64_t ts, const uint8_t nonce[16],
	       uint64_t now);
/* A timestamp to send: the wall clock, later than *last (updated). */
uint64_t peer_next_ts(uint64_t *last, uint64_t wall);

/* ---- address resolution (serving side) --------------------------------- */

/* The client a target names here: 0 and *out, -ECONNRESET when the PE is
 * not (any more) here, -EINVAL for a segment peers cannot address. */
int peer_target_client(struct daemon *d, const struct wire_target *t, struct client **out);

#endif
