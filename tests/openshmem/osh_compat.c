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
 *
 * Signed bitwise team reductions: 1.5 lists and/or/xor for the unsigned and
 * fixed-width types only, but Sandia OpenSHMEM keeps 1.4's short, int, long
 * and long long for the team form and its tests call shmem_and_reduce on
 * them; without those in shmem.h the generic does not compile.
 *
 * shmem_pcontrol (1.5's profiling control): a tool defines it and calls
 * pshmem_pcontrol, as this program does; without the library's the program
 * does not link.
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

/* every PE contributes me + 1 (and a high bit on odd PEs): the expected
 * results folded in PE order */
#define SIGNED_BITRED(T)                                                         \
	do {                                                                     \
		static T src[3], dst[3];                                         \
		T a = (T)~(T)0, o = 0, x = 0;                                    \
		for (int p = 0; p < npes; p++) {                                 \
			T v = (T)((p + 1) | (p % 2 ? (T)1 << 10 : 0));           \
			a &= v, o |= v, x ^= v;                                  \
		}                                                                \
		for (int i = 0; i < 3; i++)                                      \
			src[i] = (T)((me + 1) | (me % 2 ? (T)1 << 10 : 0)), dst[i] = -7; \
		shmem_barrier_all();                                             \
		CHECK(shmem_and_reduce(SHMEM_TEAM_WORLD, dst, src, 3) == 0, #T " and"); \
		CHECK(dst[0] == a && dst[2] == a, #T " and: %lld", (long long)dst[0]); \
		CHECK(shmem_or_reduce(SHMEM_TEAM_WORLD, dst, src, 3) == 0, #T " or"); \
		CHECK(dst[0] == o && dst[2] == o, #T " or: %lld", (long long)dst[0]); \
		CHECK(shmem_xor_reduce(SHMEM_TEAM_WORLD, dst, src, 3) == 0, #T " xor"); \
		CHECK(dst[0] == x && dst[2] == x, #T " xor: %lld", (long long)dst[0]); \
	} while (0)

static void signed_bitwise(int me, int npes)
{
	IT_WHERE("signed bitwise team reductions");
	SIGNED_BITRED(short);
	SIGNED_BITRED(int);
	SIGNED_BITRED(long);
	SIGNED_BITRED(long long);
	/* the typed name, on a split team (odd PEs) */
	shmem_team_t odd;
	static int isrc = 6, idst;
	CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odd) == 0,
	      "split odd");
	isrc = 6 | (me << 4);
	if (odd != SHMEM_TEAM_INVALID) {
		int want = 0;
		for (int p = 1; p < npes; p += 2)
			want ^= 6 | (p << 4);
		CHECK(shmem_int_xor_reduce(odd, &idst, &isrc, 1) == 0, "int xor on odd team");
		CHECK(idst == want, "int xor on odd team: %d, want %d", idst, want);
	}
	shmem_team_destroy(odd);
	shmem_barrier_all();
	NO_ERROR("signed bitwise");
}

/* the tool's side of the profiling interface */
void pshmem_pcontrol(const int level, ...);
static int pcontrol_calls, pcontrol_last = -1;
void shmem_pcontrol(const int level, ...)
{
	pcontrol_calls++;
	pcontrol_last = level;
	pshmem_pcontrol(level);
}

static void pcontrol(void)
{
	IT_WHERE("shmem_pcontrol");
	shmem_pcontrol(0);
	shmem_pcontrol(2, "region", 7);
	shmem_pcontrol(1);
	CHECK(pcontrol_calls == 3 && pcontrol_last == 1, "pcontrol calls %d, last %d",
	      pcontrol_calls, pcontrol_last);
	NO_ERROR("pcontrol");
}

int main(void)
{
	int me = osh_start("osh_compat");
	int npes = shmem_n_pes();
	sync_forms(me, npes);
	signed_bitwise(me, npes);
	pcontrol();
	return osh_end();
}
