/*
 * The bottom of libhoist: this process's side of its SQ/CQ pair in the
 * shared ring region (layout, ordering helpers: shm/hoist_shm.h).
 *
 * Mechanism only, all static inline: take a free SQE, publish it, kick the
 * daemon's doorbell, reap completions. Nothing here waits, retries or
 * knows about operations, staging or quiet: a full SQ is -EAGAIN, and what
 * to do about it (make progress, quiet, retry) is wait.c's policy. This
 * header includes nothing of the client but shm/, so nothing above it can
 * be reached from here.
 *
 * Layering of client/, bottom first: each file calls only files on the
 * lines before its own (internal.h has the same list):
 *
 *   shm/hoist_shm.h            ABI: ring layout, memory-ordering helpers
 *   ring.h                     this file: SQE get/submit, kick, reap
 *   staging.c symheap.c        leaf allocators (staging arena, heap)
 *   env.c error.c              environment, error strings
 *   ctx.c                      hoist__g and its plain accessors
 *   wait.c                     progress and waiting; the "full -> make
 *                              progress / quiet, retry" policy (SQ, op
 *                              slots, staging); quiet
 *   ptr.c                      same-node peers (hoist_ptr, direct path)
 *   agg.c                      aggregation regions
 *   rma.c                      put / get
 *   vec.c sync.c coll.c        strided/vector, ordering and barriers,
 *                              collectives
 *   attach.c                   hoist_init / hoist_finalize
 *
 * Single producer (this PE, single-threaded library), single consumer
 * (the daemon's progress thread). A descriptor is filled in a private
 * copy (hoist_ring_sqe_get hands out r->next) and published into its
 * slot by hoist_ring_submit: the slot's first word last, with release,
 * carrying the phase bit by which the daemon finds it (hoist_shm.h, "SQE
 * publication"). Filled in place, the caller's plain store of that word
 * could show a valid phase before the rest of the slot was written. Per
 * descriptor the fast path is the slot's copy, a store of sq_tail (our
 * own line: the daemon no longer polls it) and one relaxed load of
 * sq_flags; no fence, no read-modify-write, no system call unless the
 * daemon announced it sleeps (then one, per sleep of the daemon:
 * hoist_ring_wake).
 */
#ifndef HOIST_CLIENT_RING_H
#define HOIST_CLIENT_RING_H

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "hoist_shm.h"

/* The client's view of its rings (mapped at attach). */
struct hoist_ring {
	struct hoist_ctrl *ctrl;
	struct hoist_sqe *sq;
	struct hoist_cqe *cq;
	uint32_t sq_mask, cq_mask;
	uint32_t sq_tail;      /* local copy of what we published */
	uint32_t sq_head_seen; /* last daemon head we read */
	uint32_t cq_head;
	uint32_t rang_flags;   /* sq_flags when we last rang the doorbell */
	int doorbell;          /* eventfd of the daemon's progress thread */
	/* the descriptor being filled, copied into slot sq_tail on submit */
	_Alignas(HOIST_CACHELINE) struct hoist_sqe next;
};

/* 0 and the descriptor to fill in *out (r->next: the caller fills all of
 * it, and hoist_ring_submit publishes it into the next free slot), or
 * -EAGAIN: the SQ is full as far as the last look at the daemon's head
 * (hoist_ring_sq_head) tells. Never waits. */
static inline int hoist_ring_sqe_get(struct hoist_ring *r, struct hoist_sqe **out)
{
	if (r->sq_tail - r->sq_head_seen >= r->sq_mask + 1)
		return -EAGAIN;
	*out = &r->next;
	return 0;
}

/* Copy r->next into slot sq_tail, publish it (the daemon may take it from
 * now on) and count it in r->sq_tail and ctrl->sq_tail. */
static inline void hoist_ring_publish(struct hoist_ring *r)
{
	hoist_sqe_publish(&r->sq[r->sq_tail & r->sq_mask], &r->next, r->sq_tail, r->sq_mask + 1);
	r->sq_tail++;
	/* not polled by the daemon (it finds the slot by its phase): for
	 * hoistctl; release all the same, so the count is never ahead */
	hoist_store_release(&r->ctrl->sq_tail, r->sq_tail);
}

static inline void hoist_ring_doorbell(struct hoist_ring *r)
{
	uint64_t one = 1;
	ssize_t w = write(r->doorbell, &one, sizeof(one));
	(void)w; /* EAGAIN: counter saturated, the daemon wakes anyway */
}

/* sq_flags f says the daemon sleeps: ring, once per sleep. The daemon
 * bumps the sleep generation (HOIST_SQ_SLEEP_GEN) each time it sets the
 * flag, and the eventfd stays readable until it woke and read it, so a
 * second doorbell for the same f wakes nobody: it was a write(2) per
 * descriptor posted while a daemon that had no CPU yet did not wake (put
 * injection with the progress thread asleep, issue 16). */
static inline void hoist_ring_wake(struct hoist_ring *r, uint32_t f)
{
	if ((f & HOIST_SQ_NEED_WAKEUP) && f != r->rang_flags) {
		r->rang_flags = f;
		hoist_ring_doorbell(r);
	}
}

/* Publish the SQE hoist_ring_sqe_get handed out. */
static inline void hoist_ring_submit(struct hoist_ring *r)
{
	struct hoist_ctrl *ctrl = r->ctrl;
	hoist_ring_publish(r);
	/* No full fence per descriptor: it was most of a put's cost (the line
	 * holding the tail and the SQE must come back from the daemon's core).
	 * A stale flag here is covered twice: the daemon keeps looking at the
	 * rings for a grace period after it sets the flag, and every call that
	 * waits for the daemon first runs hoist_ring_kick() with the fence. */
	hoist_ring_wake(r, hoist_load_relaxed(&ctrl->sq_flags));
}

/* Before waiting for the daemon: wake it if it announced it sleeps. The
 * full fence orders our slot's publication before the flag load and pairs with the
 * daemon's fence between setting HOIST_SQ_NEED_WAKEUP and its last look
 * at the rings (Dekker): one of the two sees the other's store. */
static inline void hoist_ring_kick(struct hoist_ring *r)
{
	hoist_smp_mb();
	hoist_ring_wake(r, hoist_load_relaxed(&r->ctrl->sq_flags));
}

/* Hand every CQE the daemon published to fn(arg, cqe), in order, then give
 * their slots back. Returns how many. (Inlined into its callers in
 * wait.c, fn with it.) */
static inline int hoist_ring_reap(struct hoist_ring *r,
				  void (*fn)(void *arg, const struct hoist_cqe *e), void *arg)
{
	struct hoist_ctrl *ctrl = r->ctrl;
	int n = 0;
	/* by the slots' phase (hoist_shm.h, "CQE publication"), not cq_tail:
	 * the CQE's line only */
	for (;;) {
		const struct hoist_cqe *e = &r->cq[r->cq_head & r->cq_mask];
		if (!hoist_cqe_ready(e, r->cq_head, r->cq_mask + 1))
			break;
		fn(arg, e);
		r->cq_head++;
		n++;
	}
	if (n) /* pairs with the daemon's hoist_load_acquire(&ctrl->cq_head) */
		hoist_store_release(&ctrl->cq_head, r->cq_head);
	return n;
}

/* 1 when the daemon published a CQE we have not reaped (the next one's
 * slot: its line, which the reap reads anyway). */
static inline int hoist_ring_cq_ready(const struct hoist_ring *r)
{
	return hoist_cqe_ready(&r->cq[r->cq_head & r->cq_mask], r->cq_head, r->cq_mask + 1);
}

/* Look at the daemon's SQ head: 1 (and *head) if it moved since the last
 * look, i.e. SQEs were consumed and their slots (and put payloads) are
 * free again; else 0. */
static inline int hoist_ring_sq_head(struct hoist_ring *r, uint32_t *head)
{
	/* pairs with the daemon's release of sq_head: payloads are consumed */
	uint32_t h = hoist_load_acquire(&r->ctrl->sq_head);
	if (h == r->sq_head_seen)
		return 0;
	r->sq_head_seen = h;
	*head = h;
	return 1;
}

#endif
