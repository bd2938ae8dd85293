/*
 * Split-phase barrier, progress-thread side. A notify counts the client in
 * (the SQ is stalled at the notify until the client's earlier operations
 * completed, so notify implies quiet). When every PE of the job has
 * notified, the epoch advances and is published in every client's control
 * page; barrier_wait on the client watches that word. The inter-node round
 * among the job's daemons will run between "all local PEs arrived" and
 * "publish".
 */
#include "daemon.h"

#include <errno.h>

#include "hoist_futex.h"

void client_wake(struct client *c, uint32_t *word, uint32_t flag)
{
	/* Dekker with the client's sleep: our store to *word happened before
	 * this fence; the client stored its flag before rechecking *word. */
	hoist_smp_mb();
	if (hoist_load_relaxed(&c->ctrl->cq_flags) & flag) {
		hoist_futex_wake(word);
		STAT_INC(&c->st, wakeups);
	}
}

static void job_fail(struct job *j, int err)
{
	if (j->error)
		return;
	j->error = err;
	for (int32_t r = 0; r < j->size; r++) {
		struct client *c = j->pe[r];
		if (!c)
			continue;
		__atomic_store_n(&c->ctrl->job_error, err, __ATOMIC_RELEASE);
		client_wake(c, &c->ctrl->barrier_epoch, HOIST_EPOCH_WAITING);
	}
}

static void barrier_complete(struct job *j)
{
	j->arrived = 0;
	j->barrier_epoch++;
	for (int32_t r = 0; r < j->size; r++) {
		struct client *c = j->pe[r];
		if (!c)
			continue;
		/* pairs with hoist_load_acquire(&ctrl->barrier_epoch) in the
		 * client's barrier wait: puts before the barrier are visible */
		hoist_store_release(&c->ctrl->barrier_epoch, j->barrier_epoch);
		client_wake(c, &c->ctrl->barrier_epoch, HOIST_EPOCH_WAITING);
	}
}

int barrier_notify(struct daemon *d, struct client *c)
{
	struct job *j = c->job;
	(void)d;
	if (j->error)
		return j->error;
	if (j->departed) { /* a PE left: this barrier can never complete */
		job_fail(j, -ECONNRESET);
		return -ECONNRESET;
	}
	if (c->barrier_epoch_notified == j->barrier_epoch + 1)
		return -EINVAL; /* notified twice for the same barrier */
	c->barrier_epoch_notified = j->barrier_epoch + 1;
	STAT_INC(&c->st, barriers);
	if (++j->arrived == j->size)
		barrier_complete(j);
	return 0;
}

void barrier_depart(struct daemon *d, struct job *j, struct client *c, int clean)
{
	(void)d;
	j->pe[c->rank] = NULL;
	j->departed++;
	/* A death always fails the job's synchronisation; a clean finalize
	 * fails only a barrier that is waiting for this PE. */
	if (!clean || j->arrived > 0)
		job_fail(j, -ECONNRESET);
}
