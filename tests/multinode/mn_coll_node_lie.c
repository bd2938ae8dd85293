/*
 * mn_coll_node_lie: a PE that writes garbage into its node-collective slot
 * (HOIST_COLL_F_NODE: the daemon reads every local PE's parameters from
 * there, memory the PE itself and every PE of its node may write) fails
 * that collective on every PE with an -errno, and only that collective:
 * the daemon reads nothing outside a heap, stays up, and the next honest
 * collective of the same job works.
 *
 * Run with 4 PEs on 2 daemons (2+2: the node path on both). Rank 1 does
 * not call the collectives below: it arrives by hand (its slot, then its
 * arrived word, as client/nodecoll.c does), each time with one lie: a
 * positive "bad" (must not come back as the result: every PE sees an
 * -errno), a most-negative "bad", an eager contribution as long as the
 * heap, a dst past the heap's end, another collective's number, an
 * unknown kind. Rank 0 (its node's last to arrive or not) posts the node's
 * descriptor as usual; rank 1 reads the result from the anchor's slot
 * like the library. Ranks 0, 2, 3 call allreduce each time. Then all four
 * run an honest allreduce, which must give the right sum.
 */
#include <limits.h>
#include <sched.h>

#include "hoist_futex.h"
#include "internal.h"
#include "it_common.h"

enum { LIE_POSITIVE, LIE_NEGATIVE, LIE_EAGER_LONG, LIE_DST_PAST, LIE_SEQ, LIE_KIND, NLIES };
static const char *lie_name[NLIES] = {"bad = 7", "bad = INT_MIN", "eager len = heap size",
				      "dst past the heap", "seq of another collective",
				      "kind 200"};

static struct hoist_nc_slot *slot_of(struct hoist_ctx *c, int p, uint32_t m)
{
	return (struct hoist_nc_slot *)(c->nc_base[p] + c->nc_off + sizeof(struct hoist_nc_hdr)) +
	       m % HOIST_NC_SLOTS;
}

static void publish(struct hoist_ctx *c, uint32_t *word, uint32_t v)
{
	__atomic_store_n(word, v, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->nc_line->nc_sleepers, __ATOMIC_RELAXED)) {
		__atomic_fetch_add(&c->nc_line->nc_seq, 1, __ATOMIC_SEQ_CST);
		hoist_futex_wake(&c->nc_line->nc_seq);
	}
}

/* rank 1: collective m with one lie in its slot; the result it reads */
static int32_t lie(struct hoist_ctx *c, int lie, int64_t *d, int64_t *s)
{
	uint32_t m = ++c->nc_m;
	c->coll_calls++; /* the job's numbering, as nc_start */
	struct hoist_nc_slot *sl = slot_of(c, c->rank, m);
	struct hoist_nc_args a = {.seq = m, .kind = HOIST_COLL_ALLREDUCE, .type = HOIST_INT64,
				  .op = HOIST_SUM, .eager = 1, .len = 8};
	if (hoist__sym_off(c, d, 8, &a.dst_off) || hoist__sym_off(c, s, 8, &a.src_off))
		IT_FAIL("sym_off");
	memcpy(sl->data, s, 8);
	switch (lie) {
	case LIE_POSITIVE: a.bad = 7; break;
	case LIE_NEGATIVE: a.bad = INT_MIN; break;
	case LIE_EAGER_LONG: a.len = c->heap_bytes; break;
	case LIE_DST_PAST: a.eager = 0, a.dst_off = c->heap_bytes - 4; break;
	case LIE_SEQ: a.seq = m + 1; break;
	case LIE_KIND: a.kind = 200; break;
	}
	sl->a = a;
	struct hoist_nc_hdr *h = (struct hoist_nc_hdr *)(c->heap_base + c->nc_off);
	publish(c, &h->arrived, m);
	struct hoist_nc_args *an = &slot_of(c, c->nc_ranks[0], m)->a;
	while (__atomic_load_n(&an->fin, __ATOMIC_ACQUIRE) != m) {
		if (__atomic_load_n(&c->ring.ctrl->job_error, __ATOMIC_ACQUIRE))
			return __atomic_load_n(&c->ring.ctrl->job_error, __ATOMIC_ACQUIRE);
		sched_yield();
	}
	int32_t res = __atomic_load_n(&an->res, __ATOMIC_RELAXED);
	c->nc_done = m;
	publish(c, &h->done, m); /* the anchor may reuse its slot */
	return res;
}

int main(void)
{
	int me, n;
	it_init("mn_coll_node_lie", &me, &n);
	it_watchdog(30);
	struct hoist_ctx *c = hoist__ctx();
	int64_t *s = it_malloc(64), *d = it_malloc(64); /* the first barrier: node path from here */
	*s = me + 1;
	IT_OK(hoist_allreduce(d, s, 1, HOIST_INT64, HOIST_SUM), "a first allreduce");
	if (*d != (int64_t)n * (n + 1) / 2)
		IT_FAIL("first allreduce: %lld", (long long)*d);
	if (!c->nc_on || !c->nc_mn || c->npeers != 2 || n != 4) {
		it_log("not on the node path of 2+2 PEs over 2 daemons (run 4 PEs on 2)");
		hoist_finalize();
		return IT_SKIP;
	}
	for (int k = 0; k < NLIES; k++) {
		IT_WHERE("lie %d (%s)", k, lie_name[k]);
		int32_t rc = me == 1 ? lie(c, k, d, s) : hoist_allreduce(d, s, 1, HOIST_INT64, HOIST_SUM);
		if (rc >= 0 || rc < -4095)
			IT_FAIL("lie \"%s\": the collective returned %d, not an -errno", lie_name[k], rc);
		else
			it_log("lie \"%s\": %s", lie_name[k], it_errname(rc));
		it_progress_bump();
	}
	IT_WHERE("an honest allreduce after the lies");
	*d = 0;
	int rc = hoist_allreduce(d, s, 1, HOIST_INT64, HOIST_SUM);
	if (rc)
		IT_FAIL("the honest allreduce: %s", it_errname(rc));
	else if (*d != (int64_t)n * (n + 1) / 2)
		IT_FAIL("the honest allreduce: %lld", (long long)*d);
	IT_OK(hoist_finalize(), "finalize");
	if (it_failures)
		return 1;
	if (me == 0)
		fprintf(stderr, "[mn_coll_node_lie rank 0] PASS\n");
	return 0;
}
