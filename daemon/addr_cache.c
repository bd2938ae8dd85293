#include "addr_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* counters are read by another thread (stats): relaxed single-writer */
#define AC_INC(field) __atomic_store_n(&(field), __atomic_load_n(&(field), __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED)

static uint32_t key_hash(const struct addr_key *k)
{
	uint64_t h = k->job * 0x9e3779b97f4a7c15ull;
	h ^= ((uint64_t)(uint32_t)k->pe << 32 | k->seg) * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 29;
	return (uint32_t)h;
}

static int key_eq(const struct addr_key *a, const struct addr_key *b)
{
	return a->job == b->job && a->pe == b->pe && a->seg == b->seg;
}

int addr_cache_init(struct addr_cache *c, uint32_t cap)
{
	memset(c, 0, sizeof(*c));
	c->lru_head = c->lru_tail = c->free_head = AC_NIL;
	if (cap > (1u << 24))
		return -EINVAL;
	if (cap == 0)
		return 0; /* off: no table; lookup misses, insert keeps nothing */
	uint32_t nb = 1;
	while (nb < cap * 2)
		nb <<= 1;
	c->buckets = malloc(nb * sizeof(*c->buckets));
	c->e = calloc(cap, sizeof(*c->e));
	if (!c->buckets || !c->e) {
		addr_cache_fini(c);
		return -ENOMEM;
	}
	memset(c->buckets, 0xff, nb * sizeof(*c->buckets));
	c->cap = cap;
	c->nbuckets = nb;
	for (uint32_t i = 0; i < cap; i++)
		c->e[i].hnext = i + 1 < cap ? i + 1 : AC_NIL;
	c->free_head = 0;
	return 0;
}

void addr_cache_fini(struct addr_cache *c)
{
	free(c->buckets);
	free(c->e);
	c->buckets = NULL;
	c->e = NULL;
}

static void lru_unlink(struct addr_cache *c, uint32_t i)
{
	struct addr_entry *e = &c->e[i];
	if (e->lru_prev != AC_NIL)
		c->e[e->lru_prev].lru_next = e->lru_next;
	else
		c->lru_head = e->lru_next;
	if (e->lru_next != AC_NIL)
		c->e[e->lru_next].lru_prev = e->lru_prev;
	else
		c->lru_tail = e->lru_prev;
}

static void lru_push_front(struct addr_cache *c, uint32_t i)
{
	struct addr_entry *e = &c->e[i];
	e->lru_prev = AC_NIL;
	e->lru_next = c->lru_head;
	if (c->lru_head != AC_NIL)
		c->e[c->lru_head].lru_prev = i;
	c->lru_head = i;
	if (c->lru_tail == AC_NIL)
		c->lru_tail = i;
}

/* Only with a table (cap >= 1): the callers check c->cap first. */
static uint32_t *find_slot(struct addr_cache *c, const struct addr_key *k)
{
	uint32_t *p = &c->buckets[key_hash(k) & (c->nbuckets - 1)];
	while (*p != AC_NIL && !key_eq(&c->e[*p].key, k))
		p = &c->e[*p].hnext;
	return p;
}

static void remove_at(struct addr_cache *c, uint32_t *slot)
{
	uint32_t i = *slot;
	*slot = c->e[i].hnext;
	lru_unlink(c, i);
	c->e[i].used = 0;
	c->e[i].hnext = c->free_head;
	c->free_head = i;
	c->count--;
}

void addr_cache_count(struct addr_cache *c, int hit)
{
	if (hit)
		AC_INC(c->st.hits);
	else
		AC_INC(c->st.misses);
}

const struct addr_entry *addr_cache_lookup(struct addr_cache *c, const struct addr_key *k)
{
	const struct addr_entry *e = addr_cache_find(c, k);
	addr_cache_count(c, e != NULL);
	return e;
}

const struct addr_entry *addr_cache_find(struct addr_cache *c, const struct addr_key *k)
{
	uint32_t i = c->cap ? *find_slot(c, k) : AC_NIL;
	if (i == AC_NIL)
		return NULL;
	if (c->lru_head != i) {
		lru_unlink(c, i);
		lru_push_front(c, i);
	}
	return &c->e[i];
}

void addr_cache_insert(struct addr_cache *c, const struct addr_entry *in)
{
	if (!c->cap)
		return; /* off */
	uint32_t *slot = find_slot(c, &in->key);
	uint32_t i = *slot;
	if (i != AC_NIL) {
		struct addr_entry *e = &c->e[i];
		if ((int32_t)(in->gen - e->gen) < 0)
			return; /* stale reply: keep the newer registration */
		uint32_t p = e->lru_prev, n = e->lru_next, h = e->hnext;
		*e = *in;
		e->lru_prev = p;
		e->lru_next = n;
		e->hnext = h;
		e->used = 1;
		lru_unlink(c, i);
		lru_push_front(c, i);
		return;
	}
	if (c->free_head == AC_NIL) { /* evict the least recently used */
		struct addr_entry *victim = &c->e[c->lru_tail];
		remove_at(c, find_slot(c, &victim->key));
		AC_INC(c->st.evictions);
		slot = find_slot(c, &in->key); /* the chain may have changed */
	}
	i = c->free_head;
	c->free_head = c->e[i].hnext;
	c->e[i] = *in;
	c->e[i].used = 1;
	c->e[i].hnext = AC_NIL;
	*slot = i;
	lru_push_front(c, i);
	c->count++;
	AC_INC(c->st.inserts);
}

int addr_cache_invalidate(struct addr_cache *c, const struct addr_key *k, uint32_t gen)
{
	if (!c->cap)
		return 0;
	uint32_t *slot = find_slot(c, k);
	if (*slot == AC_NIL)
		return 0;
	/* UINT32_MAX: whatever generation is cached */
	if (gen != UINT32_MAX && (int32_t)(c->e[*slot].gen - gen) > 0)
		return 0;
	remove_at(c, slot);
	AC_INC(c->st.invalidations);
	return 1;
}

static uint32_t invalidate_where(struct addr_cache *c, int by_job, uint64_t job, int32_t node)
{
	uint32_t n = 0;
	for (uint32_t b = 0; b < c->nbuckets; b++) {
		uint32_t *slot = &c->buckets[b];
		while (*slot != AC_NIL) {
			struct addr_entry *e = &c->e[*slot];
			if (by_job ? e->key.job == job : e->node == node) {
				remove_at(c, slot);
				AC_INC(c->st.invalidations);
				n++;
			} else {
				slot = &e->hnext;
			}
		}
	}
	return n;
}

uint32_t addr_cache_invalidate_job(struct addr_cache *c, uint64_t job)
{
	return invalidate_where(c, 1, job, 0);
}

uint32_t addr_cache_invalidate_node(struct addr_cache *c, int32_t node)
{
	return invalidate_where(c, 0, 0, node);
}

void addr_cache_resolved(struct addr_cache *c, uint64_t ns)
{
	AC_INC(c->st.resolves);
	__atomic_store_n(&c->st.resolve_ns, __atomic_load_n(&c->st.resolve_ns, __ATOMIC_RELAXED) + ns,
			 __ATOMIC_RELAXED);
}
