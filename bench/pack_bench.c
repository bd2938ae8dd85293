/*
 * hoist-pack-bench: strided gets (seed 000, Figure 6) and the small-put
 * message rate, across daemons. Driven by bench/run-pack.sh; prints TSV
 * rows "row <name> <unit> <rep values...>" (rank 0 only).
 *
 *   hoistrun -n 2 --nodes 2 hoist-pack-bench --test fig6 [--reps N] [--scale F]
 *   hoistrun -n 2P --nodes 2 hoist-pack-bench --test msgrate [--reps N] [--scale F]
 *   hoistrun -n 2 --nodes 2 hoist-pack-bench --test mixed [--reps N] [--scale F]
 *
 * fig6: rank 0 reads from the last rank (the other node): 256-byte
 * elements at an 850-byte stride on both sides, total 1 KiB .. 1 MiB, as
 *   - one hoist_get_strided call,
 *   - a loop of hoist_get of each element,
 *   - one contiguous hoist_get of the same payload;
 * effective bandwidth in MB/s (payload bytes / time). No barrier between
 * reps (a barrier starts a phase, and phase prefetch would then serve the
 * repeated gets of the loop). Data is checked after the timed loops.
 *
 * msgrate: ranks are placed in blocks (the first half on node 0); rank i
 * puts 8-byte values to rank (i + n/2) % n, 200k each, then quiet; the
 * time from a barrier to the barrier after the quiet; aggregate Mmsg/s.
 *
 * mixed: rank 0 writes to the last rank (the other node), n times (scaled)
 * one strided put of MIX_NELEM 8-byte elements (packed: small elements)
 * followed by one MIX_BIG-byte put (unpacked: above coalesce_max), every
 * pair to its own slot (no two overlap: nothing for the conflict stage to
 * hold), then quiet; operations (strided calls + puts) per second. Data is
 * checked at the target after the last rep. With the rule that an
 * unpacked operation waits until the node answered every earlier pack
 * (hoist before issue 15) each big put waits a pack's round trip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "hoist.h"

#define ELEM 256
#define STRIDE 850
#define MAXCOUNT 4096 /* 1 MiB of payload */
#define SLOTS 8192
#define MAX_REPS 64
#define MIX_NELEM 16      /* 8-byte elements per strided put */
#define MIX_STRIDE 64     /* their stride at the target, in bytes */
#define MIX_BIG (16 << 10) /* the unpacked put */
#define MIX_SLOTS 32      /* distinct (strided, big) destination pairs */

static int me, npes, reps = 7;
static double scale = 1.0;

static void die(const char *what, int rc)
{
	fprintf(stderr, "hoist-pack-bench rank %d: %s: %d (%s)\n", me, what, rc, hoist_strerror(rc));
	exit(1);
}

#define CHECK(call)                                                                                \
	do {                                                                                       \
		int rc_ = (call);                                                                  \
		if (rc_)                                                                           \
			die(#call, rc_);                                                           \
	} while (0)

static void row(const char *name, const char *unit, const double *v, int n)
{
	printf("row\t%s\t%s", name, unit);
	for (int i = 0; i < n; i++)
		printf("\t%.6g", v[i]);
	printf("\n");
}

static unsigned char pat(int pe, size_t i)
{
	return (unsigned char)(i * 7 + (size_t)pe * 13 + (i >> 8));
}

static void fig6(void)
{
	size_t span = (size_t)STRIDE * MAXCOUNT;
	unsigned char *src = hoist_malloc(span);     /* symmetric, at the target */
	unsigned char *csrc = hoist_malloc((size_t)ELEM * MAXCOUNT);
	if (!src || !csrc)
		die("hoist_malloc", -12);
	for (size_t i = 0; i < span; i++)
		src[i] = pat(me, i);
	for (size_t i = 0; i < (size_t)ELEM * MAXCOUNT; i++)
		csrc[i] = pat(me, i);
	CHECK(hoist_barrier());
	int t = npes - 1;
	if (me == 0) {
		unsigned char *dst = malloc(span), *cdst = malloc((size_t)ELEM * MAXCOUNT);
		for (size_t count = 4; count <= MAXCOUNT; count *= 4) {
			size_t bytes = count * ELEM;
			/* about 16 MiB (scaled) per rep and variant, at least 3 calls */
			long iters = (long)(scale * (16.0 * 1048576 / (double)bytes));
			if (iters < 3)
				iters = 3;
			double v[3][MAX_REPS];
			for (int rep = -1; rep < reps; rep++) {
				for (int k = 0; k < 3; k++) {
					uint64_t t0 = bench_now_ns();
					for (long it = 0; it < iters; it++) {
						if (k == 0) {
							CHECK(hoist_get_strided(dst, STRIDE, t, src, STRIDE, ELEM, count));
						} else if (k == 1) {
							for (size_t e = 0; e < count; e++)
								CHECK(hoist_get(dst + e * STRIDE, t, src + e * STRIDE, ELEM));
						} else {
							CHECK(hoist_get(cdst, t, csrc, bytes));
						}
					}
					uint64_t t1 = bench_now_ns();
					if (rep >= 0)
						v[k][rep] = (double)bytes * (double)iters * 1e3 / (double)(t1 - t0);
				}
			}
			for (size_t e = 0; e < count; e++)
				for (size_t b = 0; b < ELEM; b++)
					if (dst[e * STRIDE + b] != pat(t, e * STRIDE + b))
						die("fig6: strided data wrong", -5);
			for (size_t i = 0; i < bytes; i++)
				if (cdst[i] != pat(t, i))
					die("fig6: contiguous data wrong", -5);
			char name[64];
			snprintf(name, sizeof(name), "fig6 %zu KiB strided", bytes >> 10);
			row(name, "MB/s", v[0], reps);
			snprintf(name, sizeof(name), "fig6 %zu KiB loop", bytes >> 10);
			row(name, "MB/s", v[1], reps);
			snprintf(name, sizeof(name), "fig6 %zu KiB contiguous", bytes >> 10);
			row(name, "MB/s", v[2], reps);
			fflush(stdout);
		}
		free(dst);
		free(cdst);
	}
	CHECK(hoist_barrier());
}

static void msgrate(void)
{
	uint64_t *slots = hoist_malloc(SLOTS * 8);
	if (!slots)
		die("hoist_malloc", -12);
	long n = (long)(200000 * scale);
	if (n < 1000)
		n = 1000;
	int partner = (me + npes / 2) % npes;
	double agg[MAX_REPS];
	for (int rep = -1; rep < reps; rep++) {
		long iters = rep < 0 ? n / 4 + 1 : n;
		CHECK(hoist_barrier());
		uint64_t t0 = bench_now_ns();
		for (long i = 0; i < iters; i++) {
			uint64_t v = (uint64_t)i + 1000000000ull * (uint64_t)(me + 1);
			CHECK(hoist_put(partner, &slots[(uint64_t)i & (SLOTS - 1)], &v, 8));
		}
		CHECK(hoist_quiet());
		CHECK(hoist_barrier());
		uint64_t t1 = bench_now_ns();
		if (rep >= 0)
			agg[rep] = (double)iters * npes * 1e3 / (double)(t1 - t0);
		int from = (me + npes - npes / 2) % npes; /* who wrote us */
		uint64_t last = (uint64_t)(iters - 1);
		if (slots[last & (SLOTS - 1)] != last + 1000000000ull * (uint64_t)(from + 1))
			die("msgrate: wrong value", -5);
	}
	if (me == 0) {
		char name[64];
		snprintf(name, sizeof(name), "put 8 B msg rate, %d PEs", npes);
		row(name, "Mmsg/s", agg, reps);
	}
}

static void mixed(void)
{
	size_t sspan = (size_t)MIX_NELEM * MIX_STRIDE;
	unsigned char *sdst = hoist_malloc(sspan * MIX_SLOTS); /* strided targets */
	unsigned char *bdst = hoist_malloc((size_t)MIX_BIG * MIX_SLOTS);
	unsigned char *bsrc = malloc(MIX_BIG);
	if (!sdst || !bdst || !bsrc)
		die("hoist_malloc", -12);
	memset(sdst, 0, sspan * MIX_SLOTS);
	memset(bdst, 0, (size_t)MIX_BIG * MIX_SLOTS);
	long n = (long)(20000 * scale);
	if (n < 64)
		n = 64;
	int t = npes - 1;
	uint64_t last;
	CHECK(hoist_barrier());
	if (me == 0) {
		double v[MAX_REPS];
		for (int rep = -1; rep < reps; rep++) {
			long iters = rep < 0 ? n / 4 + 1 : n;
			uint64_t t0 = bench_now_ns();
			for (long i = 0; i < iters; i++) {
				uint64_t s = (uint64_t)i % MIX_SLOTS, val[MIX_NELEM];
				last = (uint64_t)i + 1000000ull * (uint64_t)(rep + 2);
				for (int e = 0; e < MIX_NELEM; e++)
					val[e] = last * MIX_NELEM + (uint64_t)e;
				CHECK(hoist_put_strided(t, sdst + s * sspan, MIX_STRIDE, val, 8, 8, MIX_NELEM));
				memset(bsrc, (int)(last & 0xff), MIX_BIG);
				CHECK(hoist_put(t, bdst + s * MIX_BIG, bsrc, MIX_BIG));
			}
			CHECK(hoist_quiet());
			uint64_t t1 = bench_now_ns();
			if (rep >= 0)
				v[rep] = (double)iters * 2 * 1e9 / (double)(t1 - t0);
		}
		row("mixed: strided 16x8 B (packed) + put 16 KiB (unpacked)", "ops/s", v, reps);
	}
	CHECK(hoist_barrier());
	if (me == t) { /* the last rep's last pair: slot (n - 1) % MIX_SLOTS */
		last = (uint64_t)(n - 1) + 1000000ull * (uint64_t)(reps + 1);
		uint64_t s = (uint64_t)(n - 1) % MIX_SLOTS, got;
		for (int e = 0; e < MIX_NELEM; e++) {
			memcpy(&got, sdst + s * sspan + (size_t)e * MIX_STRIDE, 8);
			if (got != last * MIX_NELEM + (uint64_t)e)
				die("mixed: strided data wrong", -5);
		}
		for (size_t b = 0; b < MIX_BIG; b++)
			if (bdst[s * MIX_BIG + b] != (unsigned char)(last & 0xff))
				die("mixed: put data wrong", -5);
	}
	free(bsrc);
}

int main(int argc, char **argv)
{
	const char *test = "fig6";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--test") && i + 1 < argc)
			test = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--scale") && i + 1 < argc)
			scale = atof(argv[++i]);
		else {
			fprintf(stderr, "usage: %s [--test fig6|msgrate|mixed] [--reps N] [--scale F]\n", argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > MAX_REPS)
		reps = 7;
	CHECK(hoist_init());
	me = hoist_rank();
	npes = hoist_size();
	if (npes < 2)
		die("needs 2 PEs at least", -22);
	if (!strcmp(test, "fig6"))
		fig6();
	else if (!strcmp(test, "msgrate"))
		msgrate();
	else if (!strcmp(test, "mixed"))
		mixed();
	else
		die("unknown test", -22);
	CHECK(hoist_finalize());
	return 0;
}
