/*
 * it_env: what hoist_init() says about a bad environment and a job that
 * does not assemble. Run under harness.sh with HOISTD_ARGS=--job-timeout-ms
 * 1000. Each case runs in a child with its own environment; it checks the
 * return code and that hoist_error_detail() names the variable, its value
 * and what it takes (before: "bad rank/size/heap variables in the
 * environment" for all of them, and a generic EINVAL text for
 * HOIST_HEAP_SIZE=1t, whose grammar differed from the daemon's).
 */
#include <sys/wait.h>

#include "it_common.h"

struct tcase {
	const char *what;
	const char *env[6]; /* NAME=VALUE, ... */
	int want;
	const char *detail[3]; /* substrings hoist_error_detail() must hold */
};

static const struct tcase cases[] = {
	{"heap size not a size", {"HOIST_HEAP_SIZE=1x"}, -EINVAL,
	 {"HOIST_HEAP_SIZE='1x' is not valid", "k, m, g or t"}},
	{"heap size over the daemon's max_heap_bytes (1t: the daemon's grammar)",
	 {"HOIST_HEAP_SIZE=1t"}, -EINVAL, {"heap of 1099511627776 bytes", "max_heap_bytes"}},
	{"heap size with a B suffix, as hoistd.conf takes it", {"HOIST_HEAP_SIZE=8MB"}, 0, {""}},
	{"rank not below size", {"HOIST_RANK=5", "HOIST_SIZE=4"}, -EINVAL,
	 {"HOIST_RANK=5 is not below HOIST_SIZE=4"}},
	{"rank not a number", {"HOIST_RANK=x", "HOIST_SIZE=4"}, -EINVAL,
	 {"HOIST_RANK='x' is not valid", "whole number"}},
	{"HOIST_AUTO=2", {"HOIST_AUTO=2"}, -EINVAL, {"HOIST_AUTO='2' is not valid: 0 or 1"}},
	{"HOIST_WAIT_POLL_MS=0", {"HOIST_WAIT_POLL_MS=0"}, -EINVAL,
	 {"HOIST_WAIT_POLL_MS='0' is not valid", "milliseconds from 1"}},
	{"HOIST_WAIT_POLL_MS=25", {"HOIST_WAIT_POLL_MS=25"}, 0, {""}},
	{"a lone rank of 2: the key and where it came from", {"HOIST_RANK=0", "HOIST_SIZE=2"},
	 -ETIMEDOUT, {"did not assemble: 1 of 2 ranks", "HOIST_JOB", "came from HOIST_JOB"}},
	{"a lone rank of 2 without HOIST_JOB", {"HOIST_RANK=0", "HOIST_SIZE=2", "HOIST_JOB="},
	 -ETIMEDOUT, {"job key 'ppid-", "came from the parent process id"}},
};

static int run_case(const struct tcase *t, int i)
{
	char job[64];
	snprintf(job, sizeof(job), "it-env-%d-%d", (int)getppid(), i);
	setenv("HOIST_JOB", job, 1);
	unsetenv("HOIST_RANK");
	unsetenv("HOIST_SIZE");
	for (int k = 0; k < 6 && t->env[k]; k++) {
		char buf[128];
		snprintf(buf, sizeof(buf), "%s", t->env[k]);
		char *eq = strchr(buf, '=');
		*eq = 0;
		if (eq[1])
			setenv(buf, eq + 1, 1);
		else
			unsetenv(buf);
	}
	int rc = hoist_init();
	const char *d = hoist_error_detail();
	int bad = rc != t->want;
	for (int k = 0; k < 3 && t->detail[k]; k++)
		if (t->detail[k][0] && !strstr(d, t->detail[k]))
			bad = 1;
	fprintf(stderr, "[it_env] %s: %s: %s (%s)\n", bad ? "FAIL" : "ok", t->what, it_errname(rc), d);
	if (bad)
		fprintf(stderr, "[it_env]   want %s and a detail with '%s'\n", it_errname(t->want),
			t->detail[0]);
	if (rc == 0)
		hoist_finalize();
	return bad;
}

int main(void)
{
	setvbuf(stderr, NULL, _IOLBF, 0);
	int fails = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fflush(NULL);
		pid_t p = fork();
		if (p == 0)
			_exit(run_case(&cases[i], (int)i));
		int st;
		if (waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fails++;
	}
	if (fails) {
		fprintf(stderr, "[it_env] %d case(s) failed\n", fails);
		return 1;
	}
	fprintf(stderr, "[it_env] PASS\n");
	return 0;
}
