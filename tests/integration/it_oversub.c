/*
 * it_oversub: the wait policy of libhoist engages when the CPU is shared
 * with a thread that keeps it (issue 16). Run by oversub_hog.sh with every
 * thread of the job, the daemon and a busy-looping hog on one CPU, and
 * HOIST_DIRECT=0: every get goes through the daemon and waits for it.
 *
 * Rank 0 gets 8 B from rank 1 (checking the data each time) until its
 * control page counts a yield that came back only after
 * HOIST_YIELD_LONG_US (wait_long_yields) and a futex sleep after it, and
 * at least MIN_GETS gets, MAX_GETS at most; no time limit, the watchdog
 * fires on lack of progress only. Then both ranks meet in a barrier. The script checks the
 * daemon's side (prog_yields, prog_long_yields) in hoistctl stats.
 */
#include <inttypes.h>

#include "internal.h"
#include "it_common.h"

#define MIN_GETS 200
#define MAX_GETS 2000 /* without the policy a get costs a slice of the hog: ~6 ms */

int main(void)
{
	int me, n;
	it_init("it_oversub", &me, &n);
	it_watchdog(30);
	if (n != 2)
		IT_FAIL("run me with 2 PEs, not %d", n);
	if (it_failures)
		return 1;
	struct hoist_ctx *c = hoist__ctx();
	if (c->direct)
		IT_FAIL("run me with HOIST_DIRECT=0");
	uint64_t *word = it_malloc(sizeof(uint64_t));
	*word = 0x5eed0000u + (uint64_t)me;
	IT_OK(hoist_barrier(), "start");
	if (me == 0 && !it_failures) {
		struct hoist_ctrl *ctrl = c->ring.ctrl;
		uint64_t i = 0;
		double t0 = it_now();
		for (;; i++) {
			uint64_t v = 0;
			IT_WHERE("get %" PRIu64 " (long yields %" PRIu64 ")", i,
				 __atomic_load_n(&ctrl->wait_long_yields, __ATOMIC_RELAXED));
			if (hoist_get(&v, 1, word, sizeof(v)) != 0 || v != 0x5eed0001u) {
				IT_FAIL("get %" PRIu64 ": %#" PRIx64, i, v);
				break;
			}
			if (i >= MIN_GETS && __atomic_load_n(&ctrl->wait_long_yields, __ATOMIC_RELAXED) > 0)
				break;
			if (i + 1 == MAX_GETS)
				break; /* fails below */
		}
		uint64_t y = ctrl->wait_yields, ly = ctrl->wait_long_yields, sl = ctrl->wait_sleeps;
		/* the time is printed, never asserted */
		fprintf(stderr, "[it_oversub] %" PRIu64 " gets in %.3f s: wait_yields %" PRIu64
				" wait_long_yields %" PRIu64 " wait_sleeps %" PRIu64 "\n",
			i + 1, it_now() - t0, y, ly, sl);
		if (ly == 0 || y < ly)
			IT_FAIL("wait_long_yields %" PRIu64 " of %" PRIu64 " yields", ly, y);
		/* a long yield makes the next waits sleep without yielding
		 * (unless the completion came first): far fewer yields than
		 * gets, and sleeps. Without that every get yields to the hog */
		if (y * 2 > i + 1)
			IT_FAIL("%" PRIu64 " yields in %" PRIu64 " gets: the waits after a long yield "
				"yielded too", y, i + 1);
		if (sl == 0)
			IT_FAIL("no futex sleep in %" PRIu64 " gets after %" PRIu64 " long yields", i + 1, ly);
	}
	IT_OK(hoist_barrier(), "end");
	hoist_finalize();
	return it_failures ? 1 : 0;
}
