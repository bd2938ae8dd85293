#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int hoistd_log_level = LOG_INFO_;

/* Is stderr the journal's stream (systemd sets JOURNAL_STREAM=dev:ino for
 * the unit's stderr)? Then journald adds time and unit and reads the
 * level from an sd-daemon(3) prefix; anywhere else (a terminal, a file,
 * a launcher's log) each line carries its own UTC timestamp and level. */
static int stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) != 0)
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void hoistd_log_emit(int level, const char *fmt, ...)
{
	static const char *const prefix[] = {"<3>", "<4>", "<6>", "<7>"};
	static const char *const name[] = {"error", "warn", "info", "debug"};
	static int journal = -1; /* decided once; a race only decides it twice */
	int j = __atomic_load_n(&journal, __ATOMIC_RELAXED);
	if (j < 0) {
		j = stderr_is_journal();
		__atomic_store_n(&journal, j, __ATOMIC_RELAXED);
	}
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* one line per message, whatever a job key holds: a newline in a
	 * client's HOIST_JOB must not forge log lines */
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	if (j) {
		fprintf(stderr, "%shoistd: %s\n", prefix[level & 3], buf);
		return;
	}
	struct timespec ts;
	struct tm tm;
	char when[32] = "";
	clock_gettime(CLOCK_REALTIME, &ts);
	if (gmtime_r(&ts.tv_sec, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ldZ hoistd[%d] %s: %s\n", when, ts.tv_nsec / 1000000L, (int)getpid(),
		name[level & 3], buf);
}
