/*
 * it_coll_client: the library's side of collectives when something else
 * fails around them (links hoist_static: forges a failing descriptor and
 * reads the op slot count).
 *
 * - Earlier error: PE 0 has a sticky error (a put the daemon rejected) and
 *   an nbi get pending, so the collective's quiet fails. The collective
 *   must still be posted (its error reported): otherwise PE 0 skips a
 *   number of the job's collectives and the others pair its next
 *   collective with this one (wrong sums) or wait forever.
 * - Slots exhausted: the program starts as many split-phase collectives as
 *   the library has op slots; one more must fail (-EBUSY), not spin
 *   forever, and the started ones and the next collective still work.
 *
 * Every result is checked against the sum of the PEs' contributions.
 */
#include "it_common.h"
#include "internal.h"

static int me, n;

static int64_t sum_of(int64_t base)
{
	return (int64_t)n * base + (int64_t)n * (n - 1) / 2;
}

static void check_sum(const int64_t *got, int64_t base, const char *what)
{
	if (*got != sum_of(base))
		IT_FAIL("%s: allreduce gave %lld, expected %lld", what, (long long)*got,
			(long long)sum_of(base));
}

static void part_earlier_error(struct hoist_ctx *c, int64_t *a, int64_t *b)
{
	IT_WHERE("earlier error");
	if (me == 0) {
		/* a put beyond the heap, no completion asked: the daemon
		 * rejects it with a CQE the library keeps as a sticky error */
		struct hoist_sqe *sqe;
		IT_OK(hoist__sqe_get(c, &sqe));
		*sqe = (struct hoist_sqe){.opcode = HOIST_OP_PUT, .flags = HOIST_SQE_F_INLINE,
					  .pe = n - 1, .seg = HOIST_SEG_HEAP,
					  .remote_off = c->heap_bytes, .len = 8};
		hoist__sqe_submit(c);
		/* an nbi get into private memory: the collective must quiet */
		static int64_t priv;
		c->direct = 0; /* through the daemon even if PE n-1 is local */
		IT_OK(hoist_get_nbi(&priv, n - 1, a, sizeof(priv)));
		if (!c->nbi_head)
			IT_FAIL("the nbi get is not pending: the test tests nothing");
	}
	*a = 1000 + me;
	int rc = hoist_allreduce(b, a, 1, HOIST_INT64, HOIST_SUM);
	if (me == 0) {
		if (rc != -EFAULT)
			IT_FAIL("allreduce after a rejected put returned %s, expected -EFAULT",
				it_errname(rc));
	} else if (rc) {
		IT_FAIL("allreduce returned %s", it_errname(rc));
	}
	check_sum(b, 1000, "the collective with the earlier error");
	*a = me;
	IT_OK(hoist_allreduce(b, a, 1, HOIST_INT64, HOIST_SUM));
	check_sum(b, 0, "the next collective");
	c->direct = 1;
}

static void part_slots(struct hoist_ctx *c, int64_t *a, int64_t *b)
{
	IT_WHERE("op slots exhausted");
	uint32_t k = c->nops;
	hoist_req_t **req = it_xmalloc((k + 1) * sizeof(*req));
	for (uint32_t i = 0; i < k; i++) {
		a[i] = (int64_t)i * 100 + me;
		IT_OK(hoist_allreduce_start(&b[i], &a[i], 1, HOIST_INT64, HOIST_SUM, &req[i]), "start %u", i);
	}
	/* the watchdog turns a spinning library into a failure */
	IT_EXPECT(hoist_allreduce_start(&b[k], &a[k], 1, HOIST_INT64, HOIST_SUM, &req[k]), -EBUSY,
		  "start %u with %u slots", k, k);
	for (uint32_t i = 0; i < k; i++) {
		IT_OK(hoist_wait(req[i]), "wait %u", i);
		check_sum(&b[i], (int64_t)i * 100, "a split-phase collective");
	}
	a[0] = 7 + me;
	IT_OK(hoist_allreduce(b, a, 1, HOIST_INT64, HOIST_SUM));
	check_sum(b, 7, "the collective after -EBUSY");
	free(req);
}

int main(void)
{
	it_init("it_coll_client", &me, &n);
	it_watchdog(50);
	struct hoist_ctx *c = hoist__ctx();
	if (!c) {
		IT_FAIL("no context");
		return it_finish();
	}
	size_t slots = (size_t)c->nops + 1;
	int64_t *a = it_malloc(slots * sizeof(int64_t)), *b = it_malloc(slots * sizeof(int64_t));
	IT_OK(hoist_barrier());
	part_earlier_error(c, a, b);
	IT_OK(hoist_barrier());
	part_slots(c, a, b);
	IT_OK(hoist_barrier());
	return it_finish();
}
