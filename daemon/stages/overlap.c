/* Automatic overlap: put deferral with conflict checks, phase prefetch,
 * chunked flow control. See overlap.h. */
#include "overlap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "hoist_amo.h"
#include "log.h"

#define COOKIE_UNPROFITABLE 1u
/* Copy cost model for profitability: a fixed part and a bandwidth part
 * (conservative for this class of machine: ~4 GB/s for a cold copy). */
#define COPY_FIXED_NS 100u
#define COPY_NS_PER_KIB 250u

int overlap_create(struct daemon *d, struct client *c)
{
	struct overlap *o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	int rc = conflict_init(&o->conf, c->job->size, (uint32_t)d->cfg.max_outstanding_puts);
	if (rc)
		goto fail;
	rc = phase_init_periods(&o->ph, (uint32_t)d->cfg.phase_max, (uint32_t)d->cfg.phase_max_gets,
				(uint32_t)d->cfg.phase_period_max);
	if (rc)
		goto fail_conf;
	o->nslots = (uint32_t)d->cfg.phase_max_gets;
	o->box_wait = -1;
	o->nnodes = d->net.nnodes;
	o->chunk = (uint32_t)d->cfg.prefetch_chunk;
	o->half_bytes = d->cfg.prefetch_arena_bytes / 2;
	o->slots = calloc(o->nslots, sizeof(*o->slots));
	o->node_out = calloc((size_t)o->nnodes, sizeof(*o->node_out));
	o->node_cursor = calloc((size_t)o->nnodes, sizeof(*o->node_cursor));
	if (!c->pf.base || c->pf_slots < o->nslots) {
		rc = -EINVAL; /* the attach made no prefetch region */
		goto fail_all;
	}
	o->table = c->pf.base;
	o->arena = (char *)c->pf.base + hoist_pf_arena_off(c->pf_slots);
	if (!o->slots || !o->node_out || !o->node_cursor) {
		rc = -ENOMEM;
		goto fail_all;
	}
	o->conf_cap = (uint32_t)d->cfg.max_outstanding_puts;
	o->ordered = xp_ordered(d->xport, d);
	if (!o->ordered) { /* a later put must not overtake an unfinished get */
		rc = conflict_init(&o->gconf, c->job->size, o->conf_cap);
		if (rc)
			goto fail_all;
	}
	c->ov = o;
	return 0;
fail_all:
	free(o->slots);
	free(o->node_out);
	free(o->node_cursor);
	phase_fini(&o->ph);
fail_conf:
	conflict_fini(&o->conf);
fail:
	free(o);
	return rc;
}

void overlap_destroy(struct client *c)
{
	struct overlap *o = c->ov;
	if (!o)
		return;
	/* a gauge: what the client remembered is gone with it */
	__atomic_store_n(&c->st.pf_history, 0, __ATOMIC_RELAXED);
	conflict_fini(&o->conf);
	conflict_fini(&o->gconf);
	phase_fini(&o->ph);
	free(o->slots);
	free(o->node_out);
	free(o->node_cursor);
	free(o);
	c->ov = NULL;
}

int overlap_owns(const struct client *c, const char *p)
{
	const struct overlap *o = c->ov;
	return o && p >= o->arena && p < o->arena + 2 * o->half_bytes;
}

/* ---- puts ---------------------------------------------------------------- */

static void count_conflict(struct client *c, uint64_t before_box, uint64_t before_precise,
			   uint64_t found)
{
	struct conflict_stats *s = &c->ov->conf.st;
	if (found)
		STAT_INC(&c->st, conflicts);
	if (s->box_clear != before_box)
		STAT_INC(&c->st, conflict_box);
	if (s->precise != before_precise)
		STAT_INC(&c->st, conflict_precise);
}

/* An access to [off, off+len) at pe: is it behind an outstanding put of
 * this client (or, a write, behind an outstanding get)? This stage decides
 * the order: on a transport that delivers one client's operations to one
 * node in order (o->ordered), being found is enough (the access leaves
 * right behind the put); on any other one the access waits until every
 * overlapping put (and, for a put, every overlapping get) completed. 1:
 * wait (the descriptor stays at the ring head and comes back here), 0: go.
 * A descriptor that waits is counted once in conflicts and conflict_waits. */
static int check(struct client *c, int32_t pe, uint64_t off, uint64_t len, int write)
{
	struct overlap *o = c->ov;
	uint64_t b = o->conf.st.box_clear, p = o->conf.st.precise;
	uint64_t seq = conflict_check(&o->conf, pe, off, len);
	struct put_run *r = &o->run;
	if (r->active && r->pe == pe && len && off < r->end && off + len > r->start)
		seq = r->seq;
	if (write && !seq && o->gconf.count)
		seq = conflict_check(&o->gconf, pe, off, len);
	int again = o->waiting == c->sq_head + 1; /* this descriptor waited before */
	if (!again)
		count_conflict(c, b, p, seq);
	if (!seq || o->ordered) {
		o->waiting = 0;
		return 0;
	}
	if (!c->outstanding) {
		/* nothing of the client is in flight: what the lists still hold
		 * completed without being reported to them */
		overlap_quiesced(c);
		o->waiting = 0;
		return 0;
	}
	if (!again) {
		o->waiting = c->sq_head + 1;
		STAT_INC(&c->st, conflict_waits);
	}
	return 1;
}

void overlap_quiesced(struct client *c)
{
	struct overlap *o = c->ov;
	if (!o)
		return;
	conflict_retire_all(&o->conf);
	if (o->gconf.cap)
		conflict_retire_all(&o->gconf);
	o->run.active = 0;
	o->nputs = 0;
}

int overlap_access(struct client *c, int32_t pe, uint64_t off, uint64_t len, int write)
{
	return c->ov ? check(c, pe, off, len, write) : 0;
}

uint64_t overlap_get_seq(struct client *c)
{
	struct overlap *o = c->ov;
	return o && o->gconf.cap ? o->gconf.last_seq + 1 : 0;
}

void overlap_get_issued(struct client *c, int32_t pe, uint64_t off, uint64_t len, uint64_t gseq)
{
	struct overlap *o = c->ov;
	if (o && gseq && conflict_add(&o->gconf, pe, off, len, gseq) != 0)
		STAT_INC(&c->st, forced_completions); /* not tracked: cannot happen below the cap */
}

void overlap_get_done(struct client *c, int32_t pe, uint64_t gseq)
{
	struct overlap *o = c->ov;
	if (o && gseq && o->gconf.cap)
		conflict_complete(&o->gconf, pe, gseq);
}

/* A put or atomic writes [off, off + len) of pe: this phase's predictions
 * of it are stale, in the daemon and in the client's fast table. */
static void invalidate(struct client *c, int32_t pe, uint64_t off, uint64_t len)
{
	struct overlap *o = c->ov;
	if (phase_invalidate(&o->ph, pe, off, len)) {
		STAT_INC(&c->st, pf_invalidated);
		/* the client must not serve them itself either: it looks only
		 * once we consumed this put (sq_head), which orders this store */
		uint32_t n;
		struct phase_get *g = phase_current(&o->ph, &n);
		for (uint32_t i = 0; g && i < n && i < o->nslots; i++)
			if (g[i].flags & PHASE_F_INVALID)
				hoist_store_relaxed(&o->table[i].state, HOIST_PF_EMPTY);
	}
}

int overlap_put_begin(struct client *c, const struct hoist_sqe *sqe, uint64_t *seq)
{
	struct overlap *o = c->ov;
	if (o->nputs >= o->conf_cap) {
		/* the cap on outstanding puts: wait until completions retire some
		 * (the client's SQ stalls here, as a quiet would) */
		STAT_INC(&c->st, forced_completions);
		return 1;
	}
	/* a put overlapping an unfinished put must land after it (and, on
	 * an unordered transport, after an unfinished get read the range) */
	if (check(c, sqe->pe, sqe->remote_off, sqe->len, 1))
		return 1;
	invalidate(c, sqe->pe, sqe->remote_off, sqe->len);
	*seq = o->put_seq + 1;
	return 0;
}

void overlap_put_refused(struct client *c, int32_t pe)
{
	if (c->ov)
		invalidate(c, pe, 0, UINT64_MAX);
}

/* The run goes into the conflict lists as one put. */
static void run_flush(struct overlap *o)
{
	struct put_run *r = &o->run;
	if (!r->active)
		return;
	r->active = 0;
	/* the puts of the run that completed already are not waited for */
	if (conflict_add_run(&o->conf, r->pe, r->start, r->end - r->start, r->first, r->seq,
			     r->n - r->done) != 0)
		o->nputs--; /* not tracked (cannot happen below the cap) */
}

/* A put (deferred_puts) or non-fetching atomic (amo_deferred) the
 * client does not wait for; a fetching atomic's client waits for it. */
static void count_deferred(struct client *c, const struct hoist_sqe *sqe)
{
	if (sqe->opcode != HOIST_OP_AMO)
		STAT_INC(&c->st, deferred_puts);
	else if (!hoist_amo_fetching(sqe->amo_op))
		STAT_INC(&c->st, amo_deferred);
}

void overlap_put_issued(struct client *c, const struct hoist_sqe *sqe, uint64_t seq)
{
	struct overlap *o = c->ov;
	struct put_run *r = &o->run;
	if (r->active && r->pe == sqe->pe && sqe->len && sqe->remote_off == r->end &&
	    sqe->remote_off + sqe->len > r->end) {
		r->end += sqe->len;
		r->seq = seq;
		r->n++;
		o->put_seq = seq;
		count_deferred(c, sqe);
		return;
	}
	run_flush(o);
	if (sqe->len && seq > o->conf.last_seq) {
		*r = (struct put_run){.active = 1, .pe = sqe->pe, .start = sqe->remote_off,
				      .end = sqe->remote_off + sqe->len, .first = seq, .seq = seq,
				      .n = 1};
		o->put_seq = seq;
		o->nputs++;
		count_deferred(c, sqe);
		return;
	}
	if (conflict_add(&o->conf, sqe->pe, sqe->remote_off, sqe->len, seq) == 0) {
		o->put_seq = seq;
		o->nputs++;
		count_deferred(c, sqe);
	}
}

void overlap_put_done(struct client *c, int32_t pe, uint64_t seq)
{
	struct overlap *o = c->ov;
	struct put_run *r = &o->run;
	/* completions come in any order (several connections per peer): each
	 * put retires alone; a run leaves when all of its puts completed */
	if (r->active && r->pe == pe && seq >= r->first && seq <= r->seq) {
		if (++r->done == r->n) {
			r->active = 0;
			o->nputs--;
		}
		return;
	}
	if (conflict_complete(&o->conf, pe, seq) == 1)
		o->nputs--;
}

/* ---- prefetch ------------------------------------------------------------ */

static int half_of(uint64_t gen)
{
	return (int)(gen & 1);
}

/* Issue slot i's prefetch (entry e of the run). 0: issued, 1: no credit
 * now (XP_STALL, the slot stays queued), -1: failed (PF_FAILED). */
static int issue_one(struct daemon *d, struct client *c, uint32_t i, const struct phase_get *e)
{
	struct overlap *o = c->ov;
	struct pf_slot *s = &o->slots[i];
	/* into the arena; not a client operation (not counted, never packed:
	 * it completes on its own) */
	struct xp_req rq = {.kind = XP_GET, .flags = XP_RF_ALONE, .laddr = o->arena + s->arena_off,
			    .lmr = c->mr, .node = s->node, .job = c->job->id, .pe = e->pe,
			    .seg = HOIST_SEG_HEAP, .off = e->off, .len = e->len,
			    .ck = {.client = c, .pe = e->pe, .opcode = HOIST_OP_GET,
				   .op = {.prefetch = 1, .slot = i, .gen = o->gen}}};
	int err = 0;
	enum xp_result r = d->xport->rma(d, &rq, &err);
	if (r == XP_STALL)
		return 1;
	if (r == XP_ERROR) {
		s->state = PF_FAILED;
		s->res = err;
		return -1;
	}
	s->state = PF_ISSUED;
	o->node_out[s->node]++;
	o->half_inflight[half_of(o->gen)]++;
	STAT_INC(&c->st, pf_issued);
	return 0;
}

/* Keep a node's window of prefetches in flight full without a bubble: once
 * no more than half of prefetch_chunk are in flight to it, issue queued
 * ones, in the order of the last run's gets, until prefetch_chunk are. (A
 * whole chunk at a time, the next one when the last of the previous had
 * landed, left the link idle for a round trip per chunk.) */
static void issue_window(struct daemon *d, struct client *c, int32_t node)
{
	struct overlap *o = c->ov;
	uint32_t n;
	struct phase_get *g = phase_current(&o->ph, &n);
	if (!g || !o->in_phase || o->node_out[node] > o->chunk / 2)
		return;
	uint32_t issued = 0;
	uint32_t i = o->node_cursor[node];
	for (; i < n && i < o->nslots && o->node_out[node] < o->chunk; i++) {
		struct pf_slot *s = &o->slots[i];
		if (s->state != PF_QUEUED || s->node != node)
			continue;
		int r = issue_one(d, c, i, &g[i]);
		if (r > 0) {
			/* no credit: the next landing retries; with none in
			 * flight to land, the client's next get or landing
			 * does (o->stalled) */
			if (!o->node_out[node])
				o->stalled = 1;
			break;
		}
		issued += r == 0;
	}
	o->node_cursor[node] = i;
	if (issued)
		STAT_INC(&c->st, pf_chunks);
}

static void retry_stalled(struct daemon *d, struct client *c)
{
	struct overlap *o = c->ov;
	if (!o->stalled)
		return;
	o->stalled = 0;
	for (int32_t node = 0; node < o->nnodes; node++)
		if (node != d->net.self)
			issue_window(d, c, node);
}

void overlap_prefetch_done(struct daemon *d, struct client *c, uint32_t slot, uint64_t gen,
			   int res)
{
	struct overlap *o = c->ov;
	if (!o)
		return;
	o->half_inflight[half_of(gen)]--;
	if (gen != o->gen || !o->in_phase || slot >= o->nslots)
		return; /* a misprediction of an earlier phase landed: nothing uses it */
	struct pf_slot *s = &o->slots[slot];
	if (s->state != PF_ISSUED)
		return;
	s->state = res ? PF_FAILED : PF_READY;
	s->res = res;
	uint32_t n;
	struct phase_get *g = phase_current(&o->ph, &n);
	if (!res && !s->waiting) {
		/* publish it for the client's own lookup */
		struct hoist_pf_slot *t = &o->table[slot];
		if (g && slot < n && !(g[slot].flags & (PHASE_F_INVALID | PHASE_F_USED))) {
			t->gen = (uint32_t)o->gen;
			t->pe = g[slot].pe;
			t->len = (uint32_t)g[slot].len;
			t->off = g[slot].off;
			t->arena_off = s->arena_off;
			/* pairs with the client's hoist_load_acquire(&slot->state) */
			hoist_store_release(&t->state, HOIST_PF_READY);
		}
	}
	if (o->node_out[s->node])
		o->node_out[s->node]--;
	if (s->waiting) { /* a get was waiting for exactly this: it goes first */
		s->waiting = 0;
		s->state = PF_TAKEN;
		if (!res)
			memcpy(s->w_dst, o->arena + s->arena_off, g[slot].len);
		c->outstanding--;
		if (res || s->w_want_cqe)
			progress_cqe(c, s->w_user_data, res, s->w_opcode);
		STAT_INC(&c->st, pf_waits);
	}
	issue_window(d, c, s->node); /* half the window landed: refill it */
	retry_stalled(d, c);
}

static uint64_t served_now(struct client *c)
{
	return STAT_READ(&c->st, pf_hits) + STAT_READ(&c->st, pf_waits) +
	       STAT_READ(&c->st, pf_fast_hits);
}

/* The phase that just ended: add its run to its row (the least recently
 * run row is reused for a new phase). Relaxed single-writer stores: the
 * stats socket reads them from the control thread. */
static void phase_stats_end(struct client *c)
{
	struct overlap *o = c->ov;
	struct phase_stats_row *row = NULL, *oldest = &c->phase_st[0];
	for (int i = 0; i < PHASE_STATS_MAX; i++) {
		struct phase_stats_row *r = &c->phase_st[i];
		if (r->id == o->cur_phase + 1) {
			row = r;
			break;
		}
		if (r->last_gen < oldest->last_gen)
			oldest = r;
	}
	if (!row) {
		row = oldest;
		/* ids are stored +1 so that 0 means unused */
		__atomic_store_n(&row->id, o->cur_phase + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&row->runs, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&row->served, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&row->misses, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&row->wasted, 0, __ATOMIC_RELAXED);
	}
	row->last_gen = o->gen;
	STAT_INC(row, runs);
	STAT_ADD(row, served, served_now(c) - o->run_start[0]);
	STAT_ADD(row, misses, STAT_READ(&c->st, pf_misses) - o->run_start[1]);
	STAT_ADD(row, wasted, STAT_READ(&c->st, pf_wasted) - o->run_start[2]);
	__atomic_store_n(&row->history, phase_history_size(&o->ph, o->cur_phase), __ATOMIC_RELAXED);
}

/* The next run of phase `id`, prepared at the notify that names it (the
 * barrier's wait hides this O(gets) work; the phase start then only issues
 * the first window): its predictions, which of them to prefetch and where
 * in the arena half the run will use. */
static void prepare_run(struct daemon *d, struct client *c, uint64_t id)
{
	struct overlap *o = c->ov;
	uint32_t n;
	struct phase_get *g = phase_begin(&o->ph, id, &n);
	o->prepared = 1;
	o->table_n = n < o->nslots ? n : o->nslots;
	o->used = 0;
	if (o->ph.period > 1)
		STAT_INC(&c->st, pf_periodic);
	if (o->ph.dry) /* backed off: only checked against the gets */
		STAT_INC(&c->st, pf_dry);
	struct job *j = c->job;
	int half = half_of(o->gen + 1);
	for (uint32_t i = 0; i < o->table_n; i++) {
		struct pf_slot *s = &o->slots[i];
		memset(s, 0, sizeof(*s));
		int32_t node = j->node_of[g[i].pe];
		int room = o->used + g[i].len <= o->half_bytes;
		if (node == d->net.self || (g[i].cookie & COOKIE_UNPROFITABLE) || !room ||
		    j->pe_gone[g[i].pe]) {
			s->state = PF_NONE;
			STAT_INC(&c->st, pf_skipped);
			if (!room)
				STAT_INC(&c->st, pf_skip_room);
			continue;
		}
		if (o->ph.dry) {
			s->state = PF_NONE;
			continue;
		}
		s->state = PF_QUEUED;
		s->node = node;
		s->arena_off = (uint64_t)half * o->half_bytes + o->used;
		o->used += (g[i].len + 63) & ~(uint64_t)63;
	}
}

void overlap_phase_start(struct daemon *d, struct client *c)
{
	struct overlap *o = c->ov;
	if (!o || !o->next_set)
		return;
	o->next_set = 0;
	if (!o->prepared) /* cannot happen: the notify prepared it */
		prepare_run(d, c, o->next_phase);
	o->prepared = 0;
	o->gen++;
	o->in_phase = 1;
	o->stalled = 0;
	o->cur_phase = o->next_phase;
	o->run_start[0] = served_now(c);
	o->run_start[1] = STAT_READ(&c->st, pf_misses);
	o->run_start[2] = STAT_READ(&c->st, pf_wasted);
	o->phase_start_ns = now_ns();
	memset(o->node_out, 0, (size_t)o->nnodes * sizeof(*o->node_out));
	memset(o->node_cursor, 0, (size_t)o->nnodes * sizeof(*o->node_cursor));
	STAT_INC(&c->st, phases);
	if (o->half_inflight[half_of(o->gen)]) {
		/* an earlier misprediction may still land in this half: use
		 * none of it */
		for (uint32_t i = 0; i < o->table_n; i++)
			if (o->slots[i].state == PF_QUEUED) {
				o->slots[i].state = PF_NONE;
				STAT_INC(&c->st, pf_skipped);
			}
		return;
	}
	for (int32_t node = 0; node < o->nnodes; node++)
		if (node != d->net.self)
			issue_window(d, c, node);
}

void overlap_notify(struct daemon *d, struct client *c, uint64_t next_phase)
{
	struct overlap *o = c->ov;
	if (!o)
		return;
	uint64_t t0 = now_ns();
	if (o->in_phase) {
		uint32_t n;
		struct phase_get *g = phase_current(&o->ph, &n);
		/* gets the client served itself: they count as used */
		for (uint32_t i = 0; g && i < n && i < o->nslots; i++) {
			if (hoist_load_acquire(&o->table[i].state) != HOIST_PF_TAKEN)
				continue;
			o->table[i].state = HOIST_PF_EMPTY;
			o->slots[i].state = PF_TAKEN;
			/* at its place among the run's gets, not after them */
			phase_take(&o->ph, i);
			STAT_INC(&c->st, pf_fast_hits);
		}
		g = phase_current(&o->ph, &n);
		/* mispredictions: whatever of them is in flight lands in this
		 * phase's arena half, which the next phase does not use */
		for (uint32_t i = 0; g && i < n && i < o->nslots; i++)
			if (!(g[i].flags & PHASE_F_USED) &&
			    (o->slots[i].state == PF_ISSUED || o->slots[i].state == PF_READY))
				STAT_INC(&c->st, pf_wasted);
		uint64_t backoffs = o->ph.st.backoffs;
		phase_end(&o->ph);
		if (o->ph.st.backoffs != backoffs)
			STAT_INC(&c->st, pf_backoffs);
		o->in_phase = 0;
		phase_stats_end(c);
		uint64_t h = 0;
		for (uint32_t k = 0; k < o->ph.max_phases; k++)
			for (uint32_t b = 0; o->ph.s[k].used && b < o->ph.period_max; b++)
				h += o->ph.s[k].bn[b]; /* the runs kept */
		__atomic_store_n(&c->st.pf_history, h, __ATOMIC_RELAXED);
	} else if (o->prepared) {
		/* a run prepared by an earlier notify never started (its
		 * barrier failed): it did nothing, keep its predictions */
		phase_abandon(&o->ph);
		o->prepared = 0;
	}
	/* what the client may still see of the ended run goes; only the
	 * entries a run can have published are touched */
	for (uint32_t i = 0; i < o->table_n; i++)
		hoist_store_relaxed(&o->table[i].state, HOIST_PF_EMPTY);
	o->next_phase = next_phase;
	o->next_set = 1;
	prepare_run(d, c, next_phase);
	STAT_ADD(&c->st, pf_notify_ns, now_ns() - t0);
}

/* A get the phase table did not match: why (pf_miss_*), and, recorded,
 * whether prefetching it next time can pay for its extra copy. */
static void count_miss(struct daemon *d, struct client *c, uint32_t n_before, uint64_t len,
		       int32_t node)
{
	struct overlap *o = c->ov;
	STAT_INC(&c->st, pf_misses);
	switch ((enum phase_miss)o->ph.miss) {
	case PHASE_MISS_COLD:
		STAT_INC(&c->st, pf_miss_cold);
		break;
	case PHASE_MISS_NEW:
		STAT_INC(&c->st, pf_miss_new);
		break;
	case PHASE_MISS_INVALID:
		STAT_INC(&c->st, pf_miss_invalid);
		break;
	case PHASE_MISS_FULL:
		STAT_INC(&c->st, pf_miss_full);
		break;
	case PHASE_MISS_NONE:
	case PHASE_MISS_IDLE:
		break;
	}
	uint32_t n;
	struct phase_get *g = phase_current(&o->ph, &n);
	if (g && n > n_before) { /* recorded: is it worth prefetching? */
		uint64_t lead = now_ns() - o->phase_start_ns;
		uint64_t copy = COPY_FIXED_NS + len / 1024 * COPY_NS_PER_KIB;
		if (node == d->net.self || lead < copy)
			g[n - 1].cookie |= COOKIE_UNPROFITABLE;
		else
			g[n - 1].cookie &= ~(uint64_t)COOKIE_UNPROFITABLE;
	}
}

int overlap_get(struct daemon *d, struct client *c, const struct hoist_sqe *sqe, int32_t node,
		int *res)
{
	struct overlap *o = c->ov;
	if (check(c, sqe->pe, sqe->remote_off, sqe->len, 0))
		return 3; /* behind an unfinished put: wait */
	if (o->gconf.cap && o->gconf.count >= o->gconf.cap) {
		STAT_INC(&c->st, forced_completions); /* unordered: gets tracked, capped */
		return 3;
	}
	if (!o->in_phase)
		return 0;
	retry_stalled(d, c);
	uint32_t n_before;
	phase_current(&o->ph, &n_before);
	int i = phase_get(&o->ph, sqe->pe, sqe->remote_off, sqe->len);
	if (i < 0) {
		count_miss(d, c, n_before, sqe->len, node);
		return 0;
	}
	if ((uint32_t)i >= o->nslots)
		return 0;
	struct pf_slot *s = &o->slots[i];
	char *dst = client_buf(c, sqe);
	if (s->state == PF_QUEUED) {
		/* the client got ahead of the window: this one leaves now,
		 * out of turn, and the get waits for it alone */
		uint32_t n;
		struct phase_get *g = phase_current(&o->ph, &n);
		if (issue_one(d, c, (uint32_t)i, &g[i]) == 0)
			STAT_INC(&c->st, pf_demand);
	}
	switch (s->state) {
	case PF_READY:
		memcpy(dst, o->arena + s->arena_off, sqe->len);
		s->state = PF_TAKEN;
		hoist_store_relaxed(&o->table[i].state, HOIST_PF_EMPTY);
		*res = 0;
		STAT_INC(&c->st, pf_hits);
		return 1;
	case PF_ISSUED:
		s->waiting = 1;
		s->w_dst = dst;
		s->w_user_data = sqe->user_data;
		s->w_want_cqe = (sqe->flags & HOIST_SQE_F_CQE) != 0;
		s->w_opcode = sqe->opcode;
		c->outstanding++;
		return 2;
	case PF_QUEUED: /* no credit to issue it on demand: fetch it normally */
		s->state = PF_TAKEN;
		STAT_INC(&c->st, pf_late);
		return 0;
	default: /* skipped or failed: a normal get */
		s->state = PF_TAKEN;
		return 0;
	}
}

int overlap_get_box(struct daemon *d, struct client *c, int32_t pe, uint64_t off, uint64_t len,
		    uint64_t payload, int32_t node, const char **box)
{
	struct overlap *o = c->ov;
	struct pf_slot *s;
	int i;
	if (o->box_wait >= 0 && (o->box_pe != pe || o->box_off != off || o->box_len != len))
		o->box_wait = -1; /* that descriptor ended otherwise (an error) */
	if (o->box_wait >= 0) { /* the same descriptor again, after a stall */
		i = o->box_wait;
		s = &o->slots[i];
		if (s->state == PF_ISSUED)
			return -EAGAIN;
		o->box_wait = -1;
		goto landed;
	}
	if (check(c, pe, off, len, 0))
		return -EBUSY; /* behind an unfinished put: wait */
	if (o->gconf.cap && o->gconf.count >= o->gconf.cap) {
		STAT_INC(&c->st, forced_completions); /* unordered: gets tracked, capped */
		return -EBUSY;
	}
	/* a sparse box would move up to stride/len times the data */
	if (!o->in_phase || !len || len > 4 * payload || len > o->half_bytes)
		return 0;
	retry_stalled(d, c);
	uint32_t n_before;
	phase_current(&o->ph, &n_before);
	i = phase_get(&o->ph, pe, off, len);
	if (i < 0) {
		count_miss(d, c, n_before, len, node);
		return 0;
	}
	if ((uint32_t)i >= o->nslots)
		return 0;
	s = &o->slots[i];
	if (s->state == PF_QUEUED) { /* ahead of the window: issue it now */
		uint32_t n;
		struct phase_get *g = phase_current(&o->ph, &n);
		if (issue_one(d, c, (uint32_t)i, &g[i]) == 0)
			STAT_INC(&c->st, pf_demand);
	}
	if (s->state == PF_ISSUED) {
		/* in flight: the descriptor stalls (the client waits for this
		 * get anyway) and comes back here until the box has landed; the
		 * phase table saw it once */
		o->box_wait = i;
		o->box_pe = pe;
		o->box_off = off;
		o->box_len = len;
		STAT_INC(&c->st, pf_waits);
		return -EAGAIN;
	}
landed:
	switch (s->state) {
	case PF_READY:
		*box = o->arena + s->arena_off;
		s->state = PF_TAKEN;
		hoist_store_relaxed(&o->table[i].state, HOIST_PF_EMPTY);
		STAT_INC(&c->st, pf_hits);
		return 1;
	case PF_QUEUED: /* no credit to issue it on demand: fetch it normally */
		s->state = PF_TAKEN;
		STAT_INC(&c->st, pf_late);
		return 0;
	default:
		s->state = PF_TAKEN;
		return 0;
	}
}
