/* hoistd logging: one levelled macro; the level is checked before any
 * formatting. Messages go to stderr: under systemd's journal with an
 * sd-daemon(3) level prefix (journald adds time and unit), anywhere else as
 * "2026-11-24T04:10:00.123Z hoistd[PID] warn: message". */
#ifndef HOISTD_LOG_H
#define HOISTD_LOG_H

enum { LOG_ERR_ = 0, LOG_WARN_ = 1, LOG_INFO_ = 2, LOG_DEBUG_ = 3 };

extern int hoistd_log_level;
void hoistd_log_emit(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define hlog(level, ...)                                                                           \
	do {                                                                                       \
		if ((level) <= hoistd_log_level)                                                   \
			hoistd_log_emit((level), __VA_ARGS__);                                     \
	} while (0)
#define hlog_err(...) hlog(LOG_ERR_, __VA_ARGS__)
#define hlog_warn(...) hlog(LOG_WARN_, __VA_ARGS__)
#define hlog_info(...) hlog(LOG_INFO_, __VA_ARGS__)
#define hlog_debug(...) hlog(LOG_DEBUG_, __VA_ARGS__)

#endif
