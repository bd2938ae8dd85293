/*
 * mn_resume: a strided get that stalls half-way (credit window 1, the
 * target's daemon stopped) resumes as the descriptor the daemon started,
 * whatever the client writes to its ring slot meanwhile. Driven by
 * resume.sh under `cluster.sh 2 --daemon-arg=--credit-window=1`.
 *
 * 2 PEs, rank 0 on daemon 0, rank 1 on daemon 1. Rank 1 fills the last
 * N*8 bytes of its heap with a pattern. Rank 0 writes a raw GET_STRIDED
 * (8-byte elements, stride 8, N = 2561 elements: one pack holds 2560
 * gets, so with a window of 1 the daemon stalls before the last one)
 * into the last N*8 bytes of its own heap, then - once the daemon has
 * started it (the script sees multi_ops) - rewrites the slot into another
 * valid descriptor: one element of N*8 bytes, stride 0. A daemon that
 * re-reads the slot when it resumes issues that element at the local
 * position it had reached (N*8 - 8 bytes in): 20 KiB past the end of
 * rank 0's heap. The data must be the original descriptor's.
 *
 * Files in $MN_SYNC_DIR: ready (rank 0, start barrier done), stopped
 * (script, daemon 1 stopped), posted (rank 0), started (script),
 * rewritten (rank 0; the script then continues daemon 1).
 */
#include "internal.h"
#include "mn_sync.h"

#define N 2561u

static uint64_t word(uint64_t i)
{
	return 0x5eed000000000000ull + i * 0x9e3779b1ull;
}

int main(void)
{
	int me, n;
	if (mn_sync_init("mn_resume", &me, &n))
		return it_finish();
	struct hoist_ctx *c = hoist__ctx();
	uint64_t heap = c->heap_bytes, bytes = (uint64_t)N * 8, at = heap - bytes;
	uint64_t *mine = (uint64_t *)(c->heap_base + at);
	if (me == 1)
		for (uint64_t i = 0; i < N; i++)
			mine[i] = word(i);
	else
		memset(mine, 0, bytes);
	IT_OK(hoist_barrier(), "start");
	if (me == 0) {
		mn_touch("ready");
		if (mn_await("stopped"))
			return it_finish();
		struct hoist_op *op = NULL;
		struct hoist_sqe *slot = NULL;
		if (IT_OK(hoist__op_alloc(c, &op), "op") || IT_OK(hoist__sqe_get(c, &slot), "sqe"))
			return it_finish();
		*slot = (struct hoist_sqe){.opcode = HOIST_OP_GET_STRIDED,
					   .flags = HOIST_SQE_F_LOCAL_HEAP | HOIST_SQE_F_CQE,
					   .pe = 1, .seg = HOIST_SEG_HEAP, .remote_off = at, .len = 8,
					   .local_off = at, .user_data = hoist__op_udata(c, op)};
		uint64_t p[2] = {8, N};
		memcpy(slot->inline_data, p, sizeof(p));
		hoist__sqe_submit(c);
		mn_touch("posted");
		if (mn_await("started"))
			return it_finish();
		/* valid by itself: [at, heap) on both sides */
		struct hoist_sqe other = *slot;
		other.len = bytes;
		uint64_t q[2] = {0, 1};
		memcpy(other.inline_data, q, sizeof(q));
		memcpy(slot, &other, sizeof(other));
		mn_touch("rewritten");
		IT_OK(hoist__wait_op(c, op), "the strided get");
		hoist__op_free(c, op);
		unsigned bad = 0;
		for (uint64_t i = 0; i < N; i++)
			if (mine[i] != word(i) && bad++ < 5)
				IT_FAIL("element %" PRIu64 ": %#" PRIx64 ", want %#" PRIx64, i, mine[i], word(i));
	}
	IT_OK(hoist_barrier(), "end");
	return it_finish();
}
