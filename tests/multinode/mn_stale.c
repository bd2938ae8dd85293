/*
 * mn_stale: a departed PE's remote key must not break other traffic.
 * Driven by stale_key.sh (2 daemons; over verbs in the rxe VM).
 *
 *   mn_stale bystander - job B, 2 PEs, one per daemon: rounds of put to the
 *     other PE, get it back and compare, barrier, until $MN_STOP_FILE
 *     exists (at least MN_MIN_ROUNDS rounds). Every call must succeed and
 *     every byte read back must be right: B shares the daemons' connections
 *     with job A while A's PEs leave. After MN_MIN_ROUNDS rank 0 creates
 *     $MN_READY_FILE.
 *   mn_stale streamer - job A, 2 PEs, one per daemon: rank 1 only waits
 *     (the script kills it); rank 0 keeps bursts of put_nbi and get_nbi to
 *     rank 1 in flight (so the daemon holds rank 1's heap address and rkey
 *     cached and uses them while rank 1 goes away) and checks what it reads
 *     back. After MN_MIN_ROUNDS bursts it creates $MN_READY_FILE. It stops
 *     at the first error: -ECONNRESET (the PE is gone) exits 42, anything
 *     else, wrong data, or no error within MN_MAX_SEC exits 1.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "it_common.h"

#define MN_EXIT_RESET 42
#define MN_MIN_ROUNDS 10
#define MN_MAX_SEC 90.0
#define PIECE 8192u
#define NPIECE 16u

static void touch(const char *path)
{
	int fd = path ? open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) : -1;
	if (path && fd < 0)
		IT_FAIL("cannot create %s", path);
	if (fd >= 0)
		close(fd);
}

static int bystander(void)
{
	int me, n;
	it_init("mn_stale bystander", &me, &n);
	it_watchdog(280);
	if (n != 2) {
		IT_FAIL("wants 2 PEs, not %d", n);
		return it_finish();
	}
	const char *stop_file = getenv("MN_STOP_FILE"), *ready = getenv("MN_READY_FILE");
	int peer = 1 - me;
	unsigned char *slot = it_malloc(2 * (size_t)NPIECE * PIECE);
	uint64_t *stopw = it_malloc(2 * sizeof(uint64_t));
	unsigned char *src = it_xmalloc(NPIECE * PIECE), *back = it_xmalloc(NPIECE * PIECE);
	memset(stopw, 0, 2 * sizeof(uint64_t));
	IT_OK(hoist_barrier(), "start");
	double t0 = it_now();
	long r;
	for (r = 1; !it_failures; r++) {
		int b = (int)(r % 2);
		IT_WHERE("bystander round %ld", r);
		size_t len = 512 + (size_t)(r % NPIECE) * PIECE;
		uint64_t key = it_hash(0x57a1e, (uint64_t)me, (uint64_t)r, 0, 0);
		it_fill(src, len, key);
		/* each PE owns one half of the other's slot */
		unsigned char *dst = slot + (size_t)me * NPIECE * PIECE;
		IT_OK(hoist_put(peer, dst, src, len), "round %ld put to pe %d", r, peer);
		memset(back, 0, len);
		IT_OK(hoist_get(back, peer, dst, len), "round %ld get from pe %d", r, peer);
		size_t off = it_check_fill(back, len, key);
		if (off != len)
			IT_FAIL("round %ld: data read back from pe %d wrong at offset %zu of %zu", r, peer, off, len);
		if (me == 0) {
			struct stat sb;
			uint64_t stop = r >= MN_MIN_ROUNDS && stop_file && stat(stop_file, &sb) == 0;
			IT_OK(hoist_put(peer, &stopw[b], &stop, sizeof(stop)), "round %ld stop flag", r);
			stopw[b] = stop;
			if (r == MN_MIN_ROUNDS)
				touch(ready);
		}
		if (IT_OK(hoist_barrier(), "round %ld", r) != 0)
			break;
		if (*(volatile uint64_t *)&stopw[b])
			break;
	}
	if (me == 0)
		it_log("%ld rounds in %.2f s", r, it_now() - t0);
	free(src);
	free(back);
	return it_finish();
}

static int streamer(void)
{
	int me, n;
	it_init("mn_stale streamer", &me, &n);
	it_watchdog(120);
	if (n != 2) {
		IT_FAIL("wants 2 PEs, not %d", n);
		return it_finish();
	}
	unsigned char *slot = it_malloc((size_t)NPIECE * PIECE);
	unsigned char *src = it_xmalloc((size_t)NPIECE * PIECE), *back = it_xmalloc((size_t)NPIECE * PIECE);
	IT_OK(hoist_barrier(), "start");
	if (it_failures)
		return it_finish();
	if (me == 1) {
		for (;;)
			pause(); /* the script kills it */
	}
	const char *ready = getenv("MN_READY_FILE");
	double t0 = it_now();
	int rc = 0;
	long r;
	for (r = 1; it_now() - t0 < MN_MAX_SEC; r++) {
		IT_WHERE("burst %ld", r);
		uint64_t key = it_hash(0x57a1f, (uint64_t)r, 0, 0, 0);
		it_fill(src, (size_t)NPIECE * PIECE, key);
		for (unsigned i = 0; i < NPIECE && !rc; i++)
			rc = hoist_put_nbi(1, slot + i * PIECE, src + i * PIECE, PIECE);
		for (unsigned i = 0; i < NPIECE && !rc; i++)
			rc = hoist_get_nbi(back + i * PIECE, 1, slot + i * PIECE, PIECE);
		int q = hoist_quiet();
		if (!rc)
			rc = q;
		if (rc)
			break;
		size_t off = it_check_fill(back, (size_t)NPIECE * PIECE, key);
		if (off != (size_t)NPIECE * PIECE) {
			IT_FAIL("burst %ld: data read back from pe 1 wrong at offset %zu", r, off);
			return 1;
		}
		if (r == MN_MIN_ROUNDS)
			touch(ready);
	}
	if (rc != -ECONNRESET) {
		IT_FAIL("burst %ld: %s (%s), expected -ECONNRESET once pe 1 is gone", r, it_errname(rc),
			rc ? hoist_strerror(rc) : "no error within the time limit");
		return 1;
	}
	it_log("-ECONNRESET in burst %ld, %.2f s after the start", r, it_now() - t0);
	rc = hoist_finalize();
	if (rc != 0 && rc != -ECONNRESET)
		IT_FAIL("hoist_finalize after pe 1 left returned %s", it_errname(rc));
	free(src);
	free(back);
	return it_failures ? 1 : MN_EXIT_RESET;
}

int main(int argc, char **argv)
{
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "bystander"))
		return bystander();
	if (argc == 2 && !strcmp(argv[1], "streamer"))
		return streamer();
	fprintf(stderr, "usage: mn_stale bystander|streamer\n");
	return 2;
}
