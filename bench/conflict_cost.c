/*
 * hoist-conflict-cost: what one conflict check of the daemon's outstanding-
 * put lists (daemon/stages/conflict.c, linked in directly) costs, for the shapes
 * the kernels produce (seed 000, section 4.4: conflict-check time as a
 * fraction of the time the automatic version saves).
 *
 *   hoist-conflict-cost [--iters N]
 *
 * For K outstanding puts to one target (K = 0, 1, 4, 16, 64, 256) of LEN
 * bytes, laid out either monotonically (a walk through a remote array, the
 * FT pattern) or at random slots of a small region (the GUPS pattern, where
 * the queries land inside the bounding box and search the tree), it times
 *   box      a check answered by the bounding box (query outside it)
 *   precise  a check that searches the interval tree (query inside the box,
 *            drawn from the same distribution as the puts: hits and misses)
 *   add+ret  conflict_add of one put plus its conflict_retire (the
 *            bookkeeping every deferred put costs besides its checks)
 * in ns per operation (median of 7 timed loops). One line per (pattern, K):
 *   pattern=random K=16 len=1024 box_ns=... precise_ns=... addret_ns=...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#include "conflict.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t xr(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#define REPS 7
#define NQ 4096

static volatile uint64_t sink;

/* offset of put/query i: random = one of `slots` 1 KiB slots, mono = i-th */
static uint64_t offset(int random, uint32_t slots, uint64_t i, uint64_t len)
{
	return random ? (xr() % slots) * 1024 : (1ull << 20) + i * len;
}

static void one(int random, uint32_t K, uint64_t len, long iters)
{
	struct conflict c, c2; /* c2: the add+retire loop, so c keeps its K puts */
	if (conflict_init(&c, 4, 4096) || conflict_init(&c2, 4, 4096)) {
		fprintf(stderr, "conflict_init failed\n");
		exit(2);
	}
	uint32_t slots = 16; /* GUPS: 16 slots per source PE at each target */
	uint64_t seq = 0;
	for (uint32_t i = 0; i < K; i++) {
		uint64_t off = offset(random, slots, i, len);
		conflict_add(&c, 1, off, len, ++seq);
		conflict_add(&c2, 1, off, len, seq);
	}
	uint64_t next = K;
	static uint64_t qin[NQ], qout[NQ];
	for (int i = 0; i < NQ; i++) {
		qin[i] = offset(random, slots, random ? (uint64_t)i : xr() % (K ? K : 1), len);
		qout[i] = (1ull << 40) + (uint64_t)i * len; /* beyond every box */
	}
	double box[REPS], prec[REPS], ar[REPS];
	for (int r = 0; r < REPS; r++) {
		uint64_t s = 0, t0 = now_ns();
		for (long i = 0; i < iters; i++)
			s += conflict_check(&c, 1, qout[i & (NQ - 1)], len);
		uint64_t t1 = now_ns();
		for (long i = 0; i < iters; i++)
			s += conflict_check(&c, 1, qin[i & (NQ - 1)], len);
		uint64_t t2 = now_ns();
		/* steady state: add one at the tail, retire the oldest */
		for (long i = 0; i < iters; i++) {
			conflict_add(&c2, 1, offset(random, slots, next++, len), len, ++seq);
			conflict_retire(&c2, 1, conflict_oldest(&c2, 1));
		}
		uint64_t t3 = now_ns();
		sink += s;
		box[r] = (double)(t1 - t0) / (double)iters;
		prec[r] = (double)(t2 - t1) / (double)iters;
		ar[r] = (double)(t3 - t2) / (double)iters;
	}
	if (conflict_validate(&c) || conflict_validate(&c2)) {
		fprintf(stderr, "conflict_validate failed\n");
		exit(2);
	}
	qsort(box, REPS, sizeof(double), bench_cmp_double);
	qsort(prec, REPS, sizeof(double), bench_cmp_double);
	qsort(ar, REPS, sizeof(double), bench_cmp_double);
	printf("pattern=%s K=%u len=%llu box_ns=%.1f precise_ns=%.1f addret_ns=%.1f\n",
	       random ? "random" : "mono", K, (unsigned long long)len, box[REPS / 2],
	       K ? prec[REPS / 2] : box[REPS / 2], ar[REPS / 2]);
	conflict_fini(&c);
	conflict_fini(&c2);
}

int main(int argc, char **argv)
{
	long iters = 200000;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
			iters = atol(argv[++i]);
		} else {
			fprintf(stderr, "usage: hoist-conflict-cost [--iters N]\n");
			return 2;
		}
	}
	static const uint32_t Ks[] = {0, 1, 4, 16, 64, 256};
	for (size_t k = 0; k < sizeof(Ks) / sizeof(Ks[0]); k++)
		one(1, Ks[k], 1024, iters);
	for (size_t k = 0; k < sizeof(Ks) / sizeof(Ks[0]); k++)
		one(0, Ks[k], 4096, iters);
	return 0;
}
