/*
 * shmem_internal.h - what the parts of libhoist-shmem share.
 */
#ifndef SHMEM_INTERNAL_H
#define SHMEM_INTERNAL_H

#include <errno.h>
#include <hoist.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "shmem.h"
#include "shmemx.h"

/* the library defines the deprecated function of this generic name */
#undef shmem_wait_until

#define SHM_HIDDEN __attribute__((visibility("hidden")))

_Static_assert(sizeof(long) == 8 && sizeof(long long) == 8 && sizeof(int) == 4,
	       "libhoist-shmem maps long onto 64-bit hoist types (LP64)");

struct shmem__ctx {
	int unused;
};
/* A team: n members, this PE's index me, member i is world PE pes[i], or
 * start + i * stride when pes is NULL. slot: its symmetric scratch in
 * shm__tscratch (shmem_coll.c). */
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

/* team scratch: SHM_TSLOTS slots, 0 for the active-set collectives, 1 for
 * SHMEM_TEAM_SHARED, the rest handed out by the team splits */
#define SHM_TSLOTS 32
extern SHM_HIDDEN char *shm__tscratch;
/* allocates the team scratch (collective over all PEs, in shmem_init) */
SHM_HIDDEN int shm__team_init(void);
/* k free slots agreed over parent (collective over it): 0 or -errno */
SHM_HIDDEN int shm__team_slots(struct shmem__team *parent, int k, int *slots);
/* slot use at this PE */
SHM_HIDDEN void shm__team_slot_set(int slot, int used);

/* keep the first error for shmemx_last_error(); returns rc */
SHM_HIDDEN int shm__err(int rc);
/* 0 for SHMEM_CTX_DEFAULT, else records and returns -EINVAL */
SHM_HIDDEN int shm__ctx(shmem_ctx_t ctx);
/* SHMEM_CMP_* -> hoist_cmp_t; 0 for an unknown comparison */
SHM_HIDDEN hoist_cmp_t shm__cmp(int cmp);

/* hoist_type_t of an integer or floating type (an expression of it; the
 * 16-bit types have none: callers do not pass it to libhoist) */
#define SHM_HTYPE(x)                                                                       \
	_Generic((x), short: HOIST_INT32, unsigned short: HOIST_UINT32, int: HOIST_INT32, unsigned int: HOIST_UINT32, long: HOIST_INT64,         \
		 unsigned long: HOIST_UINT64, long long: HOIST_INT64,                          \
		 unsigned long long: HOIST_UINT64, float: HOIST_FLOAT, double: HOIST_DOUBLE)

#endif
