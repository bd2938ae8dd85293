/*
 * osh_sync.c - OpenSHMEM point-to-point synchronisation, signals and locks:
 * for every point-to-point type the test forms before the writer writes
 * (false), then wait_until, _all, _any, _some and the vector forms with a
 * status mask; signal_fetch/signal_wait_until; a lock under contention
 * guarding a read-modify-write counter at PE 0 (set/clear and test_lock).
 */
#include <sched.h>

#include "osh_common.h"

#define NV 4
static int me, npes, right, left;

#define T_P2P(T, N, a)                                                                         \
	static void t_##N(void)                                                                \
	{                                                                                      \
		IT_WHERE("p2p " #N);                                                           \
		T *iv = shmem_calloc(3 * NV, sizeof(T));                                       \
		T vals[NV] = {1, 2, 3, 4};                                                     \
		int status[NV] = {0, 1, 0, 0}; /* element 1 does not take part */              \
		size_t idx[NV];                                                                \
		/* nothing written yet: every test is false */                                 \
		CHECK(shmem_##N##_test(&iv[0], SHMEM_CMP_NE, 0) == 0, #N " test");              \
		CHECK(shmem_##N##_test_all(iv, NV, NULL, SHMEM_CMP_EQ, 1) == 0, #N " test_all"); \
		CHECK(shmem_##N##_test_any(iv, NV, status, SHMEM_CMP_GT, 0) == SIZE_MAX,        \
		      #N " test_any");                                                         \
		CHECK(shmem_##N##_test_some(iv, NV, idx, NULL, SHMEM_CMP_GE, 1) == 0,           \
		      #N " test_some");                                                        \
		CHECK(shmem_##N##_test_all_vector(iv, NV, NULL, SHMEM_CMP_EQ, vals) == 0,       \
		      #N " test_all_vector");                                                  \
		CHECK(shmem_##N##_test_any_vector(iv, NV, NULL, SHMEM_CMP_EQ, vals) == SIZE_MAX, \
		      #N " test_any_vector");                                                  \
		CHECK(shmem_##N##_test_some_vector(iv, NV, idx, NULL, SHMEM_CMP_EQ, vals) == 0, \
		      #N " test_some_vector");                                                 \
		/* a fully excluded set is true at once (all) / none (any) */                  \
		int none[NV] = {1, 1, 1, 1};                                                   \
		CHECK(shmem_##N##_test_all(iv, NV, none, SHMEM_CMP_EQ, 1) == 1, #N " test_all none"); \
		shmem_barrier_all();                                                           \
		/* the writer: element 2 of group 0 first, then the rest */                    \
		shmem_##N##_p(&iv[2], (T)3, right);                                            \
		shmem_fence();                                                                 \
		size_t any = shmem_##N##_wait_until_any(iv, NV, status, SHMEM_CMP_EQ, (T)3);   \
		CHECK(any == 2, #N " wait_until_any -> %zu", any);                              \
		for (int i = 0; i < NV; i++)                                                   \
			shmem_##N##_p(&iv[NV + i], vals[i], right);                            \
		shmem_fence();                                                                 \
		shmem_##N##_p(&iv[0], (T)1, right);                                            \
		shmem_##N##_p(&iv[3], (T)4, right);                                            \
		shmem_quiet();                                                                 \
		shmem_##N##_wait_until(&iv[0], SHMEM_CMP_EQ, (T)1);                            \
		shmem_##N##_wait_until_all(iv, NV, status, SHMEM_CMP_GE, (T)1);                \
		size_t ns = shmem_##N##_wait_until_some(iv, NV, idx, status, SHMEM_CMP_GT, (T)1); \
		CHECK(ns == 2 && idx[0] == 2 && idx[1] == 3, #N " wait_until_some -> %zu", ns); \
		shmem_##N##_wait_until_all_vector(iv + NV, NV, NULL, SHMEM_CMP_EQ, vals);      \
		size_t av = shmem_##N##_wait_until_any_vector(iv + NV, NV, status, SHMEM_CMP_GE, vals); \
		CHECK(av == 0, #N " wait_until_any_vector -> %zu", av);                         \
		size_t sv = shmem_##N##_wait_until_some_vector(iv + NV, NV, idx, NULL, SHMEM_CMP_LE, vals); \
		CHECK(sv == NV, #N " wait_until_some_vector -> %zu", sv);                       \
		CHECK(shmem_##N##_test(&iv[3], SHMEM_CMP_EQ, 4) == 1, #N " test true");         \
		CHECK(shmem_##N##_test_all(iv, NV, status, SHMEM_CMP_NE, 0) == 1, #N " test_all true"); \
		CHECK(shmem_##N##_test_any(iv, NV, NULL, SHMEM_CMP_LT, 1) == 1, #N " test_any true"); \
		CHECK(shmem_##N##_test_some_vector(iv + NV, NV, idx, status, SHMEM_CMP_EQ, vals) == 3, \
		      #N " test_some_vector true");                                            \
		CHECK(shmem_##N##_test_all_vector(iv + NV, NV, NULL, SHMEM_CMP_EQ, vals) == 1,  \
		      #N " test_all_vector true");                                             \
		CHECK(shmem_##N##_test_any_vector(iv + NV, NV, NULL, SHMEM_CMP_GT, vals) == SIZE_MAX, \
		      #N " test_any_vector false");                                            \
		shmem_barrier_all();                                                           \
		shmem_free(iv);                                                                \
		NO_ERROR("p2p " #N);                                                           \
	}
SHMEM__P2P_TYPES(T_P2P, )

static void t_signal(void)
{
	IT_WHERE("signal");
	uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
	long *data = shmem_calloc(1, sizeof(long));
	CHECK(shmem_signal_fetch(sig) == 0, "signal_fetch initial");
	shmem_barrier_all();
	long v = 1000 + me;
	shmem_long_put_signal(data, &v, 1, sig, 3, SHMEM_SIGNAL_ADD, right);
	CHECK(shmem_signal_wait_until(sig, SHMEM_CMP_GT, 2) == 3, "signal_wait_until GT");
	CHECK(*data == 1000 + left, "data before the signal");
	CHECK(shmem_signal_fetch(sig) == 3, "signal_fetch after");
	shmem_barrier_all();
	shmem_free(data);
	shmem_free(sig);
	NO_ERROR("signal");
}

#define LOCK_ITER 60
static void t_lock(void)
{
	IT_WHERE("lock");
	long *lock = shmem_calloc(1, sizeof(long));
	long *counter = shmem_calloc(2, sizeof(long));
	long overlaps = 0;
	for (int i = 0; i < LOCK_ITER; i++) {
		if (i % 4)
			shmem_set_lock(lock);
		else
			while (shmem_test_lock(lock))
				IT_PROGRESS();
		/* nobody else inside: the occupancy count at PE 0 was 0 */
		long inside = shmem_long_atomic_fetch_inc(&counter[1], 0);
		if (inside != 0)
			overlaps++;
		sched_yield(); /* let the others run while this PE holds the lock */
		/* a non-atomic read-modify-write: only mutual exclusion keeps it */
		long c = shmem_long_g(counter, 0);
		shmem_long_p(counter, c + 1, 0);
		shmem_quiet();
		shmem_long_atomic_add(&counter[1], -1, 0);
		shmem_clear_lock(lock);
	}
	CHECK(overlaps == 0, "%ld times another PE was inside the critical section", overlaps);
	shmem_barrier_all();
	if (me == 0)
		CHECK(*counter == (long)LOCK_ITER * npes, "lock counter %ld, want %ld", *counter,
		      (long)LOCK_ITER * npes);
	shmem_barrier_all();
	/* held: test_lock fails for the others */
	if (me == 0)
		shmem_set_lock(lock);
	shmem_barrier_all();
	if (me != 0)
		CHECK(shmem_test_lock(lock) == 1, "test_lock on a held lock");
	shmem_barrier_all();
	if (me == 0)
		shmem_clear_lock(lock);
	shmem_barrier_all();
	shmem_free(counter);
	shmem_free(lock);
	NO_ERROR("lock");
}

int main(void)
{
	me = osh_start("osh_sync");
	npes = shmem_n_pes();
	right = (me + 1) % npes;
	left = (me + npes - 1) % npes;
#define RUN(T, N, a) t_##N();
	SHMEM__P2P_TYPES(RUN, )
	t_signal();
	t_lock();
	return osh_end();
}
