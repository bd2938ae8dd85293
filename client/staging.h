/*
 * Client-side allocator of the staging arena (shared with the daemon).
 * Allocation is a circular log: space is handed out at the head and
 * reclaimed from the tail once every older allocation has been released,
 * so release order may differ from allocation order without fragmenting.
 * Put payloads are released when the daemon's SQ head passes their SQE;
 * get results once the client has copied them out.
 */
#ifndef HOIST_STAGING_H
#define HOIST_STAGING_H

#include <stdint.h>

#define STAGING_ALIGN 64u

struct staging_rec {
	uint64_t end;   /* log position after this allocation */
	uint32_t sq_idx; /* SQE that carries it (put payloads) */
	uint8_t done;
	uint8_t on_sq;  /* released when the daemon consumed sq_idx */
};

struct staging {
	uint64_t size;  /* arena bytes */
	uint64_t head;  /* next log position to allocate (monotonic) */
	uint64_t tail;  /* oldest log position still held */
	uint32_t nrec;  /* power of two */
	uint32_t rhead, rtail; /* records in use: [rtail, rhead) */
	uint32_t sq_head;      /* the daemon's SQ head as last seen */
	struct staging_rec *rec;
};

int staging_init(struct staging *s, uint64_t size, uint32_t nrec); /* 0 or -errno */
void staging_fini(struct staging *s);
/* Reserve len bytes; on success *off is the arena offset and the return
 * value the record id (>= 0). -EAGAIN: full now (release something and
 * retry); -ENOMEM: len can never fit. */
int64_t staging_alloc(struct staging *s, uint64_t len, uint64_t *off);
/* Tie a record to the SQE that consumes it (released by staging_sq_done). */
void staging_bind_sq(struct staging *s, int64_t id, uint32_t sq_idx);
void staging_release(struct staging *s, int64_t id);
/* The daemon's SQ head is sq_head: release every bound record it passed. */
void staging_sq_done(struct staging *s, uint32_t sq_head);
uint64_t staging_in_use(const struct staging *s);
/* Largest single allocation that can ever succeed. */
static inline uint64_t staging_max_alloc(const struct staging *s)
{
	return s->size / 2;
}

#endif
