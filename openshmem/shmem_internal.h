/*
 * shmem_internal.h - what the parts of libhoist-shmem share.
 */
#ifndef SHMEM_INTERNAL_H
#define SHMEM_INTERNAL_H

#include <errno.h>
#include <hoist.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "shmem.h"
#include "shmemx.h"

/* the library defines the deprecated function of this generic name */
#undef shmem_wait_until

#define SHM_HIDDEN __attribute__((visibility("hidden")))

_Static_assert(sizeof(long) == 8 && sizeof(long long) == 8 && sizeof(int) == 4,
	       "libhoist-shmem maps long onto 64-bit hoist types (LP64)");

/* A context: every context's operations go through the same libhoist
 * calls (one submission ring per PE), so a context is its options and its
 * team (PE numbers of its operations are team-relative). magic tells a
 * live context from SHMEM_CTX_INVALID or garbage. */
#define SHM_CTX_MAGIC 0x73686374u
struct shmem__ctx {
	uint32_t magic;
	long options;
	struct shmem__team *team;
};
/* A team: n members, this PE's index me, member i is world PE pes[i], or
 * start + i * stride when pes is NULL. slot: its slot of the symmetric
 * team scratch (shmem_coll.c). */
struct shmem__team {
	int n, me;
	int *pes;
	int start, stride;
	int slot;
	shmem_team_config_t config; /* as split got it (config_mask applied) */
};

static inline int shm__team_pe(const struct shmem__team *t, int i)
{
	return t->pes ? t->pes[i] : t->start + i * t->stride;
}

extern SHM_HIDDEN int shm__npes, shm__me;
extern SHM_HIDDEN struct shmem__team shm__world, shm__shared;
/* symmetric scratch of the library, allocated by shmem_init */
extern SHM_HIDDEN char *shm__scratch;
#define SHM_SCRATCH_BYTES (64 * 1024)

/* ---- threads ----------------------------------------------------------------
 * libhoist's client is single-threaded. Under SHMEM_THREAD_MULTIPLE
 * (shm__mt, set by shmem_init_thread before other threads exist) every
 * libhoist call of the library holds shm__mu; below MULTIPLE no lock is
 * taken. The macros below wrap the libhoist calls this library makes, so
 * every file that includes this header serializes them. libhoist's
 * blocking waits (hoist_wait_until*, hoist_signal_wait_until) are NOT
 * wrapped: under MULTIPLE the library polls the test forms instead, each
 * poll under the lock, backing off outside it (shm__backoff). */
extern SHM_HIDDEN int shm__mt;
extern SHM_HIDDEN pthread_mutex_t shm__mu;
static inline void shm__lock(void)
{
	if (shm__mt)
		pthread_mutex_lock(&shm__mu);
}
static inline void shm__unlock(void)
{
	if (shm__mt)
		pthread_mutex_unlock(&shm__mu);
}
#define SHM_LOCKED(call) __extension__({ shm__lock(); __typeof__(call) r_ = (call); shm__unlock(); r_; })
#define SHM_LOCKED_V(call) __extension__({ shm__lock(); call; shm__unlock(); })
#define hoist_put(...) SHM_LOCKED(hoist_put(__VA_ARGS__))
#define hoist_get(...) SHM_LOCKED(hoist_get(__VA_ARGS__))
#define hoist_put_nbi(...) SHM_LOCKED(hoist_put_nbi(__VA_ARGS__))
#define hoist_get_nbi(...) SHM_LOCKED(hoist_get_nbi(__VA_ARGS__))
#define hoist_put_strided(...) SHM_LOCKED(hoist_put_strided(__VA_ARGS__))
#define hoist_get_strided(...) SHM_LOCKED(hoist_get_strided(__VA_ARGS__))
#define hoist_put_signal(...) SHM_LOCKED(hoist_put_signal(__VA_ARGS__))
#define hoist_put_signal_nbi(...) SHM_LOCKED(hoist_put_signal_nbi(__VA_ARGS__))
#define hoist_signal_fetch(...) SHM_LOCKED(hoist_signal_fetch(__VA_ARGS__))
#define hoist_atomic(...) SHM_LOCKED(hoist_atomic(__VA_ARGS__))
#define hoist_atomic_nbi(...) SHM_LOCKED(hoist_atomic_nbi(__VA_ARGS__))
#define hoist_fence() SHM_LOCKED(hoist_fence())
#define hoist_quiet() SHM_LOCKED(hoist_quiet())
#define hoist_barrier() SHM_LOCKED(hoist_barrier())
#define hoist_broadcast(...) SHM_LOCKED(hoist_broadcast(__VA_ARGS__))
#define hoist_allreduce(...) SHM_LOCKED(hoist_allreduce(__VA_ARGS__))
#define hoist_allgather(...) SHM_LOCKED(hoist_allgather(__VA_ARGS__))
#define hoist_alltoall(...) SHM_LOCKED(hoist_alltoall(__VA_ARGS__))
#define hoist_malloc(...) SHM_LOCKED(hoist_malloc(__VA_ARGS__))
#define hoist_free(...) SHM_LOCKED_V(hoist_free(__VA_ARGS__))
#define hoist_ptr(...) SHM_LOCKED(hoist_ptr(__VA_ARGS__))
#define hoist_is_symmetric(...) SHM_LOCKED(hoist_is_symmetric(__VA_ARGS__))
#define hoist_test_until_all(...) SHM_LOCKED(hoist_test_until_all(__VA_ARGS__))
#define hoist_test_until_any(...) SHM_LOCKED(hoist_test_until_any(__VA_ARGS__))
#define hoist_test_until_some(...) SHM_LOCKED(hoist_test_until_some(__VA_ARGS__))
#define hoist_test_until_all_vector(...) SHM_LOCKED(hoist_test_until_all_vector(__VA_ARGS__))
#define hoist_test_until_any_vector(...) SHM_LOCKED(hoist_test_until_any_vector(__VA_ARGS__))
#define hoist_test_until_some_vector(...) SHM_LOCKED(hoist_test_until_some_vector(__VA_ARGS__))

/* a poll that found nothing: sched_yield for the first 64, then sleep
 * 1..256 us (doubling), never holding shm__mu */
SHM_HIDDEN void shm__backoff(unsigned *polls);
/* r = test until it is not 0 (1: done, < 0: error) */
#define SHM_POLL(r, test)                                                     \
	do {                                                                  \
		unsigned polls_ = 0;                                          \
		while (((r) = (test)) == 0)                                   \
			shm__backoff(&polls_);                                \
	} while (0)

/* team scratch: slots in chunks of SHM_TSLOTS_CHUNK (at most
 * SHM_TCHUNKS_MAX chunks), 0 for the active-set collectives, 1 for
 * SHMEM_TEAM_SHARED, the rest handed out by the team splits */
#define SHM_TSLOTS_CHUNK 32
#define SHM_TCHUNKS_MAX 16 /* 512 slots */
/* allocates the first chunk of the team scratch (collective over all PEs,
 * in shmem_init); shm__team_fini frees every chunk and the active-set
 * broadcast's scratch (in shmem_finalize) */
SHM_HIDDEN int shm__team_init(void);
SHM_HIDDEN void shm__team_fini(void);
/* slots there are now (every PE has the same) */
SHM_HIDDEN int shm__team_nslots(void);
/* k free slots agreed over parent (collective over it; may add a chunk,
 * collective over all PEs, when parent holds every PE): 0 or -errno */
SHM_HIDDEN int shm__team_slots(struct shmem__team *parent, int k, int *slots);
/* slot use at this PE */
SHM_HIDDEN void shm__team_slot_set(int slot, int used);

/* keep the first error for shmemx_last_error(); returns rc. shm__errf
 * keeps, with it, the message shmemx_last_error_string() returns (printf
 * format; shm__err's message is shmemx_strerror's text) */
SHM_HIDDEN int shm__err(int rc);
SHM_HIDDEN int shm__errf(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* rc (< 0: kept) of routine fn's libhoist call on world PE pe with the
 * remote (symmetric) address remote of n bytes (0: unknown): the message
 * names a non-symmetric address */
SHM_HIDDEN int shm__rma_err(const char *fn, int rc, int pe, const void *remote, size_t n);
/* 0 for a live context (SHMEM_CTX_DEFAULT or created), else records and
 * returns -EINVAL */
SHM_HIDDEN int shm__ctx(shmem_ctx_t ctx);
/* the world PE of ctx's team-relative pe; -1 (error recorded, the
 * message naming the calling routine) for an invalid context or a pe
 * outside its team */
SHM_HIDDEN int shm__ctx_pe_(const char *fn, shmem_ctx_t ctx, int pe);
#define shm__ctx_pe(ctx, pe) shm__ctx_pe_(__func__, ctx, pe)
/* SHMEM_CMP_* -> hoist_cmp_t; 0 for an unknown comparison */
SHM_HIDDEN hoist_cmp_t shm__cmp(int cmp);

/* hoist_type_t of an integer or floating type (an expression of it; the
 * 16-bit types have none: callers do not pass it to libhoist) */
#define SHM_HTYPE(x)                                                                       \
	_Generic((x), short: HOIST_INT32, unsigned short: HOIST_UINT32, int: HOIST_INT32, unsigned int: HOIST_UINT32, long: HOIST_INT64,         \
		 unsigned long: HOIST_UINT64, long long: HOIST_INT64,                          \
		 unsigned long long: HOIST_UINT64, float: HOIST_FLOAT, double: HOIST_DOUBLE)

#endif
