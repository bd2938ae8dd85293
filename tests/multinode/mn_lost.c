/*
 * mn_lost: a job whose peer's daemon goes away. Driven by peer_lost.sh.
 *
 * 2 PEs, one per daemon. Both loop: put 64 KiB to the other PE, get it
 * back and compare, barrier. Once rank 0 has done MN_MIN_ROUNDS (20)
 * rounds it creates the file $MN_READY_FILE (the script then kills or
 * stops the other daemon). Rank 0 keeps looping until an operation fails:
 *   - -ECONNRESET from a put, get or barrier: it logs which one, after how
 *     many rounds and how long after the last success, checks that a
 *     further barrier and a further put to the lost PE fail too (put: 0
 *     or -ECONNRESET, barrier: -ECONNRESET), finalizes (0 or
 *     -ECONNRESET) and exits 42 (MN_EXIT_RESET) - the script wants that;
 *   - any other error, or bad data: exit 1;
 *   - no error within MN_MAX_SEC (60) seconds: exit 1 (the loss was never
 *     reported).
 * Rank 1 runs the same loop; when its own daemon dies it exits with
 * whatever it sees (the script does not check it, it is killed at the end).
 */
#include <fcntl.h>

#include "it_common.h"

#define BLOCK 65536u
#define MN_EXIT_RESET 42
#define MN_MIN_ROUNDS 20
#define MN_MAX_SEC 60.0

static const char *opname;

static int step(int rc, const char *what)
{
	if (rc != 0)
		opname = what;
	return rc;
}

int main(void)
{
	int me, n;
	it_init("mn_lost", &me, &n);
	it_watchdog(90);
	if (n != 2) {
		IT_FAIL("wants 2 PEs, not %d", n);
		return it_finish();
	}
	const char *ready = getenv("MN_READY_FILE");
	int peer = 1 - me;
	unsigned char *slot = it_malloc(BLOCK);
	unsigned char *src = it_xmalloc(BLOCK), *back = it_xmalloc(BLOCK);
	IT_OK(hoist_barrier(), "start");
	if (it_failures)
		return it_finish();

	double t0 = it_now(), last_ok = t0;
	int rc = 0;
	long r;
	for (r = 0; it_now() - t0 < MN_MAX_SEC; r++) {
		IT_WHERE("round %ld", r);
		uint64_t key = it_hash(0x105, (uint64_t)me, (uint64_t)r, 0, 0);
		it_fill(src, BLOCK, key);
		/* each PE writes the first half of the other's slot (me == 0) or the second */
		unsigned char *dst = slot + (size_t)me * (BLOCK / 2);
		if ((rc = step(hoist_put(peer, dst, src, BLOCK / 2), "put")))
			break;
		memset(back, 0, BLOCK / 2);
		if ((rc = step(hoist_get(back, peer, dst, BLOCK / 2), "get")))
			break;
		size_t off = it_check_fill(back, BLOCK / 2, key);
		if (off != BLOCK / 2) {
			IT_FAIL("round %ld: data read back from pe %d wrong at offset %zu", r, peer, off);
			return 1;
		}
		if ((rc = step(hoist_barrier(), "barrier")))
			break;
		last_ok = it_now();
		if (me == 0 && r + 1 == MN_MIN_ROUNDS && ready) {
			int fd = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
			if (fd < 0)
				IT_FAIL("cannot create %s", ready);
			else
				close(fd);
		}
	}
	if (rc == 0) {
		IT_FAIL("no operation failed within %.0f s (%ld rounds): the lost peer was never reported", MN_MAX_SEC, r);
		return 1;
	}
	double dt = it_now() - last_ok;
	if (me != 0) {
		it_log("%s failed with %s after %ld rounds", opname, it_errname(rc), r);
		return 3;
	}
	if (rc != -ECONNRESET) {
		IT_FAIL("%s in round %ld returned %s (%s), expected -ECONNRESET", opname, r, it_errname(rc),
			hoist_strerror(rc));
		return 1;
	}
	it_log("%s returned -ECONNRESET in round %ld, %.2f s after the last good round", opname, r, dt);
	if (r < MN_MIN_ROUNDS)
		IT_FAIL("the failure came in round %ld, before the peer was stopped (round %d)", r, MN_MIN_ROUNDS);
	/* the job stays broken */
	IT_WHERE("barrier after the loss");
	IT_EXPECT(hoist_barrier(), -ECONNRESET, "barrier after the peer's node was lost");
	IT_WHERE("put after the loss");
	rc = hoist_put(peer, slot, src, 64);
	if (rc != 0 && rc != -ECONNRESET)
		IT_FAIL("put to the lost PE returned %s, expected 0 or -ECONNRESET", it_errname(rc));
	rc = hoist_get(back, peer, slot, 64);
	if (rc != -ECONNRESET)
		IT_FAIL("get from the lost PE returned %s, expected -ECONNRESET", it_errname(rc));
	rc = hoist_quiet();
	if (rc != 0 && rc != -ECONNRESET)
		IT_FAIL("hoist_quiet after the loss returned %s", it_errname(rc));
	IT_WHERE("finalize after the loss");
	rc = hoist_finalize();
	if (rc != 0 && rc != -ECONNRESET)
		IT_FAIL("hoist_finalize after the loss returned %s (expected 0 or -ECONNRESET)", it_errname(rc));
	free(src);
	free(back);
	if (it_failures)
		return 1;
	fprintf(stderr, "[mn_lost rank 0] PASS (lost peer reported)\n");
	return MN_EXIT_RESET;
}
