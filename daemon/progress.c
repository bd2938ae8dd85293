/*
 * The progress thread: drains every client's submission ring in batches,
 * validates each descriptor, routes it (same node: local.c), posts
 * completions, and sleeps when there is nothing to do.
 *
 * Adaptive polling: after its last work the thread spins for spin_us, then
 * sets HOIST_SQ_NEED_WAKEUP in every client's control page, rechecks every
 * ring (Dekker with the client's tail store) and sleeps in poll() on the
 * doorbell eventfd and the command queue. Clients ring the doorbell only
 * when they see the flag.
 */
#include "daemon.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hoist_futex.h"
#include "log.h"
#include "validate.h"

#define GRACE_NS (20u * 1000u) /* looking on after announcing sleep */
#define SLEEP_MAX_MS 100       /* longest sleep without a doorbell */

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void cq_post(struct client *c, uint64_t user_data, int32_t res, uint8_t opcode)
{
	struct hoist_cqe *e = &c->cq[c->cq_tail & c->cq_mask];
	e->user_data = user_data;
	e->res = res;
	e->opcode = opcode;
	e->flags = 0;
	c->cq_tail++;
	if (res < 0)
		STAT_INC(&c->st, errors);
}

static void cq_flush(struct client *c)
{
	if (c->cq_published == c->cq_tail)
		return;
	c->cq_published = c->cq_tail;
	/* pairs with hoist_load_acquire(&ctrl->cq_tail) in the client's reap */
	hoist_store_release(&c->ctrl->cq_tail, c->cq_tail);
	client_wake(c, &c->ctrl->cq_tail, HOIST_CQ_WAITING);
}

static void client_break(struct client *c, const char *why)
{
	if (c->broken)
		return;
	c->broken = 1;
	hlog_warn("client pid %d (job %s rank %d) broke the ring protocol: %s; no longer served",
		  (int)c->pid, c->job->key, c->rank, why);
}

static struct client *route(struct client *c, const struct hoist_sqe *sqe, int *err)
{
	struct client *t = c->job->pe[sqe->pe];
	if (!t) {
		*err = -ECONNRESET; /* the target PE is gone */
		return NULL;
	}
	return t;
}

/* Execute one validated descriptor. Returns 1 if it completed (CQE needed
 * per flags), 0 if the ring must stall here (quiet with work in flight),
 * and stores the result in *res. */
static int execute(struct daemon *d, struct client *c, const struct hoist_sqe *sqe, int *res)
{
	struct client *t;
	*res = 0;
	switch (sqe->opcode) {
	case HOIST_OP_PUT:
		if (!(t = route(c, sqe, res)))
			return 1;
		*res = local_put(c, sqe, t);
		STAT_INC(&c->st, puts);
		STAT_ADD(&c->st, put_bytes, sqe->len);
		return 1;
	case HOIST_OP_GET:
		if (!(t = route(c, sqe, res)))
			return 1;
		*res = local_get(c, sqe, t);
		STAT_INC(&c->st, gets);
		STAT_ADD(&c->st, get_bytes, sqe->len);
		return 1;
	case HOIST_OP_QUIET:
		if (c->outstanding)
			return 0;
		STAT_INC(&c->st, quiets);
		return 1;
	case HOIST_OP_FENCE:
		/* Every transport delivers one client's puts to one PE in order,
		 * so a fence needs no action yet. */
		STAT_INC(&c->st, fences);
		return 1;
	case HOIST_OP_BARRIER_NOTIFY:
		if (c->outstanding)
			return 0;
		*res = barrier_notify(d, c);
		return 1;
	case HOIST_OP_NOP:
		STAT_INC(&c->st, nops);
		return 1;
	}
	*res = -EINVAL;
	return 1;
}

/* Drain up to `batch` descriptors of one client. Returns how many. */
static unsigned drain(struct daemon *d, struct client *c)
{
	struct hoist_ctrl *ctrl = c->ctrl;
	/* pairs with hoist_store_release(&ctrl->sq_tail) in hoist__sqe_submit */
	uint32_t tail = hoist_load_acquire(&ctrl->sq_tail);
	uint32_t avail = tail - c->sq_head;
	if (!avail)
		return 0;
	if (avail > c->sq_entries) {
		client_break(c, "sq_tail ahead of the ring");
		return 0;
	}
	if (avail > d->cfg.batch)
		avail = (uint32_t)d->cfg.batch;

	struct validate_geom geom = {
		.job_size = c->job->size,
		.heap_bytes = c->heap.bytes,
		.staging_bytes = c->staging.bytes,
	};
	/* pairs with the client's hoist_store_release(&ctrl->cq_head) */
	uint32_t cq_head = hoist_load_acquire(&ctrl->cq_head);
	if (c->cq_tail - cq_head > c->cq_entries) {
		client_break(c, "cq_head ahead of the ring");
		return 0;
	}
	unsigned done = 0;
	while (done < avail) {
		if (c->cq_tail - cq_head >= c->cq_entries) {
			cq_head = hoist_load_acquire(&ctrl->cq_head);
			if (c->cq_tail - cq_head >= c->cq_entries) {
				STAT_INC(&c->st, cq_full);
				break; /* the client must reap first */
			}
		}
		/* One copy of the descriptor: the client may scribble on the
		 * slot while we work, we only trust our copy. */
		struct hoist_sqe sqe;
		memcpy(&sqe, &c->sq[c->sq_head & c->sq_mask], sizeof(sqe));
		int res = validate_sqe(&sqe, &geom);
		if (res) {
			STAT_INC(&c->st, rejected);
			cq_post(c, sqe.user_data, res, sqe.opcode);
		} else {
			if (!execute(d, c, &sqe, &res))
				break; /* stalled: retry on a later pass */
			if (res || (sqe.flags & HOIST_SQE_F_CQE))
				cq_post(c, sqe.user_data, res, sqe.opcode);
		}
		c->sq_head++;
		done++;
	}
	if (done) {
		/* pairs with hoist_load_acquire(&ctrl->sq_head) in the client:
		 * consumed descriptors and their staged payloads may be reused */
		hoist_store_release(&ctrl->sq_head, c->sq_head);
		STAT_INC(&c->st, batches);
	}
	cq_flush(c);
	return done;
}

static void client_retire(struct daemon *d, struct client *c)
{
	struct client **pp = &d->active;
	while (*pp && *pp != c)
		pp = &(*pp)->prog_next;
	if (*pp)
		*pp = c->prog_next;
	barrier_depart(d, c->job, c, c->clean_detach);
	if (cmdq_push(&d->to_control, CMD_CLIENT_FREE, c))
		hlog_err("out of memory handing client %llu back; leaking it",
			 (unsigned long long)c->id);
}

static int handle_commands(struct daemon *d)
{
	int stop = 0;
	struct cmd *cmd = cmdq_take_all(&d->to_progress);
	while (cmd) {
		struct cmd *next = cmd->next;
		STAT_INC(&d->pst, commands);
		switch (cmd->type) {
		case CMD_JOB_START: {
			struct job *j = cmd->obj;
			for (int32_t r = 0; r < j->size; r++) {
				j->pe[r]->prog_next = d->active;
				d->active = j->pe[r];
			}
			break;
		}
		case CMD_CLIENT_GONE: {
			struct client *c = cmd->obj;
			drain(d, c); /* what it posted before dying still runs */
			client_retire(d, c);
			break;
		}
		case CMD_STOP:
			stop = 1;
			break;
		case CMD_CLIENT_FREE:
			break;
		}
		free(cmd);
		cmd = next;
	}
	return stop;
}

static unsigned poll_all(struct daemon *d)
{
	unsigned work = 0;
	for (struct client *c = d->active; c; c = c->prog_next)
		if (!c->broken)
			work += drain(d, c);
	return work;
}

static void set_need_wakeup(struct daemon *d, int on)
{
	for (struct client *c = d->active; c; c = c->prog_next) {
		uint32_t f = hoist_load_relaxed(&c->ctrl->sq_flags);
		hoist_store_relaxed(&c->ctrl->sq_flags, on ? (f | HOIST_SQ_NEED_WAKEUP)
							    : (f & ~HOIST_SQ_NEED_WAKEUP));
	}
}

static void *progress_main(void *arg)
{
	struct daemon *d = arg;
	uint64_t spin_ns = d->cfg.spin_us * 1000u;
	uint64_t last_work = now_ns();
	unsigned idle = 0;

	for (;;) {
		if (cmdq_pending(&d->to_progress) && handle_commands(d))
			break;
		if (poll_all(d)) {
			STAT_INC(&d->pst, loops_busy);
			idle = 0;
			continue;
		}
		/* read the clock only every few idle passes */
		if ((++idle & 63) != 0) {
			hoist_cpu_relax();
			continue;
		}
		uint64_t t = now_ns();
		if (idle == 64)
			last_work = t;
		if (t - last_work < spin_ns) {
			/* a PE waiting for us may share this core: let it run */
			sched_yield();
			continue;
		}
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
			continue;
		}
		STAT_INC(&d->pst, sleeps);
		struct pollfd pfd[2] = {
			{.fd = d->doorbell_fd, .events = POLLIN},
			{.fd = d->to_progress.efd, .events = POLLIN},
		};
		/* bounded: the safety net behind the grace period, and the
		 * watchdog's proof of life */
		int n = poll(pfd, 2, SLEEP_MAX_MS);
		__atomic_store_n(&d->heartbeat, d->heartbeat + 1, __ATOMIC_RELAXED);
		if (n > 0 && (pfd[0].revents & POLLIN)) {
			uint64_t v;
			ssize_t r = read(d->doorbell_fd, &v, sizeof(v));
			(void)r;
			STAT_INC(&d->pst, doorbells);
		}
		set_need_wakeup(d, 0);
		idle = 0;
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
	int rc = pthread_create(&d->progress_tid, NULL, progress_main, d);
	return -rc;
}

void progress_stop(struct daemon *d)
{
	cmdq_push(&d->to_progress, CMD_STOP, NULL);
	pthread_join(d->progress_tid, NULL);
}
