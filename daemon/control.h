#ifndef HOISTD_CONTROL_H
#define HOISTD_CONTROL_H

#include <stddef.h>
#include <stdint.h>

struct daemon;
struct client;

struct stats_stream;

enum conn_kind { CONN_ATTACH, CONN_STATS };

/* One accepted attach or stats connection (control thread). */
struct conn {
	struct daemon *d;
	int fd;
	enum conn_kind kind;
	struct event *ev;
	struct client *client; /* set once the AttachRequest was accepted */
	struct conn *next, *prev; /* daemon's list of open connections */
	/* half-open: no request yet (an attach connection: no client yet).
	 * Dropped at deadline_ns (request_timeout_ms) or, the oldest first,
	 * when max_halfopen others are waiting. */
	int halfopen;
	uint64_t deadline_ns;
	struct conn *ho_next, *ho_prev;
	struct stats_stream *ss; /* stats: the reply being sent */
};

/* Sockets, libevent loop until SIGTERM/SIGINT; ready_fd >= 0 gets
 * "READY\n" once both sockets listen. 0 or -errno. */
int control_run(struct daemon *d, int ready_fd);
/* Send one datagram, optionally with fds. 0 or -errno. */
int control_send(int fd, const void *buf, size_t len, const int *fds, int nfds);
void conn_close(struct conn *cn);
/* Shutdown: free every connection without retiring clients. */
void control_free_conns(struct daemon *d);

#endif
