/*
 * it_attach: attach-time refusals, each in its own process. Run directly
 * under harness.sh (it forks its own PEs).
 *
 *   - no daemon in HOIST_RUNTIME_DIR (an empty directory): -ENOENT
 *   - job J (size 2): rank 0 attaches and waits; then
 *       a second rank 0 of J                       -> -EADDRINUSE
 *       rank 1 of J claiming size 3                -> -EINVAL, and the
 *         waiting rank 0 gets -EINVAL at once too (the job cannot start:
 *         before, it waited for job_timeout_ms)
 *   - job K (size 2): rank 0, then rank 1          -> job starts, works
 *       rank 1 of K again while the job runs       -> -EADDRINUSE
 *   - the daemon lists no client of J afterwards.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include "it_common.h"

static char g_release[512]; /* file that lets the running job finish */

static int expect_init(const char *tag, int want)
{
	int rc = hoist_init();
	if (rc == want) {
		fprintf(stderr, "[it_attach %s] hoist_init returned %s as expected\n", tag, it_errname(rc));
		if (rc == 0)
			hoist_finalize();
		return 0;
	}
	fprintf(stderr, "[it_attach %s] FAIL: hoist_init returned %s (%s), expected %s\n", tag, it_errname(rc),
		hoist_strerror(rc), it_errname(want));
	if (rc == 0)
		hoist_finalize();
	return 1;
}

/* A member of the real job: init, exchange data, wait for the release
 * file (so the job is still running while the intruder tries), finish. */
static int member(const char *tag)
{
	int me, n;
	it_init(tag, &me, &n);
	uint64_t *w = it_malloc(64);
	uint64_t v = 1000u + (uint64_t)me, back = 0;
	int to = (me + 1) % n;
	IT_OK(hoist_put(to, w, &v, sizeof(v)), "put");
	IT_OK(hoist_barrier());
	if (*(volatile uint64_t *)w != 1000u + (uint64_t)((me + n - 1) % n))
		IT_FAIL("word from the other rank is %" PRIu64, *(volatile uint64_t *)w);
	IT_OK(hoist_get(&back, to, w, sizeof(back)), "get");
	if (back != v)
		IT_FAIL("get returned %" PRIu64 ", want %" PRIu64, back, v);
	struct stat sb;
	double end = it_now() + 20;
	while (stat(g_release, &sb) != 0 && it_now() < end)
		usleep(10000);
	IT_OK(hoist_barrier(), "after release");
	return it_finish();
}

static pid_t spawn_job(const char *job, int rank, int size, int is_member, int want, const char *tag)
{
	fflush(NULL);
	pid_t p = fork();
	if (p < 0) {
		perror("fork");
		exit(1);
	}
	if (p == 0) {
		it_watchdog(40);
		it_set_job(job, rank, size);
		_exit(is_member ? member(tag) : expect_init(tag, want));
	}
	return p;
}

static int wait_clients(const char *job, int want)
{
	for (int i = 0; i < 100; i++) {
		if (it_stats_probe(NULL, "count-string", job) == want)
			return 1;
		usleep(50000);
	}
	return 0;
}

int main(void)
{
	it_name = "it_attach"; /* the forked PEs name themselves in it_init */
	setvbuf(stderr, NULL, _IOLBF, 0);
	it_watchdog(50);
	const char *dir = getenv("HOIST_RUNTIME_DIR");
	if (!dir || !getenv("HOIST_HOISTCTL") || !getenv("IT_SRC_DIR")) {
		fprintf(stderr, "[it_attach] FAIL: run me under harness.sh\n");
		return 1;
	}
	int fails = 0;
	char job[64];
	snprintf(job, sizeof(job), "attach-%d", (int)getpid());
	snprintf(g_release, sizeof(g_release), "%s/release-%d", dir, (int)getpid());

	/* no daemon listening: -ENOENT */
	char empty[512];
	snprintf(empty, sizeof(empty), "%s/empty-%d", dir, (int)getpid());
	if (mkdir(empty, 0755) != 0) {
		perror("mkdir");
		return 1;
	}
	setenv("HOIST_RUNTIME_DIR", empty, 1);
	pid_t p = spawn_job("nodaemon", 0, 1, 0, -ENOENT, "no daemon");
	fails += it_reap(p, "attach without a daemon");
	setenv("HOIST_RUNTIME_DIR", dir, 1);
	rmdir(empty);

	pid_t a = spawn_job(job, 0, 2, 0, -EINVAL, "rank 0 of a job whose rank 1 disagrees");
	if (!wait_clients(job, 1))
		fprintf(stderr, "[it_attach] note: rank 0 of %s not listed by hoistctl stats while waiting\n", job);
	p = spawn_job(job, 0, 2, 0, -EADDRINUSE, "second rank 0");
	fails += it_reap(p, "second rank 0 of the same job");
	p = spawn_job(job, 1, 3, 0, -EINVAL, "rank 1 claiming size 3");
	fails += it_reap(p, "rank 1 with a different job size");
	fails += it_reap(a, "the waiting rank 0 of the job a rank disagreed with");

	snprintf(job, sizeof(job), "attach2-%d", (int)getpid());
	a = spawn_job(job, 0, 2, 1, 0, "rank 0");
	pid_t b = spawn_job(job, 1, 2, 1, 0, "rank 1");
	if (!wait_clients(job, 2))
		fprintf(stderr, "[it_attach] note: job %s not listed with 2 clients\n", job);
	p = spawn_job(job, 1, 2, 0, -EADDRINUSE, "rank 1 again while running");
	fails += it_reap(p, "a rank joining a running job");
	FILE *f = fopen(g_release, "w");
	if (f)
		fclose(f);
	fails += it_reap(a, "rank 0 of the job");
	fails += it_reap(b, "rank 1 of the job");
	unlink(g_release);
	if (!wait_clients(job, 0)) {
		fprintf(stderr, "[it_attach] FAIL: clients of %s still listed after it finished\n", job);
		fails++;
	}
	if (fails)
		return 1;
	fprintf(stderr, "[it_attach] PASS\n");
	return 0;
}
