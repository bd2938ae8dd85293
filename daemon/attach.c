/*
 * Attach protocol (control thread). A client sends one AttachRequest. We
 * check its credentials (SO_PEERCRED), create its regions as sealed memfds,
 * and park it in its job until every rank attached; then every rank gets
 * its AttachReply with the fds (SCM_RIGHTS) and the job is handed to the
 * progress thread. A job that does not assemble within job_timeout_ms
 * fails every waiting rank with -ETIMEDOUT.
 */
#include "daemon.h"

#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "control.h"
#include "hoist.pb-c.h"
#include "log.h"

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

static int reply_ok(struct daemon *d, struct client *c)
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
	rep.nfds = 4;
	uint8_t buf[256];
	size_t n = hoist__attach_reply__get_packed_size(&rep);
	hoist__attach_reply__pack(&rep, buf);
	int fds[4] = {c->ring.fd, c->staging.fd, c->heap.fd, d->doorbell_fd};
	int rc = control_send(c->conn->fd, buf, n, fds, 4);
	/* the client holds its own references now (or failed to) */
	region_close_fd(&c->ring);
	region_close_fd(&c->staging);
	region_close_fd(&c->heap);
	return rc;
}

static struct job *job_find(struct daemon *d, const char *key)
{
	for (struct job *j = d->jobs; j; j = j->ctl_next)
		if (strcmp(j->key, key) == 0)
			return j;
	return NULL;
}

static void job_unlink_free(struct daemon *d, struct job *j)
{
	struct job **pp = &d->jobs;
	while (*pp && *pp != j)
		pp = &(*pp)->ctl_next;
	if (*pp)
		*pp = j->ctl_next;
	if (j->timer)
		event_free(j->timer);
	free(j->pe);
	free(j);
}

void client_free(struct daemon *d, struct client *c)
{
	struct client **pp = &d->clients;
	while (*pp && *pp != c)
		pp = &(*pp)->ctl_next;
	if (*pp)
		*pp = c->ctl_next;
	d->nclients--;
	stats_sum_client(&d->retired, &c->st);
	if (c->conn)
		c->conn->client = NULL;
	struct job *j = c->job;
	region_destroy(&c->ring);
	region_destroy(&c->staging);
	region_destroy(&c->heap);
	free(c);
	if (j && --j->live == 0)
		job_unlink_free(d, j);
}

/* A parked (not yet started) client leaves its job. */
static void unpark(struct daemon *d, struct client *c)
{
	struct job *j = c->job;
	j->pe[c->rank] = NULL;
	j->attached--;
	client_free(d, c);
}

static void job_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct job *j = arg;
	struct daemon *d = j->d;
	(void)fd;
	(void)what;
	hlog_warn("job %s: only %d of %d ranks attached within %llu ms", j->key, j->attached,
		  j->size, (unsigned long long)d->cfg.job_timeout_ms);
	STAT_INC(&d->cst, jobs_timed_out);
	char why[160];
	snprintf(why, sizeof(why), "job did not assemble: %d of %d ranks attached within %llu ms",
		 j->attached, j->size, (unsigned long long)d->cfg.job_timeout_ms);
	/* unparking the last rank frees the job: collect the ranks first */
	int32_t n = 0, size = j->size;
	struct client **parked = calloc((size_t)size, sizeof(*parked));
	if (!parked)
		return;
	for (int32_t r = 0; r < size; r++)
		if (j->pe[r])
			parked[n++] = j->pe[r];
	for (int32_t i = 0; i < n; i++) {
		struct conn *cn = parked[i]->conn;
		reply_error(d, cn->fd, -ETIMEDOUT, why);
		unpark(d, parked[i]);
		conn_close(cn);
	}
	free(parked);
}

static void job_start(struct daemon *d, struct job *j)
{
	if (j->timer) {
		event_free(j->timer);
		j->timer = NULL;
	}
	j->started = 1;
	STAT_INC(&d->cst, jobs_started);
	hlog_info("job %s: all %d ranks attached", j->key, j->size);
	/* Hand the job over first, so that no rank can post before its peers
	 * are routable. */
	for (int32_t r = 0; r < j->size; r++)
		j->pe[r]->handed_over = 1;
	if (cmdq_push(&d->to_progress, CMD_JOB_START, j)) {
		hlog_err("out of memory starting job %s", j->key);
		return;
	}
	for (int32_t r = 0; r < j->size; r++) {
		struct client *c = j->pe[r];
		if (reply_ok(d, c))
			hlog_warn("job %s rank %d: sending the attach reply failed", j->key, r);
	}
}

static int client_create(struct daemon *d, struct job *j, const Hoist__AttachRequest *req,
			 pid_t pid, uid_t uid, struct client **out)
{
	struct client *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->id = ++d->next_id;
	c->job = j;
	c->rank = req->rank;
	c->pid = pid;
	c->uid = uid;
	c->sq_entries = (uint32_t)d->cfg.sq_entries;
	c->cq_entries = (uint32_t)d->cfg.cq_entries;
	c->sq_mask = c->sq_entries - 1;
	c->cq_mask = c->cq_entries - 1;
	c->ring.fd = c->staging.fd = c->heap.fd = -1;
	char name[64];
	int rc;
	snprintf(name, sizeof(name), "hoist-ring-%d", (int)pid);
	if ((rc = region_create(&c->ring, name, hoist_ring_bytes(c->sq_entries, c->cq_entries))))
		goto fail;
	snprintf(name, sizeof(name), "hoist-staging-%d", (int)pid);
	if ((rc = region_create(&c->staging, name, d->cfg.staging_bytes)))
		goto fail;
	snprintf(name, sizeof(name), "hoist-heap-%d", (int)pid);
	if ((rc = region_create(&c->heap, name, req->heap_bytes)))
		goto fail;

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
	region_destroy(&c->ring);
	region_destroy(&c->staging);
	region_destroy(&c->heap);
	free(c);
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

	struct job *j = job_find(d, req->job_key);
	if (j) {
		if (j->uid != cred.uid) {
			status = -EACCES;
			snprintf(why, sizeof(why), "job %s belongs to uid %u", j->key, (unsigned)j->uid);
			goto refuse;
		}
		if (j->started) {
			status = -EADDRINUSE;
			snprintf(why, sizeof(why), "job %s is already running", j->key);
			goto refuse;
		}
		if (j->size != req->size || j->heap_bytes != req->heap_bytes) {
			status = -EINVAL;
			snprintf(why, sizeof(why), "job %s: size/heap differ from rank 0's (%d, %llu)",
				 j->key, j->size, (unsigned long long)j->heap_bytes);
			goto refuse;
		}
		if (j->pe[req->rank]) {
			status = -EADDRINUSE;
			snprintf(why, sizeof(why), "job %s: rank %d is already attached", j->key, req->rank);
			goto refuse;
		}
	} else {
		j = calloc(1, sizeof(*j));
		if (j)
			j->pe = calloc((size_t)req->size, sizeof(*j->pe));
		if (!j || !j->pe) {
			if (j)
				free(j);
			status = -ENOMEM;
			snprintf(why, sizeof(why), "out of memory");
			goto refuse;
		}
		j->id = ++d->next_id;
		j->d = d;
		snprintf(j->key, sizeof(j->key), "%s", req->job_key);
		j->uid = cred.uid;
		j->size = req->size;
		j->heap_bytes = req->heap_bytes;
		j->ctl_next = d->jobs;
		d->jobs = j;
		if (j->size > 1) {
			j->timer = evtimer_new(d->base, job_timeout_cb, j);
			struct timeval tv = {
				.tv_sec = (time_t)(d->cfg.job_timeout_ms / 1000),
				.tv_usec = (suseconds_t)((d->cfg.job_timeout_ms % 1000) * 1000),
			};
			if (j->timer)
				evtimer_add(j->timer, &tv);
		}
	}

	struct client *c;
	status = client_create(d, j, req, cred.pid, cred.uid, &c);
	if (status) {
		snprintf(why, sizeof(why), "cannot create shared regions: %s", strerror(-status));
		if (j->live == 0)
			job_unlink_free(d, j);
		goto refuse;
	}
	c->conn = cn;
	cn->client = c;
	c->ctl_next = d->clients;
	d->clients = c;
	d->nclients++;
	j->pe[c->rank] = c;
	j->attached++;
	j->live++;
	STAT_INC(&d->cst, attaches);
	hlog_debug("job %s: rank %d/%d attached (pid %d uid %u)", j->key, c->rank, j->size,
		   (int)c->pid, (unsigned)c->uid);
	hoist__attach_request__free_unpacked(req, NULL);
	if (j->attached == j->size)
		job_start(d, j);
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
	else {
		STAT_INC(&d->cst, client_deaths);
		hlog_info("job %s rank %d (pid %d) vanished without finalizing; reclaiming",
			  c->job->key, c->rank, (int)c->pid);
	}
	if (!c->handed_over) {
		unpark(d, c);
		return;
	}
	if (cmdq_push(&d->to_progress, CMD_CLIENT_GONE, c))
		hlog_err("out of memory retiring client %llu", (unsigned long long)c->id);
}
