/* daemon/transport.h: every transport runs the kinds it implements and
 * refuses any other one with an error, counted in xp_kind_refused, before
 * it touches memory, a peer or a queue: an unknown kind is never executed
 * as a get (or a put). Same-node (self), tcp and the pack builder; verbs:
 * test_verbs.c. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "net.h"
#include "pack.h"
#include "transport.h"
#include "unit_util.h"

#define HEAP 256u
#define NO_KIND ((enum xp_kind)99) /* no value of the enum */

/* Two PEs of one job on this node: rank 0 (the requester) and rank 1. */
struct fixture {
	struct daemon d;
	struct job j;
	struct client c0, c1, *pes[2];
	char h0[HEAP], h1[HEAP], stage[HEAP];
};

static void setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->j.id = 7;
	f->j.size = 2;
	f->j.pe = f->pes;
	f->pes[0] = &f->c0;
	f->pes[1] = &f->c1;
	f->c0.job = f->c1.job = &f->j;
	f->c1.rank = 1;
	f->c0.heap = (struct region){.fd = -1, .base = f->h0, .bytes = HEAP};
	f->c0.staging = (struct region){.fd = -1, .base = f->stage, .bytes = HEAP};
	f->c1.heap = (struct region){.fd = -1, .base = f->h1, .bytes = HEAP};
	memset(f->h0, 'a', HEAP);
	memset(f->stage, 's', HEAP);
	memset(f->h1, 'b', HEAP);
}

/* 16 bytes between rank 0's staging at 0 and rank 1's heap at 32 */
static const struct hoist_sqe sqe16 = {.opcode = HOIST_OP_GET, .pe = 1, .remote_off = 32, .len = 16};

static int all(const char *p, char ch, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ch)
			return 0;
	return 1;
}

/* The harness itself: a get and a put do run through self. */
START_TEST(test_self_put_get)
{
	static struct fixture f;
	setup(&f);
	int err = 0;
	ck_assert_int_eq(self_transport.rma(&f.d, &f.c0, XP_GET, &sqe16, 0, NULL, &err), XP_DONE);
	ck_assert(all(f.stage, 'b', 16));
	memset(f.stage, 'p', 16);
	ck_assert_int_eq(self_transport.rma(&f.d, &f.c0, XP_PUT, &sqe16, 0, NULL, &err), XP_DONE);
	ck_assert(all(f.h1 + 32, 'p', 16));
	ck_assert_uint_eq(f.d.pst.xp_kind_refused, 0);
}
END_TEST

/* An unknown kind (and AMO, SEND: kinds self does not run) fails with an
 * error and is counted; neither side's memory changes (as a get it would
 * have copied rank 1's heap into the staging). */
START_TEST(test_self_refuses)
{
	static struct fixture f;
	setup(&f);
	int err = 0;
	ck_assert_int_eq(self_transport.rma(&f.d, &f.c0, NO_KIND, &sqe16, 0, NULL, &err), XP_ERROR);
	ck_assert_int_eq(err, -EPROTO);
	ck_assert_uint_eq(f.d.pst.xp_kind_refused, 1);
	err = 0;
	ck_assert_int_eq(self_transport.rma(&f.d, &f.c0, XP_AMO, &sqe16, 0, NULL, &err), XP_ERROR);
	ck_assert_int_eq(err, -EOPNOTSUPP);
	err = 0;
	ck_assert_int_eq(self_transport.rma(&f.d, &f.c0, XP_SEND, &sqe16, 0, NULL, &err), XP_ERROR);
	ck_assert_int_eq(err, -EOPNOTSUPP);
	ck_assert_uint_eq(f.d.pst.xp_kind_refused, 3);
	ck_assert(all(f.stage, 's', HEAP));
	ck_assert(all(f.h1, 'b', HEAP));
	ck_assert(all(f.h0, 'a', HEAP));
}
END_TEST

/* tcp refuses the kind before it looks for the peer (there is none here:
 * a get would fail differently, -EINVAL) and counts it. */
START_TEST(test_tcp_refuses)
{
	static struct fixture f;
	setup(&f);
	int err = 0;
	ck_assert_int_eq(tcp_transport.rma(&f.d, &f.c0, NO_KIND, &sqe16, 1, NULL, &err), XP_ERROR);
	ck_assert_int_eq(err, -EPROTO);
	err = 0;
	ck_assert_int_eq(tcp_transport.rma(&f.d, &f.c0, XP_AMO, &sqe16, 1, NULL, &err), XP_ERROR);
	ck_assert_int_eq(err, -EOPNOTSUPP);
	ck_assert_uint_eq(f.d.pst.xp_kind_refused, 2);
	ck_assert_uint_eq(f.c0.outstanding, 0);
	ck_assert_uint_eq(f.d.pst.tcp_requests, 0);
}
END_TEST

/* The pack builder sizes and appends puts and gets only: another kind
 * appends nothing (as a get it would add a get element and slot). */
START_TEST(test_pack_refuses)
{
	static struct fixture f;
	setup(&f);
	uint32_t req = 0, rep = 0;
	ck_assert_int_eq(pack_elem_size(XP_GET, 16, &req, &rep), 0);
	ck_assert_uint_eq(req, sizeof(struct wire_pack_elem));
	ck_assert_uint_eq(rep, sizeof(struct wire_pack_res) + 16);
	ck_assert_int_eq(pack_elem_size(XP_PUT, 13, &req, &rep), 0);
	ck_assert_uint_eq(req, sizeof(struct wire_pack_elem) + 16);
	ck_assert_uint_eq(rep, sizeof(struct wire_pack_res));
	ck_assert_int_eq(pack_elem_size(NO_KIND, 16, &req, &rep), -EPROTO);
	ck_assert_int_eq(pack_elem_size(XP_AMO, 16, &req, &rep), -EOPNOTSUPP);

	struct pack_open pk = {0};
	ck_assert_int_eq(pack_begin(&pk, &f.c0), 0);
	ck_assert_int_eq(pack_append(&pk, &f.c0, NO_KIND, &sqe16, NULL), -EPROTO);
	ck_assert_int_eq(pack_append(&pk, &f.c0, XP_SEND, &sqe16, NULL), -EOPNOTSUPP);
	ck_assert_uint_eq(pk.nelem, 0);
	ck_assert_uint_eq(pk.plen, 0);
	ck_assert_uint_eq(pk.rlen, 0);
	ck_assert_uint_eq(f.c0.outstanding, 0);
	/* and a get does go in */
	ck_assert_int_eq(pack_append(&pk, &f.c0, XP_GET, &sqe16, NULL), 0);
	ck_assert_uint_eq(pk.nelem, 1);
	ck_assert(pk.slots[0].is_get);
	free(pk.slots);
	free(pk.buf);
}
END_TEST

/* The -errno a refused kind fails with, and the count. */
START_TEST(test_refuse_errno)
{
	static struct daemon d;
	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(xp_kind_refuse(&d, XP_AMO), -EOPNOTSUPP);
	ck_assert_int_eq(xp_kind_refuse(&d, XP_SEND), -EOPNOTSUPP);
	ck_assert_int_eq(xp_kind_refuse(&d, NO_KIND), -EPROTO);
	ck_assert_int_eq(xp_kind_refuse(&d, (enum xp_kind)0), -EPROTO);
	ck_assert_uint_eq(d.pst.xp_kind_refused, 4);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("xport");
	TCase *tc = tcase_create("kinds");
	tcase_add_test(tc, test_self_put_get);
	tcase_add_test(tc, test_self_refuses);
	tcase_add_test(tc, test_tcp_refuses);
	tcase_add_test(tc, test_pack_refuses);
	tcase_add_test(tc, test_refuse_errno);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
