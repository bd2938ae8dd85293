/*
 * Outstanding-put conflict tracking (seed 000, section 3.1): the puts of ONE
 * client that were issued but are not known complete, kept per target PE so
 * that a later access to a remote range can find the puts it must wait for.
 *
 * Per target:
 *   - a FIFO list in program order. Completions may arrive in any order
 *     (a transport with several connections per peer, tcp_lanes):
 *     conflict_complete() retires one put wherever it is in the list;
 *     conflict_retire() pops a prefix (in-order completion, quiet);
 *   - a bounding box [lo, hi) of the remote ranges of the outstanding puts,
 *     kept exact: a check outside it is answered in O(1) (the common
 *     monotonic pattern: walking through a remote array);
 *   - an AVL interval tree keyed by (start, seq) and augmented with the
 *     subtree's max end and max seq, for the "maybe" answers of the box.
 *     Intervals may overlap (several puts to one location may be
 *     outstanding together; they keep program order in the FIFO).
 *
 * conflict_check returns the HIGHEST seq among the overlapping puts. On a
 * transport that delivers in order per peer, being behind that one orders
 * an access after all of them; otherwise the caller waits until
 * conflict_check answers 0 (every overlapping put completed).
 *
 * A node may stand for a run of puts (conflict_add_run: sequences first..seq,
 * n puts, one contiguous range): it leaves when all n completed.
 * The tree search is branch-and-bound on (max end, max seq): O(log n) for
 * non-overlapping intervals and for stacks of identical or nested ones;
 * pathological mixes (many long old puts overlapping the query plus many
 * newer short ones that do not) degrade towards O(n), never to a wrong
 * answer.
 *
 * Single-threaded (progress thread). Fixed capacity, no allocation after
 * init. Stats are single-writer, readable with relaxed loads.
 */
#ifndef HOISTD_CONFLICT_H
#define HOISTD_CONFLICT_H

#include <stdint.h>

#define CF_NIL 0xffffffffu

struct conflict_node {
	uint64_t start, end;     /* remote range [start, end) */
	uint64_t seq;            /* client sequence number, > 0 (a run's newest) */
	uint64_t first;          /* a run's oldest sequence (= seq for one put) */
	uint32_t pending;        /* puts of the node not yet complete */
	uint64_t maxend, maxseq; /* over the subtree (tree nodes only) */
	uint32_t left, right;    /* tree children */
	uint32_t next;           /* FIFO successor, or free-list link */
	int32_t height;          /* AVL height; 0: not in the tree (zero length) */
};

struct conflict_target {
	uint32_t head, tail; /* FIFO, CF_NIL when empty */
	uint32_t count;      /* outstanding puts (including zero-length ones) */
	uint32_t root;       /* interval tree, CF_NIL when empty */
	uint64_t lo, hi;     /* exact box of the tree; lo = UINT64_MAX, hi = 0 when empty */
	uint32_t active_pos; /* index in conflict.active, CF_NIL when count == 0 */
};

struct conflict_stats {
	uint64_t adds;      /* puts recorded */
	uint64_t checks;    /* conflict_check calls */
	uint64_t box_clear; /* checks answered "none" without the tree */
	uint64_t precise;   /* checks that searched the tree */
	uint64_t conflicts; /* checks that found an overlapping put */
	uint64_t retired;   /* puts retired */
	uint64_t out_of_order; /* conflict_complete of a put that was not the head */
	uint64_t cap_hits;  /* conflict_add refused with -ENOSPC */
	uint64_t visits;    /* debug: tree nodes visited by all searches */
};

struct conflict {
	int32_t npes;
	uint32_t cap;       /* outstanding puts at most, all targets together */
	uint32_t count;     /* outstanding now */
	uint32_t free_head;
	uint64_t last_seq;  /* last seq accepted by conflict_add */
	struct conflict_target *t; /* [npes] */
	struct conflict_node *n;   /* [cap] */
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
 * puts completed it leaves the FIFO and the tree, and the box is
 * recomputed. O(position of the node in pe's FIFO) + O(log n): O(1) search
 * when completions arrive in order. 1: the node left, 0: it still waits
 * for other puts of its run, -ENOENT: no such put (not recorded). */
int conflict_complete(struct conflict *c, int32_t pe, uint64_t seq);

/* Highest seq of an outstanding put to pe overlapping [start, start+len);
 * 0 if none (also for a zero-length range or pe out of range). A range that
 * would run past 2^64 is clamped. */
uint64_t conflict_check(struct conflict *c, int32_t pe, uint64_t start, uint64_t len);

/* Puts to pe with seq <= the given seq have completed: pop them from the
 * head of the FIFO. The box is recomputed exactly (O(log n)). */
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

/* Debug: walk every structure and verify its invariants (FIFO order and
 * counts, BST order, AVL balance, augmentation, exact box, free list).
 * 0 or -EUCLEAN. O(cap + npes). */
int conflict_validate(const struct conflict *c);

#endif
