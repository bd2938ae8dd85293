/*
 * Ordering and synchronisation: quiet, fence, the split-phase barrier, and
 * the collective symmetric allocator built on it.
 */
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static int post_simple(struct hoist_ctx *c, uint8_t opcode, uint8_t flags, uint64_t user_data)
{
	struct hoist_sqe *sqe;
	int rc = hoist__sqe_get(c, &sqe);
	if (rc)
		return rc;
	*sqe = (struct hoist_sqe){.opcode = opcode, .flags = flags, .user_data = user_data};
	hoist__sqe_submit(c);
	return 0;
}

HOIST_API int hoist_quiet(void)
{
	struct hoist_ctx *c = &hoist__g;
	if (!c->initialized)
		return -ENOTCONN;
	return hoist__quiet(c);
}

HOIST_API int hoist_fence(void)
{
	struct hoist_ctx *c = &hoist__g;
	if (!c->initialized)
		return -ENOTCONN;
	return post_simple(c, HOIST_OP_FENCE, 0, 0);
}

/* phase: the call site that names the phase which starts when this barrier
 * completes (the daemon prefetches that phase's gets). */
int hoist__barrier_notify(struct hoist_ctx *c, uint64_t phase)
{
	if (!c->initialized)
		return -ENOTCONN;
	if (c->barrier_pending)
		return -EINVAL; /* notify twice without a wait */
	int rc = 0;
	/* The daemon holds the notify until our puts completed; nbi gets
	 * still need their copy-out, which only a quiet does. */
	if (c->nbi_head)
		rc = hoist__quiet(c);
	hoist__reap(c);
	if (c->sticky_err) {
		rc = rc ? rc : c->sticky_err;
		c->sticky_err = 0;
	}
	struct hoist_sqe *sqe;
	int prc = hoist__sqe_get(c, &sqe);
	if (prc)
		return prc;
	*sqe = (struct hoist_sqe){.opcode = HOIST_OP_BARRIER_NOTIFY, .remote_off = phase};
	hoist__sqe_submit(c);
	c->barrier_target++;
	c->barrier_pending = 1;
	return rc;
}

/* ---- phase ids of barrier call sites: the same on every rank ----
 * A return address differs between processes (ASLR). Its offset in the
 * object that holds it does not, so the id is
 *   FNV-1a-32(file name of the object, symlinks resolved, without
 *             directories) << 32
 *   | (address - the object's load bias)  [the ELF virtual address]
 * which hoistctl maps back to object+offset and, with addr2line, to
 * file:line (the object found among /proc/<pid>/maps by that hash). An
 * address outside every object, or at an offset >= 4 GiB, stays raw. */
struct site_find {
	uintptr_t addr, bias;
	const char *name;
	int found;
};

static int site_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct site_find *f = arg;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (f->addr >= lo && f->addr - lo < ph->p_memsz) {
			f->bias = info->dlpi_addr;
			f->name = info->dlpi_name;
			f->found = 1;
			return 1;
		}
	}
	return 0;
}

static uint32_t fnv1a32(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

uint64_t hoist__site_id(uintptr_t addr)
{
	/* a few call sites, many barriers: remember the last ones */
	static struct {
		uintptr_t addr;
		uint64_t id;
	} cache[8];
	unsigned slot = (unsigned)(addr >> 4) & 7u;
	if (addr && cache[slot].addr == addr)
		return cache[slot].id;
	struct site_find f = {.addr = addr};
	uint64_t id = addr;
	dl_iterate_phdr(site_cb, &f);
	if (f.found && addr - f.bias < (1ull << 32)) {
		char path[PATH_MAX];
		const char *name = f.name;
		if (!name || !*name) { /* the main program */
			ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
			path[n > 0 ? n : 0] = 0;
			name = path;
		} else if (realpath(name, path)) { /* the file maps shows, not a symlink */
			name = path;
		}
		const char *base = strrchr(name, '/');
		id = (uint64_t)fnv1a32(base ? base + 1 : name) << 32 | (uint64_t)(addr - f.bias);
	}
	cache[slot].addr = addr;
	cache[slot].id = id;
	return id;
}

HOIST_API int hoist_barrier_notify(void)
{
	return hoist__barrier_notify(&hoist__g,
				     hoist__site_id((uintptr_t)__builtin_return_address(0)));
}

HOIST_API int hoist_phase(uint64_t id)
{
	struct hoist_ctx *c = &hoist__g;
	if (!c->initialized)
		return -ENOTCONN;
	struct hoist_sqe *sqe;
	int rc = hoist__sqe_get(c, &sqe);
	if (rc)
		return rc;
	*sqe = (struct hoist_sqe){.opcode = HOIST_OP_PHASE, .remote_off = id};
	hoist__sqe_submit(c);
	c->pf_gen++;
	c->pf_cursor = 0;
	return 0;
}

HOIST_API int hoist_barrier_wait(void)
{
	struct hoist_ctx *c = &hoist__g;
	if (!c->initialized)
		return -ENOTCONN;
	if (!c->barrier_pending)
		return -EINVAL; /* wait without notify */
	c->barrier_pending = 0;
	int rc = hoist__wait_epoch(c, c->barrier_target);
	if (rc == 0) { /* the daemon started the next phase with the barrier */
		c->pf_gen++;
		c->pf_cursor = 0;
	}
	hoist__reap(c);
	if (!rc && c->sticky_err) { /* e.g. the daemon rejected the notify */
		rc = c->sticky_err;
		c->sticky_err = 0;
	}
	return rc;
}

HOIST_API int hoist_barrier(void)
{
	int rc = hoist__barrier_notify(&hoist__g,
				       hoist__site_id((uintptr_t)__builtin_return_address(0)));
	if (rc == -ENOTCONN || (rc && !hoist__g.barrier_pending))
		return rc;
	int wrc = hoist_barrier_wait();
	return rc ? rc : wrc;
}

HOIST_API void *hoist_malloc(size_t size)
{
	struct hoist_ctx *c = &hoist__g;
	if (!c->initialized || size == 0)
		return NULL;
	int64_t off = symheap_alloc(&c->heap, size);
	/* collective: every PE allocated before anyone accesses the block */
	int rc = hoist_barrier();
	if (off < 0 || rc) {
		if (off >= 0)
			symheap_free(&c->heap, (uint64_t)off);
		return NULL;
	}
	return c->heap_base + off;
}

HOIST_API void hoist_free(void *ptr)
{
	struct hoist_ctx *c = &hoist__g;
	if (!c->initialized || !ptr || !hoist_is_symmetric(ptr, 1))
		return;
	/* collective: nobody may still be accessing the block */
	hoist_barrier();
	symheap_free(&c->heap, (uint64_t)((char *)ptr - c->heap_base));
}
