/*
 * shmem_coll.c - OpenSHMEM collectives on libhoist's collectives:
 * SHMEM_TEAM_WORLD (and SHMEM_TEAM_SHARED when it holds every PE) for the
 * data collectives; shmem_team_sync on SHMEM_TEAM_SHARED of any size; the
 * deprecated active-set forms (barrier, broadcast/collect/fcollect/
 * alltoall(s)32/64, *_to_all) for the set of all PEs.
 */
#include <sched.h>
#include <stdlib.h>

#include "shmem_internal.h"

/* the library's scratch: [0, COLL_BYTES) for collectives, then one 64-byte
 * line for the shmem_team_sync counter of SHMEM_TEAM_SHARED */
#define COLL_BYTES (SHM_SCRATCH_BYTES - 64)
#define SYNC_WORD ((uint64_t *)(shm__scratch + COLL_BYTES))

/* 0 when libhoist's collectives (over all PEs) serve team */
static int world_team(shmem_team_t team)
{
	if (team == SHMEM_TEAM_WORLD || (team == SHMEM_TEAM_SHARED && shm__shared.n == shm__npes))
		return 0;
	shm__err(team ? -ENOSYS : -EINVAL);
	return -1;
}

static int coll_rc(int rc) { return shm__err(rc) ? -1 : 0; }

void shmem_barrier_all(void) { shm__err(hoist_barrier()); }
void shmem_sync_all(void) { shm__err(hoist_barrier()); }

int shmem_team_sync(shmem_team_t team)
{
	if (team == SHMEM_TEAM_SHARED && shm__shared.n != shm__npes) {
		/* a counter at the team's first PE (same node: direct atomics);
		 * round g is over once it reached g * n */
		struct shmem__team *t = &shm__shared;
		uint64_t target = ++t->sync_gen * (uint64_t)t->n, one = 1, v = 0;
		int root = t->pes[0];
		if (shm__err(hoist_quiet()) ||
		    shm__err(hoist_atomic(root, SYNC_WORD, HOIST_AMO_ADD, HOIST_UINT64, &one, NULL, NULL)))
			return -1;
		for (;;) {
			if (shm__err(hoist_atomic(root, SYNC_WORD, HOIST_AMO_FETCH, HOIST_UINT64, NULL,
						  NULL, &v)))
				return -1;
			if (v >= target)
				return 0;
			sched_yield();
		}
	}
	if (world_team(team))
		return -1;
	return coll_rc(hoist_barrier());
}

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
		       int PE_root)
{
	if (world_team(team))
		return -1;
	if (nelems == 0)
		return 0;
	return coll_rc(hoist_broadcast(dest, source, nelems, PE_root));
}

int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
	if (world_team(team))
		return -1;
	if (nelems == 0)
		return 0;
	return coll_rc(hoist_allgather(dest, source, nelems));
}

int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
	if (world_team(team))
		return -1;
	if (nelems == 0)
		return 0;
	return coll_rc(hoist_alltoall(dest, source, nelems));
}

/* Blocks of different sizes: the sizes are gathered (which also tells that
 * every PE entered), each PE puts its block at its offset into every PE's
 * dest, a barrier completes the puts. */
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
	if (world_team(team))
		return -1;
	if (64 + 8 * (size_t)shm__npes > COLL_BYTES)
		return coll_rc(-ENOSYS);
	uint64_t *mine = (uint64_t *)shm__scratch, *all = (uint64_t *)(shm__scratch + 64);
	*mine = nelems;
	if (shm__err(hoist_allgather(all, mine, sizeof(*mine))))
		return -1;
	size_t off = 0;
	for (int p = 0; p < shm__me; p++)
		off += all[p];
	int rc = 0;
	for (int p = 0; p < shm__npes && nelems; p++) {
		int q = (shm__me + p) % shm__npes;
		rc = hoist_put(q, (char *)dest + off, source, nelems);
		if (rc)
			break;
	}
	int brc = hoist_barrier();
	return coll_rc(rc ? rc : brc);
}

/* PE i's block for PE j (nelems elements of es bytes, stride sst from
 * source + j*nelems*sst) lands at PE j's dest + i*nelems*dst, stride dst */
static int alltoalls_bytes(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
			   ptrdiff_t sst, size_t nelems, size_t es)
{
	if (world_team(team))
		return -1;
	int rc = hoist_barrier(); /* every PE entered: dest is free */
	for (int p = 0; !rc && p < shm__npes && nelems; p++) {
		int q = (shm__me + p) % shm__npes;
		char *d = (char *)dest + (ptrdiff_t)shm__me * (ptrdiff_t)nelems * dst * (ptrdiff_t)es;
		const char *s = (const char *)source + (ptrdiff_t)q * (ptrdiff_t)nelems * sst * (ptrdiff_t)es;
		rc = hoist_put_strided(q, d, dst * (ptrdiff_t)es, s, sst * (ptrdiff_t)es, es, nelems);
	}
	int brc = hoist_barrier();
	return coll_rc(rc ? rc : brc);
}

int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
		       ptrdiff_t sst, size_t nelems)
{
	return alltoalls_bytes(team, dest, source, dst, sst, nelems, 1);
}

#define DEF_COLL(T, N, a)                                                                          \
	int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems,      \
				  int PE_root)                                                     \
	{                                                                                          \
		return shmem_broadcastmem(team, dest, source, nelems * sizeof(T), PE_root);        \
	}                                                                                          \
	int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems)        \
	{                                                                                          \
		return shmem_collectmem(team, dest, source, nelems * sizeof(T));                   \
	}                                                                                          \
	int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems)       \
	{                                                                                          \
		return shmem_fcollectmem(team, dest, source, nelems * sizeof(T));                  \
	}                                                                                          \
	int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems)       \
	{                                                                                          \
		return shmem_alltoallmem(team, dest, source, nelems * sizeof(T));                  \
	}                                                                                          \
	int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst,      \
				  ptrdiff_t sst, size_t nelems)                                    \
	{                                                                                          \
		return alltoalls_bytes(team, dest, source, dst, sst, nelems, sizeof(T));           \
	}
SHMEM__RMA_TYPES(DEF_COLL, )

/* ---- reductions ------------------------------------------------------------
 * Types libhoist reduces (int, long, long long, unsigned long, unsigned
 * long long, float, double and their aliases): hoist_allreduce. The
 * others (8/16-bit, unsigned int, long double, complex): the sources are
 * gathered (hoist_allgather, in chunks of the scratch) and every PE
 * reduces them itself in PE order, so all get the same result; integer
 * sums and products wrap around as the type does. */
#define RTYPE(x)                                                                                   \
	_Generic((x), int: (int)HOIST_INT32, long: (int)HOIST_INT64, long long: (int)HOIST_INT64,  \
		 unsigned long: (int)HOIST_UINT64, unsigned long long: (int)HOIST_UINT64,          \
		 float: (int)HOIST_FLOAT, double: (int)HOIST_DOUBLE, default: -1)
#define HOP_and HOIST_AND
#define HOP_or HOIST_OR
#define HOP_xor HOIST_XOR
#define HOP_max HOIST_MAX
#define HOP_min HOIST_MIN
#define HOP_sum HOIST_SUM
#define HOP_prod HOIST_PROD
/* a op b in T: integers in unsigned long long (no signed overflow), then
 * narrowed; long double and complex as they are */
#define ARITH(T, a, b, o)                                                                          \
	_Generic((T)0, long double: (T)((a)o(b)), double _Complex: (T)((a)o(b)),                   \
		 float _Complex: (T)((a)o(b)),                                                     \
		 default: (T)((unsigned long long)(a)o(unsigned long long)(b)))
#define RED_and(T, a, b) (T)((a) & (b))
#define RED_or(T, a, b) (T)((a) | (b))
#define RED_xor(T, a, b) (T)((a) ^ (b))
#define RED_max(T, a, b) ((a) > (b) ? (a) : (b))
#define RED_min(T, a, b) ((a) < (b) ? (a) : (b))
#define RED_sum(T, a, b) ARITH(T, a, b, +)
#define RED_prod(T, a, b) ARITH(T, a, b, *)

#define DEF_RED(T, N, op)                                                                          \
	int shmem_##N##_##op##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce) \
	{                                                                                          \
		if (world_team(team))                                                              \
			return -1;                                                                 \
		if (nreduce == 0)                                                                  \
			return 0;                                                                  \
		int ht = RTYPE((T)0);                                                              \
		if (ht >= 0)                                                                       \
			return coll_rc(hoist_allreduce(dest, source, nreduce, (hoist_type_t)ht,    \
						       HOP_##op));                                 \
		size_t per = COLL_BYTES / (size_t)shm__npes / sizeof(T);                           \
		if (per == 0)                                                                      \
			return coll_rc(-ENOSYS);                                                   \
		for (size_t done = 0; done < nreduce; done += per) {                               \
			size_t k = nreduce - done < per ? nreduce - done : per;                    \
			const T *g = (const T *)shm__scratch;                                      \
			if (shm__err(hoist_allgather(shm__scratch, source + done, k * sizeof(T)))) \
				return -1;                                                         \
			for (size_t i = 0; i < k; i++) {                                           \
				T acc = g[i];                                                      \
				for (int p = 1; p < shm__npes; p++)                                \
					acc = RED_##op(T, acc, g[(size_t)p * k + i]);              \
				dest[done + i] = acc;                                              \
			}                                                                          \
			/* nobody gathers the next chunk into a scratch still read */              \
			if (shm__err(hoist_barrier()))                                             \
				return -1;                                                         \
		}                                                                                  \
		return 0;                                                                          \
	}
SHMEM__BITRED(DEF_RED, and)
SHMEM__BITRED(DEF_RED, or)
SHMEM__BITRED(DEF_RED, xor)
SHMEM__MMRED(DEF_RED, max)
SHMEM__MMRED(DEF_RED, min)
SHMEM__ARRED(DEF_RED, sum)
SHMEM__ARRED(DEF_RED, prod)

/* ---- deprecated active-set forms: the set of all PEs only ------------------ */
static int aset_all(int PE_start, int logPE_stride, int PE_size)
{
	if (PE_start == 0 && PE_size == shm__npes && (logPE_stride == 0 || PE_size == 1))
		return 0;
	shm__err(-ENOSYS);
	return -1;
}

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
	if (!aset_all(PE_start, logPE_stride, PE_size))
		shm__err(hoist_barrier());
}

void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
	if (!aset_all(PE_start, logPE_stride, PE_size))
		shm__err(hoist_barrier());
}

/* 1.4 semantics: the root's dest is not written */
static void bcast_aset(void *dest, const void *source, size_t nbytes, int PE_root, int PE_start,
		       int logPE_stride, int PE_size)
{
	if (aset_all(PE_start, logPE_stride, PE_size) || nbytes == 0)
		return;
	char *tmp = hoist_malloc(nbytes);
	if (!tmp) {
		shm__err(-ENOMEM);
		return;
	}
	if (!shm__err(hoist_broadcast(tmp, source, nbytes, PE_root)) && shm__me != PE_root)
		memcpy(dest, tmp, nbytes);
	hoist_free(tmp);
}

#define DEF_ASET(S, a)                                                                             \
	void shmem_broadcast##S(void *dest, const void *source, size_t nelems, int PE_root,        \
				int PE_start, int logPE_stride, int PE_size, long *pSync)         \
	{                                                                                          \
		bcast_aset(dest, source, nelems * (S / 8), PE_root, PE_start, logPE_stride, PE_size); \
	}                                                                                          \
	void shmem_collect##S(void *dest, const void *source, size_t nelems, int PE_start,        \
			      int logPE_stride, int PE_size, long *pSync)                         \
	{                                                                                          \
		if (!aset_all(PE_start, logPE_stride, PE_size))                                    \
			shmem_collectmem(SHMEM_TEAM_WORLD, dest, source, nelems * (S / 8));        \
	}                                                                                          \
	void shmem_fcollect##S(void *dest, const void *source, size_t nelems, int PE_start,       \
			       int logPE_stride, int PE_size, long *pSync)                        \
	{                                                                                          \
		if (!aset_all(PE_start, logPE_stride, PE_size))                                    \
			shmem_fcollectmem(SHMEM_TEAM_WORLD, dest, source, nelems * (S / 8));       \
	}                                                                                          \
	void shmem_alltoall##S(void *dest, const void *source, size_t nelems, int PE_start,       \
			       int logPE_stride, int PE_size, long *pSync)                        \
	{                                                                                          \
		if (!aset_all(PE_start, logPE_stride, PE_size))                                    \
			shmem_alltoallmem(SHMEM_TEAM_WORLD, dest, source, nelems * (S / 8));       \
	}                                                                                          \
	void shmem_alltoalls##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,     \
				size_t nelems, int PE_start, int logPE_stride, int PE_size,       \
				long *pSync)                                                      \
	{                                                                                          \
		if (!aset_all(PE_start, logPE_stride, PE_size))                                    \
			alltoalls_bytes(SHMEM_TEAM_WORLD, dest, source, dst, sst, nelems, S / 8);  \
	}
DEF_ASET(32, )
DEF_ASET(64, )

/* *_to_all: the team reduction over SHMEM_TEAM_WORLD */
#define DEF_TOALL(T, N, op)                                                                        \
	void shmem_##N##_##op##_to_all(T *dest, const T *source, int nreduce, int PE_start,        \
				       int logPE_stride, int PE_size, T *pWrk, long *pSync)        \
	{                                                                                          \
		if (nreduce < 0) {                                                                 \
			shm__err(-EINVAL);                                                         \
			return;                                                                    \
		}                                                                                  \
		if (!aset_all(PE_start, logPE_stride, PE_size))                                    \
			shmem_##N##_##op##_reduce(SHMEM_TEAM_WORLD, dest, source, (size_t)nreduce); \
	}
/* the bitwise reductions have sized names only: short -> int16, ... */
#define TOALL_SZ_short int16
#define TOALL_SZ_int int32
#define TOALL_SZ_long int64
#define TOALL_SZ_longlong int64
#define TOALL_CT_short int16_t
#define TOALL_CT_int int32_t
#define TOALL_CT_long int64_t
#define TOALL_CT_longlong int64_t
#define TOALL_RED(sz, op) SHM_CAT(SHM_CAT(SHM_CAT(shmem_, sz), _##op), _reduce)
#define SHM_CAT_(a, b) a##b
#define SHM_CAT(a, b) SHM_CAT_(a, b)
#define DEF_TOALL_BIT(T, N, op)                                                                    \
	void shmem_##N##_##op##_to_all(T *dest, const T *source, int nreduce, int PE_start,        \
				       int logPE_stride, int PE_size, T *pWrk, long *pSync)        \
	{                                                                                          \
		_Static_assert(sizeof(T) == sizeof(TOALL_CT_##N), "same size");                    \
		if (nreduce < 0) {                                                                 \
			shm__err(-EINVAL);                                                         \
			return;                                                                    \
		}                                                                                  \
		if (!aset_all(PE_start, logPE_stride, PE_size))                                    \
			TOALL_RED(TOALL_SZ_##N, op)(SHMEM_TEAM_WORLD, (TOALL_CT_##N *)dest,       \
						    (const TOALL_CT_##N *)source, (size_t)nreduce); \
	}
SHMEM__TOALL_BIT(DEF_TOALL_BIT, and)
SHMEM__TOALL_BIT(DEF_TOALL_BIT, or)
SHMEM__TOALL_BIT(DEF_TOALL_BIT, xor)
SHMEM__TOALL_MM(DEF_TOALL, max)
SHMEM__TOALL_MM(DEF_TOALL, min)
SHMEM__TOALL_AR(DEF_TOALL, sum)
SHMEM__TOALL_AR(DEF_TOALL, prod)
