/*
 * mn_order: overlapping accesses of one PE to another node's PE come out
 * in program order although the daemons' connections do not keep it
 * (run with tcp_lanes > 1: requests spread over several connections, big
 * ones striped). The conflict stage orders them; without it this fails.
 *
 * The first half of the ranks write, the second half are the targets:
 * rank r < n/2 writes to rank r + n/2 (with hoistrun --nodes 2, which
 * places rank i on node i*2/n, on the other node). Every round, in program
 * order and without
 * a fence or quiet in between (blocking hoist_put returns once its source
 * is safe; the put completes later):
 *
 *  1. a big put (BIG bytes, striped over the lanes) of the round's
 *     pattern into the target's region;
 *  2. small puts (8 bytes) of the round's tag into words inside every
 *     chunk of that region (write after write);
 *  3. a blocking get of each of those words, which must give the tag
 *     (read after write), and of a word of the big put that no small put
 *     overwrote, which must give the pattern;
 *  4. a get_nbi of a whole chunk into a local buffer and, right after it,
 *     a small put over a word of that chunk (write after read): after
 *     quiet the local copy holds the value from before the put.
 *
 * At the end (barrier) the target checks its region: the last round's
 * pattern with the small puts' tags in place, byte for byte.
 */
#include "it_common.h"

#define BIG (1u << 20)
#define ROUNDS 150
#define NWORDS 8 /* small puts per round, spread over the region */

static size_t word_off(unsigned k)
{
	/* one word in every eighth of the region, not 8-byte aligned to the
	 * chunk boundaries, away from the checked pattern word */
	return (size_t)k * (BIG / NWORDS) + 4096 + 8 * k;
}

static uint64_t tag_of(int me, unsigned r, unsigned k)
{
	return it_hash(0x0d3e, (uint64_t)me, r, k, 0) | 1;
}

/* The expected byte i of the region after round r of writer w. */
static unsigned char expect_byte(int w, unsigned r, size_t i)
{
	for (unsigned k = 0; k < NWORDS; k++) {
		size_t o = word_off(k);
		if (i >= o && i < o + 8) {
			uint64_t t = tag_of(w, r, k);
			return ((const unsigned char *)&t)[i - o];
		}
	}
	return it_fill_byte(it_hash(0x0d3e, (uint64_t)w, r, 0xb16, 0), i);
}

int main(void)
{
	int me, n;
	it_init("mn_order", &me, &n);
	it_watchdog(60);
	if (n < 2 || n % 2) {
		IT_FAIL("needs an even number of PEs, got %d", n);
		return it_finish();
	}
	unsigned char *region = hoist_malloc(BIG);
	unsigned char *src = it_xmalloc(BIG);
	unsigned char *copy = it_xmalloc(BIG / NWORDS);
	if (!region) {
		IT_FAIL("hoist_malloc(%u) failed", BIG);
		return it_finish();
	}
	memset(region, 0, BIG);
	IT_OK(hoist_barrier(), "after setup");
	int writer = me < n / 2;
	int peer = writer ? me + n / 2 : me - n / 2;
	unsigned bad_raw = 0, bad_war = 0, bad_pattern = 0;
	if (writer) {
		for (unsigned r = 1; r <= ROUNDS; r++) {
			IT_WHERE("round %u", r);
			uint64_t key = it_hash(0x0d3e, (uint64_t)me, r, 0xb16, 0);
			it_fill(src, BIG, key);
			IT_OK(hoist_put(peer, region, src, BIG), "round %u big put", r);
			for (unsigned k = 0; k < NWORDS; k++) {
				uint64_t t = tag_of(me, r, k);
				IT_OK(hoist_put(peer, region + word_off(k), &t, 8), "round %u word %u", r, k);
			}
			for (unsigned k = 0; k < NWORDS; k++) {
				uint64_t got = 0;
				IT_OK(hoist_get(&got, peer, region + word_off(k), 8), "round %u get %u", r, k);
				if (got != tag_of(me, r, k) && bad_raw++ < 5)
					IT_FAIL("round %u: word %u read back 0x%016" PRIx64 ", want the small "
						"put's 0x%016" PRIx64 " (read after write out of order)",
						r, k, got, tag_of(me, r, k));
			}
			size_t po = BIG - 64; /* only the big put wrote it */
			uint64_t pat = 0, want;
			IT_OK(hoist_get(&pat, peer, region + po, 8), "round %u pattern get", r);
			memcpy(&want, src + po, 8);
			if (pat != want && bad_pattern++ < 5)
				IT_FAIL("round %u: the big put's last word reads 0x%016" PRIx64 ", want "
					"0x%016" PRIx64, r, pat, want);
			/* write after read: the get must see the value before the put */
			unsigned k = r % NWORDS;
			size_t co = (size_t)k * (BIG / NWORDS);
			IT_OK(hoist_get_nbi(copy, peer, region + co, BIG / NWORDS), "round %u get_nbi", r);
			uint64_t t2 = ~tag_of(me, r, k);
			IT_OK(hoist_put(peer, region + word_off(k), &t2, 8), "round %u overwrite", r);
			IT_OK(hoist_quiet(), "round %u", r);
			uint64_t seen;
			memcpy(&seen, copy + (word_off(k) - co), 8);
			if (seen != tag_of(me, r, k) && bad_war++ < 5)
				IT_FAIL("round %u: a get issued before a put over word %u read 0x%016" PRIx64
					", want 0x%016" PRIx64 " (write after read out of order)",
					r, k, seen, tag_of(me, r, k));
			/* put it back so that the final image is the round's */
			uint64_t t = tag_of(me, r, k);
			IT_OK(hoist_put(peer, region + word_off(k), &t, 8), "round %u restore", r);
		}
		it_log("%u rounds of %u KiB put + %u overlapping puts/gets: %u RAW, %u WAR, %u "
		       "pattern errors", ROUNDS, BIG >> 10, NWORDS, bad_raw, bad_war, bad_pattern);
	}
	IT_OK(hoist_barrier(), "after the rounds");
	if (!writer) {
		IT_WHERE("final check");
		for (size_t i = 0; i < BIG; i++) {
			unsigned char w = expect_byte(peer, ROUNDS, i);
			if (region[i] != w) {
				IT_FAIL("final image: byte %zu is 0x%02x, want 0x%02x (write after write out "
					"of order)", i, region[i], w);
				break;
			}
		}
	}
	IT_OK(hoist_barrier(), "before the end");
	free(src);
	free(copy);
	return it_finish();
}
