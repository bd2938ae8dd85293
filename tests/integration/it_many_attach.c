/*
 * it_many_attach N JOB: hold N attach connections to $HOIST_RUNTIME_DIR's
 * hoistd, ranks 0..N-1 of job JOB of size N+1, so the daemon has N clients
 * waiting for their job to assemble (rank N never comes). Speaks the
 * attach protocol directly: one process instead of N PEs blocked in
 * hoist_init, which 2 cores could not carry.
 *
 * Prints "READY N" on stdout once every rank got its "accepted" answer,
 * then holds the connections until stdin reaches EOF; exit 0. Exit 1 if a
 * rank was refused or got no answer.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "hoist.pb-c.h"
#include "hoist_shm.h"

static int attach_one(const char *dir, const char *job, int rank, int size)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/hoistd.sock", dir);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "[it_many_attach] rank %d: connect: %s\n", rank, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	Hoist__AttachRequest req = HOIST__ATTACH_REQUEST__INIT;
	req.abi_version = HOIST_ABI_VERSION;
	req.job_key = (char *)job;
	req.rank = rank;
	req.size = size;
	req.pid = (int32_t)getpid();
	req.heap_bytes = 4096;
	req.blocking = 1; /* no prefetch region: lighter */
	uint8_t buf[4096];
	size_t n = hoist__attach_request__pack(&req, buf);
	if (send(fd, buf, n, MSG_NOSIGNAL) != (ssize_t)n) {
		fprintf(stderr, "[it_many_attach] rank %d: send: %s\n", rank, strerror(errno));
		close(fd);
		return -1;
	}
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	if (poll(&pfd, 1, 30000) != 1) { /* a watchdog, not a measurement */
		fprintf(stderr, "[it_many_attach] rank %d: no answer within 30 s\n", rank);
		close(fd);
		return -1;
	}
	ssize_t r = recv(fd, buf, sizeof(buf), 0);
	Hoist__AttachReply *rep = r > 0 ? hoist__attach_reply__unpack(NULL, (size_t)r, buf) : NULL;
	if (!rep || rep->status != 0 || !rep->accepted) {
		fprintf(stderr, "[it_many_attach] rank %d: refused: %d %s\n", rank, rep ? rep->status : -1,
			rep && rep->error ? rep->error : "(no reply)");
		if (rep)
			hoist__attach_reply__free_unpacked(rep, NULL);
		close(fd);
		return -1;
	}
	hoist__attach_reply__free_unpacked(rep, NULL);
	return fd;
}

int main(int argc, char **argv)
{
	const char *dir = getenv("HOIST_RUNTIME_DIR");
	if (argc != 3 || !dir) {
		fprintf(stderr, "usage: HOIST_RUNTIME_DIR=DIR it_many_attach N JOB\n");
		return 2;
	}
	int n = atoi(argv[1]);
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	int *fds = calloc((size_t)n, sizeof(*fds));
	if (!fds)
		return 1;
	for (int i = 0; i < n; i++) {
		fds[i] = attach_one(dir, argv[2], i, n + 1);
		if (fds[i] < 0)
			return 1;
	}
	printf("READY %d\n", n);
	fflush(stdout);
	char c;
	while (read(0, &c, 1) > 0) {
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	return 0;
}
