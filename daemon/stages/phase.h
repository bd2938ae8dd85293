/*
 * Phase history for get prefetching (seed 000, section 3.2): per client, the
 * gets issued in each program phase, so that the next run of the phase can
 * prefetch them right after its synchronisation event.
 *
 * A phase is the code between two synchronisation events; the client names
 * the event that starts it by a 64-bit id (its call site). The first run of
 * a phase records its gets; later runs return a predicted get list from
 * phase_begin, match each actual get against it (phase_get, or phase_take
 * for a get learnt of later), and at phase_end drop the entries that were
 * never used (mispredictions) and store the run's gets in the order they
 * happened (a phase_take'n one at its predicted place among them).
 *
 * Periods: each phase keeps the get lists of its last period_max runs and a
 * signature (the get set's count and order-independent hash) of its last
 * period_max + 1. The next run is predicted as the run p back, p the
 * smallest period (1..period_max) for which the latest run's set equals the
 * one p runs before it: a double buffer alternating two address sets behind
 * one call site is period 2. No period matched (too few runs, a shifting
 * window, changing gets): the last run is the guess (p = 1).
 *
 * Back-off: a run whose predictions were mostly unused (fewer than half of
 * them matched a get) is bad; after PHASE_BAD_RUNS bad runs in a row the
 * phase is backed off: its runs are still predicted and checked (dry), but
 * phase_begin sets t->dry and the caller issues no prefetch. A good run, or
 * a run whose period matched, ends the back-off. So a random or changing
 * pattern costs its first bad runs and then nothing but the bookkeeping.
 *
 * Entry flags are the table's; state and cookie are the caller's: state
 * (e.g. the prefetch's status) is zeroed by phase_begin, cookie (e.g. what
 * was measured about the get) is kept across runs.
 *
 * Bounded: at most max_phases phases (least recently begun evicted) with at
 * most max_gets entries per run; all storage (max_phases * period_max *
 * max_gets entries of 40 bytes, zeroed pages the system maps on first use)
 * is allocated by phase_init. Single-threaded (progress thread);
 * stats are single-writer, readable with relaxed loads.
 */
#ifndef HOISTD_PHASE_H
#define HOISTD_PHASE_H

#include <stdint.h>

#define PH_NIL 0xffffffffu
#define PHASE_PERIOD_MAX 3u /* longest period predicted */
#define PHASE_BAD_RUNS 2u   /* bad runs in a row that back a phase off */

#define PHASE_F_USED 1u    /* matched (or recorded) by a get in this run */
#define PHASE_F_INVALID 2u /* an own put overlapped it before its get */
#define PHASE_F_NEW 4u     /* appended in this run (a miss) */
#define PHASE_F_LATE 8u    /* used, but seen after the fact (phase_take) */

/* Why phase_get returned -1 (t->miss): */
enum phase_miss {
	PHASE_MISS_NONE = 0,
	PHASE_MISS_COLD,    /* the run had no predictions (first run of the phase): recorded */
	PHASE_MISS_NEW,     /* the run had predictions, this get was not among them: recorded */
	PHASE_MISS_INVALID, /* predicted, but an own put invalidated the entry */
	PHASE_MISS_FULL,    /* not predicted and not recorded: the run holds max_gets entries */
	PHASE_MISS_IDLE,    /* no phase current */
};

struct phase_get {
	int32_t pe;
	uint32_t flags;  /* PHASE_F_*, the table's */
	uint64_t off;
	uint64_t len;
	uint32_t state;  /* the caller's, e.g. issued/ready */
	uint64_t cookie; /* the caller's, e.g. the prefetch buffer */
};

struct phase_slot {
	uint64_t id;
	uint32_t n; /* entries of the latest run (during a run: predicted + appended) */
	uint32_t lru_prev, lru_next, hnext;
	uint8_t used;
	uint8_t head;   /* run buffer of the latest run */
	uint8_t nsig;   /* runs whose signatures are known, <= period_max + 1 */
	uint8_t bad;    /* bad runs in a row */
	uint8_t backoff;
	uint32_t bn[PHASE_PERIOD_MAX];          /* entries per run buffer */
	uint64_t sig[PHASE_PERIOD_MAX + 1];     /* [0] latest run's set hash, [1] the one before... */
	uint32_t sign[PHASE_PERIOD_MAX + 1];    /* ... and its entry count */
};

struct phase_stats {
	uint64_t phases;      /* phase_begin calls (runs) */
	uint64_t recorded;    /* misses appended to a history */
	uint64_t predicted;   /* entries returned by phase_begin */
	uint64_t hits;        /* gets matched to a valid prediction */
	uint64_t misses;      /* gets not matched, or matched to an invalid one */
	uint64_t cold;        /* ... of them in runs without predictions (first runs) */
	uint64_t wasted;      /* predicted entries never used, dropped at phase_end */
	uint64_t invalidated; /* entries marked invalid by an own put */
	uint64_t evicted;     /* phases dropped to make room (LRU) */
	uint64_t full;        /* misses not recorded: max_gets reached */
	uint64_t periodic;    /* runs predicted from a run before the last (period >= 2) */
	uint64_t backoffs;    /* phases backed off (PHASE_BAD_RUNS bad runs in a row) */
	uint64_t dry;         /* runs of backed-off phases: predicted, not to be prefetched */
};

struct phase_table {
	uint32_t max_phases, max_gets, period_max;
	uint32_t nphases;
	uint32_t nbuckets; /* phase id hash, power of two */
	uint32_t lru_head, lru_tail, free_head;
	uint32_t *buckets;
	struct phase_slot *s;  /* [max_phases] */
	struct phase_get *g;   /* [max_phases * max_gets], slot i at i * max_gets */
	/* the current run */
	uint32_t cur;          /* slot, PH_NIL between phases */
	uint32_t npred;        /* entries [0, npred) were predicted */
	uint32_t period;       /* the prediction's: the run that many back (0: none) */
	uint8_t matched;       /* the period was found (not the p = 1 guess) */
	uint8_t dry;           /* backed off: predicted, not to be prefetched */
	uint8_t miss;          /* enum phase_miss of the last phase_get */
	uint32_t nused;        /* entries in order[] */
	uint32_t nlate;        /* entries used by phase_take (PHASE_F_LATE), not in order[] */
	uint32_t *order;       /* [max_gets] entry indices in the order of their gets */
	uint32_t gnbuckets;    /* (pe, off, len) hash of unused predicted entries */
	uint32_t *gbuckets;
	uint32_t *gnext;       /* [max_gets] */
	uint64_t box_lo, box_hi; /* range of the predicted entries (any pe) */
	struct phase_get *scratch; /* [max_gets] */
	struct phase_stats st;
};

/* 0 or -errno: -EINVAL (a bound is 0, period_max > PHASE_PERIOD_MAX, or
 * max_phases * max_gets > 2^24), -ENOMEM. */
int phase_init_periods(struct phase_table *t, uint32_t max_phases, uint32_t max_gets,
		       uint32_t period_max);
/* period_max 1: the last run predicts the next. */
int phase_init(struct phase_table *t, uint32_t max_phases, uint32_t max_gets);
void phase_fini(struct phase_table *t);

/* A synchronisation event with this id: a new run of its phase starts (a
 * phase still current is ended first, see phase_end). Returns the gets
 * predicted for it (the run t->period back, in its program order), *n
 * entries (0 the first time: recording). Unless t->dry, the caller issues
 * them as prefetches; it may set state and cookie (cookies travel with the
 * entries from run to run). The array stays valid, and grows by the misses
 * appended, until phase_end. Never NULL. */
struct phase_get *phase_begin(struct phase_table *t, uint64_t id, uint32_t *n);

/* A get in the current phase. Returns the index of the first predicted
 * entry with exactly this (pe, off, len) not used yet in this run, and marks
 * it used; or -1: no phase current, no such entry (the get is appended to
 * the history unless the phase holds max_gets entries), or the entry was
 * invalidated (it is marked used and stays in the history: the pattern was
 * right, the prefetched data is stale; the caller gets it for real). On -1,
 * t->miss says why (enum phase_miss). */
int phase_get(struct phase_table *t, int32_t pe, uint64_t off, uint64_t len);

/* Predicted entry i was used by a get the table did not see when it
 * happened (the client served it from its fast table and the caller
 * learns of it at the notify): mark it used. phase_end stores it by its
 * predicted position among the run's gets (before the first get seen in
 * time that was predicted after it), not at the end: when the program
 * kept its order, the history keeps it too, however its gets were split
 * between the two ways. (Appended at the end, as a phase_get at the
 * notify did, the next run's prefetch order was the daemon-seen gets
 * first and the rest after them, and the client's lookup near its cursor
 * lost its way: the cliff of the prefetch sweep at G >= 1024.) An entry i
 * already used, invalid or not predicted falls back to phase_get of its
 * (pe, off, len). Returns what phase_get would (the entry used, or -1). */
int phase_take(struct phase_table *t, uint32_t i);

/* An own put to pe of [off, off+len): mark the predicted entries that
 * overlap it and are not used yet invalid. Returns how many were marked.
 * O(1) outside the range of the predictions, O(predicted) otherwise. */
uint32_t phase_invalidate(struct phase_table *t, int32_t pe, uint64_t off, uint64_t len);

/* End of the current run: predicted entries not used are dropped from the
 * history (mispredictions: the caller reaps their prefetches BEFORE this
 * call, e.g. by scanning phase_current for entries without PHASE_F_USED);
 * the rest is stored in the order of this run's gets, as the latest run.
 * The run is judged for the back-off. Returns the number dropped (0 if no
 * phase is current). */
uint32_t phase_end(struct phase_table *t);

/* End a run that never ran (begun, then its start was called off, e.g. a
 * failed barrier): its predictions are kept as the latest run, as if all
 * were used in their order; nothing counts as wasted and the back-off
 * state is unchanged. Returns the entries kept. */
uint32_t phase_abandon(struct phase_table *t);

/* The current run's entries (predicted then appended), NULL and *n = 0
 * between phases. */
struct phase_get *phase_current(struct phase_table *t, uint32_t *n);
/* Entries of a phase's latest run (0 if unknown); does not touch the LRU order. */
uint32_t phase_history_size(const struct phase_table *t, uint64_t id);

#endif
