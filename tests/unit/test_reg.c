/* daemon/reg.c: the registration layer, with a fake transport that only
 * makes and releases handles. The memlock budget refuses an attach that
 * does not fit (before the transport is asked), a departed client's
 * handles and memory stay until its grace period ends (or an attach needs
 * the bytes: oldest first), a transport's failure leaves nothing behind,
 * and the pinned table hands out keys a peer can come back with. */
#include <check.h>
#include <errno.h>
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "reg.h"
#include "transport.h"
#include "wire.h"
#include "unit_util.h"

#define PAGE 4096u

static int nreg, ndereg, fail_after;
static void *freed[16];

/* handles: heap 0x100 + n*4, staging +1, prefetch +2 (never dereferenced) */
static int fake_reg(struct daemon *d, struct client *c, char *why, size_t whylen)
{
	(void)d;
	nreg++;
	const struct region *rg[3] = {&c->heap, &c->staging, &c->pf};
	for (int i = 0; i < 3; i++) {
		if (!rg[i]->base)
			continue;
		if (fail_after && i >= fail_after) {
			snprintf(why, whylen, "device says no");
			return -EFAULT;
		}
		c->mr[i] = (void *)(uintptr_t)(0x100 + 4 * nreg + i);
	}
	return 0;
}

static void fake_dereg(struct daemon *d, void *const *mr)
{
	(void)d;
	for (int i = 0; i < XP_NMR; i++)
		if (mr[i] && ndereg < 16)
			freed[ndereg++] = mr[i];
}

static uint32_t fake_rkey(const void *mr)
{
	return 0xab000000u | (uint32_t)(uintptr_t)mr;
}

static const struct transport_ops pinning = {
	.name = "fake", .mem_reg = fake_reg, .mem_dereg = fake_dereg, .mem_rkey = fake_rkey};
static const struct transport_ops plain = {.name = "plain"}; /* tcp: registers nothing */

static struct daemon *d;

static void setup(void)
{
	nreg = ndereg = fail_after = 0;
	memset(freed, 0, sizeof(freed));
	d = calloc(1, sizeof(*d));
	ck_assert_ptr_nonnull(d);
	d->cfg.max_clients = 2;
	d->cfg.peer_timeout_ms = 100; /* grace: REG_GRACE_MIN_MS */
	d->net.self = 3;
	d->pinned_limit = 5 * PAGE;
	d->xport = &pinning;
	ck_assert_int_eq(reg_init(d), 0);
}

static void teardown(void)
{
	reg_fini(d);
	free(d);
}

/* a client with a heap and a staging region of pages each */
static struct client *client_new(size_t heap_pages, size_t staging_pages)
{
	struct client *c = calloc(1, sizeof(*c));
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(region_create(&c->heap, "test-heap", heap_pages * PAGE, 0), 0);
	c->staging.fd = -1;
	if (staging_pages)
		ck_assert_int_eq(region_create(&c->staging, "test-staging", staging_pages * PAGE, 0), 0);
	c->pf.fd = -1;
	c->ring.fd = -1;
	return c;
}

static void client_gone(struct client *c)
{
	reg_retire(d, c);
	reg_deregister(d, c);
	region_destroy(&c->heap);
	region_destroy(&c->staging);
	free(c);
}

static uint64_t pinned(void)
{
	return __atomic_load_n(&d->pinned_bytes, __ATOMIC_RELAXED);
}

START_TEST(test_budget_refuses)
{
	struct client *a = client_new(2, 1), *b = client_new(2, 1);
	char why[400] = "";
	ck_assert_int_eq(reg_register(d, a, why, sizeof(why)), 0);
	ck_assert_uint_eq(pinned(), 3 * PAGE);
	ck_assert_uint_eq(d->vst.pinned_bytes, 3 * PAGE);
	ck_assert_ptr_nonnull(a->mr[0]);
	ck_assert_ptr_nonnull(a->mr[1]);
	/* 3 more pages do not fit 5: refused before the transport is asked */
	ck_assert_int_eq(reg_register(d, b, why, sizeof(why)), -ENOMEM);
	ck_assert_ptr_nonnull(strstr(why, "memlock budget is 20480 bytes"));
	ck_assert_int_eq(nreg, 1);
	ck_assert_ptr_null(b->mr[0]);
	ck_assert_uint_eq(d->vst.pinned_refused, 1);
	ck_assert_uint_eq(pinned(), 3 * PAGE);
	/* deregistered: the bytes are back, the handles released */
	reg_deregister(d, a);
	ck_assert_uint_eq(pinned(), 0);
	ck_assert_int_eq(ndereg, 2);
	ck_assert_int_eq(reg_register(d, b, why, sizeof(why)), 0);
	client_gone(a);
	client_gone(b);
}
END_TEST

/* A transport without mem_reg (tcp, one node): nothing is pinned, no
 * budget applies, nothing is kept after the client. */
START_TEST(test_no_handles_no_budget)
{
	d->xport = &plain;
	struct client *a = client_new(4, 4), *b = client_new(4, 4);
	char why[400] = "";
	ck_assert_int_eq(reg_register(d, a, why, sizeof(why)), 0);
	ck_assert_int_eq(reg_register(d, b, why, sizeof(why)), 0);
	ck_assert_uint_eq(pinned(), 0);
	reg_retire(d, a);
	ck_assert_ptr_nonnull(a->heap.base); /* not taken over */
	ck_assert_uint_eq(d->vst.pinned_deferred, 0);
	client_gone(a);
	client_gone(b);
}
END_TEST

START_TEST(test_grace_period)
{
	struct client *a = client_new(2, 1);
	char why[400] = "";
	ck_assert_int_eq(reg_register(d, a, why, sizeof(why)), 0);
	void *h0 = a->mr[0];
	char *heap = a->heap.base;
	heap[0] = 'x';
	uint64_t t0 = now_ns();
	reg_retire(d, a);
	/* the registration layer holds the handles and the memory now */
	ck_assert_ptr_null(a->heap.base);
	ck_assert_ptr_null(a->mr[0]);
	ck_assert_uint_eq(d->vst.pinned_deferred, 1);
	client_gone(a);
	ck_assert_int_eq(ndereg, 0);
	ck_assert_uint_eq(pinned(), 3 * PAGE);
	ck_assert_int_eq(heap[0], 'x'); /* still mapped: a late put lands here */
	reg_timers(d, t0 + (REG_GRACE_MIN_MS - 100) * 1000000ull);
	ck_assert_int_eq(ndereg, 0);
	ck_assert_uint_eq(pinned(), 3 * PAGE);
	reg_timers(d, t0 + (REG_GRACE_MIN_MS + 1000) * 1000000ull);
	ck_assert_int_eq(ndereg, 2);
	ck_assert_ptr_eq(freed[0], h0);
	ck_assert_uint_eq(pinned(), 0);
	ck_assert_uint_eq(d->vst.pinned_grace_cut, 0);
}
END_TEST

/* An attach that only fits without a departed client's bytes cuts its
 * grace period short, oldest first, and only as far as needed. */
START_TEST(test_grace_cut_for_budget)
{
	struct client *a = client_new(1, 1), *b = client_new(1, 1), *c = client_new(2, 2);
	char why[400] = "";
	ck_assert_int_eq(reg_register(d, a, why, sizeof(why)), 0);
	ck_assert_int_eq(reg_register(d, b, why, sizeof(why)), 0);
	void *a0 = a->mr[0];
	client_gone(a); /* older */
	client_gone(b);
	ck_assert_uint_eq(pinned(), 4 * PAGE);
	ck_assert_int_eq(reg_register(d, c, why, sizeof(why)), 0); /* 4 + 4 > 5: cut a and b */
	ck_assert_uint_eq(d->vst.pinned_grace_cut, 2);
	ck_assert_ptr_eq(freed[0], a0);
	ck_assert_uint_eq(pinned(), 4 * PAGE);
	client_gone(c);
	struct client *e = client_new(1, 0);
	ck_assert_int_eq(reg_register(d, e, why, sizeof(why)), 0); /* fits: c keeps its grace */
	ck_assert_uint_eq(d->vst.pinned_grace_cut, 2);
	ck_assert_uint_eq(pinned(), 5 * PAGE);
	client_gone(e);
	reg_release_all(d);
	ck_assert_uint_eq(pinned(), 0);
}
END_TEST

START_TEST(test_transport_fails)
{
	struct client *a = client_new(1, 1);
	char why[400] = "";
	fail_after = 1; /* the heap's handle made, the staging's refused */
	ck_assert_int_eq(reg_register(d, a, why, sizeof(why)), -EFAULT);
	ck_assert_str_eq(why, "device says no");
	ck_assert_int_eq(ndereg, 1); /* the heap's released */
	ck_assert_ptr_null(a->mr[0]);
	ck_assert_uint_eq(pinned(), 0);
	ck_assert_uint_eq(d->vst.pinned_refused, 1);
	client_gone(a);
}
END_TEST

START_TEST(test_pinned_table)
{
	struct client *a = client_new(1, 0), *b = client_new(1, 0), *c = client_new(1, 0);
	struct wire_entry e;
	/* table's own keys (tcp) */
	d->xport = &plain;
	ck_assert_int_eq(reg_pin(d, a), 0);
	ck_assert_int_eq(reg_pin(d, b), 0);
	ck_assert_int_eq(reg_pin(d, c), -ENOSPC); /* max_clients entries */
	ck_assert_int_eq(reg_entry(d, c, &e), -ENOMEM);
	ck_assert_int_eq(reg_entry(d, b, &e), 0);
	ck_assert(e.valid && e.node == 3 && e.len == PAGE);
	ck_assert_uint_eq(e.base, (uint64_t)(uintptr_t)b->heap.base);
	ck_assert_uint_eq(e.rkey & 0xffff, b->pin_slot);
	const struct reg_pin *p = reg_find(d, e.rkey, e.gen);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_eq(p->client, b);
	ck_assert_ptr_null(reg_find(d, e.rkey, e.gen + 1));
	ck_assert_ptr_null(reg_find(d, e.rkey ^ 0x10000, e.gen));
	/* the slot goes to another client: the old key is stale */
	reg_unpin(d, b);
	ck_assert_ptr_null(reg_find(d, e.rkey, e.gen));
	ck_assert_int_eq(reg_pin(d, c), 0);
	ck_assert_uint_eq(c->pin_slot, e.rkey & 0xffff);
	ck_assert_ptr_null(reg_find(d, e.rkey, e.gen));
	reg_unpin(d, b); /* not its entry any more: c keeps it */
	ck_assert_int_eq(reg_entry(d, c, &e), 0);
	reg_unpin(d, a);
	reg_unpin(d, c);
	/* a transport with its own keys (verbs): the heap's handle's */
	d->xport = &pinning;
	char why[400];
	ck_assert_int_eq(reg_register(d, a, why, sizeof(why)), 0);
	ck_assert_int_eq(reg_pin(d, a), 0);
	ck_assert_int_eq(reg_entry(d, a, &e), 0);
	ck_assert_uint_eq(e.rkey, fake_rkey(a->mr[0]));
	ck_assert_int_eq(reg_pin(d, b), 0); /* not registered: no entry */
	ck_assert_int_eq(reg_entry(d, b, &e), -ENOMEM);
	client_gone(a);
	client_gone(b);
	client_gone(c);
}
END_TEST

int main(void)
{
	if (sodium_init() < 0)
		return 1;
	Suite *s = suite_create("reg");
	TCase *tc = tcase_create("reg");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_budget_refuses);
	tcase_add_test(tc, test_no_handles_no_budget);
	tcase_add_test(tc, test_grace_period);
	tcase_add_test(tc, test_grace_cut_for_budget);
	tcase_add_test(tc, test_transport_fails);
	tcase_add_test(tc, test_pinned_table);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
