/*
 * hoist-conflict-cost: what one conflict check of the daemon's outstanding-
 * put lists (daemon/stages/conflict.c, linked in directly) costs, for the shapes
 * the kernels produce (seed 000, section 4.4: conflict-check time as a
 * fraction of the time the automatic version saves).
 *
 *   hoist-conflict-cost [--iters N]
 *   hoist-conflict-cost --outstanding N [--pattern random|mono] [--len L] [--reps R]
 *
 * Without --outstanding (the sweep run-kernels.sh reads):
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
 *
 * With --outstanding N (issue 16's goal, bench/run-conflict.sh): one target
 * holds N outstanding puts of L bytes (default 10000 x 64 B), either at
 * random 8-byte-aligned places of a region 16 x N x L wide (random) or one
 * after the other (mono: a walk through a remote array). Each repetition
 * runs 64 rounds; a round times 8192 checks, then 1024 adds, then 1024
 * retires:
 *   check    conflict_check of a range of L bytes at a random place inside
 *            the bounding box (random: the puts' distribution, hits and
 *            misses; mono: always a hit)
 *   add      conflict_add of the next put of the stream (N -> N + 1024)
 *   retire   conflict_complete of the oldest put, in order (N + 1024 -> N),
 *            as the daemon retires a put when its completion arrives
 * A repetition's ns per operation is the median over its rounds (a round
 * that lost the CPU on a shared machine does not move it); it prints one
 * line per repetition and a summary (median and range over repetitions):
 *   rep=3 pattern=random outstanding=10000 len=64 check_ns=.. add_ns=.. retire_ns=.. hits=..
 *   summary pattern=random outstanding=10000 len=64 reps=7 check_ns=m (lo-hi) ...
 * Only the public API of conflict.h is used, so run-conflict.sh builds
 * this file against an older conflict.c too (the "before" column).
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

#define BATCH 1024
#define QN 8192 /* checks per round */
#define ROUNDS 64

struct stream {
	int random;
	uint64_t len, region, next;
};

static uint64_t stream_off(struct stream *s)
{
	if (s->random)
		return (xr() % (s->region / 8)) * 8;
	return (1ull << 30) + s->next++ * s->len;
}

static void med3(double *v, int n, double *m, double *lo, double *hi)
{
	qsort(v, (size_t)n, sizeof(double), bench_cmp_double);
	*m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*lo = v[0];
	*hi = v[n - 1];
}

static int outstanding_run(int random, uint32_t N, uint64_t len, int reps)
{
	struct conflict c;
	if (conflict_init(&c, 4, N + BATCH) != 0) {
		fprintf(stderr, "conflict_init failed\n");
		return 2;
	}
	struct stream st = {.random = random, .len = len, .region = 16ull * N * len, .next = 0};
	uint64_t seq = 0, oldest = 1;
	for (uint32_t i = 0; i < N; i++)
		if (conflict_add(&c, 1, stream_off(&st), len, ++seq) != 0)
			return 2;
	static uint64_t q[QN], addoff[BATCH];
	double *ck = calloc((size_t)reps, sizeof(double)), *ad = calloc((size_t)reps, sizeof(double));
	double *rt = calloc((size_t)reps, sizeof(double));
	if (!ck || !ad || !rt)
		return 2;
	uint64_t hits = 0, nq = 0;
	for (int r = 0; r < reps; r++) {
		double tc[ROUNDS], ta[ROUNDS], tr[ROUNDS], x0, x1;
		uint64_t nck = 0;
		uint64_t h = 0;
		for (int round = 0; round < ROUNDS; round++) {
			/* queries inside the box of what is outstanding now */
			uint64_t lo = random ? 0 : (1ull << 30) + (oldest - 1) * len;
			uint64_t span = random ? st.region : (seq - oldest + 1) * len;
			for (int i = 0; i < QN; i++)
				q[i] = lo + (xr() % ((span - len) / 8 + 1)) * 8;
			for (int i = 0; i < BATCH; i++)
				addoff[i] = stream_off(&st);
			uint64_t s = 0, t0 = now_ns();
			for (int i = 0; i < QN; i++)
				s += conflict_check(&c, 1, q[i], len) != 0;
			uint64_t t1 = now_ns();
			for (int i = 0; i < BATCH; i++)
				conflict_add(&c, 1, addoff[i], len, ++seq);
			uint64_t t2 = now_ns();
			for (int i = 0; i < BATCH; i++)
				conflict_complete(&c, 1, oldest++);
			uint64_t t3 = now_ns();
			h += s;
			tc[round] = (double)(t1 - t0) / QN;
			ta[round] = (double)(t2 - t1) / BATCH;
			tr[round] = (double)(t3 - t2) / BATCH;
			nck += QN;
		}
		if (conflict_outstanding(&c, 1) != N) {
			fprintf(stderr, "outstanding %u, want %u\n", conflict_outstanding(&c, 1), N);
			return 2;
		}
		/* a repetition's value: the median of its rounds (a round that lost
		 * the CPU to another process does not move it) */
		med3(tc, ROUNDS, &ck[r], &x0, &x1);
		med3(ta, ROUNDS, &ad[r], &x0, &x1);
		med3(tr, ROUNDS, &rt[r], &x0, &x1);
		hits += h;
		nq += nck;
		printf("rep=%d pattern=%s outstanding=%u len=%llu check_ns=%.1f add_ns=%.1f retire_ns=%.1f hits=%.3f\n",
		       r, random ? "random" : "mono", N, (unsigned long long)len, ck[r], ad[r], rt[r],
		       (double)h / (double)nck);
	}
	if (conflict_validate(&c) != 0) {
		fprintf(stderr, "conflict_validate failed\n");
		return 2;
	}
	double m[3], lo[3], hi[3];
	med3(ck, reps, &m[0], &lo[0], &hi[0]);
	med3(ad, reps, &m[1], &lo[1], &hi[1]);
	med3(rt, reps, &m[2], &lo[2], &hi[2]);
	printf("summary pattern=%s outstanding=%u len=%llu reps=%d check_ns=%.1f (%.1f-%.1f) add_ns=%.1f (%.1f-%.1f) "
	       "retire_ns=%.1f (%.1f-%.1f) hits=%.3f\n",
	       random ? "random" : "mono", N, (unsigned long long)len, reps, m[0], lo[0], hi[0], m[1], lo[1], hi[1],
	       m[2], lo[2], hi[2], (double)hits / (double)nq);
	free(ck);
	free(ad);
	free(rt);
	conflict_fini(&c);
	return 0;
}

int main(int argc, char **argv)
{
	long iters = 200000;
	long outstanding = 0;
	int reps = 7, pattern = -1; /* -1: both */
	uint64_t len = 64;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
			iters = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--outstanding") && i + 1 < argc) {
			outstanding = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--len") && i + 1 < argc) {
			len = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--pattern") && i + 1 < argc) {
			i++;
			pattern = !strcmp(argv[i], "random") ? 1 : !strcmp(argv[i], "mono") ? 0 : -2;
		} else {
			pattern = -2;
		}
		if (pattern == -2 || reps < 1 || len < 8 || len % 8) {
			fprintf(stderr, "usage: hoist-conflict-cost [--iters N] | --outstanding N [--pattern random|mono] "
					"[--len L (multiple of 8)] [--reps R]\n");
			return 2;
		}
	}
	if (outstanding > 0) {
		if (outstanding > (1l << 24))
			return 2;
		int rc = 0;
		if (pattern != 0)
			rc |= outstanding_run(1, (uint32_t)outstanding, len, reps);
		if (pattern != 1)
			rc |= outstanding_run(0, (uint32_t)outstanding, len, reps);
		return rc;
	}
	static const uint32_t Ks[] = {0, 1, 4, 16, 64, 256};
	for (size_t k = 0; k < sizeof(Ks) / sizeof(Ks[0]); k++)
		one(1, Ks[k], 1024, iters);
	for (size_t k = 0; k < sizeof(Ks) / sizeof(Ks[0]); k++)
		one(0, Ks[k], 4096, iters);
	return 0;
}
