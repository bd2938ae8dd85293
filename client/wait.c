/*
 * Posting descriptors and waiting for completions, and what to do when
 * something runs out: a full SQ, every op slot taken, no staging space.
 * The answer (make progress, quiet if that frees something, retry) lives
 * here and only here; quiet with it, so nothing below calls up.
 *
 * Waiting spins and yields for spin_us (a yield that comes back late cuts
 * that short: see wait_step), then sleeps on a futex in the control page
 * (cq_tail for completions, barrier_epoch for barriers) after announcing it
 * with a flag the daemon checks after each publish (Dekker, see
 * hoist_shm.h). Sleeps are bounded so a vanished daemon is noticed.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "hoist_futex.h"
#include "internal.h"

#define SLEEP_SLICE_NS (50u * 1000u * 1000u) /* recheck the daemon's liveness */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int hoist__check_daemon(struct hoist_ctx *c)
{
	struct pollfd p = {.fd = c->sock, .events = POLLIN};
	if (c->daemon_gone ||
	    (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLIN)))) {
		/* after attach the daemon writes only answers, which ptr.c
		 * reads at once. Remembered: the direct path must not go on
		 * as if the job were alive (rma.c direct_base) */
		c->daemon_gone = 1;
		return -ECONNRESET;
	}
	return 0;
}

int hoist__check_daemon_due(struct hoist_ctx *c)
{
	/* a poll(2) is a system call: it was the largest part of a 2-PE node
	 * barrier's critical path (issue 16); a barrier of 2 PEs takes well
	 * under a microsecond */
	uint64_t t = mono_ns();
	if (!c->daemon_gone && t - c->nc_checked_ns < 1000000u)
		return 0;
	c->nc_checked_ns = t;
	return hoist__check_daemon(c);
}

/* One completion: the op it names is done (or, for a collective's
 * partial completion, one source block landed); a failed put that asked
 * for no completion is reported at the next quiet. */
static void reap_one(void *arg, const struct hoist_cqe *e)
{
	struct hoist_ctx *c = arg;
	uint64_t ud = e->user_data;
	if (ud == 0 || ud > c->nops + 1) {
		/* a put (no completion asked) failed: report at quiet */
		if (!c->sticky_err)
			c->sticky_err = e->res ? e->res : -EIO;
	} else if (e->flags & HOIST_CQE_F_PARTIAL) {
		/* a collective's source block landed; not its end */
		struct hoist_op *op = &c->ops[ud - 1];
		if (op->busy && op->arrived && e->res >= 0 && e->res < c->size)
			op->arrived[e->res] = 1;
	} else {
		struct hoist_op *op = &c->ops[ud - 1];
		/* a slot no operation holds: a completion that came after its
		 * wait failed (only when the daemon is gone, and then the slot
		 * stays taken: hoist_wait, get_inline); nothing to deliver */
		if (!op->busy)
			return;
		/* a get whose result came in the completion: the CQE slot is
		 * reused once reaped, so the data go to dst now (an nbi get's
		 * dst is undefined until quiet, so early is fine) */
		int32_t res = e->res;
		if (op->copyout == 3 && res == 0) {
			if ((e->flags & HOIST_CQE_F_DATA) && op->len <= HOIST_CQE_DATA_MAX)
				memcpy(op->dst, e->data, op->len);
			else
				res = -EPROTO; /* the daemon sent no data */
		}
		op->res = res;
		op->done = 1;
	}
}

int hoist__reap(struct hoist_ctx *c)
{
	int n = hoist_ring_reap(&c->ring, reap_one, c);
	uint32_t head;
	if (hoist_ring_sq_head(&c->ring, &head)) /* put payloads are consumed */
		staging_sq_done(&c->stage, head);
	return n;
}

/* One round of "nothing yet": spin, yield, or sleep on *word != seen.
 *
 * The policy, for more runnable threads than CPUs (2 PEs + the progress
 * thread on 2 CPUs, more PEs, a CPU hog; bench/run-oversub.sh):
 *  - 64 rounds of cpu_relax: the daemon answers a descriptor in well under
 *    a microsecond when it has a CPU of its own;
 *  - then, until HOIST_SPIN_US has passed, a sched_yield every 16th round,
 *    or every round once a yield gave the CPU away (it came back after
 *    YIELD_GAVE_NS: someone, maybe the daemon, was waiting for this CPU).
 *    Each yield is timed;
 *  - a yield that came back only after HOIST_YIELD_LONG_US (default 200)
 *    means a thread that does not hand the CPU back soon shares it (a hog,
 *    a PE computing): yielding on would give it a slice each time, so the
 *    wait sleeps at once, and so do the next CROWDED_WAITS waits after
 *    their 64 relaxes, without a yield (then one probes with yields
 *    again). The futex sleep wins the CPU back sooner: the daemon's
 *    wake-up preempts a thread that never sleeps, a yield waits for the
 *    end of its slice (10.6 us per get through the daemon with one hog,
 *    issue 16; a whole slice when they share one CPU, it_oversub);
 *  - else after HOIST_SPIN_US: the futex sleep, announced by flag.
 * A wait for a completion or an epoch first says on which CPU it waits
 * (ctrl->wait_cpu) and looks where the progress thread last ran
 * (ctrl->prog_cpu). The same CPU: the daemon gets to serve us only when
 * we let go of the CPU, so the wait yields at once and on every round
 * (no 64 relaxes: they were ~1.2 us of nothing per get, and the progress
 * thread, seeing wait_cpu, yields straight back after serving; get 8 B
 * through the daemon with 1 PE: bench/run-oversub.sh). Else the policy
 * above.
 * The counts go to the control page (wait_yields, wait_long_yields,
 * wait_sleeps; the ring-full wait's yields count there too), which
 * hoistctl stats reports per client. */
#define YIELD_GAVE_NS 2000u
#define CROWDED_WAITS 64u

struct waiter {
	uint64_t start;
	unsigned spins;
	int gave;   /* the last yield gave the CPU away */
	int sleepy; /* a yield came back late: this wait sleeps from now on */
	int shared; /* the progress thread last ran on this wait's CPU */
};

/* Start of a wait: publish our CPU, 1 if the progress thread last ran on
 * it (see wait_step). */
static int wait_cpu_begin(struct hoist_ctx *c)
{
	struct hoist_ctrl *ctrl = c->ring.ctrl;
	if (c->no_cpu_handoff)
		return 0;
	int cpu = sched_getcpu();
	uint32_t me = cpu < 0 ? 0u : (uint32_t)cpu + 1u;
	if (hoist_load_relaxed(&ctrl->wait_cpu) != me)
		hoist_store_relaxed(&ctrl->wait_cpu, me);
	return me && hoist_load_relaxed(&ctrl->prog_cpu) == me;
}

/* End of a wait: no longer waiting on any CPU. */
static void wait_cpu_end(struct hoist_ctx *c)
{
	struct hoist_ctrl *ctrl = c->ring.ctrl;
	if (hoist_load_relaxed(&ctrl->wait_cpu))
		hoist_store_relaxed(&ctrl->wait_cpu, 0);
}

/* only this client writes them; the daemon reads them for its stats */
static void count(uint64_t *ctr)
{
	__atomic_store_n(ctr, __atomic_load_n(ctr, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* ud: a completion wait's op (hoist__op_udata; the daemon wakes the sleep
 * only for its completions, ctrl.cq_wake_ud), 0 for any and for an epoch
 * wait. */
static int wait_step(struct hoist_ctx *c, struct waiter *w, uint32_t *word, uint32_t seen,
		     uint32_t flag, uint64_t ud)
{
	struct hoist_ctrl *ctrl = c->ring.ctrl;
	if (!w->spins) {
		w->gave = w->shared = wait_cpu_begin(c);
		if (w->shared)
			count(&ctrl->wait_handoffs);
	}
	if (++w->spins < 64 && !w->shared) {
		hoist_cpu_relax();
		return 0;
	}
	uint64_t t = mono_ns();
	if (!w->start) {
		w->start = t;
		if (c->crowded) { /* a recent yield came back late */
			c->crowded--;
			w->sleepy = 1;
		}
	}
	if (!w->sleepy && t - w->start < (uint64_t)c->spin_us * 1000u) {
		if (!w->gave && (w->spins & 15) != 0) {
			hoist_cpu_relax();
			return 0;
		}
		sched_yield();
		uint64_t dt = mono_ns() - t;
		count(&ctrl->wait_yields);
		w->gave = w->shared || dt >= YIELD_GAVE_NS;
		if (!c->yield_long_us || dt < (uint64_t)c->yield_long_us * 1000u)
			return 0;
		count(&ctrl->wait_long_yields);
		w->sleepy = 1;
		c->crowded = CROWDED_WAITS;
	}
	if (flag == HOIST_CQ_WAITING && __atomic_load_n(&ctrl->cq_wake_ud, __ATOMIC_RELAXED) != ud)
		__atomic_store_n(&ctrl->cq_wake_ud, ud, __ATOMIC_RELAXED);
	uint32_t f = hoist_load_relaxed(&ctrl->cq_flags);
	hoist_store_relaxed(&ctrl->cq_flags, f | flag);
	hoist_smp_mb(); /* pairs with the daemon's fence in client_wake(), cq_flush() */
	int rc = 0;
	if (hoist_load_relaxed(word) == seen) {
		count(&ctrl->wait_sleeps);
		rc = hoist_futex_wait(word, seen, SLEEP_SLICE_NS);
		if (rc == -ETIMEDOUT)
			rc = hoist__check_daemon(c);
		else
			rc = 0;
	}
	f = hoist_load_relaxed(&ctrl->cq_flags);
	hoist_store_relaxed(&ctrl->cq_flags, f & ~flag);
	return rc;
}

/* The spin reads only the next completion's slot until the daemon
 * publishes it (its phase, hoist_shm.h "CQE publication"): the line that
 * holds the completion itself, where polling cq_tail cost a second
 * transfer before the CQE's. The reaping here takes the completions only:
 * not the daemon's sq_head (hoist__reap), a line the progress thread
 * stores at the end of every drain. Read here, the client held it shared
 * just then, and the daemon's store of it had to take it back before its
 * completion could be seen (stores become visible in order): one more
 * transfer on a get's path (issue 16). What
 * sq_head frees (SQ slots, staged put payloads) is collected where it is
 * needed: a full SQ, staging space (hoist__sqe_wait,
 * hoist__stage_alloc_slow). */
static int wait_op(struct hoist_ctx *c, struct hoist_op *op, struct waiter *w)
{
	hoist__kick(c);
	hoist_ring_reap(&c->ring, reap_one, c);
	for (;;) {
		if (op->done)
			return op->res;
		if (hoist_ring_cq_ready(&c->ring)) {
			hoist_ring_reap(&c->ring, reap_one, c);
			continue;
		}
		/* cq_tail is stored after the phases: with no CQE ready it
		 * equals our cq_head, the value the sleep expects */
		int rc = wait_step(c, w, &c->ring.ctrl->cq_tail, c->ring.cq_head, HOIST_CQ_WAITING,
				   hoist__op_udata(c, op));
		if (rc)
			return rc;
	}
}

int hoist__wait_op(struct hoist_ctx *c, struct hoist_op *op)
{
	struct waiter w = {0};
	int rc = wait_op(c, op, &w);
	if (w.spins)
		wait_cpu_end(c);
	return rc;
}

static int wait_arrival(struct hoist_ctx *c, struct hoist_op *op, int pe, struct waiter *w)
{
	hoist__kick(c);
	for (;;) {
		hoist__reap(c);
		if (op->done)
			return op->res;
		if (op->arrived[pe])
			return 0;
		if (hoist_ring_cq_ready(&c->ring))
			continue;
		int rc = wait_step(c, w, &c->ring.ctrl->cq_tail, c->ring.cq_head, HOIST_CQ_WAITING,
				   hoist__op_udata(c, op));
		if (rc)
			return rc;
	}
}

int hoist__wait_arrival(struct hoist_ctx *c, struct hoist_op *op, int pe)
{
	struct waiter w = {0};
	int rc = wait_arrival(c, op, pe, &w);
	if (w.spins)
		wait_cpu_end(c);
	return rc;
}

static int wait_epoch(struct hoist_ctx *c, uint32_t target, struct waiter *w);

int hoist__wait_epoch(struct hoist_ctx *c, uint32_t target)
{
	if (c->nb_pend_n) { /* the epoch counts them: tell the daemon */
		int frc = hoist__nb_flush(c);
		if (frc)
			return frc;
		c->nb_flush_wait++;
	}
	struct waiter w = {0};
	int rc = wait_epoch(c, target, &w);
	if (w.spins)
		wait_cpu_end(c);
	return rc;
}

static int wait_epoch(struct hoist_ctx *c, uint32_t target, struct waiter *w)
{
	struct hoist_ctrl *ctrl = c->ring.ctrl;
	hoist__kick(c);
	for (;;) {
		/* pairs with hoist_store_release(&ctrl->barrier_epoch) in the
		 * daemon's barrier_complete(): others' puts are visible */
		uint32_t e = hoist_load_acquire(&ctrl->barrier_epoch);
		if ((int32_t)(e - target) >= 0)
			return 0;
		int32_t err = __atomic_load_n(&ctrl->job_error, __ATOMIC_ACQUIRE);
		if (err)
			return err;
		hoist__reap(c);
		int rc = wait_step(c, w, &ctrl->barrier_epoch, e, HOIST_EPOCH_WAITING, 0);
		if (rc)
			return rc;
	}
}

int hoist__nb_arrived(const struct hoist_ctx *c, uint32_t k, int from)
{
	int p = from;
	/* acquire: every store of that PE's before its arrival is visible */
	while (p < c->size && (int32_t)(__atomic_load_n(c->nb_in[p], __ATOMIC_ACQUIRE) - k) >= 0)
		p++;
	return p;
}

/* Node barrier k (sync.c): spin, then yield (two cores, several PEs: the
 * last one to arrive needs a CPU; a yield back late ends the yielding as
 * in wait_step, and counts the same), then sleep on nb_gen in slices that
 * recheck the job's error, the daemon's epoch and the daemon's liveness.
 * Complete when every PE's nb_in reached k (the PEs found arrived stay
 * counted: p). The daemon's epoch: it counts every PE's notify too, so
 * when it reached this barrier every PE arrived and its puts completed;
 * a PE that never arrives here (it could not map the lines) then costs a
 * slice, not a hang. A dead peer makes the daemon fail the job
 * (job_error), which a slice sees; a dead daemon the last PE to arrive
 * (nb_error) or a slice. */
int hoist__wait_node_barrier(struct hoist_ctx *c, uint32_t k)
{
	struct hoist_heap_wake *l = c->nb_line;
	struct hoist_ctrl *ctrl = c->ring.ctrl;
	uint64_t start = 0;
	int sleepy = 0; /* as in wait_step: a late yield, now or lately */
	int p = 0;      /* PEs 0..p-1 arrived */
	int rc0;
	for (unsigned spins = 0;; spins++) {
		if ((p = hoist__nb_arrived(c, k, p)) == c->size)
			return 0;
		if (spins % 64 != 63) {
			hoist_cpu_relax();
			continue;
		}
		int32_t err = __atomic_load_n(&ctrl->job_error, __ATOMIC_ACQUIRE);
		/* the last to arrive found the daemon (ours: the node's) gone */
		if (!err && (err = __atomic_load_n(&l->nb_error, __ATOMIC_ACQUIRE)))
			c->daemon_gone = 1;
		if (err)
			return err;
		uint32_t e = hoist_load_acquire(&ctrl->barrier_epoch);
		if ((int32_t)(e - c->barrier_target) >= 0)
			return 0;
		uint64_t t = mono_ns();
		if (!start) {
			start = t;
			if (c->crowded) {
				c->crowded--;
				sleepy = 1;
			}
		}
		if (!sleepy && t - start < (uint64_t)c->spin_us * 1000u) {
			sched_yield(); /* the one we wait for may need our CPU */
			uint64_t dt = mono_ns() - t;
			count(&ctrl->wait_yields);
			if (!c->yield_long_us || dt < (uint64_t)c->yield_long_us * 1000u)
				continue;
			count(&ctrl->wait_long_yields);
			sleepy = 1;
			c->crowded = CROWDED_WAITS;
		}
		/* before a long wait the daemon counts what it has not been
		 * told (a PE that waits for the daemon's epoch needs that), and
		 * the notifies went without a doorbell: a sleeping daemon is
		 * woken to count them (phases, prefetches) */
		if (c->nb_pend_n) {
			if ((rc0 = hoist__nb_flush(c)))
				return rc0;
			c->nb_flush_wait++;
		}
		hoist__kick(c);
		__atomic_fetch_add(&l->nb_sleepers, 1, __ATOMIC_SEQ_CST);
		uint32_t g = __atomic_load_n(&l->nb_gen, __ATOMIC_SEQ_CST);
		int rc = 0;
		if ((p = hoist__nb_arrived(c, k, p)) != c->size &&
		    !__atomic_load_n(&l->nb_error, __ATOMIC_SEQ_CST)) {
			count(&ctrl->wait_sleeps);
			rc = hoist_futex_wait(&l->nb_gen, g, SLEEP_SLICE_NS);
			rc = rc == -ETIMEDOUT ? hoist__check_daemon(c) : 0;
		}
		__atomic_fetch_sub(&l->nb_sleepers, 1, __ATOMIC_SEQ_CST);
		if (rc)
			return rc;
	}
}

/* Tell the daemon the pending node barriers (c->nb_pend_n of them, all of
 * phase c->nb_pend_phase; counted by sync.c's node_notify, told here in
 * the posting layer, since every post tells them first): one lazy notify
 * descriptor whose len is their count. 0, or -errno (the SQ stayed full:
 * the daemon is gone). */
int hoist__nb_flush(struct hoist_ctx *c)
{
	if (!c->nb_pend_n)
		return 0;
	struct hoist_sqe *sqe;
	if (__builtin_expect(hoist_ring_sqe_get(&c->ring, &sqe) != 0, 0)) {
		c->nb_sq_waits++;
		int rc = hoist__sqe_wait(c, &sqe);
		if (rc)
			return rc;
	}
	*sqe = (struct hoist_sqe){.opcode = HOIST_OP_BARRIER_NOTIFY,
				  .flags = HOIST_SQE_F_LAZY,
				  .remote_off = c->nb_pend_phase,
				  .len = c->nb_pend_n};
	c->nb_pend_n = 0;
	c->nb_notifies++;
	/* nothing a quiet must wait for: the notify completes nothing of ours
	 * and a failure of the job reaches us through job_error; nothing a
	 * direct access must wait for either (no data; the daemon may hold it
	 * until the other PEs' notifies came). No doorbell: a sleeping daemon
	 * woken per barrier takes a CPU from the PEs (2 CPUs); it counts the
	 * notifies when it next looks, and HOIST_SQE_F_LAZY tells it that they
	 * are no reason to stay awake polling for more (they came every
	 * microsecond: it never slept, a third runnable thread on 2 CPUs) */
	int psq = c->posted_since_quiet;
	uint32_t ops_tail = c->sq_ops_tail;
	hoist__sqe_submit_lazy(c);
	c->posted_since_quiet = psq;
	c->sq_ops_tail = ops_tail;
	/* half the SQ holds notifies the daemon has not taken (barriers of
	 * alternating phases): ring (once per daemon sleep, hoist_ring_kick)
	 * so that it drains them while we go on, instead of a notify finding
	 * the SQ full and waiting for the daemon to wake up */
	struct hoist_ring *ring = &c->ring;
	if (ring->sq_tail - ring->sq_head_seen > (ring->sq_mask + 1) / 2) {
		uint32_t head;
		if (hoist_ring_sq_head(ring, &head))
			staging_sq_done(&c->stage, head);
		if (ring->sq_tail - ring->sq_head_seen > (ring->sq_mask + 1) / 2) {
			uint32_t f = ring->rang_flags;
			hoist_ring_kick(ring);
			c->nb_kicks += ring->rang_flags != f;
		}
	}
	return 0;
}

/* A yield of the ring-full wait, counted (and timed) like wait_step's:
 * a yield back late handed the CPU to another thread for that long. */
static void sqe_yield(struct hoist_ctx *c)
{
	struct hoist_ctrl *ctrl = c->ring.ctrl;
	uint64_t t = mono_ns();
	sched_yield();
	count(&ctrl->wait_yields);
	if (c->yield_long_us && mono_ns() - t >= (uint64_t)c->yield_long_us * 1000u)
		count(&ctrl->wait_long_yields);
}

/* The SQ is full: make progress until the daemon frees a slot. */
int hoist__sqe_wait(struct hoist_ctx *c, struct hoist_sqe **out)
{
	struct waiter w = {0};
	hoist__kick(c);
	for (;;) {
		hoist__reap(c);
		if (hoist_ring_sqe_get(&c->ring, out) == 0)
			return 0;
		/* the daemon drains on its own; sleep on cq_tail is not
		 * meaningful here, so spin/yield and check liveness. A full
		 * ring means the daemon is the bottleneck: give it the CPU
		 * soon when it shares ours (sched_yield is a no-op when
		 * nothing else is runnable) */
		if (++w.spins % 4096 == 0) {
			int rc = hoist__check_daemon(c);
			if (rc)
				return rc;
			sqe_yield(c);
		} else if (w.spins % 64 == 0) {
			sqe_yield(c);
		} else {
			hoist_cpu_relax();
		}
	}
}

int hoist__op_alloc(struct hoist_ctx *c, struct hoist_op **out)
{
	for (;;) {
		for (uint32_t i = 0; i < c->nops; i++) {
			uint32_t k = (c->ops_free_hint + i) % c->nops;
			if (!c->ops[k].busy) {
				struct hoist_op *op = &c->ops[k];
				*op = (struct hoist_op){.busy = 1, .stage_id = -1};
				c->ops_free_hint = k + 1;
				*out = op;
				return 0;
			}
		}
		/* every op slot is taken: a quiet frees those of nbi gets, but
		 * not the requests of split-phase collectives (only hoist_wait
		 * does): with none of the former, looping would never end */
		if (!c->nbi_head)
			return -EBUSY;
		int rc = hoist__quiet(c);
		if (rc)
			return rc;
	}
}

void hoist__op_free(struct hoist_ctx *c, struct hoist_op *op)
{
	if (op->stage_id >= 0)
		staging_release(&c->stage, op->stage_id);
	op->busy = 0;
}

/* ---- staging space and staged gets' data ------------------------------ */

/* Staging space for len bytes, making progress until it frees up (the
 * slow path of hoist__stage_alloc_wait: the first try failed). */
int64_t hoist__stage_alloc_slow(struct hoist_ctx *c, uint64_t len, uint64_t *off)
{
	unsigned spins = 0;
	for (;;) {
		int64_t id = staging_alloc(&c->stage, len, off);
		if (id != -EAGAIN)
			return id;
		hoist__reap(c);
		id = staging_alloc(&c->stage, len, off);
		if (id != -EAGAIN)
			return id;
		if (c->nbi_head) { /* nbi gets hold staging until quiet */
			int rc = hoist__quiet(c);
			if (rc)
				return rc;
			continue;
		}
		if (spins == 0)
			hoist__kick(c);
		if (++spins % 4096 == 0) {
			int rc = hoist__check_daemon(c);
			if (rc)
				return rc;
			sched_yield();
		}
	}
}

void hoist__op_copyout(struct hoist_ctx *c, struct hoist_op *op)
{
	if (op->copyout == 3)
		return; /* copied when its completion was reaped */
	const char *from = c->staging_base + op->stage_off;
	if (op->copyout == 2) {
		for (uint64_t i = 0; i < op->count; i++)
			memcpy((char *)op->dst + (ptrdiff_t)i * op->dst_stride, from + i * op->elem,
			       op->elem);
		return;
	}
	memcpy(op->dst, from, op->len);
}

/* ---- quiet ------------------------------------------------------------- */

static int post_quiet(struct hoist_ctx *c, uint64_t user_data)
{
	struct hoist_sqe *sqe;
	int rc = hoist__sqe_get(c, &sqe);
	if (rc)
		return rc;
	*sqe = (struct hoist_sqe){.opcode = HOIST_OP_QUIET, .flags = HOIST_SQE_F_CQE,
				  .user_data = user_data};
	hoist__sqe_submit(c);
	return 0;
}

/* Complete everything posted so far; copy out nbi gets; report the first
 * error of anything since the last quiet. */
int hoist__quiet(struct hoist_ctx *c)
{
	/* Fast path: nothing went to the daemon since the last quiet that
	 * completed (posted_since_quiet is cleared only then), no nbi get
	 * waits for its copy-out and no error waits to be reported. What
	 * the caller did since went the direct same-node path: plain stores
	 * into the targets' mappings, complete on return; the release fence
	 * orders them before whatever the caller stores next (a flag). A
	 * daemon that hung up is reported like on the slow path. */
	if (!c->posted_since_quiet && !c->nbi_head && !c->sticky_err && !c->daemon_gone) {
		__atomic_thread_fence(__ATOMIC_RELEASE);
		c->quiets_local++;
		return 0;
	}
	struct hoist_op *q = &c->ops[c->nops]; /* reserved for quiet */
	*q = (struct hoist_op){.busy = 1, .stage_id = -1};
	int rc = post_quiet(c, hoist__op_udata(c, q));
	if (rc == 0) {
		c->quiets_posted++;
		rc = hoist__wait_op(c, q);
	}
	q->busy = 0;
	if (rc == 0) /* everything posted before has completed */
		c->posted_since_quiet = 0;
	struct hoist_op *op = c->nbi_head;
	c->nbi_head = c->nbi_tail = NULL;
	while (op) {
		struct hoist_op *next = op->next_nbi;
		int orc = op->done ? op->res : hoist__wait_op(c, op);
		if (orc == 0 && op->copyout)
			hoist__op_copyout(c, op);
		if (orc && !rc)
			rc = orc;
		if (op->done) /* else the daemon is gone: the slot stays taken */
			hoist__op_free(c, op);
		op = next;
	}
	if (c->sticky_err) {
		if (!rc)
			rc = c->sticky_err;
		c->sticky_err = 0;
	}
	return rc;
}
