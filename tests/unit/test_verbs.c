/* The verbs transport's parts that need no RDMA device (they only compute
 * and copy): an outgoing connection's bounce buffer takes the largest
 * active message, pack replies, the kinds it refuses. The bounce ring's
 * allocator is its own unit (test_bounce.c). The test links hoistd_core's
 * verbs objects and reaches their shared functions and state through
 * daemon/transport/verbs/verbs_int.h. */
#include "verbs_int.h"

#include <string.h>

#include <check.h>

#include "unit_util.h"

/* An active message of the largest size goes out through the bounce ring
 * even when the staging arena (whose size the ring takes) is smaller. */
START_TEST(test_bounce_fits_am)
{
	struct daemon *d = calloc(1, sizeof(*d));
	struct verbs *v = calloc(1, sizeof(*v));
	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(v);
	struct vconn *slots[1] = {NULL};
	uint16_t gens[1] = {0};
	d->xp_priv = v;
	d->cfg.staging_bytes = 4096;
	v->W = 8;
	v->nslots = 1;
	v->slots = slots;
	v->gens = gens;
	v->max_inline = V_INLINE_MAX;
	struct vconn *cn = vconn_new(d, 1, 1);
	ck_assert_ptr_nonnull(cn);
	struct ibv_mr mr = {.lkey = 7};
	cn->bounce_mr = &mr;
	uint32_t len = (uint32_t)(sizeof(struct wire_hdr) + WIRE_MAX_EXT + WIRE_AM_MAX_PAYLOAD);
	char *msg = malloc(len);
	ck_assert_ptr_nonnull(msg);
	for (uint32_t i = 0; i < len; i++)
		msg[i] = (char)(i * 7);
	ck_assert_int_eq(vsend_frame(d, cn, msg, len, 0), 0);
	const struct vop *o = &cn->ring[0];
	ck_assert_uint_eq(o->sge.length, len);
	ck_assert_int_eq(memcmp((const void *)(uintptr_t)o->sge.addr, msg, len), 0);
	free(msg);
	free(cn->ring);
	free(cn->bounce);
	free(cn);
	free(v);
	free(d);
}
END_TEST

/* The reply to a pack sent over verbs (W_PACK_REPLY): get data lands at
 * each element's destination and every element completes with its own
 * status; a malformed reply (a get's length not the one asked) fails every
 * element with -EPROTO, copies nothing and counts packs_refused; a reply
 * nobody waits for is dropped. The client's completion queue is full
 * (cq_entries 0), so each failed element shows in its error count. */
static void add_pack(struct verbs *v, int32_t node, uint64_t tag, struct pack_slot *s, uint32_t n)
{
	struct vpk *x = calloc(1, sizeof(*x));
	ck_assert_ptr_nonnull(x);
	x->tag = tag;
	x->s = malloc(n * sizeof(*s));
	ck_assert_ptr_nonnull(x->s);
	memcpy(x->s, s, n * sizeof(*s));
	x->n = n;
	struct vpeer *vp = &v->peers[node];
	*vp->pk_tail = x;
	vp->pk_tail = &x->next;
	vp->npk++;
}

START_TEST(test_pack_reply)
{
	struct daemon *d = calloc(1, sizeof(*d));
	struct verbs *v = calloc(1, sizeof(*v));
	struct client *c = calloc(1, sizeof(*c));
	struct hoist_ctrl *ctrl = calloc(1, sizeof(*ctrl));
	ck_assert(d && v && c && ctrl);
	d->xp_priv = v;
	d->net.nnodes = 2;
	d->net.peers = calloc(2, sizeof(*d->net.peers));
	v->peers = calloc(2, sizeof(*v->peers));
	ck_assert(d->net.peers && v->peers);
	for (int i = 0; i < 2; i++)
		v->peers[i].pk_tail = &v->peers[i].pk;
	c->ctrl = ctrl;
	char got[16] = {0}, got2[16] = {0};
	struct pack_slot s[3] = {
		{.ck = {.client = c, .opcode = HOIST_OP_GET}, .dst = got, .len = 5, .is_get = 1},
		{.ck = {.client = c, .opcode = HOIST_OP_PUT}, .len = 8},
		{.ck = {.client = c, .opcode = HOIST_OP_GET}, .dst = got2, .len = 3, .is_get = 1}};
	add_pack(v, 1, 5, s, 3);
	c->outstanding = 3;
	char pl[64] = {0};
	uint64_t n = 0;
	struct wire_pack_res r = {.status = 0, .len = 5};
	memcpy(pl + n, &r, sizeof(r));
	memcpy(pl + n + sizeof(r), "hello", 5);
	n += sizeof(r) + 8;
	r = (struct wire_pack_res){0};
	memcpy(pl + n, &r, sizeof(r));
	n += sizeof(r);
	r = (struct wire_pack_res){.status = -EFAULT};
	memcpy(pl + n, &r, sizeof(r));
	n += sizeof(r);
	struct wire_pack_reply rep = {.nelem = 3};
	struct wire_hdr h = {.plen = (uint32_t)n, .type = W_PACK_REPLY, .hlen = sizeof(rep), .tag = 5};
	vpack_reply(d, 1, &h, (const char *)&rep, pl);
	ck_assert_str_eq(got, "hello");
	ck_assert_str_eq(got2, "");
	ck_assert_uint_eq(c->outstanding, 0);
	ck_assert_uint_eq(c->st.errors, 1); /* the -EFAULT element */
	ck_assert_uint_eq(v->peers[1].npk, 0);
	ck_assert_ptr_null(v->peers[1].pk);
	ck_assert_uint_eq(d->net.peers[1].st.packs_refused, 0);

	/* malformed: the first get answered with 8 bytes, 5 were asked */
	add_pack(v, 1, 6, s, 3);
	add_pack(v, 1, 7, s, 1); /* a later pack stays listed */
	c->outstanding = 4;
	memset(got, 0, sizeof(got));
	r = (struct wire_pack_res){.status = 0, .len = 8};
	memcpy(pl, &r, sizeof(r));
	memcpy(pl + sizeof(r), "overflow", 8);
	h.tag = 6;
	h.plen = (uint32_t)n + 8;
	vpack_reply(d, 1, &h, (const char *)&rep, pl);
	ck_assert_str_eq(got, "");
	ck_assert_uint_eq(c->outstanding, 1);
	ck_assert_uint_eq(c->st.errors, 4);
	ck_assert_uint_eq(d->net.peers[1].st.packs_refused, 1);
	ck_assert_uint_eq(v->peers[1].npk, 1);
	ck_assert_uint_eq(v->peers[1].pk->tag, 7);

	/* nobody waits for tag 99: dropped, the listed pack untouched */
	h.tag = 99;
	vpack_reply(d, 1, &h, (const char *)&rep, pl);
	ck_assert_uint_eq(v->peers[1].npk, 1);
	ck_assert_uint_eq(c->outstanding, 1);

	/* the peer is gone: the pack still listed fails (-ECONNRESET) */
	vpack_fail_inflight(d, 1, -ECONNRESET);
	ck_assert_uint_eq(v->peers[1].npk, 0);
	ck_assert_uint_eq(c->outstanding, 0);
	ck_assert_uint_eq(c->st.errors, 5);
	free(v->peers);
	free(d->net.peers);
	free(ctrl);
	free(c);
	free(v);
	free(d);
}
END_TEST

/* verbs refuses a kind it does not run before it looks at the network
 * (disabled here: a get would fail -EINVAL), and counts it. */
START_TEST(test_rma_refuses_kind)
{
	struct daemon *d = calloc(1, sizeof(*d));
	struct client *c = calloc(1, sizeof(*c));
	ck_assert(d && c);
	char buf[8];
	struct xp_req rq = {.kind = (enum xp_kind)99, .laddr = buf, .node = 1, .pe = 1, .len = 8,
			    .ck = {.client = c}};
	int err = 0;
	ck_assert_int_eq(verbs_transport.rma(d, &rq, &err), XP_ERROR);
	ck_assert_int_eq(err, -EPROTO);
	err = 0;
	rq.kind = XP_SEND;
	ck_assert_int_eq(verbs_transport.rma(d, &rq, &err), XP_ERROR);
	ck_assert_int_eq(err, -EOPNOTSUPP);
	ck_assert_uint_eq(d->pst.xp_kind_refused, 2);
	err = 0; /* a get gets past the kind, to the disabled network */
	rq.kind = XP_GET;
	ck_assert_int_eq(verbs_transport.rma(d, &rq, &err), XP_ERROR);
	ck_assert_int_eq(err, -EINVAL);
	ck_assert_uint_eq(d->pst.xp_kind_refused, 2);
	err = 0; /* an atomic is no refused kind: xp_amo's am_send finds no network */
	d->xport = &verbs_transport;
	rq.kind = XP_AMO;
	ck_assert_int_eq(verbs_transport.rma(d, &rq, &err), XP_ERROR);
	ck_assert_int_lt(err, 0);
	ck_assert_uint_eq(d->pst.xp_kind_refused, 2);
	ck_assert_uint_eq(xp_amo_inflight(d), 0);
	xp_amo_free(d);
	ck_assert_uint_eq(c->outstanding, 0);
	free(c);
	free(d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("verbs");
	TCase *tc = tcase_create("bounce");
	tcase_add_test(tc, test_bounce_fits_am);
	suite_add_tcase(s, tc);
	TCase *tp = tcase_create("packs");
	tcase_add_test(tp, test_pack_reply);
	tcase_add_test(tp, test_rma_refuses_kind);
	suite_add_tcase(s, tp);
	return run_suite(s);
}
