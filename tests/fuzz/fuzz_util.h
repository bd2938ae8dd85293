/*
 * Shared helpers of the libFuzzer targets (tests/fuzz/): a daemon struct
 * with default settings and a quiet log, and a socketpair standing in for
 * a client connection (the handlers answer on it; drain() reads and drops
 * the answers, closing any fds that rode along).
 */
#ifndef HOIST_FUZZ_UTIL_H
#define HOIST_FUZZ_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "settings.h"

/* A property the code under test promised does not hold: a crash that
 * libFuzzer records with its input. */
#define FUZZ_CHECK(c)                                                                     \
	do {                                                                              \
		if (!(c)) {                                                               \
			fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                          \
		}                                                                         \
	} while (0)

static inline void fuzz_daemon_init(struct daemon *d)
{
	memset(d, 0, sizeof(*d));
	settings_defaults(&d->cfg);
	d->uid = getuid();
	d->doorbell_fd = -1;
	hoistd_log_level = getenv("FUZZ_VERBOSE") ? LOG_DEBUG_ : -1;
}

/* sv[0]: the daemon's end, sv[1]: the client's. */
static inline void fuzz_socketpair(int sv[2])
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		perror("socketpair");
		abort();
	}
}

/* Read and drop every datagram waiting on fd (closing passed fds). */
static inline void fuzz_drain(int fd)
{
	char buf[1 << 16];
	char cbuf[CMSG_SPACE(300 * sizeof(int))];
	for (;;) {
		struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0)
			return;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
				continue;
			size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < k; i++) {
				int f;
				memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				close(f);
			}
		}
	}
}

#endif
