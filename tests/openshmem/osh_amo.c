/*
 * osh_amo.c - OpenSHMEM atomics: every PE hammers PE 0's words with every
 * standard AMO (fetch_inc, inc, fetch_add, add, compare_swap, and the nbi
 * and ctx forms) for every standard AMO type, the bitwise ones for the
 * bitwise types, fetch/set/swap (+nbi) for the extended types; the final
 * values and the fetched ones are checked. Then the pre-1.4 names and the
 * C11 generics.
 */
#include "osh_common.h"

#define ITER 50
static int me, npes, right, left;

#define T_STD(T, N, a)                                                                        \
	static void t_##N(void)                                                               \
	{                                                                                     \
		IT_WHERE("std " #N);                                                          \
		T *x = shmem_calloc(8, sizeof(T));                                            \
		T f1 = 0, f2 = 0;                                                             \
		size_t seen = 0;                                                              \
		for (int i = 0; i < ITER; i++) {                                              \
			T a1 = shmem_##N##_atomic_fetch_inc(&x[0], 0);                        \
			shmem_##N##_atomic_inc(&x[1], 0);                                     \
			T a2 = shmem_ctx_##N##_atomic_fetch_add(SHMEM_CTX_DEFAULT, &x[2], (T)2, 0); \
			shmem_ctx_##N##_atomic_add(SHMEM_CTX_DEFAULT, &x[3], (T)3, 0);        \
			shmem_##N##_atomic_fetch_inc_nbi(&f1, &x[4], 0);                      \
			shmem_##N##_atomic_fetch_add_nbi(&f2, &x[5], (T)5, 0);                \
			shmem_quiet();                                                        \
			CHECK(a1 < (T)(ITER * npes) && a2 % 2 == 0 && f1 < (T)(ITER * npes) &&  \
				      f2 % 5 == 0, #N " fetched values out of range");       \
			seen++;                                                               \
		}                                                                             \
		/* exactly one PE wins the compare-and-swap from 0 */                         \
		T old = shmem_##N##_atomic_compare_swap(&x[6], (T)0, (T)(me + 1), 0);          \
		if (old == 0)                                                                 \
			shmem_##N##_atomic_inc(&x[7], 0);                                     \
		else                                                                          \
			CHECK(old >= 1 && old <= (T)npes, #N " cswap saw %lld", (long long)old); \
		shmem_barrier_all();                                                          \
		if (me == 0) {                                                                \
			CHECK(x[0] == (T)(ITER * npes), #N " fetch_inc total");                \
			CHECK(x[1] == (T)(ITER * npes), #N " inc total");                      \
			CHECK(x[2] == (T)(2 * ITER * npes), #N " fetch_add total");            \
			CHECK(x[3] == (T)(3 * ITER * npes), #N " add total");                  \
			CHECK(x[4] == (T)(ITER * npes), #N " fetch_inc_nbi total");            \
			CHECK(x[5] == (T)(5 * ITER * npes), #N " fetch_add_nbi total");        \
			CHECK(x[6] >= 1 && x[6] <= (T)npes, #N " cswap result");              \
			CHECK(x[7] == 1, #N " cswap winners %lld", (long long)x[7]);           \
		}                                                                             \
		/* cswap_nbi on the right neighbour: a failing then a succeeding one */       \
		T c1 = 9, c2 = 9;                                                             \
		shmem_##N##_atomic_compare_swap_nbi(&c1, &x[6], (T)100, (T)50, right);         \
		shmem_quiet();                                                                \
		shmem_barrier_all();                                                          \
		T cur = shmem_##N##_atomic_fetch(&x[6], right);                               \
		CHECK(c1 == cur, #N " cswap_nbi fetched");                                     \
		shmem_barrier_all();                                                          \
		shmem_ctx_##N##_atomic_compare_swap_nbi(SHMEM_CTX_DEFAULT, &c2, &x[6], cur, (T)50, right); \
		shmem_quiet();                                                                \
		shmem_barrier_all();                                                          \
		CHECK(c2 == cur && x[6] == 50, #N " cswap_nbi swapped");                       \
		shmem_barrier_all();                                                          \
		shmem_free(x);                                                                \
		(void)seen;                                                                   \
		NO_ERROR(#N);                                                                 \
	}
SHMEM__AMO_STD(T_STD, )

#define T_BIT(T, N, a)                                                                        \
	static void t_bit_##N(void)                                                           \
	{                                                                                     \
		IT_WHERE("bit " #N);                                                          \
		T *x = shmem_calloc(6, sizeof(T));                                            \
		T all = (T)((1u << npes) - 1), bit = (T)(1u << me), f = 0;                    \
		if (me == 0) {                                                                \
			x[2] = (T)~(T)0;                                                      \
			x[3] = (T)~(T)0;                                                      \
		}                                                                             \
		shmem_barrier_all();                                                          \
		shmem_##N##_atomic_or(&x[0], bit, 0);                                         \
		T o = shmem_##N##_atomic_fetch_or(&x[1], bit, 0);                             \
		CHECK((o & bit) == 0 && (o & ~all) == 0, #N " fetch_or old");                  \
		shmem_ctx_##N##_atomic_and(SHMEM_CTX_DEFAULT, &x[2], (T)~bit, 0);             \
		T an = shmem_##N##_atomic_fetch_and(&x[3], (T)~bit, 0);                       \
		CHECK((an & bit) == bit, #N " fetch_and old");                                 \
		shmem_##N##_atomic_xor(&x[4], bit, 0);                                        \
		shmem_##N##_atomic_fetch_xor_nbi(&f, &x[5], bit, 0);                          \
		shmem_quiet();                                                                \
		CHECK((f & bit) == 0, #N " fetch_xor_nbi old");                                \
		shmem_barrier_all();                                                          \
		if (me == 0) {                                                                \
			CHECK(x[0] == all && x[1] == all, #N " or");                           \
			CHECK(x[2] == (T)~all && x[3] == (T)~all, #N " and");                  \
			CHECK(x[4] == all && x[5] == all, #N " xor");                          \
		}                                                                             \
		T g1 = 0, g2 = 0;                                                             \
		shmem_##N##_atomic_fetch_and_nbi(&g1, &x[0], all, 0);                         \
		shmem_ctx_##N##_atomic_fetch_or_nbi(SHMEM_CTX_DEFAULT, &g2, &x[1], 0, 0);     \
		shmem_quiet();                                                                \
		CHECK(g1 == all && g2 == all, #N " fetch_and/or_nbi");                         \
		CHECK(shmem_##N##_atomic_fetch_xor(&x[4], 0, 0) == all, #N " fetch_xor");      \
		shmem_barrier_all();                                                          \
		shmem_free(x);                                                                \
		NO_ERROR("bit " #N);                                                          \
	}
SHMEM__AMO_BIT(T_BIT, )

#define T_EXT(T, N, a)                                                                        \
	static void t_ext_##N(void)                                                           \
	{                                                                                     \
		IT_WHERE("ext " #N);                                                          \
		T *x = shmem_calloc(2, sizeof(T));                                            \
		shmem_##N##_atomic_set(&x[0], (T)(me + 1), right);                            \
		shmem_quiet();                                                                \
		shmem_barrier_all();                                                          \
		CHECK(x[0] == (T)(left + 1), #N " set");                                       \
		CHECK(shmem_##N##_atomic_fetch(&x[0], right) == (T)(me + 1), #N " fetch");     \
		shmem_barrier_all();                                                          \
		T old = shmem_ctx_##N##_atomic_swap(SHMEM_CTX_DEFAULT, &x[0], (T)(me + 10), right); \
		CHECK(old == (T)(me + 1), #N " swap old");                                     \
		T f = 0, s = 0;                                                               \
		shmem_##N##_atomic_swap_nbi(&s, &x[1], (T)(me + 20), right);                  \
		shmem_quiet();                                                                \
		CHECK(s == 0, #N " swap_nbi old");                                             \
		shmem_barrier_all();                                                          \
		shmem_##N##_atomic_fetch_nbi(&f, &x[1], left);                                \
		shmem_ctx_quiet(SHMEM_CTX_DEFAULT);                                           \
		CHECK(x[0] == (T)(left + 10), #N " swap");                                     \
		CHECK(f == (T)(((left + npes - 1) % npes) + 20), #N " fetch_nbi");             \
		shmem_barrier_all();                                                          \
		shmem_free(x);                                                                \
		NO_ERROR("ext " #N);                                                          \
	}
SHMEM__AMO_EXT(T_EXT, )

static void t_deprecated_and_generic(void)
{
	IT_WHERE("deprecated");
	long *x = shmem_calloc(4, sizeof(long));
	int *y = shmem_calloc(2, sizeof(int));
	double *z = shmem_calloc(1, sizeof(double));
	for (int i = 0; i < ITER; i++) {
		shmem_long_finc(&x[0], 0);
		shmem_long_add(&x[1], 2, 0);
		shmem_int_fadd(&y[0], 3, 0);
		shmem_int_inc(&y[1], 0);
		shmem_atomic_fetch_add(&x[2], 4L, 0); /* C11 generic */
		shmem_atomic_inc(SHMEM_CTX_DEFAULT, &x[3], 0);
		shmem_fadd(&y[0], 1, 0); /* deprecated generics */
		shmem_inc(&x[3], 0);
	}
	shmem_quiet();
	shmem_barrier_all();
	if (me == 0) {
		CHECK(x[0] == ITER * npes && x[1] == 2 * ITER * npes, "shmem_long_finc/add");
		CHECK(y[0] == 4 * ITER * npes && y[1] == ITER * npes, "shmem_int_fadd/inc, shmem_fadd");
		CHECK(x[2] == 4 * ITER * npes && x[3] == 2 * ITER * npes, "generic fetch_add/inc, shmem_inc");
	}
	shmem_barrier_all();
	CHECK(shmem_long_cswap(&x[0], ITER * npes, -1, right) == ITER * npes || right != 0,
	      "shmem_long_cswap");
	shmem_double_set(z, 2.5, right);
	shmem_quiet();
	shmem_barrier_all();
	CHECK(*z == 2.5, "shmem_double_set");
	shmem_barrier_all(); /* every PE looked before the swaps */
	CHECK(shmem_double_swap(z, 1.0, left) == 2.5, "shmem_double_swap");
	CHECK(shmem_atomic_fetch(z, left) == 1.0, "generic atomic_fetch double");
	shmem_barrier_all();
	shmem_free(x);
	shmem_free(y);
	shmem_free(z);
	NO_ERROR("deprecated");
}

int main(void)
{
	me = osh_start("osh_amo");
	npes = shmem_n_pes();
	right = (me + 1) % npes;
	left = (me + npes - 1) % npes;
#define RUN(T, N, a) t_##N();
#define RUNB(T, N, a) t_bit_##N();
#define RUNE(T, N, a) t_ext_##N();
	SHMEM__AMO_STD(RUN, )
	SHMEM__AMO_BIT(RUNB, )
	SHMEM__AMO_EXT(RUNE, )
	t_deprecated_and_generic();
	return osh_end();
}
