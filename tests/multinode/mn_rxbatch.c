/*
 * mn_rxbatch: frames that arrive from another daemon while a client's ring
 * holds descriptors are read tcp_rx_batch at a time, with the rings drained
 * in between; a whole socket's worth is not read first (issue 16: the first
 * get of a prefetched phase waited for the whole first window of landings).
 * Driven by rxbatch.sh under `cluster.sh 2 --daemon-arg=--batch=1
 * --daemon-arg=--tcp-rx-batch=4 --daemon-arg=--coalesce=0`, HOIST_DIRECT=0.
 *
 * 2 PEs, rank 0 on daemon 0, rank 1 on daemon 1. Region R of rank 0's heap:
 * N slots of SLOT bytes, zero. With daemon 0 stopped, rank 1 puts slot i
 * (every byte i + 1) for all i: N frames of one put each (no packs), which
 * wait in daemon 0's socket (the script waits until daemon 1 sent them).
 * Then rank 0 posts M gets of all of R from itself (through its daemon,
 * HOIST_DIRECT=0) into M snapshots and the script continues daemon 0. It
 * takes one get per pass (batch=1): each snapshot shows how many puts had
 * landed when its get was taken. Read in one go (tcp_rx_batch=0, or a
 * daemon without the batch) every snapshot shows none or all of them; with
 * the batch, at least one shows some but not all (asserted), and they never
 * go backwards. At the end all of R is right.
 *
 * Files in $MN_SYNC_DIR: ready (rank 0), stopped (script), put (rank 1),
 * sent (script), posted (rank 0; the script then continues daemon 0).
 */
#include "mn_sync.h"

#define N 16u
#define SLOT 4096u
#define M 8u

/* slots of s whose put had landed: all SLOT bytes i + 1 (a slot is
 * written by one frame's payload, so it is all or nothing) */
static unsigned landed(const unsigned char *s)
{
	unsigned k = 0;
	for (unsigned i = 0; i < N; i++) {
		const unsigned char *p = s + (size_t)i * SLOT;
		if (p[0] == (unsigned char)(i + 1) && p[SLOT - 1] == (unsigned char)(i + 1))
			k++;
		else if (p[0] || p[SLOT - 1])
			IT_FAIL("slot %u: bytes %u..%u, want 0 or %u", i, p[0], p[SLOT - 1], i + 1);
	}
	return k;
}

int main(void)
{
	int me, n;
	if (mn_sync_init("mn_rxbatch", &me, &n))
		return it_finish();
	size_t bytes = (size_t)N * SLOT;
	unsigned char *r = hoist_malloc(bytes), *snap = hoist_malloc(bytes * M);
	unsigned char *src = malloc(bytes);
	if (!r || !snap || !src) {
		IT_FAIL("no memory");
		return it_finish();
	}
	memset(r, 0, bytes);
	memset(snap, 0xee, bytes * M);
	for (unsigned i = 0; i < N; i++)
		memset(src + (size_t)i * SLOT, (int)(i + 1), SLOT);
	IT_OK(hoist_barrier(), "start");
	if (me == 0) {
		mn_touch("ready");
		if (mn_await("sent"))
			return it_finish();
		for (unsigned j = 0; j < M; j++)
			IT_OK(hoist_get_nbi(snap + (size_t)j * bytes, 0, r, bytes), "snapshot %u", j);
		mn_touch("posted");
		IT_OK(hoist_quiet(), "the snapshots");
		unsigned seen[M], mixed = 0, prev = 0;
		char line[256];
		int o = 0;
		for (unsigned j = 0; j < M; j++) {
			seen[j] = landed(snap + (size_t)j * bytes);
			if (seen[j] && seen[j] < N)
				mixed++;
			if (seen[j] < prev)
				IT_FAIL("snapshot %u saw %u puts, the one before %u", j, seen[j], prev);
			prev = seen[j];
			o += snprintf(line + o, sizeof(line) - (size_t)o, " %u", seen[j]);
		}
		printf("mn_rxbatch: puts landed per snapshot (of %u):%s\n", N, line);
		if (!mixed)
			IT_FAIL("no snapshot was taken between the first and the last of the %u landings:"
				"%s (the daemon read them all before it looked at the ring again)", N, line);
	} else {
		if (mn_await("stopped"))
			return it_finish();
		for (unsigned i = 0; i < N; i++)
			IT_OK(hoist_put_nbi(0, r + (size_t)i * SLOT, src + (size_t)i * SLOT, SLOT), "put %u", i);
		mn_touch("put");
		IT_OK(hoist_quiet(), "the puts");
	}
	IT_OK(hoist_barrier(), "end");
	if (me == 0 && landed(r) != N)
		IT_FAIL("R after the barrier: %u of %u slots", landed(r), N);
	free(src);
	return it_finish();
}
