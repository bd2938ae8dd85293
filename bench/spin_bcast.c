/*
 * The floor of a one-node broadcast of 8 B between 2 processes: what it
 * costs here with nothing around it, in the layout of libhoist's node
 * collectives (client/nodecoll.c): the root's ring of HOIST_NC_SLOTS slots
 * of one cache line each, broadcast k writes its 8 B and then k (release)
 * into slot k % SLOTS and returns; the reader spins (pause) on that slot's
 * word until it reads k (acquire), copies the 8 B and stores k in its own
 * done line (release). The root waits only when it would reuse a slot the
 * reader has not read yet (done < k - SLOTS), and reads the reader's done
 * line only then. No parameter check, no liveness check, no sleep.
 *
 *   spin-bcast [--time-ms T] [--fence]   prints "row bcast-8 ns X" (PE 0,
 *                                        the root; shmem_bench's format:
 *                                        bench/run-shmem.sh's f1 column)
 * --fence: a full fence after each store of k (what a writer that must
 * wake sleepers does, Dekker with them): the floor with that cost in.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define SLOTS 32u /* HOIST_NC_SLOTS */

struct line {
	_Alignas(64) uint32_t k;
	uint32_t pad0;
	uint64_t data;
	char pad[48];
};

/* [0, SLOTS): the root's slots; [SLOTS]: the reader's done; [SLOTS+1].k:
 * the count PE 0 chose */
static struct line *l;
static int fence;

static void run(int me, uint32_t from, uint32_t n, uint64_t *sum)
{
	uint32_t done_seen = from - 1;
	for (uint32_t k = from; k != from + n; k++) {
		struct line *s = &l[k % SLOTS];
		if (me == 0) {
			while ((int32_t)(done_seen - (k - SLOTS)) < 0) {
				done_seen = __atomic_load_n(&l[SLOTS].k, __ATOMIC_ACQUIRE);
				bench_cpu_relax();
			}
			s->data = (uint64_t)k * 3;
			__atomic_store_n(&s->k, k, __ATOMIC_RELEASE);
			if (fence)
				__atomic_thread_fence(__ATOMIC_SEQ_CST);
		} else {
			while (__atomic_load_n(&s->k, __ATOMIC_ACQUIRE) != k)
				bench_cpu_relax();
			*sum += s->data;
			__atomic_store_n(&l[SLOTS].k, k, __ATOMIC_RELEASE);
			if (fence)
				__atomic_thread_fence(__ATOMIC_SEQ_CST);
		}
	}
	if (me == 0) /* the last one is read: the next run starts clean */
		while (__atomic_load_n(&l[SLOTS].k, __ATOMIC_ACQUIRE) != from + n - 1)
			bench_cpu_relax();
}

int main(int argc, char **argv)
{
	long time_ms = 50;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--time-ms") && i + 1 < argc)
			time_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--fence"))
			fence = 1;
		else {
			fprintf(stderr, "usage: spin-bcast [--time-ms T] [--fence]\n");
			return 2;
		}
	}
	l = mmap(NULL, (SLOTS + 2) * sizeof(struct line), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
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
	uint64_t sum = 0;
	uint32_t k = 1, n = 1000;
	run(me, k, n, &sum); /* warm up; PE 0 times it to size the measurement */
	k += n;
	uint64_t t0 = bench_now_ns();
	run(me, k, n, &sum);
	k += n;
	if (me == 0) {
		double est = (double)(bench_now_ns() - t0) / n;
		double want = (double)time_ms * 1e6 / (est > 1 ? est : 1);
		l[SLOTS + 1].data = want < 1000 ? 1000u : want > 5e7 ? 50000000u : (uint32_t)want;
	}
	run(me, k, 1, &sum); /* PE 1 sees the count after this one */
	k += 1;
	n = (uint32_t)l[SLOTS + 1].data;
	uint64_t s0 = sum;
	t0 = bench_now_ns();
	run(me, k, n, &sum);
	double ns = (double)(bench_now_ns() - t0) / n;
	if (me == 1) {
		/* the data of k .. k+n-1, each 3 * its number */
		uint64_t want = 3 * ((uint64_t)n * k + (uint64_t)n * (n - 1) / 2);
		_exit(sum - s0 == want ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "spin-bcast: the reader failed (wrong data or died)\n");
		return 1;
	}
	printf("row bcast-8 ns %.1f\n", ns);
	return 0;
}
