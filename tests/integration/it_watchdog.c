/*
 * it_watchdog: the test programs' watchdog (it_common.h) fires on lack of
 * progress, not on total time, and its period is scaled by
 * HOIST_TEST_SCALE (issue 14: tests making progress on a loaded machine
 * were killed by a total-time alarm). No daemon needed.
 *
 *   it_watchdog progress SEC   period 1 s; SEC seconds of steps (IT_WHERE
 *                              every 0.1 s): must exit 0
 *   it_watchdog hang SEC       period 1 s; progress stops: must be killed by
 *                              the watchdog (exit 1, "no progress") within SEC
 * watchdog.sh runs both and checks the timing with HOIST_TEST_SCALE.
 */
#include "it_common.h"

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	it_name = "it_watchdog";
	it_rank = 0;
	double sec = atof(argv[2]);
	it_watchdog(1);
	double end = it_now() + sec;
	struct timespec ts = {0, 100 * 1000 * 1000};
	if (strcmp(argv[1], "progress") == 0) {
		int step = 0;
		while (it_now() < end) {
			IT_WHERE("step %d", step++);
			nanosleep(&ts, NULL);
		}
		fprintf(stderr, "[it_watchdog] %d steps in %.1f s, not killed\n", step, sec);
		return 0;
	}
	IT_WHERE("stuck on purpose");
	while (it_now() < end)
		nanosleep(&ts, NULL);
	fprintf(stderr, "[it_watchdog] FAIL: no progress for %.1f s and the watchdog did not fire\n", sec);
	return 3;
}
