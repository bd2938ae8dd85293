/*
 * it_peers_bad: raw PeersRequests (what hoist_ptr sends) that the daemon
 * must refuse, on the client's own attach connection, and proof that the
 * daemon and the client go on afterwards.
 *
 *   it_peers_bad [--nodes K]    (placement as in it_ptr; OTHER_JOB=key of
 *                                a job running at the same time, optional)
 *
 * Each PE in turn (the others wait in a barrier) sends: another job's key
 * (-EACCES), garbage bytes and an oversized datagram (-EPROTO), a wrong
 * ABI version (-EPROTO), no ranks and HOIST_PEERS_MAX + 1 ranks (-EINVAL),
 * then one request mixing ranks -1 and N (-EINVAL each), a remote rank
 * (-EREMOTE), itself and a local peer (their heap fds, in that order: the
 * mapped heaps must show what the PEs wrote). Afterwards hoist_ptr, put,
 * get and barriers must work as before.
 */
#include <sys/mman.h>
#include <sys/socket.h>

#include "hoist.pb-c.h"
#include "it_common.h"
#include "internal.h"

static int nnodes = 1, npes;

static int node_of(int pe)
{
	return (int)((long)pe * nnodes / npes);
}

static void send_raw(int fd, const void *buf, size_t n)
{
	if (send(fd, buf, n, MSG_NOSIGNAL) != (ssize_t)n)
		IT_FAIL("send of %zu bytes on the attach socket: %s", n, strerror(errno));
}

static void send_req(int fd, uint32_t abi, const char *key, int32_t *ranks, size_t nranks)
{
	Hoist__PeersRequest req = HOIST__PEERS_REQUEST__INIT;
	req.abi_version = abi;
	req.job_key = (char *)key;
	req.ranks = ranks;
	req.n_ranks = nranks;
	size_t n = hoist__peers_request__get_packed_size(&req);
	uint8_t *buf = it_xmalloc(n);
	hoist__peers_request__pack(&req, buf);
	send_raw(fd, buf, n);
	free(buf);
}

/* One reply; its fds in fds[] (closed by the caller). NULL on failure. */
static Hoist__PeersReply *recv_rep(int fd, int *fds, int *nfds)
{
	static uint8_t buf[65536];
	union {
		char b[CMSG_SPACE(HOIST_PEERS_MAX * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			    .msg_controllen = sizeof(u.b)};
	ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	*nfds = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); n > 0 && cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			*nfds = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds, CMSG_DATA(cm), (size_t)*nfds * sizeof(int));
		}
	if (n <= 0) {
		IT_FAIL("no reply from the daemon (%zd, %s)", n, n < 0 ? strerror(errno) : "hang-up");
		return NULL;
	}
	Hoist__PeersReply *r = hoist__peers_reply__unpack(NULL, (size_t)n, buf);
	if (!r)
		IT_FAIL("reply of %zd bytes does not unpack", n);
	return r;
}

static void expect_refused(int fd, int want, const char *what)
{
	int fds[HOIST_PEERS_MAX], nfds;
	Hoist__PeersReply *r = recv_rep(fd, fds, &nfds);
	if (!r)
		return;
	if (r->status != want)
		IT_FAIL("%s: status %s, want %s (%s)", what, it_errname(r->status), it_errname(want),
			r->error ? r->error : "");
	if (nfds || r->n_peers)
		IT_FAIL("%s: %d fds and %zu peers in a refusal", what, nfds, r->n_peers);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	hoist__peers_reply__free_unpacked(r, NULL);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
			nnodes = atoi(argv[++i]);
	int me, n;
	it_init("it_peers_bad", &me, &n);
	it_watchdog(50);
	npes = n;
	struct hoist_ctx *c = hoist__ctx();
	uint64_t *x = it_malloc(4096);
	x[0] = it_hash((uint64_t)me, 1, 2, 3, 4);
	IT_OK(hoist_barrier());

	int peer = -1, remote = -1;
	for (int q = 0; q < n; q++) {
		if (q != me && node_of(q) == node_of(me) && peer < 0)
			peer = q;
		if (node_of(q) != node_of(me) && remote < 0)
			remote = q;
	}

	for (int turn = 0; turn < n; turn++) {
		if (turn == me) {
			int fd = c->sock;
			const char *other = getenv("OTHER_JOB");
			char key[300];
			snprintf(key, sizeof(key), "%s", other && *other ? other : "no-such-job");
			int32_t r1[1] = {peer >= 0 ? peer : me};
			IT_WHERE("other job");
			send_req(fd, HOIST_ABI_VERSION, key, r1, 1);
			expect_refused(fd, -EACCES, "another job's key");
			snprintf(key, sizeof(key), "%s-x", c->job_key);
			send_req(fd, HOIST_ABI_VERSION, key, r1, 1);
			expect_refused(fd, -EACCES, "a longer key");
			send_req(fd, HOIST_ABI_VERSION, NULL, r1, 1);
			expect_refused(fd, -EACCES, "no key");

			IT_WHERE("garbage");
			uint8_t junk[100];
			for (size_t i = 0; i < sizeof(junk); i++)
				junk[i] = (uint8_t)(0xff - i);
			send_raw(fd, junk, sizeof(junk));
			expect_refused(fd, -EPROTO, "garbage bytes");
			uint8_t *huge = it_xmalloc(20000);
			memset(huge, 0x0a, 20000);
			send_raw(fd, huge, 20000);
			free(huge);
			expect_refused(fd, -EPROTO, "oversized datagram");

			IT_WHERE("abi, counts");
			send_req(fd, HOIST_ABI_VERSION + 1, c->job_key, r1, 1);
			expect_refused(fd, -EPROTO, "wrong ABI version");
			send_req(fd, HOIST_ABI_VERSION, c->job_key, NULL, 0);
			expect_refused(fd, -EINVAL, "no ranks");
			int32_t many[HOIST_PEERS_MAX + 1];
			for (unsigned i = 0; i <= HOIST_PEERS_MAX; i++)
				many[i] = me;
			send_req(fd, HOIST_ABI_VERSION, c->job_key, many, HOIST_PEERS_MAX + 1);
			expect_refused(fd, -EINVAL, "HOIST_PEERS_MAX + 1 ranks");

			IT_WHERE("mixed ranks");
			int32_t mix[5] = {-1, n, remote >= 0 ? remote : -1, me, peer >= 0 ? peer : me};
			send_req(fd, HOIST_ABI_VERSION, c->job_key, mix, 5);
			int fds[HOIST_PEERS_MAX], nfds;
			Hoist__PeersReply *r = recv_rep(fd, fds, &nfds);
			if (r && (r->status || r->n_peers != 5 || nfds != 2)) {
				IT_FAIL("mixed request: status %d, %zu peers, %d fds (want 0, 5, 2)", r->status,
					r->n_peers, nfds);
			} else if (r) {
				int want[5] = {-EINVAL, -EINVAL, remote >= 0 ? -EREMOTE : -EINVAL, 0, 0};
				for (int i = 0; i < 5; i++)
					if (r->peers[i]->rank != mix[i] || r->peers[i]->status != want[i])
						IT_FAIL("mixed request, entry %d: rank %d status %d, want %d %d", i,
							r->peers[i]->rank, r->peers[i]->status, mix[i], want[i]);
				for (int i = 0; i < 2; i++) {
					int who = i == 0 ? me : mix[4];
					uint64_t *m = mmap(NULL, c->heap_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
							   fds[i], 0);
					if (m == MAP_FAILED) {
						IT_FAIL("mmap of fd %d (rank %d): %s", i, who, strerror(errno));
						continue;
					}
					size_t off = (size_t)((char *)x - c->heap_base) / 8;
					if (m[off] != it_hash((uint64_t)who, 1, 2, 3, 4))
						IT_FAIL("heap fd %d (rank %d) shows %#" PRIx64, i, who, m[off]);
					munmap(m, c->heap_bytes);
				}
			}
			for (int i = 0; i < nfds; i++)
				close(fds[i]);
			if (r)
				hoist__peers_reply__free_unpacked(r, NULL);
		}
		IT_OK(hoist_barrier(), " (turn %d)", turn);
	}

	/* everything still works */
	IT_WHERE("after the bad requests");
	for (int q = 0; q < n; q++) {
		uint64_t *p = hoist_ptr(x, q);
		if ((p != NULL) != (node_of(q) == node_of(me)))
			IT_FAIL("hoist_ptr(x, %d) = %p after the bad requests", q, (void *)p);
		if (p && p[0] != it_hash((uint64_t)q, 1, 2, 3, 4))
			IT_FAIL("hoist_ptr(x, %d)[0] = %#" PRIx64, q, p[0]);
		uint64_t v = 0;
		IT_OK(hoist_get(&v, q, x, 8));
		if (v != it_hash((uint64_t)q, 1, 2, 3, 4))
			IT_FAIL("get x from %d = %#" PRIx64, q, v);
		uint64_t w = it_hash((uint64_t)me, (uint64_t)q, 5, 6, 7);
		IT_OK(hoist_put(q, &x[1 + me], &w, 8));
	}
	IT_OK(hoist_barrier());
	for (int s = 0; s < n; s++)
		if (x[1 + s] != it_hash((uint64_t)s, (uint64_t)me, 5, 6, 7))
			IT_FAIL("x[%d] = %#" PRIx64 " after the puts", 1 + s, x[1 + s]);
	return it_finish();
}
