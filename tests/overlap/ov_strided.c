/*
 * Strided gets in a repeated phase: every iteration each PE rewrites its
 * area with the iteration's pattern, a barrier starts the phase, each PE
 * reads the PE across the node boundary: one 8-byte get, then two strided
 * gets of 256-byte elements at an 850-byte stride (seed 000, Figure 6),
 * and checks everything against the iteration's pattern; a barrier ends the
 * phase. The strided gets' bounding boxes are dense (3.3x), so from the
 * second iteration on the daemon prefetches them at the barrier and
 * gathers the elements from the prefetched box (stats.sh counts pf_hits);
 * the data must still be this iteration's.
 *
 *   ov_strided [iters]
 */
#include <hoist.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELEM 256
#define STRIDE 850
#define COUNT 64
#define AREA (2 * STRIDE * COUNT + 64)

static unsigned char pat(int it, int pe, size_t i)
{
	return (unsigned char)(i * 31 + (size_t)pe * 7 + (size_t)it * 101 + (i >> 8));
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 8;
	int rc = hoist_init();
	if (rc) {
		fprintf(stderr, "hoist_init: %s\n", hoist_strerror(rc));
		return 2;
	}
	int me = hoist_rank(), n = hoist_size();
	unsigned char *area = hoist_malloc(AREA);
	unsigned char *buf = malloc((size_t)ELEM * COUNT);
	if (!area || !buf)
		return 3;
	int t = (me + n / 2) % n;
	int bad = 0;
	for (int it = 0; it < iters && !bad; it++) {
		for (size_t i = 0; i < AREA; i++)
			area[i] = pat(it, me, i);
		if ((rc = hoist_barrier()))
			break;
		unsigned char first[8];
		if ((rc = hoist_get(first, t, area, 8)))
			break;
		for (int i = 0; i < 8; i++)
			bad |= first[i] != pat(it, t, (size_t)i);
		for (int half = 0; half < 2 && !bad; half++) {
			size_t base = 64 + (size_t)half * STRIDE * COUNT;
			if ((rc = hoist_get_strided(buf, ELEM, t, area + base, STRIDE, ELEM, COUNT)))
				break;
			for (size_t e = 0; e < COUNT; e++)
				for (size_t b = 0; b < ELEM; b++)
					if (buf[e * ELEM + b] != pat(it, t, base + e * STRIDE + b)) {
						fprintf(stderr, "pe %d iter %d: element %zu byte %zu stale or wrong\n",
							me, it, e, b);
						bad = 1;
						e = COUNT;
						break;
					}
		}
		if (rc || (rc = hoist_barrier()))
			break;
	}
	if (rc)
		fprintf(stderr, "pe %d: %s\n", me, hoist_strerror(rc));
	free(buf);
	int frc = hoist_finalize();
	return rc || bad || frc ? 1 : 0;
}
