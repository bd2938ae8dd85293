/*
 * it_stats_job: a small job for it_stats.sh. Every PE does PUTS puts and
 * GETS gets (inline and staged) to the next PE and checks the data; then,
 * while every PE is still attached, rank 0 saves `hoistctl stats --json`,
 * the table with phases and `hoistctl metrics` to $IT_OUT/mid.json,
 * $IT_OUT/mid.txt and $IT_OUT/mid.prom.
 */
#include "it_common.h"

#define PUTS 10
#define GETS 10
#define LEN 1000

int main(void)
{
	int me, n;
	it_init("it_stats_job", &me, &n);
	it_watchdog(40);
	unsigned char *buf = it_malloc(PUTS * LEN);
	unsigned char src[LEN], back[LEN];
	int to = (me + 1) % n, from = (me + n - 1) % n;
	for (int i = 0; i < PUTS; i++) {
		it_fill(src, LEN, it_hash(0x57a7, (uint64_t)me, (uint64_t)i, 0, 0));
		IT_OK(hoist_put(to, buf + (size_t)i * LEN, src, i % 2 ? 8 : LEN), "put %d", i);
	}
	IT_OK(hoist_barrier());
	for (int i = 0; i < PUTS; i++) {
		size_t len = i % 2 ? 8 : LEN;
		uint64_t key = it_hash(0x57a7, (uint64_t)from, (uint64_t)i, 0, 0);
		size_t off = it_check_fill(buf + (size_t)i * LEN, len, key);
		if (off != len)
			IT_FAIL("put %d from pe %d wrong at offset %zu", i, from, off);
	}
	for (int i = 0; i < GETS; i++) {
		size_t len = i % 2 ? 8 : LEN;
		IT_OK(hoist_get(back, to, buf + (size_t)i * LEN, len), "get %d", i);
		it_fill(src, LEN, it_hash(0x57a7, (uint64_t)me, (uint64_t)i, 0, 0));
		if (memcmp(back, src, len) != 0)
			IT_FAIL("get %d from pe %d returned wrong data", i, to);
	}
	IT_OK(hoist_barrier());
	if (me == 0) {
		const char *ctl = getenv("HOIST_HOISTCTL"), *dir = getenv("HOIST_RUNTIME_DIR"), *out = getenv("IT_OUT");
		if (!ctl || !dir || !out) {
			IT_FAIL("HOIST_HOISTCTL, HOIST_RUNTIME_DIR or IT_OUT not set");
		} else {
			char cmd[4096];
			snprintf(cmd, sizeof(cmd),
				 "'%s' --runtime-dir '%s' stats --json > '%s/mid.json' && "
				 "'%s' --runtime-dir '%s' stats --phases > '%s/mid.txt' && "
				 "'%s' --runtime-dir '%s' metrics > '%s/mid.prom'",
				 ctl, dir, out, ctl, dir, out, ctl, dir, out);
			if (system(cmd) != 0)
				IT_FAIL("failed: %s", cmd);
		}
	}
	IT_OK(hoist_barrier());
	return it_finish();
}
