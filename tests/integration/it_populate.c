/*
 * it_populate: the ring and the staging arena are mapped writable in the
 * client, page by page, by the time hoist_init() returns, and their pages
 * exist (the daemon populated the memfds): every client goes through them
 * page by page, and a page fault in the daemon and in the client on each
 * page's first use made the first pass through staging 3-6x slower per
 * staged 4 KiB get than the later ones (issue 16; client/attach.c map_fd,
 * daemon/region.c region_create, MADV_POPULATE_WRITE).
 *
 * Checked for each page: the present bit in /proc/self/pagemap (the
 * client's page table: its populate), mincore (the page exists in the
 * memfd), and the present bit in the daemon's page table for its mapping of
 * the same memfd (/proc/$HOISTD_PID/maps names it memfd:hoist-staging-<our
 * pid>; the harness exports HOISTD_PID): the daemon's populate. The heap
 * is not populated (it can be large and the program touches what it
 * uses); not asserted either way.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "it_common.h"

/* pages of [lo, hi) not present in the page table of process pid
 * ("self" or a number), -1 (reported) if its pagemap cannot be read */
static long absent_in(const char *pid, const char *what, uintptr_t lo, uintptr_t hi)
{
	long page = sysconf(_SC_PAGESIZE);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%s/pagemap", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		IT_FAIL("%s: cannot open %s", what, path);
		return -1;
	}
	long absent = 0;
	for (uintptr_t a = lo; a < hi; a += (uintptr_t)page) {
		uint64_t e = 0;
		if (pread(fd, &e, sizeof(e), (off_t)(a / (uintptr_t)page * sizeof(e))) != (ssize_t)sizeof(e)) {
			IT_FAIL("%s: %s read failed at %#lx", what, path, (unsigned long)a);
			absent = -1;
			break;
		}
		absent += !(e >> 63 & 1);
	}
	close(fd);
	return absent;
}

/* The daemon's mapping of our region `name` (hoist-ring, hoist-staging):
 * its pages not present there, -1 (reported) if not found */
static long absent_in_daemon(const char *dpid, const char *name)
{
	char path[64], want[96], line[512];
	snprintf(path, sizeof(path), "/proc/%s/maps", dpid);
	snprintf(want, sizeof(want), "/memfd:%s-%d ", name, (int)getpid());
	FILE *f = fopen(path, "re");
	if (!f) {
		IT_FAIL("cannot open %s", path);
		return -1;
	}
	long absent = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (strstr(line, want) && sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
			absent = absent_in(dpid, name, lo, hi);
			break;
		}
	}
	fclose(f);
	if (absent == -1)
		IT_FAIL("no mapping %s in %s", want, path);
	return absent;
}

/* pages of [p, p + bytes) not present in this process's page table, and
 * not resident in their file; -1 when pagemap cannot be read */
static long missing(const char *what, void *p, size_t bytes, long *not_resident)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n = (bytes + (size_t)page - 1) / (size_t)page;
	unsigned char *vec = malloc(n);
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (!vec || fd < 0) {
		IT_FAIL("%s: no memory or no /proc/self/pagemap", what);
		free(vec);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*not_resident = 0;
	if (mincore(p, bytes, vec) != 0) {
		IT_FAIL("%s: mincore failed", what);
		*not_resident = (long)n;
	} else {
		for (size_t i = 0; i < n; i++)
			*not_resident += !(vec[i] & 1);
	}
	long absent = 0;
	uintptr_t first = (uintptr_t)p / (uintptr_t)page;
	for (size_t i = 0; i < n; i++) {
		uint64_t e = 0;
		if (pread(fd, &e, sizeof(e), (off_t)((first + i) * sizeof(e))) != (ssize_t)sizeof(e)) {
			IT_FAIL("%s: pagemap read failed at page %zu", what, i);
			absent = -1;
			break;
		}
		absent += !(e >> 63 & 1);
	}
	close(fd);
	free(vec);
	return absent;
}

int main(void)
{
	/* a kernel before 5.14 has no MADV_POPULATE_WRITE: nothing to check */
	void *probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int unsupported = probe == MAP_FAILED || madvise(probe, 4096, MADV_POPULATE_WRITE) != 0;
	if (probe != MAP_FAILED)
		munmap(probe, 4096);
	if (unsupported) {
		fprintf(stderr, "it_populate: no MADV_POPULATE_WRITE on this kernel: skipped\n");
		return IT_SKIP;
	}
	int me, n;
	it_init("it_populate", &me, &n);
	struct hoist_ctx *c = hoist__ctx();
	struct {
		const char *what, *memfd;
		void *p;
		size_t bytes;
	} r[] = {
		{"ring", "hoist-ring", c->ring.ctrl, c->ring_bytes},
		{"staging", "hoist-staging", c->staging_base, c->stage.size},
	};
	const char *dpid = getenv("HOISTD_PID");
	if (!dpid)
		IT_FAIL("HOISTD_PID not set: run me under tests/integration/harness.sh");
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		long not_resident = 0;
		long absent = missing(r[i].what, r[i].p, r[i].bytes, &not_resident);
		if (absent != 0)
			IT_FAIL("%s (%zu bytes): %ld pages not mapped in the client", r[i].what, r[i].bytes, absent);
		if (not_resident != 0)
			IT_FAIL("%s (%zu bytes): %ld pages not in the memfd", r[i].what, r[i].bytes, not_resident);
		long in_daemon = dpid ? absent_in_daemon(dpid, r[i].memfd) : -1;
		if (in_daemon > 0)
			IT_FAIL("%s: %ld pages not mapped in the daemon", r[i].what, in_daemon);
	}
	IT_OK(hoist_barrier());
	return it_finish();
}
