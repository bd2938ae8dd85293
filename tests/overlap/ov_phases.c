/*
 * A phased program for the automatic-overlap stage: every iteration each PE
 * writes its own blocks, a barrier starts the "get" phase, each PE gets
 * blocks of the PE `stride` ranks away and checks them, and a second
 * barrier ends the phase. Optional own puts into a fetched range in the
 * middle of the phase (invalidation) and a changing pattern every few
 * iterations (mispredictions). Prints a checksum of everything read so
 * that runs with HOIST_AUTO=0 and =1 can be compared.
 *
 *   ov_phases [iters] [blocks] [block_bytes] [mode]
 *   mode: 0 plain, 1 own put overlapping the next get, 2 order changes,
 *         3 the gets change for good at iteration 5 (half the length),
 *         4 as 1 with an own atomic (SET, then FETCH_ADD 0) instead of the put,
 *         5 a double buffer: iterations alternate between the first and the
 *           second half of the blocks (period 2, blocks/2 gets),
 *         6 the same over thirds (period 3, blocks/3 gets),
 *         7 blocks/2 gets of 64 bytes at random places, new every iteration,
 *         8 the get phase is named by hoist_phase (not a barrier): its gets
 *           are nbi, and a second hoist_phase follows them at once, while
 *           the gets may still wait for their prefetches; then a quiet
 *         9 the daemon serves a stretch of the phase's gets, then the
 *           client may find the rest itself (fast.sh): the first 3/8 of
 *           the blocks are nbi gets (+ quiet), a pause of 50 ms lets the
 *           other prefetches land, then the other blocks, in order
 */
#include <hoist.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t val(int iter, int pe, int blk, size_t w)
{
	return ((uint64_t)iter << 40) ^ ((uint64_t)pe << 24) ^ ((uint64_t)blk << 12) ^ w;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 10;
	int blocks = argc > 2 ? atoi(argv[2]) : 16;
	size_t bytes = argc > 3 ? (size_t)atol(argv[3]) : 4096;
	int mode = argc > 4 ? atoi(argv[4]) : 0;
	int rc = hoist_init();
	if (rc) {
		fprintf(stderr, "hoist_init: %s (%s)\n", hoist_strerror(rc), hoist_error_detail());
		return 2;
	}
	int me = hoist_rank(), n = hoist_size();
	size_t words = bytes / 8;
	uint64_t *heap = hoist_malloc((size_t)blocks * bytes);
	uint64_t *buf = malloc(bytes);
	uint64_t *all = mode == 8 || mode == 9 ? malloc((size_t)blocks * bytes) : NULL;
	if (!heap || !buf || ((mode == 8 || mode == 9) && !all))
		return 3;
	int target = (me + (n > 1 ? n / 2 : 0)) % n; /* across the node boundary */
	uint64_t sum = 0;
	int bad = 0;
	for (int it = 0; it < iters && !bad; it++) {
		for (int b = 0; b < blocks; b++)
			for (size_t w = 0; w < words; w++)
				heap[(size_t)b * words + w] = val(it, me, b, w);
		if ((rc = hoist_barrier())) {
			fprintf(stderr, "pe %d barrier: %s\n", me, hoist_strerror(rc));
			return 4;
		}
		if (mode == 8 || mode == 9) {
			if (mode == 8 && (rc = hoist_phase(0x8000)))
				return 9;
			int nbi = mode == 8 ? blocks : blocks * 3 / 8;
			for (int b = 0; b < nbi; b++)
				if ((rc = hoist_get_nbi(&all[(size_t)b * words], target, &heap[(size_t)b * words], bytes))) {
					fprintf(stderr, "pe %d get_nbi: %s\n", me, hoist_strerror(rc));
					return 6;
				}
			if (mode == 9) {
				/* the daemon served those; the rest may have landed
				 * after the pause (not needed for the results: a get
				 * whose prefetch is in flight waits for it) */
				if ((rc = hoist_quiet()))
					return 9;
				struct timespec ts = {0, 50 * 1000 * 1000};
				nanosleep(&ts, NULL);
				for (int b = nbi; b < blocks; b++)
					if ((rc = hoist_get(&all[(size_t)b * words], target, &heap[(size_t)b * words], bytes))) {
						fprintf(stderr, "pe %d get: %s\n", me, hoist_strerror(rc));
						return 6;
					}
			}
			/* a phase boundary while those gets may wait for prefetches
			 * in flight: they must still complete */
			if (mode == 8 && ((rc = hoist_phase(0x8001)) || (rc = hoist_quiet()))) {
				fprintf(stderr, "pe %d phase/quiet: %s\n", me, hoist_strerror(rc));
				return 9;
			}
			for (int b = 0; b < blocks && !bad; b++)
				for (size_t w = 0; w < words; w++) {
					uint64_t got = all[(size_t)b * words + w];
					if (got != val(it, target, b, w)) {
						fprintf(stderr, "pe %d iter %d block %d word %zu: %" PRIx64 " want %" PRIx64 "\n",
							me, it, b, w, got, val(it, target, b, w));
						bad = 1;
						break;
					}
					sum = sum * 31 + got;
				}
			if ((rc = hoist_barrier()))
				return 7;
			continue;
		}
		int shift = mode == 2 ? (it / 3) % 2 : 0; /* pattern changes */
		int ngets = mode == 5 || mode == 7 ? blocks / 2 : mode == 6 ? blocks / 3 : blocks;
		uint64_t rng = ((uint64_t)it << 32 | (uint64_t)me) * 0x9e3779b97f4a7c15ull + 1;
		for (int b = 0; b < ngets; b++) {
			int blk = (b + shift) % blocks;
			size_t first = 0; /* first word read */
			if (mode == 5)
				blk = (it % 2) * (blocks / 2) + b;
			if (mode == 6)
				blk = (it % 3) * (blocks / 3) + b;
			if (mode == 7) {
				rng = rng * 6364136223846793005ull + 1442695040888963407ull;
				blk = (int)((rng >> 33) % (uint64_t)blocks);
				first = (size_t)((rng >> 13) % (words - 8));
			}
			if (mode == 1 && b == blocks / 2) {
				/* an own put into the range the next get reads: the
				 * get must see it, not a prefetched copy */
				uint64_t mark = val(it, 1000 + me, blk, 0);
				if ((rc = hoist_put(target, &heap[(size_t)blk * words], &mark, 8)))
					return 5;
			}
			if (mode == 4 && b == blocks / 2) {
				/* the same with atomics: a non-fetching one (deferred),
				 * then a fetching one that must see it */
				uint64_t mark = val(it, 1000 + me, blk, 0), zero = 0, f = 0;
				uint64_t *w0 = &heap[(size_t)blk * words];
				if ((rc = hoist_atomic(target, w0, HOIST_AMO_SET, HOIST_UINT64, &mark, NULL, NULL)) ||
				    (rc = hoist_atomic(target, w0, HOIST_AMO_FETCH_ADD, HOIST_UINT64, &zero, NULL, &f)))
					return 5;
				if (f != mark) {
					fprintf(stderr, "pe %d iter %d block %d: fetch-add after set gave %" PRIx64
						" want %" PRIx64 "\n", me, it, blk, f, mark);
					bad = 1;
				}
			}
			size_t len = (mode == 3 && it >= 5) ? bytes / 2 : mode == 7 ? 64 : bytes;
			if ((rc = hoist_get(buf, target, &heap[(size_t)blk * words + first], len))) {
				fprintf(stderr, "pe %d get: %s\n", me, hoist_strerror(rc));
				return 6;
			}
			for (size_t w = 0; w < len / 8; w++) {
				uint64_t want = val(it, target, blk, first + w);
				if ((mode == 1 || mode == 4) && b == blocks / 2 && w == 0)
					want = val(it, 1000 + me, blk, 0);
				if (buf[w] != want) {
					fprintf(stderr, "pe %d iter %d block %d word %zu: %" PRIx64 " want %" PRIx64 "\n",
						me, it, blk, w, buf[w], want);
					bad = 1;
					break;
				}
				sum = sum * 31 + buf[w];
			}
		}
		if ((rc = hoist_barrier()))
			return 7;
	}
	printf("pe %d checksum %016" PRIx64 " %s\n", me, sum, bad ? "BAD" : "ok");
	hoist_free(heap);
	free(buf);
	free(all);
	rc = hoist_finalize();
	return bad ? 1 : (rc ? 8 : 0);
}
