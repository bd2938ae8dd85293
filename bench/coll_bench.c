/*
 * coll_bench: collective latency, built twice from this file: against
 * libhoist (hoist-coll-bench, run with hoistrun) and against MPI
 * (hoist-coll-mpi, -DCOLL_MPI, run with mpirun), so both sides time the
 * very same loop. bench/run-coll.sh runs both and prints the ratios.
 *
 *   hoist-coll-bench [--reps N] [--scale F] [--tsv]
 *
 * Rows: barrier; broadcast, allreduce (double sum) and alltoall of 8 B and
 * 64 KiB (alltoall: per pair of PEs). Each rep: a barrier, then `iters`
 * back-to-back calls timed on rank 0; the value is microseconds per call.
 * Results are checked after the timed loops (a collective that moves
 * nothing fails instead of looking fast). --tsv prints one line per row:
 * "row", name, "us", every rep's value (what run-coll.sh reads).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifdef COLL_MPI
#include <mpi.h>
#define IMPL "mpi"
static int me, np;
static void *sym_alloc(size_t n) { return malloc(n); }
static int b_init(int *argc, char ***argv)
{
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	return 0;
}
static void b_fini(void) { MPI_Finalize(); }
static int b_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
static int b_bcast(void *dst, void *src, size_t n)
{
	if (me == 0)
		memcpy(dst, src, n);
	return MPI_Bcast(dst, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
}
static int b_allreduce(double *dst, double *src, size_t count)
{
	return MPI_Allreduce(src, dst, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
static int b_alltoall(void *dst, void *src, size_t n)
{
	return MPI_Alltoall(src, (int)n, MPI_BYTE, dst, (int)n, MPI_BYTE, MPI_COMM_WORLD);
}
#else
#include "hoist.h"
#define IMPL "hoist"
static int me, np;
static void *sym_alloc(size_t n) { return hoist_malloc(n); }
static int b_init(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	int rc = hoist_init();
	if (rc)
		return rc;
	me = hoist_rank();
	np = hoist_size();
	return 0;
}
static void b_fini(void) { hoist_finalize(); }
static int b_barrier(void) { return hoist_barrier(); }
static int b_bcast(void *dst, void *src, size_t n) { return hoist_broadcast(dst, src, n, 0); }
static int b_allreduce(double *dst, double *src, size_t count)
{
	return hoist_allreduce(dst, src, count, HOIST_DOUBLE, HOIST_SUM);
}
static int b_alltoall(void *dst, void *src, size_t n) { return hoist_alltoall(dst, src, n); }
#endif

enum kind { K_BARRIER, K_BCAST, K_ALLREDUCE, K_ALLTOALL };

struct row {
	const char *name;
	enum kind kind;
	size_t bytes;
	unsigned iters;
};

static const struct row rows[] = {
	{"barrier", K_BARRIER, 0, 2000},
	{"broadcast 8 B", K_BCAST, 8, 2000},
	{"broadcast 64 KiB", K_BCAST, 65536, 300},
	{"allreduce 8 B", K_ALLREDUCE, 8, 2000},
	{"allreduce 64 KiB", K_ALLREDUCE, 65536, 200},
	{"alltoall 8 B", K_ALLTOALL, 8, 1000},
	{"alltoall 64 KiB", K_ALLTOALL, 65536, 50},
};

static char *A, *B;

static int run_once(const struct row *r)
{
	switch (r->kind) {
	case K_BARRIER: return b_barrier();
	case K_BCAST: return b_bcast(B, A, r->bytes);
	case K_ALLREDUCE: return b_allreduce((double *)B, (double *)A, r->bytes / 8);
	case K_ALLTOALL: return b_alltoall(B, A, r->bytes);
	}
	return -1;
}

static int check(const struct row *r)
{
	size_t n = r->bytes;
	switch (r->kind) {
	case K_BARRIER:
		return 0;
	case K_BCAST:
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)B[i] != (unsigned char)(i * 7 + 1))
				return 1;
		return 0;
	case K_ALLREDUCE:
		for (size_t i = 0; i < n / 8; i++) {
			double want = 0;
			for (int p = 0; p < np; p++)
				want += (double)(p + (int)(i % 13));
			if (((double *)B)[i] != want)
				return 1;
		}
		return 0;
	case K_ALLTOALL:
		for (int p = 0; p < np; p++)
			for (size_t i = 0; i < n; i++)
				if ((unsigned char)B[(size_t)p * n + i] != (unsigned char)(p * 31 + me * 7 + (int)i))
					return 1;
		return 0;
	}
	return 1;
}

static void fill(const struct row *r)
{
	size_t n = r->bytes;
	if (r->kind == K_BCAST)
		for (size_t i = 0; i < n; i++)
			A[i] = (char)(me == 0 ? i * 7 + 1 : 0xee);
	if (r->kind == K_ALLREDUCE)
		for (size_t i = 0; i < n / 8; i++)
			((double *)A)[i] = (double)(me + (int)(i % 13));
	if (r->kind == K_ALLTOALL)
		for (int q = 0; q < np; q++)
			for (size_t i = 0; i < n; i++)
				A[(size_t)q * n + i] = (char)(me * 31 + q * 7 + (int)i);
}

int main(int argc, char **argv)
{
	int reps = 7, tsv = 0;
	double scale = 1.0;
	if (b_init(&argc, &argv)) {
		fprintf(stderr, "coll_bench: init failed\n");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--scale") && i + 1 < argc)
			scale = atof(argv[++i]);
		else if (!strcmp(argv[i], "--tsv"))
			tsv = 1;
	}
	if (reps < 1 || reps > 100)
		reps = 7;
	size_t area = (size_t)np * 65536 + 64;
	A = sym_alloc(area);
	B = sym_alloc(area);
	if (!A || !B) {
		fprintf(stderr, "coll_bench: no memory\n");
		return 1;
	}
	int failed = 0;
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		const struct row *r = &rows[k];
		unsigned iters = (unsigned)(r->iters * scale);
		if (iters < 5)
			iters = 5;
		double v[100];
		fill(r);
		for (unsigned i = 0; i < iters / 10 + 2; i++) /* warm up */
			failed |= run_once(r) != 0;
		for (int rep = 0; rep < reps; rep++) {
			failed |= b_barrier() != 0;
			uint64_t t0 = bench_now_ns();
			for (unsigned i = 0; i < iters; i++)
				failed |= run_once(r) != 0;
			v[rep] = (double)(bench_now_ns() - t0) / 1e3 / iters;
		}
		if (check(r)) {
			fprintf(stderr, "coll_bench %s rank %d: %s result wrong\n", IMPL, me, r->name);
			failed = 1;
		}
		b_barrier();
		if (me != 0)
			continue;
		if (tsv) {
			printf("row\t%s\tus", r->name);
			for (int rep = 0; rep < reps; rep++)
				printf("\t%.3f", v[rep]);
			printf("\n");
		} else {
			qsort(v, (size_t)reps, sizeof(double), bench_cmp_double);
			printf("%-20s %s %d PEs: median %9.2f us  min %9.2f  max %9.2f\n", r->name, IMPL, np,
			       bench_median_sorted(v, reps), v[0], v[reps - 1]);
		}
		fflush(stdout);
	}
	if (failed)
		fprintf(stderr, "coll_bench %s rank %d: a call failed\n", IMPL, me);
	b_fini();
	return failed;
}
