/*
 * mn_coll_agg: a collective carrying the aggregation flag after an
 * aggregated put (issue 14 defect 5), raw descriptors.
 *
 * Every PE writes straight into its submission ring: an inline put with
 * HOIST_SQE_F_AGG to a PE on another daemon (the daemon holds it back in an
 * open pack until the aggregation region ends), then a broadcast
 * descriptor with HOIST_SQE_F_AGG set, which validate_coll rejects. The
 * daemon used to wait for the held put before executing the collective,
 * and the put waited for the region's end, which never came: the ring
 * hung. Now the collective ends the region, the put goes, and the
 * collective fails with -EINVAL on every PE. Then the put must have
 * landed, and a normal put, get and broadcast must work.
 *
 * Run with 2 or more PEs over 2 or more daemons (hoistrun --nodes), so that
 * rank (me + size/2) % size is on another daemon.
 */
#include "internal.h"
#include "it_common.h"

static int post(struct hoist_ctx *c, const struct hoist_sqe *s, struct hoist_op **opp)
{
	struct hoist_op *op = NULL;
	if (opp && (IT_OK(hoist__op_alloc(c, &op)) || !op))
		return -1;
	struct hoist_sqe *slot = NULL;
	if (IT_OK(hoist__sqe_get(c, &slot)) || !slot) {
		if (op)
			hoist__op_free(c, op);
		return -1;
	}
	struct hoist_sqe v = *s;
	v.user_data = op ? hoist__op_udata(c, op) : 0;
	memcpy(slot, &v, sizeof(v));
	hoist__sqe_submit(c);
	if (opp)
		*opp = op;
	return 0;
}

int main(void)
{
	int me, n;
	it_init("mn_coll_agg", &me, &n);
	it_watchdog(30);
	if (n < 2) {
		it_log("needs 2 PEs on 2 daemons");
		hoist_finalize();
		return IT_SKIP;
	}
	struct hoist_ctx *c = hoist__ctx();
	int peer = (me + n / 2) % n, from = (me + n - n / 2) % n;
	uint64_t *target = it_malloc(4096), *bsrc = it_malloc(64), *bdst = it_malloc(64);
	memset(target, 0, 4096);
	IT_OK(hoist_barrier(), "start");
	uint64_t toff = (uint64_t)((char *)target - c->heap_base);
	uint64_t soff = (uint64_t)((char *)bsrc - c->heap_base), doff = (uint64_t)((char *)bdst - c->heap_base);

	for (int round = 0; round < 3; round++) {
		IT_WHERE("round %d: aggregated put to pe %d, then a broadcast with the aggregation flag", round,
			 peer);
		uint64_t val = it_hash(0xa66, (uint64_t)me, (uint64_t)round, 0, 0);
		struct hoist_sqe put = {.opcode = HOIST_OP_PUT, .flags = HOIST_SQE_F_INLINE | HOIST_SQE_F_AGG,
					.pe = peer, .seg = HOIST_SEG_HEAP, .remote_off = toff + 8u * (unsigned)round,
					.len = 8};
		memcpy(put.inline_data, &val, 8);
		struct hoist_coll_args a = {.kind = HOIST_COLL_BROADCAST};
		struct hoist_sqe coll = {.opcode = HOIST_OP_COLL, .flags = HOIST_SQE_F_AGG, .pe = 0,
					 .seg = HOIST_SEG_HEAP, .remote_off = doff, .local_off = soff, .len = 8};
		memcpy(coll.inline_data, &a, sizeof(a));
		struct hoist_op *op = NULL;
		if (post(c, &put, NULL) || post(c, &coll, &op))
			break;
		/* a collective the library did not number: later node collectives
		 * (HOIST_COLL_F_NODE) carry the job's count of them */
		c->coll_calls++;
		int rc = hoist__wait_op(c, op);
		if (rc != -EINVAL || op->res != -EINVAL)
			IT_FAIL("round %d: broadcast with the aggregation flag after an aggregated put: wait %s, CQE %s, "
				"expected -EINVAL",
				round, it_errname(rc), it_errname(op->res));
		hoist__op_free(c, op);
		IT_WHERE("round %d: quiet after the rejected collective", round);
		IT_OK(hoist_quiet(), "round %d: the aggregated put", round);
		IT_OK(hoist_barrier(), "round %d", round);
		uint64_t want = it_hash(0xa66, (uint64_t)from, (uint64_t)round, 0, 0);
		if (target[round] != want)
			IT_FAIL("round %d: aggregated put from pe %d: got %016" PRIx64 ", want %016" PRIx64, round,
				from, target[round], want);
	}

	IT_WHERE("normal traffic afterwards");
	uint64_t v = 0x5eed0000u + (uint64_t)me, back = 0;
	IT_OK(hoist_put(peer, target + 100, &v, 8), "normal put");
	IT_OK(hoist_barrier(), "after the normal put");
	if (target[100] != 0x5eed0000u + (uint64_t)from)
		IT_FAIL("normal put from pe %d: got %" PRIx64, from, target[100]);
	IT_OK(hoist_get(&back, peer, target + 100, 8), "normal get");
	if (back != 0x5eed0000u + (uint64_t)me)
		IT_FAIL("normal get from pe %d: got %" PRIx64, peer, back);
	*bsrc = 0xb0b0 + (uint64_t)me;
	IT_OK(hoist_broadcast(bdst, bsrc, 8, n - 1), "normal broadcast");
	if (*bdst != 0xb0b0 + (uint64_t)(n - 1))
		IT_FAIL("normal broadcast from pe %d: got %" PRIx64, n - 1, *bdst);
	IT_OK(hoist_barrier(), "end");
	return it_finish();
}
