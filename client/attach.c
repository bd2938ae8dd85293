/*
 * hoist_init / hoist_finalize: attach to this node's hoistd over its Unix
 * socket, receive the shared regions (fds by SCM_RIGHTS) and map them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "hoist.pb-c.h"
#include "hoist_verify.h"
#include "internal.h"
#include "symdata.h"

static char error_detail[512];

HOIST_API const char *hoist_error_detail(void)
{
	return error_detail;
}

/* The reply lists the node's ranks of the job: room for tens of thousands */
#define REPLY_MAX (256u * 1024u)

/* The final reply may wait for the whole job: the daemon's job_timeout_ms
 * (sent in its first answer) plus this much, for a loaded node. */
#define FINAL_MARGIN_MS 5000

/* Receive an AttachReply and up to 5 fds within timeout_ms. */
static int recv_reply(int fd, Hoist__AttachReply **out, int fds[5], int *nfds, int timeout_ms)
{
	uint8_t *buf = malloc(REPLY_MAX);
	if (!buf)
		return -ENOMEM;
	struct iovec iov = {.iov_base = buf, .iov_len = REPLY_MAX};
	union {
		char b[CMSG_SPACE(5 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			    .msg_controllen = sizeof(u.b)};
	ssize_t n = hoist_recvmsg_deadline(fd, &mh, MSG_CMSG_CLOEXEC, timeout_ms);
	*nfds = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); n > 0 && cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			if (k > 5)
				k = 5;
			memcpy(fds, CMSG_DATA(cm), (size_t)k * sizeof(int));
			*nfds = k;
		}
	}
	int rc = 0;
	if (n < 0)
		rc = (int)n;
	else if (n == 0)
		rc = -ECONNRESET;
	else if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		rc = -EPROTO;
	else if (!(*out = hoist__attach_reply__unpack(NULL, (size_t)n, buf)))
		rc = -EPROTO;
	free(buf);
	return rc;
}

/* The attach reply: the daemon's first answer within reply_ms, and when
 * that says "accepted, waiting for the job", the final one within its
 * job_timeout_ms plus a margin. Every failure leaves a detail. */
static int attach_reply(int fd, const char *dir, int reply_ms, Hoist__AttachReply **out, int fds[5],
			int *nfds)
{
	int rc = recv_reply(fd, out, fds, nfds, reply_ms);
	if (rc == -ETIMEDOUT)
		snprintf(error_detail, sizeof(error_detail),
			 "hoistd in %s did not answer the attach request within %d ms "
			 "(HOIST_ATTACH_TIMEOUT_MS): it is hung, or not a hoistd",
			 dir, reply_ms);
	if (rc || !(*out)->accepted)
		goto out;
	if (*nfds || (*out)->status || (*out)->abi_version != HOIST_ABI_VERSION) {
		rc = -EPROTO;
		goto out;
	}
	int final_ms = (int)(*out)->job_timeout_ms + FINAL_MARGIN_MS;
	if ((*out)->job_timeout_ms > 24u * 3600u * 1000u)
		final_ms = 24 * 3600 * 1000;
	hoist__attach_reply__free_unpacked(*out, NULL);
	*out = NULL;
	rc = recv_reply(fd, out, fds, nfds, final_ms);
	if (rc == -ETIMEDOUT)
		snprintf(error_detail, sizeof(error_detail),
			 "hoistd in %s accepted the attach but sent no final reply within its "
			 "job_timeout_ms + %d ms (%d ms): it is hung",
			 dir, FINAL_MARGIN_MS, final_ms);
	if (rc == 0 && (*out)->accepted)
		rc = -EPROTO;
out:
	if (rc == -ECONNRESET)
		snprintf(error_detail, sizeof(error_detail),
			 "hoistd in %s closed the connection without a reply", dir);
	else if (rc == -EPROTO && !error_detail[0])
		snprintf(error_detail, sizeof(error_detail),
			 "malformed or unexpected attach reply from hoistd in %s", dir);
	return rc;
}

/* populate: map every page writable now (the ring and the staging arena,
 * which every client goes through page by page: the first pass through
 * staging cost 3x the later ones per staged 4 KiB get on a paravirtualised
 * machine, page faults and their TLB flushes; issue 16). A kernel before
 * 5.14 refuses MADV_POPULATE_WRITE: the pages fault on first use then. */
static void *map_fd(int fd, size_t bytes, int populate)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (populate)
		(void)madvise(p, bytes, MADV_POPULATE_WRITE);
	return p;
}

static void ctx_release(struct hoist_ctx *c, uint64_t staging_bytes)
{
	hoist__nc_release(c);
	free(c->nb_in);
	c->nb_in = NULL;
	hoist__peers_release(c); /* pointers from hoist_ptr die here */
	if (c->ring.ctrl)
		munmap(c->ring.ctrl, c->ring_bytes);
	if (c->staging_base)
		munmap(c->staging_base, staging_bytes);
	if (c->heap_base)
		munmap(c->heap_base, c->heap_bytes);
	if (c->pf_table)
		munmap(c->pf_table, c->pf_region_bytes);
	staging_fini(&c->stage);
	symheap_fini(&c->heap);
	free(c->ops);
	free(c->agg_lo);
	free(c->agg_hi);
	if (c->ring.doorbell >= 0)
		close(c->ring.doorbell);
	if (c->sock >= 0)
		close(c->sock);
	memset(c, 0, sizeof(*c));
	c->sock = c->ring.doorbell = -1;
}

HOIST_API int hoist_init(void)
{
	return hoist_init_with(0);
}

HOIST_API int hoist_init_with(unsigned flags)
{
	struct hoist_ctx *c = &hoist__g;
	if (flags & ~HOIST_INIT_SYMMETRIC_DATA)
		return -EINVAL;
	if (c->initialized) /* symmetric data cannot be added afterwards */
		return (flags & HOIST_INIT_SYMMETRIC_DATA) && !c->data_len ? -EINVAL : 0;
	memset(c, 0, sizeof(*c));
	c->sock = c->ring.doorbell = -1;
	error_detail[0] = 0;

	struct hoist_env env;
	int rc = hoist__env_read(&env, error_detail, sizeof(error_detail));
	if (rc)
		return rc;
	if (env.symmetric_data)
		flags |= HOIST_INIT_SYMMETRIC_DATA;
	/* symmetric data: the heap file grows by the data segment, at
	 * data_off (after the heap proper, page aligned; the same on every PE
	 * running the same executable with the same HOIST_HEAP_SIZE), and one
	 * page more that holds the wake line (hoist_shm.h) */
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uintptr_t data_lo = 0;
	size_t data_len = 0;
	uint64_t data_off = 0, req_heap = env.heap_bytes;
	if (flags & HOIST_INIT_SYMMETRIC_DATA) {
		if ((rc = symdata_find(&data_lo, &data_len))) {
			snprintf(error_detail, sizeof(error_detail),
				 "HOIST_INIT_SYMMETRIC_DATA: %s",
				 rc == -ENOTSUP ? "the executable has more than one writable segment"
						: "the executable has no writable data segment");
			return rc;
		}
		data_off = (env.heap_bytes + page - 1) & ~(page - 1);
		req_heap = data_off + data_len + page;
	}
	/* nothing is sent to a daemon that is not root's or our own */
	int fd = hoist_verify_connect(env.runtime_dir, "hoistd.sock", env.reply_timeout_ms,
				      error_detail, sizeof(error_detail));
	if (fd < 0)
		return fd;
	c->sock = fd;
	c->reply_timeout_ms = env.reply_timeout_ms;

	Hoist__AttachRequest req = HOIST__ATTACH_REQUEST__INIT;
	req.abi_version = HOIST_ABI_VERSION;
	req.job_key = env.job;
	req.rank = env.rank;
	req.size = env.size;
	req.pid = getpid();
	req.heap_bytes = req_heap;
	req.blocking = !env.auto_overlap;
	uint8_t buf[512];
	size_t n = hoist__attach_request__get_packed_size(&req);
	if (n > sizeof(buf)) {
		ctx_release(c, 0);
		return -EINVAL;
	}
	hoist__attach_request__pack(&req, buf);
	ssize_t w;
	do
		w = send(fd, buf, n, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)n) {
		rc = w < 0 ? (errno == EAGAIN ? -ETIMEDOUT : -errno) : -EIO;
		snprintf(error_detail, sizeof(error_detail), "sending the attach request to %s: %s",
			 env.runtime_dir, strerror(-rc));
		ctx_release(c, 0);
		return rc;
	}
	Hoist__AttachReply *rep = NULL;
	int fds[5] = {-1, -1, -1, -1, -1}, nfds = 0;
	rc = attach_reply(fd, env.runtime_dir, env.reply_timeout_ms, &rep, fds, &nfds);
	if (rc == 0 && rep->status != 0) {
		rc = rep->status < 0 ? rep->status : -EPROTO;
		/* a job that did not assemble: most often ranks that did not
		 * agree on the key, so say where ours came from */
		char sym[200] = "";
		if (flags & HOIST_INIT_SYMMETRIC_DATA)
			/* the daemon compares the heap sizes of the ranks and
			 * its max_heap_bytes: say what ours is made of */
			snprintf(sym, sizeof(sym),
				 " [symmetric data: this rank asked for HOIST_HEAP_SIZE rounded to "
				 "%llu + its executable's %zu bytes of writable data + %llu; every "
				 "PE must run the same executable with symmetric data on]",
				 (unsigned long long)data_off, data_len, (unsigned long long)page);
		snprintf(error_detail, sizeof(error_detail), "%s%s%s%s%s%s%s",
			 rep->error ? rep->error : "", rc == -ETIMEDOUT ? " [this rank's job key '" : "",
			 rc == -ETIMEDOUT ? env.job : "", rc == -ETIMEDOUT ? "' came from " : "",
			 rc == -ETIMEDOUT ? env.job_from : "", rc == -ETIMEDOUT ? "]" : "", sym);
	}
	if (rc == 0 && (nfds != (rep->pf_region_bytes ? 5 : 4) || rep->abi_version != HOIST_ABI_VERSION))
		rc = -EPROTO;
	uint64_t staging_bytes = 0;
	if (rc == 0) {
		c->ring_bytes = rep->ring_bytes;
		staging_bytes = rep->staging_bytes;
		c->heap_bytes = rep->heap_bytes;
		c->ring.ctrl = map_fd(fds[0], c->ring_bytes, 1);
		c->staging_base = map_fd(fds[1], staging_bytes, 1);
		c->heap_base = map_fd(fds[2], c->heap_bytes, 0);
		c->ring.doorbell = fds[3];
		fds[3] = -1;
		if (!c->ring.ctrl || !c->staging_base || !c->heap_base)
			rc = -ENOMEM;
		if (rc == 0 && rep->pf_region_bytes) {
			if (hoist_pf_arena_off(rep->pf_slots) >= rep->pf_region_bytes) {
				rc = -EPROTO;
			} else {
				/* read-only: only the slot states are ours to write */
				c->pf_region_bytes = rep->pf_region_bytes;
				c->pf_table = map_fd(fds[4], rep->pf_region_bytes, 0);
				if (!c->pf_table)
					rc = -ENOMEM;
				else {
					c->pf_slots = rep->pf_slots;
					c->pf_arena = (char *)c->pf_table + hoist_pf_arena_off(rep->pf_slots);
				}
			}
		}
	}
	if (rc == 0 && c->heap_bytes != req_heap && (flags & HOIST_INIT_SYMMETRIC_DATA))
		rc = -EPROTO; /* the data would not be where every PE puts it */
	if (rc == 0) {
		struct hoist_ctrl *ctrl = c->ring.ctrl;
		if (ctrl->magic != HOIST_SHM_MAGIC || ctrl->abi_version != HOIST_ABI_VERSION ||
		    !hoist_is_pow2(ctrl->sq_entries) || !hoist_is_pow2(ctrl->cq_entries) ||
		    hoist_ring_bytes(ctrl->sq_entries, ctrl->cq_entries) > c->ring_bytes ||
		    ctrl->staging_bytes != staging_bytes || ctrl->heap_bytes != c->heap_bytes)
			rc = -EPROTO;
	}
	if (rc == 0) {
		struct hoist_ctrl *ctrl = c->ring.ctrl;
		c->rank = ctrl->rank;
		c->size = ctrl->size;
		c->spin_us = env.spin_set ? env.spin_us : rep->spin_us;
		c->auto_overlap = env.auto_overlap;
		c->direct = env.direct;
		c->wait_poll_ms = env.wait_poll_ms;
		c->yield_long_us = env.yield_long_us;
		c->no_cpu_handoff = !env.cpu_handoff;
		snprintf(c->job_key, sizeof(c->job_key), "%s", env.job);
		c->ring.sq = hoist_ctrl_sq(ctrl);
		c->ring.cq = hoist_ctrl_cq(ctrl);
		c->ring.sq_mask = ctrl->sq_entries - 1;
		c->ring.cq_mask = ctrl->cq_entries - 1;
		c->nops = ctrl->cq_entries / 2;
		c->ops = calloc(c->nops + 1, sizeof(*c->ops)); /* +1: quiet's own */
		/* the heap proper: without symmetric data all of the file but
		 * its last line, the wake line (hoist_shm.h); with it, the part
		 * before the data */
		c->heap_user = data_len ? data_off : c->heap_bytes;
		if (!c->ops || staging_init(&c->stage, staging_bytes, ctrl->sq_entries * 2) ||
		    symheap_init(&c->heap, data_len ? data_off : c->heap_bytes - HOIST_HEAP_WAKE_BYTES))
			rc = -ENOMEM;
		if (rc == 0)
			rc = hoist__peers_init(c, rep->local_ranks, rep->n_local_ranks);
		/* before any barrier: the node collectives' agreement (nodecoll.c) */
		if (rc == 0)
			__atomic_store_n(&hoist_heap_wake_of(c->heap_base, c->heap_bytes)->direct,
					 (uint32_t)c->direct, __ATOMIC_RELEASE);
	}
	if (rep)
		hoist__attach_reply__free_unpacked(rep, NULL);
	/* last, when nothing can fail any more: the data segment moves into
	 * the heap file (in a statically linked program hoist__g itself is in
	 * it, so c is set up before and not touched until the move is done) */
	if (rc == 0 && data_len) {
		c->data_lo = data_lo;
		c->data_len = data_len;
		c->data_off = data_off;
		rc = symdata_move(data_lo, data_len, fds[2], data_off);
		if (rc) {
			c->data_len = 0;
			snprintf(error_detail, sizeof(error_detail),
				 "HOIST_INIT_SYMMETRIC_DATA: mapping the heap file over the data segment "
				 "(%zu bytes): %s", data_len, strerror(-rc));
		}
	}
	for (int i = 0; i < 5; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (rc) {
		ctx_release(c, staging_bytes);
		return rc;
	}
	c->initialized = 1;
	/* Symmetric data: no PE returns before every PE has moved its data.
	 * A put to a PE that had not yet moved would land in the heap file
	 * and be overwritten by the copy of the segment. */
	if (data_len && (rc = hoist_barrier())) {
		snprintf(error_detail, sizeof(error_detail),
			 "HOIST_INIT_SYMMETRIC_DATA: the barrier after moving the data segment "
			 "failed: %s", hoist_strerror(rc));
		ctx_release(c, staging_bytes);
		symdata_restore(data_lo, data_len);
		return rc;
	}
	return 0;
}

HOIST_API int hoist_finalize(void)
{
	struct hoist_ctx *c = &hoist__g;
	if (!c->initialized)
		return -ENOTCONN;
	int rc = hoist_quiet();
	/* everyone's last puts must land before anyone unmaps its heap */
	int brc = c->barrier_pending ? hoist_barrier_wait() : hoist_barrier();
	/* a node barrier returns before the daemon counted it: a PE that
	 * detached now would fail the daemon's barrier (sync.c) */
	if (!brc && c->nb_line)
		brc = hoist__wait_epoch(c, c->barrier_target);
	if (!rc)
		rc = brc;
	/* tell the daemon this hang-up is a clean detach, not a death */
	uint32_t f = hoist_load_relaxed(&c->ring.ctrl->cq_flags);
	hoist_store_release(&c->ring.ctrl->cq_flags, f | HOIST_CQ_DETACHED);
	uint64_t staging_bytes = c->stage.size;
	uintptr_t data_lo = c->data_lo;
	size_t data_len = c->data_len;
	ctx_release(c, staging_bytes);
	/* the data segment becomes private memory again, with its contents:
	 * stores of other PEs stop reaching it, a later hoist_init_with
	 * moves it again. If that fails it stays in the heap file, which
	 * stays valid memory (a sealed memfd: never shrinks) */
	if (data_len) {
		int drc = symdata_restore(data_lo, data_len);
		if (!rc)
			rc = drc;
	}
	return rc;
}
