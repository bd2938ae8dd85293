/*
 * it_kill: a PE that dies does not take its job's survivors, other jobs,
 * or the daemon down with it. Driven by kill.sh.
 *
 *   it_kill victim     job A, 2 PEs. Rank 1 kills itself (SIGKILL) in the
 *                      middle of a put loop. Rank 0, already waiting in a
 *                      barrier, must get -ECONNRESET (not hang); then its
 *                      puts to the dead PE return 0 or -ECONNRESET, and
 *                      later barriers fail with -ECONNRESET as well.
 *                      Exit 0 iff rank 0 saw all that.
 *   it_kill bystander  job B, any size: put/barrier/check rounds until
 *                      rank 0 sees the file $IT_STOP_FILE (at least 20
 *                      rounds, at most 30 s times it_scale()); everything
 *                      must succeed.
 */
#include <sys/stat.h>

#include "it_common.h"

#define BLOCK 65536u

static int victim(void)
{
	int me, n;
	it_init("it_kill victim", &me, &n);
	it_watchdog(40);
	if (n != 2) {
		IT_FAIL("victim mode wants 2 PEs, not %d", n);
		return 1;
	}
	unsigned char *buf = it_malloc(8 * BLOCK);
	unsigned char *src = it_xmalloc(BLOCK);
	memset(src, me + 1, BLOCK);

	if (me == 0) {
		const char *job = getenv("HOIST_JOB");
		int h = job ? it_stats_has(NULL, job) : -1;
		if (h != 1)
			IT_FAIL("hoistctl stats --json does not list job '%s' while it runs (%d)", job ? job : "?", h);
	}
	IT_OK(hoist_barrier(), "before the kill");

	if (me == 1) {
		usleep(200000); /* let rank 0 get into its barrier first */
		for (int i = 0;; i++) {
			IT_OK(hoist_put(0, buf + (size_t)(i % 8) * BLOCK, src, BLOCK), "put %d", i);
			if (i == 40) {
				fprintf(stderr, "[it_kill victim rank 1] raising SIGKILL after %d puts\n", i + 1);
				raise(SIGKILL);
			}
		}
	}

	/* rank 0: already waiting in the barrier when the peer dies (rank 1
	 * dawdles first): the barrier must fail, not hang */
	double t0 = it_now();
	IT_WHERE("barrier while the peer dies");
	IT_EXPECT(hoist_barrier(), -ECONNRESET, "barrier that was waiting when the peer died");
	double t1 = it_now();
	/* keep talking to the dead PE */
	int zero = 0, reset = 0;
	for (int i = 0; i < 100; i++) {
		int rc = hoist_put(1, buf + (size_t)(i % 8) * BLOCK, src, BLOCK);
		if (rc == 0)
			zero++;
		else if (rc == -ECONNRESET)
			reset++;
		else
			IT_FAIL("put %d to the dead PE returned %s (expected 0 or -ECONNRESET)", i, it_errname(rc));
	}
	IT_WHERE("barrier after the peer died");
	IT_EXPECT(hoist_barrier(), -ECONNRESET, "barrier entered after the peer died");
	/* split phase: the error may surface at notify or at wait */
	int nrc = hoist_barrier_notify();
	if (nrc == 0)
		IT_EXPECT(hoist_barrier_wait(), -ECONNRESET, "split barrier wait after the peer died");
	else if (nrc != -ECONNRESET)
		IT_FAIL("hoist_barrier_notify after the peer died returned %s, expected 0 or -ECONNRESET",
			it_errname(nrc));
	IT_WHERE("quiet/finalize after the peer died");
	int rc = hoist_quiet();
	if (rc != 0 && rc != -ECONNRESET)
		IT_FAIL("hoist_quiet after the peer died returned %s (expected 0 or -ECONNRESET)", it_errname(rc));
	rc = hoist_finalize();
	free(src);
	it_log("barrier failed after %.2f s; puts to the dead PE: %d ok, %d -ECONNRESET; finalize %s", t1 - t0, zero, reset,
	       it_errname(rc));
	if (rc != 0 && rc != -ECONNRESET)
		IT_FAIL("hoist_finalize after the peer died returned %s (expected 0 or -ECONNRESET)",
			it_errname(rc));
	if (it_failures)
		return 1;
	fprintf(stderr, "[it_kill victim rank 0] PASS\n");
	return 0;
}

static int bystander(void)
{
	int me, n;
	it_init("it_kill bystander", &me, &n);
	it_watchdog(50);
	const char *stop_file = getenv("IT_STOP_FILE");
	unsigned char *slots = it_malloc(2 * (size_t)BLOCK);
	uint64_t *stopw = it_malloc(2 * sizeof(uint64_t));
	unsigned char *src = it_xmalloc(BLOCK);
	memset(stopw, 0, 2 * sizeof(uint64_t));
	IT_OK(hoist_barrier(), "start");
	int to = (me + 1) % n, from = (me + n - 1) % n;
	double t0 = it_now();
	int r;
	for (r = 1;; r++) {
		int b = r % 2;
		IT_WHERE("bystander round %d", r);
		size_t len = 1024 + (size_t)(r % 7) * 4096;
		it_fill(src, len, it_hash(0xb7, (uint64_t)me, (uint64_t)r, 0, 0));
		IT_OK(hoist_put(to, slots + (size_t)b * BLOCK, src, len), "round %d put to pe %d", r, to);
		if (me == 0) {
			struct stat sb;
			uint64_t stop = (r >= 20 && stop_file && stat(stop_file, &sb) == 0) || it_now() - t0 > 30.0 * it_scale();
			for (int t = 0; t < n; t++)
				IT_OK(hoist_put(t, &stopw[b], &stop, sizeof(stop)), "round %d stop flag", r);
		}
		if (IT_OK(hoist_barrier(), "round %d", r) != 0)
			break;
		uint64_t key = it_hash(0xb7, (uint64_t)from, (uint64_t)r, 0, 0);
		size_t off = it_check_fill(slots + (size_t)b * BLOCK, len, key);
		if (off != len)
			IT_FAIL("round %d: data from pe %d wrong at offset %zu", r, from, off);
		if (*(volatile uint64_t *)&stopw[b])
			break;
	}
	if (me == 0)
		it_log("%d rounds in %.2f s", r, it_now() - t0);
	free(src);
	return it_finish();
}

int main(int argc, char **argv)
{
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "victim"))
		return victim();
	if (argc == 2 && !strcmp(argv[1], "bystander"))
		return bystander();
	fprintf(stderr, "usage: it_kill victim|bystander\n");
	return 2;
}
