/*
 * Deterministic symmetric-heap allocator. Every PE runs the same sequence of
 * hoist_malloc/hoist_free calls, so every PE computes the same offsets. The
 * metadata lives in ordinary process memory, never in the heap itself, so a
 * remote put cannot corrupt it.
 */
#ifndef HOIST_SYMHEAP_H
#define HOIST_SYMHEAP_H

#include <stdint.h>

#define SYMHEAP_ALIGN 64u

struct symheap_block;

struct symheap {
	uint64_t size;                /* bytes managed */
	uint64_t used;                /* bytes handed out (rounded sizes) */
	struct symheap_block *blocks; /* address-ordered list, free and used */
};

int symheap_init(struct symheap *h, uint64_t size);  /* 0 or -errno */
void symheap_fini(struct symheap *h);
/* First fit. Returns the offset (>= 0) or -ENOMEM / -EINVAL (size 0). */
int64_t symheap_alloc(struct symheap *h, uint64_t size);
/* Frees the block at off; -EINVAL if off is not the start of a used block. */
int symheap_free(struct symheap *h, uint64_t off);
/* Size of the used block at off, or 0. */
uint64_t symheap_block_size(const struct symheap *h, uint64_t off);

#endif
