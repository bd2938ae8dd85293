/*
 * it_handoff: the CPU hand-off between a waiting client and the progress
 * thread (client/wait.c, daemon/progress.c; issue 16). Run by
 * oversub_handoff.sh with HOIST_DIRECT=0, so every get goes through the
 * daemon and waits for it.
 *
 * Rank 0 gets 8 B from rank 1 GETS times, checking the data each time,
 * then reports how many of its waits began with the progress thread on
 * its own CPU (ctrl->wait_handoffs) and asserts what IT_HANDOFF_EXPECT
 * says: "shared" (the script pinned the job and the daemon to one CPU):
 * at least half of the gets; "apart" (two CPUs, one each): none. The
 * script checks the daemon's side in hoistctl stats.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "it_common.h"

#define GETS 2000

int main(void)
{
	int me, n;
	it_init("it_handoff", &me, &n);
	it_watchdog(30);
	const char *expect = getenv("IT_HANDOFF_EXPECT");
	if (n != 2)
		IT_FAIL("run me with 2 PEs, not %d", n);
	if (!expect || (strcmp(expect, "shared") && strcmp(expect, "apart")))
		IT_FAIL("IT_HANDOFF_EXPECT: shared or apart");
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
		uint64_t h0 = __atomic_load_n(&ctrl->wait_handoffs, __ATOMIC_RELAXED);
		for (int i = 0; i < GETS; i++) {
			uint64_t v = 0;
			IT_WHERE("get %d", i);
			if (hoist_get(&v, 1, word, sizeof(v)) != 0 || v != 0x5eed0001u) {
				IT_FAIL("get %d: %#" PRIx64, i, v);
				break;
			}
		}
		uint64_t h = __atomic_load_n(&ctrl->wait_handoffs, __ATOMIC_RELAXED) - h0;
		fprintf(stderr, "[it_handoff] %d gets, %s: wait_handoffs %" PRIu64 " (wait_cpu %u prog_cpu %u)\n",
			GETS, expect, h, __atomic_load_n(&ctrl->wait_cpu, __ATOMIC_RELAXED),
			__atomic_load_n(&ctrl->prog_cpu, __ATOMIC_RELAXED));
		if (!strcmp(expect, "shared") && h < GETS / 2)
			IT_FAIL("one CPU: only %" PRIu64 " of %d waits began as a hand-off", h, GETS);
		if (!strcmp(expect, "apart") && h != 0)
			IT_FAIL("two CPUs: %" PRIu64 " of %d waits yielded as if the daemon shared theirs", h,
				GETS);
		if (__atomic_load_n(&ctrl->wait_cpu, __ATOMIC_RELAXED) != 0)
			IT_FAIL("wait_cpu still set after the waits ended");
	}
	IT_OK(hoist_barrier(), "end");
	hoist_finalize();
	return it_failures ? 1 : 0;
}
