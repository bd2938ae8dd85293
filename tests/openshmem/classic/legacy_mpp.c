/* SGI/Cray-era SHMEM program, built unmodified with oshcc: mpp/shmem.h,
 * start_pes, _my_pe/_num_pes, a pSync/pWrk reduction over all PEs, and no
 * shmem_finalize (start_pes programs end with return from main). */
#include <mpp/shmem.h>
#include <mpp/shmemx.h>
#include <stdio.h>

static long pSync[_SHMEM_REDUCE_SYNC_SIZE];
static int pWrk[_SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static int mine, total;

int main(void)
{
	for (int i = 0; i < _SHMEM_REDUCE_SYNC_SIZE; i++)
		pSync[i] = _SHMEM_SYNC_VALUE;
	start_pes(0);
	mine = _my_pe() + 1;
	shmem_barrier_all();
	shmem_int_sum_to_all(&total, &mine, 1, 0, 0, _num_pes(), pWrk, pSync);
	printf("legacy: PE %d of %d total %d\n", _my_pe(), _num_pes(), total);
	return 0;
}
