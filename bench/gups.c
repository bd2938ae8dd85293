/*
 * hoist-gups-bench: GUPS-style random updates (64-bit xor and add,
 * non-fetching hoist_atomic) to a remote PE's table, across daemons.
 * Driven by bench/run-gups.sh, which runs it under HOIST_AUTO=0 (every
 * atomic completes before the next: one message each) and HOIST_AUTO=1
 * (the daemon defers them and packs them for the node, WIRE_PACK_AMO)
 * alternately. Prints one TSV row "row <name> Mupd/s <value>" (rank 0).
 *
 *   hoistrun -n 2 --nodes 2 hoist-gups-bench [--updates U] [--table-words W]
 *
 * Ranks are placed in blocks (the first half on node 0); rank i updates
 * its own area of W words at rank (i + n/2) % n, U updates each: blocking
 * hoist_atomic, ADD and XOR alternating at random words. The time from a
 * barrier to the barrier after the quiet; aggregate updates per second.
 * After the timed loop each rank reads its area back and compares it
 * with the model of the updates it sent (exit 1 on a difference).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "hoist.h"

static int me, npes;

static void die(const char *what, int rc)
{
	fprintf(stderr, "hoist-gups-bench rank %d: %s: %d (%s)\n", me, what, rc, hoist_strerror(rc));
	exit(1);
}

#define CHECK(call)                                                                                \
	do {                                                                                       \
		int rc_ = (call);                                                                  \
		if (rc_)                                                                           \
			die(#call, rc_);                                                           \
	} while (0)

static uint64_t xs(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

int main(int argc, char **argv)
{
	uint64_t updates = 100000, words = 65536;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--updates") && i + 1 < argc)
			updates = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--table-words") && i + 1 < argc)
			words = strtoull(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: hoist-gups-bench [--updates U] [--table-words W]\n");
			return 2;
		}
	}
	if (!words || words & (words - 1)) {
		fprintf(stderr, "hoist-gups-bench: --table-words must be a power of 2\n");
		return 2;
	}
	CHECK(hoist_init());
	me = hoist_rank();
	npes = hoist_size();
	int pe = (me + npes / 2) % npes;
	uint64_t *table = hoist_malloc((size_t)npes * words * sizeof(uint64_t));
	uint64_t *model = calloc(words, sizeof(uint64_t));
	uint64_t *back = calloc(words, sizeof(uint64_t));
	if (!table || !model || !back)
		die("allocation", -12);
	memset(table, 0, (size_t)npes * words * sizeof(uint64_t));
	uint64_t *mine = table + (size_t)me * words;
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ ((uint64_t)me << 32);
	CHECK(hoist_barrier());
	uint64_t t0 = bench_now_ns();
	for (uint64_t u = 0; u < updates; u++) {
		uint64_t r = xs(&seed);
		uint64_t w = r & (words - 1);
		uint64_t v = r >> 8 | 1;
		if (r & (1ull << 62)) {
			CHECK(hoist_atomic(pe, mine + w, HOIST_AMO_XOR, HOIST_UINT64, &v, NULL, NULL));
			model[w] ^= v;
		} else {
			CHECK(hoist_atomic(pe, mine + w, HOIST_AMO_ADD, HOIST_UINT64, &v, NULL, NULL));
			model[w] += v;
		}
	}
	CHECK(hoist_quiet());
	CHECK(hoist_barrier());
	double secs = (double)(bench_now_ns() - t0) / 1e9;
	CHECK(hoist_get(back, pe, mine, words * sizeof(uint64_t)));
	for (uint64_t i = 0; i < words; i++)
		if (back[i] != model[i]) {
			fprintf(stderr, "hoist-gups-bench rank %d: word %" PRIu64 " at PE %d is 0x%" PRIx64
					", want 0x%" PRIx64 "\n", me, i, pe, back[i], model[i]);
			return 1;
		}
	CHECK(hoist_barrier());
	if (me == 0) {
		const char *a = getenv("HOIST_AUTO");
		printf("row\tgups %d PEs HOIST_AUTO=%s\tMupd/s\t%.6g\n", npes, a ? a : "1",
		       (double)updates * npes / secs / 1e6);
	}
	free(model);
	free(back);
	hoist_finalize();
	return 0;
}
