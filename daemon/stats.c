/*
 * The stats socket (control thread): one StatsRequest in, the StatsReply
 * out. Names, kinds and help texts come from the tables in stats.h, peer.h
 * and settings.h, so hoistctl renders whatever the daemon counts without
 * knowing the list.
 *
 * A reply is produced piece by piece (abi_version 2): a header datagram
 * (daemon counters, peers, settings, the schema), then client rows
 * STATS_ROWS_PER_PIECE at a time, each piece built only when the socket
 * can take it. Memory per reply is one piece, whatever the number of
 * clients; the control thread never waits for the reader (control.c
 * drives stats_pump from the socket's writability).
 */
#include "daemon.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "control.h"
#include "hoist.pb-c.h"
#include "log.h"

#define HOIST_VERSION_STRING "0.1.0"
/* client rows per datagram: each row is ~1-3 KB with its phases, so a
 * piece stays far below the socket buffer (~208 KB by default) */
#define STATS_ROWS_PER_PIECE 16

void stats_sum_client(struct client_stats *acc, const struct client_stats *c)
{
#define X(name, kind, help) STAT_ADD(acc, name, STAT_READ(c, name));
	HOISTD_CLIENT_STATS(X)
#undef X
}

/* The counters the client keeps in its control page (point-to-point waits,
 * client/p2p.c; waits for the daemon, client/wait.c; its direct writes'
 * wakes, client/ptr.c), copied into c->st, whose other fields the progress
 * thread owns: only stats_client_pull writes these. */
#define HOISTD_CLIENT_PULLED(X)                                                                    \
	X(p2p_waits) X(p2p_sleeps) X(p2p_wakeups) X(wait_yields) X(wait_long_yields) X(wait_sleeps) \
	X(heap_wakes_direct) X(heap_wakes_direct_skipped) X(wait_handoffs)

void stats_client_pull(struct client *c)
{
	if (!c->ctrl)
		return;
#define X(f)                                                                                       \
	__atomic_store_n(&c->st.f, __atomic_load_n(&c->ctrl->f, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	HOISTD_CLIENT_PULLED(X)
#undef X
}

/* Daemon-wide values that are not kept in a table of their own. */
#define HOISTD_EXTRA_STATS(X)                                                                      \
	X(clients, GAUGE, "clients attached or waiting for their job to assemble, now")           \
	X(jobs, GAUGE, "jobs on this daemon now")                                                  \
	X(addr_cache_hits, COUNTER, "remote-address cache hits")                                   \
	X(addr_cache_misses, COUNTER, "remote-address cache misses")                               \
	X(addr_cache_inserts, COUNTER, "remote-address cache inserts")                             \
	X(addr_cache_evictions, COUNTER, "remote-address cache entries evicted (LRU)")             \
	X(addr_cache_invalidations, COUNTER, "remote-address cache entries invalidated")           \
	X(addr_cache_resolves, COUNTER, "remote-address cache misses whose access first waited for the target daemon's answer (verbs: W_VRESOLVE round trip; tcp sends a miss by name, 0)") \
	X(addr_cache_resolve_ns, COUNTER, "nanoseconds those waits took, summed (question sent to answer received; concurrent ones each counted)") \
	X(pinned_available, GAUGE, "pinned-bytes budget left (pinned_limit - pinned_bytes)")                              \
	X(node_id, GAUGE, "this daemon's index in the node list")                                  \
	X(nodes, GAUGE, "nodes in the cluster (1: this node only)")

#define STATS_FIELD(name, kind, help) uint64_t name;
struct extra_stats { HOISTD_EXTRA_STATS(STATS_FIELD) };
#undef STATS_FIELD

/* The peer table (peer.h) has no kind column; its gauges are listed here.
 * A name in this list that is not a field of struct peer_stats does not
 * compile. Every other peer value is a counter. */
#define HOISTD_PEER_GAUGES(X) X(rtt_us)
static int peer_kind(const char *name)
{
#define X(n)                                                                                       \
	(void)sizeof(((struct peer_stats *)0)->n);                                                 \
	if (!strcmp(name, #n))                                                                     \
		return STATS_KIND_GAUGE;
	HOISTD_PEER_GAUGES(X)
#undef X
	return STATS_KIND_COUNTER;
}

struct counter_buf {
	Hoist__Counter *items;
	Hoist__Counter **ptrs;
	size_t n, cap;
};

static int counter_add(struct counter_buf *b, const char *name, uint64_t v)
{
	if (b->n == b->cap)
		return -ENOBUFS;
	Hoist__Counter *c = &b->items[b->n];
	hoist__counter__init(c);
	c->name = (char *)name;
	c->value = v;
	b->ptrs[b->n++] = c;
	return 0;
}

static int counter_buf_init(struct counter_buf *b, size_t cap)
{
	b->items = calloc(cap ? cap : 1, sizeof(*b->items));
	b->ptrs = calloc(cap ? cap : 1, sizeof(*b->ptrs));
	b->n = 0;
	b->cap = cap;
	return b->items && b->ptrs ? 0 : -ENOMEM;
}

static void counter_buf_free(struct counter_buf *b)
{
	free(b->items);
	free(b->ptrs);
	b->items = NULL;
	b->ptrs = NULL;
}

struct schema_buf {
	Hoist__CounterInfo *items;
	Hoist__CounterInfo **ptrs;
	size_t n, cap;
};

static void schema_add(struct schema_buf *b, const char *section, const char *name, int kind,
		       const char *help)
{
	if (b->n == b->cap)
		return;
	Hoist__CounterInfo *c = &b->items[b->n];
	hoist__counter_info__init(c);
	c->section = (char *)section;
	c->name = (char *)name;
	c->kind = (uint32_t)kind;
	c->help = (char *)help;
	b->ptrs[b->n++] = c;
}

#define COUNT_ONE(name, kind, help) +1
enum {
	N_CLIENT_STATS = 0 HOISTD_CLIENT_STATS(COUNT_ONE),
	N_PHASE_STATS = 0 HOISTD_PHASE_STATS(COUNT_ONE),
	N_DAEMON_STATS = 0 HOISTD_CLIENT_STATS(COUNT_ONE) HOISTD_PROGRESS_STATS(COUNT_ONE)
		HOISTD_CONTROL_STATS(COUNT_ONE) HOISTD_VERBS_STATS(COUNT_ONE)
			HOISTD_EXTRA_STATS(COUNT_ONE),
};
#undef COUNT_ONE
#define COUNT_ONE(name, help) +1
enum { N_PEER_STATS = 0 HOISTD_PEER_STATS(COUNT_ONE) };
#undef COUNT_ONE

struct stats_stream {
	int chunked;      /* abi 2: pieces; abi 1: everything in one datagram */
	int header_only;  /* ping */
	int settings;
	int status;       /* a malformed request: answered with this only */
	int see_all;      /* root or the daemon's user */
	uid_t viewer;     /* else: clients of this uid only */
	int header_sent, done;
	uint64_t cursor;  /* client rows still to send: ids below this */
	uint8_t *out;     /* the piece the socket did not take yet */
	size_t len;
};

int stats_request(struct daemon *d, int fd, const void *msg, size_t len, struct stats_stream **out)
{
	struct stats_stream *ss = calloc(1, sizeof(*ss));
	if (!ss)
		return -ENOMEM;
	STAT_INC(&d->cst, stats_requests);
	ss->cursor = UINT64_MAX;
	ss->viewer = (uid_t)-1; /* unknown: sees no client */
	Hoist__StatsRequest *req = hoist__stats_request__unpack(NULL, len, msg);
	if (!req) {
		ss->status = -EPROTO;
		ss->header_only = 1;
	} else {
		ss->chunked = req->abi_version >= 2;
		ss->header_only = req->header_only;
		ss->settings = req->settings;
		hoist__stats_request__free_unpacked(req, NULL);
	}
	/* Who asks: root and the daemon's own user see every client; anyone
	 * else (a root daemon serves every user) only clients of its own uid.
	 * The daemon-wide totals name nobody and stay visible. */
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 && cl == sizeof(cred)) {
		ss->viewer = cred.uid;
		ss->see_all = cred.uid == 0 || cred.uid == d->uid;
	}
	*out = ss;
	return 0;
}

void stats_stream_free(struct stats_stream *ss)
{
	if (!ss)
		return;
	free(ss->out);
	free(ss);
}

static int visible(const struct stats_stream *ss, const struct client *c)
{
	return ss->see_all || c->uid == ss->viewer;
}

/* The transport progress_start ran: self on a daemon of its own (one
 * node), tcp or verbs with peers. */
static const char *transport_name(const struct daemon *d)
{
	return d->xport ? d->xport->name : "none";
}

static int pack_into(struct stats_stream *ss, Hoist__StatsReply *rep)
{
	size_t len = hoist__stats_reply__get_packed_size(rep);
	ss->out = malloc(len ? len : 1);
	if (!ss->out)
		return -ENOMEM;
	ss->len = hoist__stats_reply__pack(rep, ss->out);
	return 0;
}

/* Is there a visible client with an id below the cursor? */
static int rows_left(const struct daemon *d, const struct stats_stream *ss)
{
	for (const struct client *c = d->clients; c; c = c->ctl_next)
		if (c->id < ss->cursor && visible(ss, c))
			return 1;
	return 0;
}

/* The first piece: everything but client rows. */
static int build_header(struct daemon *d, struct stats_stream *ss)
{
	Hoist__StatsReply rep = HOIST__STATS_REPLY__INIT;
	rep.version = HOIST_VERSION_STRING;
	rep.uptime_ms = (now_ns() - d->start_ns) / 1000000u;
	rep.transport = (char *)transport_name(d);
	rep.status = ss->status;
	if (ss->status)
		return pack_into(ss, &rep);

	int verbs = d->xport && d->xport->rdma;
	int tcp = !verbs && d->net.enabled;
	int rc = 0;
	struct counter_buf db = {0};
	struct schema_buf sb = {0};
	struct counter_buf *pb = NULL;
	Hoist__PeerStats *ps = NULL, **psp = NULL;
	Hoist__Setting *st = NULL, **stp = NULL;
	char(*vals)[300] = NULL;
	int npeers = d->net.enabled ? d->net.nnodes : 0;
	size_t nschema = N_DAEMON_STATS + N_CLIENT_STATS + N_PHASE_STATS + N_PEER_STATS;
	sb.items = calloc(nschema, sizeof(*sb.items));
	sb.ptrs = calloc(nschema, sizeof(*sb.ptrs));
	sb.cap = nschema;
	if (!sb.items || !sb.ptrs || counter_buf_init(&db, N_DAEMON_STATS)) {
		rc = -ENOMEM;
		goto out;
	}

	/* daemon-wide: client counters summed over live and retired clients */
	struct client_stats sum;
	memset(&sum, 0, sizeof(sum));
	stats_sum_client(&sum, &d->retired);
	for (struct client *c = d->clients; c; c = c->ctl_next) {
		stats_client_pull(c);
		stats_sum_client(&sum, &c->st);
	}
	struct extra_stats ex;
	memset(&ex, 0, sizeof(ex));
	ex.clients = (uint64_t)d->nclients;
	for (struct job *j = d->jobs; j; j = j->ctl_next)
		ex.jobs++;
	const struct addr_cache_stats *acs = &d->net.cache.st;
	ex.addr_cache_hits = __atomic_load_n(&acs->hits, __ATOMIC_RELAXED);
	ex.addr_cache_misses = __atomic_load_n(&acs->misses, __ATOMIC_RELAXED);
	ex.addr_cache_inserts = __atomic_load_n(&acs->inserts, __ATOMIC_RELAXED);
	ex.addr_cache_evictions = __atomic_load_n(&acs->evictions, __ATOMIC_RELAXED);
	ex.addr_cache_invalidations = __atomic_load_n(&acs->invalidations, __ATOMIC_RELAXED);
	ex.addr_cache_resolves = __atomic_load_n(&acs->resolves, __ATOMIC_RELAXED);
	ex.addr_cache_resolve_ns = __atomic_load_n(&acs->resolve_ns, __ATOMIC_RELAXED);
	uint64_t pin_used = STAT_READ(&d->vst, pinned_bytes), pin_lim = STAT_READ(&d->vst, pinned_limit);
	ex.pinned_available = pin_lim > pin_used ? pin_lim - pin_used : 0;
	ex.node_id = (uint64_t)d->net.self;
	ex.nodes = d->net.enabled ? (uint64_t)d->net.nnodes : 1;

	/* transport counters only for the transport in use; transport_verbs
	 * (0 or 1) always, it says which */
#define ADD(st, name, kind, help, show)                                                            \
	if (show) {                                                                                \
		counter_add(&db, #name, STAT_READ(st, name));                                      \
		schema_add(&sb, "daemon", #name, STATS_KIND_##kind, help);                         \
	}
#define X(name, kind, help) ADD(&sum, name, kind, help, 1)
	HOISTD_CLIENT_STATS(X)
#undef X
#define X(name, kind, help) ADD(&d->pst, name, kind, help, tcp || strncmp(#name, "tcp_", 4))
	HOISTD_PROGRESS_STATS(X)
#undef X
#define X(name, kind, help) ADD(&d->cst, name, kind, help, 1)
	HOISTD_CONTROL_STATS(X)
#undef X
	/* the pinned-memory budget is the node's, whatever the transport */
#define X(name, kind, help)                                                                        \
	ADD(&d->vst, name, kind, help,                                                             \
	    verbs || !strcmp(#name, "transport_verbs") || !strcmp(#name, "pinned_limit") ||        \
		    !strcmp(#name, "pinned_bytes"))
	HOISTD_VERBS_STATS(X)
#undef X
#define X(name, kind, help) ADD(&ex, name, kind, help, 1)
	HOISTD_EXTRA_STATS(X)
#undef X
#undef ADD
	rep.n_daemon = db.n;
	rep.daemon = db.ptrs;
#define X(name, kind, help) schema_add(&sb, "client", #name, STATS_KIND_##kind, help);
	HOISTD_CLIENT_STATS(X)
#undef X
#define X(name, kind, help) schema_add(&sb, "phase", #name, STATS_KIND_##kind, help);
	HOISTD_PHASE_STATS(X)
#undef X
#define X(name, help) schema_add(&sb, "peer", #name, peer_kind(#name), help);
	HOISTD_PEER_STATS(X)
#undef X
	rep.n_schema = sb.n;
	rep.schema = sb.ptrs;

	/* peers: the array is fixed for the daemon's life, counters atomic */
	pb = calloc((size_t)npeers + 1, sizeof(*pb));
	ps = calloc((size_t)npeers + 1, sizeof(*ps));
	psp = calloc((size_t)npeers + 1, sizeof(*psp));
	if (!pb || !ps || !psp) {
		rc = -ENOMEM;
		goto out;
	}
	static const char *const state_names[] = {"idle", "connecting", "up", "lost"};
	size_t k = 0;
	for (int p = 0; p < npeers; p++) {
		struct peer *pe = &d->net.peers[p];
		if (p == d->net.self || counter_buf_init(&pb[k], N_PEER_STATS))
			continue;
#define X(name, help) counter_add(&pb[k], #name, STAT_READ(&pe->st, name));
		HOISTD_PEER_STATS(X)
#undef X
		hoist__peer_stats__init(&ps[k]);
		ps[k].node = pe->node;
		ps[k].addr = pe->name;
		ps[k].state = (char *)state_names[__atomic_load_n(&pe->link.state, __ATOMIC_RELAXED) & 3];
		ps[k].n_counters = pb[k].n;
		ps[k].counters = pb[k].ptrs;
		psp[k] = &ps[k];
		k++;
	}
	rep.n_peers = k;
	rep.peers = psp;

	if (ss->settings) {
		st = calloc(SET__COUNT, sizeof(*st));
		stp = calloc(SET__COUNT, sizeof(*stp));
		vals = calloc(SET__COUNT, sizeof(*vals));
		if (!st || !stp || !vals) {
			rc = -ENOMEM;
			goto out;
		}
		for (int s = 0; s < SET__COUNT; s++) {
			hoist__setting__init(&st[s]);
			st[s].name = (char *)settings_name(s);
			st[s].value = (char *)settings_format(&d->cfg, s, vals[s], sizeof(vals[s]));
			st[s].source = (char *)settings_source_name(d->cfg.source[s]);
			stp[s] = &st[s];
		}
		rep.n_settings = SET__COUNT;
		rep.settings = stp;
	}
	/* legacy (abi 1): the rows follow in this same datagram */
	rep.more = ss->chunked && !ss->header_only && rows_left(d, ss);
	rc = pack_into(ss, &rep);
out:
	if (rc) {
		Hoist__StatsReply err = HOIST__STATS_REPLY__INIT;
		err.version = HOIST_VERSION_STRING;
		err.status = rc;
		rc = pack_into(ss, &err);
	}
	counter_buf_free(&db);
	free(sb.items);
	free(sb.ptrs);
	if (pb)
		for (int p = 0; p < npeers; p++)
			counter_buf_free(&pb[p]);
	free(pb);
	free(ps);
	free(psp);
	free(st);
	free(stp);
	free(vals);
	return rc;
}

/* Client rows below the cursor, at most max of them, into rep (the
 * caller's; rows point into the buffers allocated here). Returns the rows
 * added; *more: visible rows are left after these. */
struct rows {
	struct counter_buf *cb, *phb;
	Hoist__ClientStats *cs, **csp;
	Hoist__PhaseStats *phs, **phsp;
	size_t n, cap;
};

static void rows_free(struct rows *r)
{
	for (size_t i = 0; r->cb && i < r->cap; i++)
		counter_buf_free(&r->cb[i]);
	for (size_t i = 0; r->phb && i < r->cap * PHASE_STATS_MAX; i++)
		counter_buf_free(&r->phb[i]);
	free(r->cb);
	free(r->phb);
	free(r->cs);
	free(r->csp);
	free(r->phs);
	free(r->phsp);
}

static int rows_alloc(struct rows *r, size_t cap)
{
	memset(r, 0, sizeof(*r));
	r->cap = cap;
	r->cb = calloc(cap + 1, sizeof(*r->cb));
	r->phb = calloc(cap * PHASE_STATS_MAX + 1, sizeof(*r->phb));
	r->cs = calloc(cap + 1, sizeof(*r->cs));
	r->csp = calloc(cap + 1, sizeof(*r->csp));
	r->phs = calloc(cap * PHASE_STATS_MAX + 1, sizeof(*r->phs));
	r->phsp = calloc(cap * PHASE_STATS_MAX + 1, sizeof(*r->phsp));
	return r->cb && r->phb && r->cs && r->csp && r->phs && r->phsp ? 0 : -ENOMEM;
}

static int row_add(struct rows *r, const struct client *c)
{
	size_t i = r->n;
	if (counter_buf_init(&r->cb[i], N_CLIENT_STATS))
		return -ENOMEM;
#define X(name, kind, help) counter_add(&r->cb[i], #name, STAT_READ(&c->st, name));
	HOISTD_CLIENT_STATS(X)
#undef X
	hoist__client_stats__init(&r->cs[i]);
	r->cs[i].job_key = (char *)c->job->key;
	r->cs[i].rank = c->rank;
	r->cs[i].pid = (int32_t)c->pid;
	r->cs[i].uid = (uint32_t)c->uid;
	r->cs[i].n_counters = r->cb[i].n;
	r->cs[i].counters = r->cb[i].ptrs;
	/* recent phases (automatic overlap) */
	size_t base = i * PHASE_STATS_MAX, k = 0;
	for (int p = 0; p < PHASE_STATS_MAX; p++) {
		const struct phase_stats_row *row = &c->phase_st[p];
		uint64_t id = __atomic_load_n(&row->id, __ATOMIC_RELAXED);
		if (!id || counter_buf_init(&r->phb[base + k], N_PHASE_STATS))
			continue;
#define X(name, kind, help) counter_add(&r->phb[base + k], #name, STAT_READ(row, name));
		HOISTD_PHASE_STATS(X)
#undef X
		hoist__phase_stats__init(&r->phs[base + k]);
		r->phs[base + k].id = id - 1;
		r->phs[base + k].n_counters = r->phb[base + k].n;
		r->phs[base + k].counters = r->phb[base + k].ptrs;
		r->phsp[base + k] = &r->phs[base + k];
		k++;
	}
	r->cs[i].n_phases = k;
	r->cs[i].phases = &r->phsp[base];
	r->csp[i] = &r->cs[i];
	r->n++;
	return 0;
}

/* The next piece of client rows (legacy: all of them, and the header). */
static int build_rows(struct daemon *d, struct stats_stream *ss)
{
	size_t max = ss->chunked ? STATS_ROWS_PER_PIECE : (size_t)d->nclients;
	struct rows r;
	int rc = rows_alloc(&r, max);
	int more = 0;
	/* the list is newest first: ids descend, the cursor stays valid
	 * while clients come and go between pieces */
	for (struct client *c = d->clients; !rc && c; c = c->ctl_next) {
		if (c->id >= ss->cursor || !visible(ss, c))
			continue;
		if (r.n == max) {
			more = 1;
			break;
		}
		stats_client_pull(c);
		rc = row_add(&r, c);
		ss->cursor = c->id;
	}
	Hoist__StatsReply rep = HOIST__STATS_REPLY__INIT;
	rep.version = HOIST_VERSION_STRING; /* never an empty datagram */
	rep.status = rc;
	if (!rc) {
		rep.n_clients = r.n;
		rep.clients = r.csp;
		rep.more = more;
	}
	rc = pack_into(ss, &rep);
	rows_free(&r);
	if (!more)
		ss->done = 1;
	return rc;
}

/* Legacy single datagram: the header with every row merged in. */
static int build_legacy(struct daemon *d, struct stats_stream *ss)
{
	int rc = build_header(d, ss);
	ss->header_sent = 1;
	if (rc || ss->header_only || ss->status) {
		ss->done = 1;
		return rc;
	}
	uint8_t *head = ss->out;
	size_t hlen = ss->len;
	ss->out = NULL;
	rc = build_rows(d, ss);
	if (rc) {
		free(head);
		return rc;
	}
	/* protobuf: two messages concatenated parse as their merge */
	uint8_t *all = malloc(hlen + ss->len);
	if (!all) {
		free(head);
		return -ENOMEM;
	}
	memcpy(all, head, hlen);
	memcpy(all + hlen, ss->out, ss->len);
	free(head);
	free(ss->out);
	ss->out = all;
	ss->len += hlen;
	ss->done = 1;
	return 0;
}

int stats_pump(struct daemon *d, int fd, struct stats_stream *ss)
{
	for (;;) {
		if (!ss->out) {
			if (ss->done)
				return 0;
			int rc;
			if (!ss->chunked)
				rc = build_legacy(d, ss);
			else if (!ss->header_sent) {
				rc = build_header(d, ss);
				ss->header_sent = 1;
				if (ss->header_only || ss->status || !rows_left(d, ss))
					ss->done = 1;
			} else
				rc = build_rows(d, ss);
			if (rc)
				return rc;
		}
		ssize_t n = send(fd, ss->out, ss->len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 1;
			if (errno == EINTR)
				continue;
			if (errno == EMSGSIZE)
				hlog_debug("stats reply of %zu bytes is larger than the socket buffer", ss->len);
			return -errno;
		}
		free(ss->out);
		ss->out = NULL;
	}
}
