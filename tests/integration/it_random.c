/*
 * it_random: a seeded, randomised, race-free program checked against a model.
 *
 * Every PE owns a symmetric region of NB blocks. In each round, block b of
 * PE t is given (by a generator every PE evaluates identically from the
 * seed) either to one writer PE or to nobody (read-only for the round). So
 * no two PEs write the same bytes in a round, and nobody reads bytes that
 * someone else writes in that round.
 *
 * Each PE then runs a random operation stream (again derived from the seed,
 * its rank and the round): blocking puts and put_nbi into blocks it owns
 * (malloc'd or symmetric sources; blocking-put sources are clobbered right
 * after the call), blocking gets of blocks it owns (must see its own earlier
 * puts) or read-only blocks, get_nbi of read-only blocks (checked at the
 * next quiet), fences and quiets. Before touching bytes that have an
 * outstanding put_nbi the PE fences (puts) or quiets (gets), as the API
 * requires.
 *
 * After each round (quiet + barrier) every PE replays the other PEs' streams
 * into its model of the whole job's memory and checks its own region; at
 * the end every PE reads every other PE's region back and compares.
 *
 * The seed is printed; rerun a failure with IT_SEED=<seed>.
 */
#include "it_common.h"

#define NB 64u
#define BLOCK 8192u
#define REGION (NB * BLOCK)
#define ROUNDS 24
#define OPS 250
#define NBI_AREA (2u << 20)

enum opk { O_NOP, O_PUT, O_PUT_NBI, O_GET, O_GET_NBI, O_FENCE, O_QUIET };

struct op {
	enum opk k;
	int t;              /* target PE */
	unsigned b;         /* block */
	unsigned off, len;  /* inside the block */
	unsigned sym;       /* symmetric local buffer */
	uint64_t key;       /* put data */
};

static uint64_t g_seed;
static int g_n;

static int owner(int round, int t, unsigned b)
{
	return (int)(it_hash(g_seed, 0x0a1e, (uint64_t)round, (uint64_t)t, b) % (uint64_t)(g_n + 1));
}

/* Find a block of t with the wanted owner, starting at a random one. */
static int pick_block(struct it_rng *rng, int round, int t, int want, unsigned *b)
{
	unsigned start = (unsigned)it_rng_below(rng, NB);
	for (unsigned i = 0; i < NB; i++) {
		unsigned c = (start + i) % NB;
		if (owner(round, t, c) == want) {
			*b = c;
			return 1;
		}
	}
	return 0;
}

static void gen_ops(int w, int round, struct op *ops)
{
	struct it_rng rng = {it_hash(g_seed, 0x0b5, (uint64_t)w, (uint64_t)round, 0)};
	for (int i = 0; i < OPS; i++) {
		struct op o = {0};
		unsigned x = (unsigned)it_rng_below(&rng, 100);
		o.t = (int)it_rng_below(&rng, (uint64_t)g_n);
		if (x < 40)
			o.k = O_PUT;
		else if (x < 55)
			o.k = O_PUT_NBI;
		else if (x < 80)
			o.k = O_GET;
		else if (x < 90)
			o.k = O_GET_NBI;
		else if (x < 95)
			o.k = O_FENCE;
		else
			o.k = O_QUIET;
		if (o.k == O_PUT || o.k == O_PUT_NBI || o.k == O_GET || o.k == O_GET_NBI) {
			int want = w;
			if (o.k == O_GET_NBI || (o.k == O_GET && it_rng_below(&rng, 2)))
				want = g_n; /* read-only block */
			if (!pick_block(&rng, round, o.t, want, &o.b)) {
				o.k = O_NOP;
			} else {
				switch (it_rng_below(&rng, 4)) {
				case 0: o.len = 1 + (unsigned)it_rng_below(&rng, 16); break;
				case 1: o.len = 17 + (unsigned)it_rng_below(&rng, 496); break;
				case 2: o.len = 8; break;
				default: o.len = 1 + (unsigned)it_rng_below(&rng, BLOCK); break;
				}
				o.off = (unsigned)it_rng_below(&rng, BLOCK - o.len + 1);
				o.sym = (unsigned)it_rng_below(&rng, 2);
				o.key = it_rng_next(&rng);
			}
		}
		ops[i] = o;
	}
}

/* Apply the puts of writer w's stream for `round` to the model. */
static void apply_puts(unsigned char *model, int w, int round)
{
	struct op ops[OPS];
	gen_ops(w, round, ops);
	for (int i = 0; i < OPS; i++)
		if (ops[i].k == O_PUT || ops[i].k == O_PUT_NBI)
			it_fill(model + (size_t)ops[i].t * REGION + (size_t)ops[i].b * BLOCK + ops[i].off,
				ops[i].len, ops[i].key);
}

struct pending_get {
	unsigned char *dst;
	size_t len;
	size_t moff; /* offset in the model snapshot area */
	int t, round, i;
	unsigned b, off;
};

struct state {
	int me;
	unsigned char *region, *model;
	unsigned char *mnbi, *snbi, *msrc, *ssrc, *mget, *sget;
	unsigned char *expect; /* expected contents for pending get_nbi */
	size_t nbi_used, get_used;
	struct pending_get pend[OPS];
	int npend;
	unsigned char dirty[64][NB]; /* blocks with outstanding put_nbi (t < 64) */
	int any_dirty;
};

static void do_quiet(struct state *s, const char *why, int round)
{
	IT_OK(hoist_quiet(), "%s, round %d", why, round);
	for (int p = 0; p < s->npend; p++) {
		struct pending_get *g = &s->pend[p];
		for (size_t j = 0; j < g->len; j++)
			if (g->dst[j] != s->expect[g->moff + j]) {
				IT_FAIL("seed %" PRIu64 " round %d op %d: get_nbi of pe %d block %u +%u len %zu wrong at "
					"byte %zu: got 0x%02x want 0x%02x",
					g_seed, g->round, g->i, g->t, g->b, g->off, g->len, j, g->dst[j],
					s->expect[g->moff + j]);
				break;
			}
	}
	s->npend = 0;
	s->nbi_used = 0;
	s->get_used = 0;
	memset(s->dirty, 0, sizeof(s->dirty));
	s->any_dirty = 0;
}

static void run_round(struct state *s, int round)
{
	struct op ops[OPS];
	gen_ops(s->me, round, ops);
	for (int i = 0; i < OPS; i++) {
		struct op *o = &ops[i];
		size_t roff = (size_t)o->b * BLOCK + o->off;
		IT_WHERE("seed %" PRIu64 " round %d op %d (kind %d, pe %d, block %u +%u len %u)", g_seed, round, i,
			 (int)o->k, o->t, o->b, o->off, o->len);
		unsigned char *raddr = s->region + roff;
		unsigned char *mod = s->model + (size_t)o->t * REGION + roff;
		switch (o->k) {
		case O_NOP:
			break;
		case O_FENCE:
			IT_OK(hoist_fence(), "round %d op %d", round, i);
			break;
		case O_QUIET:
			do_quiet(s, "random quiet", round);
			break;
		case O_PUT: {
			if (s->dirty[o->t][o->b])
				IT_OK(hoist_fence(), "round %d op %d", round, i);
			unsigned char *src = o->sym ? s->ssrc : s->msrc;
			it_fill(src, o->len, o->key);
			IT_OK(hoist_put(o->t, raddr, src, o->len), "seed %" PRIu64 " round %d op %d: put to pe %d block %u +%u len %u",
			      g_seed, round, i, o->t, o->b, o->off, o->len);
			memset(src, 0xa7, o->len); /* reusable on return */
			it_fill(mod, o->len, o->key);
			break;
		}
		case O_PUT_NBI: {
			if (s->dirty[o->t][o->b])
				IT_OK(hoist_fence(), "round %d op %d", round, i);
			if (s->nbi_used + o->len > NBI_AREA)
				do_quiet(s, "nbi source area full", round);
			unsigned char *src = (o->sym ? s->snbi : s->mnbi) + s->nbi_used;
			s->nbi_used += (o->len + 63) & ~63u;
			it_fill(src, o->len, o->key);
			IT_OK(hoist_put_nbi(o->t, raddr, src, o->len),
			      "seed %" PRIu64 " round %d op %d: put_nbi to pe %d block %u +%u len %u", g_seed, round, i,
			      o->t, o->b, o->off, o->len);
			it_fill(mod, o->len, o->key);
			s->dirty[o->t][o->b] = 1;
			s->any_dirty = 1;
			break;
		}
		case O_GET: {
			if (s->dirty[o->t][o->b])
				do_quiet(s, "get of a block with put_nbi outstanding", round);
			unsigned char buf[BLOCK + 2];
			if (o->sym && s->get_used + o->len > NBI_AREA)
				do_quiet(s, "get area full", round);
			/* symmetric destination: above the pending get_nbi destinations */
			unsigned char *dst = o->sym ? s->sget + s->get_used : buf + 1;
			memset(dst, 0x11, o->len);
			if (IT_OK(hoist_get(dst, o->t, raddr, o->len),
				  "seed %" PRIu64 " round %d op %d: get from pe %d block %u +%u len %u", g_seed, round, i,
				  o->t, o->b, o->off, o->len) != 0)
				break;
			for (unsigned j = 0; j < o->len; j++)
				if (dst[j] != mod[j]) {
					IT_FAIL("seed %" PRIu64 " round %d op %d: get from pe %d block %u (%s) +%u len %u "
						"wrong at byte %u: got 0x%02x want 0x%02x",
						g_seed, round, i, o->t, o->b,
						owner(round, o->t, o->b) == s->me ? "mine this round" : "read-only",
						o->off, o->len, j, dst[j], mod[j]);
					break;
				}
			break;
		}
		case O_GET_NBI: {
			if (s->get_used + o->len > NBI_AREA || s->npend == OPS)
				do_quiet(s, "get_nbi area full", round);
			unsigned char *dst = (o->sym ? s->sget : s->mget) + s->get_used;
			size_t moff = s->get_used;
			s->get_used += (o->len + 63) & ~63u;
			memset(dst, 0x22, o->len);
			memcpy(s->expect + moff, mod, o->len);
			if (IT_OK(hoist_get_nbi(dst, o->t, raddr, o->len),
				  "seed %" PRIu64 " round %d op %d: get_nbi from pe %d block %u +%u len %u", g_seed,
				  round, i, o->t, o->b, o->off, o->len) != 0)
				break;
			s->pend[s->npend++] = (struct pending_get){dst, o->len, moff, o->t, round, i, o->b, o->off};
			break;
		}
		}
	}
	do_quiet(s, "end of round", round);
}

static void check_region(const unsigned char *got, const unsigned char *want, int t, int round,
			 const char *how)
{
	for (size_t j = 0; j < REGION; j++)
		if (got[j] != want[j]) {
			unsigned b = (unsigned)(j / BLOCK);
			IT_FAIL("seed %" PRIu64 " after round %d: region of pe %d (%s) differs at block %u +%zu: got "
				"0x%02x want 0x%02x (block owner in that round: %d)",
				g_seed, round, t, how, b, j % BLOCK, got[j], want[j], owner(round, t, b));
			return;
		}
}

int main(void)
{
	int me, n;
	it_init("it_random", &me, &n);
	it_watchdog(50);
	g_n = n;
	if (n > 64) {
		it_log("at most 64 PEs");
		hoist_finalize();
		return IT_SKIP;
	}

	uint64_t *seedw = it_malloc(64);
	struct state st = {.me = me};
	st.region = it_malloc(REGION);
	st.snbi = it_malloc(NBI_AREA);
	st.ssrc = it_malloc(BLOCK);
	st.sget = it_malloc(NBI_AREA);
	st.mnbi = it_xmalloc(NBI_AREA);
	st.msrc = it_xmalloc(BLOCK);
	st.mget = it_xmalloc(NBI_AREA);
	st.expect = it_xmalloc(NBI_AREA);
	st.model = calloc((size_t)n, REGION);
	if (!st.model) {
		IT_FAIL("calloc model");
		return 1;
	}
	memset(st.region, 0, REGION);

	if (me == 0) {
		const char *e = getenv("IT_SEED");
		uint64_t seed = e ? strtoull(e, NULL, 0) : it_mix((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20));
		for (int t = 0; t < n; t++)
			IT_OK(hoist_put(t, seedw, &seed, sizeof(seed)), "seed put to pe %d", t);
		fprintf(stderr, "[it_random] seed=%" PRIu64 " (rerun with IT_SEED=%" PRIu64 ")\n", seed, seed);
	}
	IT_OK(hoist_barrier(), "seed distribution");
	g_seed = *(volatile uint64_t *)seedw;

	for (int round = 0; round < ROUNDS; round++) {
		run_round(&st, round);
		IT_OK(hoist_barrier(), "end of round %d", round);
		for (int w = 0; w < n; w++)
			if (w != me)
				apply_puts(st.model, w, round);
		check_region(st.region, st.model + (size_t)me * REGION, me, round, "own memory");
		IT_OK(hoist_barrier(), "after check of round %d", round);
	}

	IT_WHERE("final read back");
	unsigned char *back = it_xmalloc(REGION);
	for (int i = 1; i <= n; i++) {
		int t = (me + i) % n;
		memset(back, 0x33, REGION);
		if (IT_OK(hoist_get(back, t, st.region, REGION), "final read of pe %d", t) == 0)
			check_region(back, st.model + (size_t)t * REGION, t, ROUNDS - 1, "final hoist_get");
	}
	IT_OK(hoist_barrier(), "final");
	if (me == 0)
		it_log("seed %" PRIu64 ": %d rounds x %d ops per PE checked", g_seed, ROUNDS, OPS);
	free(back);
	free(st.model);
	free(st.mnbi);
	free(st.msrc);
	free(st.mget);
	free(st.expect);
	return it_finish();
}
