/*
 * libhoist internals. Not installed. Tests link the static archive and use
 * hoist__ctx() to reach the raw rings (e.g. to write malformed descriptors).
 */
#ifndef HOIST_CLIENT_INTERNAL_H
#define HOIST_CLIENT_INTERNAL_H

#include <stdint.h>
#include <stddef.h>

#include "hoist.h"
#include "hoist_shm.h"
#include "staging.h"
#include "symheap.h"

#define HOIST_API __attribute__((visibility("default")))

/* An operation that waits for a CQE (gets, quiet). */
struct hoist_op {
	uint8_t busy;
	uint8_t done;
	uint8_t copyout;   /* get into staging: copy to dst when done */
	int32_t res;
	int64_t stage_id;  /* staging record, -1 if none */
	uint64_t stage_off;
	void *dst;
	uint64_t len;
	struct hoist_op *next_nbi; /* list of nbi gets awaiting copy-out */
	uint8_t *arrived;  /* collective: [size] source blocks landed (partial CQEs) */
};

struct hoist_ctx {
	int initialized;
	int sock;          /* attach socket, kept open: hang-up = daemon died */
	int doorbell;      /* eventfd of the daemon's progress thread */
	int rank, size;
	uint32_t spin_us;

	struct hoist_ctrl *ctrl;
	size_t ring_bytes;
	struct hoist_sqe *sq;
	struct hoist_cqe *cq;
	uint32_t sq_mask, cq_mask;
	uint32_t sq_tail;      /* local copy of what we published */
	uint32_t sq_head_seen; /* last daemon head we read */
	uint32_t cq_head;

	char *staging_base;
	struct staging stage;
	char *heap_base;
	uint64_t heap_bytes;
	struct symheap heap;

	struct hoist_op *ops;  /* indexed by user_data - 1; ops[nops] is quiet's */
	uint32_t nops;
	uint32_t ops_free_hint;
	struct hoist_op *nbi_head, *nbi_tail;

	int auto_overlap;      /* 0: every put completes remotely before it returns */
	/* prefetch table published by the daemon (automatic overlap) */
	struct hoist_pf_slot *pf_table;
	char *pf_arena;
	uint64_t pf_region_bytes;
	uint32_t pf_slots, pf_cursor;
	uint32_t pf_gen;       /* phase runs started, counted like the daemon */
	uint64_t pf_fast;      /* gets served here (for tests) */
	int32_t sticky_err;    /* first failed deferred put, reported at quiet */
	uint32_t barrier_target; /* epoch barrier_wait waits for */
	int barrier_pending;
};

extern struct hoist_ctx hoist__g;

/* Test hook: the library's context (NULL before hoist_init). */
HOIST_API struct hoist_ctx *hoist__ctx(void);

/* env.c */
struct hoist_env {
	int rank, size;
	char job[256];
	char runtime_dir[256];
	uint64_t heap_bytes;
	uint32_t spin_us;
	int spin_set;
	int auto_overlap;  /* HOIST_AUTO, default 1 */
};
int hoist__env_read(struct hoist_env *e);
int hoist__runtime_dir(char *buf, size_t len);

/* rma.c / wait.c: posting and reaping */
int hoist__sqe_get(struct hoist_ctx *c, struct hoist_sqe **out);
void hoist__sqe_submit(struct hoist_ctx *c);
void hoist__kick(struct hoist_ctx *c);
int hoist__reap(struct hoist_ctx *c);
int hoist__wait_op(struct hoist_ctx *c, struct hoist_op *op);
int hoist__op_alloc(struct hoist_ctx *c, struct hoist_op **out);
void hoist__op_free(struct hoist_ctx *c, struct hoist_op *op);
int hoist__check_daemon(struct hoist_ctx *c);
int hoist__quiet(struct hoist_ctx *c);
int hoist__barrier_notify(struct hoist_ctx *c, uint64_t phase);
int hoist__wait_epoch(struct hoist_ctx *c, uint32_t target);
/* Until op completed (its result) or the partial completion of pe came (0). */
int hoist__wait_arrival(struct hoist_ctx *c, struct hoist_op *op, int pe);

static inline uint64_t hoist__op_udata(struct hoist_ctx *c, struct hoist_op *op)
{
	return (uint64_t)(op - c->ops) + 1;
}

#endif
