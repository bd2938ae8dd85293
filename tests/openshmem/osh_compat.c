/*
 * osh_compat.c - API forms that third-party OpenSHMEM programs (the SOS
 * test suite, the specification's own examples) use and that a library
 * passing its own conformance programs can still miss. Each part names the
 * bug it guards against.
 *
 * shmem_sync: OpenSHMEM 1.5 calls both the team form shmem_sync(team) and
 * the deprecated active-set form shmem_sync(PE_start, logPE_stride,
 * PE_size, pSync) by that one name; shmem.h picks by the argument count.
 * Without that, the team form does not compile (too few arguments).
 */
#include "osh_common.h"

static int flag; /* symmetric: a static of the program */
static long pSync[SHMEM_BARRIER_SYNC_SIZE];

static void sync_forms(int me, int npes)
{
	IT_WHERE("shmem_sync(team)");
	/* the team form returns int: 0 on success */
	CHECK(shmem_sync(SHMEM_TEAM_WORLD) == 0, "shmem_sync(SHMEM_TEAM_WORLD)");

	/* ordering through the team form: a put, quiet, shmem_sync(team), then
	 * the target reads the value without waiting */
	flag = -1;
	CHECK(shmem_sync(SHMEM_TEAM_WORLD) == 0, "sync before put");
	shmem_int_p(&flag, 100 + me, (me + 1) % npes);
	shmem_quiet();
	CHECK(shmem_sync(SHMEM_TEAM_WORLD) == 0, "sync after put");
	CHECK(flag == 100 + (me + npes - 1) % npes, "flag after shmem_sync(team): %d", flag);

	/* a split team: even PEs */
	shmem_team_t even;
	CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &even) == 0,
	      "split");
	if (even != SHMEM_TEAM_INVALID)
		CHECK(shmem_sync(even) == 0, "shmem_sync(even team)");
	shmem_team_destroy(even);

	IT_WHERE("shmem_sync(PE_start, logPE_stride, PE_size, pSync)");
	shmem_sync(0, 0, npes, pSync); /* void: the deprecated active-set form */
	shmem_barrier_all();
	NO_ERROR("shmem_sync forms");
}

int main(void)
{
	int me = osh_start("osh_compat");
	int npes = shmem_n_pes();
	sync_forms(me, npes);
	return osh_end();
}
