/*
 * shmem_coll.c - OpenSHMEM collectives. SHMEM_TEAM_WORLD (and
 * SHMEM_TEAM_SHARED when it holds every PE) runs on libhoist's whole-job
 * collectives. Any other team - a split team, SHMEM_TEAM_SHARED of part of
 * the job, the set of a deprecated active-set call - runs on puts, atomics
 * and waits over its slot of the team scratch:
 *   sync       dissemination barrier: in round r member i adds 1 to word r
 *              of member i + 2^r, waits for its own word r to reach 1 and
 *              takes 1 off (a counting semaphore: no generation to agree on)
 *   broadcast  the root puts to every member, then sync
 *   fcollect   every member puts its block at its offset in every member's
 *   collect    dest, then sync (collect first puts its size to every member)
 *   alltoall(s) sync, every member puts its blocks, sync
 *   reductions every member puts its part (in chunks of the slot) into every
 *              member's slot, sync, each reduces in member order, sync
 * Every sync quiets first, so the puts before it are complete after it.
 */
#include <sched.h>
#include <stdlib.h>

#include "shmem_internal.h"

/* the library's scratch for the WORLD collectives that libhoist lacks */
#define COLL_BYTES SHM_SCRATCH_BYTES

/* a team scratch slot: 64 sync words, a word per PE (collect's sizes), data.
 * The slots come in chunks of SHM_TSLOTS_CHUNK, each one hoist_malloc'ed
 * block: chunk 0 by shmem_init, the next ones when a split over a parent
 * that holds every PE finds no free slot (shm__team_slots). Every PE has
 * the same chunks: a chunk is only added where every PE takes part. */
#define SLOT_SYNC 64
#define SLOT_DATA (16 * 1024)
static char *chunks[SHM_TCHUNKS_MAX];
static int nchunks;
static size_t slot_bytes;
/* slot use at this PE, a bit per slot; 0: active sets, 1: SHMEM_TEAM_SHARED */
static uint64_t slots_used[SHM_TCHUNKS_MAX];
_Static_assert(SHM_TSLOTS_CHUNK <= 64, "a chunk's slots are bits of one word of slots_used");

static uint64_t *slot_sync(const struct shmem__team *t)
{
	return (uint64_t *)(chunks[t->slot / SHM_TSLOTS_CHUNK] +
			    (size_t)(t->slot % SHM_TSLOTS_CHUNK) * slot_bytes);
}
static uint64_t *slot_sizes(const struct shmem__team *t) { return slot_sync(t) + SLOT_SYNC; }
static char *slot_data(const struct shmem__team *t)
{
	return (char *)(slot_sizes(t) + shm__npes);
}

int shm__team_init(void)
{
	slot_bytes = (SLOT_SYNC + (size_t)shm__npes) * 8 + SLOT_DATA;
	memset(slots_used, 0, sizeof(slots_used));
	slots_used[0] = 3;
	nchunks = 0;
	if (!(chunks[0] = hoist_malloc(SHM_TSLOTS_CHUNK * slot_bytes)))
		return -ENOMEM;
	nchunks = 1;
	return 0;
}

/* the active-set broadcast's scratch over SHMEM_TEAM_WORLD (bcast_aset) */
static char *bcast_tmp;
static size_t bcast_cap;

void shm__team_fini(void)
{
	for (int c = nchunks - 1; c >= 0; c--) /* hoist_free is collective: same order */
		hoist_free(chunks[c]);
	nchunks = 0;
	if (bcast_tmp)
		hoist_free(bcast_tmp);
	bcast_tmp = NULL;
	bcast_cap = 0;
}

int shm__team_nslots(void) { return nchunks * SHM_TSLOTS_CHUNK; }

void shm__team_slot_set(int slot, int used)
{
	if (slot < 0 || slot >= nchunks * SHM_TSLOTS_CHUNK)
		return;
	uint64_t bit = (uint64_t)1 << (slot % SHM_TSLOTS_CHUNK);
	if (used)
		slots_used[slot / SHM_TSLOTS_CHUNK] |= bit;
	else
		slots_used[slot / SHM_TSLOTS_CHUNK] &= ~bit;
}

/* 0 when libhoist's collectives (over all PEs) serve team, 1 when the team
 * collectives do, -1 (error kept) for no team */
static int world_team_(const char *fn, shmem_team_t team)
{
	if (team == SHMEM_TEAM_WORLD || (team == SHMEM_TEAM_SHARED && shm__shared.n == shm__npes))
		return 0;
	if (!team || team->me < 0 || team->slot < 0) {
		shm__errf(-EINVAL, "%s: team %p is not a team this PE is in (SHMEM_TEAM_INVALID, "
				   "destroyed, or not one)", fn, (void *)team);
		return -1;
	}
	return 1;
}
#define world_team(team) world_team_(__func__, team)

static int coll_rc(int rc) { return shm__err(rc) ? -1 : 0; }

/* the result of a libhoist collective (over all PEs) of routine fn: its
 * -EINVAL is a bad or disagreeing argument (libhoist compares the PEs'
 * arguments, and fails the collective on every PE), its -EFAULT a
 * non-symmetric dest or source */
static int wcoll_rc(const char *fn, int rc, const char *args)
{
	if (rc == -EINVAL)
		rc = shm__errf(rc, "%s on all PEs: %s differ between PEs, or one is out of range "
				   "(libhoist's collective refused the call on every PE)", fn, args);
	else if (rc == -EFAULT)
		rc = shm__errf(rc, "%s on all PEs: dest or source (with its size) is not symmetric",
			       fn);
	return coll_rc(rc);
}

/* ---- team collectives on puts, atomics and waits ------------------------- */
static int tsync(const struct shmem__team *t)
{
	int rc = hoist_quiet();
	uint64_t *w = slot_sync(t), one = 1, minus = (uint64_t)-1;
	for (int r = 0, d = 1; !rc && d < t->n; r++, d <<= 1) {
		int to = shm__team_pe(t, (t->me + d) % t->n);
		rc = hoist_atomic(to, &w[r], HOIST_AMO_ADD, HOIST_UINT64, &one, NULL, NULL);
		if (!rc && shm__mt) { /* poll, the lock free between polls */
			int r1;
			SHM_POLL(r1, hoist_test_until_all(&w[r], 1, NULL, HOIST_UINT64, HOIST_CMP_GE, 1));
			rc = r1 < 0 ? r1 : 0;
		} else if (!rc) {
			rc = hoist_wait_until(&w[r], HOIST_UINT64, HOIST_CMP_GE, 1);
		}
		if (!rc)
			rc = hoist_atomic(shm__me, &w[r], HOIST_AMO_ADD, HOIST_UINT64, &minus, NULL,
					  NULL);
	}
	return rc;
}

/* put n bytes to member i's dst (a copy for this PE) */
static int tput(const struct shmem__team *t, int i, void *dst, const void *src, size_t n)
{
	if (i == t->me) {
		memmove(dst, src, n);
		return 0;
	}
	return hoist_put(shm__team_pe(t, i), dst, src, n);
}

/* Mismatched arguments of a team collective: every member puts its size
 * (and root) into word me of every member's slot sizes (as collect does),
 * before the sync that the collective has anyway (alltoall, the first
 * chunk of a reduction) or one more (broadcast, fcollect, which write
 * into dest at once and so must know before any data moves). After the
 * sync every member sees every member's word, so all come to the same
 * verdict: 0, or -EINVAL on every member with a message naming the first
 * member that differs from member 0; the callers then end with the
 * collective's last sync and move no data, so a mismatch neither hangs nor
 * writes past anyone's dest. A word: the size in the low 44 bits, root + 1
 * in the high 20 (0: no root). */
#define ARGS_SIZE_BITS 44
static uint64_t targs_word(size_t size, int root)
{
	return ((uint64_t)size & (((uint64_t)1 << ARGS_SIZE_BITS) - 1)) |
	       ((uint64_t)(root + 1) << ARGS_SIZE_BITS);
}

static int targs_put(const struct shmem__team *t, size_t size, int root)
{
	uint64_t *w = slot_sizes(t), mine = targs_word(size, root);
	int rc = 0;
	for (int i = 0; !rc && i < t->n; i++)
		rc = tput(t, i, &w[t->me], &mine, sizeof(mine));
	return rc;
}

/* after the sync: what targs_put put; size_name says what size is */
static int targs_check(const struct shmem__team *t, const char *fn, const char *size_name)
{
	const uint64_t *w = slot_sizes(t);
	uint64_t smask = ((uint64_t)1 << ARGS_SIZE_BITS) - 1;
	for (int i = 1; i < t->n; i++) {
		if (w[i] == w[0])
			continue;
		if ((w[i] & smask) != (w[0] & smask))
			return shm__errf(-EINVAL, "%s: %s differs between team PEs 0 and %d (%llu and "
						  "%llu)", fn, size_name, i,
					 (unsigned long long)(w[0] & smask),
					 (unsigned long long)(w[i] & smask));
		return shm__errf(-EINVAL, "%s: PE_root differs between team PEs 0 and %d (%d and %d)",
				 fn, i, (int)(w[0] >> ARGS_SIZE_BITS) - 1,
				 (int)(w[i] >> ARGS_SIZE_BITS) - 1);
	}
	return 0;
}

/* to_root 0: the root's dest is not written (the active-set form) */
static int tbcast(const struct shmem__team *t, const char *fn, void *dest, const void *source,
		  size_t nbytes, int root, int to_root)
{
	int rc = targs_put(t, nbytes, root);
	if (!rc && !(rc = tsync(t)) && !(rc = targs_check(t, fn, "nelems (in bytes)")) &&
	    (root < 0 || root >= t->n))
		rc = shm__errf(-EINVAL, "%s: PE_root %d outside the team (%d PEs)", fn, root, t->n);
	for (int i = 0; t->me == root && !rc && i < t->n - !to_root && nbytes; i++)
		rc = tput(t, (root + 1 + i) % t->n, dest, source, nbytes);
	int src = tsync(t);
	return rc ? rc : src;
}

static int tfcollect(const struct shmem__team *t, const char *fn, void *dest, const void *source,
		     size_t nbytes)
{
	int rc = targs_put(t, nbytes, -1);
	if (!rc && !(rc = tsync(t)))
		rc = targs_check(t, fn, "nelems (in bytes)");
	char *d = (char *)dest + (size_t)t->me * nbytes;
	for (int i = 0; !rc && i < t->n && nbytes; i++)
		rc = tput(t, (t->me + 1 + i) % t->n, d, source, nbytes);
	int src = tsync(t);
	return rc ? rc : src;
}

static int tcollect(const struct shmem__team *t, void *dest, const void *source, size_t nbytes)
{
	uint64_t *sizes = slot_sizes(t), mine = nbytes;
	int rc = 0;
	for (int i = 0; !rc && i < t->n; i++)
		rc = tput(t, i, &sizes[t->me], &mine, sizeof(mine));
	if (rc || (rc = tsync(t)))
		return rc;
	size_t off = 0;
	for (int i = 0; i < t->me; i++)
		off += sizes[i];
	for (int i = 0; !rc && i < t->n && nbytes; i++)
		rc = tput(t, (t->me + 1 + i) % t->n, (char *)dest + off, source, nbytes);
	int src = tsync(t);
	return rc ? rc : src;
}

static int talltoalls(const struct shmem__team *t, const char *fn, void *dest, const void *source,
		      ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t es)
{
	int rc = targs_put(t, nelems * es, -1);
	if (!rc && !(rc = tsync(t))) /* every member entered: dest is free */
		rc = targs_check(t, fn, "nelems (in bytes)");
	for (int p = 0; !rc && p < t->n && nelems; p++) {
		int q = (t->me + 1 + p) % t->n;
		char *d = (char *)dest + (ptrdiff_t)t->me * (ptrdiff_t)nelems * dst * (ptrdiff_t)es;
		const char *s = (const char *)source + (ptrdiff_t)q * (ptrdiff_t)nelems * sst * (ptrdiff_t)es;
		if (q == t->me) {
			for (size_t k = 0; k < nelems; k++)
				memmove(d + (ptrdiff_t)k * dst * (ptrdiff_t)es,
					s + (ptrdiff_t)k * sst * (ptrdiff_t)es, es);
		} else {
			rc = hoist_put_strided(shm__team_pe(t, q), d, dst * (ptrdiff_t)es, s,
					       sst * (ptrdiff_t)es, es, nelems);
		}
	}
	int src = tsync(t);
	return rc ? rc : src;
}

void shmem_barrier_all(void) { shm__err(hoist_barrier()); }
void shmem_sync_all(void) { shm__err(hoist_barrier()); }

int shmem_team_sync(shmem_team_t team)
{
	int w = world_team(team);
	if (w < 0)
		return -1;
	return coll_rc(w ? tsync(team) : hoist_barrier());
}

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
		       int PE_root)
{
	int w = world_team(team);
	if (w < 0)
		return -1;
	if (w)
		return coll_rc(tbcast(team, "shmem_broadcast", dest, source, nelems, PE_root, 1));
	if (nelems == 0) /* still called: a PE passing 0 where others do not is told */
		dest = shm__scratch, source = shm__scratch;
	return wcoll_rc("shmem_broadcast", hoist_broadcast(dest, source, nelems, PE_root),
			"nelems or PE_root");
}

int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
	int w = world_team(team);
	if (w < 0)
		return -1;
	if (w)
		return coll_rc(tfcollect(team, "shmem_fcollect", dest, source, nelems));
	if (nelems == 0) /* still called: a PE passing 0 where others do not is told */
		dest = shm__scratch, source = shm__scratch;
	return wcoll_rc("shmem_fcollect", hoist_allgather(dest, source, nelems), "nelems");
}

int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
	int w = world_team(team);
	if (w < 0)
		return -1;
	if (w)
		return coll_rc(talltoalls(team, "shmem_alltoall", dest, source, 1, 1, nelems, 1));
	if (nelems == 0) /* still called: a PE passing 0 where others do not is told */
		dest = shm__scratch, source = shm__scratch;
	return wcoll_rc("shmem_alltoall", hoist_alltoall(dest, source, nelems), "nelems");
}

/* Blocks of different sizes: the sizes are gathered (which also tells that
 * every PE entered), each PE puts its block at its offset into every PE's
 * dest, a barrier completes the puts. */
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
	int w = world_team(team);
	if (w < 0)
		return -1;
	if (w)
		return coll_rc(tcollect(team, dest, source, nelems));
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
	int w = world_team(team);
	if (w < 0)
		return -1;
	if (w)
		return coll_rc(talltoalls(team, "shmem_alltoalls", dest, source, dst, sst, nelems, es));
	if (64 + 8 * (size_t)shm__npes > COLL_BYTES)
		return coll_rc(-ENOSYS);
	/* every PE's size gathered (as collect does): every PE entered (dest is
	 * free), and all see whether the sizes agree before anything is put */
	uint64_t *mine = (uint64_t *)shm__scratch, *all = (uint64_t *)(shm__scratch + 64);
	*mine = nelems * es;
	int rc = hoist_allgather(all, mine, sizeof(*mine));
	for (int p = 1; !rc && p < shm__npes; p++)
		if (all[p] != all[0])
			rc = shm__errf(-EINVAL, "shmem_alltoalls on all PEs: nelems (in bytes) differs "
						"between PEs 0 and %d (%llu and %llu)", p,
				       (unsigned long long)all[0], (unsigned long long)all[p]);
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

/* k free slots agreed over parent: the OR of the members' used masks (in
 * the library's scratch: libhoist's collectives want symmetric buffers).
 * None free and parent holds every PE: all PEs are here, see the same OR
 * and add a chunk together (cleared, then a barrier, so no PE's sync words
 * are written before they are zero). */
int shm__team_slots(struct shmem__team *parent, int k, int *slots)
{
	uint64_t *m = (uint64_t *)shm__scratch, all[SHM_TCHUNKS_MAX];
	memcpy(m, slots_used, sizeof(uint64_t) * (size_t)nchunks);
	if (shmem_uint64_or_reduce(parent, &m[SHM_TCHUNKS_MAX], &m[0], (size_t)nchunks))
		return -EIO;
	memcpy(all, &m[SHM_TCHUNKS_MAX], sizeof(uint64_t) * (size_t)nchunks);
	int got = 0;
	for (int c = 0;; c++) {
		if (c == nchunks) {
			if (parent->n != shm__npes || nchunks == SHM_TCHUNKS_MAX)
				return -ENOMEM;
			char *p = hoist_malloc(SHM_TSLOTS_CHUNK * slot_bytes);
			if (!p)
				return -ENOMEM;
			memset(p, 0, SHM_TSLOTS_CHUNK * slot_bytes);
			int rc = hoist_barrier();
			if (rc) {
				hoist_free(p);
				return rc;
			}
			chunks[nchunks] = p;
			all[nchunks++] = 0;
		}
		for (int b = 0; b < SHM_TSLOTS_CHUNK; b++)
			if (!(all[c] & ((uint64_t)1 << b)) &&
			    (slots[got] = c * SHM_TSLOTS_CHUNK + b, ++got == k))
				return 0;
	}
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

/* a team's reduction: the members' parts (chunks of the slot's data) are
 * put into every member's slot, and each member reduces them in member
 * order; the sync after a chunk frees the slot for the next. The first
 * chunk (one even for nreduce 0, so that a member passing 0 is not left
 * out) also carries the nreduce check (targs_put): a member whose nreduce
 * differs has written only within the slot, and every member stops after
 * that chunk's second sync */
#define DEF_TRED(T, N, op)                                                                         \
	static int tred_##N##_##op(const struct shmem__team *t, T *dest, const T *source,          \
				   size_t nreduce)                                                 \
	{                                                                                          \
		size_t per = SLOT_DATA / (size_t)t->n / sizeof(T);                                 \
		T *g = (T *)slot_data(t);                                                          \
		int rc = per ? targs_put(t, nreduce, -1) : -ENOSYS;                                \
		for (size_t done = 0; !rc && (done < nreduce || done == 0); done += per) {         \
			size_t k = nreduce - done < per ? nreduce - done : per;                    \
			for (int i = 0; !rc && i < t->n && k; i++)                                 \
				rc = tput(t, (t->me + 1 + i) % t->n, g + (size_t)t->me * k,        \
					  source + done, k * sizeof(T));                           \
			if (rc || (rc = tsync(t)))                                                 \
				break;                                                             \
			if (done == 0 && targs_check(t, "shmem_" #N "_" #op "_reduce", "nreduce")) {  \
				rc = -EINVAL;                                                      \
				tsync(t);                                                          \
				break;                                                             \
			}                                                                          \
			for (size_t i = 0; i < k; i++) {                                           \
				T acc = g[i];                                                      \
				for (int p = 1; p < t->n; p++)                                     \
					acc = RED_##op(T, acc, g[(size_t)p * k + i]);              \
				dest[done + i] = acc;                                              \
			}                                                                          \
			rc = tsync(t);                                                             \
		}                                                                                  \
		return rc;                                                                         \
	}

#define DEF_RED(T, N, op)                                                                          \
	DEF_TRED(T, N, op)                                                                         \
	int shmem_##N##_##op##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce) \
	{                                                                                          \
		int w = world_team(team);                                                          \
		if (w < 0)                                                                         \
			return -1;                                                                 \
		if (w)                                                                             \
			return coll_rc(tred_##N##_##op(team, dest, source, nreduce));              \
		int ht = RTYPE((T)0);                                                              \
		if (ht >= 0) /* nreduce 0 too: libhoist compares it */                             \
			return wcoll_rc("shmem_" #N "_" #op "_reduce",                             \
					hoist_allreduce(nreduce ? (void *)dest : shm__scratch,     \
							nreduce ? (const void *)source : shm__scratch, \
							nreduce, (hoist_type_t)ht, HOP_##op),      \
					"nreduce");                                                \
		if (nreduce == 0)                                                                  \
			return 0;                                                                  \
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

/* ---- deprecated active-set forms ------------------------------------------
 * The set of all PEs is SHMEM_TEAM_WORLD; any other set is a team of
 * PE_start + i * 2^logPE_stride on scratch slot 0 (pSync is not used: the
 * library's scratch stands in for it, so two active sets sharing a PE must
 * not be in a collective at the same time). */
static struct shmem__team aset_team;
static shmem_team_t aset(int PE_start, int logPE_stride, int PE_size)
{
	if (PE_start == 0 && PE_size == shm__npes && (logPE_stride == 0 || PE_size == 1))
		return SHMEM_TEAM_WORLD;
	if (PE_size < 1 || PE_start < 0 || logPE_stride < 0 || logPE_stride > 30 ||
	    (long)PE_start + ((long)(PE_size - 1) << logPE_stride) >= shm__npes ||
	    shm__me < PE_start || ((shm__me - PE_start) & ((1 << logPE_stride) - 1)) ||
	    ((shm__me - PE_start) >> logPE_stride) >= PE_size) {
		shm__err(-EINVAL);
		return SHMEM_TEAM_INVALID;
	}
	aset_team = (struct shmem__team){.n = PE_size,
					 .me = (shm__me - PE_start) >> logPE_stride,
					 .start = PE_start,
					 .stride = 1 << logPE_stride,
					 .slot = 0};
	return &aset_team;
}

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
	shmem_team_t t = aset(PE_start, logPE_stride, PE_size);
	if (t)
		shmem_team_sync(t);
}

void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
	shmem_team_t t = aset(PE_start, logPE_stride, PE_size);
	if (t)
		shmem_team_sync(t);
}

/* 1.4 semantics: the root's dest is not written */
static void bcast_aset(void *dest, const void *source, size_t nbytes, int PE_root, int PE_start,
		       int logPE_stride, int PE_size)
{
	shmem_team_t t = aset(PE_start, logPE_stride, PE_size);
	if (!t)
		return;
	if (t != SHMEM_TEAM_WORLD) { /* nbytes 0 too: a mismatch is found there */
		shm__err(tbcast(t, "shmem_broadcast32/64", dest, source, nbytes, PE_root, 0));
		return;
	}
	if (nbytes == 0)
		return;
	/* the broadcast lands in a symmetric scratch that every PE keeps (it
	 * grows, collectively, when a call needs more: every PE passes the
	 * same nelems); a hoist_malloc/hoist_free per call were two barriers
	 * per broadcast. Each PE's scratch is written only within its own
	 * call (the node path copies into it, the daemon only once this PE
	 * posted the collective), so it is free again when the call returns */
	if (nbytes > bcast_cap) {
		size_t want = bcast_cap ? bcast_cap : 64;
		while (want < nbytes)
			want *= 2;
		if (bcast_tmp)
			hoist_free(bcast_tmp);
		bcast_cap = 0;
		if (!(bcast_tmp = hoist_malloc(want))) {
			shm__err(-ENOMEM);
			return;
		}
		bcast_cap = want;
	}
	if (!shm__err(hoist_broadcast(bcast_tmp, source, nbytes, PE_root)) && shm__me != PE_root)
		memcpy(dest, bcast_tmp, nbytes);
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
		shmem_team_t t = aset(PE_start, logPE_stride, PE_size);                            \
		if (t)                                                                             \
			shmem_collectmem(t, dest, source, nelems * (S / 8));                       \
	}                                                                                          \
	void shmem_fcollect##S(void *dest, const void *source, size_t nelems, int PE_start,       \
			       int logPE_stride, int PE_size, long *pSync)                        \
	{                                                                                          \
		shmem_team_t t = aset(PE_start, logPE_stride, PE_size);                            \
		if (t)                                                                             \
			shmem_fcollectmem(t, dest, source, nelems * (S / 8));                      \
	}                                                                                          \
	void shmem_alltoall##S(void *dest, const void *source, size_t nelems, int PE_start,       \
			       int logPE_stride, int PE_size, long *pSync)                        \
	{                                                                                          \
		shmem_team_t t = aset(PE_start, logPE_stride, PE_size);                            \
		if (t)                                                                             \
			shmem_alltoallmem(t, dest, source, nelems * (S / 8));                      \
	}                                                                                          \
	void shmem_alltoalls##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,     \
				size_t nelems, int PE_start, int logPE_stride, int PE_size,       \
				long *pSync)                                                      \
	{                                                                                          \
		shmem_team_t t = aset(PE_start, logPE_stride, PE_size);                            \
		if (t)                                                                             \
			alltoalls_bytes(t, dest, source, dst, sst, nelems, S / 8);                 \
	}
DEF_ASET(32, )
DEF_ASET(64, )

/* *_to_all: the team reduction over the active set's team */
#define DEF_TOALL(T, N, op)                                                                        \
	void shmem_##N##_##op##_to_all(T *dest, const T *source, int nreduce, int PE_start,        \
				       int logPE_stride, int PE_size, T *pWrk, long *pSync)        \
	{                                                                                          \
		if (nreduce < 0) {                                                                 \
			shm__err(-EINVAL);                                                         \
			return;                                                                    \
		}                                                                                  \
		shmem_team_t t = aset(PE_start, logPE_stride, PE_size);                            \
		if (t)                                                                             \
			shmem_##N##_##op##_reduce(t, dest, source, (size_t)nreduce);               \
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
		shmem_team_t t = aset(PE_start, logPE_stride, PE_size);                            \
		if (t)                                                                             \
			TOALL_RED(TOALL_SZ_##N, op)(t, (TOALL_CT_##N *)dest,                      \
						    (const TOALL_CT_##N *)source, (size_t)nreduce); \
	}
SHMEM__TOALL_BIT(DEF_TOALL_BIT, and)
SHMEM__TOALL_BIT(DEF_TOALL_BIT, or)
SHMEM__TOALL_BIT(DEF_TOALL_BIT, xor)
SHMEM__TOALL_MM(DEF_TOALL, max)
SHMEM__TOALL_MM(DEF_TOALL, min)
SHMEM__TOALL_AR(DEF_TOALL, sum)
SHMEM__TOALL_AR(DEF_TOALL, prod)
