/*
 * The engine: drains a client's submission ring in batches. Each
 * descriptor is copied once, validated (validate.c) and executed by
 * opcode: puts, gets and atomics to the put/get stage (rma.c), strided
 * and vector ones to the strided/vector engine (multi.c), barriers (barrier.c),
 * collectives (coll.c), phases (overlap.c), quiet and fence here, and
 * the order of a put-with-signal: its signal atomic waits here until the
 * client's earlier operations completed (or fails behind a failed one). What
 * finished at once is posted to the completion queue (complete.c); what a
 * transport started completes later through progress_complete().
 */
#include "engine.h"

#include <errno.h>
#include <string.h>

#include "coll.h"
#include "complete.h"
#include "daemon.h"
#include "log.h"
#include "multi.h"
#include "overlap.h"
#include "rma.h"
#include "validate.h"

static void client_break(struct client *c, const char *why)
{
	if (c->broken)
		return;
	c->broken = 1;
	hlog_warn("client pid %d (job %s rank %d) broke the ring protocol: %s; no longer served",
		  (int)c->pid, c->job->key, c->rank, why);
}

/* Execute one validated descriptor; *res is its result when DONE. */
/* A lazy notify of a one-node job: node barriers told in runs (barrier.c).
 * Never held: a PE may tell runs ahead of the others, which tell theirs
 * only when they next post or wait for the daemon, and a descriptor held
 * behind it could be what those PEs wait for (it_wait_2 hung: rank 1's
 * put behind its run, rank 0 asleep in hoist_wait_until for that put). */
static int notify_runs(const struct client *c, const struct hoist_sqe *sqe)
{
	return (sqe->flags & HOIST_SQE_F_LAZY) && c->job->nnodes <= 1;
}

static enum exec_result execute(struct daemon *d, struct client *c, const struct hoist_sqe *sqe,
				int *res)
{
	*res = 0;
	/* Only puts and gets join a region. A collective reaches here with any
	 * flags (validate_coll rejects them when it runs, so that it still
	 * counts as this PE's part); one carrying the aggregation flag must
	 * end the region too, or it waits for held puts that wait for it
	 * (issue 14 defect 5: the ring hung instead of -EINVAL). */
	int agg = (sqe->flags & HOIST_SQE_F_AGG) && sqe->opcode != HOIST_OP_COLL;
	if (c->agg_held && !agg) {
		/* the aggregation region ended (or ends early): its held packs go */
		c->agg_held = 0;
		STAT_INC(&c->st, agg_releases);
		if (d->xport->pack_release)
			d->xport->pack_release(d);
	}
	switch (sqe->opcode) {
	case HOIST_OP_AMO: /* an atomic: the put/get stage, a put that also reads */
		/* A put-with-signal's signal (the library posts it right behind
		 * its put, no quiet in between) leaves only once every earlier
		 * operation of the client completed, i.e. was acknowledged and
		 * placed at its target: every piece of the put, whichever tcp
		 * lane or stripe or verbs queue carried it, deferred ones too.
		 * Like a fence on an unordered transport, on every transport:
		 * the ring stalls here, later descriptors wait behind it. */
		if (sqe->flags & HOIST_SQE_F_SIGNAL) {
			if (c->outstanding) {
				if (c->sig_waiting != c->sq_head + 1) {
					c->sig_waiting = c->sq_head + 1;
					STAT_INC(&c->st, signal_waits);
				}
				return cap_stall(d, c);
			}
			/* An operation that asked no completion (the put's
			 * pieces, or another since the last quiet) failed: no
			 * signal for data that may not be there. The client
			 * reports that error at its next quiet. */
			if (c->failed_silent != c->failed_seen) {
				/* this -EIO, posted without completion, is no new one */
				c->failed_seen = c->failed_silent + (sqe->user_data == 0);
				STAT_INC(&c->st, signals_dropped);
				*res = -EIO;
				return EXEC_DONE;
			}
		}
		/* fall through */
	case HOIST_OP_PUT:
	case HOIST_OP_GET:
		if (sqe->flags & HOIST_SQE_F_AGG) { /* a non-fetching atomic too */
			enum exec_result er = rma(d, c, sqe, res);
			if (er == EXEC_DONE || er == EXEC_ASYNC) {
				c->agg_held = 1;
				STAT_INC(&c->st, agg_ops);
			}
			return er;
		}
		return rma(d, c, sqe, res);
	case HOIST_OP_PUT_STRIDED:
	case HOIST_OP_GET_STRIDED:
	case HOIST_OP_PUT_VEC:
	case HOIST_OP_GET_VEC:
		return multi_exec(d, c, sqe, res);
	case HOIST_OP_QUIET:
		if (c->outstanding)
			return EXEC_STALL;
		c->failed_seen = c->failed_silent; /* the client reports them now */
		STAT_INC(&c->st, quiets);
		return EXEC_DONE;
	case HOIST_OP_FENCE:
		/* A transport that delivers one client's operations to one node
		 * in order (same node: at once; tcp with one connection per peer)
		 * orders the puts already. On any other one a fence
		 * waits until everything issued before it completed. */
		if (!xp_ordered(d->xport, d) && c->outstanding)
			return cap_stall(d, c);
		STAT_INC(&c->st, fences);
		return EXEC_DONE;
	case HOIST_OP_BARRIER_NOTIFY:
		/* the node map decides who takes part: wait for JOB_READY */
		if (c->outstanding || !c->job->prog_ready ||
		    (barrier_notify_early(c) && !notify_runs(c, sqe)))
			return EXEC_STALL;
		/* between notify and wait: the ending phase's mispredictions go */
		overlap_notify(d, c, sqe->remote_off);
		c->failed_seen = c->failed_silent; /* a barrier reports them too */
		*res = barrier_notify(d, c, sqe->len > 1 ? (uint32_t)sqe->len : 1, notify_runs(c, sqe));
		return EXEC_DONE;
	case HOIST_OP_PHASE:
		/* prefetch targets need the node map; and, as for a barrier's
		 * notify, the ending phase's operations complete first: a get
		 * waiting for its prefetch in flight (overlap_get) is finished
		 * by that prefetch's landing, which a new phase would disown */
		if (c->outstanding || !c->job->prog_ready)
			return EXEC_STALL;
		overlap_notify(d, c, sqe->remote_off);
		overlap_phase_start(d, c);
		return EXEC_DONE;
	case HOIST_OP_NOP:
		STAT_INC(&c->st, nops);
		return EXEC_DONE;
	case HOIST_OP_COLL:
		/* the daemon reads src after this client's earlier puts and gets
		 * completed; the node map decides who takes part */
		if (c->outstanding || !c->job->prog_ready)
			return EXEC_STALL;
		/* each unfinished collective costs 64 B per rank of the job:
		 * one that runs ahead of the others waits for them */
		struct hoist_coll_args ca;
		memcpy(&ca, sqe->inline_data, sizeof(ca));
		/* a node descriptor (HOIST_COLL_F_NODE) carries its number: the
		 * PEs of a node post them, not their own count */
		uint32_t seq = (ca.flags & HOIST_COLL_F_NODE) ? ca.reserved0 : c->coll_seq;
		if ((ca.flags & HOIST_COLL_F_NODE) &&
		    (c->job->local < 2 ||
		     (int32_t)(seq - c->job->coll_base) >= 2 * (int32_t)d->cfg.max_pending_colls)) {
			/* no node of one PE posts node descriptors, and no node
			 * runs two windows ahead of the job's oldest collective:
			 * not a node's descriptor. An error for this one (the
			 * job lives: nobody waits for it), where it stalled the
			 * ring for good (fuzz_ring: hoist_quiet hung) */
			*res = -EPROTO;
			return EXEC_DONE;
		}
		if (seq - c->job->coll_base >= d->cfg.max_pending_colls &&
		    (int32_t)(seq - c->job->coll_base) > 0) {
			if (!c->coll_capped) {
				c->coll_capped = 1;
				STAT_INC(&c->st, colls_capped);
			}
			return EXEC_STALL;
		}
		c->coll_capped = 0;
		*res = coll_post(d, c, sqe);
		return *res ? EXEC_DONE : EXEC_ASYNC;
	}
	*res = -EINVAL;
	return EXEC_DONE;
}

/* Drain up to `batch` descriptors of one client. Returns how many, plus 1
 * when a long strided/vector descriptor made progress and yielded, not
 * counting lazy barrier notifies (HOIST_SQE_F_LAZY: a one-node job's node
 * barriers, which nobody waits for): they are no reason for the progress
 * thread to stay awake polling (progress.c), where they came every
 * microsecond and kept it from ever sleeping. */
unsigned drain(struct daemon *d, struct client *c)
{
	struct hoist_ctrl *ctrl = c->ctrl;
	/* The slot at sq_head says whether a descriptor is there (its phase
	 * bit, hoist_sqe_ready), not sq_tail: one line from the client's core
	 * instead of two in a row. A stalled strided/vector descriptor
	 * resumes from its copy, its slot is not read again. */
	uint32_t start = c->sq_head;
	if (!c->multi && !hoist_sqe_ready(&c->sq[start & c->sq_mask], start, c->sq_entries))
		return 0;
	uint32_t avail = (uint32_t)d->cfg.batch;

	struct validate_geom geom = {
		.job_size = c->job->size,
		.heap_bytes = c->heap.bytes,
		.staging_bytes = c->staging.bytes,
	};
	/* The client's cq_head as last read: it only grows, so an old value
	 * only understates the room, and it is read again when that runs
	 * out. The client stores it on every reap; reading it on every
	 * drain put that line's trip from the client's core on the path of
	 * every descriptor (a get 8 B through the daemon, issue 16). */
	uint32_t cq_head = c->cq_head_seen;
	unsigned done = 0, yielded = 0, lazy = 0;
	while (done < avail) {
		if (done && !hoist_sqe_ready(&c->sq[c->sq_head & c->sq_mask], c->sq_head, c->sq_entries))
			break; /* the first one was looked at above */
		if (c->cq_tail - cq_head >= c->cq_entries) {
			/* pairs with the client's hoist_store_release(&ctrl->cq_head) */
			cq_head = hoist_load_acquire(&ctrl->cq_head);
			if (c->cq_tail - cq_head > c->cq_entries) {
				client_break(c, "cq_head ahead of the ring");
				return done;
			}
			c->cq_head_seen = cq_head;
			if (c->cq_tail - cq_head >= c->cq_entries) {
				STAT_INC(&c->st, cq_full);
				break; /* the client must reap first */
			}
		}
		/* One copy of the descriptor: the client may scribble on the
		 * slot while we work, we only trust our copy. */
		struct hoist_sqe sqe;
		if (c->multi) { /* a stalled strided/vector descriptor resumes with
			       * the copy it started from: its state (count,
			       * elements issued, local position) belongs to that
			       * one, not to what the client wrote to the slot since */
			sqe = c->multi->sqe;
		} else {
			memcpy(&sqe, &c->sq[c->sq_head & c->sq_mask], sizeof(sqe));
			sqe.flags &= (uint8_t)~HOIST_SQE_F_PHASE; /* publication, not a request */
		}
		int res = validate_sqe(&sqe, &geom);
		if (res) {
			STAT_INC(&c->st, rejected);
			cq_post(c, sqe.user_data, res, sqe.opcode);
		} else {
			enum exec_result er = execute(d, c, &sqe, &res);
			if (er == EXEC_YIELD) {
				yielded = 1; /* resumes first thing next pass */
				d->more_pending = 1;
				break;
			}
			if (er == EXEC_STALL)
				break; /* retry on a later pass */
			if (er == EXEC_DONE && !res && sqe.opcode == HOIST_OP_GET &&
			    (sqe.flags & HOIST_SQE_F_INLINE)) {
				/* the result in the completion (validated: len fits) */
				cq_post_data(c, sqe.user_data, sqe.opcode, c->get_inline, sqe.len);
				STAT_INC(&c->st, gets_inline);
			} else if (er == EXEC_DONE && (res || (sqe.flags & HOIST_SQE_F_CQE))) {
				cq_post(c, sqe.user_data, res, sqe.opcode);
			}
			if (er == EXEC_DONE && (sqe.flags & HOIST_SQE_F_LAZY))
				lazy++;
		}
		c->sq_head++;
		done++;
	}
	if (done == avail)
		d->more_pending = 1; /* the batch ended, the ring may not have */
	if (done) {
		/* the slot before the first one taken, one lap on: published
		 * too means the client had filled the whole ring */
		uint32_t last = start + c->sq_entries - 1;
		if (hoist_sqe_ready(&c->sq[last & c->sq_mask], last, c->sq_entries))
			STAT_INC(&c->st, sq_full);
		/* pairs with hoist_load_acquire(&ctrl->sq_head) in the client:
		 * consumed descriptors and their staged payloads may be reused.
		 * Before the completions: a client that saw its quiet complete
		 * reads sq_head to know nothing it posted is left (the direct
		 * path may go on then, rma.c); published after them, that read
		 * could still see the old head (it_quiet_local, it_nodebar_4) */
		hoist_store_release(&ctrl->sq_head, c->sq_head);
		STAT_INC(&c->st, batches);
	}
	cq_flush(c);
	return done - lazy + yielded;
}
