/* Phase history for get prefetching: record/predict, mispredictions,
 * invalidation, duplicates, alternating phases, bounds, and a random run
 * against a naive model. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "phase.h"
#include "unit_util.h"

struct g3 {
	int32_t pe;
	uint64_t off, len;
};

static void run_gets(struct phase_table *t, const struct g3 *gs, int n, const int *want)
{
	for (int i = 0; i < n; i++)
		CHK_EQ(phase_get(t, gs[i].pe, gs[i].off, gs[i].len), want[i]);
}

static void expect_entries(const struct phase_get *p, uint32_t n, const struct g3 *gs, uint32_t want_n)
{
	CHK_EQ(n, want_n);
	for (uint32_t i = 0; i < n; i++) {
		CHK_EQ(p[i].pe, gs[i].pe);
		CHK_EQ(p[i].off, gs[i].off);
		CHK_EQ(p[i].len, gs[i].len);
	}
}

START_TEST(test_record_then_predict)
{
	struct phase_table t;
	ck_assert_int_eq(phase_init(&t, 0, 8), -EINVAL);
	ck_assert_int_eq(phase_init(&t, 8, 0), -EINVAL);
	ck_assert_int_eq(phase_init(&t, 8, 64), 0);
	const struct g3 gs[] = {{3, 4096, 64}, {1, 0, 8}, {2, 100, 1000}, {1, 8, 8}};
	const int miss[] = {-1, -1, -1, -1}, hit[] = {0, 1, 2, 3};
	uint32_t n = 99;
	struct phase_get *p = phase_begin(&t, 0xabc, &n);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(n, 0); /* first run: recording */
	run_gets(&t, gs, 4, miss);
	ck_assert_uint_eq(phase_history_size(&t, 0xabc), 4);
	ck_assert_uint_eq(phase_end(&t), 0);
	ck_assert_uint_eq(t.st.recorded, 4);
	ck_assert_uint_eq(t.st.misses, 4);
	p = phase_begin(&t, 0xabc, &n);
	expect_entries(p, n, gs, 4); /* program order */
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_uint_eq(p[i].flags, 0);
		p[i].state = 1; /* the caller's: issued */
		p[i].cookie = 1000 + i;
	}
	run_gets(&t, gs, 4, hit);
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_uint_eq(p[i].flags, PHASE_F_USED);
		ck_assert_uint_eq(p[i].cookie, 1000 + i);
	}
	ck_assert_uint_eq(phase_end(&t), 0);
	ck_assert_uint_eq(t.st.hits, 4);
	ck_assert_uint_eq(t.st.predicted, 4);
	ck_assert_uint_eq(t.st.phases, 2);
	/* no phase current */
	ck_assert_int_eq(phase_get(&t, 3, 4096, 64), -1);
	ck_assert_uint_eq(phase_invalidate(&t, 3, 0, UINT64_MAX), 0);
	ck_assert_uint_eq(phase_end(&t), 0);
	ck_assert_ptr_null(phase_current(&t, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(phase_history_size(&t, 0xabc), 4);
	ck_assert_uint_eq(phase_history_size(&t, 0xabd), 0);
	phase_fini(&t);
}
END_TEST

START_TEST(test_repeat_ten)
{
	enum { G = 50 };
	struct phase_table t;
	ck_assert_int_eq(phase_init(&t, 4, 256), 0);
	for (int run = 0; run < 10; run++) {
		uint32_t n;
		phase_begin(&t, 7, &n);
		CHK_EQ(n, run == 0 ? 0 : G);
		for (int i = 0; i < G; i++)
			CHK_EQ(phase_get(&t, i % 5, (uint64_t)i * 512, 512), run == 0 ? -1 : i);
		CHK_EQ(phase_end(&t), 0);
	}
	ck_assert_uint_eq(t.st.hits, 9 * G);
	ck_assert_uint_eq(t.st.misses, G);
	ck_assert_uint_eq(t.st.recorded, G);
	ck_assert_uint_eq(t.st.predicted, 9 * G);
	ck_assert_uint_eq(t.st.wasted, 0);
	ck_assert_uint_eq(phase_history_size(&t, 7), G);
	phase_fini(&t);
}
END_TEST

START_TEST(test_mispredict)
{
	struct phase_table t;
	ck_assert_int_eq(phase_init(&t, 4, 16), 0);
	const struct g3 a = {0, 0, 8}, b = {0, 64, 8}, c = {1, 0, 8}, d = {2, 0, 8};
	const struct g3 run1[] = {a, b, c}, run2[] = {a, d, c}, hist2[] = {a, d, c};
	const int w1[] = {-1, -1, -1}, w2[] = {0, -1, 2}, w3[] = {0, 1, 2};
	uint32_t n;
	phase_begin(&t, 1, &n);
	run_gets(&t, run1, 3, w1);
	phase_end(&t);
	/* run 2: b is not used (wasted), d is new and happens between a and c */
	struct phase_get *p = phase_begin(&t, 1, &n);
	ck_assert_uint_eq(n, 3);
	run_gets(&t, run2, 3, w2);
	struct phase_get *cur = phase_current(&t, &n);
	ck_assert_ptr_eq(cur, p);
	ck_assert_uint_eq(n, 4); /* predicted + appended, until phase_end */
	ck_assert_uint_eq(cur[1].flags, 0); /* b: what the caller reaps */
	ck_assert_uint_eq(cur[3].flags, PHASE_F_USED | PHASE_F_NEW);
	ck_assert_uint_eq(phase_end(&t), 1);
	ck_assert_uint_eq(t.st.wasted, 1);
	ck_assert_uint_eq(phase_history_size(&t, 1), 3);
	/* run 3 predicts the order of run 2 */
	p = phase_begin(&t, 1, &n);
	expect_entries(p, n, hist2, 3);
	run_gets(&t, run2, 3, w3);
	ck_assert_uint_eq(phase_end(&t), 0);
	/* a run with no gets at all wastes the whole history */
	phase_begin(&t, 1, &n);
	ck_assert_uint_eq(phase_end(&t), 3);
	ck_assert_uint_eq(phase_history_size(&t, 1), 0);
	phase_begin(&t, 1, &n);
	ck_assert_uint_eq(n, 0);
	phase_end(&t);
	ck_assert_uint_eq(t.st.wasted, 4);
	phase_fini(&t);
}
END_TEST

START_TEST(test_invalidate)
{
	struct phase_table t;
	ck_assert_int_eq(phase_init(&t, 4, 16), 0);
	const struct g3 gs[] = {{1, 0, 100}, {1, 200, 100}, {2, 0, 100}, {1, 1000, 10}};
	const int w1[] = {-1, -1, -1, -1};
	uint32_t n;
	phase_begin(&t, 5, &n);
	run_gets(&t, gs, 4, w1);
	phase_end(&t);
	struct phase_get *p = phase_begin(&t, 5, &n);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(phase_invalidate(&t, 3, 0, 100), 0);    /* other pe */
	ck_assert_uint_eq(phase_invalidate(&t, 1, 100, 100), 0);  /* adjacent on both sides */
	ck_assert_uint_eq(phase_invalidate(&t, 1, 50, 0), 0);     /* empty */
	ck_assert_uint_eq(phase_invalidate(&t, 1, 5000, 10), 0);  /* outside all */
	ck_assert_uint_eq(phase_invalidate(&t, 1, 99, 2), 1);     /* [99,101) hits entry 0 */
	ck_assert_uint_eq(p[0].flags, PHASE_F_INVALID);
	ck_assert_uint_eq(phase_invalidate(&t, 1, 0, 10), 0);     /* already invalid */
	ck_assert_int_eq(phase_get(&t, 1, 200, 100), 1);          /* used ... */
	ck_assert_uint_eq(phase_invalidate(&t, 1, 0, 2000), 1);   /* ... so only entry 3 */
	ck_assert_uint_eq(t.st.invalidated, 2);
	/* the get of an invalidated entry misses (stale data) but is not
	 * appended again: it stays in the history once */
	uint64_t m = t.st.misses;
	ck_assert_int_eq(phase_get(&t, 1, 0, 100), -1);
	ck_assert_uint_eq(t.st.misses, m + 1);
	ck_assert_uint_eq(p[0].flags, PHASE_F_INVALID | PHASE_F_USED);
	ck_assert_int_eq(phase_get(&t, 2, 0, 100), 2);
	phase_current(&t, &n);
	ck_assert_uint_eq(n, 4);
	/* entry 3 was invalidated and never got: dropped */
	ck_assert_uint_eq(phase_end(&t), 1);
	ck_assert_uint_eq(phase_history_size(&t, 5), 3);
	p = phase_begin(&t, 5, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(p[0].off, 200); /* the order of the gets of run 2 */
	ck_assert_uint_eq(p[1].off, 0);
	ck_assert_uint_eq(p[1].flags, 0); /* back to valid in a new run */
	ck_assert_int_eq(phase_get(&t, 1, 0, 100), 1);
	phase_end(&t);
	phase_fini(&t);
}
END_TEST

START_TEST(test_duplicates)
{
	struct phase_table t;
	ck_assert_int_eq(phase_init(&t, 2, 16), 0);
	const struct g3 x = {4, 64, 64}, y = {4, 128, 64};
	const struct g3 run1[] = {x, x, y, x}, run2[] = {x, x, y, x, x};
	const int w1[] = {-1, -1, -1, -1}, w2[] = {0, 1, 2, 3, -1};
	uint32_t n;
	phase_begin(&t, 9, &n);
	run_gets(&t, run1, 4, w1);
	phase_end(&t);
	phase_begin(&t, 9, &n);
	ck_assert_uint_eq(n, 4);
	run_gets(&t, run2, 5, w2); /* matched in order; the fifth x is new */
	ck_assert_uint_eq(phase_end(&t), 0);
	ck_assert_uint_eq(phase_history_size(&t, 9), 5);
	/* an invalidated duplicate is consumed in its FIFO turn */
	struct phase_get *p = phase_begin(&t, 9, &n);
	ck_assert_int_eq(phase_get(&t, 4, 64, 64), 0);
	ck_assert_uint_eq(phase_invalidate(&t, 4, 64, 1), 3); /* entries 1, 3, 4 */
	ck_assert_int_eq(phase_get(&t, 4, 64, 64), -1); /* entry 1, stale */
	ck_assert_uint_eq(p[1].flags, PHASE_F_USED | PHASE_F_INVALID);
	ck_assert_uint_eq(p[3].flags, PHASE_F_INVALID);
	phase_end(&t);
	ck_assert_uint_eq(phase_history_size(&t, 9), 2);
	phase_fini(&t);
}
END_TEST

START_TEST(test_alternating)
{
	struct phase_table t;
	ck_assert_int_eq(phase_init(&t, 4, 64), 0);
	uint32_t n;
	for (int round = 0; round < 6; round++) {
		uint64_t id = round % 2 ? 0xB : 0xA;
		struct phase_get *p = phase_begin(&t, id, &n); /* also ends the previous run */
		CHK_EQ(n, round < 2 ? 0 : (id == 0xA ? 3 : 5));
		for (uint32_t i = 0; i < n; i++)
			CHK_EQ(p[i].off, id * 1000 + i);
		int gets = id == 0xA ? 3 : 5;
		for (int i = 0; i < gets; i++)
			CHK_EQ(phase_get(&t, (int32_t)id, id * 1000 + (uint64_t)i, 8), round < 2 ? -1 : i);
	}
	phase_end(&t);
	ck_assert_uint_eq(phase_history_size(&t, 0xA), 3);
	ck_assert_uint_eq(phase_history_size(&t, 0xB), 5);
	ck_assert_uint_eq(t.st.wasted, 0);
	ck_assert_uint_eq(t.st.hits, 2 * 3 + 2 * 5);
	phase_fini(&t);
}
END_TEST

START_TEST(test_bounds)
{
	struct phase_table t;
	ck_assert_int_eq(phase_init(&t, 3, 4), 0);
	uint32_t n;
	/* max_gets: the fifth distinct get of a phase is not recorded */
	phase_begin(&t, 1, &n);
	for (int i = 0; i < 10; i++)
		CHK_EQ(phase_get(&t, 0, (uint64_t)i * 8, 8), -1);
	ck_assert_uint_eq(phase_history_size(&t, 1), 4);
	ck_assert_uint_eq(t.st.full, 6);
	phase_end(&t);
	/* a full history still takes new gets once mispredictions are gone */
	phase_begin(&t, 1, &n);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(phase_get(&t, 0, 0, 8), 0);
	ck_assert_int_eq(phase_get(&t, 0, 999, 8), -1); /* full: predictions still count */
	ck_assert_uint_eq(phase_end(&t), 3);
	phase_begin(&t, 1, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(phase_get(&t, 0, 999, 8), -1);
	ck_assert_uint_eq(phase_history_size(&t, 1), 2);
	phase_end(&t);
	/* max_phases: the least recently begun phase is evicted */
	for (uint64_t id = 2; id <= 3; id++) {
		phase_begin(&t, id, &n);
		phase_get(&t, 1, id, 1);
		phase_end(&t);
	}
	ck_assert_uint_eq(t.nphases, 3);
	phase_begin(&t, 1, &n); /* 1 is now the most recent; 2 the least */
	phase_end(&t);
	phase_begin(&t, 4, &n);
	phase_end(&t);
	ck_assert_uint_eq(t.st.evicted, 1);
	ck_assert_uint_eq(t.nphases, 3);
	ck_assert_uint_eq(phase_history_size(&t, 2), 0);
	ck_assert_uint_eq(phase_history_size(&t, 3), 1);
	phase_begin(&t, 2, &n);
	ck_assert_uint_eq(n, 0); /* forgotten: recording again */
	phase_end(&t);
	ck_assert_uint_eq(phase_history_size(&t, 3), 0); /* evicted in turn */
	phase_fini(&t);
}
END_TEST

/* ---- naive model ---- */

enum { M_PHASES = 4, M_GETS = 12, M_IDS = 6 };

struct ment {
	struct g3 g;
	uint32_t flags;
};

struct mphase {
	uint64_t id;
	struct ment e[M_GETS];
	uint32_t n;
};

struct mtable {
	struct mphase p[M_PHASES]; /* LRU order: p[0] most recent */
	uint32_t np;
	int cur; /* 0 (the front) while a run is on, -1 between runs */
	uint32_t npred;
	uint32_t order[M_GETS], nused;
};

static uint32_t m_end(struct mtable *m)
{
	if (m->cur < 0)
		return 0;
	struct mphase *ph = &m->p[0];
	struct ment tmp[M_GETS];
	for (uint32_t k = 0; k < m->nused; k++)
		tmp[k] = ph->e[m->order[k]];
	uint32_t wasted = ph->n - m->nused;
	memcpy(ph->e, tmp, sizeof(tmp));
	ph->n = m->nused;
	m->cur = -1;
	return wasted;
}

static uint32_t m_begin(struct mtable *m, uint64_t id)
{
	m_end(m);
	uint32_t at = m->np;
	for (uint32_t i = 0; i < m->np; i++)
		if (m->p[i].id == id)
			at = i;
	struct mphase ph;
	if (at < m->np) {
		ph = m->p[at];
	} else {
		memset(&ph, 0, sizeof(ph));
		ph.id = id;
		if (m->np == M_PHASES)
			m->np--; /* evict the last */
		at = m->np++;
	}
	memmove(&m->p[1], &m->p[0], at * sizeof(ph));
	m->p[0] = ph;
	for (uint32_t i = 0; i < ph.n; i++)
		m->p[0].e[i].flags = 0;
	m->cur = 0;
	m->npred = ph.n;
	m->nused = 0;
	return ph.n;
}

static int m_get(struct mtable *m, struct g3 g)
{
	if (m->cur < 0)
		return -1;
	struct mphase *ph = &m->p[0];
	for (uint32_t i = 0; i < m->npred; i++) {
		struct ment *e = &ph->e[i];
		if (!(e->flags & PHASE_F_USED) && e->g.pe == g.pe && e->g.off == g.off && e->g.len == g.len) {
			e->flags |= PHASE_F_USED;
			m->order[m->nused++] = i;
			return e->flags & PHASE_F_INVALID ? -1 : (int)i;
		}
	}
	if (ph->n < M_GETS) {
		ph->e[ph->n].g = g;
		ph->e[ph->n].flags = PHASE_F_USED | PHASE_F_NEW;
		m->order[m->nused++] = ph->n++;
	}
	return -1;
}

static uint32_t m_invalidate(struct mtable *m, int32_t pe, uint64_t off, uint64_t len)
{
	if (m->cur < 0)
		return 0;
	uint32_t n = 0;
	for (uint32_t i = 0; i < m->npred; i++) {
		struct ment *e = &m->p[0].e[i];
		if (e->g.pe == pe && !(e->flags & (PHASE_F_USED | PHASE_F_INVALID)) && e->g.off < off + len &&
		    e->g.off + e->g.len > off && e->g.len > 0 && len > 0) {
			e->flags |= PHASE_F_INVALID;
			n++;
		}
	}
	return n;
}

static struct g3 rand_get(uint64_t *rs)
{
	/* few distinct gets so that duplicates and repeats are common */
	struct g3 g = {(int32_t)(rng_next(rs) % 3), (rng_next(rs) % 6) * 16, 8 + (rng_next(rs) % 2) * 8};
	return g;
}

static uint32_t last_period; /* of the run_set run */

/* n gets of set `set` (disjoint address sets); returns the hits */
static uint32_t run_set(struct phase_table *t, uint64_t id, int set, int n, uint32_t *pred)
{
	uint32_t np, hits = 0;
	phase_begin(t, id, &np);
	if (pred)
		*pred = np;
	last_period = t->period;
	for (int i = 0; i < n; i++)
		hits += phase_get(t, 1, (uint64_t)set * 65536 + (uint64_t)i * 64, 64) >= 0;
	phase_end(t);
	return hits;
}

/* a double buffer: two address sets alternate behind one call site. From
 * the 4th run on every get is predicted (period 2); the last-run predictor
 * (period_max 1) never predicts one. */
START_TEST(test_period2)
{
	struct phase_table t;
	ck_assert_int_eq(phase_init_periods(&t, 4, 64, 4), -EINVAL);
	ck_assert_int_eq(phase_init_periods(&t, 4, 64, 0), -EINVAL);
	ck_assert_int_eq(phase_init_periods(&t, 4, 64, 3), 0);
	uint32_t np;
	for (int r = 0; r < 20; r++) {
		uint32_t h = run_set(&t, 7, r % 2, 10, &np);
		if (r >= 3) {
			ck_assert_uint_eq(h, 10);
			ck_assert_uint_eq(np, 10);
			ck_assert_uint_eq(last_period, 2);
		}
	}
	ck_assert_uint_eq(t.st.hits, 17 * 10);
	ck_assert_uint_eq(t.st.periodic, 17);
	ck_assert_uint_eq(t.st.dry, 0); /* the period matched: never dry */
	/* the last run's set is what the history reports */
	ck_assert_uint_eq(phase_history_size(&t, 7), 10);
	phase_fini(&t);
	ck_assert_int_eq(phase_init(&t, 4, 64), 0);
	for (int r = 0; r < 20; r++)
		run_set(&t, 7, r % 2, 10, NULL);
	ck_assert_uint_eq(t.st.hits, 0);
	phase_fini(&t);
}
END_TEST

/* period 3, interleaved with a period-1 phase; then the pattern becomes
 * period 1 and is followed at once. */
START_TEST(test_period3)
{
	struct phase_table t;
	ck_assert_int_eq(phase_init_periods(&t, 4, 64, 3), 0);
	uint32_t hits = 0, other = 0;
	for (int r = 0; r < 30; r++) {
		uint32_t h = run_set(&t, 9, r % 3, 8, NULL);
		if (r >= 4)
			ck_assert_uint_eq(h, 8);
		hits += h;
		other += run_set(&t, 10, 5, 3, NULL);
	}
	ck_assert_uint_eq(hits, 26 * 8);
	ck_assert_uint_eq(other, 29 * 3);
	/* a constant pattern now: the first run mispredicts, then p = 1 */
	ck_assert_uint_eq(run_set(&t, 9, 2, 8, NULL), 0);
	ck_assert_uint_eq(run_set(&t, 9, 2, 8, NULL), 8);
	ck_assert_uint_eq(t.period, 0); /* between runs */
	ck_assert_uint_eq(run_set(&t, 9, 2, 8, NULL), 8);
	phase_fini(&t);
}
END_TEST

/* gets that change every run: after PHASE_BAD_RUNS bad runs the phase is
 * backed off (dry), and stays so; a pattern that repeats again ends it. */
START_TEST(test_backoff)
{
	struct phase_table t;
	ck_assert_int_eq(phase_init_periods(&t, 4, 64, 3), 0);
	uint32_t np;
	for (int r = 0; r < 20; r++) {
		run_set(&t, 3, 100 + r, 8, &np);
		ck_assert_int_eq(t.st.backoffs, r >= 2 ? 1 : 0);
	}
	ck_assert_uint_eq(t.st.dry, 17); /* runs 3..19 */
	/* the same set twice: the 2nd run is still dry (no period matched
	 * yet), and good: the back-off ends */
	run_set(&t, 3, 1, 8, NULL);
	phase_begin(&t, 3, &np);
	ck_assert_int_eq(t.dry, 1);
	for (int i = 0; i < 8; i++)
		ck_assert_int_ge(phase_get(&t, 1, 65536 + (uint64_t)i * 64, 64), 0);
	phase_end(&t);
	phase_begin(&t, 3, &np);
	ck_assert_int_eq(t.dry, 0);
	ck_assert_uint_eq(np, 8);
	phase_end(&t);
	/* one bad run is not enough */
	uint64_t b = t.st.backoffs;
	run_set(&t, 3, 50, 8, NULL);
	run_set(&t, 3, 50, 8, NULL);
	ck_assert_uint_eq(t.st.backoffs, b);
	phase_fini(&t);
}
END_TEST

/* a window of 16 gets sliding along: by 4 a run the last run's prediction
 * is mostly right (12 of 16 hit, never backed off); by 12 mostly wrong
 * (backed off after 2 runs, dry from then on) */
START_TEST(test_shifting_window)
{
	struct phase_table t;
	ck_assert_int_eq(phase_init_periods(&t, 4, 64, 3), 0);
	for (int step = 4; step <= 12; step += 8) {
		uint64_t id = 100 + (uint64_t)step, h0 = t.st.hits, d0 = t.st.dry;
		for (int r = 0; r < 12; r++) {
			uint32_t np;
			phase_begin(&t, id, &np);
			for (int i = 0; i < 16; i++)
				phase_get(&t, 2, (uint64_t)(r * step + i) * 8, 8);
			phase_end(&t);
		}
		if (step == 4) {
			ck_assert_uint_eq(t.st.hits - h0, 11 * 12);
			ck_assert_uint_eq(t.st.dry - d0, 0);
		} else {
			ck_assert_uint_eq(t.st.hits - h0, 11 * 4);
			ck_assert_uint_eq(t.st.dry - d0, 9); /* runs 3..11 */
		}
	}
	ck_assert_uint_eq(t.st.backoffs, 1);
	phase_fini(&t);
}
END_TEST

START_TEST(test_random_vs_model)
{
	struct phase_table t;
	struct mtable m;
	memset(&m, 0, sizeof(m));
	m.cur = -1;
	ck_assert_int_eq(phase_init(&t, M_PHASES, M_GETS), 0);
	uint64_t rs = 777;
	/* each id has a base pattern that runs mostly repeat, with noise */
	struct g3 pattern[M_IDS][M_GETS];
	for (int i = 0; i < M_IDS; i++)
		for (int k = 0; k < M_GETS; k++)
			pattern[i][k] = rand_get(&rs);
	for (int run = 0; run < 20000; run++) {
		uint64_t id = rng_next(&rs) % 3 == 0 ? rng_next(&rs) % M_IDS : (uint64_t)(run % 3);
		uint32_t n, mn = m_begin(&m, id);
		struct phase_get *p = phase_begin(&t, id, &n);
		CHK_EQ(n, mn);
		for (uint32_t i = 0; i < n; i++) {
			CHK_EQ(p[i].pe, m.p[0].e[i].g.pe);
			CHK_EQ(p[i].off, m.p[0].e[i].g.off);
			CHK_EQ(p[i].len, m.p[0].e[i].g.len);
			CHK_EQ(p[i].flags, 0);
		}
		int len = (int)(rng_next(&rs) % (M_GETS + 4));
		for (int k = 0; k < len; k++) {
			uint64_t r = rng_next(&rs) % 10;
			if (r < 2) {
				int32_t pe = (int32_t)(rng_next(&rs) % 3);
				uint64_t off = rng_next(&rs) % 100, l = rng_next(&rs) % 20;
				CHK_EQ(phase_invalidate(&t, pe, off, l), m_invalidate(&m, pe, off, l));
			} else {
				struct g3 g = r < 8 ? pattern[id][k % M_GETS] : rand_get(&rs);
				CHK_EQ(phase_get(&t, g.pe, g.off, g.len), m_get(&m, g));
			}
		}
		uint32_t cn;
		struct phase_get *cp = phase_current(&t, &cn);
		CHK(cp == p);
		CHK_EQ(cn, m.p[0].n);
		for (uint32_t i = 0; i < cn; i++)
			CHK_EQ(cp[i].flags, m.p[0].e[i].flags);
		if (rng_next(&rs) % 4) /* else phase_begin ends it */
			CHK_EQ(phase_end(&t), m_end(&m));
		CHK(t.nphases <= M_PHASES);
		for (uint64_t q = 0; q < M_IDS; q++) {
			uint32_t want = 0;
			for (uint32_t i = 0; i < m.np; i++)
				if (m.p[i].id == q)
					want = m.p[i].n;
			CHK_EQ(phase_history_size(&t, q), want);
			CHK(want <= M_GETS);
		}
	}
	ck_assert_uint_gt(t.st.hits, 10000);
	ck_assert_uint_gt(t.st.wasted, 1000);
	ck_assert_uint_gt(t.st.invalidated, 1000);
	ck_assert_uint_gt(t.st.evicted, 100);
	ck_assert_uint_gt(t.st.full, 100);
	phase_fini(&t);
}
END_TEST

/* Why a get missed (t->miss): the first run (cold), a get the last run did
 * not do (new), an invalidated prediction, a full run; a hit says none. */
START_TEST(test_miss_reasons)
{
	struct phase_table t;
	ck_assert_int_eq(phase_init(&t, 4, 3), 0);
	uint32_t n;
	ck_assert_int_eq(phase_get(&t, 1, 0, 8), -1);
	ck_assert_uint_eq(t.miss, PHASE_MISS_IDLE);
	phase_begin(&t, 9, &n);
	ck_assert_int_eq(phase_get(&t, 1, 0, 8), -1);
	ck_assert_uint_eq(t.miss, PHASE_MISS_COLD);
	ck_assert_int_eq(phase_get(&t, 1, 8, 8), -1);
	ck_assert_uint_eq(t.st.cold, 2);
	phase_end(&t);
	phase_begin(&t, 9, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(phase_invalidate(&t, 1, 8, 1), 1);
	ck_assert_int_eq(phase_get(&t, 1, 0, 8), 0);
	ck_assert_uint_eq(t.miss, PHASE_MISS_NONE);
	ck_assert_int_eq(phase_get(&t, 1, 8, 8), -1);
	ck_assert_uint_eq(t.miss, PHASE_MISS_INVALID);
	ck_assert_int_eq(phase_get(&t, 1, 16, 8), -1);
	ck_assert_uint_eq(t.miss, PHASE_MISS_NEW);
	ck_assert_int_eq(phase_get(&t, 1, 24, 8), -1); /* 3 entries held: full */
	ck_assert_uint_eq(t.miss, PHASE_MISS_FULL);
	ck_assert_uint_eq(t.st.full, 1);
	ck_assert_uint_eq(t.st.cold, 2);
	phase_fini(&t);
}
END_TEST

/* A run begun but never run (its start was called off): abandoned, the
 * phase keeps its predictions, in order, with nothing wasted and its
 * back-off state unchanged; phase_end instead would drop them all. */
START_TEST(test_abandon)
{
	struct phase_table t;
	ck_assert_int_eq(phase_init(&t, 4, 16), 0);
	const struct g3 gs[] = {{1, 64, 8}, {1, 0, 8}, {2, 32, 8}};
	const int miss[] = {-1, -1, -1};
	uint32_t n;
	phase_begin(&t, 5, &n);
	run_gets(&t, gs, 3, miss);
	phase_end(&t);
	phase_begin(&t, 5, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(phase_abandon(&t), 3);
	ck_assert_uint_eq(phase_abandon(&t), 0); /* nothing current */
	ck_assert_uint_eq(t.st.wasted, 0);
	struct phase_get *p = phase_begin(&t, 5, &n);
	expect_entries(p, n, gs, 3);
	ck_assert_uint_eq(phase_end(&t), 3); /* unused now: dropped */
	p = phase_begin(&t, 5, &n);
	ck_assert_uint_eq(n, 0);
	phase_fini(&t);
}
END_TEST

/* Gets learnt of after the fact (the client served them from its fast
 * table; the caller tells at the notify, phase_take) keep their place
 * among the gets seen when they happened: the next run predicts the
 * program's order, not the seen ones first and the taken ones after them
 * (which sent the client's lookup astray: the prefetch sweep's cliff). A
 * new get keeps its place after the get seen before it; a take of an
 * entry already used falls back to phase_get. */
START_TEST(test_take_keeps_order)
{
	struct phase_table t;
	ck_assert_int_eq(phase_init(&t, 4, 32), 0);
	struct g3 gs[10];
	int miss[10];
	for (int i = 0; i < 10; i++) {
		gs[i] = (struct g3){2, (uint64_t)i * 64, 8};
		miss[i] = -1;
	}
	uint32_t n;
	phase_begin(&t, 3, &n);
	run_gets(&t, gs, 10, miss);
	phase_end(&t);
	/* run 2: the daemon sees gets 0, 4, 5 and a new one x after 5; the
	 * client serves 1-3 and 6-9 itself, reported at the end */
	struct phase_get *p = phase_begin(&t, 3, &n);
	ck_assert_uint_eq(n, 10);
	CHK_EQ(phase_get(&t, 2, 0, 8), 0);
	CHK_EQ(phase_get(&t, 2, 4 * 64, 8), 4);
	CHK_EQ(phase_get(&t, 2, 5 * 64, 8), 5);
	CHK_EQ(phase_get(&t, 2, 100000, 8), -1); /* x: new */
	uint64_t hits = t.st.hits;
	for (uint32_t i = 1; i < 10; i++)
		if (i != 4 && i != 5)
			CHK_EQ(phase_take(&t, i), (int)i);
	ck_assert_uint_eq(t.st.hits, hits + 7);
	ck_assert_uint_eq(p[1].flags, PHASE_F_USED | PHASE_F_LATE);
	CHK_EQ(phase_take(&t, 4), -1); /* used already: as phase_get, new */
	ck_assert_uint_eq(phase_end(&t), 0);
	p = phase_begin(&t, 3, &n);
	ck_assert_uint_eq(n, 12);
	/* 1-3 before 4 (the first seen after them); x after 5; the fallback
	 * (a get seen at the take, after x) then; 6-9, seen before nothing,
	 * at the end */
	const uint64_t want[] = {0, 64, 128, 192, 256, 320, 100000, 256, 384, 448, 512, 576};
	for (uint32_t i = 0; i < n; i++)
		ck_assert_uint_eq(p[i].off, want[i]);
	ck_assert_uint_eq(p[6].len, 8);
	phase_end(&t);
	phase_fini(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("phase");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_record_then_predict);
	tcase_add_test(tc, test_repeat_ten);
	tcase_add_test(tc, test_mispredict);
	tcase_add_test(tc, test_invalidate);
	tcase_add_test(tc, test_duplicates);
	tcase_add_test(tc, test_alternating);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_random_vs_model);
	tcase_add_test(tc, test_period2);
	tcase_add_test(tc, test_period3);
	tcase_add_test(tc, test_backoff);
	tcase_add_test(tc, test_shifting_window);
	tcase_add_test(tc, test_miss_reasons);
	tcase_add_test(tc, test_abandon);
	tcase_add_test(tc, test_take_keeps_order);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
