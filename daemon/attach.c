/*
 * Attach protocol and job membership (control thread).
 *
 * A client sends one AttachRequest. We check its credentials (SO_PEERCRED),
 * create its regions as sealed memfds and hand the client to the progress
 * thread at once (peers may address it from now on). Its rank is announced
 * to the other nodes of the cluster, and their announcements tell us where
 * the job's other ranks live. Once every rank's node is known the job is
 * ready: the progress thread gets the final node map, and every local rank
 * its AttachReply with the fds (SCM_RIGHTS) and the list of the job's
 * ranks attached here (all of them have, once every rank is known). A job
 * that does not assemble within job_timeout_ms fails every waiting rank
 * with -ETIMEDOUT. Each client's heap fd stays open until the client is
 * freed: node-local peers of its job ask for it (PeersRequest, hoist_ptr).
 */
#include "daemon.h"

#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "control.h"
#include "hoist.pb-c.h"
#include "log.h"
#include "reg.h"

static int reply_error(struct daemon *d, int fd, int status, const char *why)
{
	Hoist__AttachReply rep = HOIST__ATTACH_REPLY__INIT;
	rep.status = status;
	rep.error = (char *)why;
	rep.abi_version = HOIST_ABI_VERSION;
	uint8_t buf[1024];
	size_t n = hoist__attach_reply__get_packed_size(&rep);
	if (n > sizeof(buf))
		return -EMSGSIZE;
	hoist__attach_reply__pack(&rep, buf);
	STAT_INC(&d->cst, attach_refused);
	return control_send(fd, buf, n, NULL, 0);
}

static int reply_ok(struct daemon *d, struct client *c, int32_t *local, size_t nlocal)
{
	Hoist__AttachReply rep = HOIST__ATTACH_REPLY__INIT;
	rep.status = 0;
	rep.error = "";
	rep.abi_version = HOIST_ABI_VERSION;
	rep.sq_entries = c->sq_entries;
	rep.cq_entries = c->cq_entries;
	rep.ring_bytes = c->ring.bytes;
	rep.staging_bytes = c->staging.bytes;
	rep.heap_bytes = c->heap.bytes;
	rep.spin_us = (uint32_t)d->cfg.spin_us;
	rep.nfds = c->pf.base ? 5 : 4;
	rep.pf_slots = c->pf_slots;
	rep.pf_region_bytes = c->pf.base ? c->pf.bytes : 0;
	rep.n_local_ranks = nlocal;
	rep.local_ranks = local;
	size_t n = hoist__attach_reply__get_packed_size(&rep);
	uint8_t *buf = malloc(n);
	int rc = -ENOMEM;
	if (buf) {
		hoist__attach_reply__pack(&rep, buf);
		int fds[5] = {c->ring.fd, c->staging.fd, c->heap.fd, d->doorbell_fd, c->pf.fd};
		rc = control_send(c->conn->fd, buf, n, fds, (int)rep.nfds);
		free(buf);
	}
	region_close_fd(&c->pf);
	/* the client holds its own references now (or failed to). The heap
	 * fd stays: node-local peers ask for it (PeersRequest, hoist_ptr) */
	region_close_fd(&c->ring);
	region_close_fd(&c->staging);
	return rc;
}

/* The first answer to a valid request whose job still assembles: the
 * client waits for it with a short deadline, then for the final reply with
 * one of job_timeout_ms (plus a margin). A daemon that says nothing is
 * hung or an impostor; one that said this is working on it. */
static int reply_accepted(struct daemon *d, struct client *c)
{
	Hoist__AttachReply rep = HOIST__ATTACH_REPLY__INIT;
	rep.status = 0;
	rep.error = "";
	rep.abi_version = HOIST_ABI_VERSION;
	rep.accepted = 1;
	rep.job_timeout_ms = (uint32_t)d->cfg.job_timeout_ms;
	uint8_t buf[64];
	size_t n = hoist__attach_reply__get_packed_size(&rep);
	if (n > sizeof(buf) || !c->conn)
		return -EMSGSIZE;
	hoist__attach_reply__pack(&rep, buf);
	return control_send(c->conn->fd, buf, n, NULL, 0);
}

/* A job is its owner and its key: the same key under another uid is
 * another job (nobody can join, block or reach a job of another user by
 * naming its key). */
static struct job *job_find(struct daemon *d, uid_t uid, const char *key)
{
	for (struct job *j = d->jobs; j; j = j->ctl_next)
		if (j->uid == uid && strcmp(j->key, key) == 0)
			return j;
	return NULL;
}

/* Another job (not (uid, key)) that has the id (uid, key) would get, here,
 * running or still returning its clients. Ids are 64-bit keyed hashes, so
 * this does not happen by chance in practice and cannot be arranged without
 * the cluster key; should it happen, the newcomer is refused, so an id
 * never names two jobs on one node. */
static const struct job *job_id_clash(const struct daemon *d, uint64_t id, uid_t uid,
				      const char *key)
{
	const struct job *lists[2] = {d->jobs, d->ended_jobs};
	for (int i = 0; i < 2; i++)
		for (const struct job *j = lists[i]; j; j = j->ctl_next)
			if (j->id == id && (j->uid != uid || strcmp(j->key, key) != 0))
				return j;
	return NULL;
}

static void job_unlink_free(struct daemon *d, struct job *j)
{
	struct job **pp = &d->jobs;
	while (*pp && *pp != j)
		pp = &(*pp)->ctl_next;
	if (!*pp) { /* an ended job whose clients were still being returned */
		pp = &d->ended_jobs;
		while (*pp && *pp != j)
			pp = &(*pp)->ctl_next;
	}
	if (*pp)
		*pp = j->ctl_next;
	if (j->timer)
		event_free(j->timer);
	free(j->pe);
	free(j->pe_gone);
	free(j->node_of);
	free(j->rank_nonce);
	free(j->nodes);
	free(j->announced);
	job_gone_early_free(j);
	free(j);
}

void jobs_free_all(struct daemon *d)
{
	while (d->jobs)
		job_unlink_free(d, d->jobs);
	while (d->ended_jobs)
		job_unlink_free(d, d->ended_jobs);
}

void client_free(struct daemon *d, struct client *c)
{
	struct client **pp = &d->clients;
	while (*pp && *pp != c)
		pp = &(*pp)->ctl_next;
	if (*pp)
		*pp = c->ctl_next;
	d->nclients--;
	stats_client_pull(c);
	stats_sum_client(&d->retired, &c->st);
	if (c->conn)
		c->conn->client = NULL;
	struct job *j = c->job;
	reg_retire(d, c); /* keeps registered segments for the grace period */
	reg_deregister(d, c);
	client_free_regions(c);
	if (j && --j->live == 0 && (j->ready || j->error_sent))
		job_unlink_free(d, j);
}

/* Refuse every local rank still waiting for its reply, and close them:
 * the hang-ups retire the clients through the progress thread. */
static void job_refuse_waiting(struct daemon *d, struct job *j, int status, const char *why)
{
	j->error_sent = 1;
	for (struct client *c = d->clients, *next; c; c = next) {
		next = c->ctl_next;
		if (c->job != j || c->replied || !c->conn)
			continue;
		struct conn *cn = c->conn;
		reply_error(d, cn->fd, status, why);
		c->replied = 1;
		conn_close(cn);
	}
	if (j->live == 0)
		job_unlink_free(d, j);
}

static void job_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct job *j = arg;
	struct daemon *d = j->d;
	(void)fd;
	(void)what;
	event_free(j->timer);
	j->timer = NULL;
	if (j->attached == 0) { /* we only heard of it from peers */
		if (j->live == 0)
			job_unlink_free(d, j);
		return;
	}
	hlog_warn("job %s: only %d of %d ranks known within %llu ms", j->key, j->known, j->size,
		  (unsigned long long)d->cfg.job_timeout_ms);
	STAT_INC(&d->cst, jobs_timed_out);
	char why[400];
	snprintf(why, sizeof(why),
		 "job %.200s did not assemble: %d of %d ranks attached within %llu ms "
		 "(job_timeout_ms); every rank must use the same job key (HOIST_JOB) and size",
		 j->key, j->known, j->size, (unsigned long long)d->cfg.job_timeout_ms);
	job_refuse_waiting(d, j, -ETIMEDOUT, why);
}

/* Every rank's node known: hand the node map over, answer the ranks. */
static void job_check_ready(struct daemon *d, struct job *j)
{
	if (j->ready || j->error_sent || j->known < j->size)
		return;
	j->ready = 1;
	if (j->timer) {
		event_free(j->timer);
		j->timer = NULL;
	}
	if (j->attached == 0) { /* nothing of it here */
		if (j->live == 0)
			job_unlink_free(d, j);
		return;
	}
	STAT_INC(&d->cst, jobs_started);
	hlog_info("job %s: all %d ranks attached (%d here)", j->key, j->size, j->attached);
	if (cmdq_push(&d->to_progress, CMD_JOB_READY, j)) {
		hlog_err("out of memory starting job %s", j->key);
		return;
	}
	/* every rank is known, so every local one has attached: the list of
	 * local ranks (what hoist_ptr can reach) is final */
	int32_t *local = malloc((size_t)j->attached * sizeof(*local));
	size_t nlocal = 0;
	for (int32_t r = 0; local && r < j->size; r++)
		if (j->node_of[r] == d->net.self && nlocal < (size_t)j->attached)
			local[nlocal++] = r;
	for (struct client *c = d->clients; c; c = c->ctl_next) {
		if (c->job != j || c->replied)
			continue;
		c->replied = 1;
		if (reply_ok(d, c, local, nlocal))
			hlog_warn("job %s rank %d: sending the attach reply failed", j->key, c->rank);
	}
	free(local);
}

static struct job *job_new(struct daemon *d, const char *key, uid_t uid, int32_t size,
			   uint64_t heap_bytes)
{
	struct job *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->pe = calloc((size_t)size, sizeof(*j->pe));
	j->pe_gone = calloc((size_t)size, 1);
	j->node_of = malloc((size_t)size * sizeof(*j->node_of));
	j->rank_nonce = calloc((size_t)size, sizeof(*j->rank_nonce));
	j->announced = calloc((size_t)d->net.nnodes, sizeof(*j->announced));
	if (!j->pe || !j->pe_gone || !j->node_of || !j->rank_nonce || !j->announced) {
		free(j->pe);
		free(j->pe_gone);
		free(j->node_of);
		free(j->rank_nonce);
		free(j->announced);
		free(j);
		return NULL;
	}
	for (int32_t r = 0; r < size; r++)
		j->node_of[r] = -1;
	snprintf(j->key, sizeof(j->key), "%s", key);
	j->id = cluster_job_id(&d->net, (uint32_t)uid, j->key);
	j->d = d;
	j->uid = uid;
	j->size = size;
	j->heap_bytes = heap_bytes;
	j->ctl_next = d->jobs;
	d->jobs = j;
	if (size > 1) {
		j->timer = evtimer_new(d->base, job_timeout_cb, j);
		struct timeval tv = {
			.tv_sec = (time_t)(d->cfg.job_timeout_ms / 1000),
			.tv_usec = (suseconds_t)((d->cfg.job_timeout_ms % 1000) * 1000),
		};
		if (j->timer)
			evtimer_add(j->timer, &tv);
	}
	return j;
}

/* Tell peers which ranks of j we host (to_node -1: all of them). */
static void job_announce(struct daemon *d, struct job *j, int32_t to_node, uint32_t flags)
{
	if (!d->net.enabled || j->attached == 0)
		return;
	struct announce *a = calloc(1, sizeof(*a) + (size_t)j->attached * sizeof(struct wire_rank));
	if (!a)
		return;
	a->to_node = to_node;
	a->from_node = d->net.self;
	a->job = j->id;
	snprintf(a->key, sizeof(a->key), "%s", j->key);
	a->size = j->size;
	a->uid = (uint32_t)j->uid;
	a->heap_bytes = j->heap_bytes;
	a->flags = flags;
	for (struct client *c = d->clients; c && a->nranks < (uint32_t)j->attached; c = c->ctl_next)
		if (c->job == j)
			a->ranks[a->nranks++] = (struct wire_rank){.rank = c->rank, .nonce = c->nonce};
	if (cmdq_push(&d->to_progress, CMD_ANNOUNCE, a))
		free(a);
}

/* The job is over here (or another incarnation took its key): it can no
 * longer be found by key; it is freed when its clients are returned. */
static void job_end(struct daemon *d, struct job *j)
{
	struct job **pp = &d->jobs;
	while (*pp && *pp != j)
		pp = &(*pp)->ctl_next;
	if (!*pp)
		return;
	*pp = j->ctl_next;
	if (j->live == 0) {
		j->ctl_next = NULL;
		job_unlink_free(d, j);
		return;
	}
	j->ctl_next = d->ended_jobs;
	d->ended_jobs = j;
}

/* Hang-ups of a job's clients that the event loop has not handled yet
 * (a rank that exited just before a new job took its key). */
static void job_reap_hangups(struct daemon *d, struct job *j)
{
	for (struct client *c = d->clients, *next; c; c = next) {
		next = c->ctl_next;
		if (c->job != j || !c->conn)
			continue;
		char b;
		ssize_t n = recv(c->conn->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
			conn_close(c->conn);
	}
}

/* A peer says which ranks of a job it hosts. */
void attach_member(struct daemon *d, struct announce *a)
{
	struct job *j = job_find(d, (uid_t)a->uid, a->key);
	if (j && j->ready) {
		/* the same incarnation only repeats what we know; ranks with
		 * other nonces are a new job that reuses the key */
		int newer = 0;
		for (uint32_t i = 0; i < a->nranks; i++) {
			int32_t r = a->ranks[i].rank;
			if (r >= 0 && r < j->size && j->rank_nonce[r] != a->ranks[i].nonce)
				newer = 1;
		}
		if (!newer)
			return;
		job_end(d, j);
		j = NULL;
	}
	if (!j) {
		const struct job *o = job_id_clash(d, a->job, (uid_t)a->uid, a->key);
		if (o) { /* its ranks here would be reached by the other's messages */
			hlog_warn("job %s of uid %u (node %d) has the id of job %s of uid %u here; "
				  "ignoring it", a->key, a->uid, a->from_node, o->key, (unsigned)o->uid);
			return;
		}
		j = job_new(d, a->key, (uid_t)a->uid, a->size, a->heap_bytes);
		if (!j)
			return;
	}
	if (j->size != a->size || j->heap_bytes != a->heap_bytes) {
		hlog_warn("job %s (uid %u): node %d announces size %d heap %llu, here %d %llu", j->key,
			  (unsigned)j->uid, a->from_node, a->size, (unsigned long long)a->heap_bytes,
			  j->size, (unsigned long long)j->heap_bytes);
		job_refuse_waiting(d, j, -EINVAL, "ranks on other nodes run with another size or heap");
		return;
	}
	for (uint32_t i = 0; i < a->nranks; i++) {
		int32_t r = a->ranks[i].rank;
		if (r < 0 || r >= j->size)
			continue;
		if (j->node_of[r] == -1) {
			j->node_of[r] = a->from_node;
			j->rank_nonce[r] = a->ranks[i].nonce;
			j->known++;
		} else if (j->node_of[r] != a->from_node && !j->ready) {
			char why[160];
			snprintf(why, sizeof(why), "rank %d attached on node %d and on node %d", r,
				 j->node_of[r], a->from_node);
			job_refuse_waiting(d, j, -EADDRINUSE, why);
			return;
		}
	}
	if (a->flags & MEMBER_WANT_REPLY)
		job_announce(d, j, a->from_node, 0);
	job_check_ready(d, j);
}

/* Clients of one uid, attached or waiting for their job (control thread). */
static uint64_t clients_of(const struct daemon *d, uid_t uid)
{
	uint64_t n = 0;
	for (const struct client *c = d->clients; c; c = c->ctl_next)
		n += c->uid == uid;
	return n;
}

/* What client_create made: the shared regions, the CQ shadow, the client */
void client_free_regions(struct client *c)
{
	region_destroy(&c->ring);
	region_destroy(&c->staging);
	region_destroy(&c->heap);
	region_destroy(&c->pf);
	free(c->cq_shadow);
	free(c);
}

static int client_create(struct daemon *d, struct job *j, const Hoist__AttachRequest *req,
			 pid_t pid, uid_t uid, struct client **out)
{
	struct client *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->id = ++d->next_id;
	c->job = j;
	if (getrandom(&c->nonce, sizeof(c->nonce), 0) != (ssize_t)sizeof(c->nonce))
		c->nonce = now_ns() ^ ((uint64_t)pid << 32) ^ c->id;
	c->rank = req->rank;
	c->pid = pid;
	c->uid = uid;
	c->sq_entries = (uint32_t)d->cfg.sq_entries;
	c->cq_entries = (uint32_t)d->cfg.cq_entries;
	c->blocking = req->blocking;
	c->sq_mask = c->sq_entries - 1;
	c->cq_mask = c->cq_entries - 1;
	c->ring.fd = c->staging.fd = c->heap.fd = c->pf.fd = -1;
	char name[64];
	int rc;
	rc = -ENOMEM;
	if (!(c->cq_shadow = calloc(c->cq_entries, sizeof(*c->cq_shadow))))
		goto fail;
	snprintf(name, sizeof(name), "hoist-ring-%d", (int)pid);
	if ((rc = region_create(&c->ring, name, hoist_ring_bytes(c->sq_entries, c->cq_entries), 1)))
		goto fail;
	snprintf(name, sizeof(name), "hoist-staging-%d", (int)pid);
	if ((rc = region_create(&c->staging, name, d->cfg.staging_bytes, 1)))
		goto fail;
	snprintf(name, sizeof(name), "hoist-heap-%d", (int)pid);
	if ((rc = region_create(&c->heap, name, req->heap_bytes, 0)))
		goto fail;
	if (!req->blocking) { /* the prefetch table and arena the client reads */
		c->pf_slots = (uint32_t)d->cfg.phase_max_gets;
		snprintf(name, sizeof(name), "hoist-prefetch-%d", (int)pid);
		if ((rc = region_create(&c->pf, name,
					hoist_pf_arena_off(c->pf_slots) + d->cfg.prefetch_arena_bytes, 0)))
			goto fail;
	}

	struct hoist_ctrl *ctrl = c->ring.base;
	ctrl->magic = HOIST_SHM_MAGIC;
	ctrl->abi_version = HOIST_ABI_VERSION;
	ctrl->sq_entries = c->sq_entries;
	ctrl->cq_entries = c->cq_entries;
	ctrl->sq_off = (uint32_t)hoist_ring_sq_off();
	ctrl->cq_off = (uint32_t)hoist_ring_cq_off(c->sq_entries);
	ctrl->rank = req->rank;
	ctrl->size = req->size;
	ctrl->staging_bytes = c->staging.bytes;
	ctrl->heap_bytes = c->heap.bytes;
	ctrl->ring_bytes = c->ring.bytes;
	c->ctrl = ctrl;
	c->sq = hoist_ctrl_sq(ctrl);
	c->cq = hoist_ctrl_cq(ctrl);
	*out = c;
	return 0;
fail:
	client_free_regions(c);
	return rc;
}

int attach_handle(struct daemon *d, struct conn *cn, const void *msg, size_t len)
{
	char why[400];
	int status;
	Hoist__AttachRequest *req = hoist__attach_request__unpack(NULL, len, msg);
	if (!req)
	{
		reply_error(d, cn->fd, -EPROTO, "malformed AttachRequest");
		return -EPROTO;
	}

	struct ucred cred;
	socklen_t cl = sizeof(cred);
	if (getsockopt(cn->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
		status = -errno;
		snprintf(why, sizeof(why), "cannot read peer credentials");
		goto refuse;
	}
	if (req->abi_version != HOIST_ABI_VERSION) {
		status = -EPROTO;
		snprintf(why, sizeof(why), "ABI version %u, daemon speaks %u", req->abi_version,
			 HOIST_ABI_VERSION);
		goto refuse;
	}
	if (d->uid != 0 && cred.uid != d->uid) {
		status = -EACCES;
		snprintf(why, sizeof(why), "this hoistd serves uid %u only", (unsigned)d->uid);
		goto refuse;
	}
	if (req->size < 1 || req->size > (1 << 20) || req->rank < 0 || req->rank >= req->size) {
		status = -EINVAL;
		snprintf(why, sizeof(why), "rank %d / size %d out of range", req->rank, req->size);
		goto refuse;
	}
	size_t klen = req->job_key ? strlen(req->job_key) : 0;
	if (klen == 0 || klen >= sizeof(((struct job *)0)->key)) {
		status = -EINVAL;
		snprintf(why, sizeof(why), "job key empty or longer than 255 bytes");
		goto refuse;
	}
	if (req->heap_bytes < 4096 || req->heap_bytes > d->cfg.max_heap_bytes) {
		status = -EINVAL;
		snprintf(why, sizeof(why), "heap of %llu bytes outside [4096, %llu] (max_heap_bytes)",
			 (unsigned long long)req->heap_bytes, (unsigned long long)d->cfg.max_heap_bytes);
		goto refuse;
	}
	if ((uint64_t)d->nclients >= d->cfg.max_clients) {
		status = -EUSERS;
		snprintf(why, sizeof(why), "daemon serves max_clients=%llu already",
			 (unsigned long long)d->cfg.max_clients);
		goto refuse;
	}
	if (clients_of(d, cred.uid) >= d->cfg.max_clients_per_user) {
		status = -EUSERS;
		snprintf(why, sizeof(why),
			 "uid %u has max_clients_per_user=%llu clients attached or waiting already",
			 (unsigned)cred.uid, (unsigned long long)d->cfg.max_clients_per_user);
		goto refuse;
	}

	struct job *j = job_find(d, cred.uid, req->job_key);
	if (j && j->ready) {
		job_reap_hangups(d, j); /* may end it */
		j = job_find(d, cred.uid, req->job_key);
	}
	if (j) {
		if (j->ready || j->error_sent) {
			status = -EADDRINUSE;
			snprintf(why, sizeof(why), "job %s is already %s", j->key,
				 j->ready ? "running" : "failing");
			goto refuse;
		}
		if (j->size != req->size || j->heap_bytes != req->heap_bytes) {
			/* the job can never start: its waiting ranks learn it now,
			 * not after job_timeout_ms */
			status = -EINVAL;
			snprintf(why, sizeof(why),
				 "job %s: rank %d says size %d and heap %llu, rank(s) already "
				 "attached say size %d and heap %llu (HOIST_SIZE / HOIST_HEAP_SIZE "
				 "must agree)", j->key, req->rank, req->size,
				 (unsigned long long)req->heap_bytes, j->size,
				 (unsigned long long)j->heap_bytes);
			job_refuse_waiting(d, j, status, why);
			goto refuse;
		}
		if (j->node_of[req->rank] != -1) {
			status = -EADDRINUSE;
			snprintf(why, sizeof(why), "job %s: rank %d is already attached (node %d)", j->key,
				 req->rank, j->node_of[req->rank]);
			goto refuse;
		}
	} else {
		const struct job *o =
			job_id_clash(d, cluster_job_id(&d->net, cred.uid, req->job_key), cred.uid,
				     req->job_key);
		if (o) {
			status = -EADDRINUSE;
			snprintf(why, sizeof(why),
				 "job %s: its id (a 64-bit hash) equals that of another job on this "
				 "node; choose another HOIST_JOB", req->job_key);
			goto refuse;
		}
		j = job_new(d, req->job_key, cred.uid, req->size, req->heap_bytes);
		if (!j) {
			status = -ENOMEM;
			snprintf(why, sizeof(why), "out of memory");
			goto refuse;
		}
	}

	struct client *c;
	status = client_create(d, j, req, cred.pid, cred.uid, &c);
	if (status) {
		snprintf(why, sizeof(why), "cannot create shared regions: %s", strerror(-status));
		if (j->live == 0 && j->known == 0)
			job_unlink_free(d, j);
		goto refuse;
	}
	status = reg_register(d, c, why, sizeof(why));
	if (status) {
		client_free_regions(c);
		if (j->live == 0 && j->known == 0)
			job_unlink_free(d, j);
		goto refuse;
	}
	c->conn = cn;
	cn->client = c;
	c->ctl_next = d->clients;
	d->clients = c;
	d->nclients++;
	j->node_of[c->rank] = d->net.self;
	j->rank_nonce[c->rank] = c->nonce;
	j->known++;
	j->attached++;
	j->live++;
	STAT_INC(&d->cst, attaches);
	hlog_debug("job %s: rank %d/%d attached (pid %d uid %u)", j->key, c->rank, j->size,
		   (int)c->pid, (unsigned)c->uid);
	hoist__attach_request__free_unpacked(req, NULL);
	c->handed_over = 1;
	if (cmdq_push(&d->to_progress, CMD_CLIENT_ADD, c))
		hlog_err("out of memory handing over job %s rank %d", j->key, c->rank);
	job_announce(d, j, -1, MEMBER_WANT_REPLY);
	job_check_ready(d, j);
	if (!c->replied && reply_accepted(d, c))
		hlog_warn("job %s rank %d: sending the accepted answer failed", j->key, c->rank);
	return 0;

refuse:
	hlog_info("attach refused (pid %d, job %s, rank %d): %s", (int)cred.pid,
		  req->job_key ? req->job_key : "?", req->rank, why);
	hoist__attach_request__free_unpacked(req, NULL);
	reply_error(d, cn->fd, status, why);
	return status;
}

void attach_conn_closed(struct daemon *d, struct conn *cn)
{
	struct client *c = cn->client;
	if (!c)
		return;
	cn->client = NULL;
	c->conn = NULL;
	c->clean_detach = (hoist_load_relaxed(&c->ctrl->cq_flags) & HOIST_CQ_DETACHED) != 0;
	if (c->clean_detach)
		STAT_INC(&d->cst, detaches);
	else if (!c->replied || c->job->ready) {
		STAT_INC(&d->cst, client_deaths);
		hlog_info("job %s rank %d (pid %d) vanished without finalizing; reclaiming",
			  c->job->key, c->rank, (int)c->pid);
	}
	struct job *j = c->job;
	if (j->ready && ++j->hung_up == j->attached) {
		/* the job is over here: a new job may take its key at once; this
		 * one is freed when the progress thread returns its clients */
		job_end(d, j);
	}
	if (!c->replied && !j->error_sent) {
		/* died while its job assembled: the job cannot start */
		char why[160];
		snprintf(why, sizeof(why), "rank %d (pid %d) died before the job assembled", c->rank,
			 (int)c->pid);
		c->replied = 1;
		job_refuse_waiting(d, j, -ECONNRESET, why);
	}
	if (cmdq_push(&d->to_progress, CMD_CLIENT_GONE, c))
		hlog_err("out of memory retiring client %llu", (unsigned long long)c->id);
}

/*
 * Node-local direct access: a client asks for the symmetric heaps of PEs of
 * its own job that are attached here (hoist_ptr maps them). The request
 * comes on the client's attach connection, so the daemon knows who asks;
 * it names the job anyway, and a request for another job's heaps is
 * refused. Every rank is answered on its own (out of range, on another
 * node, gone), a malformed request as a whole, and the connection stays
 * open either way: a bad request costs the client an error, not its job.
 */
static int peers_reply(struct daemon *d, int fd, int status, const char *why,
		       Hoist__PeerSegment **segs, size_t nsegs, const int *fds, int nfds)
{
	Hoist__PeersReply rep = HOIST__PEERS_REPLY__INIT;
	rep.status = status;
	rep.error = (char *)why;
	rep.peers = segs;
	rep.n_peers = nsegs;
	if (status)
		STAT_INC(&d->cst, peer_refused);
	size_t n = hoist__peers_reply__get_packed_size(&rep);
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		return -ENOMEM;
	hoist__peers_reply__pack(&rep, buf);
	int rc = control_send(fd, buf, n, fds, nfds);
	free(buf);
	if (rc == 0)
		STAT_ADD(&d->cst, peer_heaps_sent, (uint64_t)nfds);
	return rc;
}

static struct client *job_local_client(struct daemon *d, const struct job *j, int32_t rank)
{
	for (struct client *p = d->clients; p; p = p->ctl_next)
		if (p->job == j && p->rank == rank)
			return p;
	return NULL;
}

int peers_handle(struct daemon *d, struct conn *cn, const void *msg, size_t len)
{
	struct client *c = cn->client;
	struct job *j = c->job;
	char why[200];
	int status;
	STAT_INC(&d->cst, peer_requests);
	Hoist__PeersRequest *req = len ? hoist__peers_request__unpack(NULL, len, msg) : NULL;
	if (!req) {
		status = -EPROTO;
		snprintf(why, sizeof(why), "malformed PeersRequest");
		goto refuse;
	}
	if (req->abi_version != HOIST_ABI_VERSION) {
		status = -EPROTO;
		snprintf(why, sizeof(why), "ABI version %u, daemon speaks %u", req->abi_version,
			 HOIST_ABI_VERSION);
		goto refuse;
	}
	if (!c->replied || !j->ready) {
		status = -EAGAIN;
		snprintf(why, sizeof(why), "the job has not started");
		goto refuse;
	}
	if (!req->job_key || strcmp(req->job_key, j->key) != 0) {
		status = -EACCES;
		snprintf(why, sizeof(why), "rank %d of job %.100s asked for the heaps of another job",
			 c->rank, j->key);
		goto refuse;
	}
	if (req->n_ranks == 0 || req->n_ranks > HOIST_PEERS_MAX) {
		status = -EINVAL;
		snprintf(why, sizeof(why), "%zu ranks requested, 1 to %u allowed", req->n_ranks,
			 HOIST_PEERS_MAX);
		goto refuse;
	}

	size_t n = req->n_ranks;
	Hoist__PeerSegment *seg = calloc(n, sizeof(*seg));
	Hoist__PeerSegment **segp = calloc(n, sizeof(*segp));
	int *fds = calloc(n, sizeof(*fds));
	if (!seg || !segp || !fds) {
		free(seg);
		free(segp);
		free(fds);
		status = -ENOMEM;
		snprintf(why, sizeof(why), "out of memory");
		goto refuse;
	}
	int nfds = 0;
	for (size_t i = 0; i < n; i++) {
		int32_t r = req->ranks[i];
		hoist__peer_segment__init(&seg[i]);
		segp[i] = &seg[i];
		seg[i].rank = r;
		struct client *p = NULL;
		if (r < 0 || r >= j->size)
			seg[i].status = -EINVAL;
		else if (j->node_of[r] != d->net.self)
			seg[i].status = -EREMOTE; /* another node: no direct access */
		else if (!(p = job_local_client(d, j, r)) || !p->conn || p->heap.fd < 0)
			seg[i].status = -ECONNRESET; /* it left (or died) */
		if (seg[i].status) {
			STAT_INC(&d->cst, peer_refused);
			continue;
		}
		seg[i].heap_bytes = p->heap.bytes;
		fds[nfds++] = p->heap.fd;
	}
	hoist__peers_request__free_unpacked(req, NULL);
	int rc = peers_reply(d, cn->fd, 0, "", segp, n, fds, nfds);
	free(seg);
	free(segp);
	free(fds);
	return rc;

refuse:
	hlog_info("peers request of job %s rank %d (pid %d) refused: %s", j->key, c->rank,
		  (int)c->pid, why);
	if (req)
		hoist__peers_request__free_unpacked(req, NULL);
	peers_reply(d, cn->fd, status, why, NULL, 0, NULL, 0);
	return status;
}
