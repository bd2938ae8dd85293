/*
 * it_malformed: descriptors written straight into the submission ring,
 * bypassing the library's checks. Each malformed SQE asks for a CQE and
 * carries a distinct user_data; each must come back with the expected
 * error (-EINVAL / -EFAULT), the daemon must not crash, other PEs must not
 * be touched, a normal put/get afterwards must work, and the daemon's stats
 * must count the rejected descriptors.
 *
 * Links hoist_static: uses hoist__ctx(), hoist__sqe_get/submit and the op
 * table (user_data = op index + 1), so the library's own reaping routes the
 * completions to us.
 */
#include "internal.h"
#include "it_common.h"

struct bad {
	const char *what;
	struct hoist_sqe sqe;
	int want; /* expected CQE res */
};

#define MAXBAD 48
#define FLOOD 5000

int main(void)
{
	int me, n;
	it_init("it_malformed", &me, &n);
	it_watchdog(50);

	struct hoist_ctx *c = hoist__ctx();
	if (!c || !c->ring.ctrl || !c->ring.sq) {
		IT_FAIL("hoist__ctx() returned %p (ctrl %p)", (void *)c, c ? (void *)c->ring.ctrl : NULL);
		return 1;
	}
	uint64_t heap = c->ring.ctrl->heap_bytes, stg = c->ring.ctrl->staging_bytes;
	if (heap != c->heap_bytes || stg != c->stage.size)
		IT_FAIL("control page geometry (heap %" PRIu64 " staging %" PRIu64 ") differs from the context "
			"(heap %" PRIu64 " staging %" PRIu64 ")",
			heap, stg, c->heap_bytes, c->stage.size);

	unsigned char *target = it_malloc(4096);
	memset(target, 0, 4096);
	uint64_t toff = (uint64_t)((char *)target - c->heap_base);
	int peer = (me + 1) % n;
	IT_OK(hoist_barrier(), "start");
	IT_OK(hoist_quiet(), "start");

	/* a template: valid inline PUT of 8 bytes to peer's target */
	struct hoist_sqe ok = {.opcode = HOIST_OP_PUT,
			       .flags = HOIST_SQE_F_INLINE | HOIST_SQE_F_CQE,
			       .pe = peer,
			       .seg = HOIST_SEG_HEAP,
			       .remote_off = toff,
			       .len = 8};
	memset(ok.inline_data, 0x77, sizeof(ok.inline_data));
	struct hoist_sqe get = {.opcode = HOIST_OP_GET,
				.flags = HOIST_SQE_F_CQE,
				.pe = peer,
				.seg = HOIST_SEG_HEAP,
				.remote_off = toff,
				.len = 8,
				.local_off = 0};
	struct hoist_sqe hput = ok; /* put from own heap */
	hput.flags = HOIST_SQE_F_LOCAL_HEAP | HOIST_SQE_F_CQE;
	hput.local_off = toff;

	struct bad bads[MAXBAD];
	int nb = 0;
#define BAD(w, want_, ...)                                                                          \
	do {                                                                                        \
		struct hoist_sqe s_ = ok;                                                           \
		__VA_ARGS__;                                                                        \
		bads[nb++] = (struct bad){w, s_, want_};                                            \
	} while (0)
	BAD("opcode 0", -EINVAL, s_.opcode = 0);
	BAD("opcode 200", -EINVAL, s_.opcode = 200);
	BAD("opcode __COUNT", -EINVAL, s_.opcode = HOIST_OP__COUNT);
	/* 0x80 is HOIST_SQE_F_PHASE: the library sets it on every descriptor */
	BAD("unknown flag 0x10", -EINVAL, s_.flags |= 0x10);
	BAD("nop with the aggregation flag", -EINVAL, s_ = ok; s_.opcode = HOIST_OP_NOP; s_.flags = HOIST_SQE_F_AGG);
	BAD("pe == size", -EINVAL, s_.pe = n);
	BAD("pe -5", -EINVAL, s_.pe = -5);
	BAD("get pe INT32_MAX", -EINVAL, s_ = get; s_.pe = INT32_MAX);
	BAD("reserved0 set", -EINVAL, s_.reserved0 = 1);
	BAD("reserved1 set", -EINVAL, s_.reserved1 = 0x100);
	BAD("segment 1", -EINVAL, s_.seg = 1);
	BAD("segment 0xffffffff", -EINVAL, s_.seg = 0xffffffffu);
	BAD("inline len 17", -EINVAL, s_.len = HOIST_INLINE_MAX + 1);
	BAD("inline get without completion", -EINVAL, s_ = get; s_.flags = HOIST_SQE_F_INLINE);
	BAD("inline get len 17", -EINVAL, s_ = get; s_.flags |= HOIST_SQE_F_INLINE; s_.len = HOIST_CQE_DATA_MAX + 1);
	BAD("inline get with local_off", -EINVAL, s_ = get; s_.flags |= HOIST_SQE_F_INLINE; s_.local_off = 64);
	BAD("inline + local heap", -EINVAL, s_.flags |= HOIST_SQE_F_LOCAL_HEAP);
	BAD("nop with inline flag", -EINVAL, s_ = ok; s_.opcode = HOIST_OP_NOP);
	BAD("quiet with local-heap flag", -EINVAL, s_.opcode = HOIST_OP_QUIET;
	    s_.flags = HOIST_SQE_F_LOCAL_HEAP | HOIST_SQE_F_CQE);
	BAD("remote_off == heap size", -EFAULT, s_.remote_off = heap);
	BAD("remote range straddles heap end", -EFAULT, s_.remote_off = heap - 4);
	BAD("remote_off near 2^64 (overflow)", -EFAULT, s_ = get; s_.remote_off = UINT64_MAX - 3);
	BAD("get remote_off beyond heap", -EFAULT, s_ = get; s_.remote_off = heap + 4096);
	BAD("len 2^64-1", -EFAULT, s_ = hput; s_.remote_off = 0; s_.len = UINT64_MAX);
	BAD("staging range out of bounds (put)", -EFAULT, s_ = ok; s_.flags = HOIST_SQE_F_CQE;
	    s_.local_off = stg - 8; s_.len = 64);
	BAD("staging offset == staging size (get)", -EFAULT, s_ = get; s_.local_off = stg; s_.len = 1);
	BAD("staging offset overflow (get)", -EFAULT, s_ = get; s_.local_off = UINT64_MAX; s_.len = 2);
	BAD("local heap range out of bounds", -EFAULT, s_ = hput; s_.local_off = heap - 1; s_.len = 2);
	/* descriptors that move nothing are range checked all the same (issue 14
	 * defect 4: a strided put of count 0 at local offset 2^63 was a success
	 * and the daemon computed staging + 2^63) */
	const uint64_t far = 1ull << 63;
	struct hoist_sqe zs = get; /* strided, stride 8, count 0 */
	zs.opcode = HOIST_OP_PUT_STRIDED;
	memset(zs.inline_data, 0, sizeof(zs.inline_data));
	zs.inline_data[0] = 8;
	BAD("strided put, count 0, local_off 2^63", -EFAULT, s_ = zs; s_.local_off = far);
	BAD("strided get, count 0, local heap off 2^63", -EFAULT, s_ = zs; s_.opcode = HOIST_OP_GET_STRIDED;
	    s_.flags |= HOIST_SQE_F_LOCAL_HEAP; s_.local_off = far);
	BAD("strided put, count 0, remote_off 2^63", -EFAULT, s_ = zs; s_.remote_off = far);
	BAD("strided put, element size 0, local_off 2^63", -EFAULT, s_ = zs; s_.len = 0; s_.inline_data[8] = 3;
	    s_.local_off = far);
	BAD("vector get, nvec 0, local_off 2^63", -EFAULT, s_ = zs; s_.opcode = HOIST_OP_GET_VEC; s_.len = 0;
	    memset(s_.inline_data, 0, 16); s_.local_off = far);
	BAD("vector put, nvec 0, list_off 2^63", -EFAULT, s_ = zs; s_.opcode = HOIST_OP_PUT_VEC; s_.len = 0;
	    memset(s_.inline_data, 0, 16); memcpy(s_.inline_data + 8, &far, 8));
	BAD("get of 0 bytes, local_off 2^63", -EFAULT, s_ = get; s_.len = 0; s_.local_off = far);
#undef BAD
	int nbad = nb;

	/* valid controls in between: must succeed */
	struct hoist_sqe nop = {.opcode = HOIST_OP_NOP, .flags = HOIST_SQE_F_CQE};

	/* Post them in batches that fit the library's op table (nops slots,
	 * cq_entries / 2), then wait for each completion. */
	int total = nbad + 2;
	int per = c->nops / 2 > 0 ? (int)(c->nops / 2) : 1;
	for (int first = 0; first < total; first += per) {
		struct hoist_op *ops[MAXBAD + 2];
		int nops = 0;
		for (int i = first; i < total && i < first + per; i++) {
			struct hoist_sqe s = i < nbad ? bads[i].sqe : (i == nbad ? nop : ok);
			const char *what = i < nbad ? bads[i].what : (i == nbad ? "valid NOP" : "valid inline put");
			IT_WHERE("posting malformed SQE #%d (%s)", i, what);
			struct hoist_op *op = NULL;
			if (IT_OK(hoist__op_alloc(c, &op), "op for %s", what) != 0 || !op)
				break;
			struct hoist_sqe *slot = NULL;
			if (IT_OK(hoist__sqe_get(c, &slot), "sqe for %s", what) != 0 || !slot) {
				hoist__op_free(c, op);
				break;
			}
			s.user_data = hoist__op_udata(c, op);
			memcpy(slot, &s, sizeof(s));
			hoist__sqe_submit(c);
			ops[nops++] = op;
		}
		for (int k = 0; k < nops; k++) {
			int i = first + k;
			const char *what = i < nbad ? bads[i].what : (i == nbad ? "valid NOP" : "valid inline put");
			int want = i < nbad ? bads[i].want : 0;
			IT_WHERE("waiting for the CQE of malformed SQE #%d (%s)", i, what);
			int rc = hoist__wait_op(c, ops[k]);
			int res = ops[k]->res;
			if (rc != want || res != want)
				IT_FAIL("malformed SQE #%d (%s): wait returned %s, CQE res %s, expected %s", i, what,
					it_errname(rc), it_errname(res), it_errname(want));
			hoist__op_free(c, ops[k]);
		}
	}

	/* A flood: FLOOD malformed descriptors without completion requests
	 * (user_data 0), more than the SQ and the CQ hold, so the daemon must
	 * pause on a full CQ and the library must reap while posting. The
	 * error surfaces once, at the next quiet; nothing may be lost (the
	 * rejected counter is checked below). */
	IT_WHERE("flood of %d malformed SQEs", FLOOD);
	for (int i = 0; i < FLOOD; i++) {
		struct hoist_sqe *slot = NULL;
		if (IT_OK(hoist__sqe_get(c, &slot), "flood sqe %d", i) != 0 || !slot)
			break;
		memset(slot, 0, sizeof(*slot));
		slot->opcode = (uint8_t)(i % 2 ? 0 : 250);
		hoist__sqe_submit(c);
	}
	IT_EXPECT(hoist_quiet(), -EINVAL, "first quiet after %d malformed descriptors", FLOOD);
	IT_OK(hoist_quiet(), "second quiet after the flood (the error was reported once)");

	IT_WHERE("normal put/get after the malformed SQEs");
	/* the daemon still works: normal put/get, and nothing stray was written */
	IT_OK(hoist_quiet(), "after the malformed batch");
	IT_OK(hoist_barrier(), "after the malformed batch");
	int from = (me + n - 1) % n;
	for (int j = 0; j < 8; j++)
		if (target[j] != 0x77)
			IT_FAIL("valid raw inline put from pe %d: byte %d is 0x%02x, want 0x77", from, j, target[j]);
	size_t off = it_check_byte(target + 8, 4096 - 8, 0);
	if (off != 4096 - 8)
		IT_FAIL("a rejected descriptor wrote into the heap at offset %zu (0x%02x)", off + 8, target[off + 8]);
	IT_OK(hoist_barrier(), "after the check"); /* the normal puts below land in target */

	char pat[3000], back[3000];
	it_fill(pat, sizeof(pat), it_hash(0xbad, (uint64_t)me, 0, 0, 0));
	IT_OK(hoist_put(peer, target + 64, pat, sizeof(pat)), "normal put to pe %d", peer);
	IT_OK(hoist_barrier(), "after the normal put");
	char want[3000];
	it_fill(want, sizeof(want), it_hash(0xbad, (uint64_t)from, 0, 0, 0));
	if (memcmp(target + 64, want, sizeof(want)) != 0)
		IT_FAIL("normal put from pe %d after the malformed batch delivered wrong data", from);
	IT_OK(hoist_get(back, peer, target + 64, sizeof(back)), "normal get from pe %d", peer);
	if (memcmp(back, pat, sizeof(back)) != 0)
		IT_FAIL("normal get from pe %d after the malformed batch returned wrong data", peer);
	IT_OK(hoist_barrier(), "before stats");

	/* stats while every PE is still attached */
	const char *ctl = getenv("HOIST_HOISTCTL"), *dir = getenv("HOIST_RUNTIME_DIR"),
		   *src = getenv("IT_SRC_DIR");
	if (me == 0) {
		if (!ctl || !dir || !src) {
			IT_FAIL("HOIST_HOISTCTL / HOIST_RUNTIME_DIR / IT_SRC_DIR not set (run under harness.sh)");
		} else {
			long long v = it_stats_probe(dir, "max", "rejected");
			if (v < 0)
				IT_FAIL("could not read the largest counter named *rejected* from hoistctl stats --json");
			else if (v < nbad + FLOOD)
				IT_FAIL("hoistctl stats --json: largest counter named *rejected* is %lld, expected >= %d "
					"(this PE alone submitted %d malformed descriptors)",
					v, nbad + FLOOD, nbad + FLOOD);
			else
				it_log("stats: rejected counter %lld (>= %d)", v, nbad + FLOOD);
		}
	}
	IT_OK(hoist_barrier(), "end");
	return it_finish();
}
