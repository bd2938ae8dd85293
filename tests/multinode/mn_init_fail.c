/*
 * mn_init_fail: hoist_init must fail with the error named on the command
 * line (e.g. ETIMEDOUT: the job spans a daemon the cluster refuses, so it
 * can never assemble). Exit 0 iff it did; 1 if it returned anything else
 * (success included: then it finalizes first).
 *
 *   mn_init_fail ETIMEDOUT|ECONNRESET|ENOMEM [TEXT]
 *
 * With TEXT, hoist_error_detail() must contain it (the daemon's reason).
 */
#include "it_common.h"

int main(int argc, char **argv)
{
	it_name = "mn_init_fail";
	const char *r = getenv("HOIST_RANK");
	it_rank = r ? atoi(r) : -1;
	setvbuf(stderr, NULL, _IOLBF, 0);
	it_watchdog(60);
	int want;
	if ((argc == 2 || argc == 3) && !strcmp(argv[1], "ETIMEDOUT"))
		want = -ETIMEDOUT;
	else if ((argc == 2 || argc == 3) && !strcmp(argv[1], "ECONNRESET"))
		want = -ECONNRESET;
	else if ((argc == 2 || argc == 3) && !strcmp(argv[1], "ENOMEM"))
		want = -ENOMEM;
	else {
		fprintf(stderr, "usage: mn_init_fail ETIMEDOUT|ECONNRESET|ENOMEM [TEXT]\n");
		return 2;
	}
	double t0 = it_now();
	IT_WHERE("hoist_init");
	int rc = hoist_init();
	double dt = it_now() - t0;
	if (rc == 0) {
		IT_FAIL("hoist_init succeeded after %.2f s (rank %d of %d), expected %s", dt, hoist_rank(),
			hoist_size(), it_errname(want));
		hoist_finalize();
		return 1;
	}
	if (rc != want) {
		IT_FAIL("hoist_init returned %s (%s) after %.2f s, expected %s", it_errname(rc), hoist_strerror(rc), dt,
			it_errname(want));
		return 1;
	}
	const char *detail = hoist_error_detail();
	if (argc == 3 && !strstr(detail, argv[2])) {
		IT_FAIL("hoist_init returned %s but its detail '%s' does not mention '%s'", it_errname(rc),
			detail, argv[2]);
		return 1;
	}
	it_log("hoist_init returned %s after %.2f s, as expected: %s", it_errname(rc), dt, detail);
	return 0;
}
