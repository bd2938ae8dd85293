/*
 * osh_threads.c - SHMEM_THREAD_MULTIPLE: shmem_init_thread provides it and
 * shmem_query_thread says so. On every PE NT worker threads at once put
 * (shmem_long_p, half of them on a private context of their own), add
 * atomically to every PE's counter and get (checked) from other PEs; a
 * waiter thread meanwhile waits (shmem_long_wait_until, then
 * shmem_signal_wait_until) for words that the left PE's workers set when
 * they are done - which needs the waiter not to keep this PE's other
 * threads out of the library. After joining, the put slots and the
 * counters must hold exactly what was sent.
 */
#include <pthread.h>

#include "osh_common.h"

#define NT 4
#define ITER 300 /* a multiple of 2 and 4: the counters come out even */

static int me, npes, right;
static long *slots;  /* [npes][NT][ITER]: slot [src][t][i] written by PE src's thread t */
static long *pattern; /* [NT * ITER]: owner * 100000 + k, read by others' gets */
static long counter, flag;
static uint64_t sig;
static unsigned long bad; /* failures seen by threads (atomic) */
static char first_bad[160];

static void thread_fail(const char *msg, long a, long b)
{
	if (__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED) == 0)
		snprintf(first_bad, sizeof(first_bad), "%s (%ld vs %ld)", msg, a, b);
}

static long val(int src, int t, int i) { return ((long)src << 32) | ((long)t << 20) | i; }

static void *worker(void *arg)
{
	int t = (int)(long)arg;
	shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
	if (t % 2 && shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx)) {
		thread_fail("shmem_ctx_create in a thread", t, 0);
		return NULL;
	}
	for (int i = 0; i < ITER; i++) {
		int pe = (me + 1 + i + t) % npes;
		shmem_ctx_long_p(ctx, &slots[((size_t)me * NT + t) * ITER + i], val(me, t, i), pe);
		shmem_ctx_long_atomic_add(ctx, &counter, 1, (me + i) % npes);
		int k = (i * 7 + t) % (NT * ITER);
		long g = shmem_ctx_long_g(ctx, &pattern[k], pe);
		if (g != pe * 100000L + k)
			thread_fail("get", g, pe * 100000L + k);
		long f = shmem_ctx_long_atomic_fetch(ctx, &pattern[k], pe);
		if (f != g)
			thread_fail("atomic fetch", f, g);
	}
	shmem_ctx_quiet(ctx);
	/* done: thread 0 releases the right PE's waiter, thread 1 signals it */
	if (t == 0)
		shmem_long_atomic_set(&flag, 1, right);
	else if (t == 1)
		shmem_ctx_putmem_signal(ctx, &pattern[0], &pattern[0], 0, &sig, 1, SHMEM_SIGNAL_ADD, right);
	if (ctx != SHMEM_CTX_DEFAULT)
		shmem_ctx_destroy(ctx);
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
	uint64_t s = shmem_signal_wait_until(&sig, SHMEM_CMP_GE, 1);
	if (s != 1)
		thread_fail("signal", (long)s, 1);
	return NULL;
}

int main(void)
{
	int provided = -1;
	it_name = "osh_threads";
	if (shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) != 0) {
		fprintf(stderr, "[osh_threads] shmem_init_thread failed\n");
		return 1;
	}
	me = it_rank = shmem_my_pe();
	npes = shmem_n_pes();
	right = (me + 1) % npes;
	it_watchdog(60);
	IT_WHERE("setup");
	CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided %d", provided);
	int q = -1;
	shmem_query_thread(&q);
	CHECK(q == SHMEM_THREAD_MULTIPLE, "query_thread %d", q);
	if (provided != SHMEM_THREAD_MULTIPLE)
		return osh_end();

	slots = shmem_calloc((size_t)npes * NT * ITER, sizeof(long));
	pattern = shmem_malloc(sizeof(long) * NT * ITER);
	CHECK(slots && pattern, "shmem_malloc");
	for (int k = 0; k < NT * ITER; k++)
		pattern[k] = me * 100000L + k;
	shmem_barrier_all();

	IT_WHERE("threads");
	pthread_t w, th[NT];
	CHECK(pthread_create(&w, NULL, waiter, NULL) == 0, "pthread_create");
	for (long t = 0; t < NT; t++)
		CHECK(pthread_create(&th[t], NULL, worker, (void *)t) == 0, "pthread_create");
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	pthread_join(w, NULL);
	CHECK(bad == 0, "%lu failures in threads, first: %s", bad, first_bad);
	shmem_barrier_all();

	IT_WHERE("check");
	CHECK(counter == (long)NT * ITER, "counter %ld, want %ld", counter,
	      (long)NT * ITER); /* ITER / npes from each thread of each PE */
	CHECK(flag == 1 && sig == 1, "flag %ld sig %lu", flag, (unsigned long)sig);
	unsigned long wrong = 0, filled = 0;
	for (int src = 0; src < npes; src++)
		for (int t = 0; t < NT; t++)
			for (int i = 0; i < ITER; i++) {
				long v = slots[((size_t)src * NT + t) * ITER + i];
				if ((src + 1 + i + t) % npes == me) {
					filled++;
					wrong += v != val(src, t, i);
				} else {
					wrong += v != 0;
				}
			}
	CHECK(wrong == 0 && filled > 0, "%lu of the put slots wrong", wrong);
	shmem_barrier_all();
	shmem_free(slots);
	shmem_free(pattern);
	return osh_end();
}
