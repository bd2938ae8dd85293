/* daemon/stages/overlap.c, phase prefetch: which prefetches leave when.
 * A fake transport records what the stage issues. A phase's prefetches
 * leave in the order of its last run's gets through a window of
 * prefetch_chunk per node, filled again once half of it landed (not a
 * chunk at a time); a get whose prefetch has not left yet issues it at once
 * and waits for that one alone; a window that stalled with nothing in
 * flight is retried by the client's next get; a run prepared at a notify
 * whose barrier never completed keeps the phase's history; misses are
 * counted by reason; a put refused because its PE is gone drops that PE's
 * landed prefetches (the client's fast table too). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "overlap.h"
#include "rma.h"
#include "unit_util.h"

#define NPES 4  /* PEs 0, 1 on node 0 (this daemon), 2, 3 on node 1 */
#define SLOTS 64
#define ARENA (1u << 20)
#define CHUNK 8
#define G 40    /* gets per run */
#define LEN 8
#define SRC 2   /* the PE the gets read */
#define ID 77   /* the phase */

static struct {
	uint32_t n;
	uint32_t slot[1024];
	uint64_t off[1024];
	uint32_t stall; /* answer XP_STALL this many times */
} xp;

static enum xp_result fake_rma(struct daemon *d, const struct xp_req *rq, int *err)
{
	(void)d;
	(void)err;
	if (xp.stall) {
		xp.stall--;
		return XP_STALL;
	}
	ck_assert(rq->ck.op.prefetch);
	ck_assert_uint_lt(xp.n, 1024);
	xp.slot[xp.n] = rq->ck.op.slot;
	xp.off[xp.n] = rq->off;
	xp.n++;
	return XP_STARTED;
}

static const struct transport_ops fake_xport = {.rma = fake_rma};

struct fixture {
	struct daemon *d;
	struct job j;
	struct client c;
	int32_t node_of[NPES];
	uint8_t gone[NPES];
	struct client *local[NPES]; /* none: every PE is remote */
	char staging[4096];
	uint32_t perm[G]; /* the order of run 1's gets: offsets perm[k] * 64 */
};

static void setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	memset(&xp, 0, sizeof(xp));
	f->d = calloc(1, sizeof(*f->d));
	ck_assert_ptr_nonnull(f->d);
	settings_defaults(&f->d->cfg);
	f->d->cfg.phase_max_gets = SLOTS;
	f->d->cfg.prefetch_chunk = CHUNK;
	f->d->cfg.prefetch_arena_bytes = ARENA;
	f->d->net.nnodes = 2;
	f->d->net.self = 0;
	f->d->xport = &fake_xport;
	f->j.size = NPES;
	f->j.id = 1;
	for (int p = 0; p < NPES; p++)
		f->node_of[p] = p < NPES / 2 ? 0 : 1;
	f->j.node_of = f->node_of;
	f->j.pe_gone = f->gone;
	f->j.pe = f->local;
	f->c.job = &f->j;
	f->c.pf_slots = SLOTS;
	f->c.pf.bytes = hoist_pf_arena_off(SLOTS) + ARENA;
	f->c.pf.base = calloc(1, f->c.pf.bytes);
	ck_assert_ptr_nonnull(f->c.pf.base);
	f->c.staging.base = f->staging;
	ck_assert_int_eq(overlap_create(f->d, &f->c), 0);
	/* a scrambled order: each get's offset tells where it came in run 1 */
	for (uint32_t k = 0; k < G; k++)
		f->perm[k] = (k * 7 + 3) % G;
}

static void teardown(struct fixture *f)
{
	overlap_destroy(&f->c);
	free(f->c.pf.base);
	free(f->d);
}

/* a barrier naming the phase: notify, then the start */
static void phase(struct fixture *f, uint64_t id)
{
	overlap_notify(f->d, &f->c, id);
	overlap_phase_start(f->d, &f->c);
}

static int get(struct fixture *f, uint64_t off)
{
	struct hoist_sqe sqe = {.opcode = HOIST_OP_GET, .pe = SRC, .remote_off = off, .len = LEN};
	int res = -1;
	f->c.sq_head++;
	return overlap_get(f->d, &f->c, &sqe, 1, &res);
}

/* the prefetch of slot i lands with its data */
static void land(struct fixture *f, uint32_t i)
{
	struct overlap *o = f->c.ov;
	uint64_t v = 0xab00 + i;
	memcpy(o->arena + o->slots[i].arena_off, &v, sizeof(v));
	overlap_prefetch_done(f->d, &f->c, i, o->gen, 0);
}

/* land whatever is in flight until nothing is (landings refill the window) */
static void land_all(struct fixture *f)
{
	for (int more = 1; more;) {
		more = 0;
		for (uint32_t i = 0; i < G; i++)
			if (f->c.ov->slots[i].state == PF_ISSUED) {
				land(f, i);
				more = 1;
			}
	}
}

/* run 1's gets, recorded as worth prefetching: each came long enough
 * after the phase start to pay for the copy */
static void record(struct fixture *f)
{
	phase(f, ID);
	f->c.ov->phase_start_ns -= 1000000000ull;
	for (uint32_t k = 0; k < G; k++)
		ck_assert_int_eq(get(f, f->perm[k] * 64), 0);
}

static uint64_t stat(const uint64_t *field)
{
	return __atomic_load_n(field, __ATOMIC_RELAXED);
}

/* run 1 records G gets in the order perm; run 2 starts */
static void record_then_start(struct fixture *f)
{
	record(f);
	ck_assert_uint_eq(xp.n, 0);
	ck_assert_uint_eq(stat(&f->c.st.pf_misses), G);
	ck_assert_uint_eq(stat(&f->c.st.pf_miss_cold), G);
	ck_assert_uint_eq(stat(&f->c.st.pf_miss_new), 0);
	phase(f, ID);
}

/* the first window leaves at the start, in the order of the last run */
START_TEST(test_order_of_last_run)
{
	struct fixture f;
	setup(&f);
	record_then_start(&f);
	ck_assert_uint_eq(xp.n, CHUNK);
	for (uint32_t k = 0; k < CHUNK; k++) {
		ck_assert_uint_eq(xp.slot[k], k);
		ck_assert_uint_eq(xp.off[k], f.perm[k] * 64);
	}
	teardown(&f);
}
END_TEST

/* half the window landed: it is filled again at once (the next ones in
 * order), not only when the whole chunk has landed */
START_TEST(test_window_refills_at_half)
{
	struct fixture f;
	setup(&f);
	record_then_start(&f);
	for (uint32_t i = 0; i < CHUNK / 2 - 1; i++)
		land(&f, i);
	ck_assert_uint_eq(xp.n, CHUNK); /* more than half still in flight */
	land(&f, CHUNK / 2 - 1);
	ck_assert_uint_eq(xp.n, CHUNK + CHUNK / 2);
	for (uint32_t k = CHUNK; k < xp.n; k++)
		ck_assert_uint_eq(xp.off[k], f.perm[k] * 64);
	ck_assert_uint_eq(f.c.ov->node_out[1], CHUNK);
	/* the rest follows as they land; every get is then served */
	for (uint32_t i = CHUNK / 2; i < G; i++)
		land(&f, i);
	ck_assert_uint_eq(xp.n, G);
	for (uint32_t k = 0; k < G; k++)
		ck_assert_int_eq(get(&f, f.perm[k] * 64), 1);
	ck_assert_uint_eq(stat(&f.c.st.pf_hits), G);
	ck_assert_uint_eq(stat(&f.c.st.pf_misses), G); /* run 1's only */
	teardown(&f);
}
END_TEST

/* a get whose prefetch is in flight waits for that one only; one whose
 * prefetch has not left yet (beyond the window) issues it now and waits */
START_TEST(test_wait_and_demand)
{
	struct fixture f;
	setup(&f);
	record_then_start(&f);
	ck_assert_int_eq(get(&f, f.perm[0] * 64), 2);
	ck_assert_uint_eq(f.c.outstanding, 1);
	land(&f, 0);
	ck_assert_uint_eq(f.c.outstanding, 0);
	ck_assert_uint_eq(stat(&f.c.st.pf_waits), 1);
	uint64_t v;
	memcpy(&v, f.staging, sizeof(v));
	ck_assert_uint_eq(v, 0xab00);
	/* entry 30 is far beyond the window */
	ck_assert_int_eq(get(&f, f.perm[30] * 64), 2);
	ck_assert_uint_eq(stat(&f.c.st.pf_demand), 1);
	ck_assert_uint_eq(stat(&f.c.st.pf_late), 0);
	ck_assert_uint_eq(xp.n, CHUNK + 1);
	ck_assert_uint_eq(xp.slot[CHUNK], 30);
	land(&f, 30);
	ck_assert_uint_eq(stat(&f.c.st.pf_waits), 2);
	ck_assert_uint_eq(f.c.outstanding, 0);
	/* the window goes on without it */
	land_all(&f);
	ck_assert_uint_eq(xp.n, G);
	teardown(&f);
}
END_TEST

/* no credit at the start and nothing in flight to land: the client's next
 * get retries the window */
START_TEST(test_stall_retried)
{
	struct fixture f;
	setup(&f);
	record(&f);
	xp.stall = 1;
	phase(&f, ID);
	ck_assert_uint_eq(xp.n, 0);
	ck_assert_int_eq(get(&f, f.perm[0] * 64), 2); /* waits for its prefetch */
	ck_assert_uint_eq(xp.n, CHUNK);
	ck_assert_uint_eq(stat(&f.c.st.pf_late), 0);
	land(&f, 0);
	ck_assert_uint_eq(stat(&f.c.st.pf_waits), 1);
	teardown(&f);
}
END_TEST

/* a notify prepares the next run; if its barrier never completes and the
 * next notify comes, the phase keeps its history (the run did nothing) */
START_TEST(test_unstarted_run_keeps_history)
{
	struct fixture f;
	setup(&f);
	record(&f);
	overlap_notify(f.d, &f.c, ID); /* its barrier failed: no start */
	ck_assert_uint_eq(xp.n, 0);
	phase(&f, ID);
	ck_assert_uint_eq(xp.n, CHUNK);
	ck_assert_uint_eq(xp.off[0], f.perm[0] * 64);
	ck_assert_uint_eq(stat(&f.c.st.pf_wasted), 0);
	teardown(&f);
}
END_TEST

/* misses by reason: a new get in a predicted run; more than phase_max_gets */
START_TEST(test_miss_reasons)
{
	struct fixture f;
	setup(&f);
	record_then_start(&f);
	land_all(&f);
	ck_assert_int_eq(get(&f, 100000), 0); /* not in run 1 */
	ck_assert_uint_eq(stat(&f.c.st.pf_miss_new), 1);
	/* fill the phase up to SLOTS entries, then one more */
	for (uint32_t k = G + 1; k < SLOTS; k++)
		ck_assert_int_eq(get(&f, 200000 + k * 64), 0);
	ck_assert_uint_eq(stat(&f.c.st.pf_miss_full), 0);
	ck_assert_int_eq(get(&f, 900000), 0);
	ck_assert_uint_eq(stat(&f.c.st.pf_miss_full), 1);
	ck_assert_uint_eq(stat(&f.c.st.pf_misses), G + SLOTS - G + 1);
	teardown(&f);
}
END_TEST

/* The PE's node was lost after this phase's prefetches of it had landed:
 * a put to it is refused (-ECONNRESET, reported at the client's quiet),
 * and the get of the same place after it must not be served from the
 * prefetch that read it before the put, by the daemon or by the client
 * from the fast table (mn_peer_killed_lanes4 once saw hoist_get return 0
 * with the previous round's data). */
START_TEST(test_refused_put_drops_prefetch)
{
	struct fixture f;
	setup(&f);
	record_then_start(&f);
	land_all(&f);
	struct overlap *o = f.c.ov;
	ck_assert_uint_eq(hoist_load_acquire(&o->table[0].state), HOIST_PF_READY);
	ck_assert_uint_eq(hoist_load_acquire(&o->table[1].state), HOIST_PF_READY);
	f.gone[SRC] = 1;
	struct hoist_sqe put = {.opcode = HOIST_OP_PUT, .pe = SRC, .remote_off = f.perm[0] * 64,
				.len = LEN};
	int res = 0;
	f.c.sq_head++;
	ck_assert_int_eq(rma(f.d, &f.c, &put, &res), EXEC_DONE);
	ck_assert_int_eq(res, -ECONNRESET);
	ck_assert_uint_eq(hoist_load_acquire(&o->table[0].state), HOIST_PF_EMPTY);
	ck_assert_uint_eq(hoist_load_acquire(&o->table[1].state), HOIST_PF_EMPTY);
	ck_assert_int_ne(get(&f, f.perm[0] * 64), 1); /* not a hit of the old data */
	teardown(&f);
}
END_TEST

/* A run whose gets were split between the daemon (every fifth) and the
 * client's fast table (the rest, learnt of at the notify): the next run's
 * prefetches leave in the program's order (run 1's, perm), not the
 * daemon's gets first and the client's after them: the client's lookup
 * near its cursor relies on it (the sweep's cliff at G >= 1024). */
START_TEST(test_fast_hits_keep_order)
{
	struct fixture f;
	setup(&f);
	record_then_start(&f);
	land_all(&f);
	struct overlap *o = f.c.ov;
	for (uint32_t k = 0; k < G; k++) {
		if (k % 5 == 0) {
			ck_assert_int_eq(get(&f, f.perm[k] * 64), 1); /* the daemon serves it */
			continue;
		}
		/* the client serves it itself */
		ck_assert_uint_eq(hoist_load_acquire(&o->table[k].state), HOIST_PF_READY);
		hoist_store_relaxed(&o->table[k].state, HOIST_PF_TAKEN);
	}
	uint32_t before = xp.n;
	phase(&f, ID);
	ck_assert_uint_eq(stat(&f.c.st.pf_fast_hits), G - G / 5);
	land_all(&f);
	ck_assert_uint_eq(xp.n - before, G);
	for (uint32_t k = 0; k < G; k++)
		ck_assert_uint_eq(xp.off[before + k], f.perm[k] * 64);
	teardown(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("prefetch");
	TCase *tc = tcase_create("window");
	tcase_add_test(tc, test_order_of_last_run);
	tcase_add_test(tc, test_window_refills_at_half);
	tcase_add_test(tc, test_wait_and_demand);
	tcase_add_test(tc, test_stall_retried);
	tcase_add_test(tc, test_unstarted_run_keeps_history);
	tcase_add_test(tc, test_miss_reasons);
	tcase_add_test(tc, test_refused_put_drops_prefetch);
	tcase_add_test(tc, test_fast_hits_keep_order);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
