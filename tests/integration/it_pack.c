/*
 * it_pack: many small puts and gets from every PE to every PE at once (what
 * the daemon coalesces into packs), and aggregation regions:
 *   - small puts/gets: every value checked against a model;
 *   - the same random sequence of puts (plain, strided, vector) and gets,
 *     once inside an aggregation region and once without, into two areas:
 *     the areas must be identical at every target, and the gets of both
 *     runs must have read the same;
 *   - conflicts inside a region: a get of what an aggregated put wrote
 *     (must see the put), a put from the destination of an aggregated get
 *     (must carry the fetched data; plain and strided); both end aggregation early
 *     (hoist__ctx()->agg_early_ends);
 *   - nesting, end without begin.
 * The stats side (packs sent, ops per pack, packs with several clients'
 * operations, aggregation counters) is checked by tests/multinode/packs.sh.
 */
#include "internal.h"
#include "it_common.h"

#define K 2000          /* small puts per target per round */
#define ROUNDS 3
#define AREA (64u << 10)
#define NOPS 400

static uint64_t val(int w, int t, int i, int r)
{
	return it_hash((uint64_t)w, (uint64_t)t, (uint64_t)i, (uint64_t)r, 99);
}

static void small_ops(int me, int n, uint64_t *slots, const uint64_t *ro)
{
	for (int r = 0; r < ROUNDS; r++) {
		for (int d = 1; d <= n; d++) {
			int t = (me + d) % n;
			for (int i = 0; i < K; i++) {
				uint64_t v = val(me, t, i, r);
				if (hoist_put(t, &slots[(size_t)me * K + (size_t)i], &v, 8)) {
					IT_FAIL("put to %d slot %d failed", t, i);
					return;
				}
			}
			/* small gets too */
			for (int i = 0; i < 64; i++) {
				uint64_t g = 0, want = val(t, -1, i, 0);
				IT_OK(hoist_get(&g, t, &ro[i * 7], 8), "small get");
				if (g != want)
					IT_FAIL("get ro[%d] from %d: %" PRIx64 " want %" PRIx64, i * 7, t, g, want);
			}
		}
		IT_OK(hoist_barrier(), "round %d", r);
		for (int w = 0; w < n; w++)
			for (int i = 0; i < K; i++)
				if (slots[(size_t)w * K + (size_t)i] != val(w, me, i, r)) {
					IT_FAIL("round %d: slot %d of writer %d is %" PRIx64 ", want %" PRIx64, r,
						i, w, slots[(size_t)w * K + (size_t)i], val(w, me, i, r));
					break;
				}
		IT_OK(hoist_barrier(), "round %d checked", r);
	}
}

/* One random op sequence into area (of every PE, my part me*AREA/n ..);
 * gets read every PE's ro area into out (checked by the caller). */
static void sequence(int me, int n, unsigned char *area, const unsigned char *ro, unsigned char *out,
		     uint64_t seed, int region)
{
	struct it_rng r = {seed};
	size_t part = AREA / (size_t)n, base = part * (size_t)me, opos = 0;
	unsigned char buf[1024];
	if (region)
		IT_OK(hoist_aggregate_begin(), "begin");
	for (int k = 0; k < NOPS; k++) {
		int t = (int)it_rng_below(&r, (uint64_t)n);
		size_t len = 1 + it_rng_below(&r, 200);
		size_t off = base + it_rng_below(&r, part - 2 * len - 8);
		it_fill(buf, sizeof(buf), seed * 1000 + (uint64_t)k);
		switch (it_rng_below(&r, 4)) {
		case 0:
			IT_OK(hoist_put(t, area + off, buf, len), "seq put");
			break;
		case 1:
			IT_OK(hoist_put_strided(t, area + off, 2, buf, 1, 1, len), "seq put_strided");
			break;
		case 2: {
			hoist_vec_t v[2] = {{off - base, len / 2}, {off - base + len, len - len / 2}};
			IT_OK(hoist_put_vec(t, area + base, v, 2, buf), "seq put_vec");
			break;
		}
		default:
			IT_OK(hoist_get(out + opos, t, ro + (off - base), len), "seq get");
			opos += len;
		}
	}
	if (region)
		IT_OK(hoist_aggregate_end(), "end");
	else
		IT_OK(hoist_quiet(), "quiet");
}

static void check_gets(int n, const unsigned char *out, uint64_t seed)
{
	/* replay the sequence's gets against the model of each ro area */
	struct it_rng r = {seed};
	int me = hoist_rank();
	size_t part = AREA / (size_t)n, base = part * (size_t)me, opos = 0;
	unsigned char *model = it_xmalloc(AREA);
	for (int k = 0; k < NOPS; k++) {
		int t = (int)it_rng_below(&r, (uint64_t)n);
		size_t len = 1 + it_rng_below(&r, 200);
		size_t off = base + it_rng_below(&r, part - 2 * len - 8);
		if (it_rng_below(&r, 4) != 3)
			continue;
		it_fill(model, AREA, 5000 + (uint64_t)t);
		if (memcmp(out + opos, model + (off - base), len))
			IT_FAIL("seed %" PRIu64 " op %d: get of %zu bytes from %d read wrong data", seed, k, len, t);
		opos += len;
	}
	free(model);
}

/* IT_PACK_REGION=1 (packs.sh, 2 PEs on 2 nodes): rank 0 does 300 puts
 * and 50 gets to PE 1 inside one region and nothing else: the daemon must
 * send exactly one pack (counted by the script). */
static int region_only(int me, int n)
{
	uint64_t *cells = it_malloc(400 * 8);
	for (int i = 0; i < 400; i++)
		cells[i] = val(me, 0, i, 5);
	IT_OK(hoist_barrier(), "start");
	if (me == 0 && n == 2) {
		uint64_t got[50];
		IT_OK(hoist_aggregate_begin(), "begin");
		for (int i = 0; i < 300; i++) {
			uint64_t v = val(0, 1, i, 6);
			IT_OK(hoist_put(1, &cells[i], &v, 8), "put");
		}
		for (int i = 0; i < 50; i++)
			IT_OK(hoist_get(&got[i], 1, &cells[300 + i], 8), "get");
		IT_OK(hoist_aggregate_end(), "end");
		for (int i = 0; i < 50; i++)
			if (got[i] != val(1, 0, 300 + i, 5))
				IT_FAIL("aggregated get %d read %" PRIx64, i, got[i]);
	}
	IT_OK(hoist_barrier(), "end");
	if (me == 1)
		for (int i = 0; i < 300; i++)
			if (cells[i] != val(0, 1, i, 6))
				IT_FAIL("aggregated put %d: %" PRIx64, i, cells[i]);
	IT_OK(hoist_finalize(), "finalize");
	return it_failures ? 1 : 0;
}

/* IT_PACK_MIXED=1 (packs.sh, 4 PEs on 2 nodes, ranks 0 and 1 on node 0):
 * rank 0 holds a put to rank 2 in an aggregation region while rank 1 puts
 * to rank 2 normally: rank 1's put joins the held pack, which therefore
 * carries operations of two processes (packs_mixed), deterministically.
 * The two PEs of node 0 hand over with local puts into each other's heap
 * (same node: executed at once, no pack). */
static int mixed_only(int me, int n)
{
	volatile uint64_t *flags = it_malloc(64);
	uint64_t *cells = it_malloc(64);
	flags[0] = flags[1] = 0;
	cells[0] = cells[1] = 0;
	IT_OK(hoist_barrier(), "start");
	uint64_t one = 1, a = val(0, 2, 0, 9), b = val(1, 2, 1, 9);
	if (n == 4 && me == 0) {
		IT_OK(hoist_aggregate_begin(), "begin");
		IT_OK(hoist_put(2, &cells[0], &a, 8), "held put");
		IT_OK(hoist_put(1, (void *)&flags[1], &one, 8), "tell rank 1");
		while (!flags[0])
			hoist_cpu_relax();
		IT_OK(hoist_aggregate_end(), "end");
	} else if (n == 4 && me == 1) {
		while (!flags[1])
			hoist_cpu_relax();
		IT_OK(hoist_put(2, &cells[1], &b, 8), "put joining the held pack");
		IT_OK(hoist_quiet(), "quiet");
		IT_OK(hoist_put(0, (void *)&flags[0], &one, 8), "tell rank 0");
	}
	IT_OK(hoist_barrier(), "end");
	if (me == 2 && (cells[0] != a || cells[1] != b))
		IT_FAIL("held/joined puts: %" PRIx64 " %" PRIx64, cells[0], cells[1]);
	IT_OK(hoist_finalize(), "finalize");
	return it_failures ? 1 : 0;
}

int main(void)
{
	int me, n;
	it_init("it_pack", &me, &n);
	it_watchdog(100);
	struct hoist_ctx *c = hoist__ctx();
	if (getenv("IT_PACK_REGION"))
		return region_only(me, n);
	if (getenv("IT_PACK_MIXED"))
		return mixed_only(me, n);

	uint64_t *slots = it_malloc((size_t)n * K * 8);
	uint64_t *ro = it_malloc(64 * 7 * 8 + 8);
	for (int i = 0; i < 64; i++)
		ro[i * 7] = val(me, -1, i, 0);
	unsigned char *a1 = it_malloc(AREA), *a2 = it_malloc(AREA), *rob = it_malloc(AREA);
	memset(a1, 0, AREA);
	memset(a2, 0, AREA);
	it_fill(rob, AREA, 5000 + (uint64_t)me);
	IT_OK(hoist_barrier(), "start");

	small_ops(me, n, slots, ro);

	/* with and without a region: identical */
	unsigned char *o1 = it_xmalloc(NOPS * 200), *o2 = it_xmalloc(NOPS * 200);
	uint64_t seed = 1234 + (uint64_t)me;
	uint64_t before = c->agg_ops;
	sequence(me, n, a1, rob, o1, seed, 1);
	if (c->agg_ops == before)
		IT_FAIL("the region aggregated nothing");
	sequence(me, n, a2, rob, o2, seed, 0);
	check_gets(n, o1, seed);
	check_gets(n, o2, seed);
	IT_OK(hoist_barrier(), "sequences done");
	if (memcmp(a1, a2, AREA)) {
		for (size_t i = 0; i < AREA; i++)
			if (a1[i] != a2[i]) {
				IT_FAIL("with region != without at byte %zu (0x%02x vs 0x%02x)", i, a1[i], a2[i]);
				break;
			}
	}

	/* conflicts inside a region */
	int t = (me + 1) % n, t2 = (me + n - 1) % n;
	uint64_t ends = c->agg_early_ends;
	uint64_t *cell = (uint64_t *)(a1 + (AREA / (size_t)n) * (size_t)me); /* my part at t */
	uint64_t v = val(me, t, 77, 77), got = 0;
	IT_OK(hoist_barrier(), "conflicts");
	IT_OK(hoist_aggregate_begin(), "begin");
	IT_OK(hoist_put(t, cell, &v, 8), "aggregated put");
	IT_OK(hoist_get(&got, t, cell, 8), "get of what the put wrote");
	if (got != v)
		IT_FAIL("get after an aggregated put to the same place: %" PRIx64 " want %" PRIx64, got, v);
	IT_OK(hoist_aggregate_end(), "end");
	if (c->agg_early_ends != ends + 1)
		IT_FAIL("a get of an aggregated put's range did not end aggregation early");

	unsigned char gbuf[64];
	ends = c->agg_early_ends;
	IT_OK(hoist_aggregate_begin(), "begin");
	IT_OK(hoist_get(gbuf, t, rob + 128, 64), "aggregated get");
	IT_OK(hoist_put(t2, (unsigned char *)cell + 64, gbuf, 64), "put from the get's dst");
	IT_OK(hoist_aggregate_end(), "end");
	if (c->agg_early_ends != ends + 1)
		IT_FAIL("a put from an aggregated get's dst did not end aggregation early");
	unsigned char model[64], back[64];
	unsigned char *full = it_xmalloc(AREA);
	it_fill(full, AREA, 5000 + (uint64_t)t);
	memcpy(model, full + 128, 64);
	free(full);
	IT_OK(hoist_get(back, t2, (unsigned char *)cell + 64, 64), "read back");
	if (memcmp(back, model, 64) || memcmp(gbuf, model, 64))
		IT_FAIL("put from an aggregated get's dst did not carry the fetched data");

	/* the same with a strided put (its source box is checked too) */
	ends = c->agg_early_ends;
	memset(gbuf, 0, sizeof(gbuf));
	IT_OK(hoist_aggregate_begin(), "begin");
	IT_OK(hoist_get(gbuf, t, rob + 256, 64), "aggregated get");
	IT_OK(hoist_put_strided(t2, (unsigned char *)cell + 128, 8, gbuf, 8, 8, 8),
	      "strided put from the get's dst");
	IT_OK(hoist_aggregate_end(), "end");
	if (c->agg_early_ends != ends + 1)
		IT_FAIL("a strided put from an aggregated get's dst did not end aggregation early");
	full = it_xmalloc(AREA);
	it_fill(full, AREA, 5000 + (uint64_t)t);
	memcpy(model, full + 256, 64);
	free(full);
	IT_OK(hoist_get(back, t2, (unsigned char *)cell + 128, 64), "read back");
	if (memcmp(back, model, 64) || memcmp(gbuf, model, 64))
		IT_FAIL("strided put from an aggregated get's dst did not carry the fetched data");

	/* nesting, misuse */
	IT_OK(hoist_aggregate_begin(), "outer");
	IT_OK(hoist_aggregate_begin(), "inner");
	IT_OK(hoist_put(t, cell, &v, 8), "nested put");
	IT_OK(hoist_aggregate_end(), "inner end");
	IT_OK(hoist_aggregate_end(), "outer end");
	IT_EXPECT(hoist_aggregate_end(), -EINVAL, "end without begin");

	IT_OK(hoist_barrier(), "end");
	IT_OK(hoist_finalize(), "finalize");
	free(o1);
	free(o2);
	if (it_failures)
		return 1;
	if (me == 0)
		it_log("ok: %d PEs", n);
	return 0;
}
