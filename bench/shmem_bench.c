/*
 * shmem-bench: point-to-point and collective costs written against
 * <shmem.h> only (OpenSHMEM 1.4 calls, so Open MPI's oshcc compiles it as
 * well as hoist's). bench/run-shmem.sh builds it with both and runs them
 * side by side:
 *   build/openshmem/oshcc -O2 -Ibench bench/shmem_bench.c -o shmem-bench-hoist
 *   oshcc -O2 -Ibench bench/shmem_bench.c -o shmem-bench-ompi
 * Two PEs. Output lines "row NAME UNIT VALUE", printed by PE 0:
 *   put-S     shmem_putmem(S bytes to PE 1), ns per call (the caller may
 *             go on: local completion; one shmem_quiet after the loop),
 *             S = 8, 64, 512, 4 KiB, 32 KiB, 256 KiB, 1 MiB
 *   putq-S    shmem_putmem + shmem_quiet, ns per put (remote completion)
 *   get-S     shmem_getmem(S bytes from PE 1), ns per get
 *   putbw     N shmem_putmem of 1 MiB, then one shmem_quiet, MB/s
 *   nbi       N shmem_putmem_nbi of 8 B, then one shmem_quiet, Mops/s
 *   fadd      shmem_long_atomic_fetch_add(w, 1, 1), ns
 *   barrier   shmem_barrier_all, ns
 *   bcast-8, bcast-64k   shmem_broadcast64 from PE 0 (pSync form), ns
 *   sum-1, sum-1024      shmem_long_sum_to_all of 1 / 1024 longs, ns
 * Every result is checked, a wrong one ends the job with status 1: the
 * last put of every size is read back and compared byte for byte, every
 * get's buffer is compared with PE 1's pattern, the 8 B non-blocking puts'
 * slots and the fetch-add counter are read back, every broadcast's first
 * and last word (and the last one whole) and every sum's first and last
 * element are checked on PE 1 (and the sums on PE 0).
 * During the point-to-point tests PE 1 waits in shmem_long_wait_until on a
 * control word: that drives the progress of a transport whose target must
 * progress (UCX over tcp), as an application waiting for data would.
 * Each measurement runs a short estimate, then as many operations as fill
 * --time-ms (default 100) milliseconds, within fixed bounds.
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define MAXSZ (1L << 20)
#define NBI_SLOTS 1024
#define BCAST_BIG 8192 /* 64 KiB of 64-bit words */
#define SUM_BIG 1024

static long w_fadd, w_ctl, w_n;
static long psync_b[2][SHMEM_BCAST_SYNC_SIZE];
static long psync_r[2][SHMEM_REDUCE_SYNC_SIZE];
static long pwrk[2][SUM_BIG / 2 + 1 + SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long sum_src[SUM_BIG], sum_dst[SUM_BIG];
static long nbi_slots[NBI_SLOTS];

static char *sbuf, *dbuf, *local; /* sbuf, dbuf symmetric; local private */
static uint64_t *bsrc, *bdst;     /* broadcast source and target, symmetric */
static double time_ms = 100;
static int smoke, me;

static void die(const char *what)
{
	fprintf(stderr, "shmem-bench: PE %d: %s\n", me, what);
	shmem_global_exit(1);
	exit(1);
}

static long sized(double est_ns, long lo, long hi)
{
	return bench_sized(est_ns, lo, hi, time_ms, smoke);
}

/* the byte pattern of PE pe's source buffer, stamp s */
static unsigned char pat(int pe, long s, long i)
{
	return (unsigned char)(pe * 131 + s * 17 + i * 7 + (i >> 8));
}

static void fill(char *b, int pe, long s, long len)
{
	for (long i = 0; i < len; i++)
		b[i] = (char)pat(pe, s, i);
}

static void check_fill(const char *b, int pe, long s, long len, const char *what)
{
	for (long i = 0; i < len; i++)
		if ((unsigned char)b[i] != pat(pe, s, i)) {
			fprintf(stderr, "shmem-bench: %s: byte %ld of %ld wrong\n", what, i, len);
			die("data check failed");
		}
}

static double run_put(long len, int quiet, long n)
{
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		shmem_putmem(dbuf, sbuf, (size_t)len, 1);
		if (quiet)
			shmem_quiet();
	}
	if (!quiet)
		shmem_quiet();
	return (double)(bench_now_ns() - t0) / (double)n;
}

static double run_get(long len, long n)
{
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		shmem_getmem(local, sbuf, (size_t)len, 1);
	return (double)(bench_now_ns() - t0) / (double)n;
}

static double run_putbw(long n)
{
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		shmem_putmem(dbuf, sbuf, MAXSZ, 1);
	shmem_quiet();
	return (double)n * MAXSZ * 1e3 / (double)(bench_now_ns() - t0); /* MB/s */
}

/* round r puts r * NBI_SLOTS + j into slot j (the sources stay untouched
 * until the shmem_quiet, as the non-blocking form requires) */
static long nbi_src[NBI_SLOTS];

static double run_nbi(long r, long n)
{
	for (long j = 0; j < NBI_SLOTS; j++)
		nbi_src[j] = r * NBI_SLOTS + j;
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		shmem_putmem_nbi(&nbi_slots[i % NBI_SLOTS], &nbi_src[i % NBI_SLOTS], sizeof(long), 1);
	shmem_quiet();
	return (double)n * 1e3 / (double)(bench_now_ns() - t0); /* Mops/s */
}

static double run_fadd(long *expect, long n)
{
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		if (shmem_long_atomic_fetch_add(&w_fadd, 1, 1) != (*expect)++)
			die("fetch-add returned a wrong value");
	return (double)(bench_now_ns() - t0) / (double)n;
}

/* PE 0 decides a count for a collective test; both PEs return it */
static long agree(long n)
{
	if (me == 0)
		shmem_long_p(&w_n, n, 1);
	shmem_barrier_all();
	return me == 0 ? n : w_n;
}

static double run_barrier(long n)
{
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		shmem_barrier_all();
	return (double)(bench_now_ns() - t0) / (double)n;
}

/* broadcasts alternate between two pSync arrays, and so do reductions
 * (with their pWrk): a PE may enter the next one while the other still
 * leaves the last */
static double run_bcast(long words, long *stamp, long n)
{
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		long s = ++*stamp;
		if (me == 0) {
			bsrc[words - 1] = (uint64_t)s * 3;
			bsrc[0] = (uint64_t)s;
		}
		shmem_broadcast64(bdst, bsrc, (size_t)words, 0, 0, 0, 2, psync_b[s & 1]);
		if (me == 1 && (bdst[0] != (uint64_t)s || (words > 1 && bdst[words - 1] != (uint64_t)s * 3)))
			die("broadcast delivered wrong data");
	}
	double ns = (double)(bench_now_ns() - t0) / (double)n;
	if (me == 1)
		for (long j = 1; j < words - 1; j++)
			if (bdst[j] != (uint64_t)j * 5 + 1)
				die("broadcast body wrong");
	return ns;
}

static double run_sum(int nred, long *stamp, long n)
{
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		long s = ++*stamp;
		sum_src[nred - 1] = (me + 1) * (long)nred + s;
		sum_src[0] = (me + 1) + s;
		shmem_long_sum_to_all(sum_dst, sum_src, nred, 0, 0, 2, pwrk[s & 1], psync_r[s & 1]);
		if (sum_dst[0] != 3 + 2 * s || (nred > 1 && sum_dst[nred - 1] != 3L * nred + 2 * s))
			die("sum reduction wrong");
	}
	return (double)(bench_now_ns() - t0) / (double)n;
}

static const long sizes[] = { 8, 64, 512, 4096, 32768, 262144, MAXSZ };
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static void size_name(char *out, size_t cap, long len)
{
	if (len >= (1L << 20))
		snprintf(out, cap, "%ldm", len >> 20);
	else if (len >= 1024)
		snprintf(out, cap, "%ldk", len >> 10);
	else
		snprintf(out, cap, "%ld", len);
}

/* PE 0's point-to-point tests; PE 1 waits on w_ctl meanwhile */
static void p2p(void)
{
	char nm[24];
	for (int q = 0; q < 2; q++)
		for (int k = 0; k < NSIZES; k++) {
			long len = sizes[k];
			size_name(nm, sizeof nm, len);
			fill(sbuf, 0, len + q, len);
			double est = run_put(len, q, smoke ? 2 : 20);
			double v = run_put(len, q, sized(est, 5, 2000000));
			shmem_getmem(local, dbuf, (size_t)len, 1);
			check_fill(local, 0, len + q, len, "put read back");
			printf("row %s-%s ns %.1f\n", q ? "putq" : "put", nm, v);
		}
	for (int k = 0; k < NSIZES; k++) {
		long len = sizes[k];
		size_name(nm, sizeof nm, len);
		memset(local, 0, (size_t)len);
		double est = run_get(len, smoke ? 2 : 20);
		double v = run_get(len, sized(est, 5, 2000000));
		check_fill(local, 1, 1, len, "get");
		printf("row get-%s ns %.1f\n", nm, v);
	}
	fill(sbuf, 0, 7, MAXSZ);
	double est = 1e9 / run_putbw(smoke ? 1 : 4) * MAXSZ / 1e3; /* ns per put */
	double bw = run_putbw(sized(est, 4, 100000));
	shmem_getmem(local, dbuf, MAXSZ, 1);
	check_fill(local, 0, 7, MAXSZ, "bandwidth read back");
	printf("row putbw MB/s %.1f\n", bw);

	est = 1e3 / run_nbi(1, smoke ? 1024 : 4096);
	double rate = run_nbi(2, sized(est, NBI_SLOTS, 20000000));
	static long back[NBI_SLOTS];
	shmem_getmem(back, nbi_slots, sizeof back, 1);
	for (long j = 0; j < NBI_SLOTS; j++)
		if (back[j] != 2 * NBI_SLOTS + j)
			die("non-blocking put slot wrong");
	printf("row nbi Mops/s %.4f\n", rate);

	long next = 0;
	est = run_fadd(&next, smoke ? 10 : 200);
	double fa = run_fadd(&next, sized(est, 100, 5000000));
	if (shmem_long_atomic_fetch_add(&w_fadd, 0, 1) != next)
		die("fetch-add total wrong");
	printf("row fadd ns %.1f\n", fa);
}

static void coll(void)
{
	long bstamp = 0, rstamp = 0;
	double est = run_barrier(smoke ? 2 : 50);
	double v = run_barrier(agree(sized(est, 10, 2000000)));
	if (me == 0)
		printf("row barrier ns %.1f\n", v);

	static const long bw[2] = { 1, BCAST_BIG };
	static const char *bn[2] = { "bcast-8", "bcast-64k" };
	for (long j = 0; j < BCAST_BIG; j++)
		bsrc[j] = (uint64_t)j * 5 + 1;
	for (int k = 0; k < 2; k++) {
		est = run_bcast(bw[k], &bstamp, smoke ? 2 : 20);
		shmem_barrier_all();
		v = run_bcast(bw[k], &bstamp, agree(sized(est, 10, 1000000)));
		shmem_barrier_all();
		if (me == 0)
			printf("row %s ns %.1f\n", bn[k], v);
	}

	static const int rn[2] = { 1, SUM_BIG };
	static const char *rname[2] = { "sum-1", "sum-1024" };
	for (int k = 0; k < 2; k++) {
		est = run_sum(rn[k], &rstamp, smoke ? 2 : 20);
		shmem_barrier_all();
		v = run_sum(rn[k], &rstamp, agree(sized(est, 10, 1000000)));
		shmem_barrier_all();
		if (me == 0)
			printf("row %s ns %.1f\n", rname[k], v);
	}
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--smoke")) {
			smoke = 1;
		} else if (!strcmp(argv[i], "--time-ms") && i + 1 < argc) {
			time_ms = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: shmem-bench [--time-ms T] [--smoke]\n");
			return 2;
		}
	}
	shmem_init();
	me = shmem_my_pe();
	if (shmem_n_pes() != 2)
		die("needs 2 PEs");
	sbuf = shmem_malloc(MAXSZ);
	dbuf = shmem_malloc(MAXSZ);
	bsrc = shmem_malloc(BCAST_BIG * sizeof *bsrc);
	bdst = shmem_malloc(BCAST_BIG * sizeof *bdst);
	local = malloc(MAXSZ);
	if (!sbuf || !dbuf || !bsrc || !bdst || !local)
		die("out of memory");
	for (int k = 0; k < 2; k++) {
		for (int j = 0; j < SHMEM_BCAST_SYNC_SIZE; j++)
			psync_b[k][j] = SHMEM_SYNC_VALUE;
		for (int j = 0; j < SHMEM_REDUCE_SYNC_SIZE; j++)
			psync_r[k][j] = SHMEM_SYNC_VALUE;
	}
	if (me == 1)
		fill(sbuf, 1, 1, MAXSZ);
	shmem_barrier_all();
	if (me == 0) {
		p2p();
		shmem_long_p(&w_ctl, 1, 1);
	} else {
		shmem_long_wait_until(&w_ctl, SHMEM_CMP_NE, 0);
	}
	shmem_barrier_all();
	coll();
	shmem_barrier_all();
	free(local);
	shmem_free(bdst);
	shmem_free(bsrc);
	shmem_free(dbuf);
	shmem_free(sbuf);
	shmem_finalize();
	return 0;
}
