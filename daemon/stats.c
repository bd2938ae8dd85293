/*
 * The stats socket (control thread): one StatsRequest in, one StatsReply
 * out. Names come from the tables in stats.h and settings.h, so hoistctl
 * renders whatever the daemon counts without knowing the list.
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

void stats_sum_client(struct client_stats *acc, const struct client_stats *c)
{
#define X(name, help) STAT_ADD(acc, name, STAT_READ(c, name));
	HOISTD_CLIENT_STATS(X)
#undef X
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
	b->items = calloc(cap, sizeof(*b->items));
	b->ptrs = calloc(cap, sizeof(*b->ptrs));
	b->n = 0;
	b->cap = cap;
	return b->items && b->ptrs ? 0 : -ENOMEM;
}

static void counter_buf_free(struct counter_buf *b)
{
	free(b->items);
	free(b->ptrs);
}

#define COUNT_ONE(name, help) +1
enum {
	N_CLIENT_STATS = 0 HOISTD_CLIENT_STATS(COUNT_ONE),
	N_DAEMON_STATS = 0 HOISTD_CLIENT_STATS(COUNT_ONE) HOISTD_PROGRESS_STATS(COUNT_ONE)
			     HOISTD_CONTROL_STATS(COUNT_ONE) HOISTD_VERBS_STATS(COUNT_ONE) + 11,
	N_PEER_STATS = 0 HOISTD_PEER_STATS(COUNT_ONE),
};
#undef COUNT_ONE

void stats_serve(struct daemon *d, int fd)
{
	uint8_t in[512];
	ssize_t n = recv(fd, in, sizeof(in), 0);
	if (n <= 0)
		return;
	STAT_INC(&d->cst, stats_requests);
	int npeers = 0;
	struct counter_buf *pb = NULL;
	struct counter_buf *phb = NULL; /* [nclients * PHASE_STATS_MAX] */
	Hoist__PhaseStats *phs = NULL, **phsp = NULL;
	Hoist__PeerStats *ps = NULL, **psp = NULL;
	Hoist__StatsRequest *req = hoist__stats_request__unpack(NULL, (size_t)n, in);
	Hoist__StatsReply rep = HOIST__STATS_REPLY__INIT;
	rep.version = HOIST_VERSION_STRING;
	rep.uptime_ms = (now_ns() - d->start_ns) / 1000000u;
	if (!req) {
		rep.status = -EPROTO;
		goto send;
	}

	/* Who asks: root and the daemon's own user see every client; anyone
	 * else (a root daemon serves every user) only clients of its own uid.
	 * The daemon-wide totals below name nobody and stay visible. */
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int see_all = 0;
	uid_t viewer = (uid_t)-1; /* unknown: sees no client */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 && cl == sizeof(cred)) {
		viewer = cred.uid;
		see_all = cred.uid == 0 || cred.uid == d->uid;
	}

	/* daemon-wide: client counters summed over live and retired clients */
	struct client_stats sum;
	memset(&sum, 0, sizeof(sum));
	stats_sum_client(&sum, &d->retired);
	for (struct client *c = d->clients; c; c = c->ctl_next)
		stats_sum_client(&sum, &c->st);

	struct counter_buf db = {0};
	int nclients = d->nclients;
	struct counter_buf *cb = calloc((size_t)nclients + 1, sizeof(*cb));
	Hoist__ClientStats *cs = calloc((size_t)nclients + 1, sizeof(*cs));
	Hoist__ClientStats **csp = calloc((size_t)nclients + 1, sizeof(*csp));
	Hoist__Setting *st = calloc(SET__COUNT, sizeof(*st));
	Hoist__Setting **stp = calloc(SET__COUNT, sizeof(*stp));
	char(*vals)[300] = calloc(SET__COUNT, sizeof(*vals));
	char(*names)[300] = calloc((size_t)nclients + 1, sizeof(*names));
	if (!cb || !cs || !csp || !st || !stp || !vals || !names || counter_buf_init(&db, N_DAEMON_STATS)) {
		rep.status = -ENOMEM;
		goto send_free;
	}
#define X(name, help) counter_add(&db, #name, STAT_READ(&sum, name));
	HOISTD_CLIENT_STATS(X)
#undef X
#define X(name, help) counter_add(&db, #name, STAT_READ(&d->pst, name));
	HOISTD_PROGRESS_STATS(X)
#undef X
#define X(name, help) counter_add(&db, #name, STAT_READ(&d->cst, name));
	HOISTD_CONTROL_STATS(X)
#undef X
#define X(name, help) counter_add(&db, #name, STAT_READ(&d->vst, name));
	HOISTD_VERBS_STATS(X)
#undef X
	counter_add(&db, "clients", (uint64_t)d->nclients);
	uint64_t njobs = 0;
	for (struct job *j = d->jobs; j; j = j->ctl_next)
		njobs++;
	counter_add(&db, "jobs", njobs);
	counter_add(&db, "spin_us", d->cfg.spin_us);
	const struct addr_cache_stats *acs = &d->net.cache.st;
	counter_add(&db, "addr_cache_hits", __atomic_load_n(&acs->hits, __ATOMIC_RELAXED));
	counter_add(&db, "addr_cache_misses", __atomic_load_n(&acs->misses, __ATOMIC_RELAXED));
	counter_add(&db, "addr_cache_inserts", __atomic_load_n(&acs->inserts, __ATOMIC_RELAXED));
	counter_add(&db, "addr_cache_evictions", __atomic_load_n(&acs->evictions, __ATOMIC_RELAXED));
	counter_add(&db, "addr_cache_invalidations",
		    __atomic_load_n(&acs->invalidations, __ATOMIC_RELAXED));
	uint64_t pin_used = STAT_READ(&d->vst, pinned_bytes), pin_lim = STAT_READ(&d->vst, pinned_limit);
	counter_add(&db, "pinned_available", pin_lim > pin_used ? pin_lim - pin_used : 0);
	counter_add(&db, "node_id", (uint64_t)d->net.self);
	counter_add(&db, "nodes", (uint64_t)d->net.nnodes);
	rep.n_daemon = db.n;
	rep.daemon = db.ptrs;

	size_t nph = (size_t)nclients * PHASE_STATS_MAX;
	phb = calloc(nph + 1, sizeof(*phb));
	phs = calloc(nph + 1, sizeof(*phs));
	phsp = calloc(nph + 1, sizeof(*phsp));
	int i = 0;
	for (struct client *c = d->clients; c && i < nclients; c = c->ctl_next) {
		if (!see_all && c->uid != viewer)
			continue; /* another user's job: key, pid, rank, counters */
		if (counter_buf_init(&cb[i], N_CLIENT_STATS)) {
			rep.status = -ENOMEM;
			break;
		}
#define X(name, help) counter_add(&cb[i], #name, STAT_READ(&c->st, name));
		HOISTD_CLIENT_STATS(X)
#undef X
		hoist__client_stats__init(&cs[i]);
		snprintf(names[i], sizeof(names[i]), "%s", c->job->key);
		cs[i].job_key = names[i];
		cs[i].rank = c->rank;
		cs[i].pid = (int32_t)c->pid;
		cs[i].uid = (uint32_t)c->uid;
		cs[i].n_counters = cb[i].n;
		cs[i].counters = cb[i].ptrs;
		csp[i] = &cs[i];
		if (phb && phs && phsp) { /* recent phases (automatic overlap) */
			size_t base = (size_t)i * PHASE_STATS_MAX, k = 0;
			for (int r = 0; r < PHASE_STATS_MAX; r++) {
				struct phase_stats_row *row = &c->phase_st[r];
				uint64_t id = __atomic_load_n(&row->id, __ATOMIC_RELAXED);
				if (!id || counter_buf_init(&phb[base + k], 8))
					continue;
#define X(name, help) counter_add(&phb[base + k], #name, STAT_READ(row, name));
				HOISTD_PHASE_STATS(X)
#undef X
				hoist__phase_stats__init(&phs[base + k]);
				phs[base + k].id = id - 1;
				phs[base + k].n_counters = phb[base + k].n;
				phs[base + k].counters = phb[base + k].ptrs;
				phsp[base + k] = &phs[base + k];
				k++;
			}
			cs[i].n_phases = k;
			cs[i].phases = &phsp[base];
		}
		i++;
	}
	rep.n_clients = (size_t)i;
	rep.clients = csp;

	/* peers: the array is fixed for the daemon's life, counters atomic */
	npeers = d->net.enabled ? d->net.nnodes : 0;
	pb = calloc((size_t)npeers + 1, sizeof(*pb));
	ps = calloc((size_t)npeers + 1, sizeof(*ps));
	psp = calloc((size_t)npeers + 1, sizeof(*psp));
	if (pb && ps && psp) {
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
			ps[k].state = (char *)state_names[__atomic_load_n(&pe->state, __ATOMIC_RELAXED) & 3];
			ps[k].n_counters = pb[k].n;
			ps[k].counters = pb[k].ptrs;
			psp[k] = &ps[k];
			k++;
		}
		rep.n_peers = k;
		rep.peers = psp;
	}

	if (req->settings) {
		for (int k = 0; k < SET__COUNT; k++) {
			hoist__setting__init(&st[k]);
			st[k].name = (char *)settings_name(k);
			st[k].value = (char *)settings_format(&d->cfg, k, vals[k], sizeof(vals[k]));
			st[k].source = (char *)settings_source_name(d->cfg.source[k]);
			stp[k] = &st[k];
		}
		rep.n_settings = SET__COUNT;
		rep.settings = stp;
	}

send_free:;
	size_t len = hoist__stats_reply__get_packed_size(&rep);
	uint8_t *out = malloc(len ? len : 1);
	if (out) {
		hoist__stats_reply__pack(&rep, out);
		if (control_send(fd, out, len, NULL, 0))
			hlog_debug("stats reply of %zu bytes not sent", len);
		free(out);
	}
	counter_buf_free(&db);
	if (phb)
		for (size_t k = 0; k < (size_t)nclients * PHASE_STATS_MAX; k++)
			counter_buf_free(&phb[k]);
	free(phb);
	free(phs);
	free(phsp);
	if (pb)
		for (int k = 0; k < npeers; k++)
			counter_buf_free(&pb[k]);
	free(pb);
	free(ps);
	free(psp);
	if (cb)
		for (int k = 0; k < nclients; k++)
			counter_buf_free(&cb[k]);
	free(cb);
	free(cs);
	free(csp);
	free(st);
	free(stp);
	free(vals);
	free(names);
	hoist__stats_request__free_unpacked(req, NULL);
	return;
send:;
	uint8_t small[64];
	size_t sl = hoist__stats_reply__get_packed_size(&rep);
	if (sl <= sizeof(small)) {
		hoist__stats_reply__pack(&rep, small);
		control_send(fd, small, sl, NULL, 0);
	}
}
