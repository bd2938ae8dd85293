/*
 * Remote atomics over a network transport (XP_AMO for tcp and verbs),
 * implemented once: an active-message request/reply over the transport's
 * am_send.
 *
 * Design: an atomic executes as a CPU atomic (hoist_amo.h, __atomic
 * builtins) on the target node's memory: by a PE of that node itself on
 * its mapping of the target heap (libhoist's direct path), by that node's
 * daemon for any other caller (it maps every local heap: the self
 * transport for its own clients, this file's W_AMO handler for other
 * nodes). Never a NIC atomic (IBV_WR_ATOMIC_*): on most HCAs those are not
 * atomic with the CPU's, they are 64-bit only, and many have no swap,
 * and, or, xor. One atomicity domain across the direct, self, tcp and
 * verbs paths therefore means the target node's CPU.
 *
 * Not here: a non-fetching atomic without a signal that the pack layer
 * takes (pack_eligible: coalescing on, or an aggregation region) travels
 * as a WIRE_PACK_AMO element of a W_PACK instead and is executed by the
 * target's pack_execute with the same hoist_amo_apply (stages/pack.c).
 *
 * Requester (xp_amo, called by the transport's rma() for XP_AMO): the
 * request goes into a table of atomics in flight (index and generation
 * make its id) and out as W_AMO to the target node's daemon. Target
 * (amo_recv): finds the job and its local PE, checks segment, bounds,
 * alignment, op and type, executes the atomic and answers W_AMO_REPLY with
 * the id, 0 or -errno and the old value (its own am_send to the requester:
 * every daemon sends its messages on the connection it opened); the target
 * PE, which may wait in hoist_wait_until, is woken only after the pass's
 * flush sent the reply (xp_amo_wake, called by the progress loop). Requester
 * again (amo_reply_recv): writes the old value where the request said
 * (staging or heap of a client still attached), frees the entry and hands
 * the cookie to progress_complete(). A client leaving forgets its entries
 * (xp_amo_orphan); a lost node fails its entries with -ECONNRESET
 * (xp_amo_node_lost, from the peer layer's loss path).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "am.h"
#include "daemon.h"
#include "hoist_amo.h"
#include "log.h"
#include "transport.h"

struct amo_slot {
	uint32_t gen;   /* bumped when freed: a stale reply finds no match */
	uint8_t used;
	uint8_t size;
	int32_t node;
	char *laddr;    /* old value goes here (NULL: non-fetching) */
	struct xp_cookie ck;
	uint32_t next_free;
};

/* A target PE whose heap a served W_AMO changed: it is woken (if it waits,
 * client_heap_touched) after the pass's flush, not before the reply. */
struct amo_wake {
	uint64_t job;
	int32_t pe;
	uint64_t lo, hi; /* the heap-file range the pass's atomics changed */
};

struct xp_amo_table {
	struct amo_slot *s;
	uint32_t n, cap, free_head, inflight;
	struct amo_wake *wake;
	uint32_t nwake, wake_cap;
};

#define AMO_NIL 0xffffffffu

static struct xp_amo_table *amo_table(struct daemon *d)
{
	struct xp_amo_table *t = d->amo;
	if (!t && (t = calloc(1, sizeof(*t)))) {
		t->free_head = AMO_NIL;
		d->amo = t;
	}
	return t;
}

static int32_t amo_alloc(struct daemon *d)
{
	struct xp_amo_table *t = amo_table(d);
	if (!t)
		return -ENOMEM;
	if (t->free_head == AMO_NIL) {
		if (t->n == t->cap) {
			uint32_t cap = t->cap ? t->cap * 2 : 64;
			struct amo_slot *s = realloc(t->s, (size_t)cap * sizeof(*s));
			if (!s)
				return -ENOMEM;
			t->s = s;
			t->cap = cap;
		}
		t->s[t->n] = (struct amo_slot){.next_free = AMO_NIL};
		t->free_head = t->n++;
	}
	uint32_t i = t->free_head;
	t->free_head = t->s[i].next_free;
	t->s[i].used = 1;
	t->inflight++;
	return (int32_t)i;
}

static void amo_release(struct xp_amo_table *t, uint32_t i)
{
	struct amo_slot *s = &t->s[i];
	s->used = 0;
	s->gen++;
	s->next_free = t->free_head;
	t->free_head = i;
	t->inflight--;
}

enum xp_result xp_amo(struct daemon *d, const struct xp_req *rq, int *err)
{
	if (rq->kind != XP_AMO)
		return xp_fail(err, xp_kind_refuse(d, rq->kind));
	int32_t i = amo_alloc(d);
	if (i < 0)
		return xp_fail(err, i);
	struct amo_slot *s = &d->amo->s[i];
	s->size = (uint8_t)rq->len;
	s->node = rq->node;
	s->laddr = rq->laddr;
	s->ck = rq->ck;
	struct wire_amo w = {.job = rq->job, .pe = rq->pe, .seg = rq->seg, .off = rq->off,
			     .value = rq->amo.value, .cmp = rq->amo.cmp,
			     .id = ((uint64_t)s->gen << 32) | (uint32_t)i, .op = rq->amo.op,
			     .type = rq->amo.type, .size = (uint8_t)rq->len};
	int rc = d->xport->am_send(d, rq->node, W_AMO, &w, sizeof(w), NULL, 0);
	if (rc) {
		amo_release(d->amo, (uint32_t)i);
		return xp_fail(err, rc);
	}
	return XP_STARTED;
}

/* ---- the target daemon ----------------------------------------------------- */

static int amo_exec(struct daemon *d, const struct wire_amo *w, uint64_t *old)
{
	struct job *j = progress_job_find(d, w->job);
	struct client *t = NULL;
	if (!j || w->pe < 0 || w->pe >= j->size || !(t = j->pe[w->pe]))
		return -ECONNRESET; /* the PE is not (any more) here */
	if (w->seg != HOIST_SEG_HEAP || hoist_amo_valid(w->op, w->type) ||
	    w->size != hoist_amo_size(w->type))
		return -EINVAL;
	if (!hoist_range_ok(w->off, w->size, t->heap.bytes))
		return -EFAULT;
	if (w->off % w->size)
		return -EINVAL;
	hoist_amo_apply((char *)t->heap.base + w->off, w->op, w->size, w->value, w->cmp, old);
	return 0;
}

/* t's heap changed and t may wait for it (hoist_wait_until): wake it at
 * xp_amo_wake, after the reply left. Waking first put a futex wake (and,
 * with few cores, the woken PE) ahead of the requester's reply on every
 * atomic, whatever word the PE waits on. Without memory: at once. */
static void amo_wake_later(struct daemon *d, const struct wire_amo *w)
{
	struct xp_amo_table *t = amo_table(d);
	uint64_t lo = w->off, hi = w->off + w->size; /* checked by amo_exec */
	if (t && t->nwake && t->wake[t->nwake - 1].job == w->job && t->wake[t->nwake - 1].pe == w->pe) {
		struct amo_wake *k = &t->wake[t->nwake - 1]; /* the same PE as the atomic before */
		if (lo < k->lo)
			k->lo = lo;
		if (hi > k->hi)
			k->hi = hi;
		return;
	}
	if (t && t->nwake == t->wake_cap) {
		uint32_t cap = t->wake_cap ? t->wake_cap * 2 : 16;
		struct amo_wake *a = realloc(t->wake, (size_t)cap * sizeof(*a));
		if (a) {
			t->wake = a;
			t->wake_cap = cap;
		}
	}
	if (!t || t->nwake == t->wake_cap) {
		client_heap_touched_range(d, progress_job_find(d, w->job)->pe[w->pe], lo, hi - lo);
		return;
	}
	t->wake[t->nwake++] = (struct amo_wake){.job = w->job, .pe = w->pe, .lo = lo, .hi = hi};
}

void xp_amo_wake(struct daemon *d)
{
	struct xp_amo_table *t = d->amo;
	if (!t || !t->nwake)
		return;
	for (uint32_t i = 0; i < t->nwake; i++) {
		/* looked up again: the PE may have left since */
		struct job *j = progress_job_find(d, t->wake[i].job);
		if (j && t->wake[i].pe < j->size) /* NULL: gone, nothing */
			client_heap_touched_range(d, j->pe[t->wake[i].pe], t->wake[i].lo,
						  t->wake[i].hi - t->wake[i].lo);
	}
	t->nwake = 0;
}

static int amo_recv(struct daemon *d, int32_t from, const void *ext, const void *payload,
		    uint64_t plen)
{
	(void)payload, (void)plen;
	struct wire_amo w;
	memcpy(&w, ext, sizeof(w));
	struct wire_amo_reply r = {.id = w.id};
	r.status = amo_exec(d, &w, &r.old);
	if (!r.status)
		STAT_INC(&d->pst, amo_served);
	int rc = d->xport->am_send(d, from, W_AMO_REPLY, &r, sizeof(r), NULL, 0);
	if (rc)
		hlog_warn("could not answer node %d's atomic: %d", from, rc);
	if (!r.status)
		amo_wake_later(d, &w);
	return 0;
}

static int amo_reply_recv(struct daemon *d, int32_t from, const void *ext, const void *payload,
			  uint64_t plen)
{
	(void)payload, (void)plen;
	struct wire_amo_reply r;
	memcpy(&r, ext, sizeof(r));
	struct xp_amo_table *t = d->amo;
	uint32_t i = (uint32_t)r.id;
	if (!t || i >= t->n || !t->s[i].used || t->s[i].gen != (uint32_t)(r.id >> 32) ||
	    t->s[i].node != from)
		return 0; /* none of ours in flight: answered after its node was
			   * declared lost (its request failed then); ignored */
	struct amo_slot *s = &t->s[i];
	struct xp_cookie ck = s->ck;
	if (!r.status && ck.client && s->laddr)
		memcpy(s->laddr, &r.old, s->size); /* little endian: the low bytes */
	amo_release(t, i);
	progress_complete(d, &ck, r.status > 0 ? -EPROTO : r.status);
	return 0;
}

static int amo_ext_ok(const void *ext, uint64_t plen)
{
	struct wire_amo w;
	memcpy(&w, ext, sizeof(w));
	static const uint8_t zero[sizeof(w.reserved)];
	return plen == 0 && !memcmp(w.reserved, zero, sizeof(zero));
}

static const struct am_handler amo_handler = {
	.name = "atomic", .hlen = sizeof(struct wire_amo), .payload_ok = amo_ext_ok, .recv = amo_recv};
static const struct am_handler amo_reply_handler = {
	.name = "atomic reply", .hlen = sizeof(struct wire_amo_reply), .recv = amo_reply_recv};

void amo_am_register(void)
{
	am_register(W_AMO, &amo_handler);
	am_register(W_AMO_REPLY, &amo_reply_handler);
}

/* ---- leaving clients, lost nodes, stop --------------------------------------- */

void xp_amo_orphan(struct daemon *d, struct client *c)
{
	struct xp_amo_table *t = d->amo;
	for (uint32_t i = 0; t && i < t->n; i++)
		if (t->s[i].used && t->s[i].ck.client == c)
			t->s[i].ck.client = NULL;
}

void xp_amo_node_lost(struct daemon *d, int32_t node)
{
	struct xp_amo_table *t = d->amo;
	for (uint32_t i = 0; t && i < t->n; i++) {
		if (!t->s[i].used || t->s[i].node != node)
			continue;
		struct xp_cookie ck = t->s[i].ck;
		amo_release(t, i);
		progress_complete(d, &ck, -ECONNRESET);
	}
}

uint32_t xp_amo_inflight(const struct daemon *d)
{
	return d->amo ? d->amo->inflight : 0;
}

void xp_amo_free(struct daemon *d)
{
	if (!d->amo)
		return;
	free(d->amo->s);
	free(d->amo->wake);
	free(d->amo);
	d->amo = NULL;
}
