/* daemon/stages/validate.c validate_coll and daemon/stages/coll.c coll_combine: the
 * collective descriptor's checks and the element-wise reductions. */
#include <check.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>

#include "am.h"
#include "coll.h"
#include "daemon.h"
#include "hoist_shm.h"
#include "unit_util.h"
#include "validate.h"

#define HEAP (1ull << 20)

static const struct validate_geom geom = {.job_size = 4, .heap_bytes = HEAP, .staging_bytes = 4096};

static struct hoist_sqe coll(uint8_t kind, uint8_t type, uint8_t op, int32_t root, uint64_t len)
{
	struct hoist_sqe e;
	memset(&e, 0, sizeof(e));
	e.opcode = HOIST_OP_COLL;
	e.pe = root;
	e.remote_off = 4096;
	e.local_off = 8192;
	e.len = len;
	struct hoist_coll_args a = {.kind = kind, .type = type, .op = op};
	memcpy(e.inline_data, &a, sizeof(a));
	return e;
}

static int V(struct hoist_sqe e)
{
	return validate_coll(&e, &geom);
}

START_TEST(test_valid_kinds)
{
	ck_assert_int_eq(V(coll(HOIST_COLL_BROADCAST, 0, 0, 3, 100)), 0);
	ck_assert_int_eq(V(coll(HOIST_COLL_REDUCE, 4, 3, 0, 80)), 0);
	ck_assert_int_eq(V(coll(HOIST_COLL_ALLREDUCE, 0, 6, 0, 4)), 0);
	ck_assert_int_eq(V(coll(HOIST_COLL_ALLGATHER, 0, 0, 0, 1000)), 0);
	ck_assert_int_eq(V(coll(HOIST_COLL_ALLTOALL, 0, 0, 0, 1000)), 0);
	ck_assert_int_eq(V(coll(HOIST_COLL_ALLTOALL, 0, 0, 0, 0)), 0);
	struct hoist_sqe e = coll(HOIST_COLL_ALLREDUCE, 1, 0, 0, 8);
	e.flags = HOIST_SQE_F_CQE;
	ck_assert_int_eq(V(e), 0);
	/* validate_sqe lets every collective through to validate_coll */
	e.flags = 0xff;
	ck_assert_int_eq(validate_sqe(&e, &geom), 0);
}
END_TEST

START_TEST(test_invalid_fields)
{
	ck_assert_int_eq(V(coll(0, 0, 0, 0, 8)), -EINVAL);
	ck_assert_int_eq(V(coll(HOIST_COLL__COUNT, 0, 0, 0, 8)), -EINVAL);
	ck_assert_int_eq(V(coll(HOIST_COLL_BROADCAST, 0, 0, 4, 8)), -EINVAL);  /* root == size */
	ck_assert_int_eq(V(coll(HOIST_COLL_REDUCE, 0, 0, -1, 8)), -EINVAL);
	ck_assert_int_eq(V(coll(HOIST_COLL_ALLREDUCE, 0, 0, 1, 8)), -EINVAL);  /* root unused */
	ck_assert_int_eq(V(coll(HOIST_COLL_ALLREDUCE, 5, 0, 0, 8)), -EINVAL);  /* type */
	ck_assert_int_eq(V(coll(HOIST_COLL_ALLREDUCE, 0, 7, 0, 8)), -EINVAL);  /* op */
	ck_assert_int_eq(V(coll(HOIST_COLL_ALLREDUCE, 0, 0, 0, 6)), -EINVAL);  /* not whole int32s */
	ck_assert_int_eq(V(coll(HOIST_COLL_ALLREDUCE, 4, 0, 0, 12)), -EINVAL); /* not whole doubles */
	for (uint8_t t = 3; t <= 4; t++)
		for (uint8_t op = 4; op <= 6; op++)
			ck_assert_int_eq(V(coll(HOIST_COLL_ALLREDUCE, t, op, 0, 8)), -EINVAL);
	ck_assert_int_eq(V(coll(HOIST_COLL_ALLGATHER, 1, 0, 0, 8)), -EINVAL); /* type on a gather */
	struct hoist_sqe e = coll(HOIST_COLL_BROADCAST, 0, 0, 0, 8);
	e.flags = HOIST_SQE_F_INLINE;
	ck_assert_int_eq(V(e), -EINVAL);
	e = coll(HOIST_COLL_BROADCAST, 0, 0, 0, 8);
	e.seg = 1;
	ck_assert_int_eq(V(e), -EINVAL);
	e = coll(HOIST_COLL_BROADCAST, 0, 0, 0, 8);
	e.inline_data[4] = 1; /* reserved0 */
	ck_assert_int_eq(V(e), -EINVAL);
	e = coll(HOIST_COLL_BROADCAST, 0, 0, 0, 8);
	e.inline_data[3] = 0x80; /* unknown flag */
	ck_assert_int_eq(V(e), -EINVAL);
}
END_TEST

START_TEST(test_ranges)
{
	struct hoist_sqe e = coll(HOIST_COLL_BROADCAST, 0, 0, 0, HEAP - 8192);
	ck_assert_int_eq(V(e), 0);
	e.len++;
	ck_assert_int_eq(V(e), -EFAULT); /* src runs off the heap */
	e = coll(HOIST_COLL_ALLGATHER, 0, 0, 0, (HEAP - 4096) / 4);
	ck_assert_int_eq(V(e), 0); /* dst = 4 blocks */
	e.len++;
	ck_assert_int_eq(V(e), -EFAULT);
	e = coll(HOIST_COLL_ALLTOALL, 0, 0, 0, (HEAP - 8192) / 4);
	ck_assert_int_eq(V(e), 0);
	e.len = UINT64_MAX / 2; /* len * size overflows */
	ck_assert_int_eq(V(e), -EFAULT);
	e = coll(HOIST_COLL_ALLREDUCE, 0, 0, 0, 8);
	e.remote_off = UINT64_MAX; /* what the library sends for a pointer outside the heap */
	ck_assert_int_eq(V(e), -EFAULT);
}
END_TEST

START_TEST(test_random_never_out_of_bounds)
{
	uint64_t seed = 7;
	unsigned accepted = 0;
	for (int i = 0; i < 200000; i++) {
		struct hoist_sqe e;
		uint64_t w[8];
		for (int k = 0; k < 8; k++)
			w[k] = rng_next(&seed);
		memcpy(&e, w, sizeof(e));
		uint64_t r = rng_next(&seed);
		e.opcode = HOIST_OP_COLL;
		if (r & 1) {
			e.flags = 0;
			e.reserved0 = 0;
			e.reserved1 = 0;
			e.seg = 0;
			e.pe = (int32_t)((r >> 2) % 6) - 1;
			e.remote_off = (r >> 8) % HEAP;
			e.local_off = (r >> 28) % HEAP;
			e.len = (r >> 48) % 70000;
			struct hoist_coll_args a = {.kind = (uint8_t)(1 + (r >> 5) % 5),
						    .type = (uint8_t)((w[0] >> 3) % 6),
						    .op = (uint8_t)((w[0] >> 9) % 8)};
			if ((r >> 7) & 1)
				a.type = a.op = 0;
			memcpy(e.inline_data, &a, sizeof(a));
		}
		int rc = V(e);
		CHK(rc == 0 || rc == -EINVAL || rc == -EFAULT);
		if (rc)
			continue;
		accepted++;
		struct hoist_coll_args a;
		memcpy(&a, e.inline_data, sizeof(a));
		uint64_t blocks = a.kind == HOIST_COLL_ALLGATHER || a.kind == HOIST_COLL_ALLTOALL ? 4 : 1;
		uint64_t sblocks = a.kind == HOIST_COLL_ALLTOALL ? 4 : 1;
		CHK(e.remote_off + e.len * blocks <= HEAP);
		CHK(e.local_off + e.len * sblocks <= HEAP);
		CHK(e.pe >= 0 && e.pe < 4);
		if (a.kind == HOIST_COLL_REDUCE || a.kind == HOIST_COLL_ALLREDUCE) {
			CHK(a.type < 5 && a.op < 7);
			CHK(e.len % hoist_coll_type_size(a.type) == 0);
		}
	}
	ck_assert_uint_gt(accepted, 1000);
}
END_TEST

START_TEST(test_combine)
{
	int32_t a[4] = {1, -5, INT32_MAX, 7}, b[4] = {2, 3, 1, -7};
	coll_combine(0, 0, a, b, sizeof(a)); /* sum wraps */
	ck_assert_int_eq(a[0], 3);
	ck_assert_int_eq(a[1], -2);
	ck_assert_int_eq(a[2], INT32_MIN);
	ck_assert_int_eq(a[3], 0);
	int32_t m[2] = {-3, 4}, n[2] = {2, -9};
	coll_combine(0, 2, m, n, sizeof(m)); /* signed min */
	ck_assert_int_eq(m[0], -3);
	ck_assert_int_eq(m[1], -9);
	uint64_t u[2] = {0xf0f0f0f0f0f0f0f0ull, 1}, v[2] = {0xff00000000000000ull, UINT64_MAX};
	coll_combine(2, 4, u, v, sizeof(u)); /* and: all 64 bits */
	ck_assert(u[0] == 0xf000000000000000ull && u[1] == 1);
	coll_combine(2, 3, u, v, sizeof(u)); /* unsigned max */
	ck_assert(u[0] == 0xff00000000000000ull && u[1] == UINT64_MAX);
	int64_t x[1] = {-1}, y[1] = {0x0123456789abcdefll};
	coll_combine(1, 6, x, y, sizeof(x)); /* xor */
	ck_assert(x[0] == ~0x0123456789abcdefll);
	float f[2] = {1.5f, -2}, g[2] = {2, 4};
	coll_combine(3, 1, f, g, sizeof(f)); /* prod */
	ck_assert(f[0] == 3.0f && f[1] == -8.0f);
	double d[2] = {1, 5}, e[2] = {-1, 2};
	coll_combine(4, 3, d, e, sizeof(d)); /* max */
	ck_assert(d[0] == 1 && d[1] == 5);
	/* unaligned buffers */
	char buf[1 + 16], src[3 + 16];
	int64_t p = 40, q = 2;
	memcpy(buf + 1, &p, 8);
	memcpy(src + 3, &q, 8);
	coll_combine(1, 0, buf + 1, src + 3, 8);
	memcpy(&p, buf + 1, 8);
	ck_assert(p == 42);
}
END_TEST

/* x op y and y op x to the bit: two nodes of a recursive doubling step
 * compute both, and every PE must get the same result (-0.0 vs +0.0, NaN) */
START_TEST(test_minmax_commutative)
{
	double nan = __builtin_nan(""), dv[] = {0.0, -0.0, 1.0, -1.0, nan, -nan};
	float fv[] = {0.0f, -0.0f, 2.0f, -2.0f, __builtin_nanf(""), -__builtin_nanf("")};
	for (uint8_t op = 2; op <= 3; op++) {
		for (int i = 0; i < 6; i++) {
			for (int k = 0; k < 6; k++) {
				double a = dv[i], b = dv[k], x = a, y = b;
				coll_combine(4, op, &x, &b, 8);
				coll_combine(4, op, &y, &a, 8);
				ck_assert_msg(memcmp(&x, &y, 8) == 0, "double op %u: %g, %g", op, a, b);
				float fa = fv[i], fb = fv[k], fx = fa, fy = fb;
				coll_combine(3, op, &fx, &fb, 4);
				coll_combine(3, op, &fy, &fa, 4);
				ck_assert_msg(memcmp(&fx, &fy, 4) == 0, "float op %u: %g, %g", op, fa, fb);
				if (a != a || b != b) /* a NaN wins */
					ck_assert(x != x);
			}
		}
	}
	double z = 0.0, mz = -0.0;
	coll_combine(4, 2, &z, &mz, 8); /* min(+0, -0) = -0 */
	ck_assert(z == 0 && __builtin_signbit(z));
	z = -0.0, mz = 0.0;
	coll_combine(4, 3, &z, &mz, 8); /* max(-0, +0) = +0 */
	ck_assert(z == 0 && !__builtin_signbit(z));
}
END_TEST

/* ---- a node that loses its peer while sending ----------------------------
 * The tcp transport's am_send can find the peer unreachable on the spot
 * (connect fails at once: ENETUNREACH, EMFILE): peer_lost() then fails
 * every job on that node (job_fail -> coll_job_fail) before am_send
 * returns. The collective code that was sending must not have its state
 * freed under it. One local PE (rank 0), rank 1 on node 1. */
static struct job *lost_job;
static int lost_sends;

static int am_send_lost(struct daemon *d, int32_t node, uint8_t type, const void *ext,
			uint16_t hlen, const void *payload, uint64_t plen)
{
	(void)d, (void)node, (void)type, (void)ext, (void)hlen, (void)payload, (void)plen;
	if (lost_sends++ == 0)
		job_fail(lost_job, -ECONNRESET); /* what peer_lost() does */
	return -ECONNRESET;
}

static const struct transport_ops lost_xport = {.name = "lost", .am_send = am_send_lost};

static void run_peer_lost(uint8_t kind, uint8_t type, uint8_t op, uint64_t len)
{
	static struct daemon d;
	memset(&d, 0, sizeof(d));
	d.xport = &lost_xport;
	d.net.self = 0;
	d.cfg.coll_ring_bytes = 1u << 20;
	struct hoist_ctrl *ctrl = calloc(1, sizeof(*ctrl));
	struct hoist_cqe *cq = calloc(8, sizeof(*cq));
	char *heap = calloc(1, 4096);
	struct job *j = calloc(1, sizeof(*j));
	struct client *c = calloc(1, sizeof(*c));
	int32_t node_of[2] = {0, 1}, nodes[2] = {0, 1};
	struct client *pe[2] = {c, NULL};
	uint8_t gone[2] = {0, 0};
	ck_assert(ctrl && cq && heap && j && c);
	snprintf(j->key, sizeof(j->key), "lost");
	j->size = 2;
	j->heap_bytes = 4096;
	j->d = &d;
	j->node_of = node_of;
	j->pe = pe;
	j->pe_gone = gone;
	j->nodes = nodes;
	j->nnodes = 2;
	j->my_idx = 0;
	j->nlocal = 1;
	j->local = 1;
	j->prog_ready = 1;
	c->job = j;
	c->rank = 0;
	c->heap.base = heap;
	c->heap.bytes = 4096;
	c->ctrl = ctrl;
	c->cq = cq;
	c->cq_entries = 8;
	c->cq_mask = 7;
	lost_job = j;
	lost_sends = 0;

	struct hoist_sqe e = coll(kind, type, op, 0, len);
	e.remote_off = 0;
	e.local_off = 2048;
	e.user_data = 77;
	ck_assert_int_eq(coll_post(&d, c, &e), 0);
	ck_assert_int_ge(lost_sends, 1);
	ck_assert_int_eq(j->error, -ECONNRESET);
	/* exactly one completion, the failure */
	ck_assert_uint_eq(c->cq_tail, 1);
	ck_assert(cq[0].user_data == 77 && cq[0].res < 0 && cq[0].flags == HOIST_CQE_F_PHASE); /* published, lap 0 */
	coll_job_free(j);
	free(c);
	free(j);
	free(heap);
	free(cq);
	free(ctrl);
}

START_TEST(test_peer_lost_while_sending)
{
	/* freed memory reads as zeros: a use after free then acts on it (and
	 * fails) in the plain build too, not only under ASan */
	mallopt(M_PERTURB, 0x100);
	/* rounds: the send of a doubling step */
	run_peer_lost(HOIST_COLL_ALLREDUCE, 1, 0, 64);
	/* rounds: the header-only checks of a broadcast */
	run_peer_lost(HOIST_COLL_BROADCAST, 0, 0, 64);
	/* exchange: the stream to the other node */
	run_peer_lost(HOIST_COLL_ALLGATHER, 0, 0, 8);
	/* an invalid descriptor: the abort sent to every node */
	run_peer_lost(HOIST_COLL_ALLREDUCE, 3, 4, 64);
}
END_TEST

START_TEST(test_wire_checks)
{
	/* what a peer sends is checked before anything is buffered */
	coll_am_register();
	struct wire_coll h = {.job = 1, .seq = 0, .kind = HOIST_COLL_ALLREDUCE, .total = 100000};
	ck_assert(am_payload_ok(W_COLL, &h, sizeof(h), WIRE_AM_MAX_PAYLOAD));
	ck_assert(!am_payload_ok(W_COLL, &h, sizeof(h), WIRE_AM_MAX_PAYLOAD + 1));
	ck_assert(!am_payload_ok(W_COLL, &h, sizeof(h) - 1, 10));
	h.off = 99990;
	ck_assert(am_payload_ok(W_COLL, &h, sizeof(h), 10));
	ck_assert(!am_payload_ok(W_COLL, &h, sizeof(h), 11)); /* past the stream */
	h.off = UINT64_MAX - 4; /* off + plen overflows */
	ck_assert(!am_payload_ok(W_COLL, &h, sizeof(h), 10));
	struct wire_coll_abort a = {.job = 1, .seq = 3, .err = -EINVAL};
	ck_assert(am_payload_ok(W_COLL_ABORT, &a, sizeof(a), 0));
	ck_assert(!am_payload_ok(W_COLL_ABORT, &a, sizeof(a), 1));
	ck_assert(!am_payload_ok(W_COLL_ABORT, &a, sizeof(a) + 8, 0));
}
END_TEST

static Suite *coll_suite(void)
{
	Suite *s = suite_create("coll");
	TCase *tc = tcase_create("coll");
	tcase_add_test(tc, test_valid_kinds);
	tcase_add_test(tc, test_invalid_fields);
	tcase_add_test(tc, test_ranges);
	tcase_add_test(tc, test_random_never_out_of_bounds);
	tcase_add_test(tc, test_combine);
	tcase_add_test(tc, test_minmax_commutative);
	tcase_add_test(tc, test_wire_checks);
	tcase_add_test(tc, test_peer_lost_while_sending);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(coll_suite());
}
