/*
 * hoist-phase-cost: what the daemon's phase table (daemon/stages/phase.c,
 * linked in directly) costs the progress thread per get and per phase run,
 * for the kernels' get patterns. It bounds what HOIST_AUTO=1 can cost a
 * kernel whose gets the prefetcher cannot predict (bench/kernels.c scatter:
 * every run is a back-off "dry" run, recorded and checked, nothing
 * prefetched): that bookkeeping against the round trip each such get costs
 * anyway.
 *
 *   hoist-phase-cost [--gets G] [--runs R] [--reps N]
 *
 * Patterns, G gets of 256 B from one PE per run, one phase id, R runs timed
 * after 8 untimed ones (a table of 32 phases x 8192 gets, period_max 3, as
 * run-kernels.sh's daemons):
 *   random    places drawn anew every run (scatter): the phase backs off,
 *             every timed run is dry; each get is a phase_get miss that is
 *             appended (recorded)
 *   repeat    the same places every run (bt): each get is a hit
 * Per run: phase_begin (the notify's prediction), G x phase_get, phase_end
 * (store the run, its signature, the back-off verdict). Prints per pattern
 * the median over N repetitions (each the mean over R runs) of ns per get
 * (the run's whole cost / G) and ns per run, and the run counters:
 *   pattern=random gets=32 ns_per_get=.. (lo-hi) ns_per_run=.. dry=.. hits=..
 * The daemon adds per get a conflict check on empty lists (the box test,
 * hoist-conflict-cost's box_ns) and a clock read for a recorded miss.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "phase.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static volatile uint64_t sink;

/* One run: begin, G gets, end. random: places drawn anew. */
static void one_run(struct phase_table *t, uint32_t gets, int random, uint64_t *places)
{
	uint32_t n;
	struct phase_get *g = phase_begin(t, 0x1234, &n);
	sink += n ? g[0].off : 0;
	for (uint32_t i = 0; i < gets; i++) {
		uint64_t off = random ? (xorshift() % 1024) * 256 : places[i];
		sink += (uint64_t)phase_get(t, 2, off, 256);
	}
	phase_end(t);
}

int main(int argc, char **argv)
{
	uint32_t gets = 32, runs = 2000, reps = 7;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--gets") && i + 1 < argc)
			gets = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = (uint32_t)atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: hoist-phase-cost [--gets G] [--runs R] [--reps N]\n");
			return 2;
		}
	}
	if (!gets || gets > 8192 || !runs || !reps || reps > 1000) {
		fprintf(stderr, "hoist-phase-cost: want 1 <= G <= 8192, R >= 1, 1 <= N <= 1000\n");
		return 2;
	}
	uint64_t *places = malloc(gets * sizeof(*places));
	double *per_get = malloc(reps * sizeof(double)), *per_run = malloc(reps * sizeof(double));
	if (!places || !per_get || !per_run)
		return 2;
	for (uint32_t i = 0; i < gets; i++)
		places[i] = (xorshift() % 1024) * 256;
	for (int random = 1; random >= 0; random--) {
		struct phase_table t;
		if (phase_init_periods(&t, 32, 8192, PHASE_PERIOD_MAX)) {
			fprintf(stderr, "hoist-phase-cost: phase_init failed\n");
			return 2;
		}
		for (uint32_t w = 0; w < 8; w++)
			one_run(&t, gets, random, places);
		struct phase_stats st0 = t.st;
		for (uint32_t r = 0; r < reps; r++) {
			uint64_t t0 = now_ns();
			for (uint32_t k = 0; k < runs; k++)
				one_run(&t, gets, random, places);
			double ns = (double)(now_ns() - t0) / runs;
			per_run[r] = ns;
			per_get[r] = ns / gets;
		}
		qsort(per_get, reps, sizeof(double), cmp_d);
		qsort(per_run, reps, sizeof(double), cmp_d);
		uint64_t nruns = (uint64_t)reps * runs;
		printf("pattern=%s gets=%u runs=%u reps=%u ns_per_get=%.1f (%.1f-%.1f) ns_per_run=%.0f "
		       "dry=%.2f hits=%.2f recorded=%.2f (per run)\n",
		       random ? "random" : "repeat", gets, runs, reps, per_get[reps / 2], per_get[0],
		       per_get[reps - 1], per_run[reps / 2], (double)(t.st.dry - st0.dry) / (double)nruns,
		       (double)(t.st.hits - st0.hits) / (double)nruns,
		       (double)(t.st.recorded - st0.recorded) / (double)nruns);
		phase_fini(&t);
	}
	free(places);
	free(per_get);
	free(per_run);
	return 0;
}
