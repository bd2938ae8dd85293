/*
 * osh_exit.c - shmem_global_exit: the last PE exits with status 3 while the
 * others wait for a variable nobody sets. Their waits end with the job's
 * error (a PE died: kept for shmemx_last_error), and the job's status is
 * the exiting PE's, 3 (checked by the ctest command).
 */
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>

int main(void)
{
	shmem_init();
	long *never = shmem_calloc(1, sizeof(long));
	int me = shmem_my_pe(), n = shmem_n_pes();
	shmem_barrier_all();
	if (me == n - 1)
		shmem_global_exit(3);
	shmem_long_wait_until(never, SHMEM_CMP_EQ, 1);
	int e = shmemx_last_error();
	fprintf(stderr, "PE %d: the wait ended: %s\n", me, shmemx_strerror(e));
	return e ? 1 : 2; /* 2: a wait that ended without error or value */
}
