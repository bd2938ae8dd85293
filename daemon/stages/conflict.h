/*
 * Outstanding-put conflict tracking (seed 000, section 3.1): the puts of ONE
 * client that were issued but are not known complete, kept per target PE so
 * that a later access to a remote range can find the puts it must wait for.
 *
 * Per target:
 *   - a FIFO (doubly linked) in program order. Completions may arrive in
 *     any order (a transport with several connections per peer,
 *     tcp_lanes): conflict_complete() retires one put wherever it is in the
 *     list (O(1) unlink once found); conflict_retire() pops a prefix
 *     (in-order completion, quiet);
 *   - a bounding box [lo, hi) of the remote ranges of the outstanding puts:
 *     a check outside it is answered in O(1) (the common monotonic pattern:
 *     walking through a remote array). It grows exactly on every add. A
 *     removal that takes away the put defining an edge marks it stale (a
 *     superset of the exact box, still a correct filter); it is made exact
 *     again by one walk of the FIFO once as many puts were removed as
 *     remain (amortised O(1) per removal), or at once while at most
 *     CF_BOX_EXACT puts remain;
 *   - short puts (1 .. CF_GRID_MAX bytes: what the kernels and most
 *     programs issue; ending below CF_GRID_SPAN) in a grid: level L
 *     (L = 0, 1, 2) holds the puts of at most 2^g bytes, g = 6 + 4L, each in
 *     the cell of its start; cells are 2 x 2^g wide (128 B, 2 KiB, 32 KiB).
 *     A cell is one 16-byte entry of an open-addressing hash table (keyed by
 *     target, level and cell; sized 2 x cap, no allocation after init;
 *     four neighbouring cells hash to one cache line of slots)
 *     holding the chain of its puts, newest first, and a box of them (grown
 *     on add, reset when the cell empties). A check of [s, e) at level L
 *     looks up the cells holding s - 2^g + 1 .. e - 1 (1 or 2 for a short
 *     range; a put there may overlap), and walks a chain only while its
 *     puts are newer than the best answer so far, so a stack of identical
 *     puts costs one visit. Nodes are 64 bytes (one cache line); the
 *     tree's part of a node lives apart;
 *   - longer puts (and those past CF_GRID_SPAN or to a target of 2^26 or
 *     more) in an AVL interval tree keyed by (start, seq) and
 *     augmented with the subtree's max end and max seq. Intervals may
 *     overlap (several puts to one location may be outstanding together;
 *     they keep program order in the FIFO).
 *
 * conflict_check returns the HIGHEST seq among the overlapping puts. On a
 * transport that delivers in order per peer, being behind that one orders
 * an access after all of them; otherwise the caller waits until
 * conflict_check answers 0 (every overlapping put completed).
 *
 * A node may stand for a run of puts (conflict_add_run: sequences first..seq,
 * n puts, one contiguous range): it leaves when all n completed.
 * Costs: add and an in-order removal O(1) for a short put (O(log n) for a
 * long one); a check of a short range O(1) cells per level plus the chain
 * steps, then the tree's branch-and-bound search (O(log n) for
 * non-overlapping intervals and for stacks of identical or nested ones). A
 * check whose range spans more cells than CF_PROBE_MAX and a quarter of the
 * target's puts walks the target's FIFO from the newest put instead (it
 * stops at the first overlapping put: that one is the answer). Pathological
 * mixes (a long chain of new puts in one cell that miss the query, above old
 * ones that hit it; a long range in a gap among many short puts) degrade
 * towards O(n), never to a wrong answer.
 *
 * Single-threaded (progress thread). Fixed capacity, no allocation after
 * init. Stats are single-writer, readable with relaxed loads.
 */
#ifndef HOISTD_CONFLICT_H
#define HOISTD_CONFLICT_H

#include <stdint.h>

#define CF_NIL 0xffffffffu
#define CF_GRID_LEVELS 3
#define CF_GRID_MAX (1ull << 14) /* longest put kept in the grid */
#define CF_GRID_SPAN (1ull << 43) /* grid puts end below (remote offsets: 8 TiB) */
#define CF_GRID_PE_BITS 26        /* and go to a target below 2^26 */
#define CF_PROBE_MAX 16          /* cells one check probes before it may walk the FIFO */
#define CF_BOX_EXACT 64          /* the box is exact while at most this many puts remain */

/* where a node is indexed */
enum { CF_IN_NONE = 0, CF_IN_TREE = 1, CF_IN_GRID = 2 /* + level */ };

struct conflict_node {
	/* the fields a chain walk reads first, in one cache line */
	uint64_t start, end;     /* remote range [start, end) */
	uint64_t seq;            /* client sequence number, > 0 (a run's newest) */
	uint32_t cnext, cprev;   /* grid cell chain: cnext older, cprev newer */
	uint64_t first;          /* a run's oldest sequence (= seq for one put) */
	uint32_t pending;        /* puts of the node not yet complete */
	uint32_t next, prev;     /* FIFO successor (newer) / predecessor; free-list link */
	int32_t pe;              /* target */
	uint8_t where;           /* CF_IN_* */
};                               /* 64 bytes: one cache line */

/* the tree part of node i (long puts only), apart so that nodes stay small */
struct conflict_tnode {
	uint64_t maxend, maxseq; /* over the subtree */
	uint32_t left, right;    /* children */
	int32_t height;          /* AVL height; > 0 in the tree */
};

/* one grid cell: the chain of the puts of (pe, level, cell); 16 bytes */
struct conflict_cell {
	uint64_t key;      /* cell index | level << 36 | pe << 38; meaningful when head != CF_NIL */
	uint32_t head;     /* newest put, CF_NIL: empty slot */
	uint16_t lo4, hi4; /* box of the chain's puts, 4-byte units from the cell's first byte,
			    * rounded outwards (may be larger after removals) */
};

struct conflict_target {
	uint32_t head, tail; /* FIFO, CF_NIL when empty */
	uint32_t count;      /* outstanding puts (including zero-length ones) */
	uint32_t root;       /* interval tree of the long puts, CF_NIL when empty */
	uint64_t lo, hi;     /* box; lo = UINT64_MAX, hi = 0 when empty */
	uint32_t active_pos; /* index in conflict.active, CF_NIL when count == 0 */
	uint32_t stale;      /* puts removed since the box became a superset, 0: exact */
	uint32_t lcount[CF_GRID_LEVELS]; /* puts in each grid level */
};

struct conflict_stats {
	uint64_t adds;      /* puts recorded */
	uint64_t checks;    /* conflict_check calls */
	uint64_t box_clear; /* checks answered "none" by the box alone */
	uint64_t precise;   /* checks that searched the grid / tree */
	uint64_t conflicts; /* checks that found an overlapping put */
	uint64_t retired;   /* puts retired */
	uint64_t out_of_order; /* conflict_complete of a put that was not the head */
	uint64_t cap_hits;  /* conflict_add refused with -ENOSPC */
	uint64_t visits;    /* debug: puts (chain, tree or FIFO nodes) examined by all searches */
	uint64_t scans;     /* debug: checks that walked the FIFO instead of the grid */
	uint64_t box_rescans; /* debug: walks that made a stale box exact */
};

struct conflict {
	int32_t npes;
	uint32_t cap;       /* outstanding puts at most, all targets together */
	uint32_t count;     /* outstanding now */
	uint32_t free_head;
	uint64_t last_seq;  /* last seq accepted by conflict_add */
	struct conflict_target *t; /* [npes] */
	struct conflict_node *n;   /* [cap] */
	struct conflict_tnode *tn; /* [cap] */
	struct conflict_cell *cells; /* [cell_mask + 1], a power of two >= 2 cap */
	uint32_t cell_mask;
	uint32_t ncells;           /* non-empty cells */
	int32_t *active;           /* targets with count > 0, unordered */
	uint32_t nactive;
	struct conflict_stats st;
};

/* 0 or -errno: -EINVAL (npes < 1, cap < 1 or cap > 2^26), -ENOMEM. */
int conflict_init(struct conflict *c, int32_t npes, uint32_t cap);
void conflict_fini(struct conflict *c);

/* Record an issued put to pe of [start, start+len). seq must be greater
 * than every seq given before (0 is reserved for "none"). A zero-length put
 * is kept in the FIFO (it still completes in order) but never conflicts.
 * 0, -EINVAL (pe out of range, seq not increasing, start+len overflows) or
 * -ENOSPC (cap outstanding puts: the caller forces a quiet, retires, and
 * retries with the same seq). */
int conflict_add(struct conflict *c, int32_t pe, uint64_t start, uint64_t len, uint64_t seq);

/* A run of n puts (sequences first..seq, n >= 1, first <= seq; together the
 * range [start, start+len)) as one node: it retires when conflict_complete
 * was called for n sequences of it. conflict_add is the run of one put.
 * Same errors as conflict_add, and -EINVAL for n == 0 or first > seq. */
int conflict_add_run(struct conflict *c, int32_t pe, uint64_t start, uint64_t len, uint64_t first,
		     uint64_t seq, uint32_t n);

/* The put with sequence seq to pe completed, in whatever order: the node
 * holding it (one put, or a run containing seq) counts it; when all of its
 * puts completed it leaves the FIFO and its grid cell or the tree, and the box is
 * updated. O(position of the node in pe's FIFO) to find it: O(1) when
 * completions arrive in order. 1: the node left, 0: it still waits
 * for other puts of its run, -ENOENT: no such put (not recorded). */
int conflict_complete(struct conflict *c, int32_t pe, uint64_t seq);

/* Highest seq of an outstanding put to pe overlapping [start, start+len);
 * 0 if none (also for a zero-length range or pe out of range). A range that
 * would run past 2^64 is clamped. */
uint64_t conflict_check(struct conflict *c, int32_t pe, uint64_t start, uint64_t len);

/* Puts to pe with seq <= the given seq have completed: pop them from the
 * head of the FIFO (O(1) per short put, O(log n) per long one). */
void conflict_retire(struct conflict *c, int32_t pe, uint64_t seq);
/* Every put to pe completed. O(puts retired). */
void conflict_retire_pe(struct conflict *c, int32_t pe);
/* Every put completed (synchronisation event). O(puts retired). */
void conflict_retire_all(struct conflict *c);

uint32_t conflict_outstanding(const struct conflict *c, int32_t pe);
/* Seq of the newest / oldest outstanding put to pe, 0 if none. */
uint64_t conflict_newest(const struct conflict *c, int32_t pe);
uint64_t conflict_oldest(const struct conflict *c, int32_t pe);
/* Targets with outstanding puts (unordered, valid until the next call that
 * adds or retires). */
const int32_t *conflict_active(const struct conflict *c, uint32_t *n);

/* Debug: walk every structure and verify its invariants (FIFO order, links
 * and counts, grid cells and chains, BST order, AVL balance, augmentation,
 * the box: exact unless stale, then a superset; free list).
 * 0 or -EUCLEAN. O(cap + npes + cells). */
int conflict_validate(const struct conflict *c);

#endif
