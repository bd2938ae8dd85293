/*
 * mn_coll_node_bad: a malformed node descriptor (HOIST_COLL_F_NODE, raw)
 * fails the job on every PE of every node instead of hanging it or making
 * the daemon read outside a heap.
 *
 * Run with 4 PEs on 2 daemons (2+2: the node path on both). After a node
 * collective that works, PE 0 posts, in place of the next one, a node
 * descriptor whose node-collective block lies past the end of its heap;
 * the other PEs call that collective normally (their node's descriptor is
 * fine). The daemon must fail the job (-EPROTO): every PE's collective
 * ends with an error, nobody hangs (the watchdog), and the daemons stay up
 * (hoistrun checks that they exit cleanly).
 */
#include "internal.h"
#include "it_common.h"

int main(void)
{
	int me, n;
	it_init("mn_coll_node_bad", &me, &n);
	it_watchdog(30);
	struct hoist_ctx *c = hoist__ctx();
	int64_t *s = it_malloc(64), *d = it_malloc(64); /* the first barrier: node path from here */
	*s = me + 1;
	IT_OK(hoist_allreduce(d, s, 1, HOIST_INT64, HOIST_SUM), "a first allreduce");
	if (*d != (int64_t)n * (n + 1) / 2)
		IT_FAIL("first allreduce: %lld", (long long)*d);
	if (!c->nc_on || !c->nc_mn || c->npeers < 2) {
		it_log("not on the node path of a job over several daemons (run 4 PEs on 2)");
		hoist_finalize();
		return IT_SKIP;
	}
	int rc;
	if (me == 0) {
		IT_WHERE("PE 0: a node descriptor with its block outside the heap");
		struct hoist_sqe *sqe = NULL;
		if (IT_OK(hoist__sqe_get(c, &sqe)) || !sqe)
			return it_finish();
		struct hoist_coll_args a = {.kind = HOIST_COLL_ALLREDUCE, .flags = HOIST_COLL_F_NODE,
					    .reserved0 = c->coll_calls++};
		*sqe = (struct hoist_sqe){.opcode = HOIST_OP_COLL,
					  .pe = c->nc_ranks[0],
					  .remote_off = c->heap_bytes - 64,
					  .local_off = c->nc_m + 1};
		memcpy(sqe->inline_data, &a, sizeof(a));
		hoist__sqe_submit(c);
		rc = hoist_barrier();
	} else {
		IT_WHERE("the others: the allreduce PE 0 broke");
		rc = hoist_allreduce(d, s, 1, HOIST_INT64, HOIST_SUM);
	}
	if (rc == 0)
		IT_FAIL("the job went on after a malformed node descriptor");
	else
		it_log("ended with %s", it_errname(rc));
	rc = hoist_finalize();
	if (rc && rc != -EPROTO && rc != -ECONNRESET)
		IT_FAIL("hoist_finalize returned %s", it_errname(rc));
	if (it_failures)
		return 1;
	if (me == 0)
		fprintf(stderr, "[mn_coll_node_bad rank 0] PASS\n");
	return 0;
}
