/*
 * The bounce ring's allocator (bounce.h): pure arithmetic over a ring's
 * free-running head and tail, used by the verbs transport for each
 * connection's bounce buffer and tested alone (tests/unit/test_bounce.c).
 */
#include "bounce.h"

int64_t bounce_ring_alloc(uint64_t size, uint64_t *head, uint64_t *tail, uint64_t len,
			  uint64_t *end)
{
	if (len > size)
		return -1;
	uint64_t pos = *tail;
	if (pos % size + len > size)
		pos += size - pos % size; /* wrap: skip the tail end */
	/* empty (everything allocated has completed): the skipped end is
	 * nobody's. Otherwise a wrapping request that fits only an empty ring
	 * waits for a completion that never comes. */
	if (*head == *tail)
		*head = pos;
	if (pos + len - *head > size)
		return -1;
	*tail = pos + len;
	*end = *tail;
	return (int64_t)(pos % size);
}
