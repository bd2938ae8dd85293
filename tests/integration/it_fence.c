/*
 * it_fence: ordering of puts.
 *
 * Part 1 (fence): PEs are paired (0->1, 2->3, ...). For many rounds the
 * sender puts a data block (size varies: inline, staged, large; blocking or
 * put_nbi; malloc'd or symmetric source), calls hoist_fence, then puts the
 * round number into a flag word at the receiver. The receiver polls its
 * flag; the moment it shows the round, the whole data block must already be
 * there. The receiver then acknowledges with a put to the sender, which
 * waits for it before the next round (so the check is race free).
 *
 * Part 2 (program order): every PE writes a random sequence of blocking
 * puts (random offsets and lengths, inline / staged / symmetric sources) to
 * the same 4 KiB region of PE (me+1)%n. After a barrier the target compares
 * the region against a model that applies the same sequence in program
 * order (so the last write to each byte wins), and the writer also reads it
 * back with hoist_get right after its puts (a get sees the caller's earlier
 * puts to the same location).
 */
#include "it_common.h"

#define ROUNDS 300
#define MAXDATA (65536u + 64u)
#define REGION 4096u
#define P2_ROUNDS 20
#define P2_PUTS 100

static size_t data_size(int r)
{
	static const size_t s[] = {8, 16, 40, 200, 4096, 65536 + 8, 1, 17};
	return s[r % 8];
}

static int part1(int me, int n, unsigned char *data, uint64_t *flag, uint64_t *ack, unsigned char *ssrc)
{
	int pairs = n / 2;
	int sender = (me % 2 == 0) && me / 2 < pairs;
	int receiver = (me % 2 == 1);
	int peer = sender ? me + 1 : me - 1;
	unsigned char *msrc = it_xmalloc(MAXDATA);
	int broken = 0;

	for (int r = 1; r <= ROUNDS && !broken; r++) {
		size_t sz = data_size(r);
		uint64_t key = it_hash(0xfe0ce, (uint64_t)me, (uint64_t)r, sz, 0);
		IT_WHERE("part 1 round %d (%s, %zu B)", r, sender ? "sender" : receiver ? "receiver" : "idle", sz);
		if (sender) {
			int nbi = (r % 3 == 0);
			unsigned char *src = (r % 2) ? ssrc : msrc;
			it_fill(src, sz, key);
			if (nbi)
				IT_OK(hoist_put_nbi(peer, data, src, sz), "round %d data put_nbi %zu B", r, sz);
			else
				IT_OK(hoist_put(peer, data, src, sz), "round %d data put %zu B", r, sz);
			IT_OK(hoist_fence(), "round %d", r);
			uint64_t v = (uint64_t)r;
			IT_OK(hoist_put(peer, flag, &v, sizeof(v)), "round %d flag put", r);
			if (!it_wait_u64(ack, (uint64_t)r, 10.0)) {
				IT_FAIL("round %d: no ack from pe %d after 10 s (ack word = %" PRIu64 ")", r, peer,
					*(volatile uint64_t *)ack);
				broken = 1;
			}
			if (nbi)
				IT_OK(hoist_quiet(), "round %d", r);
		} else if (receiver) {
			if (!it_wait_u64(flag, (uint64_t)r, 10.0)) {
				IT_FAIL("round %d: flag from pe %d never arrived within 10 s (flag = %" PRIu64 ")", r,
					peer, *(volatile uint64_t *)flag);
				broken = 1;
				break;
			}
			uint64_t pkey = it_hash(0xfe0ce, (uint64_t)peer, (uint64_t)r, sz, 0);
			size_t off = it_check_fill(data, sz, pkey);
			if (off != sz)
				IT_FAIL("round %d: flag seen but data (%zu B, %s) not complete: byte %zu is 0x%02x, "
					"want 0x%02x: fence did not order the puts",
					r, sz, r % 3 == 0 ? "put_nbi" : "put", off, data[off], it_fill_byte(pkey, off));
			uint64_t v = (uint64_t)r;
			IT_OK(hoist_put(peer, ack, &v, sizeof(v)), "round %d ack put", r);
		}
	}
	free(msrc);
	return broken;
}

struct p2op {
	unsigned off, len, kind; /* kind 0 malloc, 1 symmetric source */
	uint64_t key;
};

static void p2_ops(int writer, int round, struct p2op *ops)
{
	struct it_rng rng = {it_hash(0x0de7, (uint64_t)writer, (uint64_t)round, 0, 0)};
	for (int i = 0; i < P2_PUTS; i++) {
		unsigned len;
		switch (it_rng_below(&rng, 4)) {
		case 0: len = 8; break;
		case 1: len = 1 + (unsigned)it_rng_below(&rng, 16); break;
		case 2: len = 17 + (unsigned)it_rng_below(&rng, 500); break;
		default: len = 1 + (unsigned)it_rng_below(&rng, REGION); break;
		}
		/* a third of the puts hit offset 0 exactly (same location) */
		unsigned off = it_rng_below(&rng, 3) == 0 ? 0 : (unsigned)it_rng_below(&rng, REGION - len + 1);
		ops[i] = (struct p2op){off, len, (unsigned)it_rng_below(&rng, 2), it_rng_next(&rng)};
	}
}

static void p2_model(int writer, int round, unsigned char *model, unsigned char init)
{
	struct p2op ops[P2_PUTS];
	p2_ops(writer, round, ops);
	memset(model, init, REGION);
	for (int i = 0; i < P2_PUTS; i++)
		it_fill(model + ops[i].off, ops[i].len, ops[i].key);
}

static void part2(int me, int n, unsigned char *region, unsigned char *ssrc)
{
	int to = (me + 1) % n, from = (me + n - 1) % n;
	unsigned char *msrc = it_xmalloc(REGION);
	unsigned char model[REGION], back[REGION];
	struct p2op ops[P2_PUTS];

	for (int round = 0; round < P2_ROUNDS; round++) {
		unsigned char init = (unsigned char)(round * 31 + 1);
		IT_WHERE("part 2 round %d", round);
		memset(region, init, REGION);
		IT_OK(hoist_barrier(), "part 2 round %d", round);
		p2_ops(me, round, ops);
		for (int i = 0; i < P2_PUTS; i++) {
			unsigned char *src = ops[i].kind ? ssrc : msrc;
			it_fill(src, ops[i].len, ops[i].key);
			IT_OK(hoist_put(to, region + ops[i].off, src, ops[i].len),
			      "part 2 round %d put %d (off %u len %u) to pe %d", round, i, ops[i].off, ops[i].len, to);
			memset(src, 0xdd, ops[i].len); /* reusable on return */
		}
		/* read back at once: must see all of my own earlier puts */
		p2_model(me, round, model, (unsigned char)(round * 31 + 1));
		if (IT_OK(hoist_get(back, to, region, REGION), "part 2 round %d read back", round) == 0) {
			for (unsigned b = 0; b < REGION; b++)
				if (back[b] != model[b]) {
					IT_FAIL("part 2 round %d: read back from pe %d differs at offset %u: got 0x%02x "
						"want 0x%02x (program order of puts / get after put)",
						round, to, b, back[b], model[b]);
					break;
				}
		}
		IT_OK(hoist_barrier(), "part 2 round %d", round);
		p2_model(from, round, model, init);
		for (unsigned b = 0; b < REGION; b++)
			if (region[b] != model[b]) {
				IT_FAIL("part 2 round %d: region written by pe %d differs at offset %u: got 0x%02x "
					"want 0x%02x (last put to a byte must win)",
					round, from, b, region[b], model[b]);
				break;
			}
		IT_OK(hoist_barrier(), "part 2 round %d end", round);
	}
	free(msrc);
}

int main(void)
{
	int me, n;
	it_init("it_fence", &me, &n);
	it_watchdog(50);
	if (n < 2) {
		it_log("needs at least 2 PEs");
		hoist_finalize();
		return IT_SKIP;
	}

	unsigned char *data = it_malloc(MAXDATA);
	uint64_t *flag = it_malloc(64);
	uint64_t *ack = it_malloc(64);
	unsigned char *ssrc = it_malloc(MAXDATA);
	unsigned char *region = it_malloc(REGION);
	*(volatile uint64_t *)flag = 0;
	*(volatile uint64_t *)ack = 0;
	IT_OK(hoist_barrier());

	int broken = part1(me, n, data, flag, ack, ssrc);
	if (broken)
		it_log("part 1 stopped early");
	IT_OK(hoist_barrier(), "after part 1");
	part2(me, n, region, ssrc);
	return it_finish();
}
