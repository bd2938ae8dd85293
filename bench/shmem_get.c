/*
 * shmem-get: Open MPI's OpenSHMEM, the reference for hoist-ptr-bench.
 * Built and run by bench/run-ptr.sh:
 *   oshcc -O2 bench/shmem_get.c -o shmem-get
 *   oshrun --allow-run-as-root --oversubscribe --mca osc ^rdma -np 2 ./shmem-get [--reps N]
 * PE 0 reads from PE 1 (same node) into a private buffer:
 *   shmem_getmem   shmem_getmem(dst, src, n, 1)
 *   shmem_ptr      p = shmem_ptr(src, 1); memcpy(dst, p, n)  (if not NULL)
 * Same sizes, calibration, reps and output lines as hoist-ptr-bench
 * ("row METHOD SIZE median min max", ns per operation).
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static unsigned char pat(size_t i)
{
	return (unsigned char)(i * 131u + 7u);
}

static double pass(int m, char *sym, char *priv, size_t n, long iters)
{
	uint64_t t0 = now_ns();
	if (m == 0) {
		for (long i = 0; i < iters; i++)
			shmem_getmem(priv, sym, n, 1);
	} else {
		for (long i = 0; i < iters; i++) {
			const char *p = shmem_ptr(sym, 1);
			memcpy(priv, p, n);
			__asm__ __volatile__("" ::"r"(priv) : "memory");
		}
	}
	return (double)(now_ns() - t0) / (double)iters;
}

int main(int argc, char **argv)
{
	int reps = 7;
	if (argc > 2 && !strcmp(argv[1], "--reps"))
		reps = atoi(argv[2]);
	if (reps < 1 || reps > 51)
		reps = 7;
	static const size_t sizes[] = {8, 4096, 65536};
	static const char *const names[] = {"shmem_getmem", "shmem_ptr"};
	shmem_init();
	if (shmem_n_pes() != 2) {
		fprintf(stderr, "shmem-get: needs 2 PEs\n");
		shmem_global_exit(1);
	}
	char *sym = shmem_malloc(65536);
	char *priv = malloc(65536);
	for (size_t i = 0; i < 65536; i++)
		sym[i] = (char)pat(i);
	shmem_barrier_all();
	if (shmem_my_pe() == 0) {
		int have_ptr = shmem_ptr(sym, 1) != NULL;
		if (!have_ptr)
			printf("note shmem_ptr(sym, 1) is NULL on this transport\n");
		for (int s = 0; s < 3; s++) {
			size_t n = sizes[s];
			for (int m = 0; m < 2; m++) {
				if (m == 1 && !have_ptr)
					continue;
				double est = pass(m, sym, priv, n, 64);
				long iters = (long)(30e6 / (est > 1 ? est : 1));
				iters = iters < 100 ? 100 : iters > 20000000 ? 20000000 : iters;
				pass(m, sym, priv, n, iters / 4 + 1);
				double v[51];
				for (int r = 0; r < reps; r++)
					v[r] = pass(m, sym, priv, n, iters);
				for (size_t i = 0; i < n; i++)
					if ((unsigned char)priv[i] != pat(i)) {
						fprintf(stderr, "shmem-get: %s data differs at %zu\n", names[m], i);
						shmem_global_exit(1);
					}
				memset(priv, 0, n);
				qsort(v, (size_t)reps, sizeof(double), cmp);
				double med = (reps & 1) ? v[reps / 2] : 0.5 * (v[reps / 2 - 1] + v[reps / 2]);
				printf("row %s %zu %.1f %.1f %.1f\n", names[m], n, med, v[0], v[reps - 1]);
				fflush(stdout);
			}
		}
	}
	shmem_barrier_all();
	shmem_free(sym);
	free(priv);
	shmem_finalize();
	return 0;
}
