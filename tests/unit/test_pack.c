/* daemon/stages/pack.c: the checks and execution of packed operations (wire.h). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "hoist_amo.h"
#include "pack.h"
#include "unit_util.h"

#define HEAP 4096u

static size_t put_elem(char *b, uint8_t op, int32_t pe, uint64_t off, uint32_t len, const void *data)
{
	struct wire_pack_elem e = {.op = op, .pe = pe, .len = len, .off = off};
	memcpy(b, &e, sizeof(e));
	size_t n = sizeof(e);
	if (op == WIRE_PACK_PUT) {
		memset(b + n, 0, wire_pad8(len));
		memcpy(b + n, data, len);
		n += wire_pad8(len);
	}
	return n;
}

START_TEST(test_check)
{
	static char b[WIRE_AM_MAX_PAYLOAD + 64];
	uint64_t rl;
	struct wire_pack w = {.job = 1, .nelem = 2};
	size_t n = put_elem(b, WIRE_PACK_PUT, 0, 0, 5, "hello");
	n += put_elem(b + n, WIRE_PACK_GET, 1, 8, 13, NULL);
	ck_assert_int_eq(pack_check(&w, b, n, &rl), 0);
	ck_assert_uint_eq(rl, 8 + 8 + 16);
	ck_assert_int_eq(pack_check(&w, b, n - 1, &rl), -EPROTO); /* short */
	ck_assert_int_eq(pack_check(&w, b, n + 8, &rl), -EPROTO); /* trailing */
	w.nelem = 3;
	ck_assert_int_eq(pack_check(&w, b, n, &rl), -EPROTO);
	w.nelem = 0;
	ck_assert_int_eq(pack_check(&w, b, n, &rl), -EPROTO);
	w.nelem = 2;
	w.reserved = 1;
	ck_assert_int_eq(pack_check(&w, b, n, &rl), -EPROTO);
	w.reserved = 0;
	b[0] = 4; /* unknown op */
	ck_assert_int_eq(pack_check(&w, b, n, &rl), -EPROTO);
	b[0] = WIRE_PACK_PUT;
	b[1] = 1; /* reserved */
	ck_assert_int_eq(pack_check(&w, b, n, &rl), -EPROTO);
	b[1] = 0;
	/* replies that would not fit one active message */
	n = 0;
	for (int k = 0; k < 8; k++)
		n += put_elem(b + n, WIRE_PACK_GET, 0, 0, 8000, NULL);
	w.nelem = 8;
	ck_assert_int_eq(pack_check(&w, b, n, &rl), -EPROTO);
	/* random bytes: never accepted beyond the payload, never a crash */
	uint64_t seed = 3;
	for (int i = 0; i < 100000; i++) {
		size_t len = rng_next(&seed) % 512;
		for (size_t k = 0; k < len; k++)
			b[k] = (char)(rng_next(&seed) & (k % 24 < 4 ? 3 : 0xff));
		w.nelem = (uint32_t)(rng_next(&seed) % 6);
		if (pack_check(&w, b, len, &rl) == 0)
			CHK(rl <= WIRE_AM_MAX_PAYLOAD && w.nelem * sizeof(struct wire_pack_elem) <= len);
	}
}
END_TEST

START_TEST(test_execute)
{
	static struct daemon d;
	static struct job j;
	static struct client c0, c1;
	struct client *pes[3] = {&c0, &c1, NULL};
	char *h0 = calloc(1, HEAP), *h1 = calloc(1, HEAP);
	memcpy(h1 + 100, "0123456789abcdef", 16);
	c0.heap.base = h0;
	c0.heap.bytes = HEAP;
	c1.heap.base = h1;
	c1.heap.bytes = HEAP;
	j.id = 42;
	j.size = 3; /* PE 2 is not on this node */
	j.pe = pes;
	d.pjobs = &j;
	char b[1024], out[1024];
	struct wire_pack w = {.job = 42, .nelem = 6};
	size_t n = put_elem(b, WIRE_PACK_PUT, 0, 10, 5, "hello");
	n += put_elem(b + n, WIRE_PACK_GET, 1, 100, 10, NULL);
	n += put_elem(b + n, WIRE_PACK_PUT, 0, HEAP - 2, 5, "world"); /* past the heap */
	n += put_elem(b + n, WIRE_PACK_GET, 2, 0, 8, NULL);            /* not here */
	n += put_elem(b + n, WIRE_PACK_PUT, 0, 12, 2, "XY");           /* later wins */
	n += put_elem(b + n, WIRE_PACK_GET, 0, 10, 5, NULL);           /* sees both puts */
	uint64_t rl, ops, bytes;
	ck_assert_int_eq(pack_check(&w, b, n, &rl), 0);
	uint64_t got = pack_execute(&d, &w, b, out, &ops, &bytes);
	ck_assert_uint_le(got, rl);
	ck_assert_uint_eq(ops, 4);
	ck_assert_uint_eq(bytes, 5 + 10 + 2 + 5);
	ck_assert_int_eq(memcmp(h0 + 10, "heXYo", 5), 0);
	struct wire_pack_res r;
	size_t pos = 0;
	int want[6] = {0, 0, -EFAULT, -ECONNRESET, 0, 0};
	uint32_t wl[6] = {0, 10, 0, 0, 0, 5};
	for (int k = 0; k < 6; k++) {
		memcpy(&r, out + pos, sizeof(r));
		ck_assert_int_eq(r.status, want[k]);
		ck_assert_uint_eq(r.len, wl[k]);
		if (k == 1)
			ck_assert_int_eq(memcmp(out + pos + 8, "0123456789", 10), 0);
		if (k == 5)
			ck_assert_int_eq(memcmp(out + pos + 8, "heXYo", 5), 0);
		pos += sizeof(r) + wire_pad8(r.len);
	}
	ck_assert_uint_eq(pos, got);
	/* an unknown job: every element -ECONNRESET */
	w.job = 7;
	pack_execute(&d, &w, b, out, &ops, &bytes);
	ck_assert_uint_eq(ops, 0);
	free(h0);
	free(h1);
}
END_TEST

static size_t amo_elem(char *b, int32_t pe, uint64_t off, uint32_t len, uint8_t op, uint8_t type,
		       uint64_t value)
{
	size_t n = put_elem(b, WIRE_PACK_AMO, pe, off, len, NULL);
	struct wire_pack_amo a = {.op = op, .type = type, .value = value};
	memcpy(b + n, &a, sizeof(a));
	return n + sizeof(a);
}

/* Non-fetching atomics in a pack (WIRE_PACK_AMO): executed in order with
 * the puts and gets around them, each element checked alone (PE, bounds,
 * alignment); a fetching op, a type or len that do not match, reserved
 * bytes or a cut operand block make the pack malformed. */
START_TEST(test_amo)
{
	static struct daemon d;
	static struct job j;
	static struct client c0;
	struct client *pes[2] = {&c0, NULL};
	char *h0 = calloc(1, HEAP);
	c0.heap.base = h0;
	c0.heap.bytes = HEAP;
	j.id = 42;
	j.size = 2;
	j.pe = pes;
	d.pjobs = &j;
	uint64_t w0 = 0x1000000000000001ull;
	memcpy(h0 + 16, &w0, 8);
	char b[1024], out[1024];
	struct wire_pack w = {.job = 42, .nelem = 8};
	size_t n = amo_elem(b, 0, 16, 8, HOIST_AMO_OP_ADD, HOIST_AMO_T_UINT64, 0xff);
	n += amo_elem(b + n, 0, 16, 8, HOIST_AMO_OP_XOR, HOIST_AMO_T_INT64, 0xf0f0);
	n += amo_elem(b + n, 0, 28, 4, HOIST_AMO_OP_INC, HOIST_AMO_T_UINT32, 0);
	n += put_elem(b + n, WIRE_PACK_GET, 0, 16, 8, NULL);                         /* sees both */
	n += amo_elem(b + n, 0, 20, 8, HOIST_AMO_OP_ADD, HOIST_AMO_T_INT64, 1);      /* misaligned */
	n += amo_elem(b + n, 1, 0, 8, HOIST_AMO_OP_SET, HOIST_AMO_T_UINT64, 1);      /* not here */
	n += amo_elem(b + n, 0, HEAP, 8, HOIST_AMO_OP_OR, HOIST_AMO_T_UINT64, 1);    /* outside */
	n += amo_elem(b + n, 0, 32, 8, HOIST_AMO_OP_SET, HOIST_AMO_T_DOUBLE, 7);
	uint64_t rl, ops, bytes;
	ck_assert_int_eq(pack_check(&w, b, n, &rl), 0);
	ck_assert_uint_eq(rl, 8 * sizeof(struct wire_pack_res) + 8);
	uint64_t got = pack_execute(&d, &w, b, out, &ops, &bytes);
	ck_assert_uint_eq(got, rl);
	ck_assert_uint_eq(ops, 5);
	uint64_t want = (w0 + 0xff) ^ 0xf0f0, v;
	memcpy(&v, h0 + 16, 8);
	ck_assert_uint_eq(v, want);
	uint32_t v32;
	memcpy(&v32, h0 + 28, 4);
	ck_assert_uint_eq(v32, 1);
	memcpy(&v, h0 + 32, 8);
	ck_assert_uint_eq(v, 7);
	ck_assert_uint_eq(d.pst.amo_served_packed, 4);
	int st[8] = {0, 0, 0, 0, -EINVAL, -ECONNRESET, -EFAULT, 0};
	size_t pos = 0;
	for (int k = 0; k < 8; k++) {
		struct wire_pack_res r;
		memcpy(&r, out + pos, sizeof(r));
		ck_assert_int_eq(r.status, st[k]);
		ck_assert_uint_eq(r.len, k == 3 ? 8 : 0);
		if (k == 3) {
			memcpy(&v, out + pos + sizeof(r), 8);
			ck_assert_uint_eq(v, want);
		}
		pos += sizeof(r) + wire_pad8(r.len);
	}
	/* malformed: the whole pack is refused by pack_check */
	struct wire_pack w1 = {.job = 42, .nelem = 1};
	n = amo_elem(b, 0, 16, 8, HOIST_AMO_OP_FETCH_ADD, HOIST_AMO_T_UINT64, 1);
	ck_assert_int_eq(pack_check(&w1, b, n, &rl), -EPROTO); /* fetching */
	n = amo_elem(b, 0, 16, 8, HOIST_AMO_OP_SWAP, HOIST_AMO_T_UINT64, 1);
	ck_assert_int_eq(pack_check(&w1, b, n, &rl), -EPROTO); /* fetching */
	n = amo_elem(b, 0, 16, 8, HOIST_AMO_OP_ADD, HOIST_AMO_T_DOUBLE, 1);
	ck_assert_int_eq(pack_check(&w1, b, n, &rl), -EPROTO); /* float add */
	n = amo_elem(b, 0, 16, 8, HOIST_AMO_OP_ADD, 9, 1);
	ck_assert_int_eq(pack_check(&w1, b, n, &rl), -EPROTO); /* no type */
	n = amo_elem(b, 0, 16, 4, HOIST_AMO_OP_ADD, HOIST_AMO_T_INT64, 1);
	ck_assert_int_eq(pack_check(&w1, b, n, &rl), -EPROTO); /* len not the type's */
	n = amo_elem(b, 0, 16, 8, HOIST_AMO_OP__COUNT, HOIST_AMO_T_INT64, 1);
	ck_assert_int_eq(pack_check(&w1, b, n, &rl), -EPROTO); /* no op */
	n = amo_elem(b, 0, 16, 8, HOIST_AMO_OP_ADD, HOIST_AMO_T_INT64, 1);
	ck_assert_int_eq(pack_check(&w1, b, n, &rl), 0);
	ck_assert_int_eq(pack_check(&w1, b, n - 1, &rl), -EPROTO); /* cut */
	b[sizeof(struct wire_pack_elem) + 2] = 1;
	ck_assert_int_eq(pack_check(&w1, b, n, &rl), -EPROTO); /* reserved */
	free(h0);
}
END_TEST

/* The malformed-pack rule (pack.h): a malformed pack is refused whole -
 * nothing applied, answered -EPROTO with no results, counted - and a
 * well-formed one is served; a malformed reply fails every element of our
 * pack with -EPROTO. */
START_TEST(test_serve_rule)
{
	static struct daemon d;
	static struct job j;
	static struct client c0;
	static struct peer peers[2];
	struct client *pes[1] = {&c0};
	char *h0 = calloc(1, HEAP);
	c0.heap.base = h0;
	c0.heap.bytes = HEAP;
	j.id = 42;
	j.size = 1;
	j.pe = pes;
	d.pjobs = &j;
	d.net.peers = peers;
	d.net.nnodes = 2;
	char b[256], out[WIRE_AM_MAX_PAYLOAD];
	struct wire_pack w = {.job = 42, .nelem = 2};
	size_t n = put_elem(b, WIRE_PACK_PUT, 0, 10, 5, "hello");
	n += put_elem(b + n, WIRE_PACK_GET, 0, 10, 5, NULL);
	struct wire_pack_reply rep;
	/* trailing bytes: malformed, the put is not applied */
	ck_assert_uint_eq(pack_serve(&d, 1, &w, 1, b, n + 8, out, &rep), 0);
	ck_assert_int_eq(rep.status, -EPROTO);
	ck_assert_uint_eq(rep.nelem, 2);
	ck_assert_int_eq(h0[10], 0);
	ck_assert_uint_eq(peers[1].st.packs_refused, 1);
	ck_assert_uint_eq(peers[1].st.packs_in, 0);
	/* a header extension of the wrong size: refused as well */
	ck_assert_uint_eq(pack_serve(&d, 1, &w, 0, b, n, out, &rep), 0);
	ck_assert_int_eq(rep.status, -EPROTO);
	ck_assert_uint_eq(peers[1].st.packs_refused, 2);
	/* well formed: served in order */
	uint64_t got = pack_serve(&d, 1, &w, 1, b, n, out, &rep);
	ck_assert_int_eq(rep.status, 0);
	ck_assert_uint_eq(rep.nelem, 2);
	ck_assert_uint_eq(got, 8 + 8 + 8);
	ck_assert_int_eq(memcmp(h0 + 10, "hello", 5), 0);
	ck_assert_int_eq(memcmp(out + 16, "hello", 5), 0);
	ck_assert_uint_eq(peers[1].st.packs_in, 1);
	ck_assert_uint_eq(peers[1].st.packs_refused, 2);
	/* element results: data only for a get that succeeded, its length */
	struct pack_slot g = {.len = 5, .is_get = 1}, pt = {.len = 5};
	ck_assert(pack_res_ok(&g, &(struct wire_pack_res){.len = 5}));
	ck_assert(!pack_res_ok(&g, &(struct wire_pack_res){.len = 4}));
	ck_assert(!pack_res_ok(&g, &(struct wire_pack_res){.status = -EFAULT, .len = 5}));
	ck_assert(pack_res_ok(&g, &(struct wire_pack_res){.status = -EFAULT}));
	ck_assert(pack_res_ok(&pt, &(struct wire_pack_res){0}));
	ck_assert(!pack_res_ok(&pt, &(struct wire_pack_res){.len = 5}));
	ck_assert(!pack_res_ok(&pt, &(struct wire_pack_res){.status = 1}));
	free(h0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pack");
	TCase *tc = tcase_create("pack");
	tcase_add_test(tc, test_check);
	tcase_add_test(tc, test_execute);
	tcase_add_test(tc, test_amo);
	tcase_add_test(tc, test_serve_rule);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
