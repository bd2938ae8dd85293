/*
 * The floor of a one-node barrier of 2 processes: what a barrier costs
 * here with nothing around it. Two processes (fork) share one mapping; in
 * barrier k each stores k in its own cache line (release) and spins with
 * pause on the other's line (acquire) until it reached k: the layout of
 * libhoist's node barrier (client/sync.c, nb_in) without the notify for
 * the daemon, the liveness check and the sleep. No yield, no sleep: on a
 * busy machine the spinner that lost its CPU costs whole time slices.
 *
 *   spin-barrier [--time-ms T]     prints "row barrier ns X" (shmem_bench's
 *                                  format; bench/run-shmem.sh's f1 column)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

struct line {
	_Alignas(64) uint32_t k;
	char pad[60];
};

static void run(struct line *l, int me, uint32_t from, uint32_t n)
{
	for (uint32_t k = from; k != from + n; k++) {
		__atomic_store_n(&l[me].k, k, __ATOMIC_RELEASE);
		while ((int32_t)(__atomic_load_n(&l[1 - me].k, __ATOMIC_ACQUIRE) - k) < 0)
			bench_cpu_relax();
	}
}

int main(int argc, char **argv)
{
	long time_ms = 50;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--time-ms") && i + 1 < argc)
			time_ms = atol(argv[++i]);
		else {
			fprintf(stderr, "usage: spin-barrier [--time-ms T]\n");
			return 2;
		}
	}
	/* [0], [1]: the PEs' lines; [2].k: the count PE 0 chose */
	struct line *l = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (l == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	int me = pid == 0;
	uint32_t k = 1, n = 1000;
	run(l, me, k, n); /* warm up; PE 0 times it to size the measurement */
	k += n;
	uint64_t t0 = bench_now_ns();
	run(l, me, k, n);
	k += n;
	if (me == 0) {
		double est = (double)(bench_now_ns() - t0) / n;
		double want = (double)time_ms * 1e6 / (est > 1 ? est : 1);
		__atomic_store_n(&l[2].k, want < 1000 ? 1000u : want > 5e7 ? 50000000u : (uint32_t)want,
				 __ATOMIC_RELEASE);
	}
	run(l, me, k, 1); /* PE 1 sees the count after this one */
	k += 1;
	n = __atomic_load_n(&l[2].k, __ATOMIC_ACQUIRE);
	t0 = bench_now_ns();
	run(l, me, k, n);
	double ns = (double)(bench_now_ns() - t0) / n;
	if (me == 1)
		_exit(0);
	int st;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "spin-barrier: the other process failed\n");
		return 1;
	}
	printf("row barrier ns %.1f\n", ns);
	return 0;
}
