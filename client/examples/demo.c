/*
 * hoist-demo - a small job that exercises the public API and checks every
 * value it moves.
 *
 *   hoistrun -n 4 --runtime-dir DIR ./hoist-demo [WORDS]
 *
 * Every PE:
 *   1. allocates symmetric arrays (hoist_malloc),
 *   2. puts WORDS words to its right neighbour, barrier, checks what its
 *      left neighbour put,
 *   3. gets the left neighbour's local array (hoist_get) and checks it,
 *   4. passes a token around the ring (hoist_put + barrier per hop),
 *   5. gets every PE's array in chunks with hoist_get_nbi, then hoist_quiet,
 *   6. reports its number of failed checks to PE 0 (hoist_put + barrier).
 * PE 0 prints "demo: N PEs, all checks passed" or exits nonzero.
 * Uses only hoist.h; every return code is checked.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hoist.h"

#define DEFAULT_WORDS 1024
#define CHUNK_WORDS 64

static int me = -1, npes = 0;

#define CHECK(call)                                                                     \
	do {                                                                            \
		int rc_ = (call);                                                       \
		if (rc_ < 0) {                                                          \
			fprintf(stderr, "pe %d: %s failed: %s (%d)\n", me, #call,       \
				hoist_strerror(rc_), rc_);                              \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

/* The value PE pe stores at index i of array tag: unique per (tag, pe, i). */
static uint64_t pattern(unsigned tag, int pe, size_t i)
{
	return ((uint64_t)tag << 56) | ((uint64_t)(unsigned)pe << 32) | (uint64_t)i;
}

/* Count words of buf that differ from pattern(tag, pe, .); print the first. */
static int verify(const char *what, const uint64_t *buf, size_t words, unsigned tag, int pe)
{
	size_t bad = 0;
	for (size_t i = 0; i < words; i++) {
		uint64_t want = pattern(tag, pe, i);
		if (buf[i] != want) {
			if (bad == 0)
				fprintf(stderr,
					"pe %d/%d: %s from pe %d: word %zu is 0x%016" PRIx64
					", expected 0x%016" PRIx64 "\n",
					me, npes, what, pe, i, buf[i], want);
			bad++;
		}
	}
	printf("pe %d/%d: %s: received %zu words from pe %d: %s\n", me, npes, what, words, pe,
	       bad ? "FAILED" : "OK");
	return bad ? 1 : 0;
}

static void *sym_alloc(size_t bytes)
{
	void *p = hoist_malloc(bytes);
	if (!p) {
		fprintf(stderr, "pe %d: hoist_malloc(%zu) failed\n", me, bytes);
		exit(1);
	}
	if (hoist_is_symmetric(p, bytes) != 1) {
		fprintf(stderr, "pe %d: hoist_malloc(%zu) returned %p outside the symmetric heap\n",
			me, bytes, p);
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	size_t words = DEFAULT_WORDS;
	if (argc > 1) {
		char *end;
		unsigned long v = strtoul(argv[1], &end, 10);
		if (*end || v == 0 || v > (1ul << 20)) {
			fprintf(stderr, "usage: %s [WORDS]   (1..1048576, default %d)\n", argv[0],
				DEFAULT_WORDS);
			return 2;
		}
		words = v;
	}
	/* One write per line, so the lines of different PEs do not mix. */
	setvbuf(stdout, NULL, _IOLBF, 0);

	int rc = hoist_init();
	if (rc < 0) {
		fprintf(stderr, "demo: hoist_init: %s (%d)\n", hoist_strerror(rc), rc);
		return 1;
	}
	CHECK(me = hoist_rank());
	CHECK(npes = hoist_size());
	const int right = (me + 1) % npes;
	const int left = (me + npes - 1) % npes;
	const size_t bytes = words * sizeof(uint64_t);
	int failed = 0;

	uint64_t *inbox = sym_alloc(bytes);  /* written by the left neighbour */
	uint64_t *mine = sym_alloc(bytes);   /* filled locally, read by others */
	uint64_t *token = sym_alloc(sizeof(uint64_t));
	uint64_t *results = sym_alloc((size_t)npes * sizeof(uint64_t)); /* on PE 0 */
	uint64_t *local = malloc(bytes * (size_t)npes);
	if (!local) {
		fprintf(stderr, "pe %d: out of memory\n", me);
		return 1;
	}

	/* 1-2. put to the right neighbour; the barrier completes the puts. */
	for (size_t i = 0; i < words; i++) {
		mine[i] = pattern(2, me, i);
		local[i] = pattern(1, me, i);
	}
	CHECK(hoist_put(right, inbox, local, bytes));
	memset(local, 0, bytes); /* the source is reusable as soon as put returns */
	CHECK(hoist_barrier());
	failed += verify("put", inbox, words, 1, left);

	/* 3. blocking get of the left neighbour's array. */
	CHECK(hoist_get(local, left, mine, bytes));
	failed += verify("get", local, words, 2, left);

	/* 4. a token travels once around the ring; each holder adds rank+1. */
	uint64_t expect = 0;
	for (int hop = 0; hop < npes; hop++) {
		if (me == hop) {
			uint64_t v = hop == 0 ? 0 : *token;
			if (v != expect) {
				fprintf(stderr, "pe %d/%d: token is %" PRIu64 ", expected %" PRIu64 "\n", me,
					npes, v, expect);
				failed++;
			}
			v += (uint64_t)me + 1;
			CHECK(hoist_put(right, token, &v, sizeof(v)));
		}
		expect += (uint64_t)hop + 1;
		CHECK(hoist_barrier());
	}
	if (me == 0) {
		uint64_t want = (uint64_t)npes * (uint64_t)(npes + 1) / 2;
		int ok = *token == want;
		printf("pe %d/%d: token came back around %d PEs with %" PRIu64 ": %s\n", me, npes,
		       npes, *token, ok ? "OK" : "FAILED");
		failed += !ok;
	}

	/* 5. a batch of nonblocking gets from every PE (self included). */
	memset(local, 0, bytes * (size_t)npes);
	unsigned nbi = 0;
	for (int pe = 0; pe < npes; pe++)
		for (size_t off = 0; off < words; off += CHUNK_WORDS) {
			size_t n = words - off < CHUNK_WORDS ? words - off : CHUNK_WORDS;
			CHECK(hoist_get_nbi(&local[(size_t)pe * words + off], pe, &mine[off],
					    n * sizeof(uint64_t)));
			nbi++;
		}
	CHECK(hoist_quiet());
	int nbi_failed = 0;
	for (int pe = 0; pe < npes; pe++)
		nbi_failed += verify("get_nbi", &local[(size_t)pe * words], words, 2, pe);
	printf("pe %d/%d: get_nbi batch of %u gets: %s\n", me, npes, nbi, nbi_failed ? "FAILED" : "OK");
	failed += nbi_failed;

	/* 5b. PEs on this node: load their arrays directly (hoist_ptr). */
	int direct = 0, direct_failed = 0;
	for (int pe = 0; pe < npes; pe++) {
		const uint64_t *theirs = hoist_ptr(mine, pe); /* NULL: another node */
		if (!theirs)
			continue;
		direct++;
		direct_failed += verify("hoist_ptr", theirs, words, 2, pe);
	}
	printf("pe %d/%d: hoist_ptr reaches %d PEs of this node directly: %s\n", me, npes, direct,
	       direct_failed || direct < 1 ? "FAILED" : "OK");
	failed += direct_failed + (direct < 1);

	/* 5c. every 8th word of the right neighbour's array: one strided get
	 * (one descriptor, packed on the wire when right is on another node). */
	size_t every = words >= 8 ? 8 : 1, nstr = (words + every - 1) / every;
	memset(local, 0, nstr * sizeof(uint64_t));
	CHECK(hoist_get_strided(local, sizeof(uint64_t), right, mine,
				(ptrdiff_t)(every * sizeof(uint64_t)), sizeof(uint64_t), nstr));
	size_t str_bad = 0;
	for (size_t k = 0; k < nstr; k++)
		str_bad += local[k] != pattern(2, right, k * every);
	printf("pe %d/%d: strided get from pe %d: %zu words at a stride of %zu: %s\n", me, npes,
	       right, nstr, every, str_bad ? "FAILED" : "OK");
	failed += str_bad != 0;

	/* 5d. a collective run by the daemons: the sum of (rank + 1). */
	int64_t *contrib = sym_alloc(sizeof(int64_t));
	*contrib = me + 1;
	CHECK(hoist_allreduce(contrib, contrib, 1, HOIST_INT64, HOIST_SUM));
	int64_t want = (int64_t)npes * (npes + 1) / 2;
	printf("pe %d/%d: allreduce sum of rank+1 = %" PRId64 " (expected %" PRId64 "): %s\n", me,
	       npes, *contrib, want, *contrib == want ? "OK" : "FAILED");
	failed += *contrib != want;

	/* 6. every PE reports its failures to PE 0. */
	uint64_t mine_failed = (uint64_t)failed;
	CHECK(hoist_put(0, &results[me], &mine_failed, sizeof(mine_failed)));
	CHECK(hoist_barrier());
	int status = failed ? 1 : 0;
	if (me == 0) {
		uint64_t total = 0;
		int bad_pes = 0;
		for (int pe = 0; pe < npes; pe++) {
			total += results[pe];
			bad_pes += results[pe] != 0;
		}
		if (total == 0) {
			printf("demo: %d PEs, all checks passed\n", npes);
		} else {
			printf("demo: %d PEs, %" PRIu64 " checks failed on %d PEs\n", npes, total, bad_pes);
			status = 1;
		}
	}

	hoist_free(contrib);
	hoist_free(results);
	hoist_free(token);
	hoist_free(mine);
	hoist_free(inbox);
	free(local);
	CHECK(hoist_finalize());
	return status;
}
