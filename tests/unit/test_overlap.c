/* daemon/stages/overlap.c: the conflict stage decides the order. On a transport
 * that may reorder one client's operations to a node (several connections
 * per peer), an access overlapping an unfinished put of the same client
 * waits until that put completed, whatever order completions come in; on
 * an in-order transport it goes right behind the put. A fence on an
 * unordered transport waits for everything earlier (progress.c). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "overlap.h"
#include "unit_util.h"

#define NPES 4
#define CAP 64

struct fixture {
	struct job j;
	struct client c;
};

static void setup(struct fixture *f, int ordered)
{
	memset(f, 0, sizeof(*f));
	f->j.size = NPES;
	f->c.job = &f->j;
	struct overlap *o = calloc(1, sizeof(*o));
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(conflict_init(&o->conf, NPES, CAP), 0);
	ck_assert_int_eq(phase_init(&o->ph, 4, 16), 0);
	o->box_wait = -1;
	o->conf_cap = CAP;
	o->ordered = ordered;
	if (!ordered)
		ck_assert_int_eq(conflict_init(&o->gconf, NPES, CAP), 0);
	f->c.ov = o;
}

static void teardown(struct fixture *f)
{
	overlap_destroy(&f->c);
}

/* the next descriptor at the ring head */
static void next_desc(struct fixture *f)
{
	f->c.sq_head++;
}

/* a put of [off, off+len) to pe issued (the transport took it) */
static uint64_t put(struct fixture *f, int32_t pe, uint64_t off, uint64_t len)
{
	struct hoist_sqe sqe = {.opcode = HOIST_OP_PUT, .pe = pe, .remote_off = off, .len = len};
	uint64_t seq = 0;
	next_desc(f);
	ck_assert_int_eq(overlap_put_begin(&f->c, &sqe, &seq), 0);
	overlap_put_issued(&f->c, &sqe, seq);
	f->c.outstanding++;
	return seq;
}

static void done(struct fixture *f, int32_t pe, uint64_t seq)
{
	overlap_put_done(&f->c, pe, seq);
	f->c.outstanding--;
}

static uint64_t stat(const struct fixture *f, const uint64_t *field)
{
	(void)f;
	return __atomic_load_n(field, __ATOMIC_RELAXED);
}

START_TEST(test_unordered_waits)
{
	struct fixture f;
	setup(&f, 0);
	uint64_t s1 = put(&f, 1, 0, 100);
	/* a get (or put) overlapping it waits; asking again keeps waiting and
	 * is counted once */
	next_desc(&f);
	ck_assert_int_eq(overlap_access(&f.c, 1, 50, 10, 0), 1);
	ck_assert_int_eq(overlap_access(&f.c, 1, 50, 10, 0), 1);
	ck_assert_uint_eq(stat(&f, &f.c.st.conflict_waits), 1);
	ck_assert_uint_eq(stat(&f, &f.c.st.conflicts), 1);
	struct hoist_sqe w = {.opcode = HOIST_OP_PUT, .pe = 1, .remote_off = 99, .len = 2};
	uint64_t seq;
	ck_assert_int_eq(overlap_put_begin(&f.c, &w, &seq), 1); /* write after write */
	/* other ranges and other PEs go on */
	next_desc(&f);
	ck_assert_int_eq(overlap_access(&f.c, 1, 100, 10, 0), 0);
	ck_assert_int_eq(overlap_access(&f.c, 2, 0, 100, 0), 0);
	/* the put completed: the access goes */
	done(&f, 1, s1);
	next_desc(&f);
	ck_assert_int_eq(overlap_access(&f.c, 1, 50, 10, 0), 0);
	ck_assert_uint_eq(f.c.ov->nputs, 0);
	teardown(&f);
}
END_TEST

/* Completions out of order, for puts in the tree and for a run of
 * contiguous puts (open, and flushed into the tree by a put elsewhere):
 * an overlapping access waits until the last overlapping put completed. */
START_TEST(test_out_of_order_completion)
{
	struct fixture f;
	setup(&f, 0);
	/* a run: three puts walking through [0, 300) */
	uint64_t r1 = put(&f, 1, 0, 100), r2 = put(&f, 1, 100, 100), r3 = put(&f, 1, 200, 100);
	done(&f, 1, r3);
	done(&f, 1, r1);
	next_desc(&f);
	ck_assert_int_eq(overlap_access(&f.c, 1, 0, 10, 0), 1); /* r2 still in flight */
	done(&f, 1, r2);
	next_desc(&f);
	ck_assert_int_eq(overlap_access(&f.c, 1, 0, 10, 0), 0);
	ck_assert_uint_eq(f.c.ov->nputs, 0);
	/* a run flushed into the tree with one of its puts complete */
	uint64_t a1 = put(&f, 1, 1000, 10), a2 = put(&f, 1, 1010, 10);
	done(&f, 1, a1);
	uint64_t b = put(&f, 1, 5000, 10); /* breaks the run */
	uint64_t c1 = put(&f, 2, 0, 10);
	done(&f, 1, b);
	next_desc(&f);
	ck_assert_int_eq(overlap_access(&f.c, 1, 1000, 1, 0), 1); /* a2 covers the run */
	ck_assert_int_eq(overlap_access(&f.c, 1, 5000, 10, 0), 0);
	done(&f, 1, a2);
	next_desc(&f);
	ck_assert_int_eq(overlap_access(&f.c, 1, 1000, 20, 0), 0);
	ck_assert_int_eq(overlap_access(&f.c, 2, 5, 1, 0), 1);
	done(&f, 2, c1);
	next_desc(&f);
	ck_assert_int_eq(overlap_access(&f.c, 2, 5, 1, 0), 0);
	ck_assert_uint_eq(f.c.ov->nputs, 0);
	ck_assert_int_eq(conflict_validate(&f.c.ov->conf), 0);
	ck_assert_uint_eq(f.c.ov->conf.count, 0);
	teardown(&f);
}
END_TEST

/* A put overlapping an unfinished get waits until the get read its range
 * (unordered transport); gets and other ranges go on. */
START_TEST(test_put_after_get)
{
	struct fixture f;
	setup(&f, 0);
	next_desc(&f);
	uint64_t g1 = overlap_get_seq(&f.c), g2;
	ck_assert_uint_gt(g1, 0);
	overlap_get_issued(&f.c, 1, 0, 100, g1);
	f.c.outstanding++;
	next_desc(&f);
	g2 = overlap_get_seq(&f.c);
	overlap_get_issued(&f.c, 1, 50, 100, g2);
	f.c.outstanding++;
	next_desc(&f);
	ck_assert_int_eq(overlap_access(&f.c, 1, 10, 10, 0), 0); /* read after read */
	ck_assert_int_eq(overlap_access(&f.c, 1, 10, 10, 1), 1); /* write after read */
	struct hoist_sqe w = {.opcode = HOIST_OP_PUT, .pe = 1, .remote_off = 120, .len = 1};
	uint64_t seq;
	next_desc(&f);
	ck_assert_int_eq(overlap_put_begin(&f.c, &w, &seq), 1);
	/* completions out of order: the second get first */
	overlap_get_done(&f.c, 1, g2);
	f.c.outstanding--;
	ck_assert_int_eq(overlap_put_begin(&f.c, &w, &seq), 0);
	next_desc(&f);
	ck_assert_int_eq(overlap_access(&f.c, 1, 10, 10, 1), 1);
	overlap_get_done(&f.c, 1, g1);
	f.c.outstanding--;
	ck_assert_int_eq(overlap_access(&f.c, 1, 10, 10, 1), 0);
	ck_assert_uint_eq(f.c.ov->gconf.count, 0);
	teardown(&f);
}
END_TEST

/* An in-order transport: the conflict is found and counted, and the access
 * goes right behind the put (today's fast path). */
START_TEST(test_ordered_goes)
{
	struct fixture f;
	setup(&f, 1);
	put(&f, 1, 0, 100);
	next_desc(&f);
	ck_assert_int_eq(overlap_access(&f.c, 1, 50, 10, 0), 0);
	ck_assert_uint_eq(stat(&f, &f.c.st.conflicts), 1);
	ck_assert_uint_eq(stat(&f, &f.c.st.conflict_waits), 0);
	ck_assert_uint_eq(overlap_get_seq(&f.c), 0); /* gets are not tracked */
	teardown(&f);
}
END_TEST

/* Lists that still hold puts while nothing is in flight (a completion the
 * lists never heard of) do not make an access wait forever. */
START_TEST(test_quiesced)
{
	struct fixture f;
	setup(&f, 0);
	put(&f, 1, 0, 100);
	f.c.outstanding = 0;
	next_desc(&f);
	ck_assert_int_eq(overlap_access(&f.c, 1, 0, 100, 0), 0);
	ck_assert_uint_eq(f.c.ov->nputs, 0);
	ck_assert_uint_eq(f.c.ov->conf.count, 0);
	teardown(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("overlap");
	TCase *tc = tcase_create("order");
	tcase_add_test(tc, test_unordered_waits);
	tcase_add_test(tc, test_out_of_order_completion);
	tcase_add_test(tc, test_put_after_get);
	tcase_add_test(tc, test_ordered_goes);
	tcase_add_test(tc, test_quiesced);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
