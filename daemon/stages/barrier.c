/*
 * Split-phase barrier, progress-thread side.
 *
 * A notify counts the client in; the SQ is stalled at the notify until the
 * client's earlier operations completed, so notify implies quiet. When all
 * of the job's PEs on this node have notified, the job's daemons run a
 * dissemination barrier: in round k this node sends one message to the
 * node 2^k after it (in the job's sorted node list) and waits for the one
 * from 2^k before it; ceil(log2(nodes)) rounds, one message per node and
 * round, however many PEs each node hosts. Then the epoch advances and is
 * published in every local client's control page, which barrier_wait
 * watches.
 *
 * A message of the next barrier may arrive before this one finished here
 * (its sender is done already); received rounds are kept per epoch parity.
 *
 * In a job whose PEs are all on this node the clients do not wait for the
 * epoch: they synchronise among themselves in shared memory (client/sync.c)
 * and tell the daemon their barriers in runs, one lazy notify for the
 * barriers of one phase in a row (its len: their count), always before
 * the client's next descriptor, so the epoch and the phases advance here
 * in order. A client may tell a run before the last one completed here:
 * the engine does not hold it (the others tell theirs only when they next
 * post or wait for the daemon, and may wait for this client's descriptors
 * behind it), its count just grows. Once every PE told at least the next
 * barrier, as many complete at once as every PE told (node_complete), with
 * one phase start for them: in such a job the daemon has nothing to
 * prefetch (every target is on this node), and a phase told ahead ends the
 * one prepared before it unstarted (overlap_notify), as when a barrier
 * failed. Before runs, the same could happen by barrier: a PE's notify
 * and its next descriptors executed before the other PEs' notifies were
 * drained.
 */
#include "daemon.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "am.h"
#include "coll.h"
#include "overlap.h"
#include "hoist_futex.h"

void job_fail(struct job *j, int err)
{
	if (j->error)
		return;
	j->error = err;
	j->bar_active = 0;
	/* job_error first, then the collectives' failure: a PE that saw its
	 * collective fail with err must find the job failed at its next call
	 * (the root of an eager node broadcast reads nothing else before it
	 * returns: mn_coll_kill_daemon's broadcast returned 0 now and then) */
	for (int32_t r = 0; r < j->size; r++)
		if (j->pe[r])
			__atomic_store_n(&j->pe[r]->ctrl->job_error, err, __ATOMIC_RELEASE);
	coll_job_fail(j, err);
	for (int32_t r = 0; r < j->size; r++)
		if (j->pe[r])
			client_wake(j->pe[r], &j->pe[r]->ctrl->barrier_epoch, HOIST_EPOCH_WAITING);
}

/* n barriers complete (n > 1: node barriers told in runs, one phase each:
 * one phase start stands for the run's n, see the header comment) */
static void barrier_complete(struct daemon *d, struct job *j, uint32_t n)
{
	j->arrived = 0;
	j->barrier_epoch += n;
	for (int32_t r = 0; r < j->size; r++) {
		struct client *c = j->pe[r];
		if (!c)
			continue;
		/* pairs with hoist_load_acquire(&ctrl->barrier_epoch) in the
		 * client's barrier wait: puts before the barrier are visible */
		hoist_store_release(&c->ctrl->barrier_epoch, j->barrier_epoch);
		client_wake(c, &c->ctrl->barrier_epoch, HOIST_EPOCH_WAITING);
	}
	/* the next phase starts now, before the clients even return from
	 * their waits: its prefetches leave at once */
	for (int32_t r = 0; r < j->size; r++)
		if (j->pe[r])
			overlap_phase_start(d, j->pe[r]);
}

static void round_send(struct daemon *d, struct job *j)
{
	int32_t to = j->nodes[(j->my_idx + (1 << j->bar_round)) % j->nnodes];
	if (am_send_barrier(d, to, j->id, j->barrier_epoch + 1, j->bar_round))
		job_fail(j, -ECONNRESET);
}

static void rounds_advance(struct daemon *d, struct job *j)
{
	while (j->bar_active) {
		uint32_t par = (j->barrier_epoch + 1) & 1;
		if (!(j->bar_recv[par] & (1u << j->bar_round)))
			return;
		j->bar_recv[par] &= ~(1u << j->bar_round);
		j->bar_round++;
		if ((1 << j->bar_round) >= j->nnodes) {
			j->bar_active = 0;
			barrier_complete(d, j, 1);
			return;
		}
		round_send(d, j);
	}
}

void barrier_recv(struct daemon *d, struct job *j, uint32_t epoch, uint32_t round)
{
	j->bar_recv[epoch & 1] |= 1u << round;
	if (j->bar_active && epoch == j->barrier_epoch + 1)
		rounds_advance(d, j);
}

/* A notify for the barrier after the one this daemon still counts: the
 * client's node barrier (libhoist, one-node jobs: the PEs synchronise in
 * shared memory and only tell the daemon) let it pass before the daemon
 * saw every PE's notify. The engine holds it until the count completed, so
 * the daemon still counts every barrier in order and starts each phase
 * when all its PEs arrived. A failed job answers at once (barrier_notify). */
static int notified_ahead(const struct client *c)
{
	return (int32_t)(c->barrier_epoch_notified - c->job->barrier_epoch) > 0;
}

int barrier_notify_early(const struct client *c)
{
	const struct job *j = c->job;
	return !j->error && !j->departed && notified_ahead(c);
}

/* Every local PE notified the next barrier, on one node: complete as many
 * as every PE notified (a lazy notify counts a run of them), then count
 * the PEs whose runs go on past them for the next. */
static void node_complete(struct daemon *d, struct job *j)
{
	uint32_t n = UINT32_MAX;
	for (int32_t r = 0; r < j->size; r++) {
		const struct client *p = j->pe[r];
		if (p && p->barrier_epoch_notified - j->barrier_epoch < n)
			n = p->barrier_epoch_notified - j->barrier_epoch;
	}
	barrier_complete(d, j, n);
	for (int32_t r = 0; r < j->size; r++)
		if (j->pe[r] && notified_ahead(j->pe[r]))
			j->arrived++;
}

int barrier_notify(struct daemon *d, struct client *c, uint32_t n, int runs)
{
	struct job *j = c->job;
	if (j->error)
		return j->error;
	if (j->departed) { /* a PE left: this barrier can never complete */
		job_fail(j, -ECONNRESET);
		return -ECONNRESET;
	}
	if (n > 1 && j->nnodes > 1)
		return -EINVAL; /* node barriers only where every PE is local */
	int ahead = notified_ahead(c);
	if (ahead && !runs)
		return -EINVAL; /* notified twice for the same barrier (the engine
				 * holds such a notify, barrier_notify_early: only
				 * reached by a caller that does not) */
	/* a run told ahead of the others extends the PE's count; the PE is
	 * counted in for the next barrier once */
	c->barrier_epoch_notified = (ahead ? c->barrier_epoch_notified : j->barrier_epoch) + n;
	STAT_ADD(&c->st, barriers, n);
	if (ahead || ++j->arrived < j->nlocal)
		return 0;
	if (j->nnodes <= 1) {
		node_complete(d, j);
		return 0;
	}
	j->bar_active = 1;
	j->bar_round = 0;
	round_send(d, j);
	rounds_advance(d, j);
	return 0;
}

/* Rank pe (here or elsewhere) left after its node completed `epoch`
 * barriers. A death fails the job's synchronisation at once; a clean
 * finalize fails only a barrier that the PE will never join. */
static void depart(struct job *j, int32_t pe, int clean, uint32_t epoch)
{
	if (j->pe_gone[pe])
		return;
	j->pe_gone[pe] = 1;
	j->departed++;
	int in_barrier = j->arrived > 0 || j->bar_active;
	if (!clean || (in_barrier && j->barrier_epoch >= epoch))
		job_fail(j, -ECONNRESET);
}

/* A departure heard before JOB_READY made rank_nonce[] readable. */
struct gone_notice {
	int32_t pe;
	int clean;
	uint32_t epoch;
	uint64_t nonce;
	struct gone_notice *next;
};

void job_pe_gone(struct daemon *d, struct job *j, int32_t pe, int clean, uint32_t epoch,
		 uint64_t nonce)
{
	(void)d;
	if (!j->prog_ready) {
		struct gone_notice *g = malloc(sizeof(*g));
		if (!g)
			return;
		*g = (struct gone_notice){.pe = pe, .clean = clean, .epoch = epoch, .nonce = nonce,
					  .next = j->early};
		j->early = g;
		return;
	}
	if (j->rank_nonce[pe] != nonce)
		return; /* an earlier job under the same key: not this rank */
	depart(j, pe, clean, epoch);
}

void job_gone_early_apply(struct daemon *d, struct job *j)
{
	struct gone_notice *g = j->early;
	j->early = NULL;
	while (g) {
		struct gone_notice *next = g->next;
		job_pe_gone(d, j, g->pe, g->clean, g->epoch, g->nonce);
		free(g);
		g = next;
	}
}

void job_gone_early_free(struct job *j)
{
	while (j->early) {
		struct gone_notice *next = j->early->next;
		free(j->early);
		j->early = next;
	}
}

void barrier_depart(struct daemon *d, struct job *j, struct client *c, int clean)
{
	j->pe[c->rank] = NULL;
	/* a collective this PE never joined can never complete */
	if (clean && j->prog_ready)
		coll_pe_depart(d, j, c->rank);
	depart(j, c->rank, clean, j->barrier_epoch);
	if (!j->prog_ready)
		return;
	for (int32_t i = 0; i < j->nnodes; i++)
		if (j->nodes[i] != d->net.self)
			am_send_pe_gone(d, j->nodes[i], j->id, c->rank, clean, j->barrier_epoch,
					c->nonce);
}

/* W_BARRIER: a round of a job's dissemination barrier. */
static int barrier_am_recv(struct daemon *d, int32_t from, const void *ext, const void *payload,
			   uint64_t plen)
{
	(void)from;
	(void)payload;
	(void)plen;
	struct wire_barrier b;
	memcpy(&b, ext, sizeof(b));
	struct job *j = progress_job_find(d, b.job);
	if (j && b.round < 32)
		barrier_recv(d, j, b.epoch, b.round);
	return 0;
}

/* W_PE_GONE: a PE of another node left its job; its address goes too. */
static int pe_gone_am_recv(struct daemon *d, int32_t from, const void *ext, const void *payload,
			   uint64_t plen)
{
	(void)from;
	(void)payload;
	(void)plen;
	struct wire_pe_gone g;
	memcpy(&g, ext, sizeof(g));
	struct addr_key k = {.job = g.job, .pe = g.pe, .seg = HOIST_SEG_HEAP};
	addr_cache_invalidate(&d->net.cache, &k, UINT32_MAX);
	struct job *j = progress_job_find(d, g.job);
	if (j && g.pe >= 0 && g.pe < j->size)
		job_pe_gone(d, j, g.pe, g.clean != 0, g.epoch, g.nonce);
	return 0;
}

static const struct am_handler barrier_am = {.name = "barrier",
					     .hlen = sizeof(struct wire_barrier),
					     .recv = barrier_am_recv};
static const struct am_handler pe_gone_am = {.name = "pe_gone",
					     .hlen = sizeof(struct wire_pe_gone),
					     .recv = pe_gone_am_recv};

void barrier_am_register(void)
{
	am_register(W_BARRIER, &barrier_am);
	am_register(W_PE_GONE, &pe_gone_am);
}
