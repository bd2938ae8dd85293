/* A classic OpenSHMEM program (pre-1.2 style, as old benchmarks are
 * written): built unmodified with oshcc by classic.sh. A token goes round
 * the ring of PEs; PE 0 prints the sum it accumulated. */
#include <shmem.h>
#include <stdio.h>

int main(void)
{
	start_pes(0);
	int me = _my_pe(), n = _num_pes();
	long *token = (long *)shmalloc(sizeof(long));
	long *flag = (long *)shmalloc(sizeof(long));
	int *count = (int *)shmalloc(sizeof(int));
	*token = 0;
	*flag = 0;
	*count = 0;
	shmem_barrier_all();
	if (me == 0) {
		long t = 1;
		shmem_long_put(token, &t, 1, 1 % n);
		shmem_fence();
		shmem_long_p(flag, 1, 1 % n);
	}
	shmem_long_wait_until(flag, SHMEM_CMP_EQ, 1);
	if (me != 0) {
		long t = *token + me + 1;
		shmem_long_put(token, &t, 1, (me + 1) % n);
		shmem_fence();
		shmem_long_p(flag, 1, (me + 1) % n);
	}
	shmem_int_fadd(count, 1, 0);
	shmem_barrier_all();
	if (me == 0)
		printf("ring: token %ld after %d PEs, count %d\n", *token, n, *count);
	shfree(count);
	shfree(flag);
	shfree(token);
	return 0;
}
