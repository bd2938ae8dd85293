/*
 * The progress loop's waking up (progress thread): one epoll holds every
 * descriptor that can give the loop work - the doorbell clients ring when
 * it sleeps, the command queue from the control thread, and whatever the
 * transport watches (tcp: its listening socket and connections; verbs:
 * the rdma_cm event channel and the completion channel). A transport adds
 * its descriptors with a callback instead of running an epoll of its own;
 * the loop decides when to look (busy passes: every pass or every few,
 * transport_ops.fd_pass_mask; idle: it sleeps here, see progress_main).
 *
 * Level-triggered. A descriptor removed during a batch (a connection
 * closed by an earlier callback) gets no callback for the events already
 * returned: each registration carries a generation, and the events of an
 * older one are dropped, even if the descriptor number is reused at once.
 */
#ifndef HOISTD_LOOP_H
#define HOISTD_LOOP_H

#include <stdint.h>

struct daemon;

/* Called for events (EPOLLIN, EPOLLOUT, EPOLLERR, ...) on a watched
 * descriptor; returns the work it did (counts as a busy pass). */
typedef int (*loop_fn)(struct daemon *d, void *arg, uint32_t events);

struct loop_watch {
	loop_fn fn;      /* NULL: not watched */
	void *arg;
	uint32_t gen;
	uint32_t events;
};

struct loop {
	int epfd;
	struct daemon *d;
	struct loop_watch *w; /* by descriptor number */
	uint32_t nw;
};

/* 0 or -errno. loop_fini closes the epoll (not the descriptors). */
int loop_init(struct loop *l, struct daemon *d);
void loop_fini(struct loop *l);

/* Watch fd for events (EPOLLIN, EPOLLOUT; 0: registered, reported
 * nothing), calling fn(d, arg, events). 0 or -errno. */
int loop_add(struct loop *l, int fd, uint32_t events, loop_fn fn, void *arg);
/* Other events for a watched fd (0: none for now). 0 or -errno. */
int loop_mod(struct loop *l, int fd, uint32_t events);
/* Stop watching fd (before closing it). */
void loop_del(struct loop *l, int fd);

/* Wait up to timeout_ms (0: just look, -1: no limit) and run the
 * callbacks of what is ready. Returns the work they did. */
int loop_wait(struct loop *l, int timeout_ms);

#endif
