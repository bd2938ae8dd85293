#include "symheap.h"

#include <errno.h>
#include <stdlib.h>

struct symheap_block {
	uint64_t off;
	uint64_t len;
	int used;
	struct symheap_block *next;
};

int symheap_init(struct symheap *h, uint64_t size)
{
	size &= ~(uint64_t)(SYMHEAP_ALIGN - 1);
	if (size == 0)
		return -EINVAL;
	struct symheap_block *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->len = size;
	h->size = size;
	h->used = 0;
	h->blocks = b;
	return 0;
}

void symheap_fini(struct symheap *h)
{
	struct symheap_block *b = h->blocks;
	while (b) {
		struct symheap_block *n = b->next;
		free(b);
		b = n;
	}
	h->blocks = NULL;
	h->size = h->used = 0;
}

int64_t symheap_alloc(struct symheap *h, uint64_t size)
{
	if (size == 0)
		return -EINVAL;
	if (size > h->size)
		return -ENOMEM;
	uint64_t len = (size + SYMHEAP_ALIGN - 1) & ~(uint64_t)(SYMHEAP_ALIGN - 1);
	for (struct symheap_block *b = h->blocks; b; b = b->next) {
		if (b->used || b->len < len)
			continue;
		if (b->len > len) {
			struct symheap_block *rest = calloc(1, sizeof(*rest));
			if (!rest)
				return -ENOMEM;
			rest->off = b->off + len;
			rest->len = b->len - len;
			rest->next = b->next;
			b->next = rest;
			b->len = len;
		}
		b->used = 1;
		h->used += len;
		return (int64_t)b->off;
	}
	return -ENOMEM;
}

int symheap_free(struct symheap *h, uint64_t off)
{
	struct symheap_block *prev = NULL, *b = h->blocks;
	while (b && b->off < off) {
		prev = b;
		b = b->next;
	}
	if (!b || b->off != off || !b->used)
		return -EINVAL;
	b->used = 0;
	h->used -= b->len;
	struct symheap_block *n = b->next;
	if (n && !n->used) { /* merge with the next free block */
		b->len += n->len;
		b->next = n->next;
		free(n);
	}
	if (prev && !prev->used) { /* and with the previous one */
		prev->len += b->len;
		prev->next = b->next;
		free(b);
	}
	return 0;
}

uint64_t symheap_block_size(const struct symheap *h, uint64_t off)
{
	for (const struct symheap_block *b = h->blocks; b; b = b->next)
		if (b->off == off)
			return b->used ? b->len : 0;
	return 0;
}
