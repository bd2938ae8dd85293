/* See hoist_verify.h. Compiled into libhoist and into hoistctl. */
#include "hoist_verify.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define HINT "remove it, or point HOIST_RUNTIME_DIR (hoistctl: --runtime-dir) at your own hoistd's directory"

static int trusted_uid(uid_t u, uid_t me)
{
	return u == 0 || u == me;
}

int hoist_verify_connect(const char *dir, const char *name, int timeout_ms, char *why,
			 size_t why_len)
{
	uid_t me = geteuid();
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, name) >=
	    sizeof(sa.sun_path)) {
		snprintf(why, why_len, "socket path %s/%s is too long", dir, name);
		return -ENAMETOOLONG;
	}

	struct stat st;
	if (stat(dir, &st) < 0) {
		int e = errno;
		snprintf(why, why_len, "runtime directory %s: %s", dir, strerror(e));
		return e == ENOENT ? -ENOENT : -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, why_len, "runtime directory %s is not a directory; " HINT, dir);
		return -EPERM;
	}
	if (!trusted_uid(st.st_uid, me)) {
		snprintf(why, why_len,
			 "runtime directory %s belongs to uid %u, not to root or you (uid %u): "
			 "its daemon is not yours; " HINT,
			 dir, (unsigned)st.st_uid, (unsigned)me);
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, why_len,
			 "runtime directory %s is writable by %s (mode %04o): anyone could have put "
			 "the socket there; chmod go-w it or " HINT,
			 dir, (st.st_mode & S_IWOTH) ? "everyone" : "its group",
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	if (stat(sa.sun_path, &st) < 0) {
		int e = errno;
		snprintf(why, why_len, "no hoistd in %s: %s: %s", dir, sa.sun_path, strerror(e));
		return e == ENOENT ? -ENOENT : -e;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(why, why_len, "%s is not a socket; " HINT, sa.sun_path);
		return -EPERM;
	}
	if (!trusted_uid(st.st_uid, me)) {
		snprintf(why, why_len, "socket %s belongs to uid %u, not to root or you (uid %u); " HINT,
			 sa.sun_path, (unsigned)st.st_uid, (unsigned)me);
		return -EPERM;
	}

	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int e = errno;
		snprintf(why, why_len, "socket: %s", strerror(e));
		return -e;
	}
	/* bounds connect (full backlog) and every later send (full queue) */
	struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	int rc;
	do
		rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	while (rc < 0 && errno == EINTR);
	if (rc < 0) {
		int e = errno;
		close(fd);
		switch (e) {
		case ENOENT:
		case ECONNREFUSED:
			snprintf(why, why_len, "no hoistd listens on %s (%s)", sa.sun_path, strerror(e));
			return -ENOENT;
		case EACCES:
		case EPERM:
			snprintf(why, why_len,
				 "permission denied connecting to %s: the socket or its directory does not "
				 "let uid %u in (a per-user hoistd admits only its own user)",
				 sa.sun_path, (unsigned)me);
			return -EACCES;
		case EAGAIN:
			snprintf(why, why_len, "the daemon on %s did not accept the connection within %d ms",
				 sa.sun_path, timeout_ms);
			return -ETIMEDOUT;
		default:
			snprintf(why, why_len, "cannot connect to %s: %s", sa.sun_path, strerror(e));
			return -e;
		}
	}
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cl != sizeof(cred)) {
		int e = errno;
		close(fd);
		snprintf(why, why_len, "cannot read the credentials of the daemon on %s: %s",
			 sa.sun_path, strerror(e));
		return -EPERM;
	}
	if (!trusted_uid(cred.uid, me)) {
		close(fd);
		snprintf(why, why_len,
			 "the process listening on %s (pid %d) runs as uid %u, not as root or you "
			 "(uid %u): not your hoistd, nothing was sent; " HINT,
			 sa.sun_path, (int)cred.pid, (unsigned)cred.uid, (unsigned)me);
		return -EPERM;
	}
	return fd;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

ssize_t hoist_recvmsg_deadline(int fd, struct msghdr *mh, int flags, int timeout_ms)
{
	int64_t end = mono_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
	for (;;) {
		int64_t left = end - mono_ms();
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int n = poll(&p, 1, left > 0 ? (int)left : 0);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0) {
			ssize_t r = recvmsg(fd, mh, flags | MSG_DONTWAIT);
			if (r >= 0)
				return r;
			if (errno != EAGAIN && errno != EINTR)
				return -errno;
		}
		if (left <= 0)
			return -ETIMEDOUT;
	}
}
