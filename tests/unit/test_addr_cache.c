/* Remote-address cache: hit/miss, LRU eviction, generations, invalidation,
 * and a random run against a model that tracks the exact LRU order. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "addr_cache.h"
#include "unit_util.h"

static struct addr_entry ent(uint64_t job, int32_t pe, int32_t node, uint32_t gen)
{
	struct addr_entry e;
	memset(&e, 0, sizeof(e));
	e.key.job = job;
	e.key.pe = pe;
	e.key.seg = 0;
	e.node = node;
	e.base = 0x1000u * (uint64_t)(pe + 1);
	e.len = 4096;
	e.rkey = (uint32_t)(pe * 7 + 1);
	e.gen = gen;
	return e;
}

static struct addr_key key(uint64_t job, int32_t pe)
{
	struct addr_key k = {.job = job, .pe = pe, .seg = 0};
	return k;
}

START_TEST(test_hit_miss)
{
	struct addr_cache c;
	ck_assert_int_eq(addr_cache_init(&c, 4), 0);
	struct addr_key k = key(1, 3);
	ck_assert_ptr_null(addr_cache_lookup(&c, &k));
	struct addr_entry e = ent(1, 3, 2, 1);
	addr_cache_insert(&c, &e);
	const struct addr_entry *got = addr_cache_lookup(&c, &k);
	ck_assert_ptr_nonnull(got);
	ck_assert_int_eq(got->node, 2);
	ck_assert_uint_eq(got->rkey, e.rkey);
	ck_assert_uint_eq(got->base, e.base);
	ck_assert_uint_eq(c.st.hits, 1);
	ck_assert_uint_eq(c.st.misses, 1);
	/* find: the same entry, counted only when the transport says so */
	ck_assert_ptr_eq(addr_cache_find(&c, &k), got);
	ck_assert_uint_eq(c.st.hits + c.st.misses, 2);
	addr_cache_count(&c, 1);
	addr_cache_count(&c, 0);
	ck_assert_uint_eq(c.st.hits, 2);
	ck_assert_uint_eq(c.st.misses, 2);
	struct addr_key other = key(2, 3); /* same PE, other job */
	ck_assert_ptr_null(addr_cache_lookup(&c, &other));
	addr_cache_fini(&c);
	ck_assert_int_eq(addr_cache_init(&c, (1u << 24) + 1), -EINVAL);
}
END_TEST

/* Capacity 0 is the cache switched off (addr_cache_entries = 0): every
 * lookup misses, an insert keeps nothing, invalidations find nothing, and
 * resolve times still add up. */
START_TEST(test_off)
{
	struct addr_cache c;
	ck_assert_int_eq(addr_cache_init(&c, 0), 0);
	struct addr_entry e = ent(1, 3, 2, 1);
	struct addr_key k = key(1, 3);
	for (int i = 0; i < 5; i++) {
		addr_cache_insert(&c, &e);
		ck_assert_ptr_null(addr_cache_lookup(&c, &k));
	}
	ck_assert_uint_eq(c.st.misses, 5);
	ck_assert_uint_eq(c.st.hits, 0);
	ck_assert_uint_eq(c.st.inserts, 0);
	ck_assert_uint_eq(c.st.evictions, 0);
	ck_assert_uint_eq(c.count, 0);
	ck_assert_int_eq(addr_cache_invalidate(&c, &k, UINT32_MAX), 0);
	ck_assert_uint_eq(addr_cache_invalidate_job(&c, 1), 0);
	ck_assert_uint_eq(addr_cache_invalidate_node(&c, 2), 0);
	ck_assert_uint_eq(c.st.invalidations, 0);
	addr_cache_resolved(&c, 1500);
	addr_cache_resolved(&c, 500);
	ck_assert_uint_eq(c.st.resolves, 2);
	ck_assert_uint_eq(c.st.resolve_ns, 2000);
	addr_cache_fini(&c);
	addr_cache_fini(&c); /* twice is harmless */
}
END_TEST

START_TEST(test_lru_eviction)
{
	struct addr_cache c;
	ck_assert_int_eq(addr_cache_init(&c, 3), 0);
	for (int pe = 0; pe < 3; pe++) {
		struct addr_entry e = ent(1, pe, 0, 1);
		addr_cache_insert(&c, &e);
	}
	struct addr_key k0 = key(1, 0);
	ck_assert_ptr_nonnull(addr_cache_lookup(&c, &k0)); /* 0 is now most recent */
	struct addr_entry e3 = ent(1, 3, 0, 1);
	addr_cache_insert(&c, &e3); /* evicts 1, the least recent */
	ck_assert_uint_eq(c.st.evictions, 1);
	ck_assert_uint_eq(c.count, 3);
	struct addr_key k1 = key(1, 1), k2 = key(1, 2), k3 = key(1, 3);
	ck_assert_ptr_null(addr_cache_lookup(&c, &k1));
	ck_assert_ptr_nonnull(addr_cache_lookup(&c, &k0));
	ck_assert_ptr_nonnull(addr_cache_lookup(&c, &k2));
	ck_assert_ptr_nonnull(addr_cache_lookup(&c, &k3));
	addr_cache_fini(&c);
}
END_TEST

START_TEST(test_generations)
{
	struct addr_cache c;
	ck_assert_int_eq(addr_cache_init(&c, 8), 0);
	struct addr_entry e = ent(1, 0, 1, 5);
	addr_cache_insert(&c, &e);
	struct addr_entry old = ent(1, 0, 1, 4);
	old.rkey = 999;
	addr_cache_insert(&c, &old); /* a stale reply never wins */
	struct addr_key k = key(1, 0);
	ck_assert_uint_eq(addr_cache_lookup(&c, &k)->rkey, e.rkey);
	struct addr_entry nw = ent(1, 0, 1, 6);
	nw.rkey = 4242;
	addr_cache_insert(&c, &nw);
	ck_assert_uint_eq(addr_cache_lookup(&c, &k)->rkey, 4242);
	/* invalidation of an older generation keeps the newer entry */
	ck_assert_int_eq(addr_cache_invalidate(&c, &k, 5), 0);
	ck_assert_ptr_nonnull(addr_cache_lookup(&c, &k));
	ck_assert_int_eq(addr_cache_invalidate(&c, &k, 6), 1);
	ck_assert_ptr_null(addr_cache_lookup(&c, &k));
	ck_assert_uint_eq(c.st.invalidations, 1);
	addr_cache_fini(&c);
}
END_TEST

START_TEST(test_invalidate_job_and_node)
{
	struct addr_cache c;
	ck_assert_int_eq(addr_cache_init(&c, 64), 0);
	for (int pe = 0; pe < 20; pe++) {
		struct addr_entry a = ent(1, pe, pe % 4, 1), b = ent(2, pe, pe % 4, 1);
		addr_cache_insert(&c, &a);
		addr_cache_insert(&c, &b);
	}
	ck_assert_uint_eq(addr_cache_invalidate_job(&c, 1), 20);
	ck_assert_uint_eq(c.count, 20);
	ck_assert_uint_eq(addr_cache_invalidate_node(&c, 3), 5);
	for (int pe = 0; pe < 20; pe++) {
		struct addr_key k1 = key(1, pe), k2 = key(2, pe);
		ck_assert_ptr_null(addr_cache_lookup(&c, &k1));
		if (pe % 4 == 3)
			ck_assert_ptr_null(addr_cache_lookup(&c, &k2));
		else
			ck_assert_ptr_nonnull(addr_cache_lookup(&c, &k2));
	}
	/* freed slots are reusable */
	for (int pe = 100; pe < 144; pe++) {
		struct addr_entry a = ent(3, pe, 0, 1);
		addr_cache_insert(&c, &a);
	}
	ck_assert_uint_eq(c.count, 59);
	ck_assert_uint_eq(c.st.evictions, 0);
	addr_cache_fini(&c);
}
END_TEST

/* Model: an array ordered most-recent first. */
START_TEST(test_random_vs_model)
{
	enum { CAP = 16, KEYS = 40 };
	struct addr_cache c;
	ck_assert_int_eq(addr_cache_init(&c, CAP), 0);
	int order[CAP];
	int n = 0;
	uint64_t seed = 12345;
	for (int step = 0; step < 200000; step++) {
		int pe = (int)(rng_next(&seed) % KEYS);
		int op = (int)(rng_next(&seed) % 3);
		int at = -1;
		for (int i = 0; i < n; i++)
			if (order[i] == pe)
				at = i;
		struct addr_key k = key(7, pe);
		if (op == 0) { /* lookup */
			const struct addr_entry *e = addr_cache_lookup(&c, &k);
			CHK((e != NULL) == (at >= 0));
			if (e) {
				CHK_EQ(e->key.pe, pe);
				memmove(order + 1, order, (size_t)at * sizeof(int));
				order[0] = pe;
			}
		} else if (op == 1) { /* insert */
			struct addr_entry e = ent(7, pe, 0, 1);
			addr_cache_insert(&c, &e);
			if (at >= 0) {
				memmove(order + 1, order, (size_t)at * sizeof(int));
			} else {
				if (n == CAP)
					n--; /* the model evicts its least recent */
				memmove(order + 1, order, (size_t)n * sizeof(int));
				n++;
			}
			order[0] = pe;
		} else { /* invalidate */
			int dropped = addr_cache_invalidate(&c, &k, 1);
			CHK_EQ(dropped, at >= 0);
			if (at >= 0) {
				memmove(order + at, order + at + 1, (size_t)(n - at - 1) * sizeof(int));
				n--;
			}
		}
		CHK_EQ(c.count, n);
	}
	/* the LRU list matches the model's order exactly */
	uint32_t i = c.lru_head;
	for (int k = 0; k < n; k++) {
		CHK(i != AC_NIL);
		CHK_EQ(c.e[i].key.pe, order[k]);
		i = c.e[i].lru_next;
	}
	CHK(i == AC_NIL);
	addr_cache_fini(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("addr_cache");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_hit_miss);
	tcase_add_test(tc, test_off);
	tcase_add_test(tc, test_lru_eviction);
	tcase_add_test(tc, test_generations);
	tcase_add_test(tc, test_invalidate_job_and_node);
	tcase_add_test(tc, test_random_vs_model);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
