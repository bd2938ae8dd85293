/*
 * it_init_timeout: a job whose ranks never all attach fails with
 * -ETIMEDOUT after the daemon's job_timeout_ms (the test runs hoistd with
 * --job-timeout-ms 1000), leaves nothing behind in the daemon, and the
 * library can be initialised again afterwards.
 *
 * Run directly under harness.sh with HOISTD_ARGS="--job-timeout-ms 1000".
 */
#include "it_common.h"

static int run_ok(const char *cmd)
{
	int st = system(cmd);
	return st == 0;
}

int main(void)
{
	it_name = "it_init_timeout";
	it_rank = 0;
	setvbuf(stderr, NULL, _IOLBF, 0);
	it_watchdog(25);
	const char *ctl = getenv("HOIST_HOISTCTL"), *dir = getenv("HOIST_RUNTIME_DIR"),
		   *src = getenv("IT_SRC_DIR");
	if (!ctl || !dir || !src) {
		IT_FAIL("run me under harness.sh (HOIST_HOISTCTL, HOIST_RUNTIME_DIR, IT_SRC_DIR)");
		return 1;
	}
	char cmd[2048];
	/* the daemon must run with the short timeout, else this takes 30 s */
	snprintf(cmd, sizeof(cmd),
		 "'%s' --runtime-dir '%s' stats --json --settings | python3 -c "
		 "'import json,sys; s=json.load(sys.stdin)[\"settings\"]; sys.exit(0 if s[\"job_timeout_ms\"]==\"1000\" else 1)'",
		 ctl, dir);
	if (!run_ok(cmd))
		it_log("note: hoistd does not report job_timeout_ms = 1000 (HOISTD_ARGS not applied?)");

	char job[64];
	snprintf(job, sizeof(job), "timeout-%d", (int)getpid());
	setenv("HOIST_JOB", job, 1);
	setenv("HOIST_SIZE", "2", 1);
	setenv("HOIST_RANK", "0", 1);
	double t0 = it_now();
	int rc = hoist_init();
	double t1 = it_now();
	if (rc != -ETIMEDOUT) {
		IT_FAIL("hoist_init with only rank 0 of 2 started returned %s after %.1f s, expected -ETIMEDOUT",
			it_errname(rc), t1 - t0);
		if (rc == 0)
			hoist_finalize();
		return 1;
	}
	it_log("hoist_init returned -ETIMEDOUT after %.2f s", t1 - t0);

	/* the failed init left the library unconnected */
	IT_EXPECT(hoist_rank(), -ENOTCONN, "after the failed init");
	IT_EXPECT(hoist_size(), -ENOTCONN, "after the failed init");
	IT_EXPECT(hoist_barrier(), -ENOTCONN, "after the failed init");
	IT_EXPECT(hoist_finalize(), -ENOTCONN, "after the failed init");

	/* the daemon forgot the job */
	int listed = 1;
	for (int i = 0; i < 50 && listed; i++) {
		listed = it_stats_has(dir, job) == 1;
		if (listed)
			usleep(100000);
	}
	if (listed)
		IT_FAIL("5 s after the timeout hoistctl stats still lists job %s", job);
	if (it_stats_probe(dir, "max", "jobs_timed_out") < 1)
		IT_FAIL("stats: jobs_timed_out is not >= 1 after a timed-out job");

	/* and the library can start again, as a complete job of one */
	char job2[80];
	snprintf(job2, sizeof(job2), "%s-retry", job);
	setenv("HOIST_JOB", job2, 1);
	setenv("HOIST_SIZE", "1", 1);
	rc = hoist_init();
	if (rc != 0) {
		IT_FAIL("hoist_init of a complete 1-PE job after the timed-out one returned %s", it_errname(rc));
	} else {
		uint64_t *p = hoist_malloc(64);
		uint64_t v = 0x1234567890abcdefull, back = 0;
		if (!p) {
			IT_FAIL("hoist_malloc after re-init returned NULL");
		} else {
			IT_OK(hoist_put(0, p, &v, sizeof(v)), "self put after re-init");
			IT_OK(hoist_get(&back, 0, p, sizeof(back)), "self get after re-init");
			if (back != v)
				IT_FAIL("self put/get after re-init: got %#" PRIx64, back);
		}
		IT_OK(hoist_finalize(), "after re-init");
	}
	if (it_failures)
		return 1;
	fprintf(stderr, "[it_init_timeout] PASS\n");
	return 0;
}
