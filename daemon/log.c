#include "log.h"

#include <stdarg.h>
#include <stdio.h>

int hoistd_log_level = LOG_INFO_;

void hoistd_log_emit(int level, const char *fmt, ...)
{
	/* sd-daemon(3) priority prefixes, so journald keeps the level */
	static const char *const prefix[] = {"<3>", "<4>", "<6>", "<7>"};
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%shoistd: %s\n", prefix[level & 3], buf);
}
