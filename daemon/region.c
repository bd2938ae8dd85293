#include "region.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

int region_create(struct region *r, const char *name, size_t bytes, int populate)
{
	long page = sysconf(_SC_PAGESIZE);
	bytes = (bytes + (size_t)page - 1) & ~((size_t)page - 1);
	r->fd = -1;
	r->base = NULL;
	r->bytes = bytes;
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	int rc;
	if (ftruncate(fd, (off_t)bytes) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		rc = -errno;
		close(fd);
		return rc;
	}
	/* writable and dirty now: MAP_POPULATE maps a shared page read-only,
	 * and its first write still faults (and flushes the TLB of every CPU
	 * the daemon's threads run on). A kernel before 5.14 says EINVAL:
	 * the pages then fault on first use, as without populate. */
	if (populate)
		(void)madvise(p, bytes, MADV_POPULATE_WRITE);
	r->fd = fd;
	r->base = p;
	return 0;
}

void region_close_fd(struct region *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

void region_destroy(struct region *r)
{
	region_close_fd(r);
	if (r->base)
		munmap(r->base, r->bytes);
	r->base = NULL;
}
