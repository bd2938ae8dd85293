/* Small helpers shared by the Check unit tests. */
#ifndef HOIST_TEST_UNIT_UTIL_H
#define HOIST_TEST_UNIT_UTIL_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

/* Check records the location of every ck_assert (a syscall each); hot loops
 * use these instead, which only call into Check on failure. */
#define CHK(c)                                                                   \
	do {                                                                     \
		if (!(c))                                                        \
			ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c);       \
	} while (0)
#define CHK_EQ(a, b)                                                                              \
	do {                                                                                      \
		long long chk_a_ = (long long)(a), chk_b_ = (long long)(b);                       \
		if (chk_a_ != chk_b_)                                                             \
			ck_abort_msg("%s:%d: %s == %s: %lld != %lld", __FILE__, __LINE__, #a, #b, \
				     chk_a_, chk_b_);                                             \
	} while (0)
#define CHK_LE(a, b) CHK((a) <= (b))

/* xorshift64*: same seed, same sequence, on every platform. */
static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* Runs the suite; exit status for CTest. */
static inline int run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
