/*
 * Hierarchical collectives, progress-thread side.
 *
 * A job's collectives are numbered: a client's k-th HOIST_OP_COLL
 * descriptor is collective k of the job on every node (every PE calls them
 * in the same order). State is kept per number (struct coll, a list sorted
 * by number), so several may be in flight (split-phase forms) and chunks
 * that a faster daemon sends before this node got there are buffered.
 *
 * When every local PE has posted collective k (and the parameters agree),
 * the daemon reads the local contributions straight from the PEs' heaps
 * into one node contribution and runs ONE algorithm among the job's nodes
 * (j->nodes, sorted; node index = position in it):
 *
 *   broadcast  binomial tree from the root's node
 *   reduce     binomial tree into the root's node
 *   allreduce  recursive doubling (non-powers of two: the first 2*rem
 *              nodes pair up before and after), or for large vectors over
 *              3+ nodes a ring: reduce-scatter then allgather
 *   allgather  direct exchange: each node sends its PEs' blocks to every
 *              other node; blocks are written into dst as they arrive
 *   alltoall   direct (pairwise) exchange: node a sends node b the blocks
 *              of (p on a) -> (q on b), written into q's dst on arrival
 *
 * Every step's stream goes in chunks of at most WIRE_AM_MAX_PAYLOAD
 * (W_COLL, the parameters in each chunk's header). Steps of the tree and
 * doubling algorithms run in order: a chunk of a later step waits in the
 * queue. Results are scattered into each local PE's dst, then each gets
 * its CQE; allgather/alltoall post a partial CQE per source PE as its
 * block lands (HOIST_COLL_F_PARTIAL), which hoist_wait_from() waits for.
 *
 * Node descriptors (HOIST_COLL_F_NODE, client/nodecoll.c): the PEs of a
 * node holding 2+ of the job's PEs meet in shared memory and ONE posts a
 * descriptor for all of them, carrying the collective's number. It counts
 * as every local PE's part at once (coll_post_node): each PE's parameters
 * are read from its slot in its node-collective block (contribution from
 * the slot's eager copy, else src) and go through the same checks
 * (coll_add). No CQE: the result goes to the anchor's slot (res, fin =
 * m) and the node's sleeping PEs are woken through nc_seq (node_signal).
 * An eager broadcast root returned before and the node's other PEs copy
 * its slot themselves: no local dst is written (skip_dst, ABI 9). On a
 * node without that root the data goes to the node's inbox (ABI 11) as it
 * arrives, when the entry is free then (inbox_early; else at the end, as
 * the dsts went), and no local dst is written either: the PEs read it
 * there, without waiting for the node's descriptor or the checks. A
 * malformed node descriptor fails the job.
 *
 * Failure: an invalid descriptor or disagreeing parameters (here, or in a
 * chunk from another node) fail the collective on this node and, through
 * W_COLL_ABORT, on every other; a PE or node lost fails the job (job_fail
 * -> coll_job_fail) on every node, so nobody waits forever.
 */
#include "coll.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "am.h"
#include "hoist_combine.h"
#include "hoist_futex.h"
#include "daemon.h"
#include "log.h"
#include "validate.h"

#define CHUNK WIRE_AM_MAX_PAYLOAD
#define COLL_WINDOW 65536u /* collectives ahead of the oldest unfinished one */
/* A header-only chunk every node sends every other in a broadcast or reduce:
 * in a tree, data does not reach every node from every other, so without it
 * nodes that disagree on the root (or the kind) could wait for each other
 * forever. The node that a node's first step sends its stream to gets no
 * header: that stream leaves at the same moment and stands for it
 * (WIRE_COLL_F_CHECK; a broadcast over 2 nodes: 2 messages, not 3).
 * Allreduce and the exchanges need none: a node completes only after data
 * from every node reached it, each hop checking parameters. */
#define CHECK_ROUND UINT32_MAX

struct coll_msg {
	struct coll_msg *next;
	int32_t from;          /* sender's node id */
	int counted;           /* WIRE_COLL_F_CHECK: counted as its sender's check */
	struct wire_coll h;
	uint64_t plen;
	char data[];
};

struct coll {
	struct coll *next;
	uint32_t seq;
	int32_t posted;        /* local PEs that posted it */
	int32_t err;           /* failed: every local PE gets it */
	int started, finished;
	struct hoist_sqe *sqe; /* [size]: the local PEs' descriptors */
	uint8_t *has;          /* [size]: posted here */
	uint8_t *cqe_sent;     /* [size]: final completion posted */
	/* parameters (the first local descriptor's) */
	uint8_t kind, type, op;
	int32_t root;
	uint64_t len;
	/* stepped algorithms */
	int ring;
	char *buf;
	uint32_t round, nrounds;
	uint32_t got;          /* chunks of this round's stream received */
	int sent;              /* this round's stream sent */
	int32_t checks;        /* CHECK_ROUND headers received (or WIRE_COLL_F_CHECK) */
	int32_t check_to;      /* node index whose check rides on our first stream, -1 */
	/* exchanges */
	uint32_t *peer_got;    /* [nnodes]: chunks received */
	int32_t peers_left;
	uint64_t *src_got;     /* [size]: bytes of each source PE landed */
	uint8_t *announced;    /* [size]: partial completion posted */
	struct coll_msg *q, **qtail;
	/* HOIST_COLL_F_NODE: one descriptor for every local PE */
	int node;              /* the result goes to the anchor's slot, no CQE */
	int node_signalled;
	int32_t anchor;        /* the node's lowest rank: its slot gets fin/res */
	uint32_t nc_m;         /* the node collective's number (its slot) */
	uint64_t nc_off;       /* the node-collective blocks' heap offset */
	int skip_dst;          /* an eager broadcast root local: no local dst */
	/* an eager broadcast from another node's root: the data goes to the
	 * node's inbox (ABI 11), no local dst */
	int inbox;
	int inbox_put;         /* written (when its data arrived, inbox_early) */
	uint32_t inbox_m;      /* the node number it was written for */
};

struct step {
	int32_t to, from;      /* node indices, -1: none */
	uint64_t soff, slen;   /* part of buf sent */
	uint64_t roff, rlen;   /* part of buf received */
	int reduce;            /* combine into buf, else copy */
};

/* ---- reductions ---------------------------------------------------------- */

/* shm/hoist_combine.h: the same code combines on the clients' node path */
void coll_combine(uint8_t type, uint8_t op, void *dst, const void *src, uint64_t bytes)
{
	hoist_coll_combine(type, op, dst, src, bytes);
}

/* ---- per-job maps ---------------------------------------------------------- */

static int32_t node_index(const struct job *j, int32_t node)
{
	int32_t lo = 0, hi = j->nnodes - 1;
	while (lo <= hi) {
		int32_t mid = (lo + hi) / 2;
		if (j->nodes[mid] == node)
			return mid;
		if (j->nodes[mid] < node)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static void maps_free(struct job *j)
{
	free(j->coll_idx);
	free(j->coll_ranks);
	free(j->coll_start);
	j->coll_idx = j->coll_ranks = j->coll_start = NULL;
}

/* Ranks grouped by node index (ascending within a node). */
static int coll_maps(struct job *j)
{
	if (j->coll_ranks)
		return 0;
	j->coll_idx = malloc((size_t)j->size * sizeof(int32_t));
	j->coll_ranks = malloc((size_t)j->size * sizeof(int32_t));
	j->coll_start = calloc((size_t)j->nnodes + 1, sizeof(int32_t));
	int32_t *fill = calloc((size_t)j->nnodes, sizeof(int32_t));
	if (!j->coll_idx || !j->coll_ranks || !j->coll_start || !fill) {
		free(fill);
		maps_free(j);
		return -ENOMEM;
	}
	for (int32_t r = 0; r < j->size; r++) {
		j->coll_idx[r] = node_index(j, j->node_of[r]);
		j->coll_start[j->coll_idx[r] + 1]++;
	}
	for (int32_t k = 0; k < j->nnodes; k++)
		j->coll_start[k + 1] += j->coll_start[k];
	for (int32_t r = 0; r < j->size; r++) {
		int32_t k = j->coll_idx[r];
		j->coll_ranks[j->coll_start[k] + fill[k]++] = r;
	}
	free(fill);
	return 0;
}

static inline int32_t nranks_of(const struct job *j, int32_t k)
{
	return j->coll_start[k + 1] - j->coll_start[k];
}

static inline int32_t rank_at(const struct job *j, int32_t k, int32_t i)
{
	return j->coll_ranks[j->coll_start[k] + i];
}

/* ---- state ----------------------------------------------------------------- */

static void coll_free(struct coll *co)
{
	while (co->q) {
		struct coll_msg *m = co->q;
		co->q = m->next;
		free(m);
	}
	free(co->sqe);
	free(co->has);
	free(co->cqe_sent);
	free(co->buf);
	free(co->peer_got);
	free(co->src_got);
	free(co->announced);
	free(co);
}

static struct coll *coll_get(struct job *j, uint32_t seq, int create)
{
	if ((int32_t)(seq - j->coll_base) < 0 || seq - j->coll_base >= COLL_WINDOW)
		return NULL; /* finished long ago, or absurdly far ahead */
	struct coll **pp = &j->colls;
	while (*pp && (int32_t)((*pp)->seq - seq) < 0)
		pp = &(*pp)->next;
	if (*pp && (*pp)->seq == seq)
		return *pp;
	if (!create)
		return NULL;
	struct coll *co = calloc(1, sizeof(*co));
	if (!co)
		return NULL;
	co->seq = seq;
	co->sqe = calloc((size_t)j->size, sizeof(*co->sqe));
	co->has = calloc((size_t)j->size, 1);
	co->cqe_sent = calloc((size_t)j->size, 1);
	if (!co->sqe || !co->has || !co->cqe_sent) {
		coll_free(co);
		return NULL;
	}
	co->qtail = &co->q;
	co->skip_dst = 0;
	co->check_to = -1;
	co->next = *pp;
	*pp = co;
	return co;
}

/* Free finished collectives from the oldest on; later chunks of them are
 * recognised by their number and dropped. */
static void coll_retire(struct job *j)
{
	while (j->colls && j->colls->seq == j->coll_base && j->colls->finished &&
	       (j->colls->posted == j->nlocal || j->error)) {
		struct coll *co = j->colls;
		j->colls = co->next;
		coll_free(co);
		j->coll_base++;
	}
}

static char *heap_at(const struct job *j, int32_t r, uint64_t off)
{
	struct client *c = j->pe[r];
	return c ? (char *)c->heap.base + off : NULL;
}

static void count_kind(struct daemon *d, uint8_t kind)
{
	switch (kind) {
	case HOIST_COLL_BROADCAST: STAT_INC(&d->pst, coll_broadcast); break;
	case HOIST_COLL_REDUCE: STAT_INC(&d->pst, coll_reduce); break;
	case HOIST_COLL_ALLREDUCE: STAT_INC(&d->pst, coll_allreduce); break;
	case HOIST_COLL_ALLGATHER: STAT_INC(&d->pst, coll_allgather); break;
	case HOIST_COLL_ALLTOALL: STAT_INC(&d->pst, coll_alltoall); break;
	}
}

static struct hoist_nc_slot *nc_slot(const struct job *j, int32_t r, uint64_t nc_off, uint32_t m)
{
	char *h = heap_at(j, r, nc_off);
	return h ? (struct hoist_nc_slot *)(h + sizeof(struct hoist_nc_hdr)) + m % HOIST_NC_SLOTS
		 : NULL;
}

/* after a release store the node's PEs poll: wake those sleeping on
 * nc_seq in the anchor's heap wake line (Dekker with their nc_sleepers) */
static void node_wake(struct client *a)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	struct hoist_heap_wake *l = hoist_heap_wake_of(a->heap.base, a->heap.bytes);
	if (__atomic_load_n(&l->nc_sleepers, __ATOMIC_RELAXED)) {
		__atomic_fetch_add(&l->nc_seq, 1, __ATOMIC_SEQ_CST);
		hoist_futex_wake(&l->nc_seq);
	}
}

/* HOIST_COLL_F_NODE: the result into the anchor's slot (res, then fin =
 * m, release), then wake the node's PEs sleeping on nc_seq in the
 * anchor's heap wake line (Dekker with their nc_sleepers, as a PE's
 * publish in client/nodecoll.c). The anchor gone: the job failed, the PEs
 * see job_error. */
static void node_signal(struct job *j, struct coll *co, int32_t res)
{
	if (co->node_signalled)
		return;
	co->node_signalled = 1;
	struct hoist_nc_slot *s = nc_slot(j, co->anchor, co->nc_off, co->nc_m);
	struct client *a = j->pe[co->anchor];
	if (!s || !a)
		return;
	__atomic_store_n(&s->a.res, res, __ATOMIC_RELAXED);
	__atomic_store_n(&s->a.fin, co->nc_m, __ATOMIC_RELEASE);
	node_wake(a);
}

/* Eager broadcast m (the job's seq) from another node: its data and the
 * root's parameters into the node's inbox entry, seq = m last (release),
 * then wake the node's sleepers (hoist_shm.h struct hoist_nc_inbox). The
 * caller knows the entry is free: every local PE's done reached m - SLOTS */
static void inbox_put(struct daemon *d, struct job *j, int32_t anchor, uint64_t nc_off, uint32_t m,
		      uint32_t seq, int32_t root, uint64_t len, const void *data)
{
	char *blk = heap_at(j, anchor, nc_off);
	if (!blk)
		return; /* the anchor is gone: the job failed */
	struct hoist_nc_inbox *b = hoist_nc_inbox_at(blk, m);
	b->dseq = seq;
	b->root = root;
	b->kind = HOIST_COLL_BROADCAST;
	b->len = len;
	if (len)
		memcpy(b->data, data, len);
	__atomic_store_n(&b->seq, m, __ATOMIC_RELEASE);
	node_wake(j->pe[anchor]);
	STAT_INC(&d->pst, coll_inbox);
}

/* Final completions to every local PE that posted and has none yet. */
static void complete_posted(struct job *j, struct coll *co, int32_t res)
{
	if (co->node) {
		if (co->posted == j->nlocal)
			node_signal(j, co, res);
		return;
	}
	for (int32_t i = 0; i < j->size; i++) {
		if (!co->has[i] || co->cqe_sent[i])
			continue;
		co->cqe_sent[i] = 1;
		struct client *c = j->pe[i];
		if (c)
			progress_cqe(c, co->sqe[i].user_data, res, HOIST_OP_COLL);
	}
}

static void release_work(struct coll *co)
{
	free(co->buf);
	co->buf = NULL;
	while (co->q) {
		struct coll_msg *m = co->q;
		co->q = m->next;
		free(m);
	}
	co->qtail = &co->q;
}

static void coll_finish(struct daemon *d, struct job *j, struct coll *co, int32_t res)
{
	if (co->finished)
		return;
	co->finished = 1;
	if (res) {
		co->err = res;
		STAT_INC(&d->pst, coll_failed);
	} else {
		STAT_INC(&d->pst, coll_done);
		count_kind(d, co->kind);
	}
	complete_posted(j, co, res);
	release_work(co);
	/* freed by coll_retire() at the end of the entry point: co stays valid
	 * for the caller */
}

/* Fail collective co here and (send) on every other node of the job. */
static void coll_abort(struct daemon *d, struct job *j, struct coll *co, int32_t err, int send)
{
	if (co->finished)
		return;
	if (send && j->prog_ready) {
		struct wire_coll_abort a = {.job = j->id, .seq = co->seq, .err = err};
		for (int32_t k = 0; k < j->nnodes; k++)
			if (j->nodes[k] != d->net.self)
				d->xport->am_send(d, j->nodes[k], W_COLL_ABORT, &a, sizeof(a), NULL, 0);
	}
	hlog_debug("job %s collective %u failed: %d", j->key, co->seq, err);
	coll_finish(d, j, co, err);
}

/* ---- sending ------------------------------------------------------------------- */

static inline uint32_t nchunks(uint64_t bytes)
{
	return bytes ? (uint32_t)((bytes + CHUNK - 1) / CHUNK) : 1;
}

/* One step's stream to node index k, in chunks (an empty stream is one
 * empty chunk: the receiver counts chunks). */
static int send_stream(struct daemon *d, struct job *j, struct coll *co, int32_t k, uint32_t round,
		       const char *data, uint64_t total)
{
	struct wire_coll h = {.job = j->id, .seq = co->seq, .kind = co->kind, .type = co->type,
			      .op = co->op, .root = co->root, .round = round, .len = co->len,
			      .total = total};
	if (round == 0 && k == co->check_to)
		h.flags = WIRE_COLL_F_CHECK;
	uint64_t off = 0;
	do {
		uint64_t n = total - off < CHUNK ? total - off : CHUNK;
		h.off = off;
		int rc = d->xport->am_send(d, j->nodes[k], W_COLL, &h, sizeof(h), data + off, n);
		if (rc)
			return rc;
		STAT_INC(&d->pst, coll_msgs_out);
		STAT_ADD(&d->pst, coll_bytes_out, n);
		off += n;
	} while (off < total);
	return 0;
}

/* ---- stepped algorithms: broadcast, reduce, allreduce ------------------------------ */

static uint32_t ceil_log2(uint32_t n)
{
	uint32_t r = 0;
	while ((1u << r) < n)
		r++;
	return r;
}

static uint32_t floor_log2(uint32_t n)
{
	uint32_t r = 0;
	while ((2u << r) <= n)
		r++;
	return r;
}

/* Bytes [lo, hi) of segment s of n of the vector (element aligned). */
static void segment(const struct coll *co, int32_t n, int32_t s, uint64_t *off, uint64_t *len)
{
	uint64_t es = hoist_coll_type_size(co->type), count = co->len / es;
	uint64_t lo = count * (uint64_t)s / (uint64_t)n, hi = count * (uint64_t)(s + 1) / (uint64_t)n;
	*off = lo * es;
	*len = (hi - lo) * es;
}

static inline int32_t mod(int32_t a, int32_t n)
{
	return ((a % n) + n) % n;
}

static void plan(const struct job *j, const struct coll *co, uint32_t r, struct step *s)
{
	int32_t n = j->nnodes, me = j->my_idx;
	*s = (struct step){.to = -1, .from = -1, .slen = co->len, .rlen = co->len};
	if (co->kind == HOIST_COLL_BROADCAST || co->kind == HOIST_COLL_REDUCE) {
		int32_t rn = j->coll_idx[co->root], v = mod(me - rn, n), bit = 1 << r;
		if (co->kind == HOIST_COLL_BROADCAST) {
			if (v < bit && v + bit < n)
				s->to = (v + bit + rn) % n;
			else if (v >= bit && v < 2 * bit)
				s->from = (v - bit + rn) % n;
		} else if (!(v & (bit - 1))) {
			if (v & bit)
				s->to = (v - bit + rn) % n;
			else if (v + bit < n)
				s->from = (v + bit + rn) % n;
			s->reduce = 1;
		}
		return;
	}
	s->reduce = 1;
	if (co->ring) {
		int32_t sk, rk;
		if (r < (uint32_t)n - 1) {
			sk = mod(me - (int32_t)r, n);
			rk = mod(me - (int32_t)r - 1, n);
		} else {
			int32_t st = (int32_t)r - (n - 1);
			sk = mod(me + 1 - st, n);
			rk = mod(me - st, n);
			s->reduce = 0;
		}
		s->to = (me + 1) % n;
		s->from = mod(me - 1, n);
		segment(co, n, sk, &s->soff, &s->slen);
		segment(co, n, rk, &s->roff, &s->rlen);
		return;
	}
	/* recursive doubling; nodes [0, 2*rem) pair up around it */
	uint32_t L = floor_log2((uint32_t)n);
	int32_t p2 = 1 << L, rem = n - p2;
	if (r == 0) {
		if (me < 2 * rem) {
			if (me & 1)
				s->from = me - 1;
			else
				s->to = me + 1;
		}
	} else if (r <= L) {
		int32_t nr = me < 2 * rem ? ((me & 1) ? me / 2 : -1) : me - rem;
		if (nr >= 0) {
			int32_t pr = nr ^ (1 << (r - 1));
			int32_t pidx = pr < rem ? pr * 2 + 1 : pr + rem;
			s->to = s->from = pidx;
		}
	} else if (me < 2 * rem) {
		if (me & 1)
			s->to = me - 1;
		else
			s->from = me + 1;
		s->reduce = 0;
	}
}

/* The results into the local PEs' dst; then every local PE completes. */
static void scatter_done(struct daemon *d, struct job *j, struct coll *co)
{
	if (co->inbox) { /* every local PE arrived: the entry is free */
		if (!co->inbox_put)
			inbox_put(d, j, co->anchor, co->nc_off, co->nc_m, co->seq, co->root, co->len,
				  co->buf);
		coll_finish(d, j, co, 0);
		return;
	}
	for (int32_t i = 0; i < j->size; i++) {
		if (!co->has[i])
			continue;
		if ((co->kind == HOIST_COLL_REDUCE && i != co->root) || co->skip_dst)
			continue;
		char *dst = heap_at(j, i, co->sqe[i].remote_off);
		if (dst && co->len) {
			memcpy(dst, co->buf, co->len);
			client_heap_touched(d, j->pe[i]);
		}
	}
	coll_finish(d, j, co, 0);
}

/* Is m, a chunk of round co->round, what the plan expects? Apply it. */
static int apply_chunk(struct job *j, struct coll *co, const struct step *s, struct coll_msg *m)
{
	if (node_index(j, m->from) != s->from || m->h.total != s->rlen || m->h.off % CHUNK ||
	    m->h.off > m->h.total || m->plen != (m->h.total - m->h.off < CHUNK ? m->h.total - m->h.off : CHUNK) ||
	    co->got >= nchunks(s->rlen))
		return -EPROTO;
	char *at = co->buf + s->roff + m->h.off;
	if (s->reduce)
		coll_combine(co->type, co->op, at, m->data, m->plen);
	else if (m->plen)
		memcpy(at, m->data, m->plen);
	co->got++;
	return 0;
}

static int needs_checks(const struct coll *co)
{
	return co->kind == HOIST_COLL_BROADCAST || co->kind == HOIST_COLL_REDUCE;
}

static void rounds_run(struct daemon *d, struct job *j, struct coll *co)
{
	if (needs_checks(co)) {
		struct coll_msg **pp = &co->q;
		while (*pp) {
			struct coll_msg *m = *pp;
			if (m->h.round != CHECK_ROUND) {
				pp = &m->next;
				continue;
			}
			*pp = m->next;
			if (!*pp)
				co->qtail = pp;
			int bad = m->plen || m->h.total || node_index(j, m->from) < 0 ||
				  ++co->checks > j->nnodes - 1;
			free(m);
			if (bad) {
				coll_abort(d, j, co, -EPROTO, 1);
				return;
			}
		}
		/* a first step's stream that stands for its sender's check:
		 * counted once, applied below */
		for (struct coll_msg *m = co->q; m; m = m->next) {
			if (m->counted || !(m->h.flags & WIRE_COLL_F_CHECK) || m->h.off)
				continue;
			m->counted = 1;
			if (m->h.round != 0 || node_index(j, m->from) < 0 || ++co->checks > j->nnodes - 1) {
				coll_abort(d, j, co, -EPROTO, 1);
				return;
			}
		}
	}
	while (!co->finished && co->round < co->nrounds) {
		struct step s;
		plan(j, co, co->round, &s);
		if (!co->sent) {
			co->sent = 1;
			if (s.to >= 0) {
				int rc = send_stream(d, j, co, s.to, co->round, co->buf + s.soff, s.slen);
				if (rc) {
					coll_abort(d, j, co, -ECONNRESET, 1);
					return;
				}
			}
		}
		if (s.from >= 0) {
			struct coll_msg **pp = &co->q;
			while (*pp) {
				struct coll_msg *m = *pp;
				if (m->h.round != co->round) {
					pp = &m->next;
					continue;
				}
				*pp = m->next;
				if (!*pp)
					co->qtail = pp;
				int rc = apply_chunk(j, co, &s, m);
				free(m);
				if (rc) {
					coll_abort(d, j, co, rc, 1);
					return;
				}
			}
			if (co->got < nchunks(s.rlen))
				return; /* the rest comes with later chunks */
		}
		co->round++;
		co->got = 0;
		co->sent = 0;
	}
	if (!co->finished && (!needs_checks(co) || co->checks == j->nnodes - 1))
		scatter_done(d, j, co);
}

/* The node's contribution: the local PEs' vectors combined (reductions) or
 * the root's (broadcast, on the root's node). */
static int rounds_start(struct daemon *d, struct job *j, struct coll *co)
{
	int32_t n = j->nnodes;
	co->buf = malloc(co->len ? co->len : 1);
	if (!co->buf)
		return -ENOMEM;
	if (needs_checks(co)) {
		/* the node our first step's stream goes to (now, in
		 * rounds_run) takes it for our check: one message less */
		struct step s0;
		plan(j, co, 0, &s0);
		co->check_to = s0.to;
		for (int32_t k = 0; k < n; k++)
			if (k != j->my_idx && k != co->check_to &&
			    send_stream(d, j, co, k, CHECK_ROUND, co->buf, 0))
				return -ECONNRESET;
	}
	if (co->kind == HOIST_COLL_BROADCAST) {
		if (j->coll_idx[co->root] == j->my_idx && co->len)
			memcpy(co->buf, heap_at(j, co->root, co->sqe[co->root].local_off), co->len);
		co->nrounds = ceil_log2((uint32_t)n);
	} else {
		int first = 1;
		for (int32_t i = 0; i < j->size; i++) {
			if (!co->has[i] || !co->len)
				continue;
			const char *src = heap_at(j, i, co->sqe[i].local_off);
			if (first)
				memcpy(co->buf, src, co->len);
			else
				coll_combine(co->type, co->op, co->buf, src, co->len);
			first = 0;
		}
		if (co->kind == HOIST_COLL_REDUCE) {
			co->nrounds = ceil_log2((uint32_t)n);
		} else if (n >= 3 && co->len >= d->cfg.coll_ring_bytes) {
			co->ring = 1;
			co->nrounds = 2 * (uint32_t)n - 2;
		} else {
			co->nrounds = n > 1 ? floor_log2((uint32_t)n) + 2 : 0;
		}
	}
	rounds_run(d, j, co);
	return 0;
}

/* ---- exchanges: allgather, alltoall ------------------------------------------------ */

static void partial(struct job *j, struct coll *co, int32_t p)
{
	if (co->announced[p])
		return;
	co->announced[p] = 1;
	for (int32_t i = 0; i < j->size; i++) {
		struct hoist_coll_args a;
		if (!co->has[i])
			continue;
		memcpy(&a, co->sqe[i].inline_data, sizeof(a));
		if ((a.flags & HOIST_COLL_F_PARTIAL) && j->pe[i])
			progress_cqe_partial(j->pe[i], co->sqe[i].user_data, p);
	}
}

/* Bytes node k streams to node index `to` in an exchange. */
static uint64_t stream_bytes(const struct job *j, const struct coll *co, int32_t k, int32_t to)
{
	uint64_t b = (uint64_t)nranks_of(j, k) * co->len;
	return co->kind == HOIST_COLL_ALLTOALL ? b * (uint64_t)nranks_of(j, to) : b;
}

/* What landed: write chunk m of node k's stream into the local dsts. */
static int exchange_apply(struct daemon *d, struct job *j, struct coll *co, int32_t from,
			  const struct wire_coll *h, const char *data, uint64_t plen)
{
	int32_t k = node_index(j, from), me = j->my_idx;
	if (k < 0 || k == me || h->round != 0)
		return -EPROTO;
	uint64_t total = stream_bytes(j, co, k, me);
	if (h->total != total || h->off % CHUNK || h->off > total ||
	    plen != (total - h->off < CHUNK ? total - h->off : CHUNK) ||
	    co->peer_got[k] >= nchunks(total))
		return -EPROTO;
	int32_t nl = nranks_of(j, me);
	uint64_t len = co->len, o = h->off, end = h->off + plen;
	while (o < end) {
		uint64_t blk = o / len, inner = o % len;
		uint64_t piece = len - inner < end - o ? len - inner : end - o;
		const char *piece_at = data + (o - h->off);
		int32_t p;
		uint64_t need;
		if (co->kind == HOIST_COLL_ALLGATHER) {
			p = rank_at(j, k, (int32_t)blk);
			for (int32_t qi = 0; qi < nl; qi++) {
				int32_t q = rank_at(j, me, qi);
				char *dst = heap_at(j, q, co->sqe[q].remote_off);
				if (dst) {
					memcpy(dst + (uint64_t)p * len + inner, piece_at, piece);
					client_heap_touched(d, j->pe[q]);
				}
			}
			need = len;
		} else {
			p = rank_at(j, k, (int32_t)(blk / (uint64_t)nl));
			int32_t q = rank_at(j, me, (int32_t)(blk % (uint64_t)nl));
			char *dst = heap_at(j, q, co->sqe[q].remote_off);
			if (dst) {
				memcpy(dst + (uint64_t)p * len + inner, piece_at, piece);
				client_heap_touched(d, j->pe[q]);
			}
			need = (uint64_t)nl * len;
		}
		co->src_got[p] += piece;
		if (co->src_got[p] == need)
			partial(j, co, p);
		o += piece;
	}
	if (++co->peer_got[k] == nchunks(total)) {
		for (int32_t i = 0; i < nranks_of(j, k); i++) /* empty blocks */
			partial(j, co, rank_at(j, k, i));
		co->peers_left--;
	}
	return 0;
}

static void exchange_run(struct daemon *d, struct job *j, struct coll *co)
{
	while (co->q && !co->finished) {
		struct coll_msg *m = co->q;
		co->q = m->next;
		if (!co->q)
			co->qtail = &co->q;
		int rc = exchange_apply(d, j, co, m->from, &m->h, m->data, m->plen);
		free(m);
		if (rc)
			coll_abort(d, j, co, rc, 1);
	}
	if (!co->finished && co->peers_left == 0)
		coll_finish(d, j, co, 0);
}

/* Every source is read (into the streams) before any dst is written: in
 * place (dst == src) works. */
static int exchange_start(struct daemon *d, struct job *j, struct coll *co)
{
	int32_t n = j->nnodes, me = j->my_idx, nl = nranks_of(j, me);
	uint64_t len = co->len;
	co->peer_got = calloc((size_t)n, sizeof(*co->peer_got));
	co->src_got = calloc((size_t)j->size, sizeof(*co->src_got));
	co->announced = calloc((size_t)j->size, 1);
	if (!co->peer_got || !co->src_got || !co->announced)
		return -ENOMEM;
	co->peers_left = n - 1;
	for (int32_t s = 1; s <= n; s++) {
		/* pairwise order; ourselves last: in place, writing our dsts
		 * overwrites sources the other streams still read */
		int32_t k = (me + s) % n;
		uint64_t total = stream_bytes(j, co, me, k);
		char *st = malloc(total ? total : 1);
		if (!st)
			return -ENOMEM;
		int32_t nk = nranks_of(j, k);
		for (int32_t pi = 0; pi < nl; pi++) {
			int32_t p = rank_at(j, me, pi);
			const char *src = heap_at(j, p, co->sqe[p].local_off);
			if (co->kind == HOIST_COLL_ALLGATHER) {
				memcpy(st + (uint64_t)pi * len, src, len);
				continue;
			}
			for (int32_t qi = 0; qi < nk; qi++)
				memcpy(st + ((uint64_t)pi * (uint64_t)nk + (uint64_t)qi) * len,
				       src + (uint64_t)rank_at(j, k, qi) * len, len);
		}
		int rc = 0;
		if (k != me) {
			rc = send_stream(d, j, co, k, 0, st, total);
		} else { /* local blocks: st is the snapshot */
			for (int32_t qi = 0; qi < nl; qi++) {
				int32_t q = rank_at(j, me, qi);
				char *dst = heap_at(j, q, co->sqe[q].remote_off);
				for (int32_t pi = 0; pi < nl && dst; pi++) {
					int32_t p = rank_at(j, me, pi);
					uint64_t from = co->kind == HOIST_COLL_ALLGATHER
								? (uint64_t)pi * len
								: ((uint64_t)pi * (uint64_t)nl + (uint64_t)qi) * len;
					memcpy(dst + (uint64_t)p * len, st + from, len);
				}
				if (dst)
					client_heap_touched(d, j->pe[q]);
			}
		}
		free(st);
		if (rc)
			return -ECONNRESET;
		if (k == me)
			for (int32_t pi = 0; pi < nl; pi++)
				partial(j, co, rank_at(j, me, pi));
	}
	exchange_run(d, j, co);
	return 0;
}

static void recv_chunk(struct daemon *d, struct job *j, struct coll *co, int32_t from,
		       const struct wire_coll *h, const void *data, uint64_t plen);

/* ---- entry points ---------------------------------------------------------------- */

static void coll_start(struct daemon *d, struct job *j, struct coll *co)
{
	co->started = 1;
	int rc = coll_maps(j);
	for (int32_t i = 0; !rc && i < j->size; i++)
		if (co->has[i] && !j->pe[i])
			rc = -ECONNRESET; /* posted, then left before we could read it */
	if (!rc) {
		if (co->kind == HOIST_COLL_ALLGATHER || co->kind == HOIST_COLL_ALLTOALL)
			rc = exchange_start(d, j, co);
		else
			rc = rounds_start(d, j, co);
	}
	if (rc)
		coll_abort(d, j, co, rc, 1);
}

static int params_match(const struct coll *co, const struct hoist_sqe *sqe)
{
	struct hoist_coll_args a;
	memcpy(&a, sqe->inline_data, sizeof(a));
	return a.kind == co->kind && a.type == co->type && a.op == co->op && sqe->pe == co->root &&
	       sqe->len == co->len;
}

/* Rank r's part of collective co: its descriptor (or the one made from
 * its node-collective slot), rc its error found before (0: validate). */
static void coll_add(struct daemon *d, struct job *j, struct coll *co, int32_t r,
		     const struct hoist_sqe *sqe, int rc, const struct validate_geom *g)
{
	co->has[r] = 1;
	co->sqe[r] = *sqe;
	co->posted++;
	if (co->finished) { /* failed before this PE got here */
		complete_posted(j, co, co->err);
		return;
	}
	if (!rc)
		rc = validate_coll(sqe, g);
	if (!rc && j->departed)
		rc = -ECONNRESET; /* a PE left: it can never take part */
	if (!rc) {
		if (co->posted == 1) {
			struct hoist_coll_args a;
			memcpy(&a, sqe->inline_data, sizeof(a));
			co->kind = a.kind;
			co->type = a.type;
			co->op = a.op;
			co->root = sqe->pe;
			co->len = sqe->len;
		} else if (!params_match(co, sqe)) {
			rc = -EINVAL;
		}
	}
	/* the first poster fixed the parameters; an invalid one may come first */
	if (rc) {
		coll_abort(d, j, co, rc, 1);
	} else if (co->posted == j->nlocal) {
		/* chunks that came early: a parameter mismatch fails it */
		for (struct coll_msg *m = co->q; m && !rc; m = m->next)
			if (m->h.kind != co->kind || m->h.type != co->type || m->h.op != co->op ||
			    m->h.root != co->root || m->h.len != co->len)
				rc = -EINVAL;
		if (rc)
			coll_abort(d, j, co, rc, 1);
		else
			coll_start(d, j, co);
	}
}

/* A node descriptor of collective seq (node number m, blocks at off): the
 * node's numbering, which the inbox of a broadcast arriving before the
 * next one needs (inbox_early). The same difference seq - m on every one
 * (a PE's collectives all take the node path once it started); a node
 * whose descriptors disagree gets no early inbox any more, and one written
 * early under another m fails the job (a broken client). */
static void nc_learn(struct job *j, struct coll *co, uint32_t seq, uint32_t m, uint64_t off)
{
	if (co->inbox_put && (co->inbox_m != m || co->nc_off != j->nc_off)) {
		hlog_warn("job %s: node descriptor of collective %u says node number %u, its broadcast went to %u",
			  j->key, seq, m, co->inbox_m);
		job_fail(j, -EPROTO);
		return;
	}
	if (j->nc_known < 0)
		return;
	if (j->nc_known && (j->nc_dseq_off != seq - m || j->nc_off != off ||
			    j->nc_anchor != co->anchor)) {
		j->nc_known = -1;
		return;
	}
	j->nc_known = 1;
	j->nc_dseq_off = seq - m;
	j->nc_off = off;
	j->nc_anchor = co->anchor;
}

/* A chunk of collective co that came before this node's descriptor of it:
 * when it is the data of an eager broadcast from another node's root and
 * the node's inbox entry is free (every local PE's done reached m -
 * SLOTS: nobody reads its last use), copy it there now. The node's PEs
 * take it as they arrive, without waiting for each other or for the check
 * round (hoist_shm.h struct hoist_nc_inbox). Else it goes there when the
 * node's descriptor comes (scatter_done). The chunk stays queued for the
 * algorithm (forwarding, the parameters' check). */
static void inbox_early(struct daemon *d, struct job *j, struct coll *co, int32_t from,
			const struct wire_coll *h, const void *data, uint64_t plen)
{
	if (j->nc_known != 1 || co->started || co->inbox_put || h->kind != HOIST_COLL_BROADCAST ||
	    h->round == CHECK_ROUND || h->len > HOIST_NC_EAGER || h->off || h->total != h->len ||
	    plen != h->len || h->root < 0 || h->root >= j->size ||
	    j->node_of[h->root] == d->net.self || !j->pe[j->nc_anchor] || coll_maps(j))
		return;
	/* the step of the tree that brings the data here, from that node */
	struct coll tmp = {.kind = h->kind, .root = h->root, .len = h->len};
	struct step s;
	plan(j, &tmp, h->round, &s);
	if (s.from < 0 || s.from != node_index(j, from))
		return; /* not the data (rounds_run judges it) */
	uint32_t m = h->seq - j->nc_dseq_off;
	if ((int32_t)m <= 0)
		return;
	for (int32_t r = 0; r < j->size; r++) {
		char *blk = j->pe[r] ? heap_at(j, r, j->nc_off) : NULL;
		if (!blk)
			continue;
		uint32_t done = __atomic_load_n(&((struct hoist_nc_hdr *)blk)->done, __ATOMIC_ACQUIRE);
		if (m > HOIST_NC_SLOTS && (int32_t)(done - (m - HOIST_NC_SLOTS)) < 0)
			return; /* a PE may still read the entry's last use */
	}
	inbox_put(d, j, j->nc_anchor, j->nc_off, m, h->seq, h->root, h->len, data);
	co->inbox_put = 1;
	co->inbox_m = m;
	STAT_INC(&d->pst, coll_inbox_early);
}

/* HOIST_COLL_F_NODE (hoist_shm.h): every local PE's part at once, made
 * from its node-collective slot. Never an error of its own: the result
 * goes to the anchor's slot. */
static int coll_post_node(struct daemon *d, struct client *c, const struct hoist_sqe *sqe,
			  const struct hoist_coll_args *na)
{
	struct job *j = c->job;
	uint32_t seq = na->reserved0, m = (uint32_t)sqe->local_off;
	STAT_INC(&c->st, colls);
	STAT_INC(&d->pst, coll_node);
	struct coll *co = coll_get(j, seq, 1);
	if (!co) {
		job_fail(j, -ENOMEM);
		return 0; /* the PEs see the job's error */
	}
	if (na->reserved1 && na->reserved1 < 4096) {
		/* a PE of this node cannot take part (it could not map a
		 * peer's heap): the node's descriptor never comes. Fail the
		 * collective on every node and the job here (its PEs wait for
		 * that PE in shared memory: job_error ends their waits) */
		int err = -(int)na->reserved1;
		hlog_warn("job %s rank %d cannot take part in node collectives (%d): failing collective %u and the job",
			  j->key, c->rank, err, seq);
		coll_abort(d, j, co, err, 1);
		job_fail(j, err);
		return 0;
	}
	uint64_t off = sqe->remote_off;
	if (co->posted || co->node || na->reserved1 || sqe->pe < 0 || sqe->pe >= j->size ||
	    !j->pe[sqe->pe] || off > c->heap.bytes || c->heap.bytes - off < HOIST_NC_BYTES ||
	    off % HOIST_CACHELINE) {
		/* a second descriptor for the node, a slot outside the heap:
		 * no slot to answer through, and the node's PEs wait for it.
		 * The collective fails on every other node (W_COLL_ABORT: their
		 * PEs get the error, not a hang), the job here (job_error) */
		hlog_warn("job %s rank %d: bad node collective descriptor (collective %u)", j->key,
			  c->rank, seq);
		coll_abort(d, j, co, -EPROTO, 1);
		job_fail(j, -EPROTO);
		return 0;
	}
	co->node = 1;
	co->anchor = sqe->pe;
	co->nc_m = m;
	co->nc_off = off;
	struct validate_geom g = {.job_size = j->size, .heap_bytes = c->heap.bytes,
				  .staging_bytes = c->staging.bytes};
	for (int32_t r = 0; r < j->size; r++) {
		if (!j->pe[r])
			continue;
		struct hoist_nc_slot *s = nc_slot(j, r, off, m);
		struct hoist_nc_args a;
		memcpy(&a, &s->a, sizeof(a));
		struct hoist_coll_args ca = {.kind = a.kind, .type = a.type, .op = a.op};
		struct hoist_sqe one = {.opcode = HOIST_OP_COLL, .pe = a.root, .len = a.len,
					.remote_off = a.dst_off, .local_off = a.src_off};
		if (a.eager) /* its contribution is in the slot: src may change already */
			one.local_off = off + sizeof(struct hoist_nc_hdr) +
					(uint64_t)(m % HOIST_NC_SLOTS) * sizeof(struct hoist_nc_slot) +
					offsetof(struct hoist_nc_slot, data);
		memcpy(one.inline_data, &ca, sizeof(ca));
		/* bad is the PE's word, any value: an -errno or nothing. A
		 * positive one would go out as the result (res, every PE's
		 * return value) and through W_COLL_ABORT */
		int rc = a.seq != m || a.bad > 0 || a.bad < -4095 ? -EPROTO : a.bad;
		/* the root returned at once and copied its dst itself; every
		 * other local PE copies the root's slot and may have returned
		 * (client/nodecoll.c root_read): nobody's dst is the daemon's */
		if (!rc && a.eager && a.kind == HOIST_COLL_BROADCAST && a.root == r)
			co->skip_dst = 1;
		/* the root on another node: the node's PEs read the inbox */
		if (!rc && a.eager && a.kind == HOIST_COLL_BROADCAST && a.root >= 0 &&
		    a.root < j->size && j->node_of[a.root] != d->net.self)
			co->inbox = 1;
		coll_add(d, j, co, r, &one, rc, &g);
	}
	nc_learn(j, co, seq, m, off);
	coll_retire(j);
	return 0;
}

int coll_post(struct daemon *d, struct client *c, const struct hoist_sqe *sqe)
{
	struct job *j = c->job;
	struct hoist_coll_args na;
	memcpy(&na, sqe->inline_data, sizeof(na));
	if (na.flags & HOIST_COLL_F_NODE) {
		if (j->error)
			return 0; /* the PEs see the job's error */
		return coll_post_node(d, c, sqe, &na);
	}
	uint32_t seq = c->coll_seq++;
	STAT_INC(&c->st, colls);
	if (j->error)
		return j->error;
	struct coll *co = coll_get(j, seq, 1);
	if (!co) {
		job_fail(j, -ENOMEM);
		return -ENOMEM;
	}
	struct validate_geom g = {.job_size = j->size, .heap_bytes = c->heap.bytes,
				  .staging_bytes = c->staging.bytes};
	coll_add(d, j, co, c->rank, sqe, 0, &g);
	coll_retire(j);
	return 0;
}

void coll_recv(struct daemon *d, struct job *j, int32_t from, const struct wire_coll *h,
	       const void *data, uint64_t plen)
{
	STAT_ADD(&d->pst, coll_bytes_in, plen);
	if (j->error)
		return;
	struct coll *co = coll_get(j, h->seq, 1);
	if (!co) {
		if ((int32_t)(h->seq - j->coll_base) >= 0 && h->seq - j->coll_base < COLL_WINDOW)
			job_fail(j, -ENOMEM);
		return; /* finished here already (e.g. it failed): drop */
	}
	if (!co->finished) {
		inbox_early(d, j, co, from, h, data, plen);
		recv_chunk(d, j, co, from, h, data, plen);
	}
	coll_retire(j);
}

static void recv_chunk(struct daemon *d, struct job *j, struct coll *co, int32_t from,
		       const struct wire_coll *h, const void *data, uint64_t plen)
{
	if (co->started && (h->kind != co->kind || h->type != co->type || h->op != co->op ||
			    h->root != co->root || h->len != co->len)) {
		coll_abort(d, j, co, -EINVAL, 1);
		return;
	}
	if (co->started && !co->q &&
	    (co->kind == HOIST_COLL_ALLGATHER || co->kind == HOIST_COLL_ALLTOALL)) {
		/* the usual case: straight from the receive buffer into the dsts */
		int rc = exchange_apply(d, j, co, from, h, data, plen);
		if (rc)
			coll_abort(d, j, co, rc, 1);
		else if (co->peers_left == 0)
			coll_finish(d, j, co, 0);
		return;
	}
	struct coll_msg *m = malloc(sizeof(*m) + plen);
	if (!m) {
		coll_abort(d, j, co, -ENOMEM, 1);
		return;
	}
	m->next = NULL;
	m->from = from;
	m->counted = 0;
	m->h = *h;
	m->plen = plen;
	if (plen)
		memcpy(m->data, data, plen);
	*co->qtail = m;
	co->qtail = &m->next;
	if (!co->started) {
		STAT_INC(&d->pst, coll_early);
		return;
	}
	if (co->kind == HOIST_COLL_ALLGATHER || co->kind == HOIST_COLL_ALLTOALL)
		exchange_run(d, j, co);
	else
		rounds_run(d, j, co);
}

void coll_abort_recv(struct daemon *d, struct job *j, uint32_t seq, int32_t err)
{
	if (err >= 0 || err < -4095)
		err = -EPROTO;
	struct coll *co = coll_get(j, seq, 1);
	if (co)
		coll_abort(d, j, co, err, 0);
	coll_retire(j);
}

/* No coll_retire() here: job_fail() also runs inside the collective code,
 * when am_send finds a peer unreachable on the spot (peer_lost -> job_fail)
 * while rounds_run, exchange_start, coll_abort or coll_pe_depart still hold
 * a collective (and its successor). The failed collectives are freed by the
 * next entry point's coll_retire() or with the job (coll_job_free). */
void coll_job_fail(struct job *j, int err)
{
	struct daemon *d = j->d;
	for (struct coll *co = j->colls, *next; co; co = next) {
		next = co->next; /* nothing is freed before coll_retire() */
		coll_abort(d, j, co, err, 0);
	}
}

void coll_pe_depart(struct daemon *d, struct job *j, int32_t pe)
{
	for (struct coll *co = j->colls, *next; co; co = next) {
		next = co->next;
		if (!co->has[pe])
			coll_abort(d, j, co, -ECONNRESET, 1);
	}
	coll_retire(j);
}

void coll_job_free(struct job *j)
{
	while (j->colls) {
		struct coll *co = j->colls;
		j->colls = co->next;
		coll_free(co);
	}
	maps_free(j);
}

/* W_COLL: one chunk of a collective's stream, inside the stream. */
static int coll_am_ok(const void *ext, uint64_t plen)
{
	if (plen > WIRE_AM_MAX_PAYLOAD)
		return 0;
	struct wire_coll h;
	memcpy(&h, ext, sizeof(h));
	return h.off <= h.total && plen <= h.total - h.off;
}

static int coll_am_recv(struct daemon *d, int32_t from, const void *ext, const void *payload,
			uint64_t plen)
{
	struct wire_coll h;
	memcpy(&h, ext, sizeof(h));
	struct job *j = progress_job_find(d, h.job);
	if (j)
		coll_recv(d, j, from, &h, payload, plen);
	return 0;
}

/* W_COLL_ABORT: another node failed a collective. */
static int coll_abort_am_recv(struct daemon *d, int32_t from, const void *ext,
			      const void *payload, uint64_t plen)
{
	(void)from;
	(void)payload;
	(void)plen;
	struct wire_coll_abort a;
	memcpy(&a, ext, sizeof(a));
	struct job *j = progress_job_find(d, a.job);
	if (j)
		coll_abort_recv(d, j, a.seq, a.err);
	return 0;
}

static const struct am_handler coll_am = {.name = "collective",
					  .hlen = sizeof(struct wire_coll),
					  .payload_ok = coll_am_ok,
					  .recv = coll_am_recv};
static const struct am_handler coll_abort_am = {.name = "collective abort",
						.hlen = sizeof(struct wire_coll_abort),
						.recv = coll_abort_am_recv};

void coll_am_register(void)
{
	am_register(W_COLL, &coll_am);
	am_register(W_COLL_ABORT, &coll_abort_am);
}
