/*
 * shmem_core.c - OpenSHMEM setup, exit and query, memory management,
 * teams, contexts, ordering, locks and the deprecated names of these, on
 * libhoist.
 */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "shmem_internal.h"

int shm__npes, shm__me;
struct shmem__team shm__world, shm__shared;
char *shm__scratch;
int shm__mt;
pthread_mutex_t shm__mu = PTHREAD_MUTEX_INITIALIZER;
static int thread_level = SHMEM_THREAD_SINGLE; /* provided by shmem_init_thread */
static struct shmem__ctx ctx_default = {.magic = SHM_CTX_MAGIC, .team = &shm__world};
shmem_ctx_t SHMEM_CTX_DEFAULT = &ctx_default;
shmem_team_t SHMEM_TEAM_WORLD = &shm__world;
shmem_team_t SHMEM_TEAM_SHARED = &shm__shared;

static int initialized; /* 1 between shmem_init and shmem_finalize */
static int first_error; /* atomic: any thread may record one */

/* the message of the error kept last (first_error's, or the one
 * shmemx_last_error returned last): written by the thread that kept it */
static pthread_mutex_t msg_mu = PTHREAD_MUTEX_INITIALIZER;
static char err_msg[320];

int shm__errf(int rc, const char *fmt, ...)
{
	int none = 0;
	if (rc >= 0 || !__atomic_compare_exchange_n(&first_error, &none, rc, 0, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED))
		return rc;
	pthread_mutex_lock(&msg_mu);
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err_msg, sizeof(err_msg), fmt, ap);
		va_end(ap);
	} else {
		snprintf(err_msg, sizeof(err_msg), "%s", shmemx_strerror(rc));
	}
	pthread_mutex_unlock(&msg_mu);
	return rc;
}

int shm__err(int rc) { return rc >= 0 ? rc : shm__errf(rc, NULL); }

int shmemx_last_error(void)
{
	return __atomic_exchange_n(&first_error, 0, __ATOMIC_RELAXED);
}

const char *shmemx_last_error_string(void)
{
	static _Thread_local char copy[sizeof(err_msg)];
	pthread_mutex_lock(&msg_mu);
	memcpy(copy, err_msg, sizeof(copy));
	pthread_mutex_unlock(&msg_mu);
	return copy;
}

int shm__rma_err(const char *fn, int rc, int pe, const void *remote, size_t n)
{
	if (rc >= 0)
		return rc;
	if (rc == -EFAULT && remote && !hoist_is_symmetric(remote, 1))
		return shm__errf(rc,
				 "%s: %p (PE %d's side) is not symmetric: not in the symmetric heap "
				 "nor in the program's global or static data",
				 fn, remote, pe);
	if (rc == -EFAULT && remote && n && !hoist_is_symmetric(remote, n))
		return shm__errf(rc, "%s: %p + %zu bytes (PE %d's side) runs past the end of the "
				     "symmetric memory it starts in", fn, remote, n, pe);
	return shm__errf(rc, "%s (PE %d, address %p): %s", fn, pe, remote, shmemx_strerror(rc));
}

void shm__backoff(unsigned *polls)
{
	if (++*polls < 64) {
		sched_yield();
		return;
	}
	unsigned sh = *polls - 64 < 8 ? *polls - 64 : 8;
	nanosleep(&(struct timespec){.tv_nsec = 1000L << sh}, NULL);
}

const char *shmemx_strerror(int err)
{
	if (err == -ENOSYS)
		return "not implemented by libhoist-shmem (README, OpenSHMEM)";
	return hoist_strerror(err);
}

int shm__ctx(shmem_ctx_t ctx)
{
	return ctx && ctx->magic == SHM_CTX_MAGIC
		       ? 0
		       : shm__errf(-EINVAL, "context %p is not a live context (SHMEM_CTX_INVALID, "
					    "destroyed, or not one)", (void *)ctx);
}

int shm__ctx_pe_(const char *fn, shmem_ctx_t ctx, int pe)
{
	if (!ctx || ctx->magic != SHM_CTX_MAGIC) {
		shm__errf(-EINVAL, "%s: context %p is not a live context (SHMEM_CTX_INVALID, "
				   "destroyed, or not one)", fn, (void *)ctx);
		return -1;
	}
	const struct shmem__team *t = ctx->team;
	if (pe < 0 || pe >= t->n) {
		if (t == &shm__world)
			shm__errf(-EINVAL, "%s: PE %d outside SHMEM_TEAM_WORLD (%d PEs)", fn, pe, t->n);
		else
			shm__errf(-EINVAL, "%s: PE %d outside the context's team (%d PEs)", fn, pe,
				  t->n);
		return -1;
	}
	return shm__team_pe(t, pe);
}

hoist_cmp_t shm__cmp(int cmp)
{
	switch (cmp) {
	case SHMEM_CMP_EQ: return HOIST_CMP_EQ;
	case SHMEM_CMP_NE: return HOIST_CMP_NE;
	case SHMEM_CMP_GT: return HOIST_CMP_GT;
	case SHMEM_CMP_GE: return HOIST_CMP_GE;
	case SHMEM_CMP_LT: return HOIST_CMP_LT;
	case SHMEM_CMP_LE: return HOIST_CMP_LE;
	default: return (hoist_cmp_t)0;
	}
}

/* ---- setup, exit, query ------------------------------------------------- */

int shmem_init_thread(int requested, int *provided)
{
	if (initialized) { /* a second init is a no-op */
		if (provided)
			*provided = thread_level;
		return 0;
	}
	/* SHMEM_SYMMETRIC_SIZE is libhoist's heap size unless HOIST_HEAP_SIZE says */
	const char *sz = getenv("SHMEM_SYMMETRIC_SIZE");
	if (sz && *sz && !getenv("HOIST_HEAP_SIZE"))
		setenv("HOIST_HEAP_SIZE", sz, 0);
	/* globals and statics are symmetric (hoist.h HOIST_INIT_SYMMETRIC_DATA:
	 * the executable's writable segment moves into the heap file). An
	 * executable with no such segment (-ENOENT) or more than one (-ENOTSUP)
	 * still runs, with only the heap symmetric; the latter is kept for
	 * shmemx_last_error. */
	int rc = hoist_init_with(HOIST_INIT_SYMMETRIC_DATA);
	if (rc == -ENOENT || rc == -ENOTSUP) {
		int why = rc;
		if ((rc = hoist_init()) == 0 && why == -ENOTSUP)
			shm__err(why);
	}
	if (rc)
		return shm__err(rc);
	shm__npes = hoist_size();
	shm__me = hoist_rank();
	shm__scratch = hoist_malloc(SHM_SCRATCH_BYTES);
	int *spes = malloc(sizeof(int) * (size_t)shm__npes);
	if (!shm__scratch || !spes) {
		free(spes);
		hoist_finalize();
		return shm__err(-ENOMEM);
	}
	shm__world = (struct shmem__team){.n = shm__npes, .me = shm__me, .stride = 1, .slot = -1};
	/* SHMEM_TEAM_SHARED: the PEs whose heap this one maps (same hoistd) */
	int n = 0, me = -1;
	for (int p = 0; p < shm__npes; p++) {
		if (p == shm__me || hoist_ptr(shm__scratch, p)) {
			if (p == shm__me)
				me = n;
			spes[n++] = p;
		}
	}
	shm__shared = (struct shmem__team){.n = n, .me = me, .pes = spes, .slot = 1};
	if ((rc = shm__team_init())) {
		free(spes);
		hoist_finalize();
		return shm__err(rc);
	}
	initialized = 1;
	/* every level is provided; MULTIPLE serializes the libhoist calls with
	 * shm__mu (shmem_internal.h), the others need no lock */
	thread_level = requested < SHMEM_THREAD_SINGLE	   ? SHMEM_THREAD_SINGLE
		       : requested > SHMEM_THREAD_MULTIPLE ? SHMEM_THREAD_MULTIPLE
							   : requested;
	shm__mt = thread_level == SHMEM_THREAD_MULTIPLE;
	if (provided)
		*provided = thread_level;
	return 0;
}

void shmem_init(void)
{
	int provided;
	shmem_init_thread(SHMEM_THREAD_SINGLE, &provided);
}

void shmem_query_thread(int *provided)
{
	if (provided)
		*provided = thread_level;
}

void shmem_finalize(void)
{
	if (!initialized)
		return;
	hoist_free(shm__scratch);
	shm__scratch = NULL;
	shm__team_fini();
	shm__err(hoist_finalize());
	free(shm__shared.pes);
	shm__shared.pes = NULL;
	initialized = 0;
	shm__mt = 0;
}

/* Ends this PE with status: the other PEs' operations that need it fail
 * with -ECONNRESET and the launcher (hoistrun/oshrun) terminates the job
 * after its grace period when status is not 0. */
void shmem_global_exit(int status)
{
	fflush(NULL);
	_exit(status);
}

int shmem_my_pe(void) { return initialized ? shm__me : -1; }
int shmem_n_pes(void) { return initialized ? shm__npes : -1; }

int shmem_pe_accessible(int pe) { return initialized && pe >= 0 && pe < shm__npes; }

int shmem_addr_accessible(const void *addr, int pe)
{
	return shmem_pe_accessible(pe) && hoist_is_symmetric(addr, 1);
}

void *shmem_ptr(const void *dest, int pe)
{
	return initialized ? hoist_ptr(dest, pe) : NULL;
}

void shmem_info_get_version(int *major, int *minor)
{
	if (major)
		*major = SHMEM_MAJOR_VERSION;
	if (minor)
		*minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char *name)
{
	if (name)
		snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}

/* OpenSHMEM 1.5's profiling control: without a tool interposed there is
 * nothing to switch, so every level is accepted and ignored */
void shmem_pcontrol(const int level, ...)
{
	(void)level;
}

/* ---- memory ----------------------------------------------------------------
 * Every block has a 64-byte head (more with a larger alignment) from
 * hoist_malloc: ret[-16] holds the hoist block, ret[-8] the size asked for
 * (shmem_realloc copies that much). Alignment is of addresses: symmetric
 * on every PE up to the page size (the heaps are page-aligned mappings). */
static void *shm_alloc(size_t alignment, size_t size)
{
	if (!initialized || size == 0)
		return NULL;
	if (alignment < 64)
		alignment = 64;
	if (alignment & (alignment - 1) || size > SIZE_MAX - alignment) {
		shm__err(-EINVAL);
		return NULL;
	}
	char *raw = hoist_malloc(size + alignment);
	if (!raw) {
		shm__err(-ENOMEM);
		return NULL;
	}
	char *ret = (char *)(((uintptr_t)raw + 16 + alignment - 1) & ~(uintptr_t)(alignment - 1));
	memcpy(ret - 16, &raw, sizeof(raw));
	memcpy(ret - 8, &size, sizeof(size));
	return ret;
}

void *shmem_malloc(size_t size) { return shm_alloc(64, size); }
void *shmem_malloc_with_hints(size_t size, long hints) { return shm_alloc(64, size); }
void *shmem_align(size_t alignment, size_t size) { return shm_alloc(alignment, size); }

void *shmem_calloc(size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		return NULL;
	char *p = shm_alloc(64, count * size);
	if (p) {
		memset(p, 0, count * size);
		hoist_barrier(); /* nobody puts into it before every PE cleared it */
	}
	return p;
}

void shmem_free(void *ptr)
{
	if (!ptr || !initialized)
		return;
	char *raw;
	memcpy(&raw, (char *)ptr - 16, sizeof(raw));
	hoist_free(raw);
}

void *shmem_realloc(void *ptr, size_t size)
{
	if (!ptr)
		return shmem_malloc(size);
	if (size == 0) {
		shmem_free(ptr);
		return NULL;
	}
	size_t old;
	memcpy(&old, (char *)ptr - 8, sizeof(old));
	char *p = shm_alloc(64, size);
	if (!p)
		return NULL; /* ptr stays valid */
	memcpy(p, ptr, old < size ? old : size);
	shmem_free(ptr); /* its barrier: every PE copied before anyone writes */
	return p;
}

/* ---- teams ---------------------------------------------------------------
 * A split agrees on a free scratch slot over the parent team (an OR of the
 * members' used-slot masks, shm__team_slots), so its collectives run on
 * that slot's symmetric scratch (shmem_coll.c). Members of a split team are
 * kept as start and stride of world PEs when the parent is strided, as a
 * list otherwise (a split of SHMEM_TEAM_SHARED). */
static int team_world_pe(shmem_team_t t, int i)
{
	if (!t || i < 0 || i >= t->n)
		return -1;
	return shm__team_pe(t, i);
}

int shmem_team_my_pe(shmem_team_t team) { return team ? team->me : -1; }
int shmem_team_n_pes(shmem_team_t team) { return team ? team->n : -1; }

int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config)
{
	if (!team)
		return -1;
	if (config && (config_mask & SHMEM_TEAM_NUM_CONTEXTS))
		config->num_contexts = team->config.num_contexts;
	return 0;
}

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
	int w = team_world_pe(src_team, src_pe);
	if (w < 0 || !dest_team)
		return -1;
	for (int i = 0; i < dest_team->n; i++)
		if (team_world_pe(dest_team, i) == w)
			return i;
	return -1;
}

/* the message for shm__team_slots' -ENOMEM in split fn */
static int slots_err(const char *fn, shmem_team_t parent, int rc)
{
	if (rc != -ENOMEM)
		return rc;
	if (parent->n == shm__npes)
		return shm__errf(rc, "%s: no free team scratch slot: all %d are held and no more "
				     "could be added (the limit, or the symmetric heap is full)",
				 fn, shm__team_nslots());
	return shm__errf(rc, "%s: no free team scratch slot: the parent's members hold all %d; only "
			     "a split of a parent of all PEs adds slots", fn, shm__team_nslots());
}

/* the team of parent's members start + i * stride (i < size) at slot, or
 * SHMEM_TEAM_INVALID when this PE is not one of them; 0 or -ENOMEM */
static int team_make(shmem_team_t parent, int start, int stride, int size, int slot,
		     const shmem_team_config_t *config, long config_mask, shmem_team_t *out)
{
	*out = SHMEM_TEAM_INVALID;
	int d = parent->me - start, j = stride ? d / stride : 0;
	if ((stride ? d % stride != 0 : d != 0) || j < 0 || j >= size)
		return 0;
	struct shmem__team *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->n = size;
	t->me = j;
	t->slot = slot;
	if (parent->pes) {
		if (!(t->pes = malloc(sizeof(int) * (size_t)size))) {
			free(t);
			return -ENOMEM;
		}
		for (int i = 0; i < size; i++)
			t->pes[i] = parent->pes[start + i * stride];
	} else {
		t->start = parent->start + start * parent->stride;
		t->stride = stride * parent->stride;
	}
	if (config && (config_mask & SHMEM_TEAM_NUM_CONTEXTS))
		t->config.num_contexts = config->num_contexts;
	shm__team_slot_set(slot, 1);
	*out = t;
	return 0;
}

int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
			     const shmem_team_config_t *config, long config_mask,
			     shmem_team_t *new_team)
{
	if (!new_team)
		return shm__err(-EINVAL);
	*new_team = SHMEM_TEAM_INVALID;
	/* every parent PE passes the same arguments: a bad set fails everywhere
	 * before the collective part */
	long last = (long)start + (long)(size - 1) * stride;
	if (!parent_team || size < 1 || start < 0 || start >= parent_team->n || last < 0 ||
	    last >= parent_team->n || (stride == 0 && size > 1))
		return shm__err(-EINVAL);
	int slot, rc = slots_err(__func__, parent_team, shm__team_slots(parent_team, 1, &slot));
	if (!rc)
		rc = team_make(parent_team, start, stride, size, slot, config, config_mask,
			       new_team);
	return shm__err(rc) ? -1 : 0;
}

/* x-axis teams are the rows of xrange consecutive parent PEs (the last may
 * be short), y-axis teams the columns; every parent PE is in one of each */
int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
			const shmem_team_config_t *xaxis_config, long xaxis_mask,
			shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
			long yaxis_mask, shmem_team_t *yaxis_team)
{
	if (!xaxis_team || !yaxis_team)
		return shm__err(-EINVAL);
	*xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
	if (!parent_team || xrange < 1)
		return shm__err(-EINVAL);
	int n = parent_team->n, me = parent_team->me;
	if (xrange > n)
		xrange = n;
	int slots[2], rc = slots_err(__func__, parent_team, shm__team_slots(parent_team, 2, slots));
	if (rc)
		return shm__err(rc) ? -1 : 0;
	int row = me / xrange, col = me % xrange;
	int xs = row * xrange, xn = n - xs < xrange ? n - xs : xrange;
	int yn = (n - col + xrange - 1) / xrange;
	rc = team_make(parent_team, xs, 1, xn, slots[0], xaxis_config, xaxis_mask, xaxis_team);
	if (!rc)
		rc = team_make(parent_team, col, xrange, yn, slots[1], yaxis_config, yaxis_mask,
			       yaxis_team);
	if (rc) {
		shmem_team_destroy(*xaxis_team);
		*xaxis_team = SHMEM_TEAM_INVALID;
	}
	return shm__err(rc) ? -1 : 0;
}

void shmem_team_destroy(shmem_team_t team)
{
	/* the predefined teams are never destroyed (undefined by the spec); a
	 * split team's slot is free again once its last collective returned
	 * here (nothing more is sent to this PE's part of it) */
	if (!team || team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_SHARED)
		return;
	shm__team_slot_set(team->slot, 0);
	free(team->pes);
	free(team);
}

/* ---- contexts ------------------------------------------------------------------
 * A context is its options and team: its operations are the same libhoist
 * calls as the default context's (one submission ring per PE), so
 * shmem_ctx_quiet/_fence complete/order every operation of the PE, which
 * includes the context's own (the specification asks at least that).
 * SHMEM_CTX_PRIVATE, _SERIALIZED and _NOSTORE are accepted and change
 * nothing: under SHMEM_THREAD_MULTIPLE every call takes the one lock anyway. */
#define CTX_OPTIONS (SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE)

int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
	if (ctx)
		*ctx = SHMEM_CTX_INVALID;
	if (!initialized || !ctx || !team || team->me < 0 || (options & ~CTX_OPTIONS)) {
		shm__err(-EINVAL);
		return -1;
	}
	struct shmem__ctx *c = malloc(sizeof(*c));
	if (!c) {
		shm__err(-ENOMEM);
		return -1;
	}
	*c = (struct shmem__ctx){.magic = SHM_CTX_MAGIC, .options = options, .team = team};
	*ctx = c;
	return 0;
}

int shmem_ctx_create(long options, shmem_ctx_t *ctx)
{
	return shmem_team_create_ctx(SHMEM_TEAM_WORLD, options, ctx);
}

/* quiets first (its operations complete); SHMEM_CTX_DEFAULT and invalid
 * handles are left alone */
void shmem_ctx_destroy(shmem_ctx_t ctx)
{
	if (ctx == SHMEM_CTX_DEFAULT || shm__ctx(ctx))
		return;
	shm__err(hoist_quiet());
	ctx->magic = 0;
	free(ctx);
}

int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
{
	if (!team)
		return -1;
	if (!ctx || ctx->magic != SHM_CTX_MAGIC) {
		*team = SHMEM_TEAM_INVALID;
		return -1;
	}
	*team = ctx->team;
	return 0;
}

/* ---- ordering ------------------------------------------------------------ */
void shmem_fence(void) { shm__err(hoist_fence()); }
void shmem_quiet(void) { shm__err(hoist_quiet()); }
void shmem_ctx_fence(shmem_ctx_t ctx)
{
	if (!shm__ctx(ctx))
		shmem_fence();
}
void shmem_ctx_quiet(shmem_ctx_t ctx)
{
	if (!shm__ctx(ctx))
		shmem_quiet();
}

/* ---- locks ------------------------------------------------------------------
 * A ticket lock in PE 0's copy of the symmetric long (64 bits): the high
 * half is the next ticket, the low half the ticket served. set_lock takes a
 * ticket (fetch-add of 1 << 32, wrapping) and polls until it is served
 * (yielding, then sleeping up to 256 us between polls);
 * clear_lock completes the holder's puts (quiet) and serves the next
 * ticket (a compare-and-swap, so the low half wraps without carrying into
 * the high). First come, first served. */
#define LOCK_PE 0
static uint64_t lock_fetch(long *lock)
{
	uint64_t v = 0;
	shm__err(hoist_atomic(LOCK_PE, lock, HOIST_AMO_FETCH, HOIST_UINT64, NULL, NULL, &v));
	return v;
}

void shmem_set_lock(long *lock)
{
	uint64_t one = 1ull << 32, old = 0;
	if (shm__err(hoist_atomic(LOCK_PE, lock, HOIST_AMO_FETCH_ADD, HOIST_UINT64, &one, NULL, &old)))
		return;
	uint32_t ticket = (uint32_t)(old >> 32);
	/* poll; after a while back off (up to 256 us between polls) so that
	 * waiters do not starve the holder of the node's cores */
	unsigned polls = 0;
	while ((uint32_t)lock_fetch(lock) != ticket) {
		if (__atomic_load_n(&first_error, __ATOMIC_RELAXED))
			return;
		shm__backoff(&polls); /* outside shm__mu: each fetch takes it */
	}
}

int shmem_test_lock(long *lock)
{
	uint64_t v = lock_fetch(lock);
	if ((uint32_t)(v >> 32) != (uint32_t)v)
		return 1; /* held (or waited for) */
	uint64_t nv = v + (1ull << 32), got = 0;
	if (shm__err(hoist_atomic(LOCK_PE, lock, HOIST_AMO_CSWAP, HOIST_UINT64, &nv, &v, &got)))
		return 1;
	return got == v ? 0 : 1;
}

void shmem_clear_lock(long *lock)
{
	shmem_quiet();
	uint64_t v = lock_fetch(lock);
	for (;;) {
		uint64_t nv = (v & ~0xffffffffull) | (uint32_t)((uint32_t)v + 1u), got = 0;
		if (shm__err(hoist_atomic(LOCK_PE, lock, HOIST_AMO_CSWAP, HOIST_UINT64, &nv, &v, &got)))
			return;
		if (got == v)
			return;
		v = got; /* a new ticket was taken meanwhile */
	}
}

/* ---- deprecated names ----------------------------------------------------------- */
void start_pes(int npes) { shmem_init(); }
int _my_pe(void) { return shmem_my_pe(); }
int _num_pes(void) { return shmem_n_pes(); }
void *shmalloc(size_t size) { return shmem_malloc(size); }
void shfree(void *ptr) { shmem_free(ptr); }
void *shrealloc(void *ptr, size_t size) { return shmem_realloc(ptr, size); }
void *shmemalign(size_t alignment, size_t size) { return shmem_align(alignment, size); }
/* cache management: hoist keeps no caches that need it */
void shmem_clear_cache_inv(void) {}
void shmem_set_cache_inv(void) {}
void shmem_clear_cache_line_inv(void *dest) {}
void shmem_set_cache_line_inv(void *dest) {}
void shmem_udcflush(void) {}
void shmem_udcflush_line(void *dest) {}
