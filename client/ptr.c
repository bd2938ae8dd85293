/*
 * Node-local direct access: hoist_ptr() and the peer heaps behind it.
 *
 * The attach reply lists the ranks of the job attached to the same daemon
 * (every local rank has attached by then: the reply waits until every rank
 * of the job is known). Their heaps are sealed memfds the daemon keeps; the
 * first hoist_ptr() to a peer (or the first put/get that goes direct) asks
 * the daemon for that one heap on the attach connection (PeersRequest, its
 * fd by SCM_RIGHTS) and maps it MAP_SHARED read-write. One rank per
 * request: nothing is mapped that the program does not use, and no message
 * comes near the 253-fd limit of SCM_RIGHTS. Mappings stay until
 * hoist_finalize().
 *
 * A peer that dies: its memfd lives on as long as a mapping of it does, and
 * it is sealed against shrinking, so the mapping stays valid memory (loads
 * and stores go to a heap nobody else reads; no SIGBUS). A peer that had
 * already left when we asked is answered with an error: hoist_ptr() returns
 * NULL for it from then on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hoist.pb-c.h"
#include "hoist_futex.h"
#include "hoist_verify.h"
#include "internal.h"

int hoist__peers_init(struct hoist_ctx *c, const int32_t *ranks, size_t n)
{
	c->peers = NULL;
	c->npeers = 0;
	if (n == 0)
		return 0; /* an older daemon: only the own PE is reachable */
	if (n > (size_t)c->size)
		return -EPROTO;
	struct hoist_peer *p = calloc(n, sizeof(*p));
	if (!p)
		return -ENOMEM;
	int self = 0;
	for (size_t i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= c->size || (i && ranks[i] <= ranks[i - 1])) {
			free(p);
			return -EPROTO;
		}
		p[i].rank = ranks[i];
		if (ranks[i] == c->rank) {
			p[i].state = 1;
			p[i].base = c->heap_base;
			self = 1;
		}
	}
	if (!self) {
		free(p);
		return -EPROTO;
	}
	c->peers = p;
	c->npeers = (uint32_t)n;
	c->peers_contig = ranks[n - 1] - ranks[0] == (int32_t)(n - 1);
	return 0;
}

void hoist__peers_release(struct hoist_ctx *c)
{
	for (uint32_t i = 0; i < c->npeers; i++)
		if (c->peers[i].state == 1 && c->peers[i].rank != c->rank)
			munmap(c->peers[i].base, c->heap_bytes);
	free(c->peers);
	c->peers = NULL;
	c->npeers = 0;
}

/* One PeersReply and its fds (at most HOIST_PEERS_MAX), within timeout_ms
 * (the daemon answers at once; one that does not is hung: -ETIMEDOUT). */
static int recv_peers(int fd, Hoist__PeersReply **out, int *fds, int *nfds, int timeout_ms)
{
	uint8_t buf[8192];
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	union {
		char b[CMSG_SPACE(HOIST_PEERS_MAX * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			    .msg_controllen = sizeof(u.b)};
	ssize_t n = hoist_recvmsg_deadline(fd, &mh, MSG_CMSG_CLOEXEC, timeout_ms);
	*nfds = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); n > 0 && cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			if (*nfds + k > (int)HOIST_PEERS_MAX)
				k = (int)HOIST_PEERS_MAX - *nfds;
			memcpy(fds + *nfds, CMSG_DATA(cm), (size_t)k * sizeof(int));
			*nfds += k;
		}
	}
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ECONNRESET;
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return -EPROTO;
	*out = hoist__peers_reply__unpack(NULL, (size_t)n, buf);
	return *out ? 0 : -EPROTO;
}

/* Ask the daemon for p's heap and map it. The library is single-threaded
 * and the daemon answers every request with exactly one datagram, so the
 * attach socket holds nothing afterwards (an unread datagram would read as
 * the daemon's death in hoist__check_daemon; so does an answer that comes
 * after the deadline: a daemon that hung that long counts as gone).
 * 0 or -errno, kept in p. */
int hoist__peer_map(struct hoist_ctx *c, struct hoist_peer *p)
{
	if (p->state)
		return p->state > 0 ? 0 : p->state;
	Hoist__PeersRequest req = HOIST__PEERS_REQUEST__INIT;
	int32_t rank = p->rank;
	req.abi_version = HOIST_ABI_VERSION;
	req.job_key = c->job_key;
	req.n_ranks = 1;
	req.ranks = &rank;
	uint8_t buf[512];
	size_t n = hoist__peers_request__get_packed_size(&req);
	if (n > sizeof(buf))
		return p->state = -EINVAL;
	hoist__peers_request__pack(&req, buf);
	ssize_t w;
	do
		w = send(c->sock, buf, n, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)n)
		return p->state = (w < 0 ? -errno : -EIO);

	Hoist__PeersReply *rep = NULL;
	int fds[HOIST_PEERS_MAX], nfds = 0;
	int rc = recv_peers(c->sock, &rep, fds, &nfds, c->reply_timeout_ms);
	if (rc == 0 && rep->status)
		rc = rep->status < 0 ? rep->status : -EPROTO;
	if (rc == 0 && (rep->n_peers != 1 || rep->peers[0]->rank != rank))
		rc = -EPROTO;
	if (rc == 0 && rep->peers[0]->status)
		rc = rep->peers[0]->status < 0 ? rep->peers[0]->status : -EPROTO;
	if (rc == 0 && (nfds != 1 || rep->peers[0]->heap_bytes != c->heap_bytes))
		rc = -EPROTO; /* every PE of a job has the same heap size */
	if (rc == 0) {
		void *m = mmap(NULL, c->heap_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
		if (m == MAP_FAILED)
			rc = -errno;
		else
			p->base = m;
	}
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	if (rep)
		hoist__peers_reply__free_unpacked(rep, NULL);
	p->state = rc ? rc : 1;
	return rc;
}

HOIST_API void *hoist_ptr(const void *sym_addr, int pe)
{
	struct hoist_ctx *c = &hoist__g;
	if (!c->initialized || pe < 0 || pe >= c->size)
		return NULL;
	uint64_t off;
	if (hoist__sym_off(c, sym_addr, 1, &off))
		return NULL;
	if (pe == c->rank)
		return (void *)sym_addr;
	struct hoist_peer *p = hoist__peer_find(c, pe);
	if (!p || hoist__peer_map(c, p))
		return NULL;
	return p->base + off; /* static data: the peer's copy at the same file offset */
}

void hoist__heap_touched(struct hoist_ctx *c, int pe)
{
	char *base = c->heap_base;
	if (pe != c->rank) {
		struct hoist_peer *p = hoist__peer_find(c, pe);
		if (!p || p->state != 1)
			return;
		base = p->base;
	}
	hoist__heap_touched_at(c, base, 0, UINT64_MAX);
}

void hoist__heap_wake(const struct hoist_ctx *c, struct hoist_heap_wake *w, int r)
{
	/* only this client writes its counters; the daemon reads them */
	uint64_t *ctr = r > 0 ? &c->ring.ctrl->heap_wakes_direct
			      : &c->ring.ctrl->heap_wakes_direct_skipped;
	__atomic_store_n(ctr, __atomic_load_n(ctr, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	if (r > 0)
		hoist_futex_wake(&w->seq);
}
