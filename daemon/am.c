/*
 * Active messages between daemons, independent of the transport that
 * carries them: how to send each kind, and the handler table that a
 * received one is dispatched through. The table is indexed by wire message
 * type (wire.h W_*); the stage that owns a message registers its handler at
 * start (barrier.c: W_BARRIER, W_PE_GONE; coll.c: W_COLL, W_COLL_ABORT;
 * jobs.c: W_MEMBER; transport/amo.c: W_AMO, W_AMO_REPLY), so this file
 * names none of them. A type nobody
 * registered, or a message of the wrong shape, is refused (-EPROTO) and
 * counted (am_refused); what the transport then does with the connection
 * is its own rule, and the daemon keeps serving.
 */
#include "am.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "log.h"

static const struct transport_ops *xp(struct daemon *d)
{
	return d->xport;
}

int am_send_barrier(struct daemon *d, int32_t node, uint64_t job, uint32_t epoch, uint32_t round)
{
	struct wire_barrier b = {.job = job, .epoch = epoch, .round = round};
	return xp(d)->am_send(d, node, W_BARRIER, &b, sizeof(b), NULL, 0);
}

int am_send_member(struct daemon *d, int32_t node, const struct announce *a)
{
	size_t klen = strlen(a->key);
	size_t plen = klen + a->nranks * sizeof(struct wire_rank);
	char *payload = malloc(plen ? plen : 1);
	if (!payload)
		return -ENOMEM;
	memcpy(payload, a->key, klen);
	memcpy(payload + klen, a->ranks, a->nranks * sizeof(struct wire_rank));
	struct wire_member m = {.job = a->job, .size = a->size, .uid = a->uid,
				.heap_bytes = a->heap_bytes, .keylen = (uint16_t)klen,
				.flags = (uint16_t)a->flags, .nranks = a->nranks};
	int rc = xp(d)->am_send(d, node, W_MEMBER, &m, sizeof(m), payload, plen);
	free(payload);
	return rc;
}

int am_send_pe_gone(struct daemon *d, int32_t node, uint64_t job, int32_t pe, int clean,
		    uint32_t epoch, uint64_t nonce)
{
	struct wire_pe_gone g = {.job = job, .pe = pe, .clean = (uint32_t)clean, .epoch = epoch,
				 .nonce = nonce};
	return xp(d)->am_send(d, node, W_PE_GONE, &g, sizeof(g), NULL, 0);
}

static const struct am_handler *am_table[W__COUNT];

int am_register(uint8_t type, const struct am_handler *h)
{
	if (type >= W__COUNT || !h || !h->recv)
		return -EINVAL;
	if (am_table[type] && am_table[type] != h)
		return -EEXIST; /* two stages claim one message */
	am_table[type] = h;
	return 0;
}

static const struct am_handler *am_find(uint8_t type)
{
	return type < W__COUNT ? am_table[type] : NULL;
}

int am_handles(uint8_t type)
{
	return am_find(type) != NULL;
}

int am_payload_ok(uint8_t type, const void *ext, uint16_t hlen, uint64_t plen)
{
	const struct am_handler *h = am_find(type);
	if (!h || hlen != h->hlen)
		return 0;
	if (!h->payload_ok)
		return plen == 0;
	return h->payload_ok(ext, plen);
}

int am_dispatch(struct daemon *d, int32_t from, uint8_t type, const void *ext, uint16_t hlen,
		const void *payload, uint64_t plen)
{
	const struct am_handler *h = am_find(type);
	if (!h) {
		STAT_INC(&d->pst, am_refused);
		hlog_warn("node %d sent an active message of type %u, which no stage handles; refused",
			  from, type);
		return -EPROTO;
	}
	if (!am_payload_ok(type, ext, hlen, plen)) {
		STAT_INC(&d->pst, am_refused);
		hlog_warn("node %d sent a malformed %s message; refused", from, h->name);
		return -EPROTO;
	}
	int rc = h->recv(d, from, ext, payload, plen);
	if (rc == -EPROTO)
		STAT_INC(&d->pst, am_refused);
	return rc;
}
