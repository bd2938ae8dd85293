/* client/staging.c: circular-log allocator of the staging arena. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "staging.h"
#include "unit_util.h"

static uint64_t round64(uint64_t n)
{
	return (n + STAGING_ALIGN - 1) & ~(uint64_t)(STAGING_ALIGN - 1);
}

static struct staging st;

static void setup(uint64_t size, uint32_t nrec)
{
	ck_assert_int_eq(staging_init(&st, size, nrec), 0);
}

/* Allocates, checks the basic invariants, returns the id. */
static int64_t alloc_ok(uint64_t len, uint64_t expect_off)
{
	uint64_t off = ~0ull;
	int64_t id = staging_alloc(&st, len, &off);
	ck_assert_int_ge(id, 0);
	ck_assert_uint_eq(off, expect_off);
	ck_assert_uint_eq(off % STAGING_ALIGN, 0);
	ck_assert_uint_le(off + round64(len ? len : 1), st.size);
	return id;
}

START_TEST(test_init)
{
	struct staging s;
	ck_assert_int_eq(staging_init(&s, 0, 16), -EINVAL);
	ck_assert_int_eq(staging_init(&s, 127, 16), -EINVAL);
	ck_assert_int_eq(staging_init(&s, 4096, 0), -EINVAL);
	ck_assert_int_eq(staging_init(&s, 4096, 3), -EINVAL);
	ck_assert_int_eq(staging_init(&s, 4096, 48), -EINVAL);
	ck_assert_int_eq(staging_init(&s, 1000, 16), 0);
	ck_assert_uint_eq(s.size, 960);
	ck_assert_uint_eq(staging_in_use(&s), 0);
	ck_assert_uint_eq(staging_max_alloc(&s), 480);
	staging_fini(&s);
}
END_TEST

START_TEST(test_in_order)
{
	setup(4096, 16);
	int64_t a = alloc_ok(100, 0);
	int64_t b = alloc_ok(1, 128);
	int64_t c = alloc_ok(0, 192); /* zero length still takes a slot of 64 */
	ck_assert_int_eq(a, 0);
	ck_assert_int_eq(b, 1);
	ck_assert_int_eq(c, 2);
	ck_assert_uint_eq(staging_in_use(&st), 256);
	staging_release(&st, a);
	ck_assert_uint_eq(staging_in_use(&st), 128);
	staging_release(&st, b);
	ck_assert_uint_eq(staging_in_use(&st), 64);
	staging_release(&st, c);
	ck_assert_uint_eq(staging_in_use(&st), 0);
	alloc_ok(64, 256); /* the log continues where it was */
	staging_fini(&st);
}
END_TEST

START_TEST(test_out_of_order)
{
	setup(4096, 16);
	int64_t a = alloc_ok(64, 0);
	int64_t b = alloc_ok(64, 64);
	int64_t c = alloc_ok(64, 128);
	int64_t d = alloc_ok(64, 192);
	staging_release(&st, c);
	ck_assert_uint_eq(staging_in_use(&st), 256); /* a still holds the tail */
	staging_release(&st, b);
	ck_assert_uint_eq(staging_in_use(&st), 256);
	staging_release(&st, a); /* reclaims a, b and c at once */
	ck_assert_uint_eq(staging_in_use(&st), 64);
	staging_release(&st, d);
	ck_assert_uint_eq(staging_in_use(&st), 0);
	staging_fini(&st);
}
END_TEST

START_TEST(test_wrap_no_split)
{
	setup(1024, 16);
	int64_t a = alloc_ok(448, 0);
	int64_t b = alloc_ok(448, 448);
	staging_release(&st, a);
	/* 128 bytes left before the end: 256 must not be split across it. */
	int64_t c = alloc_ok(256, 0);
	ck_assert_uint_eq(staging_in_use(&st), 1024 + 256 - 448); /* the skipped end counts */
	int64_t d = alloc_ok(64, 256);
	int64_t e = alloc_ok(128, 320); /* exactly up to b */
	uint64_t off;
	ck_assert_int_eq(staging_alloc(&st, 64, &off), -EAGAIN);
	staging_release(&st, b);
	alloc_ok(64, 448);
	staging_release(&st, c);
	staging_release(&st, d);
	staging_release(&st, e);
	ck_assert_uint_eq(staging_in_use(&st), 64);
	staging_fini(&st);

	/* An allocation that ends exactly at the arena's end is not moved. */
	setup(1024, 16);
	a = alloc_ok(512, 0);
	staging_release(&st, a);
	b = alloc_ok(512, 512);
	c = alloc_ok(64, 0);
	staging_release(&st, b);
	staging_release(&st, c);
	ck_assert_uint_eq(staging_in_use(&st), 0);
	staging_fini(&st);
}
END_TEST

START_TEST(test_full_then_release)
{
	setup(1024, 16);
	uint64_t off = 7;
	int64_t a = alloc_ok(512, 0);
	int64_t b = alloc_ok(512, 512);
	ck_assert_int_eq(staging_alloc(&st, 1, &off), -EAGAIN);
	ck_assert_int_eq(staging_alloc(&st, 512, &off), -EAGAIN);
	ck_assert_uint_eq(off, 7); /* untouched on failure */
	ck_assert_uint_eq(staging_in_use(&st), 1024);
	staging_release(&st, b); /* not the oldest: still full */
	ck_assert_int_eq(staging_alloc(&st, 1, &off), -EAGAIN);
	staging_release(&st, a);
	ck_assert_uint_eq(staging_in_use(&st), 0);
	alloc_ok(512, 0);
	alloc_ok(512, 512);
	staging_fini(&st);
}
END_TEST

START_TEST(test_too_big)
{
	setup(1024, 16);
	uint64_t off = 7;
	ck_assert_int_eq(staging_alloc(&st, 513, &off), -ENOMEM);
	ck_assert_int_eq(staging_alloc(&st, 1024, &off), -ENOMEM);
	ck_assert_int_eq(staging_alloc(&st, 1ull << 63, &off), -ENOMEM);
	ck_assert_uint_eq(off, 7);
	ck_assert_uint_eq(staging_in_use(&st), 0);
	alloc_ok(512, 0);
	staging_fini(&st);
}
END_TEST

START_TEST(test_too_big_overflow)
{
	/* Lengths whose rounding up to 64 overflows must still be -ENOMEM,
	 * not a 0-byte (or 64-byte) allocation. */
	setup(1024, 16);
	uint64_t off = 7;
	ck_assert_int_eq(staging_alloc(&st, UINT64_MAX, &off), -ENOMEM);
	ck_assert_int_eq(staging_alloc(&st, UINT64_MAX - 62, &off), -ENOMEM);
	ck_assert_uint_eq(staging_in_use(&st), 0);
	staging_fini(&st);
}
END_TEST

START_TEST(test_records_full)
{
	setup(1 << 16, 4);
	uint64_t off;
	int64_t id[4];
	for (int i = 0; i < 4; i++)
		id[i] = alloc_ok(64, 64u * i);
	ck_assert_int_eq(staging_alloc(&st, 64, &off), -EAGAIN); /* bytes left, no records */
	staging_release(&st, id[2]);
	ck_assert_int_eq(staging_alloc(&st, 64, &off), -EAGAIN); /* record 0 still held */
	staging_release(&st, id[0]);
	int64_t e = alloc_ok(64, 256); /* reuses record slot 0 */
	ck_assert_int_eq(e, 4);
	ck_assert_int_eq(staging_alloc(&st, 64, &off), -EAGAIN);
	staging_release(&st, id[1]); /* reclaims 1 and 2 */
	int64_t f = alloc_ok(64, 320);
	int64_t g = alloc_ok(64, 384);
	ck_assert_int_eq(staging_alloc(&st, 64, &off), -EAGAIN);
	staging_release(&st, id[3]);
	staging_release(&st, e);
	staging_release(&st, f);
	staging_release(&st, g);
	ck_assert_uint_eq(staging_in_use(&st), 0);
	staging_fini(&st);
}
END_TEST

/* setup(4096, 16) and three records of 64 bytes at 0, 64 and 128, into id */
static void three_records(int64_t id[3])
{
	setup(4096, 16);
	for (int i = 0; i < 3; i++)
		id[i] = alloc_ok(64, 64u * (uint64_t)i);
}

/* Three records bound to the SQ indices bind[]; each step moves the SQ head
 * (staging_sq_done) and checks the bytes still held. */
static const struct sq_case {
	const char *what;
	uint32_t bind[3];
	unsigned nstep;
	struct {
		uint32_t head;
		uint64_t in_use;
	} step[5];
} sq_cases[] = {
	{"plain", {10, 11, 12}, 5, {
		{9, 192},
		{10, 192}, /* head 10: SQEs 0..9 consumed, not 10 */
		{11, 128},
		{11, 128}, /* idempotent */
		{13, 0},
	}},
	{"wrap", {0xFFFFFFFEu, 0xFFFFFFFFu, 0}, 5, {
		{0xFFFFFFF0u, 192}, /* an older head: nothing */
		{0xFFFFFFFEu, 192},
		{0xFFFFFFFFu, 128},
		{0, 64}, /* wrapped: passes 0xFFFFFFFF */
		{1, 0},
	}},
};

START_TEST(test_sq_done)
{
	const struct sq_case *k = &sq_cases[_i];
	int64_t id[3];
	three_records(id);
	for (int i = 0; i < 3; i++)
		staging_bind_sq(&st, id[i], k->bind[i]);
	for (unsigned i = 0; i < k->nstep; i++) {
		staging_sq_done(&st, k->step[i].head);
		ck_assert_msg(staging_in_use(&st) == k->step[i].in_use,
			      "%s: after sq_done(%#x) in_use %llu, want %llu", k->what, k->step[i].head,
			      (unsigned long long)staging_in_use(&st), (unsigned long long)k->step[i].in_use);
	}
	staging_fini(&st);
}
END_TEST

START_TEST(test_sq_done_and_release_mixed)
{
	/* put (bound), get (released by the client), put (bound) */
	int64_t id[3];
	three_records(id);
	int64_t p1 = id[0], g = id[1], p2 = id[2];
	staging_bind_sq(&st, p1, 5);
	staging_bind_sq(&st, p2, 7);
	staging_sq_done(&st, 6);
	ck_assert_uint_eq(staging_in_use(&st), 128); /* p1 gone, g holds p2 */
	staging_release(&st, g);
	ck_assert_uint_eq(staging_in_use(&st), 64); /* p2 not passed yet */
	staging_sq_done(&st, 8);
	ck_assert_uint_eq(staging_in_use(&st), 0);
	staging_fini(&st);
}
END_TEST

START_TEST(test_sq_done_passed_behind_get)
{
	/* staging.h: staging_sq_done() "release[s] every bound record it
	 * passed". p2 is passed while the get g is still held; once g is
	 * released nothing holds p2 any more, so the arena must be empty
	 * without waiting for another staging_sq_done() call. */
	int64_t id[3];
	three_records(id);
	int64_t p1 = id[0], g = id[1], p2 = id[2];
	staging_bind_sq(&st, p1, 5);
	staging_bind_sq(&st, p2, 6);
	staging_sq_done(&st, 7); /* daemon consumed both puts */
	ck_assert_uint_eq(staging_in_use(&st), 128);
	staging_release(&st, g);
	ck_assert_msg(staging_in_use(&st) == 0,
		      "put payload passed by sq_done(7) still held after the get before it was "
		      "released: in_use %llu",
		      (unsigned long long)staging_in_use(&st));
	staging_fini(&st);
}
END_TEST

START_TEST(test_sq_done_passed_behind_get_full)
{
	/* The client's pattern (hoist_get_nbi, then puts, then quiet): a held
	 * get record, then put payloads that fill the arena; the daemon
	 * consumes every put (sq_done(head) while the get is still held), then
	 * quiet releases the get. Nothing is live any more and the SQ head will
	 * not move again, so an allocation must succeed now. */
	setup(1024, 16);
	uint64_t off;
	int64_t g = alloc_ok(64, 0);
	int64_t p[3];
	p[0] = alloc_ok(448, 64);
	p[1] = alloc_ok(448, 512);
	for (int i = 0; i < 2; i++)
		staging_bind_sq(&st, p[i], 100u + (uint32_t)i);
	ck_assert_int_eq(staging_alloc(&st, 512, &off), -EAGAIN); /* full */
	staging_sq_done(&st, 102); /* both puts consumed; g still held */
	staging_release(&st, g);   /* quiet copied the get out */
	int64_t id = staging_alloc(&st, 512, &off);
	ck_assert_msg(id >= 0, "arena with nothing live refuses 512 bytes: %lld (in_use %llu)",
		      (long long)id, (unsigned long long)staging_in_use(&st));
	staging_fini(&st);
}
END_TEST

/* ---- random stress against a model ----------------------------------- */

struct mrec {
	int64_t id;
	uint64_t off, len;
	int bound;      /* put payload bound to sq_idx */
	uint32_t sq_idx;
};

START_TEST(test_stress_model)
{
	const uint64_t size = 1 << 16;
	setup(size, 64);
	enum { MAXLIVE = 64 };
	struct mrec live[MAXLIVE];
	size_t n = 0;
	uint32_t sq_tail = 0xFFFFF000u, sq_head = 0xFFFFF000u;
	uint64_t seed = 0xfeedbeef;
	uint64_t ok = 0, again = 0, nomem = 0, wraps = 0;
	int sq_wrapped = 0;
	for (int step = 0; step < 200000; step++) {
		uint64_t r = rng_next(&seed);
		unsigned what = (unsigned)(r % 10);
		if (what < 5) { /* allocate */
			uint64_t len;
			switch ((r >> 8) % 8) {
			case 0: len = (r >> 16) % (size / 2 + 2000); break; /* sometimes too big */
			case 1: len = (r >> 16) % 8192; break;
			default: len = (r >> 16) % 600; break;
			}
			uint64_t rl = round64(len ? len : 1);
			uint64_t off = ~0ull;
			int64_t id = staging_alloc(&st, len, &off);
			if (rl > size / 2) {
				CHK_EQ(id, -ENOMEM);
				nomem++;
				continue;
			}
			if (id == -EAGAIN) {
				again++;
				/* What a client does: catch up with the daemon, retry. */
				staging_sq_done(&st, sq_head);
				if (n != 0)
					continue;
				/* Nothing live: the retry must succeed. */
				id = staging_alloc(&st, len, &off);
			}
			CHK(id >= 0);
			CHK(n < MAXLIVE); /* 64 records: the model can never exceed it */
			CHK_EQ(off % STAGING_ALIGN, 0);
			CHK(off + rl <= size);
			for (size_t i = 0; i < n; i++)
				CHK(live[i].off + live[i].len <= off || off + rl <= live[i].off);
			if (n && off < live[n - 1].off)
				wraps++;
			struct mrec *m = &live[n++];
			m->id = id;
			m->off = off;
			m->len = rl;
			m->bound = (r >> 40) & 1;
			if (m->bound) {
				m->sq_idx = sq_tail++;
				staging_bind_sq(&st, id, m->sq_idx);
			}
			ok++;
		} else if (what < 8) { /* client releases a random get */
			size_t gets = 0;
			for (size_t i = 0; i < n; i++)
				gets += !live[i].bound;
			if (!gets)
				continue;
			size_t k = (size_t)((r >> 8) % gets);
			for (size_t i = 0; i < n; i++) {
				if (live[i].bound)
					continue;
				if (k-- == 0) {
					staging_release(&st, live[i].id);
					live[i] = live[--n];
					break;
				}
			}
		} else { /* daemon consumes some SQEs */
			uint32_t pending = sq_tail - sq_head;
			if (pending)
				sq_head += 1 + (uint32_t)((r >> 8) % pending);
			if (sq_head < 0x1000)
				sq_wrapped = 1;
			staging_sq_done(&st, sq_head);
			for (size_t i = 0; i < n;) {
				if (live[i].bound && (int32_t)(sq_head - live[i].sq_idx) > 0)
					live[i] = live[--n];
				else
					i++;
			}
		}
		uint64_t held = 0;
		for (size_t i = 0; i < n; i++)
			held += live[i].len;
		CHK(staging_in_use(&st) <= size);
		CHK(staging_in_use(&st) >= held);
	}
	ck_assert_uint_gt(ok, 10000);
	ck_assert_uint_gt(again, 100);
	ck_assert_uint_gt(nomem, 100);
	ck_assert_uint_gt(wraps, 100);
	ck_assert(sq_wrapped);
	/* Drain: release everything, the arena is empty again. */
	for (size_t i = 0; i < n; i++)
		if (!live[i].bound)
			staging_release(&st, live[i].id);
	staging_sq_done(&st, sq_tail);
	ck_assert_uint_eq(staging_in_use(&st), 0);
	staging_fini(&st);
}
END_TEST

static Suite *staging_suite(void)
{
	Suite *s = suite_create("staging");
	TCase *tc = tcase_create("basic");
	tcase_add_test(tc, test_init);
	tcase_add_test(tc, test_in_order);
	tcase_add_test(tc, test_out_of_order);
	tcase_add_test(tc, test_wrap_no_split);
	tcase_add_test(tc, test_full_then_release);
	tcase_add_test(tc, test_too_big);
	tcase_add_test(tc, test_too_big_overflow);
	tcase_add_test(tc, test_records_full);
	suite_add_tcase(s, tc);
	tc = tcase_create("sq");
	tcase_add_loop_test(tc, test_sq_done, 0, (int)(sizeof(sq_cases) / sizeof(sq_cases[0])));
	tcase_add_test(tc, test_sq_done_and_release_mixed);
	tcase_add_test(tc, test_sq_done_passed_behind_get);
	tcase_add_test(tc, test_sq_done_passed_behind_get_full);
	suite_add_tcase(s, tc);
	tc = tcase_create("stress");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_stress_model);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(staging_suite());
}
