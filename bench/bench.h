/*
 * hoist-bench internals shared by its source files. Not part of libhoist.
 */
#ifndef HOIST_BENCH_H
#define HOIST_BENCH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* The handoff primitives of shm/hoist_shm.h, restated so the benchmark
 * depends on the public API only: a store-release publishes, a spinning
 * load-acquire of the same word on the other side consumes. */
static inline void bench_store_release(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline uint32_t bench_load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* As hoist_cpu_relax(). The spinning side pauses: on x86 that is also the
 * faster handoff (no memory-order machine clear when the line arrives). */
static inline void bench_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

#define BENCH_CACHELINE 64

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* qsort order for doubles, and the median of a sorted array: every
 * benchmark reports median, min and max of its repetitions. */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static inline double bench_median_sorted(const double *s, int n)
{
	return (n & 1) ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* Median, min and max of the n values v (1 <= n <= BENCH_STATS_MAX; v is
 * left in its order), as every row of hoist-bench and tcp-raw reports them. */
#define BENCH_STATS_MAX 1024
static inline void bench_stats(const double *v, int n, double *med, double *min, double *max)
{
	double s[BENCH_STATS_MAX];
	if (n > BENCH_STATS_MAX)
		n = BENCH_STATS_MAX;
	memcpy(s, v, sizeof(double) * (size_t)n);
	qsort(s, (size_t)n, sizeof(double), bench_cmp_double);
	*min = s[0];
	*max = s[n - 1];
	*med = bench_median_sorted(s, n);
}

/* Rows of hoist-bench and tcp-raw, printed the same way so that their
 * tables line up and bench/run-nodes.sh reads both. -------------------- */

/* The same value in every output: 4 significant digits, no exponent. */
static inline void bench_fmt_num(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (fabs(v) >= 1000)
		snprintf(buf, len, "%.0f", v);
	else if (fabs(v) >= 100)
		snprintf(buf, len, "%.1f", v);
	else if (fabs(v) >= 10)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.3f", v);
}

/* --tsv: row<TAB>name<TAB>unit<TAB>every rep's value (space separated) */
static inline void bench_tsv_row(const char *name, const char *unit, const double *v, int n)
{
	printf("row\t%s\t%s\t", name, unit);
	for (int k = 0; k < n; k++)
		printf("%s%.6g", k ? " " : "", v[k]);
	printf("\n");
}

/* The table's first five columns (no newline): the header when name is
 * NULL, else the row's name, unit, median, min and max. */
static inline void bench_table_cols(const char *name, const char *unit, double med, double min, double max)
{
	if (!name) {
		printf("%-38s %-8s %10s %10s %10s", "name", "unit", "median", "min", "max");
		return;
	}
	char a[24], b[24], c[24];
	bench_fmt_num(med, a, sizeof(a));
	bench_fmt_num(min, b, sizeof(b));
	bench_fmt_num(max, c, sizeof(c));
	printf("%-38s %-8s %10s %10s %10s", name, unit, a, b, c);
}

/* The table's last line: "reproduce:", prefix (if any) and the command line. */
static inline void bench_reproduce(const char *prefix, int argc, char **argv)
{
	printf("reproduce:%s", prefix ? prefix : "");
	for (int i = 0; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\n");
}

/* How many iterations take about time_ms, from an estimate of est_ns per
 * iteration, clamped to [lo, hi]; lo with smoke (a quick correctness run).
 * The --time-ms programs (amo_bench.c, shmem_amo.c, shmem_bench.c,
 * shmem_coll.c) size every measurement with it. */
static inline long bench_sized(double est_ns, long lo, long hi, double time_ms, int smoke)
{
	if (smoke)
		return lo;
	long n = (long)(time_ms * 1e6 / (est_ns > 1 ? est_ns : 1));
	return n < lo ? lo : n > hi ? hi : n;
}

/* --test LIST of the programs: each test's name and its bit. */
struct bench_test_name {
	const char *name;
	int bit;
};

/* The bits of the comma list of test names `list` (names from t[0..n)), or
 * -1 if it names an unknown test or none. */
static inline int bench_parse_tests(const char *list, const struct bench_test_name *t, size_t n)
{
	int bits = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t k = 0;
		while (k < n && strcmp(tok, t[k].name) != 0)
			k++;
		if (k == n)
			return -1;
		bits |= t[k].bit;
	}
	return bits ? bits : -1;
}

/* Message-size lists (--bw-sizes of hoist-bench and tcp-raw) ------------ */

#define BENCH_MAX_SIZES 16
#define BENCH_MIN_SIZE  8ul         /* a message carries an 8-byte stamp */
#define BENCH_MAX_SIZE  (64ul << 20) /* one message at most 64 MiB */

/* Parses a comma list of sizes, each a number with an optional k/m suffix
 * (KiB, MiB; "KiB"/"MiB"/"b" spellings accepted too): "4k,64k,1m".
 * Returns how many sizes were stored in out[] (at most max), or -1 when
 * an entry is malformed, out of [BENCH_MIN_SIZE, BENCH_MAX_SIZE] or the
 * list is empty or too long. */
static inline int bench_parse_sizes(const char *list, size_t *out, int max)
{
	int n = 0;
	const char *p = list;
	while (*p) {
		char *end;
		unsigned long long v = strtoull(p, &end, 10);
		if (end == p)
			return -1;
		unsigned long long mul = 1;
		if (*end == 'k' || *end == 'K')
			mul = 1ull << 10, end++;
		else if (*end == 'm' || *end == 'M')
			mul = 1ull << 20, end++;
		if (mul > 1 && strncasecmp(end, "ib", 2) == 0)
			end += 2;
		else if (*end == 'b' || *end == 'B')
			end++;
		if (*end != ',' && *end != '\0')
			return -1;
		v *= mul;
		if (v < BENCH_MIN_SIZE || v > BENCH_MAX_SIZE || n == max)
			return -1;
		out[n++] = (size_t)v;
		p = *end == ',' ? end + 1 : end;
	}
	return n > 0 ? n : -1;
}

/* "8 B", "4 KiB", "1 MiB", "1536 B": how row names spell a size. */
static inline void bench_size_name(size_t len, char *buf, size_t buflen)
{
	if (len >= (1u << 20) && len % (1u << 20) == 0)
		snprintf(buf, buflen, "%zu MiB", len >> 20);
	else if (len >= 1024 && len % 1024 == 0)
		snprintf(buf, buflen, "%zu KiB", len >> 10);
	else
		snprintf(buf, buflen, "%zu B", len);
}

/* floor.c ------------------------------------------------------------- */

enum floor_mode {
	FLOOR_MODE_LINE, /* one cache line bounces: the hardware floor */
	FLOOR_MODE_RING, /* 64 B entry + tail there, 16 B entry + tail back:
			  * the shape of hoist's SQ/CQ with no software */
	FLOOR_MODE_RING_4K, /* RING, plus 4 KiB copied into shared staging by
			     * the responder and out of it by the initiator */
};

struct floor_opts {
	int mode;    /* enum floor_mode */
	long iters;  /* timed round trips per rep */
	long warmup; /* untimed round trips before the first rep */
	int reps;
	int pin;     /* pin the two processes to two different CPUs */
};

/* Cache-line ping-pong between this process and a forked child over a
 * MAP_SHARED|MAP_ANONYMOUS mapping, spinning with store-release/load-acquire.
 * rt_ns[rep] gets the mean round trip of each rep. *cpus describes the
 * placement ("cpu0/cpu1" or "unpinned"). 0 or -errno: -ENODEV when this
 * process may run on one CPU only, -ETIMEDOUT when the reps took too long. */
int floor_pingpong(const struct floor_opts *o, double *rt_ns, char *cpus, size_t cpus_len);

/* Single-process memcpy bandwidth of a len-byte copy (GB/s, one value per
 * rep), the reference for the put-bandwidth rows. 0 or -errno. */
int floor_memcpy(size_t len, int reps, double *gbps);

#endif
