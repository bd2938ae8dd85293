#include "conflict.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* counters are read by another thread (stats): relaxed single-writer */
#define CF_ADD(field, v) __atomic_store_n(&(field), __atomic_load_n(&(field), __ATOMIC_RELAXED) + (v), __ATOMIC_RELAXED)
#define CF_INC(field) CF_ADD(field, 1)

#define CF_MAX_CAP (1u << 26)

static void target_reset(struct conflict_target *t)
{
	t->head = t->tail = t->root = CF_NIL;
	t->count = 0;
	t->lo = UINT64_MAX;
	t->hi = 0;
	t->active_pos = CF_NIL;
	t->stale = 0;
	for (int l = 0; l < CF_GRID_LEVELS; l++)
		t->lcount[l] = 0;
}

int conflict_init(struct conflict *c, int32_t npes, uint32_t cap)
{
	memset(c, 0, sizeof(*c));
	if (npes < 1 || cap == 0 || cap > CF_MAX_CAP)
		return -EINVAL;
	uint32_t nact = (uint32_t)npes < cap ? (uint32_t)npes : cap;
	uint32_t ncell = 16;
	while (ncell < 2 * cap)
		ncell *= 2;
	c->t = malloc((size_t)npes * sizeof(*c->t));
	c->n = malloc((size_t)cap * sizeof(*c->n));
	c->tn = malloc((size_t)cap * sizeof(*c->tn));
	c->active = malloc((size_t)nact * sizeof(*c->active));
	c->cells = aligned_alloc(64, (size_t)ncell * sizeof(*c->cells)); /* slot groups in lines */
	if (!c->t || !c->n || !c->tn || !c->active || !c->cells) {
		conflict_fini(c);
		return -ENOMEM;
	}
	c->npes = npes;
	c->cap = cap;
	c->cell_mask = ncell - 1;
	for (int32_t pe = 0; pe < npes; pe++)
		target_reset(&c->t[pe]);
	memset(c->n, 0, (size_t)cap * sizeof(*c->n));
	memset(c->tn, 0, (size_t)cap * sizeof(*c->tn));
	for (uint32_t i = 0; i < cap; i++)
		c->n[i].next = i + 1 < cap ? i + 1 : CF_NIL;
	for (uint32_t i = 0; i < ncell; i++)
		c->cells[i] = (struct conflict_cell){.head = CF_NIL};
	c->free_head = 0;
	return 0;
}

void conflict_fini(struct conflict *c)
{
	free(c->t);
	free(c->n);
	free(c->tn);
	free(c->active);
	free(c->cells);
	c->t = NULL;
	c->n = NULL;
	c->tn = NULL;
	c->active = NULL;
	c->cells = NULL;
	c->npes = 0;
	c->cap = c->count = c->nactive = c->ncells = c->cell_mask = 0;
}

/* ---- AVL interval tree over c->n, keyed by (start, seq) ---- */

static inline int32_t height(const struct conflict *c, uint32_t i)
{
	return i == CF_NIL ? 0 : c->tn[i].height;
}

static inline int key_less(const struct conflict_node *a, const struct conflict_node *b)
{
	return a->start < b->start || (a->start == b->start && a->seq < b->seq);
}

static void pull(struct conflict *c, uint32_t i)
{
	struct conflict_tnode *x = &c->tn[i];
	int32_t hl = height(c, x->left), hr = height(c, x->right);
	x->height = 1 + (hl > hr ? hl : hr);
	x->maxend = c->n[i].end;
	x->maxseq = c->n[i].seq;
	if (x->left != CF_NIL) {
		const struct conflict_tnode *l = &c->tn[x->left];
		if (l->maxend > x->maxend)
			x->maxend = l->maxend;
		if (l->maxseq > x->maxseq)
			x->maxseq = l->maxseq;
	}
	if (x->right != CF_NIL) {
		const struct conflict_tnode *r = &c->tn[x->right];
		if (r->maxend > x->maxend)
			x->maxend = r->maxend;
		if (r->maxseq > x->maxseq)
			x->maxseq = r->maxseq;
	}
}

static uint32_t rot_right(struct conflict *c, uint32_t i)
{
	uint32_t l = c->tn[i].left;
	c->tn[i].left = c->tn[l].right;
	c->tn[l].right = i;
	pull(c, i);
	pull(c, l);
	return l;
}

static uint32_t rot_left(struct conflict *c, uint32_t i)
{
	uint32_t r = c->tn[i].right;
	c->tn[i].right = c->tn[r].left;
	c->tn[r].left = i;
	pull(c, i);
	pull(c, r);
	return r;
}

static uint32_t rebalance(struct conflict *c, uint32_t i)
{
	pull(c, i);
	struct conflict_tnode *x = &c->tn[i];
	int32_t bf = height(c, x->left) - height(c, x->right);
	if (bf > 1) {
		uint32_t l = x->left;
		if (height(c, c->tn[l].left) < height(c, c->tn[l].right))
			x->left = rot_left(c, l);
		return rot_right(c, i);
	}
	if (bf < -1) {
		uint32_t r = x->right;
		if (height(c, c->tn[r].right) < height(c, c->tn[r].left))
			x->right = rot_right(c, r);
		return rot_left(c, i);
	}
	return i;
}

static uint32_t tree_insert(struct conflict *c, uint32_t root, uint32_t x)
{
	if (root == CF_NIL) {
		c->tn[x].left = c->tn[x].right = CF_NIL;
		pull(c, x);
		return x;
	}
	if (key_less(&c->n[x], &c->n[root]))
		c->tn[root].left = tree_insert(c, c->tn[root].left, x);
	else
		c->tn[root].right = tree_insert(c, c->tn[root].right, x);
	return rebalance(c, root);
}

static uint32_t tree_remove_min(struct conflict *c, uint32_t root, uint32_t *min)
{
	if (c->tn[root].left == CF_NIL) {
		*min = root;
		return c->tn[root].right;
	}
	c->tn[root].left = tree_remove_min(c, c->tn[root].left, min);
	return rebalance(c, root);
}

/* x must be in the tree under root */
static uint32_t tree_erase(struct conflict *c, uint32_t root, uint32_t x)
{
	if (root == x) {
		uint32_t l = c->tn[x].left, r = c->tn[x].right, m;
		if (r == CF_NIL)
			return l;
		r = tree_remove_min(c, r, &m);
		c->tn[m].left = l;
		c->tn[m].right = r;
		return rebalance(c, m);
	}
	if (key_less(&c->n[x], &c->n[root]))
		c->tn[root].left = tree_erase(c, c->tn[root].left, x);
	else
		c->tn[root].right = tree_erase(c, c->tn[root].right, x);
	return rebalance(c, root);
}

struct cf_query {
	uint64_t qs, qe; /* [qs, qe), qs < qe */
	uint64_t best;   /* highest overlapping seq found so far */
	uint64_t visits;
};

/* Branch and bound: a subtree is skipped when none of its intervals ends
 * after qs or none is newer than the best found; the right subtree also
 * when this node already starts at or after qe (keys are ordered by start).
 * The child with the newer max seq is searched first so the bound tightens
 * early (one path for a stack of identical intervals). */
static void tree_search(const struct conflict *c, uint32_t i, struct cf_query *q)
{
	while (i != CF_NIL) {
		const struct conflict_tnode *tx = &c->tn[i];
		if (tx->maxend <= q->qs || tx->maxseq <= q->best)
			return;
		const struct conflict_node *x = &c->n[i];
		q->visits++;
		if (x->start < q->qe && x->end > q->qs && x->seq > q->best)
			q->best = x->seq;
		uint32_t l = tx->left;
		uint32_t r = x->start < q->qe ? tx->right : CF_NIL;
		if (l != CF_NIL && r != CF_NIL) {
			if (c->tn[l].maxseq > c->tn[r].maxseq) {
				tree_search(c, l, q);
				i = r;
			} else {
				tree_search(c, r, q);
				i = l;
			}
		} else {
			i = l != CF_NIL ? l : r;
		}
	}
}

/* ---- grid of short puts: cells in an open-addressing hash table ---- */

#define CF_KEY_CELL_BITS 36 /* cell index: start >> shift < 2^36 (start < CF_GRID_SPAN, shift >= 7) */
_Static_assert(CF_GRID_SPAN >> 7 <= 1ull << CF_KEY_CELL_BITS, "cell index overflows the key");
#define CF_KEY_LEVEL_BITS 2

/* level l holds puts of at most 2^(6+4l) bytes in cells twice as wide */
static inline unsigned level_len_shift(int l)
{
	return 6u + 4u * (unsigned)l;
}

static inline unsigned cell_shift(int l)
{
	return level_len_shift(l) + 1;
}

/* grid level of a put of len bytes (1 <= len <= CF_GRID_MAX) */
static inline int level_of(uint64_t len)
{
	return len <= 64 ? 0 : len <= 1024 ? 1 : 2;
}

/* does a put go into the grid (else into the tree)? It ends below
 * CF_GRID_SPAN: a check starting there needs no cell */
static inline int grid_fits(int32_t pe, uint64_t start, uint64_t len)
{
	return len <= CF_GRID_MAX && start < CF_GRID_SPAN - len && pe < (1 << CF_GRID_PE_BITS);
}

static inline uint64_t cell_key(int32_t pe, int l, uint64_t cell)
{
	return cell | (uint64_t)l << CF_KEY_CELL_BITS | (uint64_t)pe << (CF_KEY_CELL_BITS + CF_KEY_LEVEL_BITS);
}

static inline int key_level(uint64_t key)
{
	return (int)(key >> CF_KEY_CELL_BITS) & ((1 << CF_KEY_LEVEL_BITS) - 1);
}

static inline int32_t key_pe(uint64_t key)
{
	return (int32_t)(key >> (CF_KEY_CELL_BITS + CF_KEY_LEVEL_BITS));
}

/* first byte of the cell of key */
static inline uint64_t key_base(uint64_t key)
{
	return (key & ((1ull << CF_KEY_CELL_BITS) - 1)) << cell_shift(key_level(key));
}

/* Four neighbouring cells (same key but the low two bits) hash to one
 * group of four slots, one cache line: the 1-2 cells a short check probes
 * are mostly in one line. The rest of the key is mixed, so strided
 * patterns do not pile up on one slot. */
static inline uint32_t cell_home(const struct conflict *c, uint64_t key)
{
	uint32_t group = (uint32_t)(((key >> 2) * 0x9e3779b97f4a7c15ull) >> 32);
	return ((group << 2) | (uint32_t)(key & 3)) & c->cell_mask;
}

/* slot of key, or CF_NIL */
static inline uint32_t cell_find(const struct conflict *c, uint64_t key)
{
	for (uint32_t i = cell_home(c, key);; i = (i + 1) & c->cell_mask) {
		const struct conflict_cell *e = &c->cells[i];
		if (e->head == CF_NIL)
			return CF_NIL;
		if (e->key == key)
			return i;
	}
}

/* empty slot i and shift later entries of its probe run back (linear
 * probing without tombstones) */
static void cell_delete(struct conflict *c, uint32_t i)
{
	uint32_t m = c->cell_mask;
	for (uint32_t j = (i + 1) & m;; j = (j + 1) & m) {
		struct conflict_cell *e = &c->cells[j];
		if (e->head == CF_NIL)
			break;
		uint32_t k = cell_home(c, e->key);
		/* e may move to i when its home is not in (i, j] (cyclically) */
		if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
			c->cells[i] = *e;
			i = j;
		}
	}
	c->cells[i].head = CF_NIL;
	c->ncells--;
}

/* the cell box in 4-byte units from the cell's base, rounded outwards */
static inline uint16_t box_lo4(uint64_t base, uint64_t start)
{
	return (uint16_t)((start - base) >> 2);
}

static inline uint16_t box_hi4(uint64_t base, uint64_t end)
{
	return (uint16_t)((end - base + 3) >> 2);
}

static void grid_insert(struct conflict *c, struct conflict_target *t, uint32_t x)
{
	struct conflict_node *n = &c->n[x];
	int l = level_of(n->end - n->start);
	uint64_t key = cell_key(n->pe, l, n->start >> cell_shift(l));
	uint64_t base = key_base(key);
	uint16_t lo = box_lo4(base, n->start), hi = box_hi4(base, n->end);
	for (uint32_t i = cell_home(c, key);; i = (i + 1) & c->cell_mask) {
		struct conflict_cell *e = &c->cells[i];
		if (e->head == CF_NIL) { /* a new cell (the table has room: cells <= cap) */
			*e = (struct conflict_cell){.key = key, .head = x, .lo4 = lo, .hi4 = hi};
			c->ncells++;
			n->cnext = n->cprev = CF_NIL;
			break;
		}
		if (e->key == key) {
			n->cnext = e->head;
			n->cprev = CF_NIL;
			c->n[e->head].cprev = x;
			e->head = x;
			if (lo < e->lo4)
				e->lo4 = lo;
			if (hi > e->hi4)
				e->hi4 = hi;
			break;
		}
	}
	n->where = (uint8_t)(CF_IN_GRID + l);
	t->lcount[l]++;
}

static void grid_remove(struct conflict *c, struct conflict_target *t, uint32_t x)
{
	struct conflict_node *n = &c->n[x];
	int l = n->where - CF_IN_GRID;
	if (n->cnext != CF_NIL)
		c->n[n->cnext].cprev = n->cprev;
	if (n->cprev != CF_NIL) {
		c->n[n->cprev].cnext = n->cnext;
	} else {
		uint32_t i = cell_find(c, cell_key(n->pe, l, n->start >> cell_shift(l)));
		if (n->cnext != CF_NIL)
			c->cells[i].head = n->cnext;
		else
			cell_delete(c, i);
	}
	t->lcount[l]--;
}

/* ---- box ---- */

/* walk the FIFO: the exact box */
static void box_rescan(struct conflict *c, struct conflict_target *t)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (uint32_t i = t->head; i != CF_NIL; i = c->n[i].next) {
		const struct conflict_node *x = &c->n[i];
		if (x->end > x->start) {
			if (x->start < lo)
				lo = x->start;
			if (x->end > hi)
				hi = x->end;
		}
	}
	t->lo = lo;
	t->hi = hi;
	t->stale = 0;
	CF_INC(c->st.box_rescans);
}

/* node x (already unlinked) left t */
static inline void box_removed(struct conflict_target *t, const struct conflict_node *x)
{
	if (t->stale)
		t->stale++;
	else if (x->end > x->start && (x->start == t->lo || x->end == t->hi))
		t->stale = 1;
}

/* after removals: exact again when cheap, or when paid for by as many
 * removals as puts remain */
static void box_settle(struct conflict *c, struct conflict_target *t)
{
	if (t->stale && (t->count <= CF_BOX_EXACT || t->stale >= t->count))
		box_rescan(c, t);
}

/* ---- active target list ---- */

static void active_add(struct conflict *c, int32_t pe)
{
	c->t[pe].active_pos = c->nactive;
	c->active[c->nactive++] = pe;
}

static void active_del(struct conflict *c, int32_t pe)
{
	uint32_t pos = c->t[pe].active_pos;
	int32_t last = c->active[--c->nactive];
	c->active[pos] = last;
	c->t[last].active_pos = pos;
	c->t[pe].active_pos = CF_NIL;
}

/* ---- API ---- */

int conflict_add(struct conflict *c, int32_t pe, uint64_t start, uint64_t len, uint64_t seq)
{
	return conflict_add_run(c, pe, start, len, seq, seq, 1);
}

int conflict_add_run(struct conflict *c, int32_t pe, uint64_t start, uint64_t len, uint64_t first,
		     uint64_t seq, uint32_t n)
{
	if (pe < 0 || pe >= c->npes || first <= c->last_seq || first > seq || n == 0 ||
	    len > UINT64_MAX - start)
		return -EINVAL;
	if (c->free_head == CF_NIL) {
		CF_INC(c->st.cap_hits);
		return -ENOSPC;
	}
	uint32_t i = c->free_head;
	struct conflict_node *x = &c->n[i];
	c->free_head = x->next;
	x->start = start;
	x->end = start + len;
	x->seq = seq;
	x->first = first;
	x->pending = n;
	x->pe = pe;
	x->next = CF_NIL;
	x->where = CF_IN_NONE;
	struct conflict_target *t = &c->t[pe];
	x->prev = t->tail;
	if (t->tail == CF_NIL)
		t->head = i;
	else
		c->n[t->tail].next = i;
	t->tail = i;
	if (t->count++ == 0)
		active_add(c, pe);
	if (len > 0) {
		if (grid_fits(pe, start, len)) {
			grid_insert(c, t, i);
		} else {
			t->root = tree_insert(c, t->root, i);
			x->where = CF_IN_TREE;
		}
		if (start < t->lo)
			t->lo = start;
		if (x->end > t->hi)
			t->hi = x->end;
	}
	c->count++;
	c->last_seq = seq;
	CF_INC(c->st.adds);
	return 0;
}

/* the newest put of t overlapping [qs, qe) newer than best, walking the FIFO
 * from its tail (seq order: the first hit is the answer) */
static uint64_t fifo_search(const struct conflict *c, const struct conflict_target *t, uint64_t qs,
			    uint64_t qe, uint64_t *visits)
{
	for (uint32_t i = t->tail; i != CF_NIL; i = c->n[i].prev) {
		const struct conflict_node *x = &c->n[i];
		++*visits;
		if (x->start < qe && x->end > qs && x->end > x->start)
			return x->seq;
	}
	return 0;
}

uint64_t conflict_check(struct conflict *c, int32_t pe, uint64_t start, uint64_t len)
{
	CF_INC(c->st.checks);
	if (pe < 0 || pe >= c->npes || len == 0) {
		CF_INC(c->st.box_clear);
		return 0;
	}
	const struct conflict_target *t = &c->t[pe];
	uint64_t end = len > UINT64_MAX - start ? UINT64_MAX : start + len;
	if (end <= t->lo || start >= t->hi) {
		CF_INC(c->st.box_clear);
		return 0;
	}
	CF_INC(c->st.precise);
	uint64_t best = 0, visits = 0;
	/* cells to probe per level: a put of at most 2^g bytes overlapping
	 * [start, end) starts in [start - 2^g + 1, end) */
	uint64_t c0[CF_GRID_LEVELS], c1[CF_GRID_LEVELS], probes = 0;
	int levels = 0;
	for (int l = 0; l < CF_GRID_LEVELS; l++) {
		if (!t->lcount[l] || start >= CF_GRID_SPAN)
			continue;
		unsigned cs = cell_shift(l);
		uint64_t ext = (1ull << level_len_shift(l)) - 1;
		uint64_t e = end < CF_GRID_SPAN ? end : CF_GRID_SPAN;
		c0[l] = (start > ext ? start - ext : 0) >> cs;
		c1[l] = (e - 1) >> cs;
		probes += c1[l] - c0[l] + 1;
		levels |= 1 << l;
	}
	if (probes > CF_PROBE_MAX && probes > t->count / 4) {
		CF_INC(c->st.scans);
		best = fifo_search(c, t, start, end, &visits);
		goto done;
	}
	/* the cells' home slots are independent loads: start them all */
	for (int l = 0; l < CF_GRID_LEVELS; l++)
		if (levels & 1 << l)
			for (uint64_t k = c0[l]; k <= c1[l]; k++)
				__builtin_prefetch(&c->cells[cell_home(c, cell_key(pe, l, k))]);
	for (int l = 0; l < CF_GRID_LEVELS; l++) {
		if (!(levels & 1 << l))
			continue;
		/* the cell holding end first: on a walk it holds the newest puts */
		for (uint64_t k = c1[l] + 1; k-- > c0[l];) {
			uint64_t key = cell_key(pe, l, k);
			uint32_t ci = cell_find(c, key);
			if (ci == CF_NIL)
				continue;
			const struct conflict_cell *e = &c->cells[ci];
			uint64_t base = key_base(key);
			if (base + ((uint64_t)e->lo4 << 2) >= end || base + ((uint64_t)e->hi4 << 2) <= start)
				continue;
			for (uint32_t i = e->head; i != CF_NIL;) {
				const struct conflict_node *x = &c->n[i];
				if (x->seq <= best)
					break; /* older ones cannot beat it */
				visits++;
				if (x->start < end && x->end > start) {
					best = x->seq;
					break;
				}
				i = x->cnext;
			}
		}
	}
	if (t->root != CF_NIL) {
		struct cf_query q = {.qs = start, .qe = end, .best = best, .visits = 0};
		tree_search(c, t->root, &q);
		best = q.best;
		visits += q.visits;
	}
done:
	CF_ADD(c->st.visits, visits);
	if (best)
		CF_INC(c->st.conflicts);
	return best;
}

static void node_free(struct conflict *c, uint32_t i)
{
	c->n[i].next = c->free_head;
	c->n[i].where = CF_IN_NONE;
	c->free_head = i;
}

/* take node i out of t's index (grid or tree); the FIFO is the caller's */
static void unindex(struct conflict *c, struct conflict_target *t, uint32_t i)
{
	uint8_t w = c->n[i].where;
	if (w >= CF_IN_GRID)
		grid_remove(c, t, i);
	else if (w == CF_IN_TREE)
		t->root = tree_erase(c, t->root, i);
}

void conflict_retire_pe(struct conflict *c, int32_t pe)
{
	if (pe < 0 || pe >= c->npes)
		return;
	struct conflict_target *t = &c->t[pe];
	if (t->count == 0)
		return;
	uint32_t n = 0;
	for (uint32_t i = t->head; i != CF_NIL;) {
		uint32_t next = c->n[i].next;
		if (c->n[i].where >= CF_IN_GRID)
			grid_remove(c, t, i); /* the tree goes as a whole */
		node_free(c, i);
		i = next;
		n++;
	}
	active_del(c, pe);
	target_reset(t);
	c->count -= n;
	CF_ADD(c->st.retired, n);
}

void conflict_retire(struct conflict *c, int32_t pe, uint64_t seq)
{
	if (pe < 0 || pe >= c->npes)
		return;
	struct conflict_target *t = &c->t[pe];
	if (t->count == 0 || c->n[t->head].seq > seq)
		return;
	if (c->n[t->tail].seq <= seq) {
		conflict_retire_pe(c, pe);
		return;
	}
	uint32_t n = 0;
	while (c->n[t->head].seq <= seq) { /* the tail stays: loop ends before it */
		uint32_t i = t->head;
		t->head = c->n[i].next;
		c->n[t->head].prev = CF_NIL;
		unindex(c, t, i);
		t->count--;
		box_removed(t, &c->n[i]);
		node_free(c, i);
		n++;
	}
	c->count -= n;
	box_settle(c, t);
	CF_ADD(c->st.retired, n);
}

int conflict_complete(struct conflict *c, int32_t pe, uint64_t seq)
{
	if (pe < 0 || pe >= c->npes)
		return -ENOENT;
	struct conflict_target *t = &c->t[pe];
	uint32_t i = t->head;
	/* the FIFO is sorted by sequence: stop at the first node past seq */
	while (i != CF_NIL && c->n[i].seq < seq)
		i = c->n[i].next;
	if (i == CF_NIL || c->n[i].first > seq || c->n[i].pending == 0)
		return -ENOENT;
	struct conflict_node *x = &c->n[i];
	if (--x->pending > 0)
		return 0;
	if (x->prev == CF_NIL)
		t->head = x->next;
	else {
		c->n[x->prev].next = x->next;
		CF_INC(c->st.out_of_order);
	}
	if (x->next == CF_NIL)
		t->tail = x->prev;
	else
		c->n[x->next].prev = x->prev;
	unindex(c, t, i);
	c->count--;
	CF_INC(c->st.retired);
	if (--t->count == 0) {
		node_free(c, i);
		active_del(c, pe);
		target_reset(t);
		return 1;
	}
	box_removed(t, x);
	node_free(c, i);
	box_settle(c, t);
	return 1;
}

void conflict_retire_all(struct conflict *c)
{
	while (c->nactive > 0)
		conflict_retire_pe(c, c->active[c->nactive - 1]);
}

uint32_t conflict_outstanding(const struct conflict *c, int32_t pe)
{
	return pe < 0 || pe >= c->npes ? 0 : c->t[pe].count;
}

uint64_t conflict_newest(const struct conflict *c, int32_t pe)
{
	if (pe < 0 || pe >= c->npes || c->t[pe].tail == CF_NIL)
		return 0;
	return c->n[c->t[pe].tail].seq;
}

uint64_t conflict_oldest(const struct conflict *c, int32_t pe)
{
	if (pe < 0 || pe >= c->npes || c->t[pe].head == CF_NIL)
		return 0;
	return c->n[c->t[pe].head].seq;
}

const int32_t *conflict_active(const struct conflict *c, uint32_t *n)
{
	*n = c->nactive;
	return c->active;
}

/* ---- validation (debug / tests) ---- */

struct cf_sub {
	int32_t height;
	uint32_t size;
	uint64_t maxend, maxseq;
	uint64_t minstart;
	int ok;
};

static struct cf_sub validate_tree(const struct conflict *c, uint32_t i, const struct conflict_node *lo,
				   const struct conflict_node *hi, uint32_t depth)
{
	struct cf_sub s = {0, 0, 0, 0, UINT64_MAX, 1};
	if (i == CF_NIL)
		return s;
	if (i >= c->cap || depth > 64) {
		s.ok = 0;
		return s;
	}
	const struct conflict_node *x = &c->n[i];
	if ((lo && !key_less(lo, x)) || (hi && !key_less(x, hi)) || x->end <= x->start) {
		s.ok = 0;
		return s;
	}
	const struct conflict_tnode *tx = &c->tn[i];
	struct cf_sub l = validate_tree(c, tx->left, lo, x, depth + 1);
	struct cf_sub r = validate_tree(c, tx->right, x, hi, depth + 1);
	if (!l.ok || !r.ok) {
		s.ok = 0;
		return s;
	}
	s.height = 1 + (l.height > r.height ? l.height : r.height);
	s.size = 1 + l.size + r.size;
	s.maxend = x->end;
	s.maxseq = x->seq;
	if (l.size && l.maxend > s.maxend)
		s.maxend = l.maxend;
	if (r.size && r.maxend > s.maxend)
		s.maxend = r.maxend;
	if (l.size && l.maxseq > s.maxseq)
		s.maxseq = l.maxseq;
	if (r.size && r.maxseq > s.maxseq)
		s.maxseq = r.maxseq;
	s.minstart = l.size ? l.minstart : x->start;
	int32_t bf = l.height - r.height;
	s.ok = tx->height == s.height && tx->maxend == s.maxend && tx->maxseq == s.maxseq && bf >= -1 &&
	       bf <= 1;
	return s;
}

int conflict_validate(const struct conflict *c)
{
	uint32_t total = 0, nact = 0, ngrid = 0;
	for (int32_t pe = 0; pe < c->npes; pe++) {
		const struct conflict_target *t = &c->t[pe];
		uint32_t n = 0, ntree = 0, lc[CF_GRID_LEVELS] = {0};
		uint64_t prev = 0, lo = UINT64_MAX, hi = 0;
		uint32_t last = CF_NIL;
		for (uint32_t i = t->head; i != CF_NIL; i = c->n[i].next) {
			if (i >= c->cap || n > c->cap || c->n[i].first <= prev ||
			    c->n[i].first > c->n[i].seq || c->n[i].pending == 0 ||
			    c->n[i].seq > c->last_seq || c->n[i].prev != last || c->n[i].pe != pe)
				return -EUCLEAN;
			prev = c->n[i].seq;
			const struct conflict_node *x = &c->n[i];
			uint64_t len = x->end - x->start;
			if (x->end > x->start) {
				if (grid_fits(pe, x->start, len)) {
					int l = level_of(len);
					if (x->where != CF_IN_GRID + l)
						return -EUCLEAN;
					lc[l]++;
				} else {
					if (x->where != CF_IN_TREE || c->tn[i].height < 1)
						return -EUCLEAN;
					ntree++;
				}
				if (x->start < lo)
					lo = x->start;
				if (x->end > hi)
					hi = x->end;
			} else if (x->where != CF_IN_NONE) {
				return -EUCLEAN;
			}
			last = i;
			n++;
		}
		if (n != t->count || last != t->tail || (n == 0) != (t->head == CF_NIL))
			return -EUCLEAN;
		for (int l = 0; l < CF_GRID_LEVELS; l++) {
			if (lc[l] != t->lcount[l])
				return -EUCLEAN;
			ngrid += lc[l];
		}
		/* the box: exact, or (stale) a superset */
		if (t->stale ? (n > 0 && (t->lo > lo || t->hi < hi)) : (t->lo != lo || t->hi != hi))
			return -EUCLEAN;
		if (n == 0 && t->stale)
			return -EUCLEAN;
		struct cf_sub s = validate_tree(c, t->root, NULL, NULL, 0);
		if (!s.ok || s.size != ntree)
			return -EUCLEAN;
		if (n > 0) {
			if (t->active_pos >= c->nactive || c->active[t->active_pos] != pe)
				return -EUCLEAN;
			nact++;
		} else if (t->active_pos != CF_NIL) {
			return -EUCLEAN;
		}
		total += n;
	}
	if (total != c->count || nact != c->nactive)
		return -EUCLEAN;
	/* every cell: found from its home, a chain of its own puts (all in the
	 * grid at its level and cell, newest first, inside its box); together
	 * the chains hold every grid put once */
	uint32_t ncells = 0, nchained = 0;
	for (uint32_t ci = 0; ci <= c->cell_mask; ci++) {
		const struct conflict_cell *e = &c->cells[ci];
		if (e->head == CF_NIL)
			continue;
		ncells++;
		int32_t pe = key_pe(e->key);
		int l = key_level(e->key);
		uint64_t base = key_base(e->key);
		if (pe >= c->npes || l >= CF_GRID_LEVELS || cell_find(c, e->key) != ci)
			return -EUCLEAN;
		uint32_t p = CF_NIL, steps = 0;
		for (uint32_t i = e->head; i != CF_NIL; p = i, i = c->n[i].cnext) {
			if (i >= c->cap || ++steps > c->cap)
				return -EUCLEAN;
			const struct conflict_node *x = &c->n[i];
			if (x->cprev != p || x->pe != pe || x->where != CF_IN_GRID + l || x->pending == 0 ||
			    cell_key(pe, l, x->start >> cell_shift(l)) != e->key ||
			    x->start < base + ((uint64_t)e->lo4 << 2) || x->end > base + ((uint64_t)e->hi4 << 2) ||
			    (p != CF_NIL && c->n[p].seq <= x->seq))
				return -EUCLEAN;
			nchained++;
		}
	}
	if (ncells != c->ncells || nchained != ngrid)
		return -EUCLEAN;
	uint32_t nfree = 0;
	for (uint32_t i = c->free_head; i != CF_NIL; i = c->n[i].next)
		if (i >= c->cap || ++nfree > c->cap)
			return -EUCLEAN;
	if (nfree + total != c->cap)
		return -EUCLEAN;
	return 0;
}
