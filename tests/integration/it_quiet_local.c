/*
 * it_quiet_local: a quiet after nothing but direct same-node operations
 * completes in the library, without a round trip to the daemon; a quiet
 * after an operation that went to the daemon still waits for it.
 *
 * Every PE: ITERS rounds of a direct put to its right neighbour followed
 * by hoist_quiet must post no quiet descriptor (quiets_posted stays,
 * quiets_local grows by ITERS). Then a put that must take the daemon path
 * (an nbi get is pending, so the direct path is closed), a quiet that
 * must post one, and a direct store of a flag: the neighbour, seeing the
 * flag, must see the put's data (the quiet completed it). The put is a
 * strided one (rows of 64 B): those always go through the daemon.
 * Run with HOIST_DIRECT=1 (the default) and 2 or 4 PEs on one daemon.
 */
#include <inttypes.h>

#include "internal.h"
#include "it_common.h"

#define ITERS 200
#define BLOCK 4096

int main(void)
{
	int me, n;
	it_init("it_quiet_local", &me, &n);
	it_watchdog(30);
	if (n < 2)
		IT_FAIL("run me with 2 or more PEs, not %d", n);
	if (it_failures)
		return 1;
	struct hoist_ctx *c = hoist__ctx();
	uint64_t *w = it_malloc(BLOCK * 2 + 64);
	unsigned char *data = (unsigned char *)w;       /* [BLOCK] the neighbour's put */
	unsigned char *src = data + BLOCK;               /* [BLOCK] what I get */
	uint64_t *flag = (uint64_t *)(src + BLOCK);
	int right = (me + 1) % n, left = (me + n - 1) % n;
	IT_OK(hoist_barrier(), "start");

	/* 1: direct puts + quiets post nothing */
	IT_OK(hoist_quiet(), "settle");
	uint64_t q0 = c->quiets_posted, l0 = c->quiets_local, d0 = c->direct_puts;
	for (int i = 0; i < ITERS; i++) {
		uint64_t v = (uint64_t)i;
		IT_WHERE("direct put + quiet %d", i);
		IT_OK(hoist_put(right, flag, &v, sizeof(v)), "put %d", i);
		IT_OK(hoist_quiet(), "quiet %d", i);
	}
	if (c->direct_puts - d0 != ITERS)
		IT_FAIL("%" PRIu64 " of %d puts went the direct path", c->direct_puts - d0, ITERS);
	if (c->quiets_posted != q0)
		IT_FAIL("%" PRIu64 " quiets posted to the daemon after %d direct puts + quiets",
			c->quiets_posted - q0, ITERS);
	if (c->quiets_local - l0 != ITERS)
		IT_FAIL("%" PRIu64 " local quiets, want %d", c->quiets_local - l0, ITERS);
	IT_OK(hoist_barrier(), "after the direct rounds");
	*flag = 0;
	IT_OK(hoist_barrier(), "flag reset");

	/* 2: a daemon-path put; the quiet must wait for it */
	for (int r = 1; r <= 4; r++) {
		it_fill(src, BLOCK, (uint64_t)me * 100 + (uint64_t)r);
		uint64_t dp = c->direct_puts, qp = c->quiets_posted;
		IT_OK(hoist_put_strided(right, data, 64, src, 64, 64, BLOCK / 64), "round %d put", r);
		if (c->direct_puts != dp)
			IT_FAIL("round %d: the strided put went the direct path", r);
		IT_OK(hoist_quiet(), "round %d quiet", r);
		if (c->quiets_posted != qp + 1)
			IT_FAIL("round %d: %" PRIu64 " quiets posted, want 1", r, c->quiets_posted - qp);
		uint64_t v = (uint64_t)r;
		dp = c->direct_puts;
		IT_OK(hoist_put(right, flag, &v, sizeof(v)), "round %d flag", r);
		if (c->direct_puts != dp + 1)
			IT_FAIL("round %d: the flag did not go the direct path", r);
		IT_WHERE("round %d: wait for the flag from %d", r, left);
		IT_OK(hoist_wait_until(flag, HOIST_UINT64, HOIST_CMP_GE, (uint64_t)r), "round %d", r);
		size_t bad = it_check_fill(data, BLOCK, (uint64_t)left * 100 + (uint64_t)r);
		if (bad != BLOCK)
			IT_FAIL("round %d: data from %d wrong at byte %zu after its quiet and flag", r,
				left, bad);
		IT_OK(hoist_barrier(), "round %d end", r);
	}
	return it_finish();
}
