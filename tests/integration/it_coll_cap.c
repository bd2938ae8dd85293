/*
 * it_coll_cap: a PE that starts collectives the others have not joined
 * waits once max_pending_colls of them are unfinished, instead of making
 * the daemon keep any number of them (64 B per rank of the job each; 65,536
 * of them cost 150 MB before). Run as 2 PEs with
 * HOISTD_ARGS=--max-pending-colls 4, under harness.sh.
 *
 * Rank 0 starts CAP + 2 allreduces while rank 1 has not joined any. The
 * daemon must execute exactly CAP of them and hold the next (stats: colls
 * = CAP, colls_capped = 1 for rank 0). Then rank 1 joins all of them and
 * every result must be right. Decided by counters, not by time: a daemon
 * without the cap executes all CAP + 2 at once, which fails at once.
 */
#include "it_common.h"

#include <fcntl.h>
#include <sys/stat.h>

#define CAP 4
#define N (CAP + 2)

/* colls and colls_capped of this job's rank 0, from one hoistctl stats --json */
static int rank0_counters(long *colls, long *capped)
{
	long long v[2];
	if (it_stats_clients("colls colls_capped", 0, v, 2) != 2)
		return 0;
	*colls = (long)v[0];
	*capped = (long)v[1];
	return 1;
}

int main(void)
{
	int me, n;
	it_init("it_coll_cap", &me, &n);
	if (n != 2 || !getenv("HOIST_HOISTCTL") || !getenv("HOIST_RUNTIME_DIR")) {
		IT_FAIL("wants 2 PEs and the harness's HOIST_HOISTCTL / HOIST_RUNTIME_DIR");
		return it_finish();
	}
	char flag[4096];
	snprintf(flag, sizeof(flag), "%s/it_coll_cap.%s", getenv("HOIST_RUNTIME_DIR"),
		 getenv("HOIST_JOB"));
	int64_t *src = it_malloc(N * sizeof(int64_t)), *dst = it_malloc(N * sizeof(int64_t));
	for (int i = 0; i < N; i++)
		src[i] = (int64_t)(i + 1) * (me + 1);
	hoist_req_t *req[N];
	if (me == 0) {
		for (int i = 0; i < N; i++)
			IT_OK(hoist_allreduce_start(&dst[i], &src[i], 1, HOIST_INT64, HOIST_SUM, &req[i]),
			      "start %d", i);
		long colls = -1, capped = -1;
		for (unsigned polls = 0;; polls++) {
			IT_WHERE("stats poll %u: colls %ld capped %ld", polls, colls, capped);
			if (!rank0_counters(&colls, &capped)) {
				IT_FAIL("no stats row for rank 0");
				break;
			}
			if (colls > CAP) {
				IT_FAIL("the daemon executed %ld collectives that rank 1 has not joined; the cap "
					"is %d", colls, CAP);
				break;
			}
			if (colls == CAP && capped == 1)
				break;
			usleep(10000);
		}
		int fd = open(flag, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	} else {
		struct stat st;
		while (stat(flag, &st) != 0) {
			IT_WHERE("waiting for rank 0's collectives to be capped");
			usleep(10000);
		}
		for (int i = 0; i < N; i++)
			IT_OK(hoist_allreduce_start(&dst[i], &src[i], 1, HOIST_INT64, HOIST_SUM, &req[i]),
			      "start %d", i);
	}
	for (int i = 0; i < N; i++) {
		IT_OK(hoist_wait(req[i]), "allreduce %d", i);
		if (dst[i] != (int64_t)(i + 1) * 3)
			IT_FAIL("allreduce %d: %lld, want %lld", i, (long long)dst[i], (long long)(i + 1) * 3);
	}
	IT_OK(hoist_barrier());
	if (me == 0)
		unlink(flag);
	return it_finish();
}
