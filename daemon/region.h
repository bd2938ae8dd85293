/* Shared regions: sealed memfds the daemon creates, maps, and hands out. */
#ifndef HOISTD_REGION_H
#define HOISTD_REGION_H

#include <stddef.h>

struct region {
	int fd;      /* -1 once sent and closed */
	void *base;
	size_t bytes;
};

/* memfd of `bytes` (rounded up to pages), sealed against shrink/grow so a
 * client cannot truncate it under the daemon's feet (SIGBUS), mapped
 * read-write shared; populate: its pages allocated and mapped writable now
 * (MADV_POPULATE_WRITE), for a region every client goes through page by page
 * (ring, staging), instead of a page fault in the daemon and one in the
 * client on each page's first use. 0 or -errno. */
int region_create(struct region *r, const char *name, size_t bytes, int populate);
void region_close_fd(struct region *r);
void region_destroy(struct region *r);

#endif
