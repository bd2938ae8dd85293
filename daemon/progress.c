/*
 * The progress loop: each pass acts on the control thread's commands
 * (jobs.c), drains every served client's submission ring (engine.c, which
 * takes each descriptor through the stages: validate, put/get or
 * strided/vector, conflict and deferral, transport, completion posting),
 * polls the transport, and sleeps when there is nothing to do. Also the
 * transport table and the thread's start and stop.
 *
 * Adaptive polling: after its last work the thread spins for spin_us, then
 * sets HOIST_SQ_NEED_WAKEUP in every client's control page, rechecks every
 * ring (Dekker with the client's tail store) and sleeps in the loop's one
 * epoll (loop.h): the doorbell eventfd, the command queue and the
 * transport's descriptors. Clients ring the doorbell only when they see
 * the flag.
 *
 * With more runnable threads than CPUs (PEs waiting for this thread on
 * its CPU, a CPU hog; bench/run-oversub.sh) the spin yields, and each
 * yield is timed: one that gave the CPU away (back after YIELD_GAVE_NS)
 * makes the next idle passes yield every pass rather than every 64th, so
 * a PE that shares this CPU gets it at once; one back only after
 * yield_long_us (default 200) means a thread that keeps the CPU for whole
 * slices shares it: the spin ends and the thread sleeps, and so do the
 * next CROWDED_RUNS idle runs without spinning (then one probes again),
 * so a doorbell's wake-up (which preempts such a thread) brings it back,
 * not the end of the other thread's slice (counters prog_yields,
 * prog_long_yields).
 *
 * CPU hand-off (setting cpu_handoff): the thread publishes the CPU it
 * runs on in every client's control page (prog_cpu, checked on the idle
 * passes that read the clock, stored only when it differs), and a client
 * waiting for a completion publishes its own (wait_cpu). When they share
 * one CPU, only one of them runs at a time: the client yields at once
 * instead of spinning (client/wait.c), and this thread yields right after
 * a pass that posted completions for it, instead of spinning the 64 idle passes before its
 * first yield (~2.5 us: a get 8 B through the daemon with one PE took
 * ~2.3 us where the two ended up on one CPU, bench/run-oversub.sh).
 * Counter prog_handoffs.
 *
 * Lazy barrier notifies (HOIST_SQE_F_LAZY, a one-node job's node barriers:
 * the PEs synchronise among themselves and wait for nothing of the daemon)
 * are counted and acted on, but are not work (drain()): they do not
 * restart the spin, and a thread woken to find nothing else (the client
 * rings when half its SQ holds them) sleeps again without spinning. Else
 * a job of barriers posted one every microsecond kept the thread awake
 * for good, a third runnable thread beside 2 PEs on 2 CPUs (issue 16).
 */
#include "daemon.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "coll.h"
#include "engine.h"
#include "hoist_futex.h"
#include "jobs.h"
#include "log.h"
#include "loop.h"
#include "reg.h"

#define GRACE_NS (20u * 1000u) /* looking on after announcing sleep */
#define SLEEP_MAX_MS 100       /* longest sleep without a doorbell */
#define YIELD_GAVE_NS 2000u    /* a yield this long ran someone else */
#define CROWDED_RUNS 64u       /* idle runs that sleep at once after a late yield */

static unsigned poll_all(struct daemon *d)
{
	unsigned work = 0;
	for (struct client *c = d->active; c; c = c->prog_next)
		if (!c->broken)
			work += drain(d, c);
	return work;
}

/* sched_getcpu() + 1, 0 if not known (the control page's encoding) */
static uint32_t my_cpu(void)
{
	int cpu = sched_getcpu();
	return cpu < 0 ? 0u : (uint32_t)cpu + 1u;
}

/* Tell every client where this thread runs (only stores what changed:
 * the clients read the line). */
static void publish_cpu(struct daemon *d, uint32_t cpu)
{
	for (struct client *c = d->active; c; c = c->prog_next)
		if (hoist_load_relaxed(&c->ctrl->prog_cpu) != cpu)
			hoist_store_relaxed(&c->ctrl->prog_cpu, cpu);
}

/* A client that waits on our CPU got completions since the last look: it
 * runs only when we let go. Only completions count: a pass that only sent
 * a request to another daemon (a put before a quiet across daemons) has
 * nothing for it yet, and a yield then hands the CPU to whatever else is
 * runnable (run-amo's putq across two daemons got slower). */
static int waiter_served(struct daemon *d, uint32_t cpu)
{
	int hit = 0;
	for (struct client *c = d->active; c; c = c->prog_next) {
		int served = c->cq_published != c->handoff_cq;
		c->handoff_cq = c->cq_published;
		if (served && cpu && hoist_load_relaxed(&c->ctrl->wait_cpu) == cpu)
			hit = 1;
	}
	return hit;
}

static void set_need_wakeup(struct daemon *d, int on)
{
	for (struct client *c = d->active; c; c = c->prog_next) {
		uint32_t f = hoist_load_relaxed(&c->ctrl->sq_flags);
		/* a new sleep: a new generation, which each client rings for once */
		hoist_store_relaxed(&c->ctrl->sq_flags,
				    on ? ((f + HOIST_SQ_SLEEP_GEN) | HOIST_SQ_NEED_WAKEUP)
				       : (f & ~HOIST_SQ_NEED_WAKEUP));
	}
}

/* The doorbell rang (a client saw HOIST_SQ_NEED_WAKEUP): it only wakes
 * the loop up; the rings are looked at on the next pass. */
static int doorbell_event(struct daemon *d, void *arg, uint32_t events)
{
	(void)arg;
	(void)events;
	uint64_t v;
	ssize_t r = read(d->doorbell_fd, &v, sizeof(v));
	(void)r;
	STAT_INC(&d->pst, doorbells);
	return 0;
}

/* Commands are waiting: the next pass takes them (handle_commands), which
 * also drains the eventfd. */
static int cmdq_event(struct daemon *d, void *arg, uint32_t events)
{
	(void)d;
	(void)arg;
	(void)events;
	return 0;
}

static void *progress_main(void *arg)
{
	struct daemon *d = arg;
	uint64_t spin_ns = d->cfg.spin_us * 1000u;
	uint64_t yield_long_ns = d->cfg.yield_long_us * 1000u;
	uint64_t idle_since = 0; /* the first clock read of this idle run */
	unsigned idle = 0, passes = 0;
	int gave = 0;         /* the last idle yield gave the CPU away */
	int handoff = d->cfg.cpu_handoff != 0;
	uint32_t cur_cpu = 0; /* what prog_cpu says (see publish_cpu) */
	unsigned crowded = 0; /* idle runs left that sleep without spinning */
	/* since its last sleep the thread found nothing to do but lazy
	 * barrier notifies (drain() does not count them): no spin, sleep on */
	int rested = 0;
	/* a network transport runs (more than one node); with one node only
	 * the rings, the commands and the doorbell need looking at */
	int net = d->net.enabled;

	for (;;) {
		if (cmdq_pending(&d->to_progress) && handle_commands(d))
			break;
		d->more_pending = 0;
		unsigned work = poll_all(d);
		if (net) {
			/* the transport is looked at on every pass: a remote reply
			 * is what a waiting client needs next. What the drain
			 * queued leaves first (verbs: one doorbell for the batch).
			 * Its descriptors: every pass (tcp: the sockets are its
			 * completions) or every few (verbs: the completion queue
			 * is polled in user space, poll()). */
			d->xport->flush(d);
			if (d->xport->poll)
				work += (unsigned)d->xport->poll(d);
			if ((++passes & d->xport->fd_pass_mask) == 0)
				work += (unsigned)loop_wait(&d->loop, 0);
			d->xport->flush(d);
			xp_amo_wake(d); /* after the replies left */
		}
		if (work) {
			STAT_INC(&d->pst, loops_busy);
			idle = 0;
			idle_since = 0;
			rested = 0;
			if (handoff && !crowded && !d->more_pending) {
				uint32_t cpu = my_cpu();
				/* a client that joined since learns it now: a
				 * thread kept busy by it reads no clock idle pass
				 * (it_oversub_handoff under TSan: the daemon handed
				 * off 2002 times, the client never) */
				if (cpu != cur_cpu || d->cpu_unpublished) {
					d->cpu_unpublished = 0;
					publish_cpu(d, cur_cpu = cpu);
				}
				if (waiter_served(d, cpu)) {
					STAT_INC(&d->pst, prog_handoffs);
					uint64_t t = now_ns();
					sched_yield();
					/* timed like the idle yields: one that ran a
					 * CPU hog for a slice stops the hand-offs and
					 * the spin for the next CROWDED_RUNS idle runs */
					if (yield_long_ns && now_ns() - t >= yield_long_ns) {
						STAT_INC(&d->pst, prog_long_yields);
						crowded = CROWDED_RUNS;
					}
				}
			}
			continue;
		}
		/* read the clock (and maybe yield) only every few idle passes;
		 * with peers a pass costs an epoll_wait, so fewer of them: a PE
		 * waiting for this core should not wait ~20 us for it */
		++idle;
		if (!gave && (idle & (net ? 7u : 63u)) != 0) {
			hoist_cpu_relax();
			continue;
		}
		uint64_t t = now_ns();
		if (!idle_since) {
			idle_since = t;
			if (crowded) /* a recent yield came back late: sleep */
				crowded--;
		}
		if (net) {
			d->xport->timers(d, t);
			xp_amo_wake(d); /* none are left waiting through a sleep */
		}
		reg_timers(d, t); /* registrations whose grace period ended */
		if (handoff) /* where we run now; new clients learn it too */
			publish_cpu(d, cur_cpu = my_cpu());
		if (!crowded && !rested && t - idle_since < spin_ns) {
			/* a PE waiting for us may share this core: let it run */
			sched_yield();
			uint64_t dt = now_ns() - t;
			STAT_INC(&d->pst, prog_yields);
			gave = dt >= YIELD_GAVE_NS;
			if (!yield_long_ns || dt < yield_long_ns)
				continue;
			STAT_INC(&d->pst, prog_long_yields);
			crowded = CROWDED_RUNS;
		}
		gave = 0;
		/* Going to sleep: announce it, then keep looking for a grace
		 * period. Clients fence only before they wait (hoist__kick), so a
		 * descriptor published just now may have missed the flag; it
		 * shows up here within far less than the grace period. */
		set_need_wakeup(d, 1);
		hoist_smp_mb();
		unsigned found = 0;
		for (uint64_t g0 = now_ns(); !found && now_ns() - g0 < GRACE_NS;) {
			found = poll_all(d) || cmdq_pending(&d->to_progress);
			hoist_cpu_relax();
		}
		if (found) {
			set_need_wakeup(d, 0);
			idle = 0;
			idle_since = 0;
			continue;
		}
		STAT_INC(&d->pst, sleeps);
		/* doorbell, commands, the transport's descriptors. Bounded: the
		 * safety net behind the grace period, heartbeats, and the
		 * watchdog's proof of life. The transport arms what must wake
		 * us (verbs: the completion channel); work it found meanwhile
		 * means no sleep. */
		int timeout = SLEEP_MAX_MS;
		if (net && (int)(d->cfg.heartbeat_ms / 4) + 1 < timeout)
			timeout = (int)(d->cfg.heartbeat_ms / 4) + 1;
		if (net && d->xport->arm && d->xport->arm(d))
			timeout = 0;
		loop_wait(&d->loop, timeout);
		if (net) {
			d->xport->flush(d);
			xp_amo_wake(d);
		}
		__atomic_store_n(&d->heartbeat, d->heartbeat + 1, __ATOMIC_RELAXED);
		set_need_wakeup(d, 0);
		idle = 0;
		idle_since = 0;
		rested = 1;
	}
	/* stopping: tell every client the daemon is gone */
	for (struct client *c = d->active; c; c = c->prog_next) {
		__atomic_store_n(&c->ctrl->job_error, -ECONNRESET, __ATOMIC_RELEASE);
		client_wake(c, &c->ctrl->barrier_epoch, HOIST_EPOCH_WAITING);
		client_wake(c, &c->ctrl->cq_tail, HOIST_CQ_WAITING);
	}
	return NULL;
}

int progress_start(struct daemon *d)
{
	int rc = reg_init(d);
	if (rc)
		return rc;
	if ((rc = loop_init(&d->loop, d)) ||
	    (rc = loop_add(&d->loop, d->doorbell_fd, EPOLLIN, doorbell_event, NULL)) ||
	    (rc = loop_add(&d->loop, d->to_progress.efd, EPOLLIN, cmdq_event, NULL))) {
		loop_fini(&d->loop);
		reg_fini(d);
		return rc;
	}
	rc = -EINVAL;
	const char *want = d->cfg.transport;
	const char *const *order = transport_order(want, d->net.enabled);
	if (!order) {
		hlog_err("transport %s: not one of auto, verbs, tcp", want);
		loop_fini(&d->loop);
		reg_fini(d);
		return -EINVAL;
	}
	d->local = transport_find("self");
	d->xport = NULL;
	for (size_t i = 0; i < 2 && order[i]; i++) {
		const struct transport_ops *t = transport_find(order[i]);
		d->xport = t;
		rc = t->start ? t->start(d) : 0;
		if (!rc)
			break;
		d->xport = NULL;
		if (!t->rdma)
			break;
		if (i + 1 < 2 && order[i + 1])
			hlog_info("transport %s: no usable RDMA device for this node's address; using %s",
				  want, order[i + 1]);
		else
			hlog_err("transport %s: no usable RDMA device for this node's address (%s)",
				 t->name, strerror(-rc));
	}
	if (!d->xport) {
		loop_fini(&d->loop);
		reg_fini(d);
		return rc;
	}
	if (d->net.enabled)
		hlog_info("transport: %s (setting transport=%s)", d->xport->name, want);
	else
		hlog_info("transport: %s (one node: no network transport, same-node copies only)",
			  d->xport->name);
	rc = pthread_create(&d->progress_tid, NULL, progress_main, d);
	if (rc) {
		if (d->xport->stop)
			d->xport->stop(d);
		loop_fini(&d->loop);
		reg_fini(d);
	}
	return -rc;
}

void progress_stop(struct daemon *d)
{
	cmdq_push(&d->to_progress, CMD_STOP, NULL);
	pthread_join(d->progress_tid, NULL);
	for (struct job *j = d->pjobs; j; j = j->prog_next) {
		free(j->nodes);
		j->nodes = NULL;
		coll_job_free(j);
	}
	reg_release_all(d); /* before the transport that made the handles stops */
	if (d->xport->stop)
		d->xport->stop(d);
	xp_amo_free(d);
	loop_fini(&d->loop);
	reg_fini(d);
	/* the cluster: a transport that started frees it in stop */
	free(d->net.peers);
	d->net.peers = NULL;
}
