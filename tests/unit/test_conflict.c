/* Outstanding-put conflict tracking: bounding box, interval tree, FIFO
 * retirement, capacity, and random runs against a brute-force model. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conflict.h"
#include "unit_util.h"

/* ---- brute-force model: per target, the outstanding puts in FIFO order ---- */

struct mput {
	uint64_t start, end, seq;
};

struct model {
	int npes;
	struct mput **q; /* [npes][cap] */
	uint32_t *head, *tail;
	uint32_t cap;
	uint32_t count;
};

static void model_init(struct model *m, int npes, uint32_t cap)
{
	m->npes = npes;
	m->cap = cap;
	m->count = 0;
	m->q = calloc((size_t)npes, sizeof(*m->q));
	m->head = calloc((size_t)npes, sizeof(*m->head));
	m->tail = calloc((size_t)npes, sizeof(*m->tail));
	ck_assert_ptr_nonnull(m->q);
	for (int pe = 0; pe < npes; pe++) {
		m->q[pe] = malloc((size_t)cap * sizeof(struct mput));
		ck_assert_ptr_nonnull(m->q[pe]);
	}
}

static void model_fini(struct model *m)
{
	for (int pe = 0; pe < m->npes; pe++)
		free(m->q[pe]);
	free(m->q);
	free(m->head);
	free(m->tail);
}

/* the model's queues are append-only arrays: compact when the end is hit */
static void model_add(struct model *m, int pe, uint64_t start, uint64_t len, uint64_t seq)
{
	if (m->tail[pe] == m->cap) {
		uint32_t n = m->tail[pe] - m->head[pe];
		memmove(m->q[pe], m->q[pe] + m->head[pe], n * sizeof(struct mput));
		m->head[pe] = 0;
		m->tail[pe] = n;
	}
	struct mput p = {start, start + len, seq};
	m->q[pe][m->tail[pe]++] = p;
	m->count++;
}

static uint64_t model_check(const struct model *m, int pe, uint64_t start, uint64_t len)
{
	if (len == 0)
		return 0;
	uint64_t end = start + len;
	for (uint32_t i = m->tail[pe]; i-- > m->head[pe];) { /* newest first */
		const struct mput *p = &m->q[pe][i];
		if (p->start < end && p->end > start && p->end > p->start)
			return p->seq;
	}
	return 0;
}

static void model_retire(struct model *m, int pe, uint64_t seq)
{
	while (m->head[pe] < m->tail[pe] && m->q[pe][m->head[pe]].seq <= seq) {
		m->head[pe]++;
		m->count--;
	}
}

static uint32_t model_outstanding(const struct model *m, int pe)
{
	return m->tail[pe] - m->head[pe];
}

/* ---- tests ---- */

START_TEST(test_monotonic_box)
{
	struct conflict c;
	ck_assert_int_eq(conflict_init(&c, 4, 1024), 0);
	uint64_t seq = 0;
	/* walk a remote array per target; check before each put (a get or put
	 * to the next block), retire from the head now and then */
	for (int i = 0; i < 20000; i++) {
		int pe = i % 4;
		uint64_t off = (uint64_t)(i / 4) * 256;
		CHK_EQ(conflict_check(&c, pe, off, 256), 0);
		CHK_EQ(conflict_add(&c, pe, off, 256, ++seq), 0);
		if (conflict_outstanding(&c, pe) > 200)
			conflict_retire(&c, pe, conflict_oldest(&c, pe) + 4 * 100);
	}
	ck_assert_uint_eq(c.st.checks, 20000);
	ck_assert_uint_eq(c.st.box_clear, 20000);
	ck_assert_uint_eq(c.st.precise, 0);
	ck_assert_uint_eq(c.st.visits, 0);
	ck_assert_uint_eq(c.st.conflicts, 0);
	ck_assert_int_eq(conflict_validate(&c), 0);
	/* rewriting the last block of a target does conflict, with its put */
	uint64_t last_off = (uint64_t)(19999 / 4) * 256;
	ck_assert_uint_eq(conflict_check(&c, 3, last_off + 10, 1), seq);
	ck_assert_uint_eq(conflict_check(&c, 2, last_off + 10, 1), seq - 1);
	ck_assert_uint_eq(c.st.precise, 2);
	ck_assert_uint_eq(c.st.conflicts, 2);
	conflict_fini(&c);
}
END_TEST

START_TEST(test_adjacent_and_zero_length)
{
	struct conflict c;
	ck_assert_int_eq(conflict_init(&c, 2, 64), 0);
	ck_assert_int_eq(conflict_add(&c, 0, 100, 100, 1), 0); /* [100,200) */
	ck_assert_int_eq(conflict_add(&c, 0, 300, 100, 2), 0); /* [300,400) */
	/* [a,b) vs [b,c): no conflict, on both sides; the gap is inside the box
	 * so the tree answers */
	ck_assert_uint_eq(conflict_check(&c, 0, 200, 100), 0);
	ck_assert_uint_eq(c.st.precise, 1);
	ck_assert_uint_eq(conflict_check(&c, 0, 0, 100), 0);
	ck_assert_uint_eq(conflict_check(&c, 0, 400, 10), 0);
	ck_assert_uint_eq(c.st.box_clear, 2);
	ck_assert_uint_eq(conflict_check(&c, 0, 199, 1), 1);
	ck_assert_uint_eq(conflict_check(&c, 0, 99, 2), 1);
	ck_assert_uint_eq(conflict_check(&c, 0, 399, 1), 2);
	ck_assert_uint_eq(conflict_check(&c, 0, 299, 1), 0);
	ck_assert_uint_eq(conflict_check(&c, 0, 199, 102), 2); /* spans both: newest */
	ck_assert_uint_eq(conflict_check(&c, 1, 150, 10), 0);  /* other target */
	/* zero-length ranges never conflict, stored or checked */
	ck_assert_uint_eq(conflict_check(&c, 0, 150, 0), 0);
	ck_assert_int_eq(conflict_add(&c, 0, 500, 0, 3), 0);
	ck_assert_uint_eq(conflict_outstanding(&c, 0), 3);
	ck_assert_uint_eq(c.t[0].hi, 400); /* the box ignores it */
	ck_assert_uint_eq(conflict_check(&c, 0, 500, 1), 0);
	ck_assert_uint_eq(conflict_check(&c, 0, 499, 2), 0);
	ck_assert_int_eq(conflict_add(&c, 1, 7, 0, 4), 0);
	ck_assert_uint_eq(conflict_check(&c, 1, 0, 100), 0);
	ck_assert_int_eq(conflict_validate(&c), 0);
	/* a zero-length put still completes in FIFO order */
	conflict_retire(&c, 0, 2);
	ck_assert_uint_eq(conflict_outstanding(&c, 0), 1);
	ck_assert_uint_eq(conflict_oldest(&c, 0), 3);
	ck_assert_uint_eq(c.t[0].root, CF_NIL);
	ck_assert_int_eq(conflict_validate(&c), 0);
	/* the top of the address space */
	ck_assert_int_eq(conflict_add(&c, 1, UINT64_MAX - 10, 10, 5), 0);
	ck_assert_uint_eq(conflict_check(&c, 1, UINT64_MAX - 1, 100), 5); /* clamped */
	ck_assert_uint_eq(conflict_check(&c, 1, UINT64_MAX - 20, 10), 0);
	conflict_fini(&c);
}
END_TEST

START_TEST(test_identical_and_nested)
{
	enum { N = 10000 };
	struct conflict c;
	ck_assert_int_eq(conflict_init(&c, 3, 3 * N), 0);
	uint64_t seq = 0;
	/* pe 0: N identical puts; pe 1: N nested, each inside the previous;
	 * pe 2: N nested, each around the previous */
	for (uint64_t i = 0; i < N; i++) {
		ck_assert_int_eq(conflict_add(&c, 0, 1000, 64, ++seq), 0);
		ck_assert_int_eq(conflict_add(&c, 1, i, 2 * (uint64_t)N - 2 * i, ++seq), 0);
		ck_assert_int_eq(conflict_add(&c, 2, (uint64_t)N - i, 2 * i + 1, ++seq), 0);
	}
	ck_assert_int_eq(conflict_validate(&c), 0);
	uint64_t v0 = c.st.visits;
	ck_assert_uint_eq(conflict_check(&c, 0, 1000, 64), 3 * (uint64_t)N - 2);
	ck_assert_uint_eq(conflict_check(&c, 0, 1063, 1), 3 * (uint64_t)N - 2);
	ck_assert_uint_eq(conflict_check(&c, 0, 1064, 1), 0);
	ck_assert_uint_eq(conflict_check(&c, 1, (uint64_t)N, 1), 3 * (uint64_t)N - 1); /* innermost */
	/* just outside the k-th innermost: [i, 2N-i) excludes i-1 */
	ck_assert_uint_eq(conflict_check(&c, 1, 99, 1), 3 * 100 - 1);
	ck_assert_uint_eq(conflict_check(&c, 2, (uint64_t)N, 1), 3 * (uint64_t)N); /* outermost */
	/* a stack of identical or nested puts costs O(log n) visits, not O(n) */
	ck_assert_uint_lt(c.st.visits - v0, 6 * 64);
	/* many overlapping puts with random starts, all covering the query:
	 * the search follows the newest max seq down one path */
	struct conflict c2;
	ck_assert_int_eq(conflict_init(&c2, 1, N), 0);
	uint64_t rs = 99;
	for (uint64_t i = 1; i <= N; i++)
		ck_assert_int_eq(conflict_add(&c2, 0, rng_next(&rs) % 100000, 1000000, i), 0);
	for (int q = 0; q < 100; q++) {
		uint64_t v = c2.st.visits;
		CHK_EQ(conflict_check(&c2, 0, 200000 + (uint64_t)q, 1), N);
		CHK(c2.st.visits - v < 64);
	}
	conflict_fini(&c2);
	/* retire half of pe 0: the newest answers stay the same */
	conflict_retire(&c, 0, 3 * (uint64_t)N / 2);
	ck_assert_uint_eq(conflict_outstanding(&c, 0), N / 2);
	ck_assert_uint_eq(conflict_check(&c, 0, 1010, 5), 3 * (uint64_t)N - 2);
	ck_assert_int_eq(conflict_validate(&c), 0);
	conflict_fini(&c);
}
END_TEST

START_TEST(test_retire_and_box)
{
	struct conflict c;
	ck_assert_int_eq(conflict_init(&c, 2, 16), 0);
	ck_assert_int_eq(conflict_add(&c, 0, 0, 10, 1), 0);
	ck_assert_int_eq(conflict_add(&c, 0, 1000, 10, 2), 0);
	ck_assert_int_eq(conflict_add(&c, 1, 500, 10, 3), 0);
	ck_assert_int_eq(conflict_add(&c, 0, 20, 10, 4), 0);
	ck_assert_uint_eq(c.t[0].lo, 0);
	ck_assert_uint_eq(c.t[0].hi, 1010);
	ck_assert_uint_eq(conflict_oldest(&c, 0), 1);
	ck_assert_uint_eq(conflict_newest(&c, 0), 4);
	/* retiring below the head does nothing */
	conflict_retire(&c, 0, 0);
	ck_assert_uint_eq(conflict_outstanding(&c, 0), 3);
	/* seq 1 and 3 (3 is pe 1's: the FIFO of pe 0 only holds 1, 2, 4) */
	conflict_retire(&c, 0, 3);
	ck_assert_uint_eq(conflict_outstanding(&c, 0), 1);
	ck_assert_uint_eq(conflict_outstanding(&c, 1), 1);
	ck_assert_uint_eq(c.t[0].lo, 20); /* the box shrank to [20,30) */
	ck_assert_uint_eq(c.t[0].hi, 30);
	uint64_t p = c.st.precise;
	ck_assert_uint_eq(conflict_check(&c, 0, 1000, 10), 0);
	ck_assert_uint_eq(conflict_check(&c, 0, 5, 5), 0);
	ck_assert_uint_eq(c.st.precise, p); /* both answered by the box */
	ck_assert_uint_eq(conflict_check(&c, 0, 25, 100), 4);
	ck_assert_uint_eq(c.st.retired, 2);
	ck_assert_int_eq(conflict_validate(&c), 0);
	/* the list empties: the box resets */
	conflict_retire(&c, 0, 100);
	ck_assert_uint_eq(conflict_outstanding(&c, 0), 0);
	ck_assert_uint_eq(c.t[0].lo, UINT64_MAX);
	ck_assert_uint_eq(c.t[0].hi, 0);
	ck_assert_uint_eq(conflict_oldest(&c, 0), 0);
	ck_assert_uint_eq(conflict_check(&c, 0, 0, UINT64_MAX), 0);
	/* active list and retire_all */
	uint32_t na;
	const int32_t *act = conflict_active(&c, &na);
	ck_assert_uint_eq(na, 1);
	ck_assert_int_eq(act[0], 1);
	ck_assert_int_eq(conflict_add(&c, 0, 40, 1, 5), 0);
	conflict_active(&c, &na);
	ck_assert_uint_eq(na, 2);
	conflict_retire_all(&c);
	conflict_active(&c, &na);
	ck_assert_uint_eq(na, 0);
	ck_assert_uint_eq(c.count, 0);
	ck_assert_uint_eq(c.st.retired, 5);
	ck_assert_uint_eq(conflict_check(&c, 1, 500, 10), 0);
	ck_assert_int_eq(conflict_validate(&c), 0);
	conflict_fini(&c);
}
END_TEST

START_TEST(test_cap_and_args)
{
	struct conflict c;
	ck_assert_int_eq(conflict_init(&c, 0, 8), -EINVAL);
	ck_assert_int_eq(conflict_init(&c, 4, 0), -EINVAL);
	ck_assert_int_eq(conflict_init(&c, 4, 8), 0);
	for (uint64_t s = 1; s <= 8; s++)
		ck_assert_int_eq(conflict_add(&c, (int32_t)(s % 4), s * 100, 10, s), 0);
	ck_assert_int_eq(conflict_add(&c, 0, 5000, 10, 9), -ENOSPC);
	ck_assert_uint_eq(c.st.cap_hits, 1);
	ck_assert_uint_eq(c.count, 8);
	/* bad arguments are refused before the capacity check */
	ck_assert_int_eq(conflict_add(&c, 4, 0, 1, 9), -EINVAL);
	ck_assert_int_eq(conflict_add(&c, -1, 0, 1, 9), -EINVAL);
	ck_assert_int_eq(conflict_add(&c, 0, 0, 1, 8), -EINVAL); /* seq not increasing */
	ck_assert_int_eq(conflict_add(&c, 0, UINT64_MAX, 1, 9), -EINVAL);
	ck_assert_uint_eq(c.st.cap_hits, 1);
	conflict_retire(&c, 1, 1); /* frees one slot */
	ck_assert_int_eq(conflict_add(&c, 0, 5000, 10, 9), 0); /* retry, same seq */
	ck_assert_int_eq(conflict_add(&c, 0, 6000, 10, 10), -ENOSPC);
	ck_assert_uint_eq(conflict_check(&c, 0, 5005, 1), 9);
	ck_assert_uint_eq(conflict_check(&c, 7, 0, 1), 0); /* pe out of range */
	ck_assert_uint_eq(conflict_outstanding(&c, 7), 0);
	conflict_retire(&c, 7, 100); /* ignored */
	conflict_retire_pe(&c, -1);
	ck_assert_int_eq(conflict_validate(&c), 0);
	conflict_fini(&c);
}
END_TEST

static uint64_t rand_len(uint64_t *rs)
{
	uint64_t r = rng_next(rs) % 100;
	if (r < 5)
		return 0;
	if (r < 75)
		return 1 + rng_next(rs) % 64;
	if (r < 97)
		return 1 + rng_next(rs) % 4096;
	return 1 + rng_next(rs) % (1u << 18);
}

/* 100k outstanding, overlapping freely, against the brute-force model */
START_TEST(test_random_vs_model)
{
	enum { NPES = 3, CAP = 100000, SPACE = 1 << 24 };
	struct conflict c;
	struct model m;
	ck_assert_int_eq(conflict_init(&c, NPES, CAP), 0);
	model_init(&m, NPES, CAP);
	uint64_t rs = 0x5eed1234, seq = 0, nconf = 0, nchecks = 0;
	/* pe 0 takes most of the traffic */
#define PICK_PE() ((int)(rng_next(&rs) % 8 < 6 ? 0 : 1 + rng_next(&rs) % (NPES - 1)))
	for (int step = 0; step < 160000; step++) {
		uint64_t op = rng_next(&rs) % 100;
		int pe = PICK_PE();
		if (step < CAP || op < 40) { /* add (fills up to 100k first) */
			uint64_t start = rng_next(&rs) % SPACE, len = rand_len(&rs);
			int rc = conflict_add(&c, pe, start, len, seq + 1);
			if (m.count == CAP) {
				CHK_EQ(rc, -ENOSPC);
			} else {
				CHK_EQ(rc, 0);
				model_add(&m, pe, start, len, ++seq);
			}
		}
		if (step % 50 == 0 || (step >= CAP && op >= 40 && op < 45)) { /* check */
			uint64_t start = rng_next(&rs) % SPACE, len = rand_len(&rs);
			if (rng_next(&rs) % 10 == 0)
				start += SPACE; /* outside the box */
			uint64_t want = model_check(&m, pe, start, len);
			CHK_EQ(conflict_check(&c, pe, start, len), want);
			nchecks++;
			nconf += want != 0;
		}
		if (step >= CAP && op >= 45 && op < 50) { /* retire some from the head */
			uint64_t lo = conflict_oldest(&c, pe);
			if (lo) {
				uint64_t s = lo + rng_next(&rs) % 16;
				conflict_retire(&c, pe, s);
				model_retire(&m, pe, s);
			}
		}
		if (step >= CAP && op == 99 && pe != 0) { /* pe 0 stays near 100k */
			conflict_retire_pe(&c, pe);
			model_retire(&m, pe, UINT64_MAX);
		}
		for (int p = 0; p < NPES && step % 97 == 0; p++)
			CHK_EQ(conflict_outstanding(&c, p), model_outstanding(&m, p));
		if (step % 20000 == 0 || step == CAP - 1)
			CHK_EQ(conflict_validate(&c), 0);
	}
#undef PICK_PE
	CHK_EQ(c.count, m.count);
	CHK_EQ(conflict_validate(&c), 0);
	/* the run exercised both answers, the box, the tree and the cap */
	ck_assert_uint_gt(nconf, nchecks / 10);
	ck_assert_uint_gt(nchecks - nconf, nchecks / 10);
	ck_assert_uint_gt(c.st.box_clear, 0);
	ck_assert_uint_gt(c.st.precise, 0);
	ck_assert_uint_gt(c.st.cap_hits, 0);
	model_fini(&m);
	conflict_fini(&c);
}
END_TEST

/* 100k random non-overlapping intervals inserted in random order: every
 * check visits O(1) puts (a few grid cells). Counts, no timing. */
START_TEST(test_log_visits)
{
	enum { N = 100000, STRIDE = 100 };
	struct conflict c;
	ck_assert_int_eq(conflict_init(&c, 1, N), 0);
	uint32_t *perm = malloc(N * sizeof(*perm));
	uint64_t *start = malloc(N * sizeof(*start)), *len = malloc(N * sizeof(*len));
	uint64_t *seqof = malloc(N * sizeof(*seqof));
	ck_assert_ptr_nonnull(perm);
	ck_assert_ptr_nonnull(start);
	ck_assert_ptr_nonnull(len);
	ck_assert_ptr_nonnull(seqof);
	uint64_t rs = 42;
	for (uint32_t i = 0; i < N; i++) {
		perm[i] = i;
		start[i] = (uint64_t)i * STRIDE + rng_next(&rs) % 40;
		len[i] = 1 + rng_next(&rs) % 60; /* ends before the next slot */
	}
	for (uint32_t i = N - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(rng_next(&rs) % (i + 1)), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (uint32_t k = 0; k < N; k++) {
		uint32_t i = perm[k];
		seqof[i] = k + 1;
		CHK_EQ(conflict_add(&c, 0, start[i], len[i], k + 1), 0);
	}
	ck_assert_int_eq(conflict_validate(&c), 0);
	/* short puts: all in the grid's 64-byte cells, none in the tree */
	ck_assert_uint_eq(c.t[0].root, CF_NIL);
	ck_assert_uint_eq(c.t[0].lcount[0], N);
	uint64_t maxv = 0, v_total0 = c.st.visits;
	for (int q = 0; q < 20000; q++) {
		uint64_t qs = rng_next(&rs) % ((uint64_t)N * STRIDE), ql = 1 + rng_next(&rs) % 150;
		/* the answer: the newest of the (at most 3) slots the query touches */
		uint64_t want = 0;
		for (uint64_t s = qs / STRIDE; s <= (qs + ql - 1) / STRIDE && s < N; s++)
			if (start[s] < qs + ql && start[s] + len[s] > qs && seqof[s] > want)
				want = seqof[s];
		uint64_t v0 = c.st.visits;
		CHK_EQ(conflict_check(&c, 0, qs, ql), want);
		uint64_t v = c.st.visits - v0;
		if (v > maxv)
			maxv = v;
	}
	ck_assert_uint_lt(maxv, 64);
	ck_assert_uint_lt((c.st.visits - v_total0) / 20000, 40);
	ck_assert_uint_gt(c.st.conflicts, 1000);
	/* retiring the oldest half keeps the index correct */
	conflict_retire(&c, 0, N / 2);
	ck_assert_uint_eq(conflict_outstanding(&c, 0), N / 2);
	ck_assert_int_eq(conflict_validate(&c), 0);
	for (uint32_t i = 0; i < N; i += 97)
		CHK_EQ(conflict_check(&c, 0, start[i], len[i]), seqof[i] > N / 2 ? seqof[i] : 0);
	free(perm);
	free(start);
	free(len);
	free(seqof);
	conflict_fini(&c);
}
END_TEST

/* Completions in any order (several connections per peer): each put
 * leaves alone, wherever it is in its FIFO, and a check never reports a
 * completed put. A run node leaves with its last put. */
START_TEST(test_complete_out_of_order)
{
	struct conflict c;
	ck_assert_int_eq(conflict_init(&c, 2, 64), 0);
	ck_assert_int_eq(conflict_add(&c, 0, 0, 100, 1), 0);     /* [0,100) */
	ck_assert_int_eq(conflict_add(&c, 0, 50, 100, 2), 0);    /* [50,150) */
	ck_assert_int_eq(conflict_add(&c, 0, 1000, 10, 3), 0);   /* [1000,1010) */
	ck_assert_int_eq(conflict_add(&c, 1, 0, 10, 4), 0);
	/* the middle one completes first: the head still conflicts */
	ck_assert_int_eq(conflict_complete(&c, 0, 2), 1);
	ck_assert_int_eq(conflict_validate(&c), 0);
	CHK_EQ(conflict_check(&c, 0, 120, 10), 0);
	CHK_EQ(conflict_check(&c, 0, 60, 10), 1);
	ck_assert_uint_eq(conflict_outstanding(&c, 0), 2);
	/* the tail next: the box shrinks to the head */
	ck_assert_int_eq(conflict_complete(&c, 0, 3), 1);
	ck_assert_int_eq(conflict_validate(&c), 0);
	ck_assert_uint_eq(c.t[0].hi, 100);
	CHK_EQ(conflict_check(&c, 0, 1000, 10), 0);
	ck_assert_int_eq(conflict_complete(&c, 0, 3), -ENOENT); /* twice */
	ck_assert_int_eq(conflict_complete(&c, 0, 4), -ENOENT); /* another PE's */
	ck_assert_int_eq(conflict_complete(&c, 0, 1), 1);
	ck_assert_uint_eq(conflict_outstanding(&c, 0), 0);
	ck_assert_int_eq(conflict_validate(&c), 0);
	/* a run of three puts (sequences 5..7) leaves with its last one, in
	 * any order */
	ck_assert_int_eq(conflict_add_run(&c, 0, 0, 300, 5, 7, 3), 0);
	ck_assert_int_eq(conflict_add(&c, 0, 200, 10, 8), 0);
	ck_assert_int_eq(conflict_complete(&c, 0, 7), 0);
	ck_assert_int_eq(conflict_complete(&c, 0, 5), 0);
	CHK_EQ(conflict_check(&c, 0, 10, 1), 7);
	ck_assert_int_eq(conflict_complete(&c, 0, 6), 1);
	CHK_EQ(conflict_check(&c, 0, 10, 1), 0);
	CHK_EQ(conflict_check(&c, 0, 205, 1), 8);
	ck_assert_int_eq(conflict_validate(&c), 0);
	ck_assert_int_eq(conflict_add_run(&c, 0, 0, 1, 10, 9, 1), -EINVAL); /* first > seq */
	ck_assert_int_eq(conflict_add_run(&c, 0, 0, 1, 9, 9, 0), -EINVAL);  /* no put */
	ck_assert_int_eq(conflict_complete(&c, 1, 4), 1);
	ck_assert_int_eq(conflict_complete(&c, 0, 8), 1);
	ck_assert_uint_eq(c.count, 0);
	ck_assert_int_eq(conflict_validate(&c), 0);
	conflict_fini(&c);
}
END_TEST

/* Random adds and out-of-order completions against a brute-force list:
 * every check answers the highest overlapping outstanding sequence. */
START_TEST(test_complete_random_vs_model)
{
	enum { NPES = 3, CAP = 96, ROUNDS = 20000 };
	struct conflict c;
	ck_assert_int_eq(conflict_init(&c, NPES, CAP), 0);
	struct mput live[CAP];
	int livepe[CAP];
	uint32_t nlive = 0;
	uint64_t seq = 0, rs = 12345;
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t x = rng_next(&rs);
		int pe = (int)(x % NPES);
		if ((x >> 8) % 3 != 0 && nlive < CAP) {
			uint64_t start = rng_next(&rs) % 4096, len = rng_next(&rs) % 200;
			ck_assert_int_eq(conflict_add(&c, pe, start, len, ++seq), 0);
			live[nlive] = (struct mput){start, start + len, seq};
			livepe[nlive++] = pe;
		} else if (nlive) {
			uint32_t k = (uint32_t)(rng_next(&rs) % nlive);
			ck_assert_int_eq(conflict_complete(&c, livepe[k], live[k].seq), 1);
			live[k] = live[nlive - 1];
			livepe[k] = livepe[--nlive];
		}
		uint64_t qs = rng_next(&rs) % 4200, ql = 1 + rng_next(&rs) % 100;
		int qpe = (int)(rng_next(&rs) % NPES);
		uint64_t want = 0;
		for (uint32_t i = 0; i < nlive; i++)
			if (livepe[i] == qpe && live[i].start < qs + ql && live[i].end > qs &&
			    live[i].end > live[i].start && live[i].seq > want)
				want = live[i].seq;
		CHK_EQ(conflict_check(&c, qpe, qs, ql), want);
		if (r % 1000 == 0)
			ck_assert_int_eq(conflict_validate(&c), 0);
	}
	ck_assert_uint_eq(c.count, nlive);
	ck_assert_int_eq(conflict_validate(&c), 0);
	ck_assert_uint_gt(c.st.out_of_order, 0);
	conflict_fini(&c);
}
END_TEST


/* ---- differential runs against a plain O(n) reference ----
 * The reference keeps every outstanding node (a put or a run) in an array
 * and answers a check by looking at all of them. Every operation of the
 * API, in random mixes, with shapes that reach every path of the index:
 * all three grid levels and the tree, chains (several puts in one cell,
 * stacks of identical ones), cells colliding in a small hash table (slots
 * move back on deletion), ranges long enough to walk the FIFO, starts at
 * the end of the grid's span, runs, out-of-order completions, prefix
 * retirement, a stale box made exact again. A check answering "no
 * conflict" (or an older put) where one is outstanding fails here. */

struct rnode {
	uint64_t start, end, first, seq;
	uint32_t pending;
	int pe;
};

struct ref {
	struct rnode *v;
	uint32_t n, cap;
};

static uint64_t ref_check(const struct ref *r, int pe, uint64_t start, uint64_t len)
{
	if (len == 0)
		return 0;
	uint64_t end = len > UINT64_MAX - start ? UINT64_MAX : start + len, best = 0;
	for (uint32_t i = 0; i < r->n; i++) {
		const struct rnode *x = &r->v[i];
		if (x->pe == pe && x->end > x->start && x->start < end && x->end > start && x->seq > best)
			best = x->seq;
	}
	return best;
}

static void ref_del(struct ref *r, uint32_t i)
{
	memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof(*r->v)); /* keeps seq order */
	r->n--;
}

static uint32_t ref_count(const struct ref *r, int pe)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < r->n; i++)
		k += r->v[i].pe == pe;
	return k;
}

/* a put's place and length: clustered (chains, identical stacks) or
 * spread; every grid level, the tree, zero lengths, the grid's edge */
static void diff_shape(uint64_t *rs, uint64_t *start, uint64_t *len)
{
	static const uint64_t lens[] = {1, 8, 64, 65, 200, 1024, 1025, 4096, 16384, 16385, 70000};
	uint64_t r = rng_next(rs) % 100;
	*len = r < 4 ? 0 : r < 90 ? lens[rng_next(rs) % 11] : 1 + rng_next(rs) % 40000;
	uint64_t w = rng_next(rs) % 100;
	if (w < 30) /* a small window: chains and stacks */
		*start = (rng_next(rs) % 64) * 8;
	else if (w < 80)
		*start = rng_next(rs) % (1u << 20);
	else if (w < 90) /* across the end of the grid's span */
		*start = CF_GRID_SPAN - 40000 + rng_next(rs) % 80000;
	else
		*start = rng_next(rs) % (1ull << 50);
	if (*len > UINT64_MAX - *start)
		*len = 0;
}

static uint64_t diff_qlen(uint64_t *rs)
{
	uint64_t r = rng_next(rs) % 100;
	return r < 70 ? 1 + rng_next(rs) % 128 : r < 90 ? 1 + rng_next(rs) % 20000
	       : r < 98 ? 1 + rng_next(rs) % (1u << 22) : UINT64_MAX; /* clamped */
}

static void diff_run(uint32_t cap, int npes, uint64_t seed, int steps, int fills)
{
	struct conflict c;
	ck_assert_int_eq(conflict_init(&c, npes, cap), 0);
	struct ref r = {calloc(cap, sizeof(struct rnode)), 0, cap};
	ck_assert_ptr_nonnull(r.v);
	uint64_t rs = seed, seq = 0, nconf = 0, nchecks = 0;
	uint32_t seen_level[CF_GRID_LEVELS] = {0}, seen_tree = 0, max_cells = 0;
	for (int step = 0; step < steps; step++) {
		for (int p = 0; p < npes; p++) {
			for (int l = 0; l < CF_GRID_LEVELS; l++)
				seen_level[l] |= c.t[p].lcount[l] > 1; /* a chain or two cells */
			seen_tree |= c.t[p].root != CF_NIL;
		}
		if (c.ncells > max_cells)
			max_cells = c.ncells;
		uint64_t op = rng_next(&rs) % 100;
		int pe = (int)(rng_next(&rs) % (uint64_t)npes);
		if (op < 45) { /* add a put or a run of 1..4 puts */
			uint64_t start, len;
			diff_shape(&rs, &start, &len);
			uint32_t k = rng_next(&rs) % 4 == 0 ? 1 + (uint32_t)(rng_next(&rs) % 4) : 1;
			int rc = conflict_add_run(&c, pe, start, len, seq + 1, seq + k, k);
			if (r.n == cap) {
				CHK_EQ(rc, -ENOSPC);
			} else {
				CHK_EQ(rc, 0);
				r.v[r.n++] = (struct rnode){start, start + len, seq + 1, seq + k, k, pe};
				seq += k;
			}
		} else if (op < 70) { /* one put completes, any order */
			if (r.n) {
				uint32_t i = (uint32_t)(rng_next(&rs) % r.n);
				struct rnode *x = &r.v[i];
				/* a member of the run not completed yet: the run's
				 * puts complete in order of their sequence here */
				uint64_t s = x->seq - (x->pending - 1);
				int want = x->pending == 1;
				CHK_EQ(conflict_complete(&c, x->pe, s), want);
				if (want)
					ref_del(&r, i);
				else
					x->pending--;
			}
		} else if (op < 74) { /* prefix of one target's FIFO */
			uint64_t lo = conflict_oldest(&c, pe);
			if (lo) {
				uint64_t upto = lo + rng_next(&rs) % 64;
				conflict_retire(&c, pe, upto);
				for (uint32_t i = 0; i < r.n;) {
					if (r.v[i].pe == pe && r.v[i].seq <= upto)
						ref_del(&r, i);
					else
						i++;
				}
			}
		} else if (op == 74 && rng_next(&rs) % 4 == 0) {
			conflict_retire_pe(&c, pe);
			for (uint32_t i = 0; i < r.n;) {
				if (r.v[i].pe == pe)
					ref_del(&r, i);
				else
					i++;
			}
		} else if (op == 75 && rng_next(&rs) % 50 == 0) {
			conflict_retire_all(&c);
			r.n = 0;
		} else { /* check: near an outstanding put (hits) or anywhere */
			uint64_t qs, ql = diff_qlen(&rs);
			if (r.n && rng_next(&rs) % 2) {
				const struct rnode *x = &r.v[rng_next(&rs) % r.n];
				pe = x->pe;
				qs = x->start + rng_next(&rs) % (x->end - x->start + 64) - 32;
			} else {
				uint64_t l;
				diff_shape(&rs, &qs, &l);
			}
			uint64_t want = ref_check(&r, pe, qs, ql);
			CHK_EQ(conflict_check(&c, pe, qs, ql), want);
			nchecks++;
			nconf += want != 0;
		}
		if (step % 64 == 0) {
			int p = (int)(rng_next(&rs) % (uint64_t)npes);
			CHK_EQ(conflict_outstanding(&c, p), ref_count(&r, p));
		}
		if (step % 512 == 0)
			CHK_EQ(conflict_validate(&c), 0);
	}
	CHK_EQ(c.count, r.n);
	CHK_EQ(conflict_validate(&c), 0);
	/* the run exercised both answers and every path */
	ck_assert_uint_gt(nconf, nchecks / 8);
	ck_assert_uint_gt(nchecks - nconf, nchecks / 8);
	ck_assert_uint_gt(c.st.box_clear, 0);
	ck_assert_uint_gt(c.st.scans, 0);
	ck_assert_uint_gt(c.st.box_rescans, 0);
	ck_assert_uint_gt(c.st.out_of_order, 0);
	for (int l = 0; l < CF_GRID_LEVELS; l++)
		ck_assert_uint_eq(seen_level[l], 1);
	ck_assert_uint_eq(seen_tree, 1);
	if (fills) {
		ck_assert_uint_gt(c.st.cap_hits, 0);
		ck_assert_uint_gt(max_cells, (c.cell_mask + 1) / 4); /* collisions likely */
	}
	free(r.v);
	conflict_fini(&c);
}

START_TEST(test_diff_small_table)
{
	/* 48 nodes, 128 cell slots: collisions and back-shifted slots */
	diff_run(48, 3, 0xd1ff01, 60000, 1);
}
END_TEST

START_TEST(test_diff_many)
{
	diff_run(2000, 5, 0xd1ff02, 120000, 0);
}
END_TEST

START_TEST(test_diff_seeds)
{
	for (uint64_t s = 1; s <= 8; s++)
		diff_run(200 + 100 * (uint32_t)s, 1 + (int)s % 4, 0xd1ff10 + s, 20000, 0);
}
END_TEST

/* 10k outstanding short puts (the benchmark's shapes: random places and a
 * monotonic walk) against the reference: every check inside the box. */
START_TEST(test_diff_10k_streams)
{
	enum { N = 10000 };
	for (int random = 0; random <= 1; random++) {
		struct conflict c;
		ck_assert_int_eq(conflict_init(&c, 2, N + 1024), 0);
		/* the reference: the outstanding puts are v[head, tail) */
		enum { STEPS = 2 * N + 2048 };
		uint64_t *vs = malloc(STEPS * sizeof(*vs));
		ck_assert_ptr_nonnull(vs);
		uint32_t head = 0, tail = 0;
		uint64_t rs = 77 + (uint64_t)random, nconf = 0, next = 0;
		for (uint32_t step = 0; step < STEPS; step++) {
			uint64_t off = random ? (rng_next(&rs) % (16 * N)) * 8 : 4096 + next++ * 64;
			ck_assert_int_eq(conflict_add(&c, 1, off, 64, tail + 1), 0); /* seq = index + 1 */
			vs[tail++] = off;
			if (tail - head > N) { /* in-order completion of the oldest */
				CHK_EQ(conflict_complete(&c, 1, head + 1), 1);
				head++;
			}
			if (step < N)
				continue;
			uint64_t lo = random ? 0 : vs[head], span = random ? 16 * N * 8 : (tail - head) * 64;
			uint64_t qs = lo + rng_next(&rs) % span, ql = 1 + rng_next(&rs) % 64, want = 0;
			for (uint32_t i = tail; i-- > head;)
				if (vs[i] < qs + ql && vs[i] + 64 > qs) {
					want = i + 1;
					break;
				}
			CHK_EQ(conflict_check(&c, 1, qs, ql), want);
			nconf += want != 0;
		}
		free(vs);
		CHK_EQ(conflict_validate(&c), 0);
		ck_assert_uint_gt(nconf, (uint64_t)N / 10);
		conflict_fini(&c);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("conflict");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_monotonic_box);
	tcase_add_test(tc, test_adjacent_and_zero_length);
	tcase_add_test(tc, test_identical_and_nested);
	tcase_add_test(tc, test_retire_and_box);
	tcase_add_test(tc, test_cap_and_args);
	tcase_add_test(tc, test_random_vs_model);
	tcase_add_test(tc, test_log_visits);
	tcase_add_test(tc, test_complete_out_of_order);
	tcase_add_test(tc, test_complete_random_vs_model);
	tcase_add_test(tc, test_diff_small_table);
	tcase_add_test(tc, test_diff_many);
	tcase_add_test(tc, test_diff_seeds);
	tcase_add_test(tc, test_diff_10k_streams);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
