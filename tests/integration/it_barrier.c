/*
 * it_barrier: barrier completes every PE's puts and synchronises.
 *
 * Part 1: 200 rounds. In round r every PE puts r into its slot of every
 * PE (itself included) and, every 10th round, a 64 KiB block to the next
 * PE; after hoist_barrier each PE checks that all n slots (and the block)
 * hold round r. Slots are double-buffered by round parity: a PE can only
 * start round r+2 after everybody passed the barrier of round r+1, i.e.
 * after everybody checked round r, so the check is race free with a single
 * barrier per round. One PE per round is delayed a little so the others
 * really have to wait.
 *
 * Part 2: the same with split-phase hoist_barrier_notify / local work /
 * hoist_barrier_wait.
 */
#include "it_common.h"

#define ROUNDS 200
#define SPLIT_ROUNDS 100
#define BLOCK 65536u

static volatile uint64_t sink;

static void local_work(unsigned char *buf, size_t n, int r)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++) {
		buf[i] = (unsigned char)(buf[i] * 31 + (unsigned)r);
		s += buf[i];
	}
	sink += s;
}

static void check_round(uint64_t *slots, unsigned char *block, int n, int me, uint64_t want, int with_block,
			const char *what, int r)
{
	for (int s = 0; s < n; s++) {
		uint64_t v = __atomic_load_n(&slots[s], __ATOMIC_ACQUIRE);
		if (v != want)
			IT_FAIL("%s round %d: slot of pe %d holds %" PRIu64 ", expected %" PRIu64
				" (a put before the barrier was not complete after it)",
				what, r, s, v, want);
	}
	if (with_block) {
		int from = (me + n - 1) % n;
		uint64_t key = it_hash(0xb10c, (uint64_t)from, want, 0, 0);
		size_t off = it_check_fill(block, BLOCK, key);
		if (off != BLOCK)
			IT_FAIL("%s round %d: 64 KiB block from pe %d wrong at offset %zu (got 0x%02x want 0x%02x)",
				what, r, from, off, block[off], it_fill_byte(key, off));
	}
}

static void put_round(uint64_t *slots, unsigned char *block, unsigned char *src, int n, int me, uint64_t v,
		      int with_block, int r)
{
	for (int i = 0; i < n; i++) {
		int t = (me + i) % n;
		IT_OK(hoist_put(t, &slots[me], &v, sizeof(v)), "round %d slot put to pe %d", r, t);
	}
	if (with_block) {
		int to = (me + 1) % n;
		it_fill(src, BLOCK, it_hash(0xb10c, (uint64_t)me, v, 0, 0));
		IT_OK(hoist_put(to, block, src, BLOCK), "round %d block put to pe %d", r, to);
	}
}

int main(void)
{
	int me, n;
	it_init("it_barrier", &me, &n);
	it_watchdog(50);

	uint64_t *slots = it_malloc(2 * (size_t)n * sizeof(uint64_t));
	unsigned char *block = it_malloc(2 * (size_t)BLOCK);
	unsigned char *src = it_xmalloc(BLOCK);
	unsigned char *work = it_xmalloc(1 << 16);
	memset(work, 1, 1 << 16);
	memset(slots, 0, 2 * (size_t)n * sizeof(uint64_t));
	IT_OK(hoist_barrier(), "initial");

	for (int r = 1; r <= ROUNDS; r++) {
		int b = r % 2;
		int with_block = (r % 10 == 0);
		IT_WHERE("barrier round %d", r);
		if (r % n == me && r % 3 == 0)
			usleep(300);
		put_round(slots + (size_t)b * n, block + (size_t)b * BLOCK, src, n, me, (uint64_t)r, with_block, r);
		if (IT_OK(hoist_barrier(), "round %d", r) != 0)
			continue;
		check_round(slots + (size_t)b * n, block + (size_t)b * BLOCK, n, me, (uint64_t)r, with_block,
			    "barrier", r);
	}

	for (int r = 1; r <= SPLIT_ROUNDS; r++) {
		int b = r % 2;
		int with_block = (r % 10 == 5);
		IT_WHERE("split barrier round %d", r);
		uint64_t v = 100000u + (uint64_t)r;
		put_round(slots + (size_t)b * n, block + (size_t)b * BLOCK, src, n, me, v, with_block, r);
		if (IT_OK(hoist_barrier_notify(), "split round %d", r) != 0)
			continue;
		local_work(work, (r % n == me) ? (1 << 16) : 4096, r);
		if (r % n == me && r % 4 == 0)
			usleep(300);
		if (IT_OK(hoist_barrier_wait(), "split round %d", r) != 0)
			continue;
		check_round(slots + (size_t)b * n, block + (size_t)b * BLOCK, n, me, v, with_block, "split barrier", r);
	}

	IT_OK(hoist_barrier(), "final");
	free(src);
	free(work);
	return it_finish();
}
