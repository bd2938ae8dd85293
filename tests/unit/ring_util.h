/*
 * Test-side SPSC ring helpers that follow the ABI of shm/hoist_shm.h
 * exactly (and nothing else): the producer owns the tail, the consumer the
 * head; entries are published with a store-release of the tail and freed
 * with a store-release of the head.
 */
#ifndef HOIST_TEST_RING_UTIL_H
#define HOIST_TEST_RING_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hoist_shm.h"

struct test_ring {
	struct hoist_ctrl *ctrl;
	struct hoist_sqe *sq;
	struct hoist_cqe *cq;
	uint32_t sq_n, cq_n;
	size_t bytes;
	int fd;
};

/* Creates the ring region in a memfd, maps it MAP_SHARED and fills the
 * control page the way the daemon does. Counters start at `start`.
 * 0 or -errno. */
static inline int test_ring_create(struct test_ring *r, uint32_t sq_n, uint32_t cq_n, uint32_t start)
{
	memset(r, 0, sizeof(*r));
	if (!hoist_is_pow2(sq_n) || !hoist_is_pow2(cq_n))
		return -EINVAL;
	r->bytes = (size_t)hoist_ring_bytes(sq_n, cq_n);
	r->fd = memfd_create("hoist-test-ring", MFD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	if (ftruncate(r->fd, (off_t)r->bytes) != 0) {
		int e = -errno;
		close(r->fd);
		return e;
	}
	void *p = mmap(NULL, r->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (p == MAP_FAILED) {
		int e = -errno;
		close(r->fd);
		return e;
	}
	struct hoist_ctrl *c = p;
	c->magic = HOIST_SHM_MAGIC;
	c->abi_version = HOIST_ABI_VERSION;
	c->sq_entries = sq_n;
	c->cq_entries = cq_n;
	c->sq_off = (uint32_t)hoist_ring_sq_off();
	c->cq_off = (uint32_t)hoist_ring_cq_off(sq_n);
	c->ring_bytes = r->bytes;
	c->sq_head = c->sq_tail = start;
	c->cq_head = c->cq_tail = start;
	r->ctrl = c;
	r->sq = hoist_ctrl_sq(c);
	r->cq = hoist_ctrl_cq(c);
	r->sq_n = sq_n;
	r->cq_n = cq_n;
	return 0;
}

static inline void test_ring_destroy(struct test_ring *r)
{
	if (r->ctrl)
		munmap(r->ctrl, r->bytes);
	if (r->fd >= 0)
		close(r->fd);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

/* ---- generic SPSC over (head, tail, entries, element array) ---------- */

/* Producer side: 0, or -EAGAIN when the ring is full. */
static inline int ring_produce(uint32_t *headp, uint32_t *tailp, uint32_t n, void *base, size_t esz,
			       const void *e)
{
	uint32_t tail = hoist_load_relaxed(tailp); /* we own the tail */
	uint32_t head = hoist_load_acquire(headp);  /* pairs with consumer's release */
	if (hoist_ring_space(head, tail, n) == 0)
		return -EAGAIN;
	memcpy((char *)base + (size_t)(tail & (n - 1)) * esz, e, esz);
	hoist_store_release(tailp, tail + 1); /* publish the entry */
	return 0;
}

/* Consumer side: 0, or -EAGAIN when the ring is empty. */
static inline int ring_consume(uint32_t *headp, uint32_t *tailp, uint32_t n, const void *base, size_t esz,
			       void *out)
{
	uint32_t head = hoist_load_relaxed(headp); /* we own the head */
	uint32_t tail = hoist_load_acquire(tailp);  /* pairs with producer's release */
	if (head == tail)
		return -EAGAIN;
	memcpy(out, (const char *)base + (size_t)(head & (n - 1)) * esz, esz);
	hoist_store_release(headp, head + 1); /* slot may be reused */
	return 0;
}

static inline int sq_push(struct test_ring *r, const struct hoist_sqe *e)
{
	return ring_produce(&r->ctrl->sq_head, &r->ctrl->sq_tail, r->sq_n, r->sq, sizeof(*e), e);
}

static inline int sq_pop(struct test_ring *r, struct hoist_sqe *e)
{
	return ring_consume(&r->ctrl->sq_head, &r->ctrl->sq_tail, r->sq_n, r->sq, sizeof(*e), e);
}

static inline int cq_push(struct test_ring *r, const struct hoist_cqe *e)
{
	return ring_produce(&r->ctrl->cq_head, &r->ctrl->cq_tail, r->cq_n, r->cq, sizeof(*e), e);
}

static inline int cq_pop(struct test_ring *r, struct hoist_cqe *e)
{
	return ring_consume(&r->ctrl->cq_head, &r->ctrl->cq_tail, r->cq_n, r->cq, sizeof(*e), e);
}

#endif
