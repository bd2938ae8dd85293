#include "phase.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* counters are read by another thread (stats): relaxed single-writer */
#define PH_ADD(field, v) __atomic_store_n(&(field), __atomic_load_n(&(field), __ATOMIC_RELAXED) + (v), __ATOMIC_RELAXED)
#define PH_INC(field) PH_ADD(field, 1)

#define PH_MAX_ENTRIES (1u << 24)

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t b = 1;
	while (b < n)
		b <<= 1;
	return b;
}

static uint32_t id_hash(uint64_t id)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ull;
	h ^= h >> 29;
	return (uint32_t)h;
}

static uint32_t get_hash(int32_t pe, uint64_t off, uint64_t len)
{
	uint64_t h = off * 0x9e3779b97f4a7c15ull;
	h ^= (len + ((uint64_t)(uint32_t)pe << 40)) * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 31;
	return (uint32_t)h;
}

int phase_init_periods(struct phase_table *t, uint32_t max_phases, uint32_t max_gets,
		       uint32_t period_max)
{
	memset(t, 0, sizeof(*t));
	if (max_phases == 0 || max_gets == 0 || max_phases > PH_MAX_ENTRIES / max_gets ||
	    period_max == 0 || period_max > PHASE_PERIOD_MAX)
		return -EINVAL;
	t->nbuckets = pow2_at_least(2 * max_phases);
	t->gnbuckets = pow2_at_least(2 * max_gets);
	t->buckets = malloc(t->nbuckets * sizeof(*t->buckets));
	t->s = calloc(max_phases, sizeof(*t->s));
	t->g = calloc((size_t)max_phases * period_max * max_gets, sizeof(*t->g));
	t->order = malloc(max_gets * sizeof(*t->order));
	t->gbuckets = malloc(t->gnbuckets * sizeof(*t->gbuckets));
	t->gnext = malloc(max_gets * sizeof(*t->gnext));
	t->scratch = malloc(max_gets * sizeof(*t->scratch));
	if (!t->buckets || !t->s || !t->g || !t->order || !t->gbuckets || !t->gnext || !t->scratch) {
		phase_fini(t);
		return -ENOMEM;
	}
	memset(t->buckets, 0xff, t->nbuckets * sizeof(*t->buckets));
	memset(t->gbuckets, 0xff, t->gnbuckets * sizeof(*t->gbuckets));
	t->max_phases = max_phases;
	t->max_gets = max_gets;
	t->period_max = period_max;
	for (uint32_t i = 0; i < max_phases; i++)
		t->s[i].hnext = i + 1 < max_phases ? i + 1 : PH_NIL;
	t->free_head = 0;
	t->lru_head = t->lru_tail = PH_NIL;
	t->cur = PH_NIL;
	return 0;
}

int phase_init(struct phase_table *t, uint32_t max_phases, uint32_t max_gets)
{
	return phase_init_periods(t, max_phases, max_gets, 1);
}

void phase_fini(struct phase_table *t)
{
	free(t->buckets);
	free(t->s);
	free(t->g);
	free(t->order);
	free(t->gbuckets);
	free(t->gnext);
	free(t->scratch);
	memset(t, 0, sizeof(*t));
	t->cur = PH_NIL;
}

/* ---- phase slots: id hash + LRU (most recently begun first) ---- */

static void lru_unlink(struct phase_table *t, uint32_t i)
{
	struct phase_slot *s = &t->s[i];
	if (s->lru_prev != PH_NIL)
		t->s[s->lru_prev].lru_next = s->lru_next;
	else
		t->lru_head = s->lru_next;
	if (s->lru_next != PH_NIL)
		t->s[s->lru_next].lru_prev = s->lru_prev;
	else
		t->lru_tail = s->lru_prev;
}

static void lru_push_front(struct phase_table *t, uint32_t i)
{
	struct phase_slot *s = &t->s[i];
	s->lru_prev = PH_NIL;
	s->lru_next = t->lru_head;
	if (t->lru_head != PH_NIL)
		t->s[t->lru_head].lru_prev = i;
	t->lru_head = i;
	if (t->lru_tail == PH_NIL)
		t->lru_tail = i;
}

static uint32_t *find_slot(const struct phase_table *t, uint64_t id)
{
	uint32_t *p = &t->buckets[id_hash(id) & (t->nbuckets - 1)];
	while (*p != PH_NIL && t->s[*p].id != id)
		p = &t->s[*p].hnext;
	return p;
}

/* run buffer b of a slot */
static inline struct phase_get *runbuf(const struct phase_table *t, uint32_t slot, uint32_t b)
{
	return &t->g[((size_t)slot * t->period_max + b) * t->max_gets];
}

/* the buffer of the slot's latest run; during a run: the current one */
static inline struct phase_get *slab(const struct phase_table *t, uint32_t slot)
{
	return runbuf(t, slot, t->s[slot].head);
}

/* the buffer of the run `age` runs before the latest (0: the latest) */
static inline uint32_t buf_of_age(const struct phase_table *t, const struct phase_slot *s, uint32_t age)
{
	return (s->head + t->period_max - age) % t->period_max;
}

/* ---- the current run ---- */

static uint32_t *find_get(struct phase_table *t, const struct phase_get *g, int32_t pe, uint64_t off,
			  uint64_t len)
{
	uint32_t *p = &t->gbuckets[get_hash(pe, off, len) & (t->gnbuckets - 1)];
	while (*p != PH_NIL && !(g[*p].pe == pe && g[*p].off == off && g[*p].len == len))
		p = &t->gnext[*p];
	return p;
}

struct phase_get *phase_begin(struct phase_table *t, uint64_t id, uint32_t *n)
{
	if (t->cur != PH_NIL)
		phase_end(t);
	PH_INC(t->st.phases);
	uint32_t *hslot = find_slot(t, id);
	uint32_t i = *hslot;
	if (i != PH_NIL) {
		lru_unlink(t, i);
	} else {
		if (t->free_head == PH_NIL) { /* evict the least recently begun */
			uint32_t v = t->lru_tail;
			uint32_t *vs = find_slot(t, t->s[v].id);
			*vs = t->s[v].hnext;
			lru_unlink(t, v);
			t->s[v].used = 0;
			t->s[v].hnext = t->free_head;
			t->free_head = v;
			t->nphases--;
			PH_INC(t->st.evicted);
			hslot = find_slot(t, id); /* the chain may have changed */
		}
		i = t->free_head;
		t->free_head = t->s[i].hnext;
		memset(&t->s[i], 0, sizeof(t->s[i])); /* no runs known */
		t->s[i].id = id;
		t->s[i].used = 1;
		t->s[i].hnext = PH_NIL;
		*hslot = i;
		t->nphases++;
	}
	lru_push_front(t, i);

	/* the prediction: the run p back, p the smallest period that matched
	 * (the latest run's set equals the one p runs before it), else 1 */
	struct phase_slot *s = &t->s[i];
	uint32_t p = 1;
	t->matched = 0;
	for (uint32_t q = 1; q <= t->period_max && q < s->nsig; q++)
		if (s->sig[0] == s->sig[q] && s->sign[0] == s->sign[q]) {
			p = q;
			t->matched = 1;
			break;
		}
	uint32_t from = buf_of_age(t, s, p - 1);
	/* this run overwrites the oldest buffer (age period_max - 1) */
	uint32_t into = (s->head + 1) % t->period_max;
	uint32_t np = s->nsig ? s->bn[from] : 0;
	if (into != from)
		memcpy(runbuf(t, i, into), runbuf(t, i, from), (size_t)np * sizeof(struct phase_get));
	s->head = (uint8_t)into;
	s->n = np;
	t->period = np ? p : 0;
	t->dry = np && s->backoff && !t->matched;
	if (np && p > 1)
		PH_INC(t->st.periodic);
	if (t->dry)
		PH_INC(t->st.dry);
	struct phase_get *g = runbuf(t, i, into);
	t->cur = i;
	t->npred = np;
	t->nused = 0;
	t->nlate = 0;
	t->box_lo = UINT64_MAX;
	t->box_hi = 0;
	/* chains in index order (FIFO among duplicates): insert from the back */
	for (uint32_t k = np; k-- > 0;) {
		struct phase_get *e = &g[k];
		e->flags = 0;
		e->state = 0; /* per run; cookie is the caller's memory across runs */
		uint32_t *b = &t->gbuckets[get_hash(e->pe, e->off, e->len) & (t->gnbuckets - 1)];
		t->gnext[k] = *b;
		*b = k;
		if (e->len > 0) {
			uint64_t end = e->len > UINT64_MAX - e->off ? UINT64_MAX : e->off + e->len;
			if (e->off < t->box_lo)
				t->box_lo = e->off;
			if (end > t->box_hi)
				t->box_hi = end;
		}
	}
	PH_ADD(t->st.predicted, np);
	*n = np;
	return g;
}

int phase_get(struct phase_table *t, int32_t pe, uint64_t off, uint64_t len)
{
	t->miss = PHASE_MISS_NONE;
	if (t->cur == PH_NIL) {
		PH_INC(t->st.misses);
		t->miss = PHASE_MISS_IDLE;
		return -1;
	}
	struct phase_slot *s = &t->s[t->cur];
	struct phase_get *g = slab(t, t->cur);
	uint32_t *p = find_get(t, g, pe, off, len);
	uint32_t i = *p;
	if (i != PH_NIL) {
		*p = t->gnext[i]; /* used: out of the hash */
		g[i].flags |= PHASE_F_USED;
		t->order[t->nused++] = i;
		if (g[i].flags & PHASE_F_INVALID) {
			PH_INC(t->st.misses);
			t->miss = PHASE_MISS_INVALID;
			return -1;
		}
		PH_INC(t->st.hits);
		return (int)i;
	}
	PH_INC(t->st.misses);
	if (s->n >= t->max_gets) {
		PH_INC(t->st.full);
		t->miss = PHASE_MISS_FULL;
		return -1;
	}
	t->miss = t->npred ? PHASE_MISS_NEW : PHASE_MISS_COLD;
	if (!t->npred)
		PH_INC(t->st.cold);
	i = s->n++;
	g[i].pe = pe;
	g[i].flags = PHASE_F_USED | PHASE_F_NEW;
	g[i].off = off;
	g[i].len = len;
	g[i].state = 0;
	g[i].cookie = 0;
	t->order[t->nused++] = i;
	PH_INC(t->st.recorded);
	return -1;
}

int phase_take(struct phase_table *t, uint32_t i)
{
	if (t->cur == PH_NIL)
		return phase_get(t, 0, 0, 0); /* counts the idle miss */
	struct phase_get *g = slab(t, t->cur);
	if (i >= t->npred || (g[i].flags & (PHASE_F_USED | PHASE_F_INVALID)))
		return i < t->s[t->cur].n ? phase_get(t, g[i].pe, g[i].off, g[i].len) : -1;
	/* out of its hash chain (not necessarily its head: duplicates) */
	uint32_t *p = &t->gbuckets[get_hash(g[i].pe, g[i].off, g[i].len) & (t->gnbuckets - 1)];
	while (*p != PH_NIL && *p != i)
		p = &t->gnext[*p];
	if (*p == i)
		*p = t->gnext[i];
	g[i].flags |= PHASE_F_USED | PHASE_F_LATE;
	t->nlate++;
	PH_INC(t->st.hits);
	return (int)i;
}

uint32_t phase_invalidate(struct phase_table *t, int32_t pe, uint64_t off, uint64_t len)
{
	if (t->cur == PH_NIL || len == 0)
		return 0;
	uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
	if (end <= t->box_lo || off >= t->box_hi)
		return 0;
	struct phase_get *g = slab(t, t->cur);
	uint32_t n = 0;
	for (uint32_t i = 0; i < t->npred; i++) {
		struct phase_get *e = &g[i];
		if (e->pe != pe || (e->flags & (PHASE_F_USED | PHASE_F_INVALID)) || e->len == 0)
			continue;
		uint64_t e_end = e->len > UINT64_MAX - e->off ? UINT64_MAX : e->off + e->len;
		if (e->off < end && e_end > off) {
			e->flags |= PHASE_F_INVALID;
			n++;
		}
	}
	PH_ADD(t->st.invalidated, n);
	return n;
}

static uint32_t end_run(struct phase_table *t, int judge);

uint32_t phase_end(struct phase_table *t)
{
	return end_run(t, 1);
}

uint32_t phase_abandon(struct phase_table *t)
{
	if (t->cur == PH_NIL)
		return 0;
	struct phase_get *g = slab(t, t->cur);
	t->s[t->cur].n = t->npred; /* nothing was appended: no get ran */
	t->nused = 0;
	t->nlate = 0;
	for (uint32_t i = 0; i < t->npred; i++) {
		g[i].flags |= PHASE_F_USED;
		t->order[t->nused++] = i;
	}
	uint32_t kept = t->npred;
	end_run(t, 0);
	return kept;
}

static uint32_t end_run(struct phase_table *t, int judge)
{
	if (t->cur == PH_NIL)
		return 0;
	struct phase_slot *s = &t->s[t->cur];
	struct phase_get *g = slab(t, t->cur);
	for (uint32_t i = 0; i < t->npred; i++) /* empty the hash */
		t->gbuckets[get_hash(g[i].pe, g[i].off, g[i].len) & (t->gnbuckets - 1)] = PH_NIL;
	uint32_t wasted = s->n - t->nused - t->nlate; /* appended entries are all used */
	/* the gets seen when they happened, in that order; each late one
	 * (phase_take) goes before the first of them predicted after it */
	uint32_t nout = 0, late = 0;
	for (uint32_t k = 0; k < t->nused; k++) {
		uint32_t idx = t->order[k];
		for (; t->nlate && idx < t->npred && late < idx; late++)
			if (g[late].flags & PHASE_F_LATE)
				t->scratch[nout++] = g[late];
		t->scratch[nout++] = g[idx];
	}
	for (; t->nlate && late < t->npred; late++)
		if (g[late].flags & PHASE_F_LATE)
			t->scratch[nout++] = g[late];
	t->nused = nout;
	uint64_t sig = 0;
	for (uint32_t k = 0; k < t->nused; k++) {
		const struct phase_get *e = &t->scratch[k];
		/* order-independent: a sum of per-get hashes */
		sig += (uint64_t)get_hash(e->pe, e->off, e->len) * 0xff51afd7ed558ccdull + e->off +
		       ((uint64_t)e->len << 32) + ((uint64_t)(uint32_t)e->pe << 48);
	}
	memcpy(g, t->scratch, t->nused * sizeof(*g));
	s->n = t->nused;
	s->bn[s->head] = t->nused;
	/* the run's signature: the latest of the ring */
	memmove(&s->sig[1], &s->sig[0], t->period_max * sizeof(s->sig[0]));
	memmove(&s->sign[1], &s->sign[0], t->period_max * sizeof(s->sign[0]));
	s->sig[0] = sig;
	s->sign[0] = t->nused;
	if (s->nsig <= t->period_max)
		s->nsig++;
	/* judged by its predictions: mostly unused is bad */
	if (judge && t->npred) {
		if (2 * wasted > t->npred) {
			if (s->bad < PHASE_BAD_RUNS && ++s->bad == PHASE_BAD_RUNS && !s->backoff) {
				s->backoff = 1;
				PH_INC(t->st.backoffs);
			}
		} else {
			s->bad = 0;
			s->backoff = 0;
		}
	}
	t->cur = PH_NIL;
	t->npred = t->nused = t->nlate = 0;
	t->dry = t->matched = 0;
	t->period = 0;
	PH_ADD(t->st.wasted, wasted);
	return wasted;
}

struct phase_get *phase_current(struct phase_table *t, uint32_t *n)
{
	if (t->cur == PH_NIL) {
		*n = 0;
		return NULL;
	}
	*n = t->s[t->cur].n;
	return slab(t, t->cur);
}

uint32_t phase_history_size(const struct phase_table *t, uint64_t id)
{
	uint32_t i = *find_slot(t, id);
	return i == PH_NIL ? 0 : t->s[i].n;
}
