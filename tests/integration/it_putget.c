/*
 * it_putget: blocking put and get of many sizes and alignments between every
 * pair of PEs (including a PE and itself).
 *
 * One round = (size, source alignment, destination alignment, local buffer
 * kind). Every PE owns, in its symmetric `recv` area, one slot per source
 * PE. In a round:
 *   1. each PE fills its own slots with a guard byte;      barrier
 *   2. each PE puts `size` bytes into slot[me] of every PE at the given
 *      destination alignment, from a local buffer (malloc'd or symmetric)
 *      at the given source alignment; the pattern depends on (src PE,
 *      dst PE, size, alignments, round) so misrouted data is caught, and the
 *      source buffer is overwritten right after each put returns;  barrier
 *   3. each PE checks every slot of its own (data plus guard bytes around
 *      it), then gets from every PE t the slot written by PE (me+t)%n and
 *      compares it, and checks the guard bytes around its local buffer;
 *      barrier
 */
#include "it_common.h"

#define MAXSZ (4u << 20)
#define SLOT_PAD 192u /* 64 front guard + up to 63 alignment + >= 64 back guard */

enum kind { K_MALLOC = 0, K_SYM = 1 };

struct round {
	size_t size;
	unsigned soff, doff;
	enum kind kind;
};

static size_t slot_stride(size_t size)
{
	return (size + SLOT_PAD + 63) & ~(size_t)63;
}

static uint64_t key_of(int src, int dst, const struct round *r, unsigned idx)
{
	return it_hash((uint64_t)src, (uint64_t)dst, r->size, r->soff * 131u + r->doff,
		       (uint64_t)r->kind * 1000003u + idx);
}

static unsigned char guard_of(unsigned idx, int who)
{
	return (unsigned char)(0x5a + idx * 7u + (unsigned)who * 13u);
}

int main(void)
{
	int me, n;
	it_init("it_putget", &me, &n);
	it_watchdog(50);

	static const size_t sizes[] = {0, 1, 7, 8, 15, 16, 17, 63, 64, 65, 4095, 4096, 65537};
	static const unsigned pairs[][2] = {{0, 0}, {1, 0}, {0, 1}, {2, 3}, {3, 2}, {4, 5}, {5, 7},
					    {6, 6}, {7, 4}, {63, 0}, {0, 63}, {63, 63}, {7, 63}};
	static const struct round large[] = {
		{1u << 20, 0, 0, K_SYM},   {1u << 20, 3, 5, K_MALLOC}, {1u << 20, 63, 1, K_SYM},
		{1u << 20, 1, 63, K_MALLOC}, {MAXSZ, 0, 0, K_MALLOC},    {MAXSZ, 5, 3, K_SYM},
		{MAXSZ, 63, 7, K_MALLOC},
	};
	size_t nsizes = sizeof(sizes) / sizeof(sizes[0]);
	size_t npairs = sizeof(pairs) / sizeof(pairs[0]);
	size_t nlarge = sizeof(large) / sizeof(large[0]);

	size_t nrounds = nsizes * npairs + nlarge;
	struct round *rounds = it_xmalloc(nrounds * sizeof(*rounds));
	size_t k = 0;
	for (size_t s = 0; s < nsizes; s++)
		for (size_t p = 0; p < npairs; p++)
			rounds[k++] = (struct round){sizes[s], pairs[p][0], pairs[p][1],
						     (enum kind)((s + p) % 2)};
	for (size_t l = 0; l < nlarge; l++)
		rounds[k++] = large[l];

	size_t lbytes = MAXSZ + SLOT_PAD;
	unsigned char *recv = it_malloc((size_t)n * slot_stride(MAXSZ));
	unsigned char *lsym = it_malloc(lbytes);
	unsigned char *lmal = aligned_alloc(64, lbytes);
	if (!lmal) {
		IT_FAIL("aligned_alloc failed");
		return 1;
	}
	if (hoist_is_symmetric(lmal, lbytes))
		IT_FAIL("hoist_is_symmetric(malloc buffer) != 0");

	double t0 = it_now();
	for (unsigned idx = 0; idx < nrounds; idx++) {
		const struct round *r = &rounds[idx];
		size_t stride = slot_stride(r->size);
		unsigned char g = guard_of(idx, me);
		unsigned char *lbase = r->kind == K_SYM ? lsym : lmal;
		unsigned char *lp = lbase + 64 + r->soff;
		const char *kname = r->kind == K_SYM ? "symmetric" : "malloc";

		IT_WHERE("round %u: size %zu src %s+%u dst +%u", idx, r->size, kname, r->soff, r->doff);
		/* 1: guard-fill own slots */
		memset(recv, g, (size_t)n * stride);
		IT_OK(hoist_barrier(), "round %u", idx);

		/* 2: put to every PE (start with a different one on each PE) */
		for (int i = 0; i < n; i++) {
			int t = (me + i) % n;
			uint64_t key = key_of(me, t, r, idx);
			it_fill(lp, r->size, key);
			unsigned char *dst = recv + (size_t)me * stride + 64 + r->doff;
			IT_OK(hoist_put(t, dst, lp, r->size),
			      "put to pe %d size %zu src %s+%u dst slot %d +%u round %u", t, r->size, kname,
			      r->soff, me, r->doff, idx);
			/* the source is reusable on return: clobber it now */
			memset(lp, 0xee, r->size);
		}
		IT_OK(hoist_barrier(), "round %u", idx);

		/* 3a: verify what everybody put into me */
		unsigned char eg = guard_of(idx, me);
		for (int s = 0; s < n; s++) {
			unsigned char *base = recv + (size_t)s * stride;
			unsigned char *d = base + 64 + r->doff;
			size_t off;
			uint64_t key = key_of(s, me, r, idx);
			if ((off = it_check_byte(base, 64 + r->doff, eg)) != 64 + r->doff)
				IT_FAIL("slot of src pe %d: guard before data overwritten at byte %zu "
					"(data starts at %u) size %zu src %s+%u dst +%u round %u",
					s, off, 64 + r->doff, r->size, kname, r->soff, r->doff, idx);
			if ((off = it_check_fill(d, r->size, key)) != r->size)
				IT_FAIL("data from pe %d wrong at offset %zu of %zu (got 0x%02x want 0x%02x) "
					"src %s+%u dst +%u round %u",
					s, off, r->size, d[off], it_fill_byte(key, off), kname, r->soff, r->doff,
					idx);
			size_t tail = stride - 64 - r->doff - r->size;
			if ((off = it_check_byte(d + r->size, tail, eg)) != tail)
				IT_FAIL("slot of src pe %d: guard after data overwritten at byte %zu past the end "
					"size %zu src %s+%u dst +%u round %u",
					s, off, r->size, kname, r->soff, r->doff, idx);
		}

		IT_WHERE("round %u: gets of size %zu dst %s+%u src +%u", idx, r->size, kname, r->soff, r->doff);
		/* 3b: get from every PE t the slot written by PE (me+t)%n */
		unsigned char lg = (unsigned char)(g ^ 0xff);
		size_t lspan = 64 + r->soff + r->size + 64;
		for (int i = 0; i < n; i++) {
			int t = (me + i) % n;
			int s = (me + t) % n;
			unsigned char *src = recv + (size_t)s * stride + 64 + r->doff;
			uint64_t key = key_of(s, t, r, idx);
			memset(lbase, lg, lspan);
			if (IT_OK(hoist_get(lp, t, src, r->size),
				  "get from pe %d slot %d size %zu dst %s+%u src +%u round %u", t, s, r->size,
				  kname, r->soff, r->doff, idx) != 0)
				continue;
			size_t off;
			if ((off = it_check_fill(lp, r->size, key)) != r->size)
				IT_FAIL("get from pe %d (slot of pe %d) wrong at offset %zu of %zu (got 0x%02x "
					"want 0x%02x) dst %s+%u src +%u round %u",
					t, s, off, r->size, lp[off], it_fill_byte(key, off), kname, r->soff, r->doff,
					idx);
			if ((off = it_check_byte(lbase, 64 + r->soff, lg)) != 64 + r->soff)
				IT_FAIL("get from pe %d wrote before the local buffer (byte %zu of %u) size %zu "
					"dst %s+%u round %u",
					t, off, 64 + r->soff, r->size, kname, r->soff, idx);
			if ((off = it_check_byte(lp + r->size, 64, lg)) != 64)
				IT_FAIL("get from pe %d wrote past the local buffer (byte %zu after the end) "
					"size %zu dst %s+%u round %u",
					t, off, r->size, kname, r->soff, idx);
		}
		IT_OK(hoist_barrier(), "round %u", idx);
	}
	if (me == 0)
		it_log("%zu rounds on %d PEs in %.2f s", nrounds, n, it_now() - t0);

	hoist_free(lsym);
	hoist_free(recv);
	free(lmal);
	free(rounds);
	return it_finish();
}
