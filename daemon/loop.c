/*
 * The progress loop's one epoll (see loop.h). Registrations are kept in
 * a table indexed by descriptor; an event carries the descriptor and the
 * generation of its registration, so that a stale event (the descriptor
 * was removed, maybe reused, earlier in the same batch) is dropped.
 */
#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define LOOP_BATCH 64

int loop_init(struct loop *l, struct daemon *d)
{
	memset(l, 0, sizeof(*l));
	l->d = d;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	return l->epfd < 0 ? -errno : 0;
}

void loop_fini(struct loop *l)
{
	if (l->epfd >= 0)
		close(l->epfd);
	l->epfd = -1;
	free(l->w);
	l->w = NULL;
	l->nw = 0;
}

static uint64_t tag_of(int fd, uint32_t gen)
{
	return (uint64_t)gen << 32 | (uint32_t)fd;
}

int loop_add(struct loop *l, int fd, uint32_t events, loop_fn fn, void *arg)
{
	if (fd < 0 || !fn)
		return -EINVAL;
	if ((uint32_t)fd >= l->nw) {
		uint32_t n = l->nw ? l->nw : 64;
		while (n <= (uint32_t)fd)
			n *= 2;
		struct loop_watch *w = realloc(l->w, (size_t)n * sizeof(*w));
		if (!w)
			return -ENOMEM;
		memset(w + l->nw, 0, (size_t)(n - l->nw) * sizeof(*w));
		l->w = w;
		l->nw = n;
	}
	struct loop_watch *w = &l->w[fd];
	if (w->fn)
		return -EEXIST;
	struct epoll_event ev = {.events = events, .data.u64 = tag_of(fd, w->gen + 1)};
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	w->gen++;
	w->fn = fn;
	w->arg = arg;
	w->events = events;
	return 0;
}

int loop_mod(struct loop *l, int fd, uint32_t events)
{
	if (fd < 0 || (uint32_t)fd >= l->nw || !l->w[fd].fn)
		return -ENOENT;
	struct loop_watch *w = &l->w[fd];
	struct epoll_event ev = {.events = events, .data.u64 = tag_of(fd, w->gen)};
	if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
		return -errno;
	w->events = events;
	return 0;
}

void loop_del(struct loop *l, int fd)
{
	if (fd < 0 || (uint32_t)fd >= l->nw || !l->w[fd].fn)
		return;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	l->w[fd].fn = NULL;
	l->w[fd].arg = NULL;
	l->w[fd].events = 0;
}

int loop_wait(struct loop *l, int timeout_ms)
{
	struct epoll_event ev[LOOP_BATCH];
	int k = epoll_wait(l->epfd, ev, LOOP_BATCH, timeout_ms);
	int work = 0;
	for (int i = 0; i < k; i++) {
		uint32_t fd = (uint32_t)ev[i].data.u64, gen = (uint32_t)(ev[i].data.u64 >> 32);
		if (fd >= l->nw)
			continue;
		struct loop_watch *w = &l->w[fd];
		if (!w->fn || w->gen != gen)
			continue; /* removed (or replaced) by an earlier callback */
		work += w->fn(l->d, w->arg, ev[i].events);
	}
	return work;
}
