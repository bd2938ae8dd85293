/*
 * The control thread: a libevent loop over the attach socket, the stats
 * socket, every attach connection (its hang-up is how we learn a client
 * died), the command queue from the progress thread, signals and timers.
 */
#include "control.h"

#include <errno.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"

int control_send(int fd, const void *buf, size_t len, const int *fds, int nfds)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	union {
		/* the attach reply's regions, or a PeersReply's heaps */
		char buf[CMSG_SPACE(HOIST_PEERS_MAX * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds > (int)HOIST_PEERS_MAX)
		return -EINVAL;
	if (nfds > 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
	}
	ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	if (n < 0)
		return -errno;
	return n == (ssize_t)len ? 0 : -EMSGSIZE;
}

static void conn_unlink_free(struct conn *cn)
{
	if (cn->prev)
		cn->prev->next = cn->next;
	else
		cn->d->conns = cn->next;
	if (cn->next)
		cn->next->prev = cn->prev;
	if (cn->ev)
		event_free(cn->ev);
	close(cn->fd);
	free(cn);
}

void conn_close(struct conn *cn)
{
	if (cn->client)
		attach_conn_closed(cn->d, cn);
	conn_unlink_free(cn);
}

void control_free_conns(struct daemon *d)
{
	while (d->conns) {
		struct conn *cn = d->conns;
		if (cn->client)
			cn->client->conn = NULL;
		conn_unlink_free(cn);
	}
}

static void conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *cn = arg;
	uint8_t buf[4096];
	(void)what;
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) { /* hang-up: detach or death */
		conn_close(cn);
		return;
	}
	if (cn->client) {
		/* after the attach request: peer heap requests (hoist_ptr). A bad
		 * one is answered with an error; closing the connection would
		 * read as the client's death and fail its whole job */
		peers_handle(cn->d, cn, buf, (size_t)n > sizeof(buf) ? 0 : (size_t)n);
		return;
	}
	if ((size_t)n > sizeof(buf)) {
		hlog_info("attach connection sent an oversized message; closing it");
		conn_close(cn);
		return;
	}
	if (attach_handle(cn->d, cn, buf, (size_t)n) != 0 && !cn->client) {
		/* refused: the reply is sent; the client closes its end */
	}
}

static void attach_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct daemon *d = arg;
	(void)what;
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR)
				hlog_warn("accept on the attach socket: %m");
			return;
		}
		struct conn *cn = calloc(1, sizeof(*cn));
		if (!cn) {
			close(fd);
			continue;
		}
		cn->d = d;
		cn->fd = fd;
		cn->next = d->conns;
		if (d->conns)
			d->conns->prev = cn;
		d->conns = cn;
		cn->ev = event_new(d->base, fd, EV_READ | EV_PERSIST, conn_read_cb, cn);
		if (!cn->ev || event_add(cn->ev, NULL) < 0)
			conn_unlink_free(cn);
	}
}

static void stats_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct daemon *d = arg;
	(void)what;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	/* Requests are small and answered at once; a client that sends
	 * nothing within a second is dropped so it cannot stall the loop. */
	struct timeval tv = {.tv_sec = 1};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	stats_serve(d, fd);
	close(fd);
}

static void from_progress_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	(void)fd;
	(void)what;
	struct cmd *cmd = cmdq_take_all(&d->to_control);
	while (cmd) {
		struct cmd *next = cmd->next;
		if (cmd->type == CMD_CLIENT_FREE)
			client_free(d, cmd->obj);
		else if (cmd->type == CMD_MEMBER) {
			attach_member(d, cmd->obj);
			free(cmd->obj);
		}
		free(cmd);
		cmd = next;
	}
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;
	(void)what;
	if (sig == SIGHUP) {
		hlog_info("SIGHUP: settings are read at start only; restart hoistd to change them");
		return;
	}
	hlog_info("signal %d: shutting down", (int)sig);
	event_base_loopbreak(d->base);
}

/* sd_notify(3) without libsystemd: one datagram to $NOTIFY_SOCKET. */
static void sd_notify_msg(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	if (!path || (path[0] != '/' && path[0] != '@'))
		return;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len = strlen(path);
	if (len >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
	       (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
	close(fd);
}

/* systemd's watchdog interval for this process, in µs, or 0: WATCHDOG_USEC
 * when WATCHDOG_PID is unset or names us (sd_watchdog_enabled(3)). */
static uint64_t watchdog_usec(void)
{
	const char *us = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	char *end;
	if (!us || !*us)
		return 0;
	errno = 0;
	unsigned long long v = strtoull(us, &end, 10);
	if (errno || *end || v == 0)
		return 0;
	if (pid && *pid) {
		errno = 0;
		unsigned long long p = strtoull(pid, &end, 10);
		if (errno || *end || p != (unsigned long long)getpid())
			return 0;
	}
	return v;
}

static void watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	static uint64_t last;
	(void)fd;
	(void)what;
	/* only vouch for the daemon while the progress thread still turns
	 * (it bumps heartbeat at least every SLEEP_MAX_MS when idle) */
	uint64_t hb = __atomic_load_n(&d->heartbeat, __ATOMIC_RELAXED) +
		      __atomic_load_n(&d->pst.loops_busy, __ATOMIC_RELAXED);
	if (hb != last)
		sd_notify_msg("WATCHDOG=1");
	last = hb;
}

/* STATUS= for systemctl status: clients, jobs, peers, the pinned budget.
 * Sent at READY and whenever it changes (checked every STATUS_PERIOD_S). */
#define STATUS_PERIOD_S 1
static void status_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	static char last[256];
	char msg[256];
	(void)fd;
	(void)what;
	int njobs = 0, up = 0;
	for (struct job *j = d->jobs; j; j = j->ctl_next)
		njobs++;
	for (int32_t p = 0; p < d->net.nnodes; p++)
		if (p != d->net.self && d->net.peers &&
		    __atomic_load_n(&d->net.peers[p].state, __ATOMIC_RELAXED) == PEER_UP)
			up++;
	snprintf(msg, sizeof(msg),
		 "STATUS=%d clients, %d jobs, %d/%d peers up, pinned %llu of %llu MiB", d->nclients,
		 njobs, up, d->net.nnodes > 1 ? d->net.nnodes - 1 : 0,
		 (unsigned long long)(__atomic_load_n(&d->vst.pinned_bytes, __ATOMIC_RELAXED) >> 20),
		 (unsigned long long)(d->pinned_limit >> 20));
	if (strcmp(msg, last) != 0) {
		sd_notify_msg(msg);
		memcpy(last, msg, sizeof(last));
	}
}

static int listen_unix(const char *path, mode_t mode)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Is a daemon already serving here? Then do not steal its socket. */
	int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (probe >= 0) {
		int live = connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
		close(probe);
		if (live) {
			close(fd);
			return -EADDRINUSE;
		}
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, mode) < 0 ||
	    listen(fd, 128) < 0) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int control_run(struct daemon *d, int ready_fd)
{
	int rc = 0;
	int afd = -1, sfd = -1;
	struct event *ev_attach = NULL, *ev_stats = NULL, *ev_prog = NULL;
	struct event *ev_term = NULL, *ev_int = NULL, *ev_wd = NULL, *ev_hup = NULL, *ev_status = NULL;

	d->base = event_base_new();
	if (!d->base)
		return -ENOMEM;
	/* root serves every user's jobs (each job pinned to one uid); a
	 * per-user daemon serves its own user only */
	mode_t mode = d->uid == 0 ? 0666 : 0600;
	afd = listen_unix(d->attach_path, mode);
	if (afd < 0) {
		rc = afd;
		hlog_err("cannot listen on %s: %s", d->attach_path,
			 rc == -EADDRINUSE ? "another hoistd serves this runtime directory" : strerror(-rc));
		goto out;
	}
	sfd = listen_unix(d->stats_path, mode);
	if (sfd < 0) {
		rc = sfd;
		hlog_err("cannot listen on %s: %s", d->stats_path, strerror(-rc));
		goto out;
	}
	ev_attach = event_new(d->base, afd, EV_READ | EV_PERSIST, attach_accept_cb, d);
	ev_stats = event_new(d->base, sfd, EV_READ | EV_PERSIST, stats_accept_cb, d);
	ev_prog = event_new(d->base, d->to_control.efd, EV_READ | EV_PERSIST, from_progress_cb, d);
	ev_term = evsignal_new(d->base, SIGTERM, signal_cb, d);
	ev_int = evsignal_new(d->base, SIGINT, signal_cb, d);
	ev_hup = evsignal_new(d->base, SIGHUP, signal_cb, d);
	ev_wd = event_new(d->base, -1, EV_PERSIST, watchdog_cb, d);
	ev_status = event_new(d->base, -1, EV_PERSIST, status_cb, d);
	if (!ev_attach || !ev_stats || !ev_prog || !ev_term || !ev_int || !ev_wd || !ev_hup ||
	    !ev_status) {
		rc = -ENOMEM;
		goto out;
	}
	/* systemd's watchdog: ping at half the interval it gave us */
	uint64_t wd_us = watchdog_usec() / 2;
	if (wd_us && wd_us < 1000)
		wd_us = 1000;
	struct timeval wd = {.tv_sec = (time_t)(wd_us / 1000000), .tv_usec = (suseconds_t)(wd_us % 1000000)};
	struct timeval st_period = {.tv_sec = STATUS_PERIOD_S};
	event_add(ev_attach, NULL);
	event_add(ev_stats, NULL);
	event_add(ev_prog, NULL);
	event_add(ev_term, NULL);
	event_add(ev_int, NULL);
	event_add(ev_hup, NULL);
	if (wd_us) {
		event_add(ev_wd, &wd);
		hlog_info("systemd watchdog: WATCHDOG=1 every %llu ms", (unsigned long long)wd_us / 1000);
	}
	if (getenv("NOTIFY_SOCKET"))
		event_add(ev_status, &st_period);

	hlog_info("ready: attach %s, stats %s, spin_us %llu", d->attach_path, d->stats_path,
		  (unsigned long long)d->cfg.spin_us);
	sd_notify_msg("READY=1");
	status_cb(-1, 0, d);
	if (ready_fd >= 0) {
		ssize_t w = write(ready_fd, "READY\n", 6);
		(void)w;
		close(ready_fd);
	}
	event_base_dispatch(d->base);
	sd_notify_msg("STOPPING=1");

out:
	if (ev_attach)
		event_free(ev_attach);
	if (ev_stats)
		event_free(ev_stats);
	if (ev_prog)
		event_free(ev_prog);
	if (ev_term)
		event_free(ev_term);
	if (ev_int)
		event_free(ev_int);
	if (ev_wd)
		event_free(ev_wd);
	if (ev_status)
		event_free(ev_status);
	if (ev_hup)
		event_free(ev_hup);
	if (afd >= 0) {
		close(afd);
		unlink(d->attach_path);
	}
	if (sfd >= 0) {
		close(sfd);
		unlink(d->stats_path);
	}
	return rc;
}
