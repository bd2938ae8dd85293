/*
 * mn_quietwake: a client sleeping in hoist_quiet is woken by its daemon for
 * the quiet's completion, not for each of the staged gets' completions that
 * land before it (ctrl.cq_wake_ud, daemon/stages/complete.c cq_flush).
 * Driven by quietwake.sh under `cluster.sh 2`, HOIST_SPIN_US=0 (a wait
 * sleeps after its first 64 spins).
 *
 * 2 PEs, rank 0 on daemon 0, rank 1 on daemon 1. Rank 1's region: N slots
 * of SLOT bytes, slot i all i + 1. With daemon 1 stopped by the script,
 * rank 0 posts N hoist_get_nbi of the slots into private memory and sleeps
 * in hoist_quiet; the script continues daemon 1 once rank 0 sleeps, and
 * the N replies land one completion each while it sleeps. Rank 0 checks
 * every byte; the script checks daemon 0's counters (wakeups_skipped > 0,
 * and at most 2 wakes for the quiet).
 *
 * Files in $MN_SYNC_DIR: ready (rank 0), stopped (script), posted (rank 0),
 * quieted (rank 0, after the quiet returned; the script reads the counters
 * and answers read).
 */
#include "mn_sync.h"

#define N 64u
#define SLOT 4096u

int main(void)
{
	int me, n;
	if (mn_sync_init("mn_quietwake", &me, &n))
		return it_finish();
	size_t bytes = (size_t)N * SLOT;
	unsigned char *r = hoist_malloc(bytes), *dst = malloc(bytes);
	if (!r || !dst) {
		IT_FAIL("no memory");
		return it_finish();
	}
	for (unsigned i = 0; i < N; i++)
		memset(r + (size_t)i * SLOT, (int)(i + 1), SLOT);
	memset(dst, 0xee, bytes);
	IT_OK(hoist_barrier());
	if (me == 0) {
		mn_touch("ready");
		if (mn_await("stopped"))
			return it_finish();
		for (unsigned i = 0; i < N; i++)
			IT_OK(hoist_get_nbi(dst + (size_t)i * SLOT, 1, r + (size_t)i * SLOT, SLOT));
		mn_touch("posted");
		IT_OK(hoist_quiet());
		for (unsigned i = 0; i < N; i++)
			for (unsigned k = 0; k < SLOT; k++)
				if (dst[(size_t)i * SLOT + k] != (unsigned char)(i + 1)) {
					IT_FAIL("slot %u byte %u: %u, want %u", i, k, dst[(size_t)i * SLOT + k], i + 1);
					k = SLOT;
					i = N;
				}
		mn_touch("quieted");
		if (mn_await("read"))
			return it_finish();
	}
	IT_OK(hoist_barrier());
	free(dst);
	return it_finish();
}
