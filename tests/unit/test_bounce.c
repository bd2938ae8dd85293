/* daemon/transport/verbs/bounce.c: the bounce ring's allocator (a verbs connection's
 * bounce buffer), linked on its own. */
#include <check.h>
#include <stdint.h>

#include "bounce.h"
#include "unit_util.h"

struct ring {
	uint64_t size, head, tail;
};

static int64_t ring_alloc(struct ring *r, uint64_t len, uint64_t *end)
{
	return bounce_ring_alloc(r->size, &r->head, &r->tail, len, end);
}

/* A ring that is empty (everything allocated has completed) takes any
 * request up to its size, wherever the previous allocations ended. */
START_TEST(test_bounce_empty_wraps)
{
	struct ring cn = {.size = 4096};
	uint64_t end = 0;
	ck_assert_int_eq(ring_alloc(&cn, 1024, &end), 0);
	cn.head = end; /* it completed */
	int64_t off = ring_alloc(&cn, 3584, &end);
	ck_assert_int_eq(off, 0); /* the end 1024..4096 is skipped */
	ck_assert_uint_eq(end - cn.head, 3584);
	ck_assert_int_eq(ring_alloc(&cn, 4097, &end), -1);
}
END_TEST

/* Against a model: allocations completing in order (FIFO), never two live
 * ones overlapping, every request fitting an empty ring granted. */
START_TEST(test_bounce_model)
{
	enum { N = 64 };
	const uint64_t size = 8192;
	struct ring cn = {.size = size};
	struct {
		int64_t off;
		uint64_t len, end;
	} live[N];
	unsigned lh = 0, lt = 0;
	uint64_t seed = 42;
	for (int it = 0; it < 200000; it++) {
		int alloc = lt - lh < N && (lt == lh || rng_next(&seed) % 3 != 0);
		if (!alloc) {
			cn.head = live[lh % N].end; /* the oldest completes */
			lh++;
			continue;
		}
		uint64_t len = 1 + rng_next(&seed) % size;
		uint64_t end;
		int64_t off = ring_alloc(&cn, len, &end);
		if (lt == lh)
			CHK(off >= 0); /* empty: it must fit */
		if (off < 0)
			continue;
		CHK_LE((uint64_t)off + len, size);
		for (unsigned k = lh; k != lt; k++) {
			uint64_t a = (uint64_t)live[k % N].off, l = live[k % N].len;
			CHK((uint64_t)off + len <= a || a + l <= (uint64_t)off);
		}
		live[lt % N].off = off;
		live[lt % N].len = len;
		live[lt % N].end = end;
		lt++;
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bounce");
	TCase *tc = tcase_create("ring");
	tcase_add_test(tc, test_bounce_empty_wraps);
	tcase_add_test(tc, test_bounce_model);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
