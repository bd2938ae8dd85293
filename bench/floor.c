/*
 * The machine's floor: what one cache-line handoff between two processes
 * costs here, measured the same way hoist's rings hand data over (a
 * store-release of a counter, the other side spinning on a load-acquire).
 * Everything hoist does through shared memory is at least one such handoff
 * per direction, so the other rows are reported as multiples of it.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* One measurement gives up after this long (a machine so busy that the
 * two processes rarely run at the same time). hoist-bench runs three of
 * them while the other ranks wait in hoist_init(), which gives up after
 * the daemon's job_timeout_ms (30 s by default). */
#define FLOOR_MAX_NS (5ull * 1000 * 1000 * 1000)

/* Spins between liveness checks of the other process. */
#define FLOOR_CHECK_SPINS (1u << 24)

/* The one line that travels, and a separate line for the child's "I am
 * pinned and spinning" so the parent does not time the child's start-up. */

static int pick_two_cpus(const cpu_set_t *set, int *a, int *b)
{
	int n = 0;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++) {
		if (CPU_ISSET(c, set)) {
			if (n == 0)
				*a = c;
			else
				*b = c;
			n++;
		}
	}
	return n == 2 ? 0 : -ENOENT;
}

static void pin_to(int cpu)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	(void)sched_setaffinity(0, sizeof(one), &one);
}

/* Waits until *p == want; 0, or -ECHILD when the other side died. */
static int spin_until(const uint32_t *p, uint32_t want, pid_t other)
{
	uint32_t n = 0;
	while (bench_load_acquire(p) != want) {
		bench_cpu_relax();
		if (++n == FLOOR_CHECK_SPINS) {
			n = 0;
			if (other > 0 && waitpid(other, NULL, WNOHANG) != 0)
				return -ECHILD;
		}
	}
	return 0;
}

struct floor_sqe {
	_Alignas(BENCH_CACHELINE) uint64_t w[8];
};

struct floor_cqe {
	uint64_t user_data;
	uint64_t res;
};

#define FLOOR_RING 64u

struct floor_page {
	_Alignas(BENCH_CACHELINE) uint32_t seq;
	_Alignas(BENCH_CACHELINE) uint32_t child_ready;
	/* FLOOR_MODE_RING: the shape of hoist's rings, without any software */
	_Alignas(BENCH_CACHELINE) uint32_t sq_tail;
	_Alignas(BENCH_CACHELINE) uint32_t cq_tail;
	struct floor_sqe sq[FLOOR_RING];
	_Alignas(BENCH_CACHELINE) struct floor_cqe cq[FLOOR_RING];
	/* FLOOR_MODE_RING_4K: the responder copies 4 KiB from src into
	 * staging, the initiator copies staging out into dst */
	_Alignas(BENCH_CACHELINE) unsigned char staging[4096];
	_Alignas(BENCH_CACHELINE) unsigned char src[4096];
	_Alignas(BENCH_CACHELINE) unsigned char dst[4096];
};

#define FLOOR_PAGE_BYTES ((sizeof(struct floor_page) + 4095) & ~(size_t)4095)

/* One round trip, initiator side. Returns 0 or -ECHILD. */
static int rt_initiator(struct floor_page *pg, int mode, uint64_t i, pid_t child)
{
	if (mode == FLOOR_MODE_LINE) {
		bench_store_release(&pg->seq, (uint32_t)(2 * i + 1));
		return spin_until(&pg->seq, (uint32_t)(2 * i + 2), child);
	}
	/* Write a descriptor, publish the tail; wait for the completion's
	 * tail, read the completion. */
	struct floor_sqe *e = &pg->sq[i & (FLOOR_RING - 1)];
	for (int k = 0; k < 8; k++)
		e->w[k] = i + (uint64_t)k;
	bench_store_release(&pg->sq_tail, (uint32_t)(i + 1));
	int rc = spin_until(&pg->cq_tail, (uint32_t)(i + 1), child);
	if (rc == 0 && __atomic_load_n(&pg->cq[i & (FLOOR_RING - 1)].user_data, __ATOMIC_RELAXED) != i)
		rc = -EIO;
	if (rc == 0 && mode == FLOOR_MODE_RING_4K) {
		memcpy(pg->dst, pg->staging, sizeof(pg->dst));
		if (pg->dst[i & 4095] != (unsigned char)(i + (i & 4095)))
			rc = -EIO;
	}
	return rc;
}

/* One round trip, responder side. */
static int rt_responder(struct floor_page *pg, int mode, uint64_t i)
{
	if (mode == FLOOR_MODE_LINE) {
		if (spin_until(&pg->seq, (uint32_t)(2 * i + 1), 0) < 0)
			return -ECHILD;
		bench_store_release(&pg->seq, (uint32_t)(2 * i + 2));
		return 0;
	}
	if (spin_until(&pg->sq_tail, (uint32_t)(i + 1), 0) < 0)
		return -ECHILD;
	struct floor_sqe copy;
	memcpy(&copy, &pg->sq[i & (FLOOR_RING - 1)], sizeof(copy));
	if (mode == FLOOR_MODE_RING_4K) {
		pg->src[i & 4095] = (unsigned char)(i + (i & 4095)); /* changes every trip */
		memcpy(pg->staging, pg->src, sizeof(pg->staging));
	}
	struct floor_cqe *c = &pg->cq[i & (FLOOR_RING - 1)];
	c->user_data = copy.w[0];
	c->res = copy.w[7] - copy.w[0];
	bench_store_release(&pg->cq_tail, (uint32_t)(i + 1));
	return 0;
}

int floor_pingpong(const struct floor_opts *o, double *rt_ns, char *cpus, size_t cpus_len)
{
	if (o->iters <= 0 || o->reps <= 0 || o->warmup < 0)
		return -EINVAL;
	/* Counter values go up to 2 * total; keep them inside uint32_t. */
	uint64_t total = (uint64_t)o->warmup + (uint64_t)o->iters * (uint64_t)o->reps;
	if (total >= 0x7fffffffu)
		return -ERANGE;

	struct floor_page *pg = mmap(NULL, FLOOR_PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (pg == MAP_FAILED)
		return -errno;
	memset(pg, 0, sizeof(*pg));
	if (o->mode != FLOOR_MODE_LINE && o->mode != FLOOR_MODE_RING && o->mode != FLOOR_MODE_RING_4K) {
		munmap(pg, FLOOR_PAGE_BYTES);
		return -EINVAL;
	}

	cpu_set_t saved;
	int pinned = 0, ca = -1, cb = -1;
	if (sched_getaffinity(0, sizeof(saved), &saved) == 0) {
		/* On one CPU every handoff is a context switch: not a floor,
		 * and slow enough to stall the job for minutes. */
		if (CPU_COUNT(&saved) < 2) {
			munmap(pg, FLOOR_PAGE_BYTES);
			return -ENODEV;
		}
		if (o->pin && pick_two_cpus(&saved, &ca, &cb) == 0)
			pinned = 1;
	}
	if (pinned)
		snprintf(cpus, cpus_len, "cpu%d/cpu%d", ca, cb);
	else
		snprintf(cpus, cpus_len, "unpinned");

	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int err = -errno;
		munmap(pg, FLOOR_PAGE_BYTES);
		return err;
	}
	if (pid == 0) {
		/* Child: answer every odd value v with v + 1; dies with the parent. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		if (pinned)
			pin_to(cb);
		bench_store_release(&pg->child_ready, 1);
		for (uint64_t i = 0; i < total; i++)
			if (rt_responder(pg, o->mode, i) < 0)
				_exit(1);
		_exit(0);
	}

	if (pinned)
		pin_to(ca);
	int err = spin_until(&pg->child_ready, 1, pid);
	uint64_t deadline = bench_now_ns() + FLOOR_MAX_NS;
	uint64_t i = 0;
	for (long w = 0; err == 0 && w < o->warmup; w++, i++) {
		err = rt_initiator(pg, o->mode, i, pid);
		if ((w & 1023) == 1023 && bench_now_ns() > deadline)
			err = -ETIMEDOUT;
	}
	for (int r = 0; err == 0 && r < o->reps; r++) {
		uint64_t t0 = bench_now_ns();
		for (long k = 0; err == 0 && k < o->iters; k++, i++) {
			err = rt_initiator(pg, o->mode, i, pid);
			if ((k & 1023) == 1023 && bench_now_ns() > deadline)
				err = -ETIMEDOUT;
		}
		uint64_t t1 = bench_now_ns();
		rt_ns[r] = (double)(t1 - t0) / (double)o->iters;
	}

	if (err < 0)
		kill(pid, SIGKILL); /* also ends a child still spinning */
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (err == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		err = -ECHILD;
	if (pinned)
		(void)sched_setaffinity(0, sizeof(saved), &saved);
	munmap(pg, FLOOR_PAGE_BYTES);
	return err;
}

int floor_memcpy(size_t len, int reps, double *gbps)
{
	if (len == 0 || reps <= 0)
		return -EINVAL;
	char *a = aligned_alloc(64, len), *b = aligned_alloc(64, len);
	if (!a || !b) {
		free(a);
		free(b);
		return -ENOMEM;
	}
	memset(a, 0x5a, len);
	memset(b, 0, len);
	/* About 64 MiB per rep, at least 16 copies. */
	size_t n = (64u << 20) / len;
	if (n < 16)
		n = 16;
	for (size_t k = 0; k < n / 4 + 1; k++)
		memcpy(b, a, len);
	for (int r = 0; r < reps; r++) {
		uint64_t t0 = bench_now_ns();
		for (size_t k = 0; k < n; k++) {
			a[0] = (char)k;
			memcpy(b, a, len);
			__asm__ __volatile__("" : : "r"(b) : "memory");
		}
		uint64_t t1 = bench_now_ns();
		gbps[r] = (double)len * (double)n / (double)(t1 - t0);
	}
	int ok = b[0] == a[0];
	free(a);
	free(b);
	return ok ? 0 : -EIO;
}
