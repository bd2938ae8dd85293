/* daemon/verbs.c: the bounce ring of an outgoing connection and the
 * freshness of connect requests (no RDMA device needed: these parts only
 * compute and copy). verbs.c is included
 * so that its static functions can be called; hoistd_core supplies the
 * rest, and its own verbs.o is never pulled in (this file defines every
 * symbol verbs.o would). */
#include "../../daemon/verbs.c"

#include <check.h>

#include "unit_util.h"

/* A ring that is empty (everything allocated has completed) takes any
 * request up to its size, wherever the previous allocations ended. */
START_TEST(test_bounce_empty_wraps)
{
	struct vconn cn = {.bsize = 4096};
	uint64_t end = 0;
	ck_assert_int_eq(bounce_alloc(&cn, 1024, &end), 0);
	cn.bhead = end; /* it completed */
	int64_t off = bounce_alloc(&cn, 3584, &end);
	ck_assert_int_eq(off, 0); /* the end 1024..4096 is skipped */
	ck_assert_uint_eq(end - cn.bhead, 3584);
	ck_assert_int_eq(bounce_alloc(&cn, 4097, &end), -1);
}
END_TEST

/* Against a model: allocations completing in order (FIFO), never two live
 * ones overlapping, every request fitting an empty ring granted. */
START_TEST(test_bounce_model)
{
	enum { N = 64 };
	const uint64_t size = 8192;
	struct vconn cn = {.bsize = size};
	struct {
		int64_t off;
		uint64_t len, end;
	} live[N];
	unsigned lh = 0, lt = 0;
	uint64_t seed = 42;
	for (int it = 0; it < 200000; it++) {
		int alloc = lt - lh < N && (lt == lh || rng_next(&seed) % 3 != 0);
		if (!alloc) {
			cn.bhead = live[lh % N].end; /* the oldest completes */
			lh++;
			continue;
		}
		uint64_t len = 1 + rng_next(&seed) % size;
		uint64_t end;
		int64_t off = bounce_alloc(&cn, len, &end);
		if (lt == lh)
			CHK(off >= 0); /* empty: it must fit */
		if (off < 0)
			continue;
		CHK_LE((uint64_t)off + len, size);
		for (unsigned k = lh; k != lt; k++) {
			uint64_t a = (uint64_t)live[k % N].off, l = live[k % N].len;
			CHK((uint64_t)off + len <= a || a + l <= (uint64_t)off);
		}
		live[lt % N].off = off;
		live[lt % N].len = len;
		live[lt % N].end = end;
		lt++;
	}
}
END_TEST

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
	d->verbs = v;
	d->cfg.staging_bytes = 4096;
	v->W = 8;
	v->nslots = 1;
	v->slots = slots;
	v->gens = gens;
	v->max_inline = V_INLINE_MAX;
	struct vconn *cn = conn_new(d, 1, 1);
	ck_assert_ptr_nonnull(cn);
	struct ibv_mr mr = {.lkey = 7};
	cn->bounce_mr = &mr;
	uint32_t len = (uint32_t)(sizeof(struct wire_hdr) + WIRE_MAX_EXT + WIRE_AM_MAX_PAYLOAD);
	char *msg = malloc(len);
	ck_assert_ptr_nonnull(msg);
	for (uint32_t i = 0; i < len; i++)
		msg[i] = (char)(i * 7);
	ck_assert_int_eq(send_frame(d, cn, msg, len, 0), 0);
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

/* A captured connect request is refused however many others were
 * accepted since (the nonce table keeps only 128), and so is one older
 * than the last accepted from its node or outside the clock window. */
START_TEST(test_connect_replay)
{
	struct verbs v;
	memset(&v, 0, sizeof(v));
	uint64_t last[3] = {0, 0, 0};
	v.last_ts = last;
	const uint64_t now = 1700000000ull * 1000000000ull;
	uint8_t nonce[16];
	uint64_t seed = 7;
	for (int i = 0; i < 16; i++)
		nonce[i] = (uint8_t)rng_next(&seed);
	uint64_t ts = now - 1000;
	memcpy(nonce, &ts, 8);
	uint8_t captured[16];
	memcpy(captured, nonce, 16);
	ck_assert_int_eq(connect_fresh(&v, 1, ts, nonce, now), 1);
	ck_assert_int_eq(connect_fresh(&v, 1, ts, captured, now), 0); /* at once */
	for (int k = 0; k < 300; k++) { /* other nodes connect and reconnect */
		uint64_t t = now - 900 + (uint64_t)k;
		memcpy(nonce, &t, 8);
		for (int i = 8; i < 16; i++)
			nonce[i] = (uint8_t)rng_next(&seed);
		ck_assert_int_eq(connect_fresh(&v, 2, t, nonce, now), 1);
	}
	ck_assert_int_eq(connect_fresh(&v, 1, ts, captured, now + 1000), 0); /* later */
	uint64_t older = ts - 1;
	memcpy(nonce, &older, 8);
	ck_assert_int_eq(connect_fresh(&v, 1, older, nonce, now), 0);
	uint64_t stale = now - V_AUTH_WINDOW_NS - 1;
	memcpy(nonce, &stale, 8);
	ck_assert_int_eq(connect_fresh(&v, 0, stale, nonce, now), 0);
	uint64_t newer = ts + 1;
	memcpy(nonce, &newer, 8);
	ck_assert_int_eq(connect_fresh(&v, 1, newer, nonce, now), 1); /* it reconnects */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("verbs");
	TCase *tc = tcase_create("bounce");
	tcase_add_test(tc, test_bounce_empty_wraps);
	tcase_add_test(tc, test_bounce_model);
	tcase_add_test(tc, test_bounce_fits_am);
	suite_add_tcase(s, tc);
	TCase *ta = tcase_create("auth");
	tcase_add_test(ta, test_connect_replay);
	suite_add_tcase(s, ta);
	return run_suite(s);
}
