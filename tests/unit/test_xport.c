/* daemon/transport/transport.h: every transport runs the kinds it implements and
 * refuses any other one with an error, counted in xp_kind_refused, before
 * it touches memory, a peer or a queue: an unknown kind is never executed
 * as a get (or a put). Same-node (self), tcp and the pack builder; verbs:
 * test_verbs.c. And the cookie's way back to the engine. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "cluster.h"
#include "hoist_amo.h"
#include "pack.h"
#include "transport.h"
#include "unit_util.h"
#include "hoist_amo.h"

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

/* 16 bytes between rank 0's staging at 0 and rank 1's heap at 32, as
 * the engine would ask for them (same node: the target heap mapped) */
static struct xp_req req16(struct fixture *f, enum xp_kind kind)
{
	return (struct xp_req){.kind = kind, .laddr = f->stage, .lmr = f->c0.mr, .rmap = f->h1,
			       .node = 1, .job = f->j.id, .pe = 1, .off = 32, .len = 16,
			       .ck = {.client = &f->c0, .pe = 1, .user_data = 5}};
}

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
	struct xp_req rq = req16(&f, XP_GET);
	ck_assert_int_eq(self_transport.rma(&f.d, &rq, &err), XP_DONE);
	ck_assert(all(f.stage, 'b', 16));
	memset(f.stage, 'p', 16);
	rq = req16(&f, XP_PUT);
	ck_assert_int_eq(self_transport.rma(&f.d, &rq, &err), XP_DONE);
	ck_assert(all(f.h1 + 32, 'p', 16));
	rq.rmap = NULL; /* the target left */
	ck_assert_int_eq(self_transport.rma(&f.d, &rq, &err), XP_ERROR);
	ck_assert_int_eq(err, -ECONNRESET);
	ck_assert_uint_eq(f.d.pst.xp_kind_refused, 0);
}
END_TEST

/* An unknown kind (and SEND: a kind self does not run) fails with an
 * error and is counted; neither side's memory changes (as a get it would
 * have copied rank 1's heap into the staging). */
START_TEST(test_self_refuses)
{
	static struct fixture f;
	setup(&f);
	int err = 0;
	struct xp_req rq = req16(&f, NO_KIND);
	ck_assert_int_eq(self_transport.rma(&f.d, &rq, &err), XP_ERROR);
	ck_assert_int_eq(err, -EPROTO);
	ck_assert_uint_eq(f.d.pst.xp_kind_refused, 1);
	err = 0;
	rq.kind = XP_SEND;
	ck_assert_int_eq(self_transport.rma(&f.d, &rq, &err), XP_ERROR);
	ck_assert_int_eq(err, -EOPNOTSUPP);
	ck_assert_uint_eq(f.d.pst.xp_kind_refused, 2);
	ck_assert(all(f.stage, 's', HEAP));
	ck_assert(all(f.h1, 'b', HEAP));
	ck_assert(all(f.h0, 'a', HEAP));
}
END_TEST

/* An atomic through self: the CPU atomic on the target's word, the old
 * value at laddr (operand size bytes), nothing else touched; a
 * non-fetching one writes no old value. */
START_TEST(test_self_amo)
{
	static struct fixture f;
	setup(&f);
	int err = 0;
	uint64_t init = 0x00000000fffffffeull, old = 0;
	memcpy(f.h1 + 32, &init, 8);
	struct xp_req rq = req16(&f, XP_AMO);
	rq.len = 8;
	rq.amo.op = HOIST_AMO_OP_FETCH_ADD;
	rq.amo.type = HOIST_AMO_T_UINT64;
	rq.amo.value = 3;
	ck_assert_int_eq(self_transport.rma(&f.d, &rq, &err), XP_DONE);
	memcpy(&old, f.stage, 8);
	ck_assert_uint_eq(old, init);
	memcpy(&old, f.h1 + 32, 8);
	ck_assert_uint_eq(old, init + 3);
	ck_assert(all(f.stage + 8, 's', HEAP - 8));
	/* 4 bytes: 1 + 0xffffffff wraps around to 0 within the low word, no
	 * carry into the next 4 bytes */
	rq.len = 4;
	rq.amo.type = HOIST_AMO_T_UINT32;
	rq.amo.op = HOIST_AMO_OP_ADD;
	rq.amo.value = 0xffffffffu;
	rq.laddr = NULL;
	ck_assert_int_eq(self_transport.rma(&f.d, &rq, &err), XP_DONE);
	memcpy(&old, f.h1 + 32, 8);
	ck_assert_uint_eq(old, 0x0000000100000000ull);
	ck_assert(all(f.h1 + 40, 'b', HEAP - 40));
	ck_assert(all(f.h1, 'b', 32));
	rq.rmap = NULL; /* the target left */
	ck_assert_int_eq(self_transport.rma(&f.d, &rq, &err), XP_ERROR);
	ck_assert_int_eq(err, -ECONNRESET);
	ck_assert_uint_eq(f.d.pst.xp_kind_refused, 0);
}
END_TEST

/* tcp refuses the kind before it looks for the peer (there is none here:
 * a get would fail differently, -EINVAL) and counts it. An atomic is no
 * refused kind: it goes to xp_amo, which finds no peer either. */
START_TEST(test_tcp_refuses)
{
	static struct fixture f;
	setup(&f);
	int err = 0;
	struct xp_req rq = req16(&f, NO_KIND);
	ck_assert_int_eq(tcp_transport.rma(&f.d, &rq, &err), XP_ERROR);
	ck_assert_int_eq(err, -EPROTO);
	err = 0;
	rq.kind = XP_SEND;
	ck_assert_int_eq(tcp_transport.rma(&f.d, &rq, &err), XP_ERROR);
	ck_assert_int_eq(err, -EOPNOTSUPP);
	ck_assert_uint_eq(f.d.pst.xp_kind_refused, 2);
	ck_assert_uint_eq(f.d.pst.tcp_requests, 0);
	err = 0; /* the harness: a get gets past the kind, to the missing peer */
	rq.kind = XP_GET;
	ck_assert_int_eq(tcp_transport.rma(&f.d, &rq, &err), XP_ERROR);
	ck_assert_int_eq(err, -EINVAL);
	ck_assert_uint_eq(f.d.pst.xp_kind_refused, 2);
	err = 0; /* and so does an atomic, through xp_amo and am_send */
	f.d.xport = &tcp_transport;
	rq.kind = XP_AMO;
	ck_assert_int_eq(tcp_transport.rma(&f.d, &rq, &err), XP_ERROR);
	ck_assert_int_eq(err, -EINVAL);
	ck_assert_uint_eq(f.d.pst.xp_kind_refused, 2);
	ck_assert_uint_eq(xp_amo_inflight(&f.d), 0); /* its entry went again */
	xp_amo_free(&f.d);
}
END_TEST

/* The pack builder sizes and appends puts, gets and non-fetching atomics
 * only: another kind, or a fetching atomic, appends nothing (as a get it
 * would add a get element and slot). A get
 * that goes in keeps its cookie and destination; the engine, not the
 * pack, counts it outstanding. */
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
	ck_assert_int_eq(pack_elem_size(XP_AMO, 8, &req, &rep), 0); /* a non-fetching one */
	ck_assert_uint_eq(req, sizeof(struct wire_pack_elem) + sizeof(struct wire_pack_amo));
	ck_assert_uint_eq(rep, sizeof(struct wire_pack_res));

	struct pack_open pk = {0};
	struct xp_req rq = req16(&f, NO_KIND);
	ck_assert_int_eq(pack_begin(&pk, &rq), 0);
	ck_assert_int_eq(pack_append(&pk, &rq), -EPROTO);
	rq.kind = XP_SEND;
	ck_assert_int_eq(pack_append(&pk, &rq), -EOPNOTSUPP);
	rq.kind = XP_AMO; /* a fetching atomic: its old value has no place in a pack */
	rq.amo.op = HOIST_AMO_OP_FETCH_ADD;
	ck_assert_int_eq(pack_append(&pk, &rq), -EOPNOTSUPP);
	ck_assert_uint_eq(pk.nelem, 0);
	ck_assert_uint_eq(pk.plen, 0);
	ck_assert_uint_eq(pk.rlen, 0);
	rq.kind = XP_GET;
	ck_assert_int_eq(pack_append(&pk, &rq), 0);
	ck_assert_uint_eq(pk.nelem, 1);
	ck_assert(pk.slots[0].is_get);
	ck_assert_ptr_eq(pk.slots[0].dst, f.stage);
	ck_assert_ptr_eq(pk.slots[0].ck.client, &f.c0);
	ck_assert_uint_eq(pk.slots[0].ck.user_data, 5);
	ck_assert_uint_eq(f.c0.outstanding, 0);
	free(pk.slots);
	free(pk.buf);
}
END_TEST

/* A started operation's cookie comes back once: the engine counts it out
 * of the client's outstanding operations and posts the completion the
 * descriptor asked for (here: an error, which always completes). */
START_TEST(test_complete_cookie)
{
	static struct fixture f;
	static struct hoist_ctrl ctrl;
	static struct hoist_cqe cq[4];
	setup(&f);
	memset(&ctrl, 0, sizeof(ctrl));
	f.c0.ctrl = &ctrl;
	f.c0.cq = cq;
	f.c0.cq_entries = 4;
	f.c0.cq_mask = 3;
	f.c0.outstanding = 2;
	struct xp_req rq = req16(&f, XP_GET);
	progress_complete(&f.d, &rq.ck, 0); /* no CQE asked */
	ck_assert_uint_eq(f.c0.outstanding, 1);
	ck_assert_uint_eq(f.c0.cq_tail, 0);
	progress_complete(&f.d, &rq.ck, -EFAULT);
	ck_assert_uint_eq(f.c0.outstanding, 0);
	ck_assert_uint_eq(f.c0.cq_tail, 1);
	ck_assert_uint_eq(cq[0].user_data, 5);
	ck_assert_int_eq(cq[0].res, -EFAULT);
	rq.ck.client = NULL; /* orphaned: nobody to tell */
	progress_complete(&f.d, &rq.ck, 0);
	ck_assert_uint_eq(f.c0.cq_tail, 1);
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

/* The executing side of a pack: an element of an op it does not know
 * (pack_check refuses those first; this is the second line) fails -EPROTO
 * and reads nothing, where a get would return the target's bytes. */
START_TEST(test_pack_execute_unknown_op)
{
	static struct fixture f;
	setup(&f);
	f.d.pjobs = &f.j;
	struct wire_pack w = {.job = f.j.id, .nelem = 2};
	struct wire_pack_elem e[2] = {{.op = 4, .pe = 1, .len = 8, .off = 0},
				      {.op = WIRE_PACK_GET, .pe = 1, .len = 8, .off = 0}};
	char out[2 * (sizeof(struct wire_pack_res) + 8)];
	memset(out, 0, sizeof(out));
	uint64_t ops, bytes;
	uint64_t n = pack_execute(&f.d, &w, (const char *)e, out, &ops, &bytes);
	struct wire_pack_res r;
	memcpy(&r, out, sizeof(r));
	ck_assert_int_eq(r.status, -EPROTO);
	ck_assert_uint_eq(r.len, 0);
	memcpy(&r, out + sizeof(r), sizeof(r)); /* the get after it */
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(r.len, 8);
	ck_assert(all(out + 2 * sizeof(r), 'b', 8));
	ck_assert_uint_eq(n, 2 * sizeof(r) + 8);
	ck_assert_uint_eq(ops, 1);
	ck_assert_uint_eq(bytes, 8);
}
END_TEST

/* The transports by name: what progress_start picks from (setting
 * transport=) and what attach registers memory through. */
START_TEST(test_find)
{
	const struct transport_ops *tcp = transport_find("tcp");
	const struct transport_ops *verbs = transport_find("verbs");
	ck_assert_ptr_eq(tcp, &tcp_transport);
	ck_assert_ptr_eq(verbs, &verbs_transport);
	ck_assert_ptr_eq(transport_find("self"), &self_transport);
	ck_assert_ptr_null(transport_find("auto")); /* a setting, not a transport */
	ck_assert_ptr_null(transport_find("ucx"));
	ck_assert_ptr_null(transport_find(""));
	/* only verbs registers memory; only tcp's frames carry the integrity */
	ck_assert_ptr_nonnull(verbs->mem_reg);
	ck_assert_ptr_nonnull(verbs->mem_dereg);
	ck_assert_ptr_nonnull(verbs->mem_rkey);
	ck_assert_ptr_null(tcp->mem_reg);
	ck_assert_ptr_null(tcp->mem_rkey);

	ck_assert(verbs->rdma && !tcp->rdma);
	/* every network transport has the whole data path; waking up is the
	 * loop's: tcp's sockets are looked at every pass (its poll only
	 * busy-polls for awaited replies, tcp_busy_poll_us), verbs polls its
	 * completion queue and arms it before the loop sleeps */
	const struct transport_ops *all_x[] = {tcp, verbs};
	for (int i = 0; i < 2; i++)
		ck_assert(all_x[i]->start && all_x[i]->stop && all_x[i]->rma && all_x[i]->am_send &&
			  all_x[i]->flush && all_x[i]->timers && all_x[i]->orphan);
	ck_assert(verbs->poll && verbs->arm && verbs->fd_pass_mask == 31);
	ck_assert(tcp->poll && !tcp->arm && tcp->fd_pass_mask == 0);
	/* self: a one-node daemon's whole transport; starts nothing */
	const struct transport_ops *self = transport_find("self");
	ck_assert(!self->start && !self->stop && !self->poll && self->rma && self->am_send &&
		  self->orphan && !self->mem_reg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("xport");
	TCase *tc = tcase_create("kinds");
	tcase_add_test(tc, test_self_put_get);
	tcase_add_test(tc, test_self_refuses);
	tcase_add_test(tc, test_self_amo);
	tcase_add_test(tc, test_tcp_refuses);
	tcase_add_test(tc, test_pack_refuses);
	tcase_add_test(tc, test_refuse_errno);
	tcase_add_test(tc, test_complete_cookie);
	tcase_add_test(tc, test_pack_execute_unknown_op);
	tcase_add_test(tc, test_find);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
