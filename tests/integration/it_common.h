/*
 * Shared helpers of the integration test programs (tests/integration/).
 *
 * Every program checks values and every return code, prints what failed
 * (with its rank and the offsets involved) to stderr, keeps going where it
 * can so that the other PEs are not left waiting in a barrier, and exits 1
 * if anything failed, 77 to skip, 0 otherwise.
 */
#ifndef HOIST_IT_COMMON_H
#define HOIST_IT_COMMON_H

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hoist.h"

#define IT_SKIP 77
#define IT_MAX_REPORTS 40 /* failure lines printed before going quiet */
#define IT_FN static __attribute__((unused))

IT_FN const char *it_name = "it";
IT_FN int it_rank = -1;
IT_FN unsigned long it_failures;

/* Forward: the progress counter lives with the watchdog below. */
IT_FN void it_progress_bump(void);

IT_FN void it_vreport(const char *file, int line, const char *fmt, va_list ap)
{
	it_failures++;
	if (it_failures > IT_MAX_REPORTS) {
		if (it_failures == IT_MAX_REPORTS + 1)
			fprintf(stderr, "[%s rank %d] (further failures not printed)\n", it_name, it_rank);
		return;
	}
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "[%s rank %d] FAIL %s:%d: %s\n", it_name, it_rank, file, line, msg);
}

__attribute__((format(printf, 3, 4))) IT_FN void it_report(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	it_vreport(file, line, fmt, ap);
	va_end(ap);
}

#define IT_FAIL(...) it_report(__FILE__, __LINE__, __VA_ARGS__)

/* Log a progress/info line (rank-tagged). */
__attribute__((format(printf, 1, 2))) IT_FN void it_log(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "[%s rank %d] %s\n", it_name, it_rank, msg);
}

IT_FN const char *it_errname(int rc)
{
	switch (rc) {
	case 0: return "0";
	case -EINVAL: return "-EINVAL";
	case -EFAULT: return "-EFAULT";
	case -ENOTCONN: return "-ENOTCONN";
	case -ENOMEM: return "-ENOMEM";
	case -ETIMEDOUT: return "-ETIMEDOUT";
	case -EACCES: return "-EACCES";
	case -EADDRINUSE: return "-EADDRINUSE";
	case -ECONNRESET: return "-ECONNRESET";
	case -EPROTO: return "-EPROTO";
	case -ENOENT: return "-ENOENT";
	case -EAGAIN: return "-EAGAIN";
	case -EPERM: return "-EPERM";
	default: break;
	}
	static char buf[32];
	snprintf(buf, sizeof(buf), "%d", rc);
	return buf;
}

/* Check a call that must return 0 / `want`; report otherwise. Both yield
 * the return code. Optional printf-style context follows. */
#define IT_OK(call, ...) it_expect_((call), 0, #call, __FILE__, __LINE__, " " __VA_ARGS__)
#define IT_EXPECT(call, want, ...) it_expect_((call), (want), #call, __FILE__, __LINE__, " " __VA_ARGS__)

__attribute__((format(printf, 6, 7))) IT_FN int it_expect_(int rc, int want, const char *expr,
							    const char *file, int line, const char *fmt, ...)
{
	it_progress_bump();
	if (rc == want)
		return rc;
	char ctx[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	char got[32];
	snprintf(got, sizeof(got), "%s", it_errname(rc));
	it_report(file, line, "%s returned %s (%s), expected %s;%s", expr, got,
		  rc < 0 ? hoist_strerror(rc) : "", it_errname(want), ctx);
	return rc;
}

/* ---- deterministic data ------------------------------------------------ */

static inline uint64_t it_mix(uint64_t x)
{
	/* splitmix64 finaliser */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline uint64_t it_hash(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	uint64_t h = it_mix(a);
	h = it_mix(h ^ b);
	h = it_mix(h ^ c);
	h = it_mix(h ^ d);
	return it_mix(h ^ e);
}

struct it_rng {
	uint64_t s;
};

static inline uint64_t it_rng_next(struct it_rng *r)
{
	r->s += 0x9e3779b97f4a7c15ull;
	uint64_t z = r->s;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in [0, n) (n > 0; slight bias is irrelevant here) */
static inline uint64_t it_rng_below(struct it_rng *r, uint64_t n)
{
	return it_rng_next(r) % n;
}

/* Fill buf with the byte stream of `key`; byte i depends on key and i. */
IT_FN void it_fill(void *buf, size_t n, uint64_t key)
{
	unsigned char *p = buf;
	size_t i = 0;
	uint64_t k = it_mix(key);
	for (; i + 8 <= n; i += 8) {
		uint64_t v = it_mix(k + i);
		memcpy(p + i, &v, 8);
	}
	if (i < n) {
		uint64_t v = it_mix(k + i);
		memcpy(p + i, &v, n - i);
	}
}

/* First index where buf differs from it_fill(key), or n if equal. */
IT_FN size_t it_check_fill(const void *buf, size_t n, uint64_t key)
{
	it_progress_bump();
	const unsigned char *p = buf;
	size_t i = 0;
	uint64_t k = it_mix(key);
	for (; i + 8 <= n; i += 8) {
		uint64_t v = it_mix(k + i);
		if (memcmp(p + i, &v, 8) != 0)
			break;
	}
	for (; i < n; i += 8) {
		uint64_t v = it_mix(k + i);
		const unsigned char *e = (const unsigned char *)&v;
		size_t m = n - i < 8 ? n - i : 8;
		for (size_t j = 0; j < m; j++)
			if (p[i + j] != e[j])
				return i + j;
	}
	return n;
}

/* Expected byte at index i of it_fill(key). */
static inline unsigned char it_fill_byte(uint64_t key, size_t i)
{
	uint64_t v = it_mix(it_mix(key) + (i & ~(size_t)7));
	return ((const unsigned char *)&v)[i & 7];
}

/* First index where buf[i] != c, or n. */
IT_FN size_t it_check_byte(const void *buf, size_t n, unsigned char c)
{
	const unsigned char *p = buf;
	for (size_t i = 0; i < n; i++)
		if (p[i] != c)
			return i;
	return n;
}

/* ---- process helpers -------------------------------------------------- */

/* The factor every time limit of the suite is multiplied by: the
 * environment's HOIST_TEST_SCALE (scripts/test.sh sets it for the
 * sanitizer stages; a loaded machine or a VM may set it too), at least 1. */
IT_FN double it_scale(void)
{
	const char *e = getenv("HOIST_TEST_SCALE");
	double f = e ? strtod(e, NULL) : 1.0;
	return f >= 1.0 && f <= 1000.0 ? f : 1.0;
}

/* Progress: bumped by IT_WHERE, IT_PROGRESS() and every it_* check; the
 * watchdog fires only when it stood still for a whole period. */
static unsigned long it_progress; /* atomic: the alarm may land on any thread */
#define IT_PROGRESS() ((void)__atomic_fetch_add(&it_progress, 1, __ATOMIC_RELAXED))

IT_FN void it_progress_bump(void)
{
	IT_PROGRESS();
}

/* What the program is doing now; the watchdog prints it. */
static char it_where[256];
#define IT_WHERE(...) (IT_PROGRESS(), (void)snprintf(it_where, sizeof(it_where), __VA_ARGS__))

static unsigned it_watchdog_period; /* seconds, scaled */
static unsigned long it_watchdog_seen;

IT_FN void it_watchdog_handler(int sig)
{
	(void)sig;
	unsigned long now = __atomic_load_n(&it_progress, __ATOMIC_RELAXED);
	if (now != it_watchdog_seen) { /* progress in this period: another one */
		it_watchdog_seen = now;
		alarm(it_watchdog_period);
		return;
	}
	char msg[512];
	/* snprintf is not async-signal-safe in theory; we are about to _exit */
	int n = snprintf(msg, sizeof(msg),
			 "[%s rank %d] FAIL: watchdog expired, no progress for %u s (the test hung); last step: %s\n",
			 it_name, it_rank, it_watchdog_period, it_where[0] ? it_where : "(not recorded)");
	ssize_t w = write(2, msg, n > 0 ? (size_t)n : 0);
	(void)w;
	_exit(1);
}

/* Turn a hang into a failure: once `sec` seconds (times it_scale()) pass
 * without progress (IT_WHERE, IT_PROGRESS, it_* checks), the program fails
 * and says where it stood. A test that keeps making progress is never cut
 * short by it; the launcher's and the harness's total limits (also
 * scaled) are the backstop. Keep `sec` below hoistrun --timeout of the
 * test so that the failure says where it hung. */
IT_FN void it_watchdog(unsigned sec)
{
	double p = sec * it_scale();
	it_watchdog_period = p < 1 ? 1 : p > 1e6 ? 1000000u : (unsigned)p;
	it_watchdog_seen = __atomic_load_n(&it_progress, __ATOMIC_RELAXED);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = it_watchdog_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm(it_watchdog_period);
}

IT_FN double it_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The environment of rank `rank` of a job `job` of `size` ranks, for a
 * test that forks its own PEs instead of using a launcher. */
IT_FN void it_set_job(const char *job, int rank, int size)
{
	char r[16], s[16];
	snprintf(r, sizeof(r), "%d", rank);
	snprintf(s, sizeof(s), "%d", size);
	setenv("HOIST_JOB", job, 1);
	setenv("HOIST_RANK", r, 1);
	setenv("HOIST_SIZE", s, 1);
}

/* hoist_init + rank/size checks; exits 1 if the job cannot start. */
IT_FN void it_init(const char *name, int *rank, int *size)
{
	it_name = name;
	setvbuf(stderr, NULL, _IOLBF, 0);
	int rc = hoist_init();
	if (rc != 0) {
		fprintf(stderr, "[%s] FAIL hoist_init returned %s (%s) (HOIST_RANK=%s HOIST_SIZE=%s HOIST_JOB=%s HOIST_RUNTIME_DIR=%s)\n",
			name, it_errname(rc), hoist_strerror(rc), getenv("HOIST_RANK") ? getenv("HOIST_RANK") : "-",
			getenv("HOIST_SIZE") ? getenv("HOIST_SIZE") : "-", getenv("HOIST_JOB") ? getenv("HOIST_JOB") : "-",
			getenv("HOIST_RUNTIME_DIR") ? getenv("HOIST_RUNTIME_DIR") : "-");
		exit(1);
	}
	*rank = hoist_rank();
	*size = hoist_size();
	it_rank = *rank;
	if (*rank < 0 || *size <= 0 || *rank >= *size) {
		fprintf(stderr, "[%s] FAIL hoist_rank()=%d hoist_size()=%d\n", name, *rank, *size);
		exit(1);
	}
	const char *er = getenv("HOIST_RANK"), *es = getenv("HOIST_SIZE");
	if (er && atoi(er) != *rank)
		IT_FAIL("hoist_rank()=%d but HOIST_RANK=%s", *rank, er);
	if (es && atoi(es) != *size)
		IT_FAIL("hoist_size()=%d but HOIST_SIZE=%s", *size, es);
}

/* Collective symmetric allocation; exits 1 on failure (nothing else can run). */
IT_FN void *it_malloc(size_t n)
{
	IT_PROGRESS();
	void *p = hoist_malloc(n);
	if (!p) {
		IT_FAIL("hoist_malloc(%zu) returned NULL", n);
		exit(1);
	}
	if ((uintptr_t)p % 64 != 0)
		IT_FAIL("hoist_malloc(%zu) returned %p, not 64-byte aligned", n, p);
	if (!hoist_is_symmetric(p, n))
		IT_FAIL("hoist_is_symmetric(hoist_malloc(%zu), %zu) == 0", n, n);
	return p;
}

IT_FN void *it_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		IT_FAIL("malloc(%zu) failed", n);
		exit(1);
	}
	return p;
}

/* Wait for the child p (what: how a failure names it) of a test that forks
 * its own PEs: 0 if it exited with 0, else 1 after saying how it ended. */
IT_FN int it_reap(pid_t p, const char *what)
{
	int st;
	if (waitpid(p, &st, 0) < 0) {
		perror("waitpid");
		return 1;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st))
		fprintf(stderr, "[%s] FAIL: %s exited with %d\n", it_name, what, WEXITSTATUS(st));
	else
		fprintf(stderr, "[%s] FAIL: %s killed by signal %d\n", it_name, what, WTERMSIG(st));
	return 1;
}

/* hoist_finalize, then exit with 1 if anything failed, else 0. */
IT_FN int it_finish(void)
{
	int rc = hoist_finalize();
	if (rc != 0)
		IT_FAIL("hoist_finalize returned %s", it_errname(rc));
	if (it_failures) {
		fprintf(stderr, "[%s rank %d] %lu failure(s)\n", it_name, it_rank, it_failures);
		return 1;
	}
	if (it_rank == 0)
		fprintf(stderr, "[%s rank %d] PASS\n", it_name, it_rank);
	return 0;
}

/* ---- the daemon's stats (hoistctl stats --json) ------------------------ */

/* Runs `'$HOIST_HOISTCTL' --runtime-dir DIR stats --json | FILTER` (DIR
 * NULL: $HOIST_RUNTIME_DIR), FILTER a shell command that reads the JSON on
 * its stdin, and reads up to nv whole numbers it prints into v. Returns
 * how many it read; -1 if HOIST_HOISTCTL or the directory is not set, the
 * command could not start or FILTER failed (a hoistctl that failed leaves
 * FILTER no JSON). */
IT_FN int it_stats_read(const char *dir, const char *filter, long long *v, int nv)
{
	const char *ctl = getenv("HOIST_HOISTCTL");
	if (!dir)
		dir = getenv("HOIST_RUNTIME_DIR");
	if (!ctl || !dir)
		return -1;
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "'%s' --runtime-dir '%s' stats --json | %s", ctl, dir, filter);
	FILE *f = popen(cmd, "r");
	if (!f)
		return -1;
	int k = 0;
	while (k < nv && fscanf(f, "%lld", &v[k]) == 1)
		k++;
	char sink[256];
	while (fread(sink, 1, sizeof(sink), f) > 0)
		;
	return pclose(f) == 0 ? k : -1;
}

/* What `it_json.py PROBE ARG` (tests/integration, found through
 * $IT_SRC_DIR) prints for the stats of DIR: the largest counter whose
 * name holds ARG (PROBE "max"), or how many string values equal ARG
 * ("count-string"); -1 if there is none or it could not run. */
IT_FN long long it_stats_probe(const char *dir, const char *probe, const char *arg)
{
	const char *src = getenv("IT_SRC_DIR");
	if (!src)
		return -1;
	char filter[2048];
	snprintf(filter, sizeof(filter), "python3 '%s/it_json.py' %s '%s'", src, probe, arg);
	long long v = -1;
	return it_stats_read(dir, filter, &v, 1) == 1 ? v : -1;
}

/* 1 if the stats of DIR hold the string S (a job's name, say), 0 if not,
 * -1 if they could not be read. */
IT_FN int it_stats_has(const char *dir, const char *s)
{
	long long c = it_stats_probe(dir, "count-string", s);
	return c < 0 ? -1 : c > 0;
}

/* Daemon counter NAME ("daemon" of the stats of $HOIST_RUNTIME_DIR), or -1. */
IT_FN long long it_stats_daemon(const char *name)
{
	char filter[512];
	snprintf(filter, sizeof(filter),
		 "python3 -c \"import json,sys; print(json.load(sys.stdin).get('daemon', {}).get('%s', -1))\"",
		 name);
	long long v = -1;
	return it_stats_read(NULL, filter, &v, 1) == 1 ? v : -1;
}

/* The client counters NAMES (separated by spaces, at most nv) of this
 * job's ($HOIST_JOB) clients on $HOIST_RUNTIME_DIR's daemon: of rank RANK,
 * or summed over all of them (RANK -1), into v, from one reading. Returns
 * how many it read: nv, or 0 if no client matched; -1 if unreadable. */
IT_FN int it_stats_clients(const char *names, int rank, long long *v, int nv)
{
	const char *job = getenv("HOIST_JOB");
	if (!job)
		return -1;
	char filter[2048];
	snprintf(filter, sizeof(filter),
		 "python3 -c \"import json,sys\n"
		 "d=json.load(sys.stdin)\n"
		 "m=[c['counters'] for c in d.get('clients', []) if c.get('job') == '%s' and %d in (-1, c.get('rank'))]\n"
		 "if m:\n"
		 "    print(*[sum(c[k] for c in m) for k in '%s'.split()])\"",
		 job, rank, names);
	return it_stats_read(NULL, filter, v, nv);
}

/* Spin (with short sleeps) until *p == want or `sec` seconds (times
 * it_scale()) passed. Returns 1 if reached. */
IT_FN int it_wait_u64(volatile uint64_t *p, uint64_t want, double sec)
{
	double end = it_now() + sec * it_scale();
	unsigned spins = 0;
	while (__atomic_load_n((uint64_t *)p, __ATOMIC_ACQUIRE) != want) {
		if (++spins % 1024 == 0) {
			if (it_now() > end)
				return 0;
			struct timespec ts = {0, 20000};
			nanosleep(&ts, NULL);
		}
	}
	return 1;
}

#endif
