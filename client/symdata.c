/*
 * Symmetric global and static data (HOIST_INIT_SYMMETRIC_DATA): the main
 * executable's writable data segment moves into the heap file, so that
 * the daemon, the transports and other PEs' mappings reach a program's
 * `static long x` exactly as they reach hoist_malloc'ed memory.
 *
 * The segment: the main program's writable PT_LOAD (dl_iterate_phdr names
 * the main program first), minus what ld.so made read-only after
 * relocation (PT_GNU_RELRO: it protects whole pages up to the page that
 * holds the RELRO end, exclusive), rounded out to whole pages, which
 * includes .bss up to its page end (ld.so maps that page too). Same
 * executable on every PE = same length and the same offset of every
 * variable from the segment's start, wherever ASLR put it.
 *
 * The move: map the heap file's part for the data anywhere, copy the
 * segment's current contents into it, then mremap it over the segment.
 * mremap replaces the old pages at once (no window where the addresses are
 * unmapped) and leaves them untouched when it fails. Nothing may store to
 * the segment between the copy and the mremap: the caller is
 * hoist_init, single threaded by contract, and this file's code keeps
 * everything in locals.
 *
 * Below ctx.c in the layering (internal.h): no context, no other file.
 */
#include <errno.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symdata.h"

struct seg_find {
	int seen;       /* objects visited: only the first is the main program */
	int nwritable;  /* writable PT_LOADs of the main program */
	uintptr_t lo, hi, relro_end;
};

static int seg_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct seg_find *f = arg;
	if (f->seen++)
		return 1;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && ph->p_memsz) {
			f->nwritable++;
			f->lo = a;
			f->hi = a + ph->p_memsz;
		} else if (ph->p_type == PT_GNU_RELRO) {
			f->relro_end = a + ph->p_memsz;
		}
	}
	return 1;
}

int symdata_find(uintptr_t *lo, size_t *len)
{
	struct seg_find f = {0};
	dl_iterate_phdr(seg_cb, &f);
	if (f.nwritable != 1)
		return f.nwritable ? -ENOTSUP : -ENOENT;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t l = f.lo & ~(page - 1);
	uintptr_t h = (f.hi + page - 1) & ~(page - 1);
	/* ld.so protects [page_down(relro start), page_down(relro end)) */
	uintptr_t r = f.relro_end & ~(page - 1);
	if (f.relro_end && r > l && r <= h)
		l = r;
	if (h <= l)
		return -ENOENT; /* all of it is read-only after relocation */
	*lo = l;
	*len = h - l;
	return 0;
}

/* The whole segment, page aligned, word by word: not memcpy, which
 * AddressSanitizer checks against the red zones it puts between globals
 * (copying them is right here); volatile keeps the compiler from making
 * the loop a memcpy call again. */
__attribute__((no_sanitize_address)) static void copy_words(void *dst, const void *src, size_t len)
{
	volatile uint64_t *d = dst;
	const volatile uint64_t *s = src;
	for (size_t i = 0; i < len / sizeof(uint64_t); i++)
		d[i] = s[i];
}

/* copy [lo, lo + len) into the fresh mapping tmp, then move tmp over it in
 * one step (a failed mremap leaves the segment as it was) */
static int move_over(void *tmp, uintptr_t lo, size_t len)
{
	if (tmp == MAP_FAILED)
		return -errno;
	copy_words(tmp, (const void *)lo, len);
	/* from here to the mremap nothing stores to [lo, lo + len) */
	void *m = mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)lo);
	if (m == MAP_FAILED) {
		int rc = -errno;
		munmap(tmp, len);
		return rc;
	}
	return 0;
}

int symdata_move(uintptr_t lo, size_t len, int fd, uint64_t off)
{
	return move_over(mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off), lo,
			 len);
}

int symdata_restore(uintptr_t lo, size_t len)
{
	return move_over(mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
			 lo, len);
}
