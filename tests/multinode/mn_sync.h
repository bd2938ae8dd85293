/*
 * Shared helpers of the multinode programs that a script steps through a
 * scenario (resume.sh drives mn_resume, rxbatch.sh mn_rxbatch): the
 * program and the script take turns by creating empty files in
 * $MN_SYNC_DIR ("ready", "stopped", ...) and waiting for each other's.
 * The script side is in mn_sync.sh.
 */
#ifndef HOIST_MN_SYNC_H
#define HOIST_MN_SYNC_H

#include "it_common.h"

#include <fcntl.h>
#include <sys/stat.h>

static const char *mn_sync_dir;

/* it_init and a 100 s watchdog for a job of `want` PEs driven through
 * $MN_SYNC_DIR. 0 to go on; -1 (reported) if the job is not that: the
 * caller then returns it_finish(). */
IT_FN int mn_sync_init_n(const char *name, int *me, int *n, int want)
{
	it_init(name, me, n);
	it_watchdog(100);
	mn_sync_dir = getenv("MN_SYNC_DIR");
	if (*n != want || !mn_sync_dir) {
		IT_FAIL("wants %d PEs (not %d) and MN_SYNC_DIR", want, *n);
		return -1;
	}
	return 0;
}

/* The same for the usual 2 PEs. */
IT_FN int mn_sync_init(const char *name, int *me, int *n)
{
	return mn_sync_init_n(name, me, n, 2);
}

/* Create $MN_SYNC_DIR/name: tell the script. */
IT_FN void mn_touch(const char *name)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", mn_sync_dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		IT_FAIL("cannot create %s", p);
	else
		close(fd);
}

/* Wait until the script created $MN_SYNC_DIR/name: 0, or -1 (reported)
 * after 60 s times it_scale(). */
IT_FN int mn_await(const char *name)
{
	char p[4096];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", mn_sync_dir, name);
	double limit = 60000 * it_scale();
	for (double i = 0; i < limit; i++) {
		if (stat(p, &st) == 0)
			return 0;
		usleep(1000);
	}
	IT_FAIL("%s did not appear", p);
	return -1;
}

#endif
