/* client/symheap.c: deterministic first-fit symmetric heap allocator. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symheap.h"
#include "unit_util.h"

static uint64_t round64(uint64_t n)
{
	return (n + SYMHEAP_ALIGN - 1) & ~(uint64_t)(SYMHEAP_ALIGN - 1);
}

START_TEST(test_init)
{
	struct symheap h;
	ck_assert_int_eq(symheap_init(&h, 0), -EINVAL);
	ck_assert_int_eq(symheap_init(&h, 63), -EINVAL); /* rounds down to 0 */
	ck_assert_int_eq(symheap_init(&h, 1000), 0);
	ck_assert_uint_eq(h.size, 960); /* rounded down to the alignment */
	ck_assert_uint_eq(h.used, 0);
	ck_assert_int_eq(symheap_alloc(&h, 960), 0);
	ck_assert_int_eq(symheap_alloc(&h, 1), -ENOMEM);
	symheap_fini(&h);
}
END_TEST

START_TEST(test_alignment)
{
	struct symheap h;
	ck_assert_int_eq(symheap_init(&h, 1 << 20), 0);
	uint64_t sizes[] = {1, 63, 64, 65, 100, 127, 128, 129, 1000, 4095, 7};
	uint64_t expect_off = 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int64_t off = symheap_alloc(&h, sizes[i]);
		ck_assert_int_ge(off, 0);
		ck_assert_uint_eq((uint64_t)off % 64, 0);
		/* Fresh heap, no frees: blocks are laid out back to back. */
		ck_assert_uint_eq((uint64_t)off, expect_off);
		ck_assert_uint_eq(symheap_block_size(&h, (uint64_t)off), round64(sizes[i]));
		expect_off += round64(sizes[i]);
		ck_assert_uint_eq(h.used, expect_off);
	}
	ck_assert_int_eq(symheap_alloc(&h, 0), -EINVAL);
	symheap_fini(&h);
}
END_TEST

START_TEST(test_determinism)
{
	struct symheap a, b;
	ck_assert_int_eq(symheap_init(&a, 1 << 20), 0);
	ck_assert_int_eq(symheap_init(&b, 1 << 20), 0);
	uint64_t live_a[64] = {0}, live_b[64] = {0};
	int used[64] = {0};
	uint64_t seed = 42;
	for (int step = 0; step < 5000; step++) {
		uint64_t r = rng_next(&seed);
		unsigned slot = (unsigned)(r % 64);
		if (used[slot]) {
			CHK_EQ(symheap_free(&a, live_a[slot]), 0);
			CHK_EQ(symheap_free(&b, live_b[slot]), 0);
			used[slot] = 0;
		} else {
			uint64_t sz = 1 + (r >> 20) % 40000;
			int64_t oa = symheap_alloc(&a, sz);
			int64_t ob = symheap_alloc(&b, sz);
			CHK_EQ(oa, ob);
			if (oa >= 0) {
				live_a[slot] = (uint64_t)oa;
				live_b[slot] = (uint64_t)ob;
				used[slot] = 1;
			}
		}
		CHK_EQ(a.used, b.used);
	}
	symheap_fini(&a);
	symheap_fini(&b);
}
END_TEST

START_TEST(test_first_fit_reuse)
{
	struct symheap h;
	ck_assert_int_eq(symheap_init(&h, 64 * 100), 0);
	int64_t a = symheap_alloc(&h, 64);
	int64_t b = symheap_alloc(&h, 256);
	int64_t c = symheap_alloc(&h, 64);
	int64_t d = symheap_alloc(&h, 128);
	int64_t e = symheap_alloc(&h, 64);
	ck_assert_int_eq(a, 0);
	ck_assert_int_eq(b, 64);
	ck_assert_int_eq(c, 320);
	ck_assert_int_eq(d, 384);
	ck_assert_int_eq(e, 512);
	/* holes: [64,320) and [384,512) */
	ck_assert_int_eq(symheap_free(&h, (uint64_t)b), 0);
	ck_assert_int_eq(symheap_free(&h, (uint64_t)d), 0);
	ck_assert_uint_eq(symheap_block_size(&h, (uint64_t)b), 0);
	/* First fit: the lowest hole that fits, even if a later one fits
	 * exactly, and the hole is split from its start. */
	ck_assert_int_eq(symheap_alloc(&h, 100), 64);  /* 128 of the 256 hole */
	ck_assert_int_eq(symheap_alloc(&h, 128), 192); /* rest of that hole */
	ck_assert_int_eq(symheap_alloc(&h, 1), 384);   /* second hole */
	ck_assert_int_eq(symheap_alloc(&h, 65), 576);  /* 64 left there: too small, goes to the tail */
	ck_assert_int_eq(symheap_alloc(&h, 64), 448);  /* fits the 64 left */
	symheap_fini(&h);
}
END_TEST

START_TEST(test_coalescing)
{
	struct symheap h;
	ck_assert_int_eq(symheap_init(&h, 4096), 0);
	int64_t a = symheap_alloc(&h, 64);
	int64_t b = symheap_alloc(&h, 128);
	int64_t c = symheap_alloc(&h, 256);
	int64_t d = symheap_alloc(&h, 64); /* keeps c's hole from touching the tail */
	ck_assert_int_eq(a, 0);
	ck_assert_int_eq(d, 448);

	/* merge with next: free b then a */
	ck_assert_int_eq(symheap_free(&h, (uint64_t)b), 0);
	ck_assert_int_eq(symheap_free(&h, (uint64_t)a), 0);
	ck_assert_int_eq(symheap_alloc(&h, 192), 0); /* exactly a+b */
	ck_assert_int_eq(symheap_free(&h, 0), 0);

	/* merge with previous: a+b free, now free c */
	ck_assert_int_eq(symheap_free(&h, (uint64_t)c), 0);
	ck_assert_int_eq(symheap_alloc(&h, 448), 0); /* a+b+c */
	ck_assert_int_eq(symheap_free(&h, 0), 0);

	/* merge both sides: three blocks, free outer two then the middle */
	a = symheap_alloc(&h, 64);
	b = symheap_alloc(&h, 128);
	c = symheap_alloc(&h, 256);
	ck_assert_int_eq(a, 0);
	ck_assert_int_eq(b, 64);
	ck_assert_int_eq(c, 192);
	ck_assert_int_eq(symheap_free(&h, (uint64_t)a), 0);
	ck_assert_int_eq(symheap_free(&h, (uint64_t)c), 0);
	/* holes [0,64) and [192,448): 448 goes past d */
	ck_assert_int_eq(symheap_alloc(&h, 448), 512);
	ck_assert_int_eq(symheap_free(&h, (uint64_t)b), 0);
	ck_assert_int_eq(symheap_alloc(&h, 448), 0);
	symheap_fini(&h);
}
END_TEST

START_TEST(test_coalescing_both_sides)
{
	struct symheap h;
	ck_assert_int_eq(symheap_init(&h, 4096), 0);
	int64_t a = symheap_alloc(&h, 64);
	int64_t b = symheap_alloc(&h, 128);
	int64_t c = symheap_alloc(&h, 256);
	int64_t d = symheap_alloc(&h, 64);
	int64_t rest = symheap_alloc(&h, 4096 - 512);
	ck_assert_int_eq(d, 448);
	ck_assert_int_eq(rest, 512);
	ck_assert_int_eq(symheap_alloc(&h, 1), -ENOMEM);
	ck_assert_int_eq(symheap_free(&h, (uint64_t)a), 0);
	ck_assert_int_eq(symheap_free(&h, (uint64_t)c), 0);
	/* Two separate holes of 64 and 256: 448 does not fit yet. */
	ck_assert_int_eq(symheap_alloc(&h, 448), -ENOMEM);
	ck_assert_int_eq(symheap_free(&h, (uint64_t)b), 0); /* joins both */
	ck_assert_int_eq(symheap_alloc(&h, 448), 0);
	ck_assert_int_eq(symheap_free(&h, 0), 0);
	ck_assert_int_eq(symheap_free(&h, (uint64_t)d), 0);
	ck_assert_int_eq(symheap_free(&h, (uint64_t)rest), 0);
	ck_assert_uint_eq(h.used, 0);
	/* Everything merged back into one block. */
	ck_assert_int_eq(symheap_alloc(&h, 4096), 0);
	ck_assert_uint_eq(h.used, 4096);
	symheap_fini(&h);
}
END_TEST

START_TEST(test_exhaustion)
{
	struct symheap h;
	ck_assert_int_eq(symheap_init(&h, 64 * 64), 0);
	for (int i = 0; i < 64; i++)
		ck_assert_int_eq(symheap_alloc(&h, 64), 64 * i);
	ck_assert_uint_eq(h.used, h.size);
	ck_assert_int_eq(symheap_alloc(&h, 1), -ENOMEM);
	ck_assert_int_eq(symheap_free(&h, 64 * 10), 0);
	ck_assert_int_eq(symheap_alloc(&h, 65), -ENOMEM); /* hole is 64 */
	ck_assert_int_eq(symheap_alloc(&h, 64), 640);
	symheap_fini(&h);

	ck_assert_int_eq(symheap_init(&h, 1 << 20), 0);
	ck_assert_int_eq(symheap_alloc(&h, (1 << 20) + 1), -ENOMEM);
	ck_assert_int_eq(symheap_alloc(&h, UINT64_MAX), -ENOMEM);
	ck_assert_int_eq(symheap_alloc(&h, UINT64_MAX - 62), -ENOMEM); /* would round to 0 */
	ck_assert_int_eq(symheap_alloc(&h, (uint64_t)INT64_MAX + 1), -ENOMEM);
	ck_assert_uint_eq(h.used, 0);
	ck_assert_int_eq(symheap_alloc(&h, 1 << 20), 0);
	symheap_fini(&h);
}
END_TEST

START_TEST(test_bad_free)
{
	struct symheap h;
	ck_assert_int_eq(symheap_init(&h, 4096), 0);
	int64_t a = symheap_alloc(&h, 128);
	int64_t b = symheap_alloc(&h, 128);
	ck_assert_int_eq(a, 0);
	ck_assert_int_eq(b, 128);
	ck_assert_int_eq(symheap_free(&h, 1), -EINVAL);    /* inside a */
	ck_assert_int_eq(symheap_free(&h, 64), -EINVAL);   /* aligned, inside a */
	ck_assert_int_eq(symheap_free(&h, 256), -EINVAL);  /* start of the free tail */
	ck_assert_int_eq(symheap_free(&h, 4096), -EINVAL); /* end of heap */
	ck_assert_int_eq(symheap_free(&h, UINT64_MAX), -EINVAL);
	ck_assert_uint_eq(h.used, 256);
	ck_assert_int_eq(symheap_free(&h, 0), 0);
	ck_assert_int_eq(symheap_free(&h, 0), -EINVAL); /* double free */
	ck_assert_int_eq(symheap_free(&h, 128), 0);
	ck_assert_int_eq(symheap_free(&h, 128), -EINVAL);
	ck_assert_uint_eq(h.used, 0);
	ck_assert_uint_eq(symheap_block_size(&h, 0), 0);
	symheap_fini(&h);
}
END_TEST

/* Random alloc/free against a model that knows first fit exactly. */
struct live {
	uint64_t off, len; /* len rounded */
};

static int cmp_live(const void *x, const void *y)
{
	const struct live *a = x, *b = y;
	return a->off < b->off ? -1 : a->off > b->off;
}

/* First-fit answer of the model: lowest gap between live blocks that
 * holds len, or -1. */
static int64_t model_first_fit(struct live *lv, size_t n, uint64_t size, uint64_t len)
{
	qsort(lv, n, sizeof(*lv), cmp_live);
	uint64_t pos = 0;
	for (size_t i = 0; i <= n; i++) {
		uint64_t end = i < n ? lv[i].off : size;
		if (end - pos >= len)
			return (int64_t)pos;
		if (i < n)
			pos = lv[i].off + lv[i].len;
	}
	return -1;
}

START_TEST(test_stress_model)
{
	const uint64_t size = 1 << 18;
	struct symheap h;
	ck_assert_int_eq(symheap_init(&h, size), 0);
	enum { MAXLIVE = 256 };
	struct live lv[MAXLIVE];
	size_t n = 0;
	uint64_t seed = 0x1234567;
	uint64_t allocs = 0, fails = 0;
	for (int step = 0; step < 40000; step++) {
		uint64_t r = rng_next(&seed);
		int do_alloc = n == 0 || (n < MAXLIVE && (r & 3) != 0 && (r & 0x300) != 0);
		if (do_alloc) {
			uint64_t sz = (r >> 16) % 4 == 0 ? 1 + (r >> 24) % 20000 : 1 + (r >> 24) % 700;
			uint64_t len = round64(sz);
			int64_t want = model_first_fit(lv, n, size, len);
			int64_t off = symheap_alloc(&h, sz);
			if (want < 0) {
				CHK_EQ(off, -ENOMEM);
				fails++;
				continue;
			}
			CHK_EQ(off, want);
			CHK_EQ((uint64_t)off % SYMHEAP_ALIGN, 0);
			CHK_LE((uint64_t)off + len, size);
			for (size_t i = 0; i < n; i++)
				CHK(lv[i].off + lv[i].len <= (uint64_t)off ||
					  (uint64_t)off + len <= lv[i].off);
			CHK_EQ(symheap_block_size(&h, (uint64_t)off), len);
			lv[n].off = (uint64_t)off;
			lv[n].len = len;
			n++;
			allocs++;
		} else {
			size_t i = (size_t)((r >> 8) % n);
			CHK_EQ(symheap_free(&h, lv[i].off), 0);
			CHK_EQ(symheap_block_size(&h, lv[i].off), 0);
			lv[i] = lv[--n];
		}
		uint64_t used = 0;
		for (size_t i = 0; i < n; i++)
			used += lv[i].len;
		CHK_EQ(h.used, used);
	}
	/* The run must have exercised both outcomes. */
	ck_assert_uint_gt(allocs, 1000);
	ck_assert_uint_gt(fails, 10);
	while (n)
		CHK_EQ(symheap_free(&h, lv[--n].off), 0);
	CHK_EQ(h.used, 0);
	CHK_EQ(symheap_alloc(&h, size), 0);
	symheap_fini(&h);
}
END_TEST

static Suite *symheap_suite(void)
{
	Suite *s = suite_create("symheap");
	TCase *tc = tcase_create("basic");
	tcase_add_test(tc, test_init);
	tcase_add_test(tc, test_alignment);
	tcase_add_test(tc, test_determinism);
	tcase_add_test(tc, test_first_fit_reuse);
	tcase_add_test(tc, test_coalescing);
	tcase_add_test(tc, test_coalescing_both_sides);
	tcase_add_test(tc, test_exhaustion);
	tcase_add_test(tc, test_bad_free);
	suite_add_tcase(s, tc);
	tc = tcase_create("stress");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_stress_model);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(symheap_suite());
}
