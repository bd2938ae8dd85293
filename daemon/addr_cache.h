/*
 * Remote-address cache (seed 001): (job, PE, segment) -> where that segment
 * lives and how to address it directly (node, base, length, remote key,
 * generation). Bounded, LRU. A miss is not an error: the caller sends the
 * operation as an active message and the reply fills the entry.
 *
 * Single-threaded (progress thread). Fixed capacity, no allocation after
 * init: a hash table of indices over a preallocated entry array. Capacity
 * 0 is the cache switched off (setting addr_cache_entries = 0): every
 * lookup misses and inserts keep nothing, so every remote access is
 * resolved by its target (tcp: sent by name; verbs: a W_VRESOLVE round
 * trip first).
 */
#ifndef HOISTD_ADDR_CACHE_H
#define HOISTD_ADDR_CACHE_H

#include <stdint.h>

struct addr_key {
	uint64_t job;  /* cluster-wide job id (hash of the job key) */
	int32_t pe;
	uint32_t seg;
};

struct addr_entry {
	struct addr_key key;
	int32_t node;     /* node id that hosts the PE */
	uint64_t base;    /* remote base address of the segment */
	uint64_t len;     /* segment length */
	uint32_t rkey;    /* remote key (registration id) */
	uint32_t gen;     /* generation of the registration */
	/* internal */
	uint32_t lru_prev, lru_next, hnext;
	uint8_t used;
};

struct addr_cache_stats {
	uint64_t hits, misses, inserts, evictions, invalidations;
	/* misses that waited for an answer from the target's daemon before
	 * the access could be sent (verbs' W_VRESOLVE) and the summed time
	 * from question to answer; tcp sends a miss by name instead */
	uint64_t resolves, resolve_ns;
};

struct addr_cache {
	uint32_t cap;        /* entries */
	uint32_t nbuckets;   /* power of two */
	uint32_t count;
	uint32_t lru_head;   /* most recent; AC_NIL when empty */
	uint32_t lru_tail;   /* least recent */
	uint32_t free_head;
	uint32_t *buckets;
	struct addr_entry *e;
	struct addr_cache_stats st;
};

#define AC_NIL 0xffffffffu

/* 0 or -errno; cap 0: off (nothing cached, every lookup a miss) */
int addr_cache_init(struct addr_cache *c, uint32_t cap);
void addr_cache_fini(struct addr_cache *c);
/* The entry, moved to the front (counts a hit), or NULL (counts a miss).
 * The pointer is valid until the next insert/invalidate. */
const struct addr_entry *addr_cache_lookup(struct addr_cache *c, const struct addr_key *k);
/* addr_cache_lookup without counting, for a transport whose access may
 * stall after the lookup and come back (verbs: the ring or bounce buffer
 * full, a resolve in flight): it counts once per access with
 * addr_cache_count when the access is sent (hit) or asks (miss). */
const struct addr_entry *addr_cache_find(struct addr_cache *c, const struct addr_key *k);
void addr_cache_count(struct addr_cache *c, int hit);
/* Insert or update (an older generation never replaces a newer one);
 * evicts the least recently used entry when full. */
void addr_cache_insert(struct addr_cache *c, const struct addr_entry *in);
/* Drop (job, pe, seg) if its generation <= gen (UINT32_MAX: any). 1 if
 * dropped. */
int addr_cache_invalidate(struct addr_cache *c, const struct addr_key *k, uint32_t gen);
/* Drop every entry of a job (job ended) or of a node (peer lost). */
uint32_t addr_cache_invalidate_job(struct addr_cache *c, uint64_t job);
uint32_t addr_cache_invalidate_node(struct addr_cache *c, int32_t node);
/* A miss's resolve answered after ns nanoseconds (the transport measures
 * it: question sent to answer received). */
void addr_cache_resolved(struct addr_cache *c, uint64_t ns);

#endif
