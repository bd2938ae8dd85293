/*
 * shmem-coll: small collectives over all PEs, written against <shmem.h>
 * only, so hoist's oshcc and Open MPI's build the same source
 * (bench/run-nodecoll.sh runs both side by side on one node). Any number of
 * PEs. Output lines "row NAME ns VALUE" (ns per call on PE 0, a loop of
 * back-to-back calls after a barrier):
 *   barrier     shmem_barrier_all
 *   bcast-8     broadcast of one 64-bit word from PE 0
 *   allred-8    sum reduction of one long
 *   a2a-8       alltoall, 8 B per pair of PEs
 *   fcollect-8  fcollect, 8 B per PE
 * With OpenSHMEM 1.5 (hoist) the team forms over SHMEM_TEAM_WORLD
 * (shmem_broadcastmem, shmem_long_sum_reduce, shmem_alltoallmem,
 * shmem_fcollectmem); with 1.4 (Open MPI 4.1's oshmem, which has no teams)
 * the active-set forms over every PE (shmem_broadcast64, the root's dest
 * not written, shmem_long_sum_to_all, shmem_alltoall64, shmem_fcollect64,
 * pSync/pWrk alternating between two sets as the spec asks for
 * back-to-back calls). Every call's result is checked on every PE; a wrong
 * one ends the job with status 1.
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#if SHMEM_MAJOR_VERSION * 100 + SHMEM_MINOR_VERSION >= 105
#define TEAMS 1
#else
#define TEAMS 0
static long psync[2][SHMEM_REDUCE_SYNC_SIZE > SHMEM_BCAST_SYNC_SIZE ? SHMEM_REDUCE_SYNC_SIZE
									: SHMEM_BCAST_SYNC_SIZE];
static long psync_a[2][SHMEM_ALLTOALL_SYNC_SIZE > SHMEM_COLLECT_SYNC_SIZE ? SHMEM_ALLTOALL_SYNC_SIZE
									   : SHMEM_COLLECT_SYNC_SIZE];
static long pwrk[2][SHMEM_REDUCE_MIN_WRKDATA_SIZE + 1];
#endif

#define MAXPES 64
static int npes, me, smoke;
static double time_ms = 50;

static void die(const char *what)
{
	fprintf(stderr, "shmem-coll PE %d: %s\n", me, what);
	shmem_global_exit(1);
	exit(1);
}

static long sized(double est_ns, long lo, long hi)
{
	return bench_sized(est_ns, lo, hi, time_ms, smoke);
}
static uint64_t src[MAXPES], dsts[2][MAXPES]; /* dst alternates: a PE may put into
						  * the next call's while another checks this one's */
static long lsrc, ldst;
static long w_n;

static long agree(long n)
{
	if (me == 0)
		for (int p = 1; p < npes; p++)
			shmem_long_p(&w_n, n, p);
	shmem_barrier_all();
	return me == 0 ? n : w_n;
}

static void barrier(long s)
{
	(void)s;
	shmem_barrier_all();
}

static void bcast(long s)
{
	uint64_t *dst = dsts[s & 1];
	if (me == 0)
		src[0] = (uint64_t)s;
#if TEAMS
	shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, 8, 0);
#else
	shmem_broadcast64(dst, src, 1, 0, 0, 0, npes, psync[s & 1]);
#endif
	if (me != 0 && dst[0] != (uint64_t)s)
		die("broadcast delivered wrong data");
}

static void allred(long s)
{
	lsrc = (me + 1) + s;
#if TEAMS
	shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &ldst, &lsrc, 1);
#else
	shmem_long_sum_to_all(&ldst, &lsrc, 1, 0, 0, npes, pwrk[s & 1], psync[s & 1]);
#endif
	if (ldst != (long)npes * (npes + 1) / 2 + (long)npes * s)
		die("sum reduction wrong");
}

static void a2a(long s)
{
	uint64_t *dst = dsts[s & 1];
	for (int p = 0; p < npes; p++)
		src[p] = (uint64_t)s * 1000003u + (uint64_t)me * 64u + (uint64_t)p;
#if TEAMS
	shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, 8);
#else
	shmem_alltoall64(dst, src, 1, 0, 0, npes, psync_a[s & 1]);
#endif
	for (int p = 0; p < npes; p++)
		if (dst[p] != (uint64_t)s * 1000003u + (uint64_t)p * 64u + (uint64_t)me)
			die("alltoall delivered wrong data");
}

static void fcollect(long s)
{
	uint64_t *dst = dsts[s & 1];
	src[0] = (uint64_t)s * 1000003u + (uint64_t)me;
#if TEAMS
	shmem_fcollectmem(SHMEM_TEAM_WORLD, dst, src, 8);
#else
	shmem_fcollect64(dst, src, 1, 0, 0, npes, psync_a[s & 1]);
#endif
	for (int p = 0; p < npes; p++)
		if (dst[p] != (uint64_t)s * 1000003u + (uint64_t)p)
			die("fcollect delivered wrong data");
}

static double run(void (*f)(long), long *stamp, long n)
{
	shmem_barrier_all();
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		f(++*stamp);
	double ns = (double)(bench_now_ns() - t0) / (double)n;
	shmem_barrier_all();
	return ns;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--smoke")) {
			smoke = 1;
		} else if (!strcmp(argv[i], "--time-ms") && i + 1 < argc) {
			time_ms = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: shmem-coll [--time-ms T] [--smoke]\n");
			return 2;
		}
	}
#if !TEAMS
	for (int k = 0; k < 2; k++) {
		for (size_t j = 0; j < sizeof psync[k] / sizeof(long); j++)
			psync[k][j] = SHMEM_SYNC_VALUE;
		for (size_t j = 0; j < sizeof psync_a[k] / sizeof(long); j++)
			psync_a[k][j] = SHMEM_SYNC_VALUE;
	}
#endif
	shmem_init();
	me = shmem_my_pe();
	npes = shmem_n_pes();
	if (npes > MAXPES)
		die("too many PEs");
	shmem_barrier_all();
	static void (*const fn[])(long) = {barrier, bcast, allred, a2a, fcollect};
	static const char *name[] = {"barrier", "bcast-8", "allred-8", "a2a-8", "fcollect-8"};
	long stamp = 0;
	for (int k = 0; k < 5; k++) {
		double est = run(fn[k], &stamp, smoke ? 2 : 50);
		double v = run(fn[k], &stamp, agree(sized(est, 10, 2000000)));
		if (me == 0)
			printf("row %s ns %.1f\n", name[k], v);
	}
	shmem_finalize();
	return 0;
}
