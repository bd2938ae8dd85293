/*
 * mn_jobs: a job whose data is salted by its own job key, so that a put or
 * get that reaches another job's heap is seen. Run several of these at the
 * same time, with different keys, on the same daemons (job_collide.sh):
 * every PE puts salted blocks to the next PE, gets them back from it, and
 * checks what the previous PE put into its own heap, for many rounds.
 * A daemon that confuses two jobs (for instance because their ids on the
 * wire collide) delivers one job's block into the other's heap: both see
 * a wrong salt, or nothing at all.
 *
 *   mn_jobs [rounds]     (default 200)
 */
#include "it_common.h"

#define BLOCK 4096

static uint64_t key_salt(const char *key)
{
	uint64_t s = 0x6a6f62;
	for (const char *p = key; *p; p++)
		s = it_hash(s, (uint64_t)(unsigned char)*p, 0, 0, 0);
	return s;
}

int main(int argc, char **argv)
{
	int me, n;
	it_init("mn_jobs", &me, &n);
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	const char *key = getenv("HOIST_JOB");
	if (!key || n < 2) {
		IT_FAIL("needs HOIST_JOB and at least 2 PEs");
		return it_finish();
	}
	uint64_t salt = key_salt(key);
	int to = (me + 1) % n, from = (me + n - 1) % n;
	unsigned char *buf = it_malloc(2 * BLOCK); /* [0]: from the previous PE, [1]: mine */
	unsigned char *src = it_xmalloc(BLOCK), *back = it_xmalloc(BLOCK);
	for (int r = 0; r < rounds && !it_failures; r++) {
		IT_WHERE("round %d", r);
		it_fill(src, BLOCK, it_hash(salt, (uint64_t)r, (uint64_t)me, 1, 0));
		it_fill(buf + BLOCK, BLOCK, it_hash(salt, (uint64_t)r, (uint64_t)me, 2, 0));
		IT_OK(hoist_put(to, buf, src, BLOCK), "round %d: put to pe %d", r, to);
		IT_OK(hoist_barrier(), "round %d", r);
		size_t off = it_check_fill(buf, BLOCK, it_hash(salt, (uint64_t)r, (uint64_t)from, 1, 0));
		if (off != BLOCK)
			IT_FAIL("round %d: job %s: block from pe %d wrong at byte %zu (another job's data, "
				"or none)", r, key, from, off);
		IT_OK(hoist_get(back, to, buf + BLOCK, BLOCK), "round %d: get from pe %d", r, to);
		off = it_check_fill(back, BLOCK, it_hash(salt, (uint64_t)r, (uint64_t)to, 2, 0));
		if (off != BLOCK)
			IT_FAIL("round %d: job %s: get from pe %d wrong at byte %zu", r, key, to, off);
		IT_OK(hoist_barrier(), "round %d", r);
	}
	free(src);
	free(back);
	return it_finish();
}
