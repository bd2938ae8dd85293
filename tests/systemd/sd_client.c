/* One PE that stays attached for argv[1] milliseconds (the STATUS= test
 * watches the daemon count it). */
#include <hoist.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	int rc = hoist_init();
	if (rc) {
		fprintf(stderr, "sd_client: hoist_init: %s\n", hoist_strerror(rc));
		return 1;
	}
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
	return hoist_finalize() ? 1 : 0;
}
