/*
 * Differential test of the automatic-overlap stage: a seeded, race-free
 * program with repeated phases whose every read and final memory must be
 * the same with HOIST_AUTO=0 (blocking baseline) and HOIST_AUTO=1.
 *
 * Two buffers alternate: in even phases every PE writes buffer A (only its
 * own writer region, at any PE) and reads buffer B (anyone's region), in
 * odd phases the other way round, so no location is written and read by
 * different PEs in one phase. Within a phase a PE also re-reads what it
 * just wrote (its own earlier writes must be visible) and overwrites
 * ranges it prefetched nothing of yet or already did (invalidation). The
 * access pattern of a phase repeats for a few iterations and then changes
 * (mispredictions); data values change every phase.
 *
 *   ov_diff SEED ITERS      prints "pe P reads HASH final HASH"
 */
#include <hoist.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOT 4096u /* a writer's region in each buffer of each PE */
#define OPS 48

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t rnd(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ull;
	return mix(*s);
}

static uint64_t fold(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
	int iters = argc > 2 ? atoi(argv[2]) : 30;
	int rc = hoist_init();
	if (rc) {
		fprintf(stderr, "hoist_init: %s (%s)\n", hoist_strerror(rc), hoist_error_detail());
		return 2;
	}
	int me = hoist_rank(), n = hoist_size();
	size_t buf_bytes = (size_t)n * SLOT;
	unsigned char *A = hoist_malloc(2 * buf_bytes);
	if (!A)
		return 3;
	unsigned char *B = A + buf_bytes;
	memset(A, 0, 2 * buf_bytes);
	if (hoist_barrier())
		return 3;
	unsigned char data[1024], got[1024];
	uint64_t reads = 0xcbf29ce484222325ull;
	for (int p = 0; p < iters; p++) {
		unsigned char *wbuf = (p % 2) ? B : A, *rbuf = (p % 2) ? A : B;
		/* the pattern of this phase: same for a while, then it changes */
		uint64_t ps = mix(seed ^ ((uint64_t)(p % 2) << 32) ^ ((uint64_t)(p / 6) << 40) ^
				  ((uint64_t)me << 48));
		uint64_t ds = mix(seed ^ 0x5151 ^ ((uint64_t)p << 20) ^ (uint64_t)me);
		int last_t = -1;
		size_t last_off = 0, last_len = 0;
		for (int k = 0; k < OPS; k++) {
			uint64_t r = rnd(&ps);
			int t = (int)(rnd(&ps) % (uint64_t)n);
			size_t len = (size_t)8 << (rnd(&ps) % 8); /* 8 .. 1024 */
			size_t off = (size_t)(rnd(&ps) % (SLOT - len + 1)) & ~(size_t)7;
			switch (r % 4) {
			case 0: /* put into my region at t */
				for (size_t i = 0; i < len; i++)
					data[i] = (unsigned char)rnd(&ds);
				rc = hoist_put(t, wbuf + (size_t)me * SLOT + off, data, len);
				if (rc) {
					fprintf(stderr, "pe %d put: %s\n", me, hoist_strerror(rc));
					return 4;
				}
				last_t = t;
				last_off = off;
				last_len = len;
				break;
			case 1: /* my own last write must be visible */
				if (last_t >= 0) {
					rc = hoist_get(got, last_t, wbuf + (size_t)me * SLOT + last_off, last_len);
					if (rc || memcmp(got, data, last_len) != 0) {
						fprintf(stderr, "pe %d phase %d: own write to pe %d +%zu not seen (%d)\n",
							me, p, last_t, last_off, rc);
						return 5;
					}
					reads = fold(reads, got, last_len);
					break;
				}
				/* fall through */
			default: { /* read anyone's region of the read buffer at t */
				int w = (int)(rnd(&ps) % (uint64_t)n);
				rc = hoist_get(got, t, rbuf + (size_t)w * SLOT + off, len);
				if (rc) {
					fprintf(stderr, "pe %d get: %s\n", me, hoist_strerror(rc));
					return 6;
				}
				reads = fold(reads, got, len);
				break;
			}
			}
		}
		/* two call sites: two phases that alternate */
		rc = (p % 2) ? hoist_barrier() : hoist_barrier();
		if (rc) {
			fprintf(stderr, "pe %d barrier: %s\n", me, hoist_strerror(rc));
			return 7;
		}
	}
	uint64_t final = fold(0xcbf29ce484222325ull, A, 2 * buf_bytes);
	printf("pe %d reads %016" PRIx64 " final %016" PRIx64 "\n", me, reads, final);
	hoist_free(A);
	rc = hoist_finalize();
	return rc ? 8 : 0;
}
