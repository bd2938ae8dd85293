/*
 * SPSC ring semantics of the shared-memory ABI (shm/hoist_shm.h only):
 * layout, wrap-around of the free-running 32-bit counters, full/empty, and
 * a producer and a consumer in two processes sharing a memfd; and the
 * client's doorbell (client/ring.h): once per sleep of the daemon.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <sched.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hoist_shm.h"
#include "ring.h" /* client/ring.h: the client's side, for the doorbell */
#include "ring_util.h"
#include <sys/eventfd.h>

/* ---- layout ------------------------------------------------------------ */

START_TEST(test_layout_sqe_cqe)
{
	ck_assert_uint_eq(sizeof(struct hoist_sqe), 64);
	ck_assert_uint_eq(offsetof(struct hoist_sqe, opcode), 0);
	ck_assert_uint_eq(offsetof(struct hoist_sqe, flags), 1);
	ck_assert_uint_eq(offsetof(struct hoist_sqe, reserved0), 2);
	ck_assert_uint_eq(offsetof(struct hoist_sqe, pe), 4);
	ck_assert_uint_eq(offsetof(struct hoist_sqe, user_data), 8);
	ck_assert_uint_eq(offsetof(struct hoist_sqe, seg), 16);
	ck_assert_uint_eq(offsetof(struct hoist_sqe, reserved1), 20);
	ck_assert_uint_eq(offsetof(struct hoist_sqe, remote_off), 24);
	ck_assert_uint_eq(offsetof(struct hoist_sqe, len), 32);
	ck_assert_uint_eq(offsetof(struct hoist_sqe, local_off), 40);
	ck_assert_uint_eq(offsetof(struct hoist_sqe, inline_data), 48);
	ck_assert_uint_eq(sizeof(((struct hoist_sqe *)0)->inline_data), HOIST_INLINE_MAX);

	ck_assert_uint_eq(sizeof(struct hoist_cqe), 32);
	ck_assert_uint_eq(offsetof(struct hoist_cqe, user_data), 0);
	ck_assert_uint_eq(offsetof(struct hoist_cqe, res), 8);
	ck_assert_uint_eq(offsetof(struct hoist_cqe, opcode), 12);
	ck_assert_uint_eq(offsetof(struct hoist_cqe, flags), 14);
	ck_assert_uint_eq(offsetof(struct hoist_cqe, data), 16);
	ck_assert_uint_eq(sizeof(((struct hoist_cqe *)0)->data), HOIST_CQE_DATA_MAX);
	/* Ring slots never straddle cache lines. */
	ck_assert_uint_eq(HOIST_CACHELINE % sizeof(struct hoist_sqe), 0);
	ck_assert_uint_eq(HOIST_CACHELINE % sizeof(struct hoist_cqe), 0);
	/* A zeroed descriptor is never valid; flag mask is the union. */
	ck_assert_int_eq(HOIST_OP_INVALID, 0);
	ck_assert_uint_eq(HOIST_SQE_F__ALL,
			  HOIST_SQE_F_INLINE | HOIST_SQE_F_LOCAL_HEAP | HOIST_SQE_F_CQE | HOIST_SQE_F_AGG |
				  HOIST_SQE_F_SIGNAL | HOIST_SQE_F_LAZY);
}
END_TEST

START_TEST(test_layout_ctrl)
{
	ck_assert_uint_le(sizeof(struct hoist_ctrl), HOIST_CTRL_BYTES);
	ck_assert_uint_eq(alignof(struct hoist_ctrl), HOIST_CACHELINE);
	ck_assert_uint_eq(offsetof(struct hoist_ctrl, magic), 0);
	/* The immutable header fits line 0. */
	ck_assert_uint_le(offsetof(struct hoist_ctrl, ring_bytes) + sizeof(uint64_t), HOIST_CACHELINE);

	size_t offs[] = {
		offsetof(struct hoist_ctrl, sq_head),  offsetof(struct hoist_ctrl, sq_tail),
		offsetof(struct hoist_ctrl, sq_flags), offsetof(struct hoist_ctrl, cq_head),
		offsetof(struct hoist_ctrl, cq_tail),  offsetof(struct hoist_ctrl, cq_flags),
		offsetof(struct hoist_ctrl, barrier_epoch),
	};
	size_t n = sizeof(offs) / sizeof(offs[0]);
	for (size_t i = 0; i < n; i++) {
		/* Each shared word starts its own line ... */
		ck_assert_uint_eq(offs[i] % HOIST_CACHELINE, 0);
		/* ... never line 0 (read-only header) ... */
		ck_assert_uint_ge(offs[i] / HOIST_CACHELINE, 1);
		/* ... and no two share a line. */
		for (size_t j = i + 1; j < n; j++)
			ck_assert_uint_ne(offs[i] / HOIST_CACHELINE, offs[j] / HOIST_CACHELINE);
	}
	ck_assert_uint_eq(offsetof(struct hoist_ctrl, sq_head), 64);
	ck_assert_uint_eq(offsetof(struct hoist_ctrl, sq_tail), 128);
	/* job_error rides with barrier_epoch (same futex line). */
	ck_assert_uint_eq(offsetof(struct hoist_ctrl, job_error) / HOIST_CACHELINE,
			  offsetof(struct hoist_ctrl, barrier_epoch) / HOIST_CACHELINE);
}
END_TEST

START_TEST(test_geometry)
{
	ck_assert_uint_eq(hoist_ring_sq_off(), HOIST_CTRL_BYTES);
	uint32_t ns[] = {8, 64, 1024, 65536};
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		uint32_t sq = ns[i], cq = ns[i] * 2;
		uint64_t cq_off = hoist_ring_cq_off(sq);
		uint64_t bytes = hoist_ring_bytes(sq, cq);
		ck_assert_uint_eq(cq_off, HOIST_CTRL_BYTES + 64ull * sq);
		ck_assert_uint_eq(cq_off % HOIST_CACHELINE, 0);
		ck_assert_uint_eq(bytes % 4096, 0);
		ck_assert_uint_ge(bytes, cq_off + sizeof(struct hoist_cqe) * cq);
		ck_assert_uint_lt(bytes, cq_off + sizeof(struct hoist_cqe) * cq + 4096);
	}
	ck_assert(!hoist_is_pow2(0));
	ck_assert(hoist_is_pow2(1));
	ck_assert(hoist_is_pow2(1u << 31));
	ck_assert(!hoist_is_pow2(3));
	ck_assert(!hoist_is_pow2(1000));

	ck_assert(hoist_range_ok(0, 0, 0));
	ck_assert(hoist_range_ok(0, 100, 100));
	ck_assert(!hoist_range_ok(1, 100, 100));
	ck_assert(!hoist_range_ok(101, 0, 100));
	ck_assert(!hoist_range_ok(UINT64_MAX, 2, 100));
	ck_assert(!hoist_range_ok(50, UINT64_MAX - 10, 100));
	ck_assert(hoist_range_ok(100, 0, 100));
}
END_TEST

START_TEST(test_ring_space_wrap)
{
	ck_assert_uint_eq(hoist_ring_space(0, 0, 8), 8);
	ck_assert_uint_eq(hoist_ring_space(0, 8, 8), 0);
	ck_assert_uint_eq(hoist_ring_space(0xFFFFFFFCu, 0xFFFFFFFCu, 8), 8);
	ck_assert_uint_eq(hoist_ring_space(0xFFFFFFFCu, 0x00000002u, 8), 2); /* 6 used across wrap */
	ck_assert_uint_eq(hoist_ring_space(0xFFFFFFFCu, 0x00000004u, 8), 0);
}
END_TEST

/* ---- single process semantics ----------------------------------------- */

static void make_sqe(struct hoist_sqe *e, uint64_t seq)
{
	memset(e, 0, sizeof(*e));
	e->opcode = (uint8_t)(1 + seq % (HOIST_OP__COUNT - 1));
	e->flags = (seq % 16 == 0) ? HOIST_SQE_F_CQE : 0;
	e->pe = (int32_t)(uint32_t)(seq * 7);
	e->user_data = seq;
	e->seg = (uint32_t)(seq >> 3);
	e->remote_off = seq * 0x9E3779B97F4A7C15ull;
	e->len = seq ^ 0xabcdefull;
	e->local_off = ~seq;
	for (unsigned k = 0; k < HOIST_INLINE_MAX; k++)
		e->inline_data[k] = (uint8_t)(seq + k * 31);
}

static struct test_ring ring;

static void ring_setup_at(uint32_t sq_n, uint32_t cq_n, uint32_t start)
{
	int rc = test_ring_create(&ring, sq_n, cq_n, start);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq((uintptr_t)ring.sq % HOIST_CACHELINE, 0);
	ck_assert_uint_eq((uintptr_t)ring.cq % HOIST_CACHELINE, 0);
	ck_assert_ptr_eq((char *)ring.sq, (char *)ring.ctrl + HOIST_CTRL_BYTES);
	ck_assert_ptr_eq((char *)ring.cq, (char *)ring.sq + 64 * sq_n);
}

START_TEST(test_empty)
{
	ring_setup_at(8, 16, 0);
	struct hoist_sqe e;
	struct hoist_cqe c;
	ck_assert_int_eq(sq_pop(&ring, &e), -EAGAIN);
	ck_assert_int_eq(cq_pop(&ring, &c), -EAGAIN);
	struct hoist_sqe in;
	make_sqe(&in, 5);
	ck_assert_int_eq(sq_push(&ring, &in), 0);
	ck_assert_int_eq(sq_pop(&ring, &e), 0);
	ck_assert_mem_eq(&e, &in, sizeof(e));
	ck_assert_int_eq(sq_pop(&ring, &e), -EAGAIN);
	ck_assert_uint_eq(ring.ctrl->sq_head, 1);
	ck_assert_uint_eq(ring.ctrl->sq_tail, 1);
	test_ring_destroy(&ring);
}
END_TEST

static void fill_and_check_full(uint32_t start)
{
	ring_setup_at(8, 16, start);
	struct hoist_sqe e, out;
	for (uint64_t i = 0; i < 8; i++) {
		ck_assert_uint_eq(hoist_ring_space(ring.ctrl->sq_head, ring.ctrl->sq_tail, 8), 8 - i);
		make_sqe(&e, i);
		ck_assert_int_eq(sq_push(&ring, &e), 0);
	}
	ck_assert_uint_eq(hoist_ring_space(ring.ctrl->sq_head, ring.ctrl->sq_tail, 8), 0);
	make_sqe(&e, 99);
	ck_assert_int_eq(sq_push(&ring, &e), -EAGAIN);
	ck_assert_uint_eq(ring.ctrl->sq_tail, start + 8); /* refused push did not move it */
	/* The refused push did not overwrite the oldest slot. */
	ck_assert_int_eq(sq_pop(&ring, &out), 0);
	ck_assert_uint_eq(out.user_data, 0);
	ck_assert_int_eq(sq_push(&ring, &e), 0);
	ck_assert_int_eq(sq_push(&ring, &e), -EAGAIN);
	for (uint64_t i = 1; i < 8; i++) {
		ck_assert_int_eq(sq_pop(&ring, &out), 0);
		ck_assert_uint_eq(out.user_data, i);
	}
	ck_assert_int_eq(sq_pop(&ring, &out), 0);
	ck_assert_uint_eq(out.user_data, 99);
	ck_assert_int_eq(sq_pop(&ring, &out), -EAGAIN);
	test_ring_destroy(&ring);
}

START_TEST(test_full)
{
	fill_and_check_full(0);
}
END_TEST

START_TEST(test_full_across_wrap)
{
	fill_and_check_full(0xFFFFFFFCu); /* full state straddles 2^32 */
}
END_TEST

START_TEST(test_wrap_counters)
{
	/* 0xFFFFFF00: 256 entries before the counters wrap; move 1000 through
	 * a ring of 16 in uneven bursts so every slot index and the 32-bit
	 * wrap are crossed with the ring partly full. */
	ring_setup_at(16, 32, 0xFFFFFF00u);
	struct hoist_sqe e, out;
	struct hoist_cqe c, cout;
	uint64_t pushed = 0, popped = 0;
	int crossed = 0;
	while (popped < 1000) {
		unsigned burst = 1 + (unsigned)(pushed % 13);
		for (unsigned k = 0; k < burst && pushed < 1000; k++) {
			make_sqe(&e, pushed);
			if (sq_push(&ring, &e) != 0)
				break;
			memset(&c, 0, sizeof(c));
			c.user_data = pushed;
			c.res = -(int32_t)(pushed % 100);
			c.opcode = e.opcode;
			ck_assert_int_eq(cq_push(&ring, &c), 0); /* cq is larger: never full here */
			pushed++;
		}
		ck_assert_uint_le(pushed - popped, 16);
		unsigned drain = 1 + (unsigned)(popped % 7);
		for (unsigned k = 0; k < drain; k++) {
			if (sq_pop(&ring, &out) != 0)
				break;
			make_sqe(&e, popped);
			ck_assert_mem_eq(&out, &e, sizeof(e));
			ck_assert_int_eq(cq_pop(&ring, &cout), 0);
			ck_assert_uint_eq(cout.user_data, popped);
			ck_assert_int_eq(cout.res, -(int32_t)(popped % 100));
			popped++;
		}
		if (ring.ctrl->sq_head < 0x1000)
			crossed = 1;
	}
	ck_assert(crossed);
	ck_assert_uint_eq(ring.ctrl->sq_head, (uint32_t)(0xFFFFFF00u + 1000));
	ck_assert_uint_eq(ring.ctrl->sq_tail, (uint32_t)(0xFFFFFF00u + 1000));
	ck_assert_uint_eq(ring.ctrl->cq_head, (uint32_t)(0xFFFFFF00u + 1000));
	ck_assert_int_eq(sq_pop(&ring, &out), -EAGAIN);
	test_ring_destroy(&ring);
}
END_TEST

/* ---- two processes ---------------------------------------------------- */

#define XPROC_N 2000000u
#define XPROC_SQ 256u
#define XPROC_CQ 512u

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void backoff(unsigned *spins)
{
	if (++*spins < 64)
		hoist_cpu_relax();
	else {
		*spins = 0;
		sched_yield();
	}
}

struct xproc_result {
	uint64_t count;
	uint64_t checksum;
	uint64_t bad_seq; /* first mismatching sequence + 1, 0 if none */
};

static void consumer(struct test_ring *r, int wfd)
{
	struct xproc_result res = {0, 0xcbf29ce484222325ull, 0};
	struct hoist_sqe got, want;
	unsigned spins = 0;
	while (res.count < XPROC_N) {
		if (sq_pop(r, &got) != 0) {
			backoff(&spins);
			continue;
		}
		spins = 0;
		make_sqe(&want, res.count);
		if (!res.bad_seq && memcmp(&got, &want, sizeof(got)) != 0)
			res.bad_seq = res.count + 1;
		res.checksum = mix(res.checksum, &got, sizeof(got));
		if (got.flags & HOIST_SQE_F_CQE) {
			struct hoist_cqe c = {.user_data = got.user_data, .res = 0, .opcode = got.opcode};
			while (cq_push(r, &c) != 0)
				backoff(&spins);
		}
		res.count++;
	}
	/* Nothing beyond N may appear. */
	usleep(1000);
	if (sq_pop(r, &got) == 0)
		res.count++;
	ssize_t w = write(wfd, &res, sizeof(res));
	_exit(w == (ssize_t)sizeof(res) ? 0 : 3);
}

START_TEST(test_two_processes)
{
	/* Counters start 1000 before 2^32 so the run crosses the wrap. */
	ring_setup_at(XPROC_SQ, XPROC_CQ, 0xFFFFFFFFu - 1000);
	int pfd[2];
	ck_assert_int_eq(pipe(pfd), 0);
	pid_t parent = getpid();
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* Never outlive the test (Check kills the test process on timeout). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(4);
		alarm(60);
		close(pfd[0]);
		/* Use a fresh mapping of the memfd, not the inherited one, so the
		 * two sides really are two mappings of one shared file. */
		struct test_ring mine = ring;
		void *p = mmap(NULL, ring.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ring.fd, 0);
		if (p == MAP_FAILED)
			_exit(5);
		munmap(ring.ctrl, ring.bytes);
		mine.ctrl = p;
		mine.sq = hoist_ctrl_sq(mine.ctrl);
		mine.cq = hoist_ctrl_cq(mine.ctrl);
		if (mine.ctrl->magic != HOIST_SHM_MAGIC || mine.ctrl->sq_entries != XPROC_SQ)
			_exit(6);
		consumer(&mine, pfd[1]);
	}
	close(pfd[1]);

	uint64_t checksum = 0xcbf29ce484222325ull;
	uint64_t cqe_expect = 0, cqes = 0, cqe_bad = 0;
	unsigned spins = 0;
	struct hoist_sqe e;
	struct hoist_cqe c;
	for (uint64_t i = 0; i < XPROC_N; i++) {
		make_sqe(&e, i);
		checksum = mix(checksum, &e, sizeof(e));
		while (sq_push(&ring, &e) != 0) {
			/* Drain completions while waiting, else both sides can block. */
			while (cq_pop(&ring, &c) == 0) {
				if (c.user_data != cqe_expect)
					cqe_bad++;
				cqe_expect += 16;
				cqes++;
			}
			backoff(&spins);
		}
	}
	while (cqes < XPROC_N / 16) {
		if (cq_pop(&ring, &c) == 0) {
			if (c.user_data != cqe_expect)
				cqe_bad++;
			cqe_expect += 16;
			cqes++;
		} else {
			backoff(&spins);
		}
	}

	struct xproc_result res;
	ssize_t n = read(pfd[0], &res, sizeof(res));
	close(pfd[0]);
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "consumer status 0x%x", status);
	ck_assert_int_eq(n, (ssize_t)sizeof(res));
	ck_assert_msg(res.bad_seq == 0, "consumer saw wrong SQE at seq %llu",
		      (unsigned long long)(res.bad_seq - 1));
	ck_assert_uint_eq(res.count, XPROC_N);
	ck_assert_uint_eq(res.checksum, checksum);
	ck_assert_uint_eq(cqe_bad, 0);
	ck_assert_uint_eq(cqes, XPROC_N / 16);
	ck_assert_int_eq(cq_pop(&ring, &c), -EAGAIN);
	uint32_t end = (uint32_t)(0xFFFFFFFFu - 1000 + XPROC_N);
	ck_assert_uint_eq(ring.ctrl->sq_head, end);
	ck_assert_uint_eq(ring.ctrl->sq_tail, end);
	ck_assert_uint_eq(ring.ctrl->cq_tail, (uint32_t)(0xFFFFFFFFu - 1000 + XPROC_N / 16));
	test_ring_destroy(&ring);
}
END_TEST

/* ---- doorbell ---------------------------------------------------------- */

/* Doorbells the client rang since the last look (the eventfd's counter). */
static uint64_t rung(int efd)
{
	uint64_t v = 0;
	return read(efd, &v, sizeof(v)) == (ssize_t)sizeof(v) ? v : 0;
}

static void post(struct hoist_ring *r, int n)
{
	for (int i = 0; i < n; i++) {
		struct hoist_sqe *sqe;
		ck_assert_int_eq(hoist_ring_sqe_get(r, &sqe), 0);
		*sqe = (struct hoist_sqe){.opcode = HOIST_OP_NOP};
		hoist_ring_submit(r);
		r->sq_head_seen = r->sq_tail; /* as if the daemon took it */
	}
}

/* While the daemon sleeps (HOIST_SQ_NEED_WAKEUP) a client rings once,
 * however many descriptors it posts and waits it starts (hoist_ring_kick);
 * once more for each new sleep (the daemon bumps HOIST_SQ_SLEEP_GEN); never
 * while it is awake. Issue 16: a put stream to a daemon that had no CPU to
 * wake up on paid a write(2) per put. */
START_TEST(test_doorbell_once_per_sleep)
{
	alignas(HOIST_CACHELINE) static struct hoist_ctrl ctrl;
	alignas(HOIST_CACHELINE) static struct hoist_sqe sq[8];
	memset(&ctrl, 0, sizeof(ctrl));
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(efd, 0);
	struct hoist_ring r = {.ctrl = &ctrl, .sq = sq, .sq_mask = 7, .doorbell = efd};

	post(&r, 5); /* awake */
	hoist_ring_kick(&r);
	ck_assert_uint_eq(rung(efd), 0);

	/* the daemon goes to sleep (progress.c set_need_wakeup) */
	ctrl.sq_flags = (ctrl.sq_flags + HOIST_SQ_SLEEP_GEN) | HOIST_SQ_NEED_WAKEUP;
	post(&r, 100);
	hoist_ring_kick(&r);
	post(&r, 100);
	ck_assert_uint_eq(rung(efd), 1);

	/* it woke (read the eventfd, cleared the flag) and sleeps again */
	ctrl.sq_flags &= ~HOIST_SQ_NEED_WAKEUP;
	post(&r, 3);
	ck_assert_uint_eq(rung(efd), 0);
	ctrl.sq_flags = (ctrl.sq_flags + HOIST_SQ_SLEEP_GEN) | HOIST_SQ_NEED_WAKEUP;
	hoist_ring_kick(&r);
	post(&r, 100);
	ck_assert_uint_eq(rung(efd), 1);
	close(efd);
}
END_TEST

/* SQE and CQE publication by phase (hoist_shm.h): a slot is ready for
 * index i exactly when it was published for i, over several laps and
 * across the 32-bit wrap; a zeroed ring holds nothing; the caller's own
 * HOIST_SQE_F_PHASE bit does not matter; the client's ring (client/ring.h)
 * publishes by phase, and sq_tail is not what says so. */
START_TEST(test_phase_publication)
{
	alignas(HOIST_CACHELINE) static struct hoist_ctrl ctrl;
	alignas(HOIST_CACHELINE) static struct hoist_sqe sq[8];
	alignas(HOIST_CACHELINE) static struct hoist_cqe cq[8];
	memset(&ctrl, 0, sizeof(ctrl));
	memset(sq, 0, sizeof(sq));
	memset(cq, 0, sizeof(cq));
	const uint32_t n = 8;
	for (uint32_t i = 0; i < n; i++) {
		ck_assert(!hoist_sqe_ready(&sq[i], i, n));
		ck_assert(!hoist_cqe_ready(&cq[i], i, n));
	}
	/* the client's ring, its counters two laps short of the wrap (a lap's
	 * start, as 0 is: where a zeroed slot does not look published) */
	uint32_t start = 0xFFFFFFF0u;
	struct hoist_ring r = {.ctrl = &ctrl, .sq = sq, .sq_mask = n - 1, .doorbell = -1};
	r.sq_tail = r.sq_head_seen = start;
	for (uint32_t k = 0; k < 5 * n; k++) {
		uint32_t i = start + k;
		struct hoist_sqe *e;
		ck_assert_int_eq(hoist_ring_sqe_get(&r, &e), 0);
		ck_assert_ptr_ne(e, &sq[i & (n - 1)]); /* filled aside, not in place */
		*e = (struct hoist_sqe){.opcode = HOIST_OP_NOP, .user_data = i,
					/* whatever the caller says */
					.flags = (uint8_t)((k & 1) ? HOIST_SQE_F_PHASE : 0)};
		ck_assert(!hoist_sqe_ready(&sq[i & (n - 1)], i, n));
		hoist_ring_publish(&r);
		ck_assert(hoist_sqe_ready(&sq[i & (n - 1)], i, n));
		ck_assert_uint_eq(sq[i & (n - 1)].user_data, i);
		ck_assert_uint_eq(sq[i & (n - 1)].opcode, HOIST_OP_NOP);
		/* one lap on, the same slot is not ready yet */
		ck_assert(!hoist_sqe_ready(&sq[i & (n - 1)], i + n, n));
		ck_assert(!hoist_sqe_ready(&sq[(i + 1) & (n - 1)], i + 1, n)); /* next: not yet */
		r.sq_head_seen = r.sq_tail; /* as if the daemon took it */

		/* a CQE as the daemon publishes it (complete.c cq_flush):
		 * the word with res, opcode and flags last */
		struct hoist_cqe *c = &cq[i & (n - 1)];
		ck_assert(!hoist_cqe_ready(c, i, n));
		struct hoist_cqe v = {.user_data = i, .res = 0, .opcode = HOIST_OP_NOP,
				      .flags = (uint16_t)(HOIST_CQE_F_DATA | hoist_cqe_phase(i, n))};
		c->user_data = v.user_data;
		__atomic_store_n(&c->word, v.word, __ATOMIC_RELEASE);
		ck_assert(hoist_cqe_ready(c, i, n));
		ck_assert(!hoist_cqe_ready(c, i + n, n));
		ck_assert(!hoist_cqe_ready(&cq[(i + 1) & (n - 1)], i + 1, n));
	}
	ck_assert_uint_eq(r.sq_tail, start + 5 * n); /* wrapped */
	ck_assert_uint_eq(ctrl.sq_tail, start + 5 * n);
	/* 2^32 is a whole number of laps: the parity runs on across the wrap */
	ck_assert_uint_eq(hoist_sqe_phase(0xFFFFFFFFu, n) ^ hoist_sqe_phase(0, n), HOIST_SQE_F_PHASE);
	ck_assert_uint_eq(hoist_sqe_phase(0xFFFFFFF8u, n) ^ hoist_sqe_phase(0, n), HOIST_SQE_F_PHASE);
	ck_assert_uint_eq(hoist_cqe_phase(0xFFFFFFFFu, n) ^ hoist_cqe_phase(0, n), HOIST_CQE_F_PHASE);
}
END_TEST

static Suite *ring_suite(void)
{
	Suite *s = suite_create("ring");
	TCase *tc = tcase_create("layout");
	tcase_add_test(tc, test_layout_sqe_cqe);
	tcase_add_test(tc, test_layout_ctrl);
	tcase_add_test(tc, test_geometry);
	tcase_add_test(tc, test_ring_space_wrap);
	suite_add_tcase(s, tc);

	tc = tcase_create("spsc");
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_full);
	tcase_add_test(tc, test_full_across_wrap);
	tcase_add_test(tc, test_wrap_counters);
	tcase_add_test(tc, test_phase_publication);
	suite_add_tcase(s, tc);

	tc = tcase_create("doorbell");
	tcase_add_test(tc, test_doorbell_once_per_sleep);
	suite_add_tcase(s, tc);

	tc = tcase_create("xproc");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_two_processes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int fd = memfd_create("hoist-probe", MFD_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "memfd_create: %s: skipping\n", strerror(errno));
		return 77;
	}
	close(fd);
	SRunner *sr = srunner_create(ring_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
