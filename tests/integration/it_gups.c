/*
 * it_gups: streams of non-fetching atomics (the GUPS pattern) on real
 * daemons, checked against a model. Under HOIST_AUTO=1 (the default) the
 * daemon defers them like puts and packs them with other small operations
 * for the same node (WIRE_PACK_AMO); the results must be exactly those of
 * program order.
 *
 * Part 1 (stream): every PE sends GUPS_U updates to random 64-bit words of
 * its own area of the table at PE (me + n/2) % n (another node when the
 * job spans two): mostly ADD and XOR on HOIST_UINT64, some INC, AND, OR,
 * SET, and ADD on HOIST_UINT32 halves; blocking and nbi forms mixed, and
 * every GUPS_AGG_EVERY updates GUPS_AGG of them inside an aggregation
 * region. ADD and XOR do not commute, so only program order gives the
 * model's table. After hoist_quiet the PE reads its area back with
 * hoist_get and compares every word; after a barrier the target checks
 * that no word outside the areas changed.
 * Part 2 (order): on a few words of another area, each round runs
 * sequences with no fence or quiet inside: an atomic then a hoist_get of
 * the word, an atomic then a fetching atomic, a put then an atomic then a
 * get, an atomic then a put then a fetch, nbi atomics then a get, an
 * atomic inside an aggregation region then a get (ending the region):
 * every read sees every earlier write.
 *
 * Run with 2 PEs on 2 daemons (tests/multinode: mn_gups_*, amo_packs.sh
 * also checks the pack counters) and on one node with HOIST_DIRECT=0
 * (it_gups_2_direct0: the self transport executes them).
 */
#include "it_common.h"

#define GUPS_T 2048u          /* words of one PE's area at its target */
#define GUPS_U 30000u         /* updates of part 1 */
#define GUPS_AGG_EVERY 4096u  /* an aggregation region every ... updates */
#define GUPS_AGG 300u         /* ... of this many */
#define ORD_W 16u             /* words of part 2 */
#define ORD_ROUNDS 400u

static int me, n;

enum upd { U_ADD, U_XOR, U_INC, U_AND, U_OR, U_SET, U_ADD32, U__COUNT };

/* One update of the stream, chosen by r: word index, kind, operand. */
static void pick(struct it_rng *r, uint32_t *w, enum upd *k, uint64_t *v)
{
	*w = (uint32_t)it_rng_below(r, GUPS_T);
	uint64_t c = it_rng_below(r, 32);
	*k = c < 12 ? U_ADD : c < 24 ? U_XOR : c < 26 ? U_INC : c < 27 ? U_AND : c < 28 ? U_OR
	     : c < 29 ? U_SET : U_ADD32;
	*v = it_rng_next(r);
	if (*k == U_AND)
		*v |= 0xffff0000ffff0000ull; /* keep some bits */
}

static uint64_t model_apply(uint64_t old, enum upd k, uint64_t v, int half)
{
	switch (k) {
	case U_ADD: return old + v;
	case U_XOR: return old ^ v;
	case U_INC: return old + 1;
	case U_AND: return old & v;
	case U_OR: return old | v;
	case U_SET: return v;
	case U_ADD32: {
		uint32_t h[2];
		memcpy(h, &old, 8);
		h[half] += (uint32_t)v;
		memcpy(&old, h, 8);
		return old;
	}
	case U__COUNT: break;
	}
	return old;
}

static int issue(int pe, uint64_t *word, enum upd k, uint64_t v, int half, int nbi)
{
	static const hoist_amo_t ops[] = {HOIST_AMO_ADD, HOIST_AMO_XOR, HOIST_AMO_INC, HOIST_AMO_AND,
					  HOIST_AMO_OR, HOIST_AMO_SET, HOIST_AMO_ADD};
	int (*f)(int, void *, hoist_amo_t, hoist_type_t, const void *, const void *, void *) =
		nbi ? hoist_atomic_nbi : hoist_atomic;
	if (k == U_ADD32) {
		uint32_t v32 = (uint32_t)v;
		return f(pe, (uint32_t *)word + half, HOIST_AMO_ADD, HOIST_UINT32, &v32, NULL, NULL);
	}
	return f(pe, word, ops[k], HOIST_UINT64, &v, NULL, NULL);
}

static void part1(uint64_t *table)
{
	int pe = (me + n / 2) % n;
	uint64_t *mine = table + (size_t)me * GUPS_T;
	uint64_t *model = it_xmalloc(GUPS_T * sizeof(uint64_t));
	for (uint32_t i = 0; i < GUPS_T; i++)
		model[i] = it_hash(0x6a5, (uint64_t)me, i, 0, 0);
	struct it_rng r = {it_hash(0x6a7, (uint64_t)me, 1, 2, 3)};
	int agg = 0;
	for (uint32_t u = 0; u < GUPS_U; u++) {
		IT_WHERE("part 1: update %u to PE %d", u, pe);
		if (u % GUPS_AGG_EVERY == 100) {
			IT_OK(hoist_aggregate_begin(), "update %u", u);
			agg = 1;
		}
		uint32_t w;
		enum upd k;
		uint64_t v;
		pick(&r, &w, &k, &v);
		int half = (int)(v >> 63);
		int nbi = (u % 7) == 3;
		model[w] = model_apply(model[w], k, v, half);
		if (IT_OK(issue(pe, mine + w, k, v, half, nbi), "update %u kind %d", u, (int)k))
			break;
		if (agg && u % GUPS_AGG_EVERY == 100 + GUPS_AGG) {
			IT_OK(hoist_aggregate_end(), "update %u", u);
			agg = 0;
		}
	}
	if (agg)
		IT_OK(hoist_aggregate_end(), "last region");
	IT_OK(hoist_quiet(), "part 1");
	uint64_t *back = it_xmalloc(GUPS_T * sizeof(uint64_t));
	IT_OK(hoist_get(back, pe, mine, GUPS_T * sizeof(uint64_t)), "part 1 read back");
	int bad = 0;
	for (uint32_t i = 0; i < GUPS_T; i++)
		if (back[i] != model[i] && bad++ < 8)
			IT_FAIL("part 1: word %u at PE %d is 0x%" PRIx64 ", the model says 0x%" PRIx64, i,
				pe, back[i], model[i]);
	if (bad)
		IT_FAIL("part 1: %d of %u words differ from the model", bad, GUPS_T);
	it_log("part 1: %u atomics to PE %d, table equals the model", GUPS_U, pe);
	free(back);
	free(model);
}

/* part 2: w is the remote word, *m its model */
static void expect_word(int pe, uint64_t *w, uint64_t m, const char *what, uint32_t round)
{
	uint64_t got = 0;
	IT_OK(hoist_get(&got, pe, w, 8), "%s round %u", what, round);
	if (got != m)
		IT_FAIL("part 2 round %u: %s: got 0x%" PRIx64 ", want 0x%" PRIx64, round, what, got, m);
}

static void expect_fetch(int pe, uint64_t *w, uint64_t m, const char *what, uint32_t round)
{
	uint64_t got = 0;
	IT_OK(hoist_atomic(pe, w, HOIST_AMO_FETCH, HOIST_UINT64, NULL, NULL, &got), "%s round %u",
	      what, round);
	if (got != m)
		IT_FAIL("part 2 round %u: %s: fetched 0x%" PRIx64 ", want 0x%" PRIx64, round, what,
			got, m);
}

static void part2(uint64_t *ord)
{
	int pe = (me + n / 2) % n;
	uint64_t *mine = ord + (size_t)me * ORD_W;
	uint64_t m[ORD_W];
	for (uint32_t i = 0; i < ORD_W; i++)
		m[i] = 0;
	struct it_rng r = {it_hash(0x0bd, (uint64_t)me, 4, 5, 6)};
	for (uint32_t round = 0; round < ORD_ROUNDS; round++) {
		IT_WHERE("part 2: round %u to PE %d", round, pe);
		uint32_t i = round % ORD_W;
		uint64_t *w = mine + i, v = it_rng_next(&r), x = it_rng_next(&r), f = 0;
		switch (round % 6) {
		case 0: /* an atomic, then a get of its word */
			IT_OK(hoist_atomic(pe, w, HOIST_AMO_ADD, HOIST_UINT64, &v, NULL, NULL));
			m[i] += v;
			expect_word(pe, w, m[i], "add then get", round);
			break;
		case 1: /* an atomic, then a fetching atomic */
			IT_OK(hoist_atomic(pe, w, HOIST_AMO_XOR, HOIST_UINT64, &v, NULL, NULL));
			m[i] ^= v;
			IT_OK(hoist_atomic(pe, w, HOIST_AMO_FETCH_ADD, HOIST_UINT64, &x, NULL, &f));
			if (f != m[i])
				IT_FAIL("part 2 round %u: xor then fetch-add fetched 0x%" PRIx64
					", want 0x%" PRIx64, round, f, m[i]);
			m[i] += x;
			break;
		case 2: /* a put, an atomic, a get */
			IT_OK(hoist_put(pe, w, &x, 8));
			IT_OK(hoist_atomic(pe, w, HOIST_AMO_ADD, HOIST_UINT64, &v, NULL, NULL));
			m[i] = x + v;
			expect_word(pe, w, m[i], "put, add, get", round);
			break;
		case 3: /* an atomic, a put over it, a fetch */
			IT_OK(hoist_atomic(pe, w, HOIST_AMO_OR, HOIST_UINT64, &v, NULL, NULL));
			IT_OK(hoist_put(pe, w, &x, 8));
			m[i] = x;
			expect_fetch(pe, w, m[i], "or, put, fetch", round);
			break;
		case 4: /* nbi atomics, then a get */
			IT_OK(hoist_atomic_nbi(pe, w, HOIST_AMO_ADD, HOIST_UINT64, &v, NULL, NULL));
			IT_OK(hoist_atomic_nbi(pe, w, HOIST_AMO_XOR, HOIST_UINT64, &x, NULL, NULL));
			IT_OK(hoist_atomic_nbi(pe, w, HOIST_AMO_INC, HOIST_UINT64, NULL, NULL, NULL));
			m[i] = ((m[i] + v) ^ x) + 1;
			expect_word(pe, w, m[i], "nbi add, xor, inc, then get", round);
			break;
		case 5: /* inside an aggregation region: the get ends it */
			IT_OK(hoist_aggregate_begin());
			IT_OK(hoist_atomic(pe, w, HOIST_AMO_SET, HOIST_UINT64, &x, NULL, NULL));
			IT_OK(hoist_atomic(pe, w, HOIST_AMO_ADD, HOIST_UINT64, &v, NULL, NULL));
			m[i] = x + v;
			expect_word(pe, w, m[i], "aggregated set, add, then get", round);
			IT_OK(hoist_aggregate_end());
			break;
		}
	}
	IT_OK(hoist_quiet(), "part 2");
	it_log("part 2: %u rounds of ordered sequences to PE %d", ORD_ROUNDS, pe);
}

int main(void)
{
	it_init("it_gups", &me, &n);
	it_watchdog(50);
	size_t tbytes = (size_t)n * GUPS_T * sizeof(uint64_t);
	uint64_t *table = it_malloc(tbytes + 64); /* + a guard word area */
	uint64_t *ord = it_malloc((size_t)n * ORD_W * sizeof(uint64_t));
	/* every area starts as its writer's model says */
	int from = (me - n / 2 + n) % n;
	for (int s = 0; s < n; s++)
		for (uint32_t i = 0; i < GUPS_T; i++)
			table[(size_t)s * GUPS_T + i] =
				s == from || n == 1 ? it_hash(0x6a5, (uint64_t)s, i, 0, 0) : 0x5a5a5a5a5a5a5a5aull;
	memset(table + (size_t)n * GUPS_T, 0xa5, 64);
	memset(ord, 0, (size_t)n * ORD_W * sizeof(uint64_t));
	IT_OK(hoist_barrier(), "start");

	part1(table);
	IT_OK(hoist_barrier(), "after part 1");
	for (int s = 0; s < n; s++) /* areas nobody writes stay as they were */
		for (uint32_t i = 0; s != from && n > 1 && i < GUPS_T; i++)
			if (table[(size_t)s * GUPS_T + i] != 0x5a5a5a5a5a5a5a5aull) {
				IT_FAIL("part 1: area of PE %d (nobody writes it here) changed at %u", s, i);
				break;
			}
	for (int b = 0; b < 64; b++)
		if (((unsigned char *)(table + (size_t)n * GUPS_T))[b] != 0xa5)
			IT_FAIL("part 1: the guard after the table changed at byte %d", b);
	part2(ord);
	IT_OK(hoist_barrier(), "end");
	return it_finish();
}
