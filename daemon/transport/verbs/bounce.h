/* The bounce ring (bounce.c): contiguous FIFO allocations in a ring of
 * size bytes, the arithmetic behind a verbs connection's bounce buffer
 * (payloads copied out of a client's memory before the send is posted).
 * Positions are free-running byte counts: head is where the oldest live
 * allocation starts, tail where the newest ends; an allocation is freed
 * by moving head to its end once it completed, oldest first. */
#ifndef HOISTD_BOUNCE_H
#define HOISTD_BOUNCE_H

#include <stdint.h>

/* Room for len bytes, contiguous, in the ring of size bytes at (*head,
 * *tail). Its offset in the ring, with *tail and *end moved to its end
 * (hand *end to *head when it completed); or -1 when it does not fit now
 * (or ever: len > size). An empty ring (*head == *tail) takes any len up
 * to size, wherever the previous allocations ended. */
int64_t bounce_ring_alloc(uint64_t size, uint64_t *head, uint64_t *tail, uint64_t len,
			  uint64_t *end);

#endif
