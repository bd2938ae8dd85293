/*
 * mn_coll_node_nomap: a PE that cannot map a local peer's heap at its
 * first node collective (job over several nodes) fails that collective on
 * every PE of every node instead of leaving its node's other PEs and the
 * other nodes' PEs waiting for a node descriptor that never comes.
 *
 * Run with 4 PEs on 2 daemons (2+2: the node path on both). After the
 * first barrier, rank 1 marks its mapping of the lowest other PE of its
 * node as failed (-ENOMEM, what hoist__peer_map keeps when mmap fails;
 * the mapping is made lazily, by the first node collective). Then every PE
 * calls the same allreduce: every one must end with rank 1's -ENOMEM
 * (its own; the job's on its node, the collective's on the other) or,
 * on the others, -ECONNRESET (the failed job's answer to rank 0's own
 * mapping of rank 1, or rank 1's departure seen first on node 1); rank 1
 * checks that its node's job failed with its -ENOMEM. Nobody
 * may hang (the watchdog fires on lack of progress), and the daemons stay
 * up (hoistrun checks that they exit cleanly).
 */
#include <sched.h>

#include "internal.h"
#include "it_common.h"

int main(void)
{
	int me, n;
	it_init("mn_coll_node_nomap", &me, &n);
	it_watchdog(30);
	struct hoist_ctx *c = hoist__ctx();
	int64_t *s = it_malloc(64), *d = it_malloc(64); /* the first barrier: node path from here */
	*s = me + 1;
	if (!c->nc_on || !c->nc_mn || c->npeers < 2 || c->nc_base) {
		it_log("not before the first collective of the node path over several daemons "
		       "(run 4 PEs on 2)");
		hoist_finalize();
		return IT_SKIP;
	}
	if (me == 1) {
		IT_WHERE("rank 1: its mapping of a local peer failed");
		struct hoist_peer *p = NULL;
		for (uint32_t i = 0; i < c->npeers && !p; i++)
			if (c->peers[i].rank != me)
				p = &c->peers[i];
		if (!p || p->state > 0)
			IT_FAIL("no unmapped local peer to fail (state %d)", p ? p->state : 0);
		else
			p->state = -ENOMEM;
	}
	IT_WHERE("the allreduce rank 1 cannot take part in");
	int rc = hoist_allreduce(d, s, 1, HOIST_INT64, HOIST_SUM);
	if (rc == 0)
		IT_FAIL("the allreduce succeeded without rank 1 (got %lld)", (long long)*d);
	else if (rc > 0)
		IT_FAIL("the allreduce returned %d: not an -errno", rc);
	else if (rc != -ENOMEM && (me == 1 || rc != -ECONNRESET))
		IT_FAIL("%s, not rank 1's -ENOMEM", it_errname(rc));
	else
		it_log("ended with %s", it_errname(rc));
	if (me == 1) {
		/* its daemon took its word (the job failed here): leave only
		 * then, or node 0's PEs could see its departure's -ECONNRESET */
		IT_WHERE("rank 1: waiting for the job's error");
		while (!__atomic_load_n(&c->ring.ctrl->job_error, __ATOMIC_ACQUIRE))
			sched_yield();
		if (c->ring.ctrl->job_error != -ENOMEM)
			IT_FAIL("job error %s", it_errname(c->ring.ctrl->job_error));
	}
	rc = hoist_finalize();
	if (rc && rc != -ENOMEM && rc != -EPROTO && rc != -ECONNRESET)
		IT_FAIL("hoist_finalize returned %s", it_errname(rc));
	if (it_failures)
		return 1;
	if (me == 0)
		fprintf(stderr, "[mn_coll_node_nomap rank 0] PASS\n");
	return 0;
}
