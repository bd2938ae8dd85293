/*
 * Ordering and synchronisation: quiet, fence, the split-phase barrier, and
 * the collective symmetric allocator built on it.
 *
 * Barriers. A notify posts HOIST_OP_BARRIER_NOTIFY (a node barrier's: in
 * runs, below): the daemon counts the node's PEs in, holds a notify until that PE's earlier operations
 * completed, runs the inter-node rounds, advances its epoch in every
 * control page and starts the next phase (its prefetches). Who waits for
 * what depends on the job:
 * - PEs on several nodes (or HOIST_DIRECT=0, or a job of one PE): the wait
 *   is for the daemon's epoch (hoist__wait_epoch), as always.
 * - Every PE of the job on this node, HOIST_DIRECT=1: from the job's second
 *   barrier on (after the first every PE is attached, so every PE's heap
 *   can be mapped), the PEs synchronise among themselves in the wake
 *   lines of their heaps (hoist_shm.h, struct hoist_heap_wake):
 *   notify = quiet (free when everything since the last went the direct
 *   path), count the barrier for the daemon, then arrive (one release
 *   store in its own nb_in: no shared counter); a PE's barrier is complete
 *   once every PE's nb_in reached it. The last to arrive checks the
 *   daemon is alive first (one poll, at most once a millisecond per PE: a
 *   dead daemon cannot fail the job, so that PE fails the barrier for
 *   all, nb_error). A FUTEX_WAKE only when someone sleeps. No daemon
 *   thread on the critical path, and none woken or polling per barrier.
 *   The daemon is told the node barriers in runs (hoist__nb_flush): the
 *   barriers of one phase (call site) in a row are one lazy
 *   HOIST_OP_BARRIER_NOTIFY whose len is their count (HOIST_SQE_F_LAZY:
 *   no doorbell, and no reason for the daemon to keep polling; one
 *   doorbell when half the SQ holds notifies it has not taken). A
 *   notify per barrier cost the daemon 270-440 ns of CPU per 2-PE
 *   barrier, on the critical path when the PEs have the 2 CPUs (bench/
 *   README.md). The run so far is told when the phase changes, at
 *   NB_PEND_MAX barriers, before any other descriptor of this PE
 *   (hoist__sqe_get; vec.c before it remembers sq_tail) and before any
 *   wait for the daemon (a sleep in the node barrier's wait,
 *   hoist__wait_epoch). So the daemon still learns this PE's every phase
 *   boundary in order before it executes the PE's later descriptors; a
 *   run told before the others told theirs is not held (they may wait
 *   for this PE's descriptors behind it: it_wait_2), its count grows;
 *   the daemon completes as many barriers as every PE told and starts
 *   the next phase when its own count completes; the client's phase
 *   counter moves on at once, so a get of the new phase finds no
 *   prefetch until then and takes the normal path. A run of n barriers
 *   of one phase is one phase start for the daemon, not n: it saw no
 *   descriptor of the PE between them (the runs before a descriptor are
 *   told first), so the n-1 phases it skips were empty for it, and in a
 *   job whose PEs are all on this node it has nothing to prefetch (every
 *   target is local). Put completion is unchanged: a PE quiets before it
 *   arrives, so what it posted before the barrier completed before any PE
 *   passes it, whenever the daemon counts. A dead peer or daemon still
 *   fails the barrier (job_error, nb_error, the sleep slices: none
 *   depends on the count). hoist_finalize waits for the daemon's epoch
 *   too (after telling its run), so no PE detaches while the daemon
 *   still counts its last barrier. HOIST_DIRECT should be the same on every PE
 *   of the job: a PE with 0 never arrives here, and the others then pass
 *   on the daemon's epoch, seen only in their sleep slices (slow, no hang).
 */
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hoist_futex.h"
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

/* Node barriers not yet told to the daemon, at most this many: one notify
 * descriptor stands for a run of them (the header comment) */
#define NB_PEND_MAX 4096u

/* The node barrier's notify (the header comment): complete what went to
 * the daemon, count the barrier for the daemon, arrive. An error before
 * arriving returns with no barrier pending (and none counted): the others
 * see the job's error or the daemon's end. */
static int node_notify(struct hoist_ctx *c, uint64_t phase)
{
	int rc = hoist__quiet(c); /* a barrier implies quiet */
	if (rc)
		return rc;
	struct hoist_heap_wake *l = c->nb_line;
	int32_t err = __atomic_load_n(&c->ring.ctrl->job_error, __ATOMIC_ACQUIRE);
	if (!err && (err = __atomic_load_n(&l->nb_error, __ATOMIC_ACQUIRE)))
		c->daemon_gone = 1; /* our daemon: the node's one */
	if (err)
		return err;
	/* a run of barriers of one phase is one notify; another phase (or a
	 * full run) tells the daemon the run so far first */
	if (c->nb_pend_n && (c->nb_pend_phase != phase || c->nb_pend_n >= NB_PEND_MAX) &&
	    (rc = hoist__nb_flush(c)))
		return rc;
	c->nb_pend_phase = phase;
	c->nb_pend_n++; /* the daemon's count follows barrier_target */
	c->barrier_target++;
	c->barrier_pending = 1;
	c->nb_armed = 1;
	uint32_t k = ++c->nb_k;
	/* The last one to arrive (every other PE's nb_in reached k; two that
	 * arrive at once may both miss it, which costs nothing but a check)
	 * completes barrier k -- unless the daemon died: it cannot fail the
	 * job then, and the direct path must not go on as if the job lived.
	 * So it checks first (one poll, at most once a millisecond per PE: a
	 * system call costs more than the rest of the barrier; the others'
	 * waits check in their sleep) and fails the barrier for all instead */
	int last = 1;
	for (int p = 0; p < c->size && last; p++)
		if (p != c->rank && (int32_t)(__atomic_load_n(c->nb_in[p], __ATOMIC_RELAXED) - k) < 0)
			last = 0;
	if (last && (rc = hoist__check_daemon_due(c))) {
		__atomic_store_n(&l->nb_error, rc, __ATOMIC_SEQ_CST);
		__atomic_fetch_add(&l->nb_gen, 1, __ATOMIC_SEQ_CST);
		hoist_futex_wake(&l->nb_gen);
		c->barrier_pending = c->nb_armed = 0;
		return rc;
	}
	/* release: a PE that sees it sees every store of ours before it */
	__atomic_store_n(c->nb_in[c->rank], k, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* Dekker with the sleepers */
	if (__atomic_load_n(&l->nb_sleepers, __ATOMIC_RELAXED)) {
		__atomic_fetch_add(&l->nb_gen, 1, __ATOMIC_SEQ_CST);
		hoist_futex_wake(&l->nb_gen);
	}
	return 0;
}

/* After the job's first barrier: may the next ones be node barriers? Every
 * PE of the job decides the same (the same job, the same settings). */
static void node_barrier_setup(struct hoist_ctx *c)
{
	hoist__nc_setup(c); /* the node collectives (nodecoll.c), HOIST_DIRECT or not */
	if (!c->direct || c->size < 2 || c->npeers != (uint32_t)c->size || c->daemon_gone)
		return;
	/* every PE's heap: the lowest rank's wake line and every PE's nb_in */
	uint32_t **in = calloc((size_t)c->size, sizeof(*in));
	if (!in)
		return;
	for (int r = 0; r < c->size; r++) {
		struct hoist_peer *p = hoist__peer_find(c, r);
		char *base = r == c->rank ? c->heap_base : NULL;
		if (!base && p && (p->state > 0 || (p->state == 0 && !hoist__peer_map(c, p))))
			base = p->base;
		if (!base) {
			free(in);
			return;
		}
		in[r] = &hoist_heap_wake_of(base, c->heap_bytes)->nb_in;
	}
	c->nb_in = in;
	c->nb_line = (struct hoist_heap_wake *)((char *)in[0] -
						offsetof(struct hoist_heap_wake, nb_in));
}

/* phase: the call site that names the phase which starts when this barrier
 * completes (the daemon prefetches that phase's gets). */
int hoist__barrier_notify(struct hoist_ctx *c, uint64_t phase)
{
	if (!c->initialized)
		return -ENOTCONN;
	if (c->barrier_pending)
		return -EINVAL; /* notify twice without a wait */
	if (c->nb_line)
		return node_notify(c, phase);
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
	if (c->nb_armed) {
		c->nb_armed = 0;
		int rc = hoist__wait_node_barrier(c, c->nb_k);
		if (rc == 0) { /* the daemon starts the next phase when it counted */
			c->pf_gen++;
			c->pf_cursor = 0;
			c->barriers_node++;
		}
		return rc;
	}
	int rc = hoist__wait_epoch(c, c->barrier_target);
	if (rc == 0) { /* the daemon started the next phase with the barrier */
		c->pf_gen++;
		c->pf_cursor = 0;
		c->barriers_epoch++;
	}
	hoist__reap(c);
	if (!rc && c->sticky_err) { /* e.g. the daemon rejected the notify */
		rc = c->sticky_err;
		c->sticky_err = 0;
	}
	if (!rc && c->barrier_target == 1) /* the job's first barrier */
		node_barrier_setup(c);
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
