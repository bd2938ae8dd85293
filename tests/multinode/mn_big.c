/*
 * mn_big: 8 MiB puts and gets between PEs (run over several daemons, so
 * most pairs cross nodes), from and into both symmetric and malloc'd
 * memory, every byte verified, guard bytes around every buffer.
 *
 * Round r (one of `rounds` below): every PE puts `size` bytes into its own
 * slot of every other PE's symmetric `recv` area; barrier; every PE checks
 * all slots it received (data and guards), then gets the slot written by
 * PE (me+t)%n from every other PE t into a local buffer of the round's
 * kind and checks it; barrier. The pattern depends on (src, dst, round).
 *
 * Needs a heap of about (n + 1) * 8 MiB; run with n <= 4 and the default
 * 64 MiB heap, or set HOIST_HEAP_SIZE.
 */
#include "it_common.h"

#define BIG (8u << 20)
#define PAD 192u /* 64 front guard + up to 63 misalignment + >= 64 back guard */

enum kind { K_MALLOC = 0, K_SYM = 1 };

struct round {
	size_t size;
	unsigned soff, doff;
	enum kind kind;
};

static const struct round rounds[] = {
	{BIG, 0, 0, K_SYM},
	{BIG, 0, 0, K_MALLOC},
	{BIG, 5, 3, K_SYM},
	{BIG, 63, 1, K_MALLOC},
	{BIG - 1, 1, 63, K_SYM},
	{BIG - 7, 7, 0, K_MALLOC},
};

static size_t stride_of(void)
{
	return (BIG + PAD + 63) & ~(size_t)63;
}

static uint64_t key_of(int src, int dst, unsigned idx)
{
	return it_hash(0xb16, (uint64_t)src, (uint64_t)dst, idx, rounds[idx].size);
}

static unsigned char guard_of(unsigned idx, int who)
{
	return (unsigned char)(0xa5 + idx * 11u + (unsigned)who * 17u);
}

int main(void)
{
	int me, n;
	it_init("mn_big", &me, &n);
	it_watchdog(100);
	if (n < 2) {
		IT_FAIL("needs at least 2 PEs, got %d", n);
		return it_finish();
	}
	size_t stride = stride_of();
	unsigned char *recv = it_malloc((size_t)n * stride);
	unsigned char *lsym = it_malloc(stride);
	unsigned char *lmal = aligned_alloc(64, stride);
	if (!lmal) {
		IT_FAIL("aligned_alloc(%zu) failed", stride);
		return 1;
	}
	size_t nrounds = sizeof(rounds) / sizeof(rounds[0]);
	double t0 = it_now();
	uint64_t moved = 0;

	for (unsigned idx = 0; idx < nrounds; idx++) {
		const struct round *r = &rounds[idx];
		const char *kname = r->kind == K_SYM ? "symmetric" : "malloc";
		unsigned char *lbase = r->kind == K_SYM ? lsym : lmal;
		unsigned char *lp = lbase + 64 + r->soff;
		unsigned char g = guard_of(idx, me);

		IT_WHERE("round %u: puts of %zu bytes from %s+%u", idx, r->size, kname, r->soff);
		memset(recv, g, (size_t)n * stride);
		IT_OK(hoist_barrier(), "round %u start", idx);

		for (int i = 1; i < n; i++) {
			int t = (me + i) % n;
			it_fill(lp, r->size, key_of(me, t, idx));
			unsigned char *dst = recv + (size_t)me * stride + 64 + r->doff;
			if (IT_OK(hoist_put(t, dst, lp, r->size), "put of %zu bytes to pe %d from %s+%u dst +%u round %u",
				  r->size, t, kname, r->soff, r->doff, idx) == 0)
				moved += r->size;
			memset(lp, 0xee, r->size); /* reusable on return */
		}
		IT_OK(hoist_barrier(), "round %u after puts", idx);

		for (int s = 0; s < n; s++) {
			if (s == me)
				continue;
			unsigned char *base = recv + (size_t)s * stride;
			unsigned char *d = base + 64 + r->doff;
			size_t off;
			uint64_t key = key_of(s, me, idx);
			if ((off = it_check_byte(base, 64 + r->doff, g)) != 64 + r->doff)
				IT_FAIL("round %u: guard before the data from pe %d overwritten at byte %zu", idx, s, off);
			if ((off = it_check_fill(d, r->size, key)) != r->size)
				IT_FAIL("round %u: data put by pe %d wrong at offset %zu of %zu (got 0x%02x want 0x%02x) "
					"src %s+%u dst +%u",
					idx, s, off, r->size, d[off], it_fill_byte(key, off), kname, r->soff, r->doff);
			size_t tail = stride - 64 - r->doff - r->size;
			if ((off = it_check_byte(d + r->size, tail, g)) != tail)
				IT_FAIL("round %u: guard after the data from pe %d overwritten at byte %zu past the end",
					idx, s, off);
		}

		IT_WHERE("round %u: gets of %zu bytes into %s+%u", idx, r->size, kname, r->soff);
		unsigned char lg = (unsigned char)(g ^ 0xff);
		for (int i = 1; i < n; i++) {
			int t = (me + i) % n;
			int s = (me + t) % n; /* t holds the slot written by s (s != t as me != 0 mod n) */
			if (s == t)
				s = (s + 1) % n;
			/* slot s on t was written by s unless s == t (own slot: guard only) */
			unsigned char *src = recv + (size_t)s * stride + 64 + r->doff;
			memset(lbase, lg, 64 + r->soff + r->size + 64);
			if (IT_OK(hoist_get(lp, t, src, r->size), "get of %zu bytes from pe %d (slot %d) into %s+%u round %u",
				  r->size, t, s, kname, r->soff, idx) != 0)
				continue;
			moved += r->size;
			size_t off;
			uint64_t key = key_of(s, t, idx);
			if ((off = it_check_fill(lp, r->size, key)) != r->size)
				IT_FAIL("round %u: get from pe %d (slot %d) wrong at offset %zu of %zu (got 0x%02x want "
					"0x%02x) into %s+%u",
					idx, t, s, off, r->size, lp[off], it_fill_byte(key, off), kname, r->soff);
			if ((off = it_check_byte(lbase, 64 + r->soff, lg)) != 64 + r->soff)
				IT_FAIL("round %u: get from pe %d wrote before the local buffer (byte %zu)", idx, t, off);
			if ((off = it_check_byte(lp + r->size, 64, lg)) != 64)
				IT_FAIL("round %u: get from pe %d wrote past the local buffer (byte %zu)", idx, t, off);
		}
		IT_OK(hoist_barrier(), "round %u end", idx);
	}
	it_log("%zu rounds, %.1f MiB moved by this PE in %.2f s", nrounds, (double)moved / (1 << 20),
	       it_now() - t0);
	hoist_free(lsym);
	hoist_free(recv);
	free(lmal);
	return it_finish();
}
