/*
 * it_nbi: batches of non-blocking puts and gets completed by hoist_quiet.
 *
 * Each iteration:
 *   A. every PE issues 1000 small put_nbi (1..48 bytes, alignments 0..7,
 *      half from malloc'd, half from symmetric sources) plus a few large
 *      ones to PE (me+1)%n, without touching the sources, then hoist_quiet;
 *      barrier; every PE checks the data and the guard bytes between them.
 *   B. every PE issues the matching get_nbi batch from PE (me+1)%n, whose
 *      area holds what this PE wrote in A, into a non-symmetric buffer (a
 *      symmetric one for some), hoist_quiet, then checks the results and the
 *      guards around them.
 *   C. a mixed batch: put_nbi to one area and get_nbi from another,
 *      interleaved, one quiet, checked after a barrier.
 * More than 1000 descriptors per batch, so the submission ring (1024) and
 * the completion ring wrap and fill.
 */
#include "it_common.h"

#define NSMALL 1000u
#define SLOT 64u
#define SMALL_BYTES (NSMALL * SLOT)
#define NITER 3

static const size_t large_len[] = {65536 + 3, 1u << 20, (3u << 20) + 5};
#define NLARGE (sizeof(large_len) / sizeof(large_len[0]))

static size_t small_len(unsigned i)
{
	return 1 + (i * 7u) % 48u;
}

static unsigned small_align(unsigned i)
{
	return i % 8u;
}

static size_t large_off(unsigned j)
{
	size_t off = SMALL_BYTES + 64;
	for (unsigned k = 0; k < j; k++)
		off += (large_len[k] + 64 + 127) & ~(size_t)63;
	return off + (j % 2 ? 3 : 0);
}

static size_t area_bytes(void)
{
	return large_off(NLARGE) + 128;
}

static uint64_t skey(int writer, unsigned i, int iter, int phase)
{
	return it_hash(0x5111, (uint64_t)writer, i, (uint64_t)iter, (uint64_t)phase);
}

static uint64_t lkey(int writer, unsigned j, int iter, int phase)
{
	return it_hash(0x1a26e, (uint64_t)writer, j, (uint64_t)iter, (uint64_t)phase);
}

/* Check an area laid out as above, written by `writer`, guard byte g.
 * `what` names it in messages. */
static void check_area(const unsigned char *a, int writer, int iter, int phase, unsigned char g,
		       const char *what)
{
	size_t off;
	for (unsigned i = 0; i < NSMALL; i++) {
		const unsigned char *slot = a + (size_t)i * SLOT;
		size_t al = small_align(i), len = small_len(i);
		uint64_t key = skey(writer, i, iter, phase);
		if ((off = it_check_byte(slot, al, g)) != al)
			IT_FAIL("%s: small %u: guard before data changed at +%zu (iter %d, writer pe %d)", what,
				i, off, iter, writer);
		if ((off = it_check_fill(slot + al, len, key)) != len)
			IT_FAIL("%s: small %u (len %zu align %zu): wrong at byte %zu: got 0x%02x want 0x%02x "
				"(iter %d, writer pe %d)",
				what, i, len, al, off, slot[al + off], it_fill_byte(key, off), iter, writer);
		if ((off = it_check_byte(slot + al + len, SLOT - al - len, g)) != SLOT - al - len)
			IT_FAIL("%s: small %u: guard after data changed at +%zu (iter %d, writer pe %d)", what,
				i, off, iter, writer);
	}
	for (unsigned j = 0; j < NLARGE; j++) {
		size_t lo = large_off(j);
		uint64_t key = lkey(writer, j, iter, phase);
		if ((off = it_check_fill(a + lo, large_len[j], key)) != large_len[j])
			IT_FAIL("%s: large %u (len %zu at area offset %zu): wrong at byte %zu: got 0x%02x want "
				"0x%02x (iter %d, writer pe %d)",
				what, j, large_len[j], lo, off, a[lo + off], it_fill_byte(key, off), iter, writer);
		if (a[lo - 1] != g || a[lo + large_len[j]] != g)
			IT_FAIL("%s: large %u: guard byte next to it changed (iter %d, writer pe %d)", what, j,
				iter, writer);
	}
}

int main(void)
{
	int me, n;
	it_init("it_nbi", &me, &n);
	it_watchdog(50);

	int to = (me + 1) % n;
	int from = (me + n - 1) % n;
	size_t ab = area_bytes();

	unsigned char *recv = it_malloc(ab);  /* A: written by `from` */
	unsigned char *recv2 = it_malloc(ab); /* C: written by `from` (mixed batch) */
	unsigned char *ssrc = it_malloc(ab);  /* symmetric sources */
	unsigned char *sdst = it_malloc(ab);  /* symmetric get destinations */
	unsigned char *msrc = it_xmalloc(ab);
	unsigned char *mdst = it_xmalloc(ab);

	for (int iter = 0; iter < NITER; iter++) {
		unsigned char g = (unsigned char)(0x3c + iter * 17 + me);

		IT_WHERE("iter %d: put_nbi batch", iter);
		/* ---- A: put_nbi batch ---- */
		memset(recv, g, ab);
		memset(recv2, g, ab);
		IT_OK(hoist_barrier());
		for (unsigned i = 0; i < NSMALL; i++) {
			size_t lo = (size_t)i * SLOT + small_align(i);
			unsigned char *src = (i % 2) ? ssrc + lo : msrc + lo;
			it_fill(src, small_len(i), skey(me, i, iter, 0));
			IT_OK(hoist_put_nbi(to, recv + lo, src, small_len(i)), "small put_nbi %u to pe %d iter %d",
			      i, to, iter);
		}
		for (unsigned j = 0; j < NLARGE; j++) {
			size_t lo = large_off(j);
			unsigned char *src = (j % 2) ? ssrc + lo : msrc + lo;
			it_fill(src, large_len[j], lkey(me, j, iter, 0));
			IT_OK(hoist_put_nbi(to, recv + lo, src, large_len[j]), "large put_nbi %u (%zu B) to pe %d iter %d",
			      j, large_len[j], to, iter);
		}
		IT_OK(hoist_quiet(), "after put_nbi batch, iter %d", iter);
		IT_OK(hoist_barrier());
		check_area(recv, from, iter, 0, g, "put_nbi batch");

		IT_WHERE("iter %d: get_nbi batch", iter);
		/* ---- B: get_nbi batch from `to`, whose recv holds what I wrote ---- */
		memset(mdst, 0xc3, ab);
		memset(sdst, 0xc3, ab);
		for (unsigned i = 0; i < NSMALL; i++) {
			size_t so = (size_t)i * SLOT; /* whole slot: guards included */
			unsigned char *dst = (i % 3 == 2) ? sdst + so : mdst + so;
			IT_OK(hoist_get_nbi(dst, to, recv + so, SLOT), "small get_nbi %u from pe %d iter %d", i,
			      to, iter);
		}
		for (unsigned j = 0; j < NLARGE; j++) {
			size_t lo = large_off(j) - 1; /* include one guard byte each side */
			unsigned char *dst = (j == 1) ? sdst + lo : mdst + lo;
			IT_OK(hoist_get_nbi(dst, to, recv + lo, large_len[j] + 2),
			      "large get_nbi %u from pe %d iter %d", j, to, iter);
		}
		IT_OK(hoist_quiet(), "after get_nbi batch, iter %d", iter);
		/* assemble the result view: symmetric-destination pieces into mdst */
		for (unsigned i = 0; i < NSMALL; i++)
			if (i % 3 == 2)
				memcpy(mdst + (size_t)i * SLOT, sdst + (size_t)i * SLOT, SLOT);
		memcpy(mdst + large_off(1) - 1, sdst + large_off(1) - 1, large_len[1] + 2);
		/* the fetched ranges include the target's guard bytes */
		unsigned char gto = (unsigned char)(0x3c + iter * 17 + to);
		check_area(mdst, me, iter, 0, gto, "get_nbi batch");
		if (mdst[SMALL_BYTES] != 0xc3 || mdst[ab - 1] != 0xc3)
			IT_FAIL("get_nbi wrote outside of its destinations (iter %d)", iter);

		IT_OK(hoist_barrier());

		IT_WHERE("iter %d: mixed batch", iter);
		/* ---- C: mixed batch: put_nbi to `to`'s recv2, get_nbi of `from`'s recv ---- */
		memset(mdst, 0xc3, ab);
		for (unsigned i = 0; i < NSMALL; i++) {
			size_t lo = (size_t)i * SLOT + small_align(i);
			unsigned char *src = (i % 2) ? msrc + lo : ssrc + lo;
			it_fill(src, small_len(i), skey(me, i, iter, 1));
			IT_OK(hoist_put_nbi(to, recv2 + lo, src, small_len(i)), "mixed put_nbi %u iter %d", i, iter);
			IT_OK(hoist_get_nbi(mdst + (size_t)i * SLOT, from, recv + (size_t)i * SLOT, SLOT),
			      "mixed get_nbi %u from pe %d iter %d", i, from, iter);
		}
		for (unsigned j = 0; j < NLARGE; j++) {
			size_t lo = large_off(j);
			unsigned char *src = (j % 2) ? msrc + lo : ssrc + lo;
			it_fill(src, large_len[j], lkey(me, j, iter, 1));
			IT_OK(hoist_put_nbi(to, recv2 + lo, src, large_len[j]), "mixed large put_nbi %u iter %d", j,
			      iter);
			IT_OK(hoist_get_nbi(mdst + lo - 1, from, recv + lo - 1, large_len[j] + 2),
			      "mixed large get_nbi %u iter %d", j, iter);
		}
		IT_OK(hoist_quiet(), "after mixed batch, iter %d", iter);
		/* `from`'s recv holds what from-1 wrote in phase A */
		int ffrom = (from + n - 1) % n;
		unsigned char gff = (unsigned char)(0x3c + iter * 17 + from);
		check_area(mdst, ffrom, iter, 0, gff, "mixed get_nbi");
		IT_OK(hoist_barrier());
		check_area(recv2, from, iter, 1, g, "mixed put_nbi");
		IT_OK(hoist_barrier());
	}

	/* quiet with nothing outstanding */
	IT_OK(hoist_quiet(), "idle quiet");

	free(msrc);
	free(mdst);
	return it_finish();
}
