/*
 * Node collectives: in a job whose PEs are all on this node (HOIST_DIRECT=1,
 * from the job's second barrier on: the first maps the peers, sync.c
 * node_barrier_setup) broadcast, reduce, allreduce, allgather and alltoall
 * run among the PEs through shared memory, with no descriptor for the
 * daemon and no daemon thread on the critical path. Nodes with one PE of
 * the job, or HOIST_DIRECT=0, post HOIST_OP_COLL per PE (coll.c).
 *
 * A job over several nodes ("mn", nc_mn): a node that holds 2+ of its PEs
 * (all HOIST_DIRECT=1) runs the same start (slots, eager copies, arrived)
 * among its PEs (nc_ranks, the local ranks; the lowest is the "anchor"),
 * but reads nothing itself: once every local PE arrived at m, the one that
 * claims m (CAS of the anchor's slot's claim word: the last to arrive, in
 * its start, or any PE that progresses m later) posts ONE descriptor for
 * the node (HOIST_COLL_F_NODE, hoist_shm.h: the job's collective number
 * dseq, the slot number m, nc_off; no CQE). The daemon reads every local
 * PE's slot (parameters, the eager copy as its contribution), checks them
 * like descriptors, runs the inter-node step, writes every local dst and
 * stores res, then fin = m (release) in the anchor's slot m, and wakes
 * nc_seq. Each PE waits for fin (the same spin/yield/sleep as below), takes
 * res and publishes done = m: then the anchor may reuse its slot and every
 * PE its src. An eager broadcast root returns at once and finds res
 * later, as below; every other PE of its node copies the root's slot once
 * the root arrived (root_read, NC_UNCHECKED) and returns too: the daemon
 * writes no dst on the root's node (ABI 9), and those PEs take res later,
 * waiting for it only in a later collective that is no eager broadcast
 * (fin needs nothing more of any PE: safe to wait for) or where the slot
 * is reused. So the PEs of the root's node do not wait for the inter-node
 * step of each broadcast, and the node's descriptors follow one another
 * as fast as its PEs arrive. On the other nodes the daemon copies an
 * eager broadcast's data into the node's inbox (struct hoist_nc_inbox,
 * ABI 11) as it arrives from the root's node, when the entry is free then
 * (else once the node's descriptor came), and writes no dst: each PE
 * takes the data from there once it arrived itself (inbox_read, its
 * parameters compared with the root's there) and returns, without waiting
 * for the node's other PEs or the daemon's check round; res comes later
 * with fin, as above. A
 * local mismatch is the daemon's to find (the same check, with the other
 * nodes' parameters too): -EINVAL on every PE of every node. dseq: the
 * PEs' count of collectives (coll_calls: the daemon's numbering of their
 * descriptors, daemon-path ones before the node path started included).
 * hoist_wait_from delivers every block at once. A PE or node that dies
 * fails the job: the waits end with the job's error; so does a PE that
 * cannot map a local peer (post_node_fail).
 *
 * Layout (hoist_shm.h, struct hoist_nc_hdr): every PE owns a block of its
 * heap at the same offset (symheap_alloc'd by every PE after the first
 * barrier, so user allocations stay symmetric): a header line (progress
 * words arrived and done, the early bits), then HOIST_NC_SLOTS slots, each
 * a line of parameters (seq first) and the eager data, then the inbox
 * (several nodes: the daemon's copies of broadcasts from another node, in
 * the anchor's block). The PE's m-th
 * collective:
 *
 *   start   complete its own collective m - SLOTS if still open, wait until
 *           every PE's done reached m - SLOTS (nobody still reads slot
 *           m % SLOTS; the others' done words are read only when the copy
 *           of their lowest, nc_done_min, is behind: about once per SLOTS
 *           collectives, not per collective), write its parameters into
 *           the slot and, when every contribution fits HOIST_NC_EAGER
 *           bytes (the same test on every PE), a copy of its contribution
 *           (eager: its src is free at once); set or clear its early bit
 *           of m; the PE that finds every other PE arrived already checks
 *           that the daemon lives (one poll, as the node barrier's last
 *           arriver does: a dead daemon cannot fail the job; looked at
 *           every 16th collective, at most once a millisecond per PE) --
 *           then the slot's seq = m (release; over several nodes arrived
 *           = m, which the node's PEs poll there). One node: the others
 *           poll the slot's own line, which they read next anyway. A
 *           blocking call (coll.c node_blocking: its request on the
 *           stack, no op slot) leaves the fence and the sleepers' check
 *           to the done it publishes right after reading, or to
 *           hoist__nc_wake before it waits or returns.
 *   read    once every PE arrived at m: compare the parameters (the lowest
 *           rank's own error, else -EINVAL when they differ: the same
 *           verdict on every PE; an error is also stored in the verdict
 *           of every eager broadcast root's slot, below), then read the
 *           contributions (eager: from the slots; else from the PEs' src
 *           in their heaps) and combine into dst; reductions fold in rank
 *           order, so every PE gets bit-identical results. done = m (in
 *           order: only once every earlier collective of this PE was
 *           read).
 *   finish  eager: complete. Else wait until every PE's done reached m
 *           (nobody reads this PE's src any more), then complete; a dst
 *           that overlaps the PE's own src (in place) is written only then,
 *           from a private copy.
 *
 * An eager broadcast's root reads nothing: it completes at start (its data
 * is safe in its slot) and, on one node, publishes done = m at once; it
 * does not compare the parameters either (that would be a read of every
 * other PE's slot line per broadcast, and a write miss for each of them at
 * its next collective). The others compare them and store an error in its
 * slot's verdict before their done passes m; once every other PE's done
 * reached m the root takes its verdict from there -- or -EINVAL when every
 * other PE's early bit of m is set: each of them named itself the root and
 * nobody compared. An error is returned by the root's next collective
 * (nc_sticky: by its start when the others are done with m by then, or
 * at the latest by its wait, which completes every earlier collective of
 * the PE first and so waits until every other PE read m; with 3+ PEs on
 * one node by the next one that is no eager broadcast, below). Over several
 * nodes the root takes the daemon's result from the anchor's slot instead
 * (progress_mn).
 *
 * A reader of an eager broadcast among 3+ PEs on one node that finds the
 * root arrived but not every other PE compares its parameters with the
 * root's alone and, when they agree, copies the data from the root's slot
 * and completes (root_read, state NC_UNCHECKED): it does not wait for the
 * other readers, and can run up to HOIST_NC_SLOTS broadcasts ahead of the
 * slowest (with more PEs than CPUs one of them is usually off its CPU).
 * The full compare, and this PE's done, come once every PE arrived there:
 * in its later progress, in any wait of a collective (wait_all: whoever
 * it waits for may wait for that done) and, at the latest, before its slot
 * is reused. Its error goes to the eager roots' verdicts and to the PE's
 * next collective (nc_sticky), which is, at the latest, the next one that
 * is not such a broadcast (that one waits for every PE, so every earlier
 * compare is done). A reader whose parameters differ from the root's takes
 * the path above: the same verdict as every PE that compares in full.
 * Such a PE may be back in the program (a barrier, a wait of its own)
 * with its done behind m, so with 3+ PEs nobody waits for the others' done
 * of an eager broadcast inside a later collective (progress_upto): an
 * eager root's verdict is taken when it is there, and waited for only in
 * a later collective that every PE agreed on and that is no eager
 * broadcast (early_verdicts: every PE makes its owed compares on that
 * path before it reads) -- or where the slot is reused, a window later.
 * Non-blocking progress looks at these at all only once the oldest is
 * HOIST_NC_SLOTS / 2 old: a read per call of the lines the others store
 * into for every collective made each of those stores miss.
 *
 * Split-phase
 * requests read when waited for or tested; up to HOIST_NC_SLOTS of a PE
 * may be open, one more completes the oldest first (every PE does the
 * same, so that never waits for a PE that has not started it). A
 * collective implies what it did on the daemon path: the caller's earlier
 * puts and gets complete before its src is read (hoist__quiet, free when
 * they went the direct path); it is no barrier and starts no phase, so the
 * daemon needs to hear of none of it.
 *
 * Waits spin, yield for HOIST_SPIN_US, then sleep on nc_seq in the lowest
 * rank's wake line (Dekker with nc_sleepers, as the node barrier); they end
 * with the job's error (a PE died: the daemon fails the job), nb_error (the
 * daemon gone) or nc_error (a PE could not map a peer's heap), and recheck
 * the daemon every sleep slice: an error, never a hang.
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hoist_combine.h"
#include "hoist_futex.h"
#include "internal.h"

#define S HOIST_NC_SLOTS
#define SLICE_NS (50u * 1000u * 1000u) /* recheck the daemon's liveness */

/* NC_UNCHECKED: a reader of an eager broadcast among 3+ PEs that compared
 * with the root only and returned (root_read): the full compare is still
 * due, and so is its done */
enum { NC_FREE, NC_ARRIVED, NC_EARLY, NC_READ, NC_UNCHECKED };

struct hoist_nc_rec {
	uint32_t m;
	uint8_t state;
	uint8_t read; /* this PE read what it reads of collective m */
	uint8_t kind, type, op, eager;
	uint8_t inl; /* eager contributions in the slots' inl (same test on every PE) */
	int32_t root;
	int32_t rc; /* the result so far */
	uint32_t dseq; /* several nodes: the job's number of it (coll_calls) */
	uint64_t len, dlen;
	void *dst;
	char *tmp;             /* the result until every PE read (in place, not eager) */
	struct hoist_req *req; /* the request, until it completed */
};

static int nc_map(struct hoist_ctx *c);

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct hoist_nc_hdr *hdr(const struct hoist_ctx *c, int p)
{
	return (struct hoist_nc_hdr *)(c->nc_base[p] + c->nc_off);
}

static struct hoist_nc_slot *slot(const struct hoist_ctx *c, int p, uint32_t m)
{
	return (struct hoist_nc_slot *)(c->nc_base[p] + c->nc_off + sizeof(struct hoist_nc_hdr)) +
	       m % S;
}

static int reached(uint32_t w, uint32_t m)
{
	return (int32_t)(w - m) >= 0;
}

/* PE p's slot holds collective m: it stores the slot's seq last (release),
 * so what it wrote there before is visible once seq reads m. A slot is
 * rewritten (seq m + S) only after every PE's done reached m. */
static int arrived_at(const struct hoist_ctx *c, int p, uint32_t m)
{
	return __atomic_load_n(&slot(c, p, m)->a.seq, __ATOMIC_ACQUIRE) == m;
}

/* every other PE's done reached m (acquire: what each stored before it is
 * visible). Read only when the copy of the lowest one (nc_done_min) is
 * behind m: a PE waiting for the window (m - S) reads the others' header
 * lines about once per S collectives, not once per collective */
static int others_done(struct hoist_ctx *c, uint32_t m)
{
	if (reached(c->nc_done_min, m))
		return 1;
	uint32_t lo = m + 0x40000000u; /* above anything a PE can have reached */
	uint64_t early = ~(uint64_t)0;
	for (int i = 0; i < c->nc_n; i++) {
		int p = c->nc_ranks[i];
		if (p == c->rank)
			continue;
		uint32_t d = __atomic_load_n(&hdr(c, p)->done, __ATOMIC_ACQUIRE);
		if (!reached(d, m))
			return 0;
		if ((int32_t)(d - lo) < 0)
			lo = d;
		early &= __atomic_load_n(&hdr(c, p)->early, __ATOMIC_RELAXED);
	}
	/* the bits of every collective up to lo hold until this PE completed
	 * them (a PE starts k + 64 only once every PE's done reached k + 32,
	 * and this PE's does so only after it completed k) */
	c->nc_done_min = lo;
	c->nc_others_early = early;
	return 1;
}

/* every PE (but skip) arrived at m (done 0), or every PE's done reached m
 * (done 1); acquire. Arrival is the slot's own seq: a reader touches the
 * line it reads next anyway. */
static int all_reached(struct hoist_ctx *c, int done, uint32_t m, int skip)
{
	if (done)
		return reached(c->nc_done, m) && others_done(c, m);
	for (int i = 0; i < c->nc_n; i++) {
		int p = c->nc_ranks[i];
		if (p == skip || p == c->rank)
			continue;
		if (c->nc_mn ? !reached(__atomic_load_n(&hdr(c, p)->arrived, __ATOMIC_ACQUIRE), m)
			     : !arrived_at(c, p, m))
			return 0;
	}
	return 1;
}

/* the job failed, the node's daemon is gone, or a PE could not set up */
static int failed(struct hoist_ctx *c)
{
	struct hoist_heap_wake *l = c->nc_line;
	int32_t err = __atomic_load_n(&c->ring.ctrl->job_error, __ATOMIC_ACQUIRE);
	if (!err)
		err = c->nc_dead;
	if (!err && (err = __atomic_load_n(&l->nb_error, __ATOMIC_ACQUIRE)))
		c->daemon_gone = 1; /* our daemon: the node's one */
	if (!err)
		err = __atomic_load_n(&l->nc_error, __ATOMIC_ACQUIRE);
	return err;
}

static void wake_all(struct hoist_ctx *c)
{
	struct hoist_heap_wake *l = c->nc_line;
	__atomic_fetch_add(&l->nc_seq, 1, __ATOMIC_SEQ_CST);
	hoist_futex_wake(&l->nc_seq);
}

/* store a progress word; wake sleepers (Dekker with wait_all) */
/* after a release store of a progress word: the fence, then the wake of
 * whoever sleeps (Dekker with nc_sleepers) */
static void publish_wake(struct hoist_ctx *c)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	c->nc_wake_due = 0; /* the fence orders every earlier store too */
	if (__atomic_load_n(&c->nc_line->nc_sleepers, __ATOMIC_RELAXED))
		wake_all(c);
}

static void publish(struct hoist_ctx *c, uint32_t *word, uint32_t v)
{
	__atomic_store_n(word, v, __ATOMIC_RELEASE);
	publish_wake(c);
}

/* A blocking start stores its slot's seq and defers the fence and the
 * sleepers' check: the read that usually follows publishes done at once,
 * whose fence and check cover both stores. Due before anything that waits
 * or returns to the caller. */
void hoist__nc_wake(struct hoist_ctx *c)
{
	if (!c->nc_wake_due)
		return;
	c->nc_wake_due = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->nc_line->nc_sleepers, __ATOMIC_RELAXED))
		wake_all(c);
}

/* several nodes: the daemon stored the result of node collective m in
 * the anchor's slot (acquire: the dsts it wrote are visible) */
static int fin_reached(const struct hoist_ctx *c, uint32_t m)
{
	return __atomic_load_n(&slot(c, c->nc_ranks[0], m)->a.fin, __ATOMIC_ACQUIRE) == m;
}

/* several nodes: the node's inbox entry of m (hoist_shm.h), the anchor's */
static struct hoist_nc_inbox *inbox(const struct hoist_ctx *c, uint32_t m)
{
	return hoist_nc_inbox_at(c->nc_base[c->nc_ranks[0]] + c->nc_off, m);
}

/* the daemon copied the data of eager broadcast m from another node into
 * the inbox (acquire: the entry is visible) */
static int inbox_reached(const struct hoist_ctx *c, uint32_t m)
{
	return __atomic_load_n(&inbox(c, m)->seq, __ATOMIC_ACQUIRE) == m;
}

#define FIN 2    /* wait_all's what: the daemon's result of m */
#define OTHERS 3 /* every other PE's done reached m */
#define ROOT 4   /* the root of this PE's collective m arrived at m */
#define INBOX 5  /* the data of m in the inbox, or the daemon's result of m */

static int cond(struct hoist_ctx *c, int what, uint32_t m)
{
	if (what == FIN)
		return fin_reached(c, m);
	if (what == INBOX)
		return inbox_reached(c, m) || fin_reached(c, m);
	if (what == ROOT) { /* over several nodes the slot's seq is no flag: arrived is */
		int r = c->nc_rec[m % S].root;
		return c->nc_mn ? reached(__atomic_load_n(&hdr(c, r)->arrived, __ATOMIC_ACQUIRE), m)
				: arrived_at(c, r, m);
	}
	return what == OTHERS ? others_done(c, m) : all_reached(c, what, m, -1);
}

static void settle_unchecked(struct hoist_ctx *c, uint32_t m, int arrived);
static int progress_rec(struct hoist_ctx *c, struct hoist_nc_rec *rec, int blocking);

/* until every PE's word (arrived: 0, done: 1) reached m, or the daemon's
 * result of m came (FIN), or the job's / daemon's end. While it waits it
 * makes the full compares of its readers that returned early (root_read)
 * once the others arrived there: whoever it waits for may wait for the
 * done they hold back */
static int wait_all(struct hoist_ctx *c, int done, uint32_t m)
{
	struct hoist_heap_wake *l = c->nc_line;
	uint64_t start = 0;
	hoist__nc_wake(c); /* whoever we wait for may wait for us */
	for (unsigned spins = 0;; spins++) {
		if (cond(c, done, m))
			return 0;
		if (spins % 64 != 63) {
			hoist_cpu_relax();
			continue;
		}
		int rc = failed(c);
		if (rc)
			return rc;
		if (c->nc_done + 1 != m)
			settle_unchecked(c, m, 0);
		uint64_t t = now_ns();
		if (!start)
			start = t;
		if (t - start < (uint64_t)c->spin_us * 1000u) {
			sched_yield(); /* the one we wait for may need our CPU */
			continue;
		}
		__atomic_fetch_add(&l->nc_sleepers, 1, __ATOMIC_SEQ_CST);
		uint32_t seq = __atomic_load_n(&l->nc_seq, __ATOMIC_SEQ_CST);
		if (!cond(c, done, m) && !failed(c)) {
			rc = hoist_futex_wait(&l->nc_seq, seq, SLICE_NS);
			rc = rc == -ETIMEDOUT ? hoist__check_daemon(c) : 0;
		}
		__atomic_fetch_sub(&l->nc_sleepers, 1, __ATOMIC_SEQ_CST);
		if (rc)
			return rc;
	}
}

/* rec was read: move done on over every collective of this PE read so far;
 * 1 when it moved (stored, release, but no wake yet: publish does that) */
static int mark_read_store(struct hoist_ctx *c, struct hoist_nc_rec *rec)
{
	rec->read = 1;
	uint32_t d = c->nc_done;
	while (d != c->nc_m) {
		const struct hoist_nc_rec *r = &c->nc_rec[(d + 1) % S];
		if (r->m == d + 1 && !r->read)
			break;
		d++;
	}
	if (d == c->nc_done)
		return 0;
	c->nc_done = d;
	__atomic_store_n(&hdr(c, c->rank)->done, d, __ATOMIC_RELEASE);
	return 1;
}

/* rec was read: move done on over every collective of this PE read so far */
static void mark_read(struct hoist_ctx *c, struct hoist_nc_rec *rec)
{
	if (mark_read_store(c, rec))
		publish_wake(c);
}

static int rec_end(struct hoist_ctx *c, struct hoist_nc_rec *rec, int rc)
{
	/* a PE or node of the job died: every later collective fails too,
	 * whatever reached this PE first (another node's abort can tell the
	 * daemon before its own peer loss does, and the root of an eager
	 * broadcast reads nothing else before it returns) */
	if (rc == -ECONNRESET && !c->nc_dead)
		c->nc_dead = rc;
	if (rec->tmp) {
		free(rec->tmp);
		rec->tmp = NULL;
	}
	if (rec->req) {
		rec->req->rc = rc;
		rec->req->finished = 1;
		rec->req = NULL;
	}
	rec->state = NC_FREE;
	return 1;
}

/* The caller's own parameters, checked as the daemon checks a descriptor
 * (daemon/stages/validate.c validate_coll): 0 or -errno; the heap-file
 * offsets of src and dst in a. */
static int own_args(const struct hoist_ctx *c, struct hoist_nc_args *a, const void *dst,
		    const void *src)
{
	int rooted = a->kind == HOIST_COLL_BROADCAST || a->kind == HOIST_COLL_REDUCE;
	if (rooted ? (a->root < 0 || a->root >= c->size) : a->root != 0)
		return -EINVAL;
	uint64_t dlen = a->len, slen = a->len;
	switch (a->kind) {
	case HOIST_COLL_REDUCE:
	case HOIST_COLL_ALLREDUCE:
		if (a->type >= HOIST_COLL_TYPES || a->op >= HOIST_COLL_OPS)
			return -EINVAL;
		if (a->type >= HOIST_COLL_TYPE_FLOAT && a->op >= HOIST_COLL_OP_AND)
			return -EINVAL; /* bitwise operations on floating point */
		if (a->len % hoist_coll_type_size(a->type))
			return -EINVAL;
		break;
	case HOIST_COLL_ALLTOALL:
	case HOIST_COLL_ALLGATHER:
		if (a->len > c->heap_bytes / (uint64_t)c->size)
			return -EFAULT;
		dlen = a->len * (uint64_t)c->size;
		if (a->kind == HOIST_COLL_ALLTOALL)
			slen = dlen;
		break;
	default:
		break;
	}
	if (!dst || !src || hoist__sym_off(c, dst, dlen, &a->dst_off) ||
	    hoist__sym_off(c, src, slen, &a->src_off))
		return -EFAULT;
	return 0;
}

/* rec needs cond(what) of its collective (wait_all's): 1 it holds (waited
 * for when blocking); else 0, and *ret is what progress_rec returns: 0 not
 * yet (not blocking), or 1 for rec ended by the job's or daemon's end */
static int need(struct hoist_ctx *c, struct hoist_nc_rec *rec, int what, int blocking, int *ret)
{
	if (cond(c, what, rec->m))
		return 1;
	int rc = blocking ? wait_all(c, what, rec->m) : failed(c);
	if (blocking && !rc)
		return 1;
	*ret = rc ? rec_end(c, rec, rc) : 0;
	return 0;
}

/* every PE's parameters of collective m: the same verdict on every PE */
static int check_args(const struct hoist_ctx *c, uint32_t m)
{
	const struct hoist_nc_args *a0 = &slot(c, c->nc_ranks[0], m)->a;
	int bad = 0, differ = 0;
	for (int i = 0; i < c->nc_n; i++) {
		const struct hoist_nc_args *a = &slot(c, c->nc_ranks[i], m)->a;
		if (a->bad && !bad)
			bad = a->bad;
		if (a->seq != m || a->kind != a0->kind || a->type != a0->type || a->op != a0->op ||
		    a->root != a0->root || a->len != a0->len)
			differ = 1;
	}
	return bad ? bad : differ ? -EINVAL : 0;
}

/* collective m failed the parameters' check: every eager broadcast root
 * among the PEs (it returned at once and compares nothing) finds that in
 * its slot's verdict, once this PE's done passed m (release) */
static void tell_early_roots(const struct hoist_ctx *c, uint32_t m, int rc)
{
	for (int i = 0; i < c->nc_n; i++) {
		int p = c->nc_ranks[i];
		struct hoist_nc_args *a = &slot(c, p, m)->a;
		if (p != c->rank && a->kind == HOIST_COLL_BROADCAST && a->eager && a->root == p)
			__atomic_store_n(&a->verdict, rc, __ATOMIC_RELAXED);
	}
}

/* a reader of an eager broadcast whose parameters agreed with the root's:
 * the data from the root's copy, complete; the full verdict is still due
 * (NC_UNCHECKED). 1 */
static int read_early(struct hoist_nc_rec *rec, const char *data)
{
	memcpy(rec->dst, data, rec->len);
	if (rec->req) {
		rec->req->rc = 0;
		rec->req->finished = 1;
		rec->req = NULL;
	}
	rec->state = NC_UNCHECKED;
	return 1;
}

/* A reader of an eager broadcast among 3+ PEs on one node: once the root
 * arrived at m, compare this PE's parameters with the root's alone and,
 * when they agree, take the data from the root's slot and complete: the
 * reader does not wait for the other readers (with 4 PEs on 2 CPUs, one
 * of them is usually off its CPU). The full compare (check_args, so that
 * a mismatch between two readers is still found) runs later, as an eager
 * root's verdict does: its error is reported by the PE's next collective.
 * 1 done, 0 they differ (or the root is no eager root of m): the full
 * path, the same verdict there as before. The root's slot stays m until
 * every PE's done reached m, and this PE's does not before the full
 * compare. */
static int root_read(struct hoist_ctx *c, struct hoist_nc_rec *rec)
{
	const struct hoist_nc_args *a = &slot(c, rec->root, rec->m)->a;
	if (a->bad || !a->eager || a->kind != rec->kind || a->root != rec->root ||
	    a->len != rec->len)
		return 0;
	return read_early(rec, rec->inl ? (const char *)a->inl : slot(c, rec->root, rec->m)->data);
}

/* Several nodes, a reader of an eager broadcast whose root is on another
 * node: the daemon copied the root's data into the inbox (ABI 11). When
 * this PE's parameters agree with the root's there, take the data and
 * complete (NC_UNCHECKED): the verdict of the other PEs' parameters comes
 * with fin, as for the readers on the root's node. 1 done, 0 not (no data
 * yet, or they differ: the full path and the daemon's verdict). The
 * entry stays m until every local PE's done reached m, and this PE's
 * does not before fin. */
static int inbox_read(struct hoist_ctx *c, struct hoist_nc_rec *rec)
{
	const struct hoist_nc_inbox *b = inbox(c, rec->m);
	if (!inbox_reached(c, rec->m) || b->dseq != rec->dseq || b->kind != rec->kind ||
	    b->root != rec->root || b->len != rec->len)
		return 0;
	return read_early(rec, b->data);
}

/* an eager broadcast whose data comes through the inbox */
static int inbox_bcast(const struct hoist_ctx *c, const struct hoist_nc_rec *rec)
{
	return rec->eager && rec->kind == HOIST_COLL_BROADCAST && !c->nc_base[rec->root];
}

/* PE p's contribution to collective m: its slot's copy or its src */
static const char *contrib(const struct hoist_ctx *c, const struct hoist_nc_rec *rec, int p)
{
	struct hoist_nc_slot *s = slot(c, p, rec->m);
	if (!rec->eager)
		return c->nc_base[p] + s->a.src_off;
	return rec->inl ? (const char *)s->a.inl : s->data;
}

/* read every PE's contribution into dst (or tmp) */
static int pull(struct hoist_ctx *c, struct hoist_nc_rec *rec)
{
	int me = c->rank, n = c->size;
	uint64_t len = rec->len;
	char *out = rec->dst;
	if (!rec->eager) {
		/* in place (or overlapping): the others still read our src */
		const char *mine = contrib(c, rec, me);
		uint64_t slen = rec->kind == HOIST_COLL_ALLTOALL ? rec->dlen : len;
		if (rec->dlen && slen && out < mine + slen && mine < out + rec->dlen) {
			if (!(rec->tmp = malloc(rec->dlen)))
				return -ENOMEM;
			out = rec->tmp;
		}
	}
	switch (rec->kind) {
	case HOIST_COLL_BROADCAST:
		memmove(out, contrib(c, rec, rec->root), len);
		break;
	case HOIST_COLL_REDUCE:
	case HOIST_COLL_ALLREDUCE:
		if (rec->kind == HOIST_COLL_REDUCE && me != rec->root)
			break;
		memmove(out, contrib(c, rec, 0), len);
		for (int p = 1; p < n; p++)
			hoist_coll_combine(rec->type, rec->op, out, contrib(c, rec, p), len);
		break;
	case HOIST_COLL_ALLGATHER:
		for (int p = 0; p < n; p++)
			memmove(out + (uint64_t)p * len, contrib(c, rec, p), len);
		break;
	case HOIST_COLL_ALLTOALL:
		for (int p = 0; p < n; p++)
			memmove(out + (uint64_t)p * len, contrib(c, rec, p) + (uint64_t)me * len, len);
		break;
	default:
		break;
	}
	return 0;
}

/* Several nodes: once every local PE arrived at m, ONE of them (the one
 * that claims the anchor's slot) posts the node's descriptor. 0, or the
 * daemon is gone (-errno: stored for the node's PEs). */
static int try_post(struct hoist_ctx *c, struct hoist_nc_rec *rec)
{
	uint32_t *claim = &slot(c, c->nc_ranks[0], rec->m)->a.claim, zero = 0;
	if (__atomic_load_n(claim, __ATOMIC_RELAXED) || !all_reached(c, 0, rec->m, -1) ||
	    !__atomic_compare_exchange_n(claim, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return 0;
	struct hoist_sqe *sqe;
	int rc = hoist__sqe_get(c, &sqe);
	if (rc) { /* our daemon is gone: nobody can answer the node's PEs */
		__atomic_store_n(&c->nc_line->nb_error, rc, __ATOMIC_SEQ_CST);
		wake_all(c);
		return rc;
	}
	struct hoist_coll_args a = {.kind = rec->kind, .flags = HOIST_COLL_F_NODE,
				    .reserved0 = rec->dseq};
	*sqe = (struct hoist_sqe){.opcode = HOIST_OP_COLL,
				  .pe = c->nc_ranks[0],
				  .remote_off = c->nc_off,
				  .local_off = rec->m};
	memcpy(sqe->inline_data, &a, sizeof(a));
	/* no CQE comes: nothing a quiet or a direct access waits for */
	int psq = c->posted_since_quiet;
	uint32_t ops_tail = c->sq_ops_tail;
	hoist__sqe_submit(c);
	c->posted_since_quiet = psq;
	c->sq_ops_tail = ops_tail;
	c->colls_node_posted++;
	return 0;
}

/* progress_rec of a job over several nodes: arrived, posted (by one),
 * the daemon's result in the anchor's slot */
static int progress_mn(struct hoist_ctx *c, struct hoist_nc_rec *rec, int blocking)
{
	int rc;
	if (rec->state == NC_ARRIVED && rec->eager && rec->kind == HOIST_COLL_BROADCAST &&
	    c->nc_base[rec->root]) {
		/* the root is on this node: its slot has the data, and the
		 * daemon writes no dst here (ABI 9). Complete once the root is
		 * there; the daemon's verdict (the other nodes' parameters)
		 * comes with fin, as for the root (NC_UNCHECKED) */
		if (!need(c, rec, ROOT, blocking, &rc))
			return rc;
		if (root_read(c, rec))
			return 1;
		/* it differs from the root's: the daemon's verdict, below */
	}
	if (rec->state == NC_ARRIVED && inbox_bcast(c, rec)) {
		/* the root is on another node: its data comes to the inbox
		 * as it arrives, perhaps before this node's PEs are all here
		 * (ABI 11); the verdict comes with fin (NC_UNCHECKED) */
		if (!need(c, rec, INBOX, blocking, &rc))
			return rc;
		if (inbox_read(c, rec))
			return 1;
		/* it differs from the root's, or the verdict came first: below */
	}
	/* NC_UNCHECKED: the last local PE to arrive posts the descriptor */
	if (rec->state != NC_UNCHECKED && !need(c, rec, 0, blocking, &rc))
		return rc;
	if ((rc = try_post(c, rec)))
		return rec_end(c, rec, rc);
	if (!need(c, rec, FIN, blocking, &rc))
		return rc;
	rc = __atomic_load_n(&slot(c, c->nc_ranks[0], rec->m)->a.res, __ATOMIC_RELAXED);
	if (!rc && rec->state == NC_ARRIVED && inbox_bcast(c, rec)) {
		/* agreed by every PE: the data is in the inbox (stored before
		 * fin), never in dst */
		if (!inbox_read(c, rec))
			rc = -EPROTO;
	}
	mark_read(c, rec); /* the anchor may reuse its slot from here on */
	if (rec->state == NC_EARLY || rec->state == NC_UNCHECKED) {
		/* returned already: report with the next one */
		if (rc && !c->nc_sticky)
			c->nc_sticky = rc;
		rc = 0;
	}
	return rec_end(c, rec, rc);
}

/* the full compare of an NC_UNCHECKED reader (root_read), every PE
 * arrived at its m: an error goes to the eager roots' verdicts and, as
 * this PE returned already, to its next collective; then its done */
static int check_late(struct hoist_ctx *c, struct hoist_nc_rec *rec, int wake)
{
	int rc = check_args(c, rec->m);
	if (rc) {
		tell_early_roots(c, rec->m, rc);
		if (!c->nc_sticky)
			c->nc_sticky = rc;
	}
	if (mark_read_store(c, rec) && wake)
		publish_wake(c);
	return rec_end(c, rec, 0);
}

/* the full compare of this PE's NC_UNCHECKED collectives before m, in
 * order, as far as every PE arrived at them (arrived: every PE arrived at
 * m, so at every one before): its done (moved in order) waits for them */
static void settle_unchecked(struct hoist_ctx *c, uint32_t m, int arrived)
{
	if (c->nc_mn)
		return; /* the daemon's verdict: progress_mn */
	uint32_t d = c->nc_done;
	for (uint32_t k = d + 1; (int32_t)(m - k) > 0; k++) {
		struct hoist_nc_rec *r = &c->nc_rec[k % S];
		if (r->m != k || r->state != NC_UNCHECKED)
			continue;
		if (!arrived && !all_reached(c, 0, k, -1))
			break;
		check_late(c, r, 0);
	}
	if (c->nc_done != d) /* one fence and wake for the run */
		publish_wake(c);
}

/* every PE agreed on collective m, which is no eager broadcast: each of
 * them takes the full path of m and, before it reads m, makes the compares
 * it owes for earlier ones (settle_unchecked), so its done passes them
 * without anything more from this PE. So this PE may wait here for the
 * verdicts of its own earlier eager broadcast roots (NC_EARLY): its call
 * of m reports them, as the README promises ("its next collective that
 * waits for the others"). Not where m differs: a PE that took m for an
 * eager broadcast root returned at once. */
static void early_verdicts(struct hoist_ctx *c, uint32_t m)
{
	if (!c->nc_early)
		return; /* no eager root among this PE's last 64 collectives */
	uint32_t k = c->nc_m - (c->nc_m < S ? c->nc_m : S) + 1;
	for (; (int32_t)(m - k) > 0; k++) {
		struct hoist_nc_rec *r = &c->nc_rec[k % S];
		if (r->m == k && r->state == NC_EARLY &&
		    (others_done(c, k) || !wait_all(c, OTHERS, k)))
			progress_rec(c, r, 0);
	}
}

/* Advance rec; blocking: until it completed (or, when blocking is 2, until
 * its result is in dst: hoist_wait_from). 1 complete, 0 not yet. */
static int progress_rec(struct hoist_ctx *c, struct hoist_nc_rec *rec, int blocking)
{
	int rc;
	if (c->nc_mn && rec->state != NC_FREE)
		return progress_mn(c, rec, blocking);
	if (rec->state == NC_EARLY) {
		/* one node: the others compare the parameters, and tell this
		 * root in its slot's verdict before their done passes m. Every
		 * other PE was itself an eager root of m (no one compared): each
		 * named itself the root, not this PE: they differ */
		if (!need(c, rec, OTHERS, blocking, &rc))
			return rc;
		if ((c->nc_others_early >> (rec->m % 64)) & 1)
			rc = -EINVAL;
		else
			rc = __atomic_load_n(&slot(c, c->rank, rec->m)->a.verdict, __ATOMIC_RELAXED);
		if (rc && !c->nc_sticky) /* returned already: report with the next one */
			c->nc_sticky = rc;
		return rec_end(c, rec, 0);
	}
	if (rec->state == NC_ARRIVED && rec->eager && rec->kind == HOIST_COLL_BROADCAST &&
	    c->nc_n > 2 && !all_reached(c, 0, rec->m, -1)) {
		/* a reader that would wait for other readers: the root's slot
		 * is all it needs (root_read) */
		if (!need(c, rec, ROOT, blocking, &rc))
			return rc;
		if (root_read(c, rec))
			return 1; /* the full compare later */
	}
	if (rec->state == NC_UNCHECKED) {
		if (!need(c, rec, 0, blocking, &rc))
			return rc;
		settle_unchecked(c, rec->m, 1);
		return check_late(c, rec, 1);
	}
	if (rec->state == NC_ARRIVED || rec->state == NC_EARLY) {
		if (!need(c, rec, 0, blocking, &rc))
			return rc;
		settle_unchecked(c, rec->m, 1);
		rc = check_args(c, rec->m);
		if (rc)
			tell_early_roots(c, rec->m, rc);
		else if (blocking && c->nc_n > 2 && !(rec->eager && rec->kind == HOIST_COLL_BROADCAST))
			early_verdicts(c, rec->m);
		/* a mismatch is seen by every PE: nobody reads anyone's src */
		int agreed = !rc;
		if (agreed)
			rc = pull(c, rec);
		mark_read(c, rec); /* the slots may be reused from here on */
		if (rec->eager || !agreed)
			return rec_end(c, rec, rc);
		rec->rc = rc;
		rec->state = NC_READ;
	}
	if (rec->state == NC_READ && blocking == 2 && !rec->tmp)
		return 0; /* dst holds every block; others may still read our src */
	if (rec->state == NC_READ) {
		if (!need(c, rec, 1, blocking, &rc))
			return rc;
		if (rec->tmp)
			memcpy(rec->dst, rec->tmp, rec->dlen);
		return rec_end(c, rec, rec->rc);
	}
	return 1;
}

/* every open collective of this PE up to number upto, in order */
static void progress_upto(struct hoist_ctx *c, uint32_t upto, int blocking)
{
	/* every one below the window is complete (m - S completes before m
	 * starts), and so is every one below nc_lo */
	uint32_t k = c->nc_m - (c->nc_m < S ? c->nc_m : S) + 1;
	if ((int32_t)(c->nc_lo - k) > 0)
		k = c->nc_lo;
	/* Not blocking, the eager broadcasts whose requests completed (a
	 * root's NC_EARLY, a reader's NC_UNCHECKED) are looked at only once
	 * the oldest is HOIST_NC_SLOTS / 2 old: their checks read the lines
	 * that the other PEs store into for every collective (their done,
	 * their slots), and a read per call made each of those stores miss
	 * and stall its PE's publish fence (2 PEs, broadcasts of 8 B: 320 ->
	 * 210 ns per call). Nothing waits for them but the verdict, which a
	 * later blocking wait takes, and the reuse of their slot (upto,
	 * blocking: hoist__nc_start, a full window later). */
	int lazy = !blocking && (int32_t)(c->nc_m - k) < (int32_t)(S / 2);
	/* over several nodes a reader's NC_UNCHECKED waits for the daemon's
	 * fin alone, which needs nothing more of any PE: a later collective
	 * that is no eager broadcast waits for it (and so reports its error,
	 * as the root's next collective does); a later eager broadcast does
	 * not (the readers of the root's node run ahead) */
	const struct hoist_nc_rec *ur = &c->nc_rec[upto % S];
	int mn_hold = c->nc_mn && blocking && ur->m == upto &&
		      !(ur->eager && ur->kind == HOIST_COLL_BROADCAST);
	/* the NC_UNCHECKED ones whose compare can be made now, with one fence */
	if (!c->nc_mn && !lazy)
		settle_unchecked(c, upto + 1, 0);
	for (int run = 1; reached(upto, k); k++) {
		struct hoist_nc_rec *rec = &c->nc_rec[k % S];
		if (lazy && rec->m == k && rec->state == NC_EARLY && !c->nc_mn &&
		    !reached(c->nc_done_min, k))
			return;
		/* an eager broadcast's request completed already: waiting for its
		 * check would wait for the other PEs' done, which they may move
		 * only in a later call (a reader's NC_UNCHECKED) -- while they
		 * wait for this PE elsewhere. Blocking only where its slot is
		 * wanted again (upto: hoist__nc_start, a full window later, once
		 * every PE started the collective that reuses it) */
		if (rec->m == k && rec->state != NC_FREE)
			progress_rec(c, rec,
				     ((rec->state == NC_UNCHECKED && !mn_hold) ||
				      (rec->state == NC_EARLY && c->nc_n > 2 && !c->nc_mn)) &&
					     k != upto
					     ? 0
					     : blocking);
		if (rec->m != k || rec->state == NC_FREE) {
			if (run)
				c->nc_lo = k + 1;
			continue;
		}
		run = 0;
		/* one node, not blocking, and not every PE arrived at k (or,
		 * an eager root, finished with it): neither did they at a
		 * later one (every PE starts and reads in order); do not
		 * touch those lines */
		if (!blocking && !c->nc_mn && (rec->state == NC_ARRIVED || rec->state == NC_EARLY))
			return;
	}
}

int hoist__nc_start(struct hoist_ctx *c, struct hoist_req *r, void *dst, const void *src,
		    uint64_t len, int type, int op, int root, int blocking)
{
	if (!c->nc_base && !c->nc_err && (nc_map(c), !c->nc_on))
		return 0; /* not every PE has HOIST_DIRECT=1: the daemon's path */
	r->node = 1;
	int me = c->rank, rc = c->nc_err ? c->nc_err : failed(c);
	if (rc) { /* nobody waits for this PE: the others see the same */
		r->finished = 1;
		r->rc = rc;
		return 0;
	}
	uint32_t m = c->nc_m + 1;
	struct hoist_nc_rec *rec = &c->nc_rec[m % S];
	progress_upto(c, c->nc_m, 0); /* what can be read now (eager roots: their check) */
	if (rec->state != NC_FREE)    /* m - S is still open: complete it (all PEs do) */
		progress_upto(c, rec->m, 1);
	if (m > S && (rc = wait_all(c, 1, m - S))) { /* slot m % S is read by all */
		r->finished = 1;
		r->rc = rc;
		return 0;
	}
	struct hoist_nc_slot *s = slot(c, me, m);
	struct hoist_nc_args a = {.seq = m,
				  .kind = r->kind,
				  .type = type < 0 || type > 255 ? 255 : (uint8_t)type,
				  .op = op < 0 || op > 255 ? 255 : (uint8_t)op,
				  .root = root,
				  .len = len};
	if (a.kind != HOIST_COLL_REDUCE && a.kind != HOIST_COLL_ALLREDUCE)
		a.type = a.op = 0;
	a.bad = own_args(c, &a, dst, src);
	uint64_t dlen = a.kind == HOIST_COLL_ALLGATHER || a.kind == HOIST_COLL_ALLTOALL
				? len * (uint64_t)c->size
				: len;
	uint64_t cb = a.kind == HOIST_COLL_ALLTOALL ? dlen : len; /* a contribution */
	a.eager = !a.bad && cb <= HOIST_NC_EAGER;
	/* one node, at most HOIST_NC_INLINE bytes: in the parameters' line */
	int inl = a.eager && !c->nc_mn && cb <= HOIST_NC_INLINE;
	if (a.eager && cb && (a.kind != HOIST_COLL_BROADCAST || me == root))
		memcpy(inl ? a.inl : (uint8_t *)s->data, src, cb);
	/* every field but seq, then seq = m (release, below): the others
	 * poll seq and read the rest once it reads m */
	_Static_assert(offsetof(struct hoist_nc_args, seq) == 0, "seq first");
	memcpy((char *)&s->a + sizeof(a.seq), (char *)&a + sizeof(a.seq), sizeof(a) - sizeof(a.seq));
	int early = a.eager && a.kind == HOIST_COLL_BROADCAST && me == root;
	uint64_t bit = (uint64_t)1 << (m % 64);
	c->nc_early = early ? c->nc_early | bit : c->nc_early & ~bit;
	__atomic_store_n(&hdr(c, me)->early, c->nc_early, __ATOMIC_RELAXED);
	c->nc_m = m;
	*rec = (struct hoist_nc_rec){.m = m,
				     .state = NC_ARRIVED,
				     .kind = a.kind,
				     .type = a.type,
				     .op = a.op,
				     .eager = a.eager,
				     .inl = (uint8_t)inl,
				     .root = root,
				     .len = len,
				     .dlen = dlen,
				     .dst = dst,
				     .req = r};
	if (c->nc_mn)
		rec->dseq = c->coll_calls++;
	r->m = m;
	c->colls_node++;
	/* the last to arrive checks that the daemon lives (it cannot fail the
	 * job when it is gone): it fails the collective for all instead. One
	 * poll() per millisecond at most: it is a system call, and a
	 * collective of 8 B takes well under a microsecond */
	if ((c->daemon_gone || (m % 16 == 0 && now_ns() - c->nc_checked_ns >= 1000000u)) &&
	    all_reached(c, 0, m, me) &&
	    (rc = hoist__check_daemon_due(c))) {
		__atomic_store_n(&c->nc_line->nb_error, rc, __ATOMIC_SEQ_CST);
		__atomic_fetch_add(&c->nc_line->nb_gen, 1, __ATOMIC_SEQ_CST);
		hoist_futex_wake(&c->nc_line->nb_gen);
		wake_all(c);
		rec_end(c, rec, rc);
		return 0;
	}
	if (c->nc_mn) { /* the node's PEs poll arrived, as before the slot's seq was the flag */
		__atomic_store_n(&s->a.seq, m, __ATOMIC_RELAXED);
		publish(c, &hdr(c, me)->arrived, m);
	} else {
		__atomic_store_n(&hdr(c, me)->arrived, m, __ATOMIC_RELAXED);
		/* an eager root reads nothing of it: done = m goes with the
		 * arrival (one fence and wake check for both) */
		if (early)
			mark_read_store(c, rec);
		if (blocking && !early) { /* the read's publish wakes for both, or hoist__nc_wake */
			__atomic_store_n(&s->a.seq, m, __ATOMIC_RELEASE);
			c->nc_wake_due = 1;
		} else {
			publish(c, &s->a.seq, m);
		}
	}
	if (c->nc_mn && (rc = try_post(c, rec))) { /* the last to arrive posts */
		rec_end(c, rec, rc);
		return 0;
	}
	if (early) {
		/* its data is safe in its slot and it reads nothing: complete
		 * now, learn the others' verdict later */
		memmove(dst, src, len);
		rec->state = NC_EARLY;
		rec->req = NULL;
		r->finished = 1;
		r->rc = 0;
	}
	return 0;
}

int hoist__nc_progress(struct hoist_ctx *c, struct hoist_req *r, int blocking)
{
	if (!r->finished)
		progress_upto(c, r->m, blocking);
	return r->finished;
}

/* hoist_wait_from on the node path: every block lands at once, when this
 * PE reads (pull), which needs every PE arrived (the parameters' verdict
 * comes first: a PE with other parameters may have a shorter src). What it
 * saves is the wait until every other PE read this PE's src (a collective
 * above the eager limit): the blocks are in dst before that, unless dst
 * overlaps the own src (written from a copy at the end). 0 or -errno. */
int hoist__nc_wait_from(struct hoist_ctx *c, struct hoist_req *r)
{
	if (r->finished)
		return r->rc;
	progress_upto(c, r->m - 1, 1); /* in order, as hoist__nc_progress */
	struct hoist_nc_rec *rec = &c->nc_rec[r->m % S];
	if (!r->finished && rec->m == r->m && rec->req == r)
		progress_rec(c, rec, 2);
	if (r->finished)
		return r->rc;
	return rec->rc; /* NC_READ: what the read returned */
}

void hoist__nc_setup(struct hoist_ctx *c)
{
	/* every PE of a job of 2+ PEs, HOIST_DIRECT or not, whether or not it
	 * will take part, on every node: the allocations after it stay
	 * symmetric */
	if (c->size < 2)
		return;
	int64_t off = symheap_alloc(&c->heap, HOIST_NC_BYTES);
	if (off < 0 || !c->direct || c->npeers < 2)
		return; /* the same on every PE of this node: the daemon's path */
	/* the block is fresh heap (nothing is allocated before the job's
	 * first barrier but what that barrier belonged to): its words are 0 */
	c->nc_off = (uint64_t)off;
	c->nc_mn = c->npeers != (uint32_t)c->size; /* the daemon runs the inter-node step */
	c->nc_on = 1; /* the peers are mapped by the first collective (nc_map) */
}

/* Several nodes: this PE cannot take part in its node's collectives (it
 * could not map a peer's heap), so its node's descriptor would never come
 * and the node's other PEs (no node barrier line to store nc_error in)
 * and every other node's would wait for it until the job ended otherwise.
 * One node descriptor carrying the error instead (reserved1, hoist_shm.h)
 * makes the daemon fail this collective on every node and the job on
 * this one. The daemon gone: nothing to tell. */
static void post_node_fail(struct hoist_ctx *c, int rc)
{
	struct hoist_sqe *sqe;
	if (hoist__sqe_get(c, &sqe))
		return;
	struct hoist_coll_args a = {.flags = HOIST_COLL_F_NODE,
				    .reserved0 = c->coll_calls++,
				    .reserved1 = (uint64_t)-(int64_t)rc};
	*sqe = (struct hoist_sqe){.opcode = HOIST_OP_COLL};
	memcpy(sqe->inline_data, &a, sizeof(a));
	int psq = c->posted_since_quiet; /* no CQE comes, as try_post */
	uint32_t ops_tail = c->sq_ops_tail;
	hoist__sqe_submit(c);
	c->posted_since_quiet = psq;
	c->sq_ops_tail = ops_tail;
}

/* The first node collective: map every peer's heap (the node barrier has
 * the lowest rank's) and see that every PE stored HOIST_DIRECT=1 at attach;
 * else every PE that gets here sees the same and all take the daemon path
 * (0, nc_on cleared). A PE that cannot map a peer fails every node
 * collective, its own (nc_err) and the others' (nc_error; over several
 * nodes through the daemon: post_node_fail). */
static int nc_map(struct hoist_ctx *c)
{
	c->nc_base = calloc((size_t)c->size, sizeof(*c->nc_base));
	c->nc_rec = calloc(S, sizeof(*c->nc_rec));
	c->nc_ranks = calloc(c->npeers, sizeof(*c->nc_ranks));
	int rc = c->nc_base && c->nc_rec && c->nc_ranks ? 0 : -ENOMEM;
	int all_direct = 1;
	for (uint32_t i = 0; !rc && i < c->npeers; i++)
		c->nc_ranks[i] = c->peers[i].rank;
	c->nc_n = (int32_t)c->npeers;
	for (int i = 0; !rc && i < c->nc_n; i++) {
		int p = c->nc_ranks[i];
		struct hoist_peer *peer = hoist__peer_find(c, p);
		if (!peer)
			rc = -EPROTO;
		else if (p == c->rank)
			c->nc_base[p] = c->heap_base;
		else if (!(rc = hoist__peer_map(c, peer)))
			c->nc_base[p] = peer->base;
		if (!rc && !__atomic_load_n(&hoist_heap_wake_of(c->nc_base[p], c->heap_bytes)->direct,
					    __ATOMIC_ACQUIRE))
			all_direct = 0;
	}
	if (!rc && all_direct) {
		/* the lowest rank's line: the node barrier's too (one node) */
		c->nc_line = hoist_heap_wake_of(c->nc_base[c->nc_ranks[0]], c->heap_bytes);
		return 0;
	}
	hoist__nc_release(c);
	if (!rc) {
		c->nc_on = 0;
		return 0;
	}
	c->nc_err = rc;
	if (c->nc_mn)
		post_node_fail(c, rc);
	if (c->nb_line) { /* the node barrier's line: the lowest rank's */
		c->nc_line = c->nb_line;
		__atomic_store_n(&c->nb_line->nc_error, rc, __ATOMIC_SEQ_CST);
		wake_all(c);
	}
	return rc;
}

void hoist__nc_release(struct hoist_ctx *c)
{
	if (c->nc_rec)
		for (unsigned i = 0; i < S; i++)
			free(c->nc_rec[i].tmp);
	free(c->nc_rec);
	free(c->nc_base);
	free(c->nc_ranks);
	c->nc_rec = NULL;
	c->nc_base = NULL;
	free(c->nc_spare);
	c->nc_spare = NULL;
	c->nc_ranks = NULL;
	c->nc_n = 0;
}
