/* A program outside the hoist tree: only <hoist.h> and libhoist, found
 * through pkg-config or find_package(hoist). Puts to every PE, reads back. */
#include <hoist.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	int rc = hoist_init();
	if (rc) {
		fprintf(stderr, "hoist_init: %s (%s)\n", hoist_strerror(rc), hoist_error_detail());
		return 1;
	}
	int me = hoist_rank(), n = hoist_size();
	long *slot = hoist_malloc(sizeof(long) * (size_t)n);
	if (!slot) {
		fprintf(stderr, "hoist_malloc failed\n");
		return 1;
	}
	memset(slot, 0, sizeof(long) * (size_t)n);
	hoist_barrier();
	for (int pe = 0; pe < n; pe++) {
		long v = 1000L * me + pe;
		if ((rc = hoist_put(pe, &slot[me], &v, sizeof(v)))) {
			fprintf(stderr, "hoist_put: %s\n", hoist_strerror(rc));
			return 1;
		}
	}
	hoist_quiet();
	hoist_barrier();
	for (int pe = 0; pe < n; pe++) {
		long got = -1;
		if ((rc = hoist_get(&got, pe, &slot[me], sizeof(got))) || got != 1000L * me + pe) {
			fprintf(stderr, "hoist_get from %d: rc %d value %ld\n", pe, rc, got);
			return 1;
		}
	}
	printf("outside app: rank %d of %d ok\n", me, n);
	return hoist_finalize() ? 1 : 0;
}
