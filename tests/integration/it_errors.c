/*
 * it_errors: API-level bad input is refused with the documented code, and
 * the job (and the daemon) keep working afterwards.
 *
 *  - before hoist_init: every call returns -ENOTCONN (hoist_malloc NULL)
 *  - hoist_strerror: non-NULL, non-empty, distinct text for every code
 *  - PE -1, PE == size (and INT_MIN/INT_MAX): -EINVAL
 *  - symmetric address outside the heap (malloc'd memory, before the heap,
 *    straddling its end, length overflowing): -EFAULT
 *  - NULL local buffer: -EINVAL
 *  - afterwards a correct put/get/barrier works
 *  - after hoist_finalize: -ENOTCONN again
 */
#include <limits.h>

#include "it_common.h"

static void calls_not_connected(const char *when)
{
	char buf[64] = {0};
	static char sym[64];
	IT_EXPECT(hoist_rank(), -ENOTCONN, "%s", when);
	IT_EXPECT(hoist_size(), -ENOTCONN, "%s", when);
	IT_EXPECT(hoist_put(0, sym, buf, 8), -ENOTCONN, "%s", when);
	IT_EXPECT(hoist_get(buf, 0, sym, 8), -ENOTCONN, "%s", when);
	IT_EXPECT(hoist_put_nbi(0, sym, buf, 8), -ENOTCONN, "%s", when);
	IT_EXPECT(hoist_get_nbi(buf, 0, sym, 8), -ENOTCONN, "%s", when);
	IT_EXPECT(hoist_fence(), -ENOTCONN, "%s", when);
	IT_EXPECT(hoist_quiet(), -ENOTCONN, "%s", when);
	IT_EXPECT(hoist_barrier(), -ENOTCONN, "%s", when);
	IT_EXPECT(hoist_barrier_notify(), -ENOTCONN, "%s", when);
	IT_EXPECT(hoist_barrier_wait(), -ENOTCONN, "%s", when);
	IT_EXPECT(hoist_finalize(), -ENOTCONN, "%s", when);
	void *p = hoist_malloc(64);
	if (p)
		IT_FAIL("hoist_malloc(64) %s returned %p, expected NULL", when, p);
	hoist_free(NULL);
	if (hoist_is_symmetric(buf, 8))
		IT_FAIL("hoist_is_symmetric(stack buffer) %s returned nonzero", when);
}

static void check_strerror(void)
{
	static const int codes[] = {-ENOTCONN, -EINVAL,     -EFAULT,     -ENOMEM, -ETIMEDOUT,
				    -EACCES,   -EADDRINUSE, -ECONNRESET, -EPROTO, -ENOENT, -EPERM};
	const size_t nc = sizeof(codes) / sizeof(codes[0]);
	char texts[sizeof(codes) / sizeof(codes[0])][256];
	for (size_t i = 0; i < nc; i++) {
		const char *s = hoist_strerror(codes[i]);
		if (!s || !*s) {
			IT_FAIL("hoist_strerror(%s) returned %s", it_errname(codes[i]), s ? "\"\"" : "NULL");
			texts[i][0] = 0;
			continue;
		}
		snprintf(texts[i], sizeof(texts[i]), "%s", s);
		for (size_t j = 0; j < i; j++)
			if (texts[j][0] && strcmp(texts[i], texts[j]) == 0)
				IT_FAIL("hoist_strerror(%s) and hoist_strerror(%s) both say \"%s\"",
					it_errname(codes[i]), it_errname(codes[j]), texts[i]);
	}
	static const int odd[] = {0, -12345, 12345, INT_MIN};
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		const char *s = hoist_strerror(odd[i]);
		if (!s || !*s)
			IT_FAIL("hoist_strerror(%d) returned %s", odd[i], s ? "\"\"" : "NULL");
	}
}

/* Largest len with hoist_is_symmetric(p, len) (p inside the heap). */
static size_t heap_room(const char *p)
{
	size_t lo = 1, hi = (size_t)1 << 44; /* lo symmetric, hi not */
	if (hoist_is_symmetric(p, hi))
		return hi;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (hoist_is_symmetric(p, mid))
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int main(void)
{
	it_name = "it_errors";
	setvbuf(stderr, NULL, _IOLBF, 0);
	it_watchdog(50);

	calls_not_connected("before hoist_init");
	check_strerror();

	int me, n;
	it_init("it_errors", &me, &n);

	char *a = it_malloc(4096);
	char *m = it_xmalloc(4096);
	char loc[64];
	memset(loc, 0x42, sizeof(loc));
	memset(a, 0, 4096);
	IT_OK(hoist_barrier(), "start");

	/* ---- PE outside the job ---- */
	const int badpe[] = {-1, n, n + 1, INT_MIN, INT_MAX};
	for (size_t i = 0; i < sizeof(badpe) / sizeof(badpe[0]); i++) {
		int pe = badpe[i];
		IT_EXPECT(hoist_put(pe, a, loc, 8), -EINVAL, "put to pe %d (size %d)", pe, n);
		IT_EXPECT(hoist_get(loc, pe, a, 8), -EINVAL, "get from pe %d (size %d)", pe, n);
		IT_EXPECT(hoist_put_nbi(pe, a, loc, 8), -EINVAL, "put_nbi to pe %d (size %d)", pe, n);
		IT_EXPECT(hoist_get_nbi(loc, pe, a, 8), -EINVAL, "get_nbi from pe %d (size %d)", pe, n);
		IT_EXPECT(hoist_put(pe, a, loc, 1000), -EINVAL, "staged put to pe %d", pe);
	}

	/* ---- symmetric address outside the heap ---- */
	int peer = (me + 1) % n;
	IT_EXPECT(hoist_put(peer, m, loc, 8), -EFAULT, "put with malloc'd dst");
	IT_EXPECT(hoist_put(peer, m, loc, 1000), -EFAULT, "staged put with malloc'd dst");
	IT_EXPECT(hoist_get(loc, peer, m, 8), -EFAULT, "get with malloc'd src");
	IT_EXPECT(hoist_put_nbi(peer, m, loc, 8), -EFAULT, "put_nbi with malloc'd dst");
	IT_EXPECT(hoist_get_nbi(loc, peer, m, 8), -EFAULT, "get_nbi with malloc'd src");
	IT_EXPECT(hoist_put(peer, loc, loc, 8), -EFAULT, "put with stack dst");

	size_t room = heap_room(a);
	if (room < 4096)
		IT_FAIL("hoist_is_symmetric(a, 4096) is false for hoist_malloc(4096) memory");
	char *end = a + room; /* first byte after the heap */
	IT_EXPECT(hoist_put(peer, end - 8, loc, 16), -EFAULT, "put straddling the heap end (room %zu)", room);
	IT_EXPECT(hoist_get(loc, peer, end - 8, 16), -EFAULT, "get straddling the heap end");
	IT_EXPECT(hoist_put_nbi(peer, end - 8, loc, 16), -EFAULT, "put_nbi straddling the heap end");
	IT_EXPECT(hoist_get_nbi(loc, peer, end - 8, 16), -EFAULT, "get_nbi straddling the heap end");
	IT_EXPECT(hoist_put(peer, end, loc, 1), -EFAULT, "put just past the heap end");
	IT_EXPECT(hoist_put(peer, a, loc, SIZE_MAX), -EFAULT, "put of SIZE_MAX bytes");
	IT_EXPECT(hoist_get(loc, peer, a, SIZE_MAX), -EFAULT, "get of SIZE_MAX bytes");
	IT_EXPECT(hoist_put(peer, a + 64, loc, SIZE_MAX - 32), -EFAULT, "put whose end wraps around");
	if (!hoist_is_symmetric(a - 1, 1)) {
		IT_EXPECT(hoist_put(peer, a - 1, loc, 8), -EFAULT, "put one byte before the heap");
		IT_EXPECT(hoist_get(loc, peer, a - 1, 8), -EFAULT, "get one byte before the heap");
	}

	/* ---- NULL buffers ---- */
	IT_EXPECT(hoist_put(peer, a, NULL, 8), -EINVAL, "put from NULL");
	IT_EXPECT(hoist_get(NULL, peer, a, 8), -EINVAL, "get into NULL");
	IT_EXPECT(hoist_put_nbi(peer, a, NULL, 8), -EINVAL, "put_nbi from NULL");
	IT_EXPECT(hoist_get_nbi(NULL, peer, a, 8), -EINVAL, "get_nbi into NULL");
	int rc = hoist_put(peer, NULL, loc, 8);
	if (rc != -EINVAL && rc != -EFAULT)
		IT_FAIL("put to NULL dst returned %s, expected -EINVAL or -EFAULT", it_errname(rc));

	/* nothing bad happened to the job: the memory is still all zero */
	IT_OK(hoist_quiet(), "after the errors");
	IT_OK(hoist_barrier(), "after the errors");
	size_t off = it_check_byte(a, 4096, 0);
	if (off != 4096)
		IT_FAIL("a refused operation wrote into the heap at offset %zu (0x%02x)", off, (unsigned char)a[off]);
	IT_OK(hoist_barrier(), "after the check");

	/* ---- a correct put/get still works ---- */
	char pat[1000], back[1000];
	it_fill(pat, sizeof(pat), it_hash(0xe77, (uint64_t)me, 0, 0, 0));
	IT_OK(hoist_put(peer, a + 8, pat, 8), "good inline put");
	IT_OK(hoist_put(peer, a + 64, pat, sizeof(pat)), "good staged put");
	IT_OK(hoist_barrier(), "after good puts");
	int from = (me + n - 1) % n;
	char want[1000];
	it_fill(want, sizeof(want), it_hash(0xe77, (uint64_t)from, 0, 0, 0));
	if (memcmp(a + 8, want, 8) != 0 || memcmp(a + 64, want, sizeof(want)) != 0)
		IT_FAIL("data put by pe %d after the errors is wrong", from);
	memset(back, 0, sizeof(back));
	IT_OK(hoist_get(back, peer, a + 64, sizeof(back)), "good get");
	if (memcmp(back, pat, sizeof(back)) != 0)
		IT_FAIL("get from pe %d after the errors returned wrong data", peer);
	IT_OK(hoist_barrier(), "end");

	rc = hoist_finalize();
	if (rc != 0)
		IT_FAIL("hoist_finalize returned %s", it_errname(rc));
	calls_not_connected("after hoist_finalize");
	free(m);
	if (it_failures) {
		fprintf(stderr, "[it_errors rank %d] %lu failure(s)\n", me, it_failures);
		return 1;
	}
	if (me == 0)
		fprintf(stderr, "[it_errors rank 0] PASS\n");
	return 0;
}
