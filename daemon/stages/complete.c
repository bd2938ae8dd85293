/*
 * Completion posting, the last stage a descriptor meets: its result goes
 * to the client's completion queue and the client is woken if it sleeps.
 * The engine posts what finished at once (cq_post, published by cq_flush
 * at the end of a drain); a transport hands back the cookie of what it
 * started (progress_complete), which retires it from the conflict stage,
 * counts it out of c->outstanding, finishes a strided/vector descriptor
 * with its last element, or lands a phase prefetch. Nothing follows: the
 * client reaps the completion.
 */
#include "complete.h"

#include <stddef.h>
#include <string.h>

#include "daemon.h"
#include "hoist_futex.h"
#include "multi.h"
#include "overlap.h"

void client_wake(struct client *c, uint32_t *word, uint32_t flag)
{
	/* Dekker with the client's sleep: our store to *word happened before
	 * this fence; the client stored its flag before rechecking *word. */
	hoist_smp_mb();
	if (hoist_load_relaxed(&c->ctrl->cq_flags) & flag) {
		hoist_futex_wake(word);
		STAT_INC(&c->st, wakeups);
	}
}

void client_heap_touched_range(struct daemon *d, struct client *c, uint64_t off, uint64_t len)
{
	(void)d;
	if (!c || !c->heap.base)
		return;
	struct hoist_heap_wake *w = hoist_heap_wake_of(c->heap.base, c->heap.bytes);
	int r = hoist_heap_touched_range(w, off, len);
	if (r > 0) {
		hoist_futex_wake(&w->seq);
		STAT_INC(&c->st, heap_wakes);
	} else if (r < 0) {
		STAT_INC(&c->st, heap_wakes_skipped); /* it waits on other words */
	}
}

void client_heap_touched(struct daemon *d, struct client *c)
{
	client_heap_touched_range(d, c, 0, UINT64_MAX);
}

/* Where completion idx is written before cq_flush publishes it. */
static inline struct hoist_cqe *cq_slot(struct client *c, uint32_t idx)
{
	return c->cq_shadow ? &c->cq_shadow[idx & c->cq_mask] : &c->cq[idx & c->cq_mask];
}

static void cq_post_flags(struct client *c, uint64_t user_data, int32_t res, uint8_t opcode,
			  uint16_t flags)
{
	struct hoist_cqe *e = cq_slot(c, c->cq_tail);
	e->user_data = user_data;
	e->res = res;
	e->opcode = opcode;
	/* not published yet: the old phase, until cq_flush (without a shadow
	 * this is the ring's slot, whose word a client may poll) */
	uint16_t old = hoist_cqe_phase(c->cq_tail, c->cq_entries) ^ HOIST_CQE_F_PHASE;
	__atomic_store_n(&e->flags, (uint16_t)((flags & ~HOIST_CQE_F_PHASE) | old), __ATOMIC_RELAXED);
	c->cq_tail++;
	if (res < 0) {
		STAT_INC(&c->st, errors);
		if (!user_data)
			c->failed_silent++; /* a later signal is not sent (engine.c) */
	}
}

void cq_post(struct client *c, uint64_t user_data, int32_t res, uint8_t opcode)
{
	cq_post_flags(c, user_data, res, opcode, 0);
}

void cq_post_data(struct client *c, uint64_t user_data, uint8_t opcode, const void *data, uint64_t len)
{
	struct hoist_cqe *e = cq_slot(c, c->cq_tail);
	memcpy(e->data, data, len);
	cq_post_flags(c, user_data, 0, opcode, HOIST_CQE_F_DATA);
}

void cq_flush(struct client *c)
{
	if (c->cq_published == c->cq_tail)
		return;
	/* each CQE's phase (the client polls the slot at its cq_head), then
	 * cq_tail: after the drain's release of sq_head, which a client that
	 * saw a completion may rely on (engine.c) */
	uint32_t first = c->cq_published;
	for (uint32_t i = first; i != c->cq_tail; i++) {
		struct hoist_cqe *e = &c->cq[i & c->cq_mask];
		const struct hoist_cqe *s = cq_slot(c, i);
		/* the whole CQE in one go: four 8-byte stores, the word with
		 * the flags last */
		struct hoist_cqe v = *s;
		v.flags = (uint16_t)((v.flags & ~HOIST_CQE_F_PHASE) | hoist_cqe_phase(i, c->cq_entries));
		memcpy(e->data, v.data, sizeof(e->data));
		e->user_data = v.user_data;
		/* pairs with the client's acquire in hoist_cqe_ready */
		__atomic_store_n(&e->word, v.word, __ATOMIC_RELEASE);
	}
	c->cq_published = c->cq_tail;
	/* the futex word of a sleeping client, after the phases (hoist_shm.h) */
	hoist_store_release(&c->ctrl->cq_tail, c->cq_tail);
	/* Dekker with the client's sleep (client_wake), then only for the
	 * completion it waits for (ctrl.cq_wake_ud, stored before its fence),
	 * or once the ones it slept through fill half the CQ. Its operations
	 * awaiting a completion are at most half the CQ (the client's op
	 * slots), but the error reports of puts that asked for none are not
	 * bounded: the client must reap them before the drain can go on. A
	 * sleeping client reaped everything before it slept, so cq_unwoken,
	 * counted since it was last seen awake or woken, bounds what it owes
	 * (mn_half_cq_wake).
	 * Woken for every completion, a quiet behind G staged gets woke up
	 * to G times, each wake-up a trip through the scheduler (8 B gets at
	 * G = 1024: 2.3-3.2 us each, 0.8-0.9 us now; bench/README.md "A quiet
	 * sleeps once"). */
	hoist_smp_mb();
	if (!(hoist_load_relaxed(&c->ctrl->cq_flags) & HOIST_CQ_WAITING)) {
		c->cq_unwoken = 0;
		return;
	}
	uint64_t want = __atomic_load_n(&c->ctrl->cq_wake_ud, __ATOMIC_RELAXED);
	uint32_t n = c->cq_tail - first;
	int wake = !want || c->cq_unwoken + n >= c->cq_entries / 2;
	for (uint32_t i = first; !wake && i != c->cq_tail; i++)
		wake = cq_slot(c, i)->user_data == want;
	if (!wake) {
		c->cq_unwoken += n;
		STAT_INC(&c->st, wakeups_skipped);
		return;
	}
	c->cq_unwoken = 0;
	hoist_futex_wake(&c->ctrl->cq_tail);
	STAT_INC(&c->st, wakeups);
}

/* A remote operation finished (tcp.c). The drain loop reserved no CQ slot
 * for it, so check: only a failed put that asked for no completion may be
 * dropped when the ring is full (the client needs one sticky error). */
void progress_cqe(struct client *c, uint64_t user_data, int32_t res, uint8_t opcode)
{
	uint32_t head = hoist_load_acquire(&c->ctrl->cq_head);
	if (c->cq_tail - head >= c->cq_entries) {
		STAT_INC(&c->st, cq_full);
		if (res) {
			STAT_INC(&c->st, errors);
			if (!user_data)
				c->failed_silent++;
		}
		return;
	}
	cq_post(c, user_data, res, opcode);
	cq_flush(c);
}

void progress_cqe_partial(struct client *c, uint64_t user_data, int32_t pe)
{
	/* the client's op slots (cq_entries / 2, plus quiet's) each await one
	 * completion: partial ones use only the other half, so a final
	 * completion always finds room; one dropped here is made up for by
	 * the final one (hoist_wait_from treats the end as every arrival) */
	uint32_t head = hoist_load_acquire(&c->ctrl->cq_head);
	if (c->cq_tail - head + 2 >= c->cq_entries / 2)
		return;
	cq_post_flags(c, user_data, pe, HOIST_OP_COLL, HOIST_CQE_F_PARTIAL);
	cq_flush(c);
}

/* The descriptor's last element completed and nothing is left to issue. */
static void multi_finish(struct client *c, struct xp_multi *m)
{
	if (c) {
		if (m->seq && c->ov)
			overlap_put_done(c, m->pe, m->seq);
		if (m->gseq)
			overlap_get_done(c, m->pe, m->gseq);
		if (m->res || m->want_cqe)
			progress_cqe(c, m->user_data, m->res, m->opcode);
	}
	multi_free(m);
}

static void multi_elem_done(struct client *c, struct xp_multi *m, int32_t res)
{
	if (res && !m->res)
		m->res = res;
	m->pending--;
	if (!m->pending && !m->issuing)
		multi_finish(c, m);
}

void progress_complete(struct daemon *d, const struct xp_cookie *ck, int32_t res)
{
	struct client *c = ck->client;
	const struct xp_op *op = &ck->op;
	if (op->multi) {
		if (c)
			c->outstanding--;
		multi_elem_done(c, op->multi, res);
		return;
	}
	if (!c)
		return; /* the client left meanwhile */
	if (op->prefetch) {
		overlap_prefetch_done(d, c, op->slot, op->gen, res);
		return;
	}
	if (op->seq && c->ov)
		overlap_put_done(c, ck->pe, op->seq);
	if (op->gseq)
		overlap_get_done(c, ck->pe, op->gseq);
	c->outstanding--;
	if (!res && !ck->want_cqe)
		return;
	progress_cqe(c, ck->user_data, res, ck->opcode);
}
