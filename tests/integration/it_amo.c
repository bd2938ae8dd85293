/*
 * it_amo: remote atomics (hoist_atomic, hoist_atomic_nbi) on real daemons.
 *
 * Part 1 (model): every PE runs every op x type, with edge values
 * (wrap-around at the type's limits, all-ones, sign bits, float NaN
 * payloads, -0.0, infinities, denormals) and random ones, against every PE
 * of the job (itself included), on a word of its own at that PE; each
 * result (fetched value and the word afterwards, read by FETCH and by
 * hoist_get) is compared with a sequential model written here, and the
 * bytes around the word must stay untouched.
 * Part 2 (nbi): batches of SET, FETCH_ADD, FETCH on distinct words of
 * every PE, issued without waiting: at hoist_quiet every fetched value is
 * the model's (the PE's own atomics to one word stay in program order).
 * Part 2 order: atomics between this PE's own puts and gets to the same
 * range of another PE, no fence between them, keep program order (over
 * several tcp lanes only the conflict stage does that).
 * Part 3 (concurrency): every PE hammers ONE word of PE 0 with fetch-adds,
 * then with fetch-adds and compare-and-swap increment loops mixed, until
 * every PE has claimed HAMMER_M values (so fast PEs keep going while slow
 * ones work); every value a PE claimed (fetched by fetch-add, or the old
 * value of a successful cswap) is gathered at PE 0: the final word is
 * exact and the claimed values are a permutation of [start, final). With argv[1] ==
 * "mixed", odd ranks run with HOIST_DIRECT=0, so same-node PEs hit the
 * word directly and through the daemon at once.
 * Part 4 (errors): misaligned, outside the heap, unknown PE, op or type,
 * float arithmetic, NULL operands get their -errno from the library and
 * from the daemon (raw descriptors), and the word does not change.
 *
 * IT_AMO_DIRECT=none|some: the library's direct atomics must be none / some
 * (a one-node job with HOIST_DIRECT=0 / 1).
 */
#include "hoist_amo.h"
#include "internal.h"
#include "it_common.h"

#define SLOT 64     /* bytes per PE's word area at a target; the word at +8 */
#define TRIALS 10
#define NBI_K 48
#define HAMMER_M 1500
#define HAMMER_CAP (1u << 18)
#define ORDER_BIG (256u << 10) /* striped over tcp lanes */
#define ORDER_ROUNDS 60

static int me, n;

static uint64_t mask_of(hoist_type_t t)
{
	return hoist_amo_size((uint32_t)t) == 4 ? 0xffffffffull : ~0ull;
}

static int is_float(hoist_type_t t)
{
	return t == HOIST_FLOAT || t == HOIST_DOUBLE;
}

/* The sequential model: new value of the word, *fetched. */
static uint64_t model(hoist_amo_t op, uint64_t old, uint64_t v, uint64_t c, uint64_t mask,
		      uint64_t *fetched)
{
	*fetched = old;
	switch (op) {
	case HOIST_AMO_FETCH: return old;
	case HOIST_AMO_SET: return v;
	case HOIST_AMO_SWAP: return v;
	case HOIST_AMO_CSWAP: return old == c ? v : old;
	case HOIST_AMO_ADD:
	case HOIST_AMO_FETCH_ADD: return (old + v) & mask;
	case HOIST_AMO_INC:
	case HOIST_AMO_FETCH_INC: return (old + 1) & mask;
	case HOIST_AMO_AND:
	case HOIST_AMO_FETCH_AND: return old & v;
	case HOIST_AMO_OR:
	case HOIST_AMO_FETCH_OR: return old | v;
	case HOIST_AMO_XOR:
	case HOIST_AMO_FETCH_XOR: return old ^ v;
	}
	return old;
}

static const char *op_name(int op)
{
	static const char *names[] = {"FETCH", "SET", "SWAP", "CSWAP", "ADD", "FETCH_ADD", "INC",
				      "FETCH_INC", "AND", "OR", "XOR", "FETCH_AND", "FETCH_OR",
				      "FETCH_XOR"};
	return op >= 0 && op < 14 ? names[op] : "?";
}

static const char *type_name(int t)
{
	static const char *names[] = {"INT32", "INT64", "UINT64", "FLOAT", "DOUBLE", "UINT32"};
	return t >= 0 && t < 6 ? names[t] : "?";
}

static uint64_t edge_value(hoist_type_t t, int k, struct it_rng *rng)
{
	uint64_t m = mask_of(t);
	if (is_float(t)) {
		static const uint32_t f[] = {0x7fc12345u, 0x80000000u, 0x7f800000u, 0xff800000u,
					     0x00000001u, 0x3f800000u, 0x7fa00001u};
		static const uint64_t dbl[] = {0x7ff8000000012345ull, 0x8000000000000000ull,
					       0x7ff0000000000000ull, 0xfff0000000000000ull,
					       0x0000000000000001ull, 0x3ff0000000000000ull,
					       0x7ff4000000000001ull};
		if (k < 7)
			return t == HOIST_FLOAT ? f[k] : dbl[k];
		return it_rng_next(rng) & m;
	}
	switch (k) {
	case 0: return m;                 /* all ones: +1 wraps to 0 */
	case 1: return m >> 1;            /* the signed maximum: +1 wraps to the minimum */
	case 2: return (m >> 1) + 1;      /* the sign bit alone */
	case 3: return 0;
	case 4: return 1;
	default: return it_rng_next(rng) & m;
	}
}

static int check_guard(const unsigned char *area, int pe, int t, int op)
{
	for (int b = 0; b < SLOT; b++) {
		if (b >= 8 && b < 16)
			continue;
		if (area[b] != (unsigned char)(0xa0 + b)) {
			IT_FAIL("pe %d %s %s: byte %d around the word changed to 0x%02x", pe, op_name(op),
				type_name(t), b, area[b]);
			return 1;
		}
	}
	return 0;
}

static void part1(unsigned char *slots)
{
	struct it_rng rng = {it_hash(0xa70, (uint64_t)me, 1, 2, 3)};
	unsigned char guard[SLOT], back[SLOT];
	for (int b = 0; b < SLOT; b++)
		guard[b] = (unsigned char)(0xa0 + b);
	unsigned char *mine = slots + (size_t)me * SLOT;
	for (int pe = 0; pe < n; pe++) {
		IT_OK(hoist_put(pe, mine, guard, SLOT), "guard at pe %d", pe);
		for (int t = 0; t < 6; t++) {
			uint64_t m = mask_of((hoist_type_t)t);
			uint32_t size = hoist_amo_size((uint32_t)t);
			for (int op = 0; op < 14; op++) {
				if (hoist_amo_valid((uint32_t)op, (uint32_t)t))
					continue;
				IT_WHERE("part 1: pe %d %s %s", pe, op_name(op), type_name(t));
				for (int k = 0; k < TRIALS; k++) {
					uint64_t init = edge_value((hoist_type_t)t, k, &rng);
					uint64_t v = k & 1 ? edge_value((hoist_type_t)t, (k + 3) % TRIALS, &rng)
							   : it_rng_next(&rng) & m;
					uint64_t c = (k % 3 == 0) ? init : it_rng_next(&rng) & m;
					uint64_t got = 0, want_f, fetched = 0, now = 0;
					IT_OK(hoist_atomic(pe, mine + 8, HOIST_AMO_SET, (hoist_type_t)t, &init,
							   NULL, NULL),
					      "init pe %d %s", pe, type_name(t));
					uint64_t want = model((hoist_amo_t)op, init, v, c, m, &want_f);
					int rc = IT_OK(hoist_atomic(pe, mine + 8, (hoist_amo_t)op, (hoist_type_t)t,
								    &v, &c, &got),
						       "pe %d %s %s", pe, op_name(op), type_name(t));
					if (!rc && hoist_amo_fetching((uint32_t)op) && (got & m) != want_f)
						IT_FAIL("pe %d %s %s init 0x%" PRIx64 " v 0x%" PRIx64 " c 0x%" PRIx64
							": fetched 0x%" PRIx64 ", want 0x%" PRIx64,
							pe, op_name(op), type_name(t), init, v, c, got & m, want_f);
					if (!hoist_amo_fetching((uint32_t)op) && got != 0)
						IT_FAIL("pe %d %s %s wrote fetched although it does not fetch", pe,
							op_name(op), type_name(t));
					IT_OK(hoist_atomic(pe, mine + 8, HOIST_AMO_FETCH, (hoist_type_t)t, NULL,
							   NULL, &fetched));
					IT_OK(hoist_get(&now, pe, mine + 8, size));
					if ((fetched & m) != want || (now & m) != want)
						IT_FAIL("pe %d %s %s init 0x%" PRIx64 " v 0x%" PRIx64 " c 0x%" PRIx64
							": word 0x%" PRIx64 " (get 0x%" PRIx64 "), want 0x%" PRIx64,
							pe, op_name(op), type_name(t), init, v, c, fetched & m,
							now & m, want);
				}
				IT_OK(hoist_get(back, pe, mine, SLOT));
				check_guard(back, pe, t, op);
			}
		}
	}
}

static void part2(uint64_t *nbiw)
{
	uint64_t *f1 = it_xmalloc(NBI_K * sizeof(uint64_t)), *f2 = it_xmalloc(NBI_K * sizeof(uint64_t));
	uint32_t *g32 = it_xmalloc(NBI_K * sizeof(uint32_t));
	uint64_t *mine = nbiw + (size_t)me * NBI_K;
	for (int round = 0; round < 20; round++) {
		for (int pe = 0; pe < n; pe++) {
			IT_WHERE("part 2: round %d pe %d", round, pe);
			for (int k = 0; k < NBI_K; k++) {
				uint64_t init = it_hash(0xb1, (uint64_t)me, (uint64_t)pe, (uint64_t)round, (uint64_t)k);
				uint64_t add = (uint64_t)k * 7 + 1;
				f1[k] = f2[k] = 0;
				IT_OK(hoist_atomic_nbi(pe, &mine[k], HOIST_AMO_SET, HOIST_UINT64, &init, NULL, NULL));
				IT_OK(hoist_atomic_nbi(pe, &mine[k], HOIST_AMO_FETCH_ADD, HOIST_UINT64, &add, NULL,
						       &f1[k]));
				IT_OK(hoist_atomic_nbi(pe, &mine[k], HOIST_AMO_FETCH, HOIST_UINT64, NULL, NULL,
						       &f2[k]));
				/* a 4-byte op on the low half, then read it */
				uint32_t x = 0x5a5a5a5au;
				IT_OK(hoist_atomic_nbi(pe, &mine[k], HOIST_AMO_FETCH_XOR, HOIST_UINT32, &x, NULL,
						       &g32[k]));
			}
			IT_OK(hoist_quiet(), "part 2 round %d pe %d", round, pe);
			for (int k = 0; k < NBI_K; k++) {
				uint64_t init = it_hash(0xb1, (uint64_t)me, (uint64_t)pe, (uint64_t)round, (uint64_t)k);
				uint64_t add = (uint64_t)k * 7 + 1;
				if (f1[k] != init || f2[k] != init + add ||
				    g32[k] != (uint32_t)(init + add))
					IT_FAIL("part 2 round %d pe %d word %d: fetch-add got 0x%" PRIx64
						" want 0x%" PRIx64 ", fetch got 0x%" PRIx64 " want 0x%" PRIx64
						", fetch-xor32 got 0x%x want 0x%x (nbi atomics out of order?)",
						round, pe, k, f1[k], init, f2[k], init + add, g32[k],
						(uint32_t)(init + add));
			}
		}
	}
	free(f1);
	free(f2);
	free(g32);
}

/* Atomics among this PE's own puts and gets to the same remote range, no
 * fence or quiet between them (blocking puts complete later, HOIST_AUTO=1):
 * a fetch-add right after a big put (striped over tcp lanes) reads the
 * put's data; a put right after a non-fetching add lands after it; a get
 * right after an add sees it. Across daemons with several tcp lanes only
 * the conflict stage keeps this order (atomics travel on lane 0, puts and
 * gets on any). */
static void part2_order(unsigned char *region, unsigned char *src)
{
	int pe = (me + n / 2) % n;
	for (int round = 0; round < ORDER_ROUNDS; round++) {
		IT_WHERE("part 2 order: round %d pe %d", round, pe);
		uint64_t key = it_hash(0x0d, (uint64_t)me, (uint64_t)round, 0, 0);
		it_fill(src, ORDER_BIG, key);
		size_t w = ORDER_BIG - 64 - 8 * (size_t)(round % 4);
		uint64_t pat, f = 0, add = (uint64_t)round + 1, x = key ^ 0x5555, got = 0;
		memcpy(&pat, src + w, 8);
		IT_OK(hoist_put(pe, region, src, ORDER_BIG), "order round %d big put", round);
		IT_OK(hoist_atomic(pe, region + w, HOIST_AMO_FETCH_ADD, HOIST_UINT64, &add, NULL, &f));
		if (f != pat)
			IT_FAIL("order round %d pe %d: fetch-add after a put read 0x%" PRIx64
				", want the put's 0x%" PRIx64 " (overtook the put)",
				round, pe, f, pat);
		IT_OK(hoist_atomic_nbi(pe, region + w, HOIST_AMO_ADD, HOIST_UINT64, &add, NULL, NULL));
		IT_OK(hoist_put(pe, region + w, &x, 8), "order round %d small put", round);
		IT_OK(hoist_atomic(pe, region + w, HOIST_AMO_ADD, HOIST_UINT64, &add, NULL, NULL));
		IT_OK(hoist_get(&got, pe, region + w, 8));
		if (got != x + add)
			IT_FAIL("order round %d pe %d: add, put 0x%" PRIx64 ", add %" PRIu64
				", get gave 0x%" PRIx64 ", want 0x%" PRIx64
				" (a put or get overtook an atomic, or the other way round)",
				round, pe, x, add, got, x + add);
	}
	IT_OK(hoist_quiet());
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Every PE claims values of the word at PE 0 (with cswap increment loops
 * too when `cas`): HAMMER_M each, and a PE whose claims went mostly the
 * direct path goes on claiming until every PE has its HAMMER_M (the `done`
 * word at PE 0 counts them) or it holds HAMMER_CAP, so fast direct PEs
 * overlap the slow daemon and remote ones (which stop at HAMMER_M: on a
 * slow machine, a VM, HAMMER_CAP claims through a daemon take too long).
 * PE 0 checks the union of the claims is a permutation of [start, final). */
static void hammer(uint64_t *word, uint64_t *done, uint64_t *counts, uint64_t *gather, int cas,
		   int round)
{
	uint64_t *claimed = it_xmalloc(HAMMER_CAP * sizeof(uint64_t));
	uint64_t start = 0, zero = 0;
	if (me == 0)
		IT_OK(hoist_atomic(0, done, HOIST_AMO_SET, HOIST_UINT64, &zero, NULL, NULL));
	IT_OK(hoist_atomic(0, word, HOIST_AMO_FETCH, HOIST_UINT64, NULL, NULL, &start));
	IT_OK(hoist_barrier(), "hammer %d start", round);
	size_t got = 0;
	int reported = 0;
	uint64_t one = 1, direct0 = hoist__ctx()->direct_amos;
	for (uint64_t i = 0; got < HAMMER_CAP; i++) {
		IT_WHERE("hammer %d: %zu claimed", round, got);
		if (got >= HAMMER_M && !reported) {
			IT_OK(hoist_atomic(0, done, HOIST_AMO_INC, HOIST_UINT64, NULL, NULL, NULL));
			reported = 1;
			if ((hoist__ctx()->direct_amos - direct0) * 2 < got)
				break; /* a slow PE: done */
		}
		if (reported && i % 64 == 0) {
			uint64_t d = 0;
			if (IT_OK(hoist_atomic(0, done, HOIST_AMO_FETCH, HOIST_UINT64, NULL, NULL, &d)) ||
			    d >= (uint64_t)n)
				break;
		}
		if (!cas || i % 5) {
			uint64_t f = 0;
			if (!IT_OK(hoist_atomic(0, word, HOIST_AMO_FETCH_ADD, HOIST_UINT64, &one, NULL, &f)))
				claimed[got++] = f;
			continue;
		}
		uint64_t old = 0, seen = 0;
		IT_OK(hoist_atomic(0, word, HOIST_AMO_FETCH, HOIST_UINT64, NULL, NULL, &old));
		for (;;) {
			uint64_t nv = old + 1;
			if (IT_OK(hoist_atomic(0, word, HOIST_AMO_CSWAP, HOIST_UINT64, &nv, &old, &seen)))
				break;
			if (seen == old) {
				claimed[got++] = old;
				break;
			}
			old = seen;
		}
	}
	if (!reported) /* held HAMMER_CAP before the others */
		IT_OK(hoist_atomic(0, done, HOIST_AMO_INC, HOIST_UINT64, NULL, NULL, NULL));
	uint64_t cnt = got;
	IT_OK(hoist_put(0, counts + me, &cnt, sizeof(cnt)), "count");
	IT_OK(hoist_put(0, gather + (size_t)me * HAMMER_CAP, claimed, got * sizeof(uint64_t)), "gather");
	IT_OK(hoist_barrier(), "hammer %d gathered", round);
	if (me == 0) {
		size_t total = 0;
		for (int p = 0; p < n; p++)
			total += counts[p];
		uint64_t fin = 0;
		IT_OK(hoist_atomic(0, word, HOIST_AMO_FETCH, HOIST_UINT64, NULL, NULL, &fin));
		if (fin != start + total)
			IT_FAIL("hammer %d: the word is %" PRIu64 ", want %" PRIu64 " (start %" PRIu64
				" + %zu claims): lost updates",
				round, fin, start + total, start, total);
		uint64_t *all = it_xmalloc(total * sizeof(uint64_t));
		size_t k = 0;
		for (int p = 0; p < n; p++) {
			memcpy(all + k, gather + (size_t)p * HAMMER_CAP, counts[p] * sizeof(uint64_t));
			k += counts[p];
		}
		qsort(all, total, sizeof(uint64_t), cmp_u64);
		for (size_t i = 0; i < total; i++)
			if (all[i] != start + i) {
				IT_FAIL("hammer %d: claimed values are no permutation: sorted[%zu] = %" PRIu64
					", want %" PRIu64 " (a value claimed twice, or one skipped)",
					round, i, all[i], start + i);
				break;
			}
		free(all);
		char per[256] = "";
		for (int p = 0, o = 0; p < n && o < 200; p++)
			o += snprintf(per + o, sizeof(per) - (size_t)o, " %" PRIu64, counts[p]);
		it_log("hammer %d (%s): %zu claims by %d PEs (per PE:%s), final %" PRIu64, round,
		       cas ? "fetch-add + cswap" : "fetch-add", total, n, per, fin);
	}
	IT_OK(hoist_barrier(), "hammer %d end", round);
	free(claimed);
}

static void part4(unsigned char *slots)
{
	struct hoist_ctx *c = hoist__ctx();
	unsigned char *mine = slots + (size_t)me * SLOT;
	int peer = (me + 1) % n;
	uint64_t init = 0x1122334455667788ull, v = 5, f = 0, now = 0, local = 0;
	float fv = 1.0f;
	IT_WHERE("part 4: library checks");
	IT_OK(hoist_atomic(peer, mine + 8, HOIST_AMO_SET, HOIST_UINT64, &init, NULL, NULL));
	IT_EXPECT(hoist_atomic(peer, mine + 12, HOIST_AMO_ADD, HOIST_INT64, &v, NULL, NULL), -EINVAL,
		  "misaligned 8-byte");
	IT_EXPECT(hoist_atomic(peer, mine + 9, HOIST_AMO_FETCH_ADD, HOIST_INT32, &v, NULL, &f), -EINVAL,
		  "misaligned 4-byte");
	IT_EXPECT(hoist_atomic_nbi(peer, mine + 10, HOIST_AMO_SET, HOIST_UINT32, &v, NULL, NULL), -EINVAL,
		  "misaligned nbi");
	IT_EXPECT(hoist_atomic(peer, &local, HOIST_AMO_ADD, HOIST_UINT64, &v, NULL, NULL), -EFAULT,
		  "not symmetric");
	IT_EXPECT(hoist_atomic(peer, c->heap_base + c->heap_bytes - 4, HOIST_AMO_ADD, HOIST_UINT64, &v,
			       NULL, NULL),
		  -EFAULT, "past the heap's end");
	IT_EXPECT(hoist_atomic(n, mine + 8, HOIST_AMO_ADD, HOIST_UINT64, &v, NULL, NULL), -EINVAL, "pe n");
	IT_EXPECT(hoist_atomic(-1, mine + 8, HOIST_AMO_ADD, HOIST_UINT64, &v, NULL, NULL), -EINVAL, "pe -1");
	IT_EXPECT(hoist_atomic(peer, mine + 8, HOIST_AMO_ADD, HOIST_FLOAT, &fv, NULL, NULL), -EINVAL,
		  "float add");
	IT_EXPECT(hoist_atomic(peer, mine + 8, HOIST_AMO_FETCH_XOR, HOIST_DOUBLE, &v, NULL, &f), -EINVAL,
		  "double xor");
	IT_EXPECT(hoist_atomic(peer, mine + 8, HOIST_AMO_CSWAP, HOIST_FLOAT, &fv, &fv, &f), -EINVAL,
		  "float cswap");
	IT_EXPECT(hoist_atomic(peer, mine + 8, (hoist_amo_t)99, HOIST_UINT64, &v, NULL, &f), -EINVAL,
		  "unknown op");
	IT_EXPECT(hoist_atomic(peer, mine + 8, HOIST_AMO_ADD, (hoist_type_t)17, &v, NULL, NULL), -EINVAL,
		  "unknown type");
	IT_EXPECT(hoist_atomic(peer, mine + 8, HOIST_AMO_FETCH_ADD, HOIST_UINT64, &v, NULL, NULL), -EINVAL,
		  "NULL fetched");
	IT_EXPECT(hoist_atomic(peer, mine + 8, HOIST_AMO_ADD, HOIST_UINT64, NULL, NULL, NULL), -EINVAL,
		  "NULL value");
	IT_EXPECT(hoist_atomic(peer, mine + 8, HOIST_AMO_CSWAP, HOIST_UINT64, &v, NULL, &f), -EINVAL,
		  "NULL cmp");
	IT_OK(hoist_quiet());
	IT_OK(hoist_atomic(peer, mine + 8, HOIST_AMO_FETCH, HOIST_UINT64, NULL, NULL, &now));
	if (now != init)
		IT_FAIL("a refused atomic changed the word: 0x%" PRIx64 ", want 0x%" PRIx64, now, init);

	/* the daemon's checks: raw descriptors the library would refuse */
	uint64_t roff = (uint64_t)((char *)mine + 8 - c->heap_base);
	struct hoist_sqe ok = {.opcode = HOIST_OP_AMO, .flags = HOIST_SQE_F_CQE, .pe = peer,
			       .seg = HOIST_SEG_HEAP, .remote_off = roff, .len = 8, .local_off = 0};
	ok.amo_op = HOIST_AMO_OP_FETCH_ADD;
	ok.amo_type = HOIST_AMO_T_UINT64;
	memcpy(ok.inline_data, &v, 8);
	struct {
		const char *what;
		struct hoist_sqe s;
		int want;
	} bad[12];
	int nb = 0;
#define BAD(w, field, val, e)                                                                      \
	do {                                                                                       \
		bad[nb].what = w;                                                                  \
		bad[nb].s = ok;                                                                    \
		bad[nb].s.field = val;                                                             \
		bad[nb++].want = e;                                                                \
	} while (0)
	BAD("misaligned", remote_off, roff + 4, -EINVAL);
	BAD("len not the type's", len, 4, -EINVAL);
	BAD("unknown op", amo_op, 77, -EINVAL);
	BAD("unknown type", amo_type, 9, -EINVAL);
	BAD("float add", amo_type, HOIST_AMO_T_FLOAT, -EINVAL);
	BAD("outside the heap", remote_off, c->heap_bytes, -EFAULT);
	BAD("result outside staging", local_off, c->stage.size, -EFAULT);
	BAD("inline flag", flags, HOIST_SQE_F_CQE | HOIST_SQE_F_INLINE, -EINVAL);
	BAD("aggregation flag", flags, HOIST_SQE_F_CQE | HOIST_SQE_F_AGG, -EINVAL);
	BAD("pe outside the job", pe, n, -EINVAL);
	BAD("segment", seg, 3, -EINVAL);
	BAD("reserved1", reserved1, 1, -EINVAL);
#undef BAD
	for (int k = 0; k < nb; k++) {
		IT_WHERE("part 4: raw %s", bad[k].what);
		struct hoist_op *op;
		struct hoist_sqe *slot;
		if (IT_OK(hoist__op_alloc(c, &op), "%s", bad[k].what))
			continue;
		if (IT_OK(hoist__sqe_get(c, &slot), "%s", bad[k].what)) {
			hoist__op_free(c, op);
			continue;
		}
		*slot = bad[k].s;
		slot->user_data = hoist__op_udata(c, op);
		hoist__sqe_submit(c);
		IT_EXPECT(hoist__wait_op(c, op), bad[k].want, "raw descriptor: %s", bad[k].what);
		hoist__op_free(c, op);
	}
	IT_OK(hoist_atomic(peer, mine + 8, HOIST_AMO_FETCH, HOIST_UINT64, NULL, NULL, &now));
	if (now != init)
		IT_FAIL("a refused raw atomic changed the word: 0x%" PRIx64 ", want 0x%" PRIx64, now, init);
}

int main(int argc, char **argv)
{
	int mixed = argc > 1 && !strcmp(argv[1], "mixed");
	if (mixed) { /* odd ranks go through the daemon */
		const char *r = getenv("HOIST_RANK");
		if (r && atoi(r) % 2)
			setenv("HOIST_DIRECT", "0", 1);
	}
	it_init("it_amo", &me, &n);
	it_watchdog(50);
	unsigned char *slots = it_malloc((size_t)n * SLOT);
	uint64_t *nbiw = it_malloc((size_t)n * NBI_K * sizeof(uint64_t));
	uint64_t *word = it_malloc(64);
	uint64_t *done = it_malloc(64);
	uint64_t *counts = it_malloc((size_t)n * sizeof(uint64_t));
	uint64_t *gather = it_malloc((size_t)n * HAMMER_CAP * sizeof(uint64_t));
	memset(slots, 0, (size_t)n * SLOT);
	*(volatile uint64_t *)word = 0;
	IT_OK(hoist_barrier(), "start");

	part1(slots);
	IT_OK(hoist_barrier(), "after part 1");
	part2(nbiw);
	IT_OK(hoist_barrier(), "after part 2");
	unsigned char *region = it_malloc((size_t)n * ORDER_BIG);
	unsigned char *src = it_xmalloc(ORDER_BIG);
	part2_order(region + (size_t)me * ORDER_BIG, src);
	free(src);
	IT_OK(hoist_barrier(), "after part 2 order");
	hammer(word, done, counts, gather, 0, 1);
	hammer(word, done, counts, gather, 1, 2);
	part4(slots);

	uint64_t direct = hoist__ctx()->direct_amos;
	const char *want = getenv("IT_AMO_DIRECT");
	if (want && !strcmp(want, "none") && direct)
		IT_FAIL("%" PRIu64 " atomics took the direct path with HOIST_DIRECT=0", direct);
	if (want && !strcmp(want, "some") && !direct && (!mixed || me % 2 == 0))
		IT_FAIL("no atomic took the direct path (HOIST_DIRECT=1, every PE on this node)");
	it_log("%" PRIu64 " atomics done directly", direct);
	IT_OK(hoist_barrier(), "end");
	return it_finish();
}
