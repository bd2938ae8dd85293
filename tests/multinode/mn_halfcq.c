/*
 * mn_halfcq: a client sleeping for one completion is woken once the
 * completions it slept through fill half its CQ, even though the one it
 * waits for has not come (daemon/stages/complete.c cq_flush: the error
 * reports of puts that asked for no completion are not bounded by the
 * client's op slots, and a drain that finds the CQ full waits for the
 * client to reap). Driven by halfcq.sh under `cluster.sh 3
 * --daemon-arg=--cq-entries=16 --daemon-arg=--sq-entries=16`,
 * HOIST_SPIN_US=0 (a wait sleeps after its first 64 spins).
 *
 * 3 PEs, rank i on daemon i, HOIST_AUTO=0 (no get waits behind the put in
 * the overlap stage). With daemons 1 and 2 stopped by the script, rank 0
 * posts K = 8 hoist_get_nbi of 8 B from rank 1 into private memory (each
 * holds one of the 8 op slots of a 16-entry CQ) and one put to rank 2 (its acknowledgement holds the quiet
 * back until daemon 2 runs again), then sleeps in hoist_quiet.
 * The script continues daemon 1 once rank 0 sleeps: the K replies land
 * one completion each, none of them the quiet's, and the K-th makes half
 * the CQ. The script checks that daemon 0 woke rank 0 while daemon 2 was
 * still stopped, then continues daemon 2. Every byte is checked: the
 * gets' on rank 0, the put's on rank 2.
 *
 * Files in $MN_SYNC_DIR: ready (rank 0), stopped (script), posted (rank
 * 0), quieted (rank 0, after the quiet returned), read (script).
 */
#include "mn_sync.h"

#define K 8u /* cq_entries 16: the client's op slots */

int main(void)
{
	int me, n;
	if (mn_sync_init_n("mn_halfcq", &me, &n, 3))
		return it_finish();
	/* dst private: a staged get completes with a completion of its own (an
	 * nbi get into the heap asks for none, the quiet covers it) */
	uint64_t *r = hoist_malloc(K * sizeof(uint64_t)), *dst = malloc(K * sizeof(uint64_t));
	uint64_t *x = hoist_malloc(sizeof(uint64_t));
	if (!r || !dst || !x) {
		IT_FAIL("no memory");
		return it_finish();
	}
	for (unsigned i = 0; i < K; i++) {
		r[i] = 0x5eed0000u + (uint64_t)me * 100u + i;
		dst[i] = 0;
	}
	*x = 0;
	IT_OK(hoist_barrier());
	if (me == 0) {
		mn_touch("ready");
		if (mn_await("stopped"))
			return it_finish();
		for (unsigned i = 0; i < K; i++)
			IT_OK(hoist_get_nbi(&dst[i], 1, &r[i], sizeof(uint64_t)));
		uint64_t v = 0xfeedfacecafe;
		IT_OK(hoist_put_nbi(2, x, &v, sizeof(v)));
		mn_touch("posted");
		IT_OK(hoist_quiet());
		for (unsigned i = 0; i < K; i++)
			if (dst[i] != 0x5eed0000u + 100u + i)
				IT_FAIL("get %u: %#llx, want %#llx", i, (unsigned long long)dst[i],
					(unsigned long long)(0x5eed0000u + 100u + i));
		mn_touch("quieted");
		if (mn_await("read"))
			return it_finish();
	}
	IT_OK(hoist_barrier());
	if (me == 2 && *x != 0xfeedfacecafe)
		IT_FAIL("rank 0's put: %#llx, want 0xfeedfacecafe", (unsigned long long)*x);
	IT_OK(hoist_barrier());
	free(dst);
	return it_finish();
}
