/*
 * Active messages between daemons, independent of the transport that
 * carries them: what each one means (dispatch) and how to send each kind.
 */
#include "am.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
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

int am_handles(uint8_t type)
{
	switch (type) {
	case W_BARRIER:
	case W_MEMBER:
	case W_PE_GONE:
	case W_COLL:
	case W_COLL_ABORT:
		return 1;
	}
	return 0;
}

int am_payload_ok(uint8_t type, const void *ext, uint16_t hlen, uint64_t plen)
{
	switch (type) {
	case W_BARRIER:
		return hlen == sizeof(struct wire_barrier) && plen == 0;
	case W_PE_GONE:
		return hlen == sizeof(struct wire_pe_gone) && plen == 0;
	case W_COLL_ABORT:
		return hlen == sizeof(struct wire_coll_abort) && plen == 0;
	case W_COLL: {
		if (hlen != sizeof(struct wire_coll) || plen > WIRE_AM_MAX_PAYLOAD)
			return 0;
		struct wire_coll h;
		memcpy(&h, ext, sizeof(h));
		return h.off <= h.total && plen <= h.total - h.off;
	}
	case W_MEMBER: {
		if (hlen != sizeof(struct wire_member))
			return 0;
		struct wire_member m;
		memcpy(&m, ext, sizeof(m));
		return m.keylen > 0 && m.keylen <= 255 && m.size >= 1 && m.size <= (1 << 20) &&
		       m.nranks <= (uint32_t)m.size &&
		       plen == m.keylen + (uint64_t)m.nranks * sizeof(struct wire_rank);
	}
	default:
		return 0;
	}
}

int am_dispatch(struct daemon *d, int32_t from, uint8_t type, const void *ext, uint16_t hlen,
		const void *payload, uint64_t plen)
{
	if (!am_payload_ok(type, ext, hlen, plen))
		return -EPROTO;
	switch (type) {
	case W_BARRIER: {
		struct wire_barrier b;
		memcpy(&b, ext, sizeof(b));
		struct job *j = progress_job_find(d, b.job);
		if (j && b.round < 32)
			barrier_recv(d, j, b.epoch, b.round);
		return 0;
	}
	case W_PE_GONE: {
		struct wire_pe_gone g;
		memcpy(&g, ext, sizeof(g));
		struct addr_key k = {.job = g.job, .pe = g.pe, .seg = HOIST_SEG_HEAP};
		addr_cache_invalidate(&d->net.cache, &k, UINT32_MAX);
		struct job *j = progress_job_find(d, g.job);
		if (j && g.pe >= 0 && g.pe < j->size)
			job_pe_gone(d, j, g.pe, g.clean != 0, g.epoch, g.nonce);
		return 0;
	}
	case W_COLL: {
		struct wire_coll h;
		memcpy(&h, ext, sizeof(h));
		struct job *j = progress_job_find(d, h.job);
		if (j)
			coll_recv(d, j, from, &h, payload, plen);
		return 0;
	}
	case W_COLL_ABORT: {
		struct wire_coll_abort a;
		memcpy(&a, ext, sizeof(a));
		struct job *j = progress_job_find(d, a.job);
		if (j)
			coll_abort_recv(d, j, a.seq, a.err);
		return 0;
	}
	case W_MEMBER: {
		struct wire_member m;
		memcpy(&m, ext, sizeof(m));
		struct announce *a = calloc(1, sizeof(*a) + m.nranks * sizeof(struct wire_rank));
		if (!a)
			return -ENOMEM;
		memcpy(a->key, payload, m.keylen);
		a->key[m.keylen] = 0;
		memcpy(a->ranks, (const char *)payload + m.keylen, m.nranks * sizeof(struct wire_rank));
		a->from_node = from;
		a->to_node = d->net.self;
		a->job = m.job;
		a->size = m.size;
		a->uid = m.uid;
		a->heap_bytes = m.heap_bytes;
		a->nranks = m.nranks;
		a->flags = m.flags;
		/* the key must contain no NUL, and (uid, key) be what the id says */
		if (strlen(a->key) != m.keylen || cluster_job_id(&d->net, m.uid, a->key) != m.job ||
		    cmdq_push(&d->to_control, CMD_MEMBER, a)) {
			free(a);
			return -EPROTO;
		}
		return 0;
	}
	}
	return -EPROTO;
}
