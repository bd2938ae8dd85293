/*
 * The peer layer (progress thread): peer state, heartbeats, loss, the
 * keyed handshake, address resolution by name. See peer.h.
 */
#include "peer.h"

#include <errno.h>
#include <sodium.h>
#include <string.h>

#include "addr_cache.h"
#include "daemon.h"
#include "hoist_shm.h"
#include "log.h"
#include "wire.h"

/* ---- heartbeats ------------------------------------------------------------ */

int peer_check_due(uint64_t *next, uint64_t now, uint64_t heartbeat_ms, uint64_t peer_timeout_ms)
{
	if (now < *next)
		return 0;
	*next = now + peer_check_interval_ns(heartbeat_ms, peer_timeout_ms);
	return 1;
}

int peer_ping_due(struct peer_link *l, uint64_t now, uint64_t heartbeat_ms)
{
	if (l->state != PEER_UP || l->ping_sent_ns || now - l->last_ping_ns <= heartbeat_ms * 1000000ull)
		return 0;
	l->last_ping_ns = l->ping_sent_ns = now;
	l->ping_tag++;
	return 1;
}

void peer_ping_unsent(struct peer_link *l)
{
	l->ping_sent_ns = 0;
}

int peer_pong(struct peer_link *l, struct peer_stats *st, uint64_t tag, uint64_t now)
{
	if (tag != l->ping_tag || !l->ping_sent_ns)
		return 0;
	__atomic_store_n(&st->rtt_us, (now - l->ping_sent_ns) / 1000, __ATOMIC_RELAXED);
	l->ping_sent_ns = 0;
	return 1;
}

int peer_silent(uint64_t now, uint64_t heard_ns, int awaiting, uint64_t limit)
{
	return awaiting && now > heard_ns && now - heard_ns > limit;
}

/* ---- connection attempts ------------------------------------------------- */

int peer_may_try(const struct peer_link *l, uint64_t now)
{
	return l->state == PEER_LOST && now < l->retry_after_ns ? -ECONNRESET : 0;
}

void peer_trying(struct peer_link *l, uint64_t now)
{
	if (!l->first_try_ns)
		l->first_try_ns = now;
	l->retry_at_ns = 0;
	if (l->state != PEER_UP) {
		__atomic_store_n(&l->state, PEER_CONNECTING, __ATOMIC_RELAXED);
		l->last_ping_ns = now;
		l->ping_sent_ns = 0;
	}
}

void peer_up(struct peer_link *l, uint64_t now)
{
	l->first_try_ns = 0;
	l->retry_at_ns = 0;
	l->backoff_ms = 0;
	l->last_heard_ns = l->last_ping_ns = now;
	l->ping_sent_ns = 0;
	__atomic_store_n(&l->state, PEER_UP, __ATOMIC_RELAXED);
}

void peer_alive(struct peer_link *l)
{
	if (l->state == PEER_LOST)
		l->retry_after_ns = 0;
}

int peer_backoff(struct peer_link *l, uint64_t now, uint64_t timeout_ns)
{
	if (now - l->first_try_ns > timeout_ns)
		return -ETIMEDOUT;
	l->backoff_ms = l->backoff_ms ? l->backoff_ms * 2 : PEER_BACKOFF_MIN_MS;
	if (l->backoff_ms > PEER_BACKOFF_MAX_MS)
		l->backoff_ms = PEER_BACKOFF_MAX_MS;
	l->retry_at_ns = now + l->backoff_ms * 1000000ull;
	return 0;
}

/* ---- loss ------------------------------------------------------------------- */

void peer_lost(struct daemon *d, int32_t node, struct peer_link *l, struct peer_stats *st,
	       const char *name, const char *why,
	       void (*drop)(struct daemon *d, int32_t node, void *arg), void *arg)
{
	if (l->state != PEER_LOST) {
		hlog_warn("peer node %d (%s) lost: %s", node, name, why);
		STAT_INC(st, losses);
	}
	__atomic_store_n(&l->state, PEER_LOST, __ATOMIC_RELAXED);
	l->retry_after_ns = now_ns() + PEER_RETRY_NS;
	l->ping_sent_ns = 0;
	l->first_try_ns = 0;
	l->retry_at_ns = 0;
	l->backoff_ms = 0;
	if (drop)
		drop(d, node, arg);
	peer_jobs_lost(d, node);
}

void peer_jobs_lost(struct daemon *d, int32_t node)
{
	for (struct job *j = d->pjobs; j; j = j->prog_next) {
		if (!j->prog_ready)
			continue;
		int involved = 0;
		for (int32_t r = 0; r < j->size; r++)
			if (j->node_of[r] == node && !j->pe_gone[r]) {
				j->pe_gone[r] = 1;
				involved = 1;
			}
		if (involved)
			job_fail(j, -ECONNRESET);
	}
	xp_amo_node_lost(d, node); /* its atomics in flight fail */
	addr_cache_invalidate_node(&d->net.cache, node);
}

/* ---- the keyed handshake ------------------------------------------------------ */

void peer_hs_mac(const uint8_t key[32], const char *label, const char *role, const uint8_t *nonce,
		 size_t nlen, int32_t acceptor, int32_t connector, uint8_t out[32])
{
	crypto_auth_hmacsha256_state st;
	crypto_auth_hmacsha256_init(&st, key, 32);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)label, strlen(label));
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)role, strlen(role));
	crypto_auth_hmacsha256_update(&st, nonce, nlen);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)&acceptor, sizeof(acceptor));
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)&connector, sizeof(connector));
	crypto_auth_hmacsha256_final(&st, out);
}

int peer_hs_verify(const uint8_t key[32], const char *label, const char *role, const uint8_t *nonce,
		   size_t nlen, int32_t acceptor, int32_t connector, const uint8_t *mac,
		   size_t maclen)
{
	uint8_t want[32];
	if (!mac || maclen != sizeof(want))
		return -EACCES;
	peer_hs_mac(key, label, role, nonce, nlen, acceptor, connector, want);
	int ok = sodium_memcmp(want, mac, sizeof(want)) == 0;
	sodium_memzero(want, sizeof(want));
	return ok ? 0 : -EACCES;
}

int peer_hello_ok(uint32_t version, uint32_t nnodes, int64_t node, int32_t self, int32_t our_nnodes)
{
	return version == WIRE_VERSION && nnodes == (uint32_t)our_nnodes && node >= 0 &&
	       node < our_nnodes && node != self;
}

static int nonce_seen(struct peer_replay *r, const uint8_t *nonce)
{
	uint32_t k = r->nseen < PEER_SEEN_MAX ? r->nseen : PEER_SEEN_MAX;
	for (uint32_t i = 0; i < k; i++)
		if (!memcmp(r->seen[i], nonce, 16))
			return 1;
	memcpy(r->seen[r->nseen++ % PEER_SEEN_MAX], nonce, 16);
	return 0;
}

int peer_fresh(struct peer_replay *r, int32_t node, uint64_t ts, const uint8_t nonce[16],
	       uint64_t now)
{
	if ((ts > now ? ts - now : now - ts) > PEER_AUTH_WINDOW_NS || ts <= r->last_ts[node] ||
	    nonce_seen(r, nonce))
		return 0;
	r->last_ts[node] = ts;
	return 1;
}

uint64_t peer_next_ts(uint64_t *last, uint64_t wall)
{
	if (wall <= *last)
		wall = *last + 1; /* increasing, whatever the clock does */
	*last = wall;
	return wall;
}

/* ---- address resolution ------------------------------------------------------- */

int peer_target_client(struct daemon *d, const struct wire_target *t, struct client **out)
{
	struct job *j = progress_job_find(d, t->job);
	if (!j || t->pe < 0 || t->pe >= j->size || !j->pe[t->pe])
		return -ECONNRESET; /* the PE is not (any more) here */
	if (t->seg != HOIST_SEG_HEAP)
		return -EINVAL;
	*out = j->pe[t->pe];
	return 0;
}
