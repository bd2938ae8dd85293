/*
 * it_ringphase: the daemon takes a descriptor by its SQ slot's phase bit
 * (HOIST_SQE_F_PHASE, hoist_shm.h "SQE publication"), not by sq_tail;
 * its completions are taken by theirs (HOIST_CQE_F_PHASE, reap_one).
 *
 * Every PE publishes 3 laps of its SQ (sq_entries * 3 descriptors: NOPs
 * and 8 B gets from its right neighbour with the result in the
 * completion) with hoist_sqe_publish alone: the control page's sq_tail is
 * never stored, so a daemon that looked for work there would never see
 * them (the watchdog ends the test). Each one is waited for (its CQE),
 * each get's value checked. Then sq_tail is brought up
 * to date and ordinary operations (put, get, barrier) must still work.
 * Run with HOIST_DIRECT=0 on one daemon (the inline get needs a same-node
 * target; with the direct path the library would not post them anyway).
 */
#include <inttypes.h>

#include "internal.h"
#include "it_common.h"

/* Publish the descriptor hoist__sqe_get handed out (ring.next) into its
 * slot by phase alone, and wait for its completion. */
static int post_by_phase_only(struct hoist_ctx *c, struct hoist_op *op)
{
	struct hoist_ring *r = &c->ring;
	hoist_sqe_publish(&r->sq[r->sq_tail & r->sq_mask], &r->next, r->sq_tail, r->sq_mask + 1);
	r->sq_tail++; /* ours only: ctrl->sq_tail stays where it was */
	c->posted_since_quiet = 1;
	return hoist__wait_op(c, op); /* kicks a sleeping daemon first */
}

int main(void)
{
	int me, n;
	it_init("it_ringphase", &me, &n);
	it_watchdog(30);
	struct hoist_ctx *c = hoist__ctx();
	if (c->direct)
		IT_FAIL("run me with HOIST_DIRECT=0");
	if (it_failures)
		return it_finish();
	uint64_t *word = it_malloc(64);
	int right = (me + 1) % n;
	*word = 0x5157000000000000ull + (uint64_t)me;
	IT_OK(hoist_barrier(), "start");
	IT_OK(hoist_quiet(), "start");

	uint32_t tail0 = hoist_load_relaxed(&c->ring.ctrl->sq_tail);
	uint32_t laps = (c->ring.sq_mask + 1) * 3;
	uint64_t roff = (uint64_t)((char *)word - c->heap_base);
	for (uint32_t k = 0; k < laps && !it_failures; k++) {
		IT_WHERE("descriptor %u of %u by phase only", k, laps);
		struct hoist_op *op;
		struct hoist_sqe *sqe;
		if (IT_OK(hoist__op_alloc(c, &op), "op") || IT_OK(hoist__sqe_get(c, &sqe), "sqe"))
			break;
		uint64_t got = 0;
		if (k % 2) {
			op->dst = &got;
			op->len = 8;
			op->copyout = 3; /* the result in the CQE (reap_one) */
			*sqe = (struct hoist_sqe){.opcode = HOIST_OP_GET,
						  .flags = HOIST_SQE_F_INLINE | HOIST_SQE_F_CQE,
						  .pe = right, .user_data = hoist__op_udata(c, op),
						  .remote_off = roff, .len = 8};
		} else {
			*sqe = (struct hoist_sqe){.opcode = HOIST_OP_NOP, .flags = HOIST_SQE_F_CQE,
						  .user_data = hoist__op_udata(c, op)};
		}
		IT_OK(post_by_phase_only(c, op), "descriptor %u", k);
		hoist__op_free(c, op);
		if (k % 2 && got != 0x5157000000000000ull + (uint64_t)right)
			IT_FAIL("get %u from pe %d: %#" PRIx64, k, right, got);
	}
	if (hoist_load_relaxed(&c->ring.ctrl->sq_tail) != tail0)
		IT_FAIL("sq_tail moved: the test did not post by phase only");
	/* back to the ordinary protocol */
	hoist_store_release(&c->ring.ctrl->sq_tail, c->ring.sq_tail);
	c->sq_ops_tail = c->ring.sq_tail;
	it_log("%u descriptors taken by their phase (sq_tail stayed at %u)", laps, tail0);

	IT_WHERE("ordinary operations after");
	uint64_t v = 0x77 + (uint64_t)me, back = 0;
	IT_OK(hoist_barrier(), "after");
	IT_OK(hoist_put(right, word + 1, &v, 8), "put");
	IT_OK(hoist_quiet(), "quiet");
	IT_OK(hoist_get(&back, right, word + 1, 8), "get");
	if (back != v)
		IT_FAIL("put/get after: %#" PRIx64 ", want %#" PRIx64, back, v);
	IT_OK(hoist_barrier(), "end");
	return it_finish();
}
