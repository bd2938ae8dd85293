#ifndef HOISTD_CONTROL_H
#define HOISTD_CONTROL_H

#include <stddef.h>

struct daemon;
struct client;

/* One accepted attach connection (control thread). */
struct conn {
	struct daemon *d;
	int fd;
	struct event *ev;
	struct client *client; /* set once the AttachRequest was accepted */
	struct conn *next, *prev; /* daemon's list of open connections */
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
