/*
 * hoist-prefetch-init: the seed's Figure 5 question for hoistd - does the
 * cost per prefetch stay flat as the number queued at a phase start grows
 * (G = 1 .. 4096), or is there a cliff?
 *
 *   hoistrun -n 4 --nodes 2 --hoistd-arg=--prefetch-arena-bytes=64m \
 *            hoist-prefetch-init [--sizes 8,256,4096] [--gets 1,4,...] [--reps 7]
 *            [--manual]
 *
 * (bench/run-prefetch.sh runs it once per (S, G), so that every phase has
 * exactly one recording run; bench/run-kernels.sh runs all (S, G) in one
 * job, where the first run of each (S, G) is predicted from the previous
 * one: G - G' gets of a larger G miss once, and a new size misses all of
 * the first G of its list - 4096 per size in the default list.)
 *
 * Rank 0 alone fetches; its phase (started by ONE barrier call site) holds
 * G gets of S bytes from PE np/2 (the first PE of the other daemon), at
 * consecutive S-aligned offsets. The other PEs only take part in the
 * barriers. For each (S, G) the phase runs 2 untimed times (the first run
 * records the gets; from the second on the daemon prefetches them when the
 * barrier completes) and --reps timed times. Measured on rank 0 from the
 * return of hoist_barrier:
 *   first_us  until the first get is served: what the daemon's prefetch
 *             initiation adds to the critical path (the barrier releases
 *             the clients first, then issues the first window of
 *             prefetch_chunk prefetches per node, the run having been
 *             prepared at the notify; the first get waits for that and for
 *             its own prefetch to land);
 *   per_get_us  until the last get is served, divided by G: initiation,
 *             transfer and serving of one prefetch, amortised.
 * Run with HOIST_AUTO=1 (prefetch), HOIST_AUTO=0 (every get a round trip)
 * and HOIST_AUTO=0 --manual (G hoist_get_nbi then one hoist_quiet: what the
 * network path can do, pipelined by hand). A flat per_get_us over G and a
 * first_us that does not grow with G mean no cliff.
 * Output: one line per (S, G): size=S gets=G first_us=... per_get_us=...
 * (medians) and the data is checked (errors=...).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#include "hoist.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int parse_list(const char *s, long *out, int max)
{
	int n = 0;
	while (*s && n < max) {
		char *e;
		out[n++] = strtol(s, &e, 10);
		s = *e == ',' ? e + 1 : e;
		if (e == s && *s)
			return -1;
	}
	return n;
}

#define MAXL 32
#define MAXREPS 101

int main(int argc, char **argv)
{
	long sizes[MAXL] = {8, 256}, gets[MAXL] = {1, 4, 16, 64, 256, 1024, 4096};
	int nsizes = 2, ngets = 7, reps = 7, manual = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
			nsizes = parse_list(argv[++i], sizes, MAXL);
		else if (!strcmp(argv[i], "--gets") && i + 1 < argc)
			ngets = parse_list(argv[++i], gets, MAXL);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--manual"))
			manual = 1;
		else {
			fprintf(stderr, "usage: hoist-prefetch-init [--sizes L] [--gets L] [--reps N] [--manual]\n");
			return 2;
		}
	}
	if (nsizes < 1 || ngets < 1 || reps < 1 || reps > MAXREPS) {
		fprintf(stderr, "hoist-prefetch-init: bad lists or --reps\n");
		return 2;
	}
	long maxs = 0, maxg = 0;
	for (int i = 0; i < nsizes; i++)
		maxs = sizes[i] > maxs ? sizes[i] : maxs;
	for (int i = 0; i < ngets; i++)
		maxg = gets[i] > maxg ? gets[i] : maxg;
	int rc = hoist_init();
	if (rc) {
		fprintf(stderr, "hoist_init: %s %s\n", hoist_strerror(rc), hoist_error_detail());
		return 2;
	}
	int me = hoist_rank(), np = hoist_size();
	int src = np / 2;
	if (np < 2) {
		fprintf(stderr, "run me with 2 or more PEs\n");
		return 2;
	}
	unsigned char *data = hoist_malloc((size_t)(maxs * maxg));
	unsigned char *buf = malloc((size_t)(maxs * maxg));
	if (!data || !buf) {
		fprintf(stderr, "out of memory\n");
		return 2;
	}
	for (long i = 0; i < maxs * maxg; i++)
		data[i] = (unsigned char)(i * 131 + (long)me * 7 + 1);
	const char *a = getenv("HOIST_AUTO");
	int autov = !(a && a[0] == '0');
	unsigned long errs = 0;
	if (me == 0)
		printf("# variant=%s pes=%d src_pe=%d reps=%d\n", manual ? "manual" : autov ? "auto" : "blocking",
		       np, src, reps);
	for (int si = 0; si < nsizes; si++)
		for (int gi = 0; gi < ngets; gi++) {
			long S = sizes[si], G = gets[gi];
			double first[MAXREPS], per[MAXREPS];
			for (int r = -2; r < reps; r++) {
				memset(buf, 0, (size_t)(S * G));
				int brc = hoist_barrier(); /* the one call site naming the phase */
				uint64_t t0 = now_ns(), t1 = t0;
				if (brc) {
					fprintf(stderr, "barrier: %s\n", hoist_strerror(brc));
					return 2;
				}
				if (me == 0) {
					if (manual) {
						for (long g = 0; g < G; g++)
							hoist_get_nbi(buf + g * S, src, data + g * S, (size_t)S);
						hoist_quiet();
						t1 = now_ns();
					} else {
						for (long g = 0; g < G; g++) {
							hoist_get(buf + g * S, src, data + g * S, (size_t)S);
							if (g == 0)
								t1 = now_ns();
						}
					}
					uint64_t t2 = now_ns();
					if (r >= 0) {
						first[r] = (double)(t1 - t0) / 1e3;
						per[r] = (double)(t2 - t0) / 1e3 / (double)G;
					}
					for (long i = 0; i < S * G; i++)
						if (buf[i] != (unsigned char)(i * 131 + (long)src * 7 + 1))
							errs++;
				}
			}
			if (me == 0) {
				qsort(first, (size_t)reps, sizeof(double), bench_cmp_double);
				qsort(per, (size_t)reps, sizeof(double), bench_cmp_double);
				printf("size=%ld gets=%ld first_us=%.2f per_get_us=%.3f per_get_min=%.3f "
				       "per_get_max=%.3f errors=%lu\n",
				       S, G, manual ? 0.0 : first[reps / 2], per[reps / 2], per[0], per[reps - 1], errs);
				fflush(stdout);
			}
		}
	hoist_barrier();
	hoist_finalize();
	return errs ? 1 : 0;
}
