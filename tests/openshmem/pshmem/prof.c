/*
 * prof.c - a profiling tool in the PMPI style, as a tool for any OpenSHMEM
 * implementation is written: it includes pshmem.h, defines shmem_X itself
 * (counting the calls) and reaches the library through pshmem_X. Built by
 * oshcc with -Werror (an undeclared pshmem_X fails the build) and run by
 * oshrun; the results of the wrapped calls are checked, so the pshmem_
 * names must be the library's real routines. Prints "prof: ok" on PE 0.
 */
#include <pshmem.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

static long n_putmem, n_long_p, n_long_g, n_fadd, n_sum, n_barrier, n_init;

void shmem_init(void)
{
	n_init++;
	pshmem_init();
}
void shmem_putmem(void *dest, const void *source, size_t nelems, int pe)
{
	n_putmem++;
	pshmem_putmem(dest, source, nelems, pe);
}
void shmem_long_p(long *dest, long value, int pe)
{
	n_long_p++;
	pshmem_long_p(dest, value, pe);
}
long shmem_long_g(const long *source, int pe)
{
	n_long_g++;
	return pshmem_long_g(source, pe);
}
long shmem_long_atomic_fetch_add(long *dest, long value, int pe)
{
	n_fadd++;
	return pshmem_long_atomic_fetch_add(dest, value, pe);
}
int shmem_long_sum_reduce(shmem_team_t team, long *dest, const long *source, size_t nreduce)
{
	n_sum++;
	return pshmem_long_sum_reduce(team, dest, source, nreduce);
}
void shmem_barrier_all(void)
{
	n_barrier++;
	pshmem_barrier_all();
}

static long word, counter, buf[4], src[4], red;
static int bad;
#define CHECK(c)                                                                            \
	do {                                                                                \
		if (!(c)) {                                                                 \
			fprintf(stderr, "prof: PE %d: check failed: %s\n", shmem_my_pe(), #c); \
			bad = 1;                                                            \
		}                                                                           \
	} while (0)

int main(void)
{
	shmem_init();
	int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n;
	for (int i = 0; i < 4; i++)
		src[i] = me * 10 + i;
	shmem_putmem(buf, src, sizeof(src), right);
	shmem_long_p(&word, 100 + me, right);
	shmem_long_atomic_fetch_add(&counter, me + 1, 0);
	shmem_barrier_all();
	int left = (me + n - 1) % n;
	for (int i = 0; i < 4; i++)
		CHECK(buf[i] == left * 10 + i);
	CHECK(word == 100 + left);
	CHECK(shmem_long_g(&word, right) == 100 + me);
	if (me == 0)
		CHECK(counter == (long)n * (n + 1) / 2);
	shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &red, &word, 1);
	CHECK(red == 100L * n + (long)n * (n - 1) / 2);
	/* every call above went through the wrappers once, none more */
	CHECK(n_init == 1 && n_putmem == 1 && n_long_p == 1 && n_long_g == 1 && n_fadd == 1 &&
	      n_sum == 1 && n_barrier == 1);
	if (me == 0 && !bad)
		printf("prof: ok, %d PEs, calls init %ld putmem %ld long_p %ld long_g %ld fadd %ld "
		       "sum %ld barrier_all %ld\n",
		       n, n_init, n_putmem, n_long_p, n_long_g, n_fadd, n_sum, n_barrier);
	shmem_finalize();
	return bad;
}
