/* Packed operations shared by the transports: see pack.h and wire.h. */
#include "pack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "hoist_amo.h"
#include "log.h"
#include "cluster.h"

/* Is a packed atomic's operand block well formed: a non-fetching atomic
 * there is, of len bytes (the type's size), reserved bytes zero? */
static int pack_amo_ok(const struct wire_pack_amo *a, uint32_t len)
{
	static const uint8_t zero[sizeof(a->reserved)];
	return !hoist_amo_valid(a->op, a->type) && !hoist_amo_fetching(a->op) &&
	       len == hoist_amo_size(a->type) && !memcmp(a->reserved, zero, sizeof(zero));
}

int pack_check(const struct wire_pack *w, const char *in, uint64_t plen, uint64_t *reply_len)
{
	uint64_t pos = 0, rlen = 0;
	if (w->reserved || w->nelem == 0 || w->nelem > plen / sizeof(struct wire_pack_elem) ||
	    plen > WIRE_AM_MAX_PAYLOAD)
		return -EPROTO;
	for (uint32_t k = 0; k < w->nelem; k++) {
		struct wire_pack_elem e;
		if (plen - pos < sizeof(e))
			return -EPROTO;
		memcpy(&e, in + pos, sizeof(e));
		pos += sizeof(e);
		if (e.reserved0 || e.reserved1 ||
		    (e.op != WIRE_PACK_PUT && e.op != WIRE_PACK_GET && e.op != WIRE_PACK_AMO))
			return -EPROTO;
		if (e.op == WIRE_PACK_PUT) {
			if (plen - pos < wire_pad8(e.len))
				return -EPROTO;
			pos += wire_pad8(e.len);
			rlen += sizeof(struct wire_pack_res);
		} else if (e.op == WIRE_PACK_AMO) {
			struct wire_pack_amo a;
			if (plen - pos < sizeof(a))
				return -EPROTO;
			memcpy(&a, in + pos, sizeof(a));
			if (!pack_amo_ok(&a, e.len))
				return -EPROTO;
			pos += sizeof(a);
			rlen += sizeof(struct wire_pack_res);
		} else {
			rlen += sizeof(struct wire_pack_res) + wire_pad8(e.len);
		}
		if (rlen > WIRE_AM_MAX_PAYLOAD)
			return -EPROTO; /* its reply could not travel as one message */
	}
	if (pos != plen)
		return -EPROTO;
	*reply_len = rlen;
	return 0;
}

uint64_t pack_execute(struct daemon *d, const struct wire_pack *w, const char *in, char *out,
		      uint64_t *ops, uint64_t *bytes)
{
	struct job *j = progress_job_find(d, w->job);
	uint64_t pos = 0, rpos = 0;
	/* the PE whose heap the elements since the last switch wrote: woken
	 * once for a run of them, not per element (a sleeping waiter woken 64
	 * times per pack of atomics cost more than the atomics), and only when
	 * it waits on words inside [tlo, thi), the run's bounding box */
	struct client *touched = NULL;
	uint64_t tlo = UINT64_MAX, thi = 0;
	*ops = *bytes = 0;
	for (uint32_t k = 0; k < w->nelem; k++) {
		struct wire_pack_elem e;
		memcpy(&e, in + pos, sizeof(e));
		pos += sizeof(e);
		const char *data = in + pos;
		if (e.op == WIRE_PACK_PUT)
			pos += wire_pad8(e.len);
		else if (e.op == WIRE_PACK_AMO)
			pos += sizeof(struct wire_pack_amo);
		struct wire_pack_res r = {0};
		struct client *t = NULL;
		if (!j || e.pe < 0 || e.pe >= j->size || !(t = j->pe[e.pe]))
			r.status = -ECONNRESET; /* the PE is not (any more) here */
		else if (e.seg != HOIST_SEG_HEAP)
			r.status = -EINVAL;
		else if (!hoist_range_ok(e.off, e.len, t->heap.bytes))
			r.status = -EFAULT;
		else if (e.op == WIRE_PACK_AMO && e.off % e.len)
			r.status = -EINVAL; /* not naturally aligned */
		char *at = r.status ? NULL : (char *)t->heap.base + e.off;
		/* pack_check let only these three ops through (an atomic: a
		 * valid non-fetching one of len bytes); should it learn another,
		 * that one must not run as a get here */
		if (at && (e.op == WIRE_PACK_PUT || e.op == WIRE_PACK_AMO)) {
			if (t != touched) {
				if (touched) /* the previous run is stored */
					client_heap_touched_range(d, touched, tlo, thi - tlo);
				touched = t;
				tlo = UINT64_MAX, thi = 0;
			}
			if (e.off < tlo)
				tlo = e.off;
			if (e.off + e.len > thi)
				thi = e.off + e.len;
		}
		if (at && e.op == WIRE_PACK_PUT) {
			memmove(at, data, e.len);
		} else if (at && e.op == WIRE_PACK_AMO) {
			struct wire_pack_amo a;
			uint64_t old;
			memcpy(&a, data, sizeof(a));
			hoist_amo_apply(at, a.op, e.len, a.value, 0, &old);
			STAT_INC(&d->pst, amo_served);
			STAT_INC(&d->pst, amo_served_packed);
		} else if (at && e.op == WIRE_PACK_GET) {
			r.len = e.len;
			memcpy(out + rpos + sizeof(r), at, e.len);
			memset(out + rpos + sizeof(r) + e.len, 0, wire_pad8(e.len) - e.len);
		} else if (at) {
			r.status = -EPROTO;
		}
		if (!r.status) {
			(*ops)++;
			*bytes += e.len;
		}
		memcpy(out + rpos, &r, sizeof(r));
		rpos += sizeof(r) + wire_pad8(r.len);
	}
	if (touched) /* t may wait for it: before the reply */
		client_heap_touched_range(d, touched, tlo, thi - tlo);
	return rpos;
}

/* ---- serving packs and answering ours ------------------------------------- */

void pack_refused(struct daemon *d, int32_t from, const char *what)
{
	STAT_INC(&d->net.peers[from].st, packs_refused);
	hlog_warn("node %d sent a malformed %s; refused (-EPROTO), the connection stays", from, what);
}

uint64_t pack_serve(struct daemon *d, int32_t from, const struct wire_pack *w, int ext_ok,
		    const char *payload, uint64_t plen, char *out, struct wire_pack_reply *rep)
{
	struct peer *p = &d->net.peers[from];
	uint64_t rlen, ops, bytes;
	*rep = (struct wire_pack_reply){.nelem = ext_ok ? w->nelem : 0};
	if (!ext_ok || pack_check(w, payload, plen, &rlen)) {
		pack_refused(d, from, "pack");
		rep->status = -EPROTO;
		return 0;
	}
	uint64_t rpos = pack_execute(d, w, payload, out, &ops, &bytes);
	STAT_INC(&p->st, packs_in);
	STAT_ADD(&p->st, ops_in, ops);
	STAT_ADD(&p->st, bytes_in, bytes);
	return rpos;
}

int pack_res_ok(const struct pack_slot *s, const struct wire_pack_res *r)
{
	if (r->status > 0)
		return 0;
	if (r->len)
		return !r->status && s->is_get && r->len == s->len;
	return r->status || !s->is_get || !s->len;
}

int pack_answer(struct daemon *d, int32_t from, struct pack_slot *s, uint32_t n,
		const struct wire_pack_reply *rep, const char *in, uint64_t plen)
{
	int bad = rep->nelem != n || rep->status > 0 || (rep->status && plen);
	uint64_t pos = 0;
	for (uint32_t k = 0; !bad && !rep->status && k < n; k++) {
		struct wire_pack_res r;
		if (plen - pos < sizeof(r)) {
			bad = 1;
			break;
		}
		memcpy(&r, in + pos, sizeof(r));
		pos += sizeof(r);
		if (!pack_res_ok(&s[k], &r) || plen - pos < wire_pad8(r.len)) {
			bad = 1;
			break;
		}
		s[k].res = r.status;
		if (r.len && s[k].ck.client)
			memcpy(s[k].dst, in + pos, r.len);
		pos += wire_pad8(r.len);
	}
	if (!bad && !rep->status && pos != plen)
		bad = 1;
	if (bad)
		pack_refused(d, from, "pack reply");
	pack_finish(d, s, n, bad ? -EPROTO : rep->status);
	return bad ? -EPROTO : 0;
}

void pack_finish(struct daemon *d, struct pack_slot *s, uint32_t n, int res)
{
	for (uint32_t k = 0; k < n; k++)
		progress_complete(d, &s[k].ck, res ? res : s[k].res);
	free(s);
}

void pack_fail_open(struct daemon *d, struct pack_open *pk, int res)
{
	struct pack_slot *s = pk->slots;
	uint32_t n = pk->nelem;
	if (!n)
		return;
	pack_reset(pk);
	pack_finish(d, s, n, res);
}

void pack_flush(struct daemon *d, int all, int (*send)(struct daemon *d, int32_t node))
{
	struct net *n = &d->net;
	for (int32_t i = 0; n->peers && i < n->nnodes; i++) {
		struct pack_open *pk = &n->peers[i].pack;
		if (i == n->self || !(all ? pk->nelem != 0 : pack_due(d, pk)))
			continue;
		int rc = send(d, i);
		if (rc)
			hlog_debug("cannot send a pack to node %d: %s", i, strerror(-rc));
	}
}

int pack_due(const struct daemon *d, struct pack_open *pk)
{
	int due = pk->nelem && !pk->hold && (!d->more_pending || !pk->grew);
	pk->grew = 0;
	return due;
}

/* ---- building packs (the requesting side) ---------------------------------- */

/* per operation sent alone (tcp): request header + direct ext + reply
 * header + reply ext; what hdr_bytes_saved compares a pack with */
#define SINGLE_HDR_BYTES (2 * sizeof(struct wire_hdr) + sizeof(struct wire_direct) + \
			  sizeof(struct wire_reply))

int pack_eligible(struct daemon *d, const struct xp_req *rq)
{
	if (rq->flags & XP_RF_ALONE)
		return 0;
	/* an atomic's answer is a status: only the non-fetching ones */
	if (rq->kind == XP_AMO && hoist_amo_fetching(rq->amo.op))
		return 0;
	uint32_t need, rep;
	if (pack_elem_size(rq->kind, rq->len, &need, &rep) || need > WIRE_AM_MAX_PAYLOAD ||
	    rep > WIRE_AM_MAX_PAYLOAD)
		return 0; /* too big for one pack: alone */
	if (rq->flags & XP_RF_PACK)
		return 1;
	return d->cfg.coalesce && rq->len <= d->cfg.coalesce_max;
}

int pack_elem_size(enum xp_kind kind, uint64_t len, uint32_t *req, uint32_t *rep)
{
	switch (kind) {
	case XP_PUT: /* the data goes with the request */
		*req = (uint32_t)(sizeof(struct wire_pack_elem) + wire_pad8(len));
		*rep = (uint32_t)sizeof(struct wire_pack_res);
		return 0;
	case XP_GET: /* the data comes with the reply */
		*req = (uint32_t)sizeof(struct wire_pack_elem);
		*rep = (uint32_t)(sizeof(struct wire_pack_res) + wire_pad8(len));
		return 0;
	case XP_AMO: /* non-fetching (pack_eligible): operands out, a status back */
		*req = (uint32_t)(sizeof(struct wire_pack_elem) + sizeof(struct wire_pack_amo));
		*rep = (uint32_t)sizeof(struct wire_pack_res);
		return 0;
	case XP_SEND:
		return -EOPNOTSUPP;
	}
	return -EPROTO;
}

int pack_must_close(const struct pack_open *pk, const struct xp_req *rq, uint32_t req, uint32_t rep)
{
	return pk->nelem && (pk->job != rq->job || pk->plen + req > WIRE_AM_MAX_PAYLOAD ||
			     pk->rlen + rep > WIRE_AM_MAX_PAYLOAD);
}

int pack_begin(struct pack_open *pk, const struct xp_req *rq)
{
	if (!pk->buf && !(pk->buf = malloc(WIRE_AM_MAX_PAYLOAD)))
		return -ENOMEM;
	pk->job = rq->job;
	pk->hold = 1;
	pk->first = rq->ck.client;
	return 0;
}

int pack_append(struct pack_open *pk, const struct xp_req *rq)
{
	uint32_t req, rep;
	int rc = pack_elem_size(rq->kind, rq->len, &req, &rep);
	if (rc)
		return rc;
	if (rq->kind == XP_AMO && hoist_amo_fetching(rq->amo.op))
		return -EOPNOTSUPP; /* pack_eligible() keeps them out: no place for the old value */
	if (pk->nelem == pk->cap) {
		uint32_t cap = pk->cap ? pk->cap * 2 : 16;
		struct pack_slot *ns = realloc(pk->slots, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		pk->slots = ns;
		pk->cap = cap;
	}
	if (pk->nelem && pk->first != rq->ck.client)
		pk->mixed = 1;
	struct wire_pack_elem e = {.pe = rq->pe, .seg = rq->seg, .len = (uint32_t)rq->len,
				   .off = rq->off};
	struct pack_slot *s = &pk->slots[pk->nelem];
	*s = (struct pack_slot){.ck = rq->ck, .len = (uint32_t)rq->len};
	switch (rq->kind) {
	case XP_PUT: {
		e.op = WIRE_PACK_PUT;
		char *to = pk->buf + pk->plen + sizeof(e);
		memcpy(to, rq->laddr, rq->len);
		memset(to + rq->len, 0, wire_pad8(rq->len) - rq->len);
		break;
	}
	case XP_GET:
		e.op = WIRE_PACK_GET;
		s->is_get = 1;
		s->dst = rq->laddr;
		break;
	case XP_AMO: {
		e.op = WIRE_PACK_AMO;
		struct wire_pack_amo a = {.op = rq->amo.op, .type = rq->amo.type,
					  .value = rq->amo.value};
		memcpy(pk->buf + pk->plen + sizeof(e), &a, sizeof(a));
		s->len = 0; /* nothing comes back but the status */
		pk->namo++;
		if (rq->ck.client)
			STAT_INC(&rq->ck.client->st, amo_packed);
		break;
	}
	case XP_SEND:
		return -EOPNOTSUPP; /* pack_elem_size() refused it already */
	}
	memcpy(pk->buf + pk->plen, &e, sizeof(e));
	pk->plen += req;
	pk->rlen += rep;
	pk->nelem++;
	if (!(rq->flags & XP_RF_HOLD))
		pk->hold = 0;
	pk->grew = 1;
	return 0;
}

void pack_count_sent(struct peer_stats *st, const struct pack_open *pk)
{
	uint64_t packed = 2 * sizeof(struct wire_hdr) + sizeof(struct wire_pack) +
			  sizeof(struct wire_pack_reply) +
			  pk->nelem * (sizeof(struct wire_pack_elem) + sizeof(struct wire_pack_res));
	uint64_t single = (uint64_t)pk->nelem * SINGLE_HDR_BYTES;
	STAT_INC(st, packs_out);
	STAT_ADD(st, ops_packed, pk->nelem);
	STAT_ADD(st, amos_packed, pk->namo);
	if (pk->mixed)
		STAT_INC(st, packs_mixed);
	if (single > packed)
		STAT_ADD(st, hdr_bytes_saved, single - packed);
}

void pack_reset(struct pack_open *pk)
{
	pk->slots = NULL;
	pk->cap = pk->nelem = pk->plen = pk->rlen = pk->namo = 0;
	pk->hold = pk->mixed = 0;
}
