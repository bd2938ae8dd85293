/*
 * hoist-bench: micro-benchmarks of libhoist + hoistd on one node.
 *
 *   hoistrun -n 2 build/bench/hoist-bench [--reps 7] [--test LIST] [--json]
 *   hoist-bench --test floor          (no daemon needed)
 *   hoistrun -n 2 --nodes 2 build/bench/hoist-bench --no-floor --tsv ...
 *                                     (bench/run-nodes.sh: two daemons)
 *   hoistrun -n 2 build/bench/hoist-bench --test bw --bw-sizes 4k,64k,1m,4m
 *                                     (bandwidth against message size)
 *
 * Rank 0 first measures the machine's floor (a cache-line ping-pong between
 * two forked processes) before attaching, so every latency row can be read
 * as a multiple of what one shared-memory round trip costs on this machine
 * in this very run. Each measurement runs --reps times after a warm-up; a
 * row prints the median, min and max of the reps. Only rank 0 prints.
 * Data moved by the timed loops is read back and checked, so a benchmark
 * that silently moved nothing fails instead of looking fast.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hoist.h"
#include "bench.h"

#define MAX_REPS 101
#define MAX_ROWS 48

/* Targets (see README.md). */
#define TARGET_PUT_MOPS  20.0 /* 8 B put injection, M ops/s per PE */
#define TARGET_GET_RATIO 2.2  /* blocking get latency / floor round trip */

enum {
	T_FLOOR = 1 << 0,
	T_PUT = 1 << 1,
	T_GET = 1 << 2,
	T_BW = 1 << 3,
	T_MSGRATE = 1 << 4,
	T_BARRIER = 1 << 5,
	T_ALL = (1 << 6) - 1,
	T_LAT = 1 << 6, /* not in "all": run-rxe.sh asks for it */
};

static const struct bench_test_name test_names[] = {
	{"floor", T_FLOOR}, {"put", T_PUT},	    {"get", T_GET},	  {"bw", T_BW},
	{"msgrate", T_MSGRATE}, {"barrier", T_BARRIER}, {"all", T_ALL}, {"lat", T_LAT},
};

struct opts {
	int reps;
	int tests;
	int json;
	int header;
	int footer;
	int pin_floor;
	int no_floor; /* skip the floor (run-nodes.sh compares with TCP instead) */
	int tsv;      /* one line per row with every rep's value */
	int peer;     /* the PE rank 0 puts to and gets from */
	double scale;
	size_t bw_sizes[BENCH_MAX_SIZES]; /* --bw-sizes: the bw test's message sizes */
	int n_bw_sizes;
};

enum ratio_ref { REF_NONE, REF_RT, REF_MEMCPY };
enum target_kind { TGT_NONE, TGT_MIN_VALUE, TGT_MAX_VALUE, TGT_MAX_RATIO };

struct row {
	char name[64];
	const char *unit;
	double v[MAX_REPS]; /* every rep, in order */
	int n;
	double med, min, max;
	enum ratio_ref ref;
	double ratio;      /* median / median of the reference, NAN if none */
	double ratio_best; /* best rep / best rep of the reference */
	enum target_kind tgt;
	double target;
};

static struct opts opt = {.reps = 7, .tests = T_ALL, .header = 1, .footer = 1, .pin_floor = 1, .peer = 1,
			  .scale = 1.0, .bw_sizes = {64u << 10, 1u << 20}, .n_bw_sizes = 2};
static struct row rows[MAX_ROWS];
static int nrows;
static int me = -1, npes = 0;
static double floor_rt_med = NAN, floor_rt_min = NAN; /* ns */
static double memcpy_gbps[2] = {NAN, NAN}, memcpy_best[2] = {NAN, NAN}; /* 64 KiB, 1 MiB */
static char floor_cpus[32] = "";

/* ---- helpers ---------------------------------------------------------- */

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "hoist-bench[%d]: ", me);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

#define CHECK(call)                                                                   \
	do {                                                                          \
		int rc_ = (call);                                                     \
		if (rc_ < 0)                                                          \
			die("%s:%d: %s: %s", __FILE__, __LINE__, #call, hoist_strerror(rc_)); \
	} while (0)

static long scaled(long n)
{
	long v = (long)((double)n * opt.scale);
	return v < 1 ? 1 : v;
}

static void add_row(const char *name, const char *unit, const double *v, int n, enum ratio_ref ref,
		    enum target_kind tgt, double target)
{
	if (nrows == MAX_ROWS)
		die("too many rows");
	struct row *r = &rows[nrows++];
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->unit = unit;
	memcpy(r->v, v, sizeof(double) * (size_t)n);
	r->n = n;
	bench_stats(v, n, &r->med, &r->min, &r->max);
	r->ref = ref;
	r->ratio = r->ratio_best = NAN;
	if (ref == REF_RT && floor_rt_med > 0) {
		/* Latency rows are in ns or us; compare in ns. */
		double k = strcmp(unit, "us") == 0 ? 1e3 : 1;
		r->ratio = r->med * k / floor_rt_med;
		r->ratio_best = r->min * k / floor_rt_min;
	} else if (ref == REF_MEMCPY) {
		/* the caller passes REF_MEMCPY for the 64 KiB and 1 MiB rows only */
		int i = strstr(name, " 64 KiB") ? 0 : 1;
		if (memcpy_gbps[i] > 0) {
			r->ratio = r->med / memcpy_gbps[i];
			r->ratio_best = r->max / memcpy_best[i];
		}
	}
	r->tgt = tgt;
	r->target = target;
}

static const char *row_status(const struct row *r)
{
	switch (r->tgt) {
	case TGT_MIN_VALUE:
		return r->med >= r->target ? "PASS" : "MISS";
	case TGT_MAX_VALUE:
		return r->med <= r->target ? "PASS" : "MISS";
	case TGT_MAX_RATIO:
		if (isnan(r->ratio))
			return "n/a";
		return r->ratio <= r->target ? "PASS" : "MISS";
	default:
		return "-";
	}
}

static void row_target_text(const struct row *r, char *buf, size_t len)
{
	switch (r->tgt) {
	case TGT_MIN_VALUE:
		snprintf(buf, len, ">= %g", r->target);
		break;
	case TGT_MAX_VALUE:
		snprintf(buf, len, "<= %g", r->target);
		break;
	case TGT_MAX_RATIO:
		snprintf(buf, len, "<= %gx RT", r->target);
		break;
	default:
		snprintf(buf, len, "-");
	}
}

static void row_ratio_text(double ratio, enum ratio_ref ref, char *buf, size_t len)
{
	if (isnan(ratio))
		snprintf(buf, len, "-");
	else if (ref == REF_RT)
		snprintf(buf, len, "%.2fx RT", ratio);
	else
		snprintf(buf, len, "%.2fx cpy", ratio);
}

static void json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else
		fprintf(f, "%.6g", v);
}

static void print_results(int argc, char **argv)
{
	if (floor_rt_min > 0 && floor_rt_med / floor_rt_min > 1.25)
		fprintf(stderr,
			"hoist-bench: warning: the floor's median rep is %.2fx its best rep: other processes "
			"disturbed this run; prefer the best-ratio column or run again\n",
			floor_rt_med / floor_rt_min);
	if (opt.tsv) {
		/* row<TAB>name<TAB>unit<TAB>rep values (space separated), as
		 * tcp-raw --tsv; run-nodes.sh pools the reps of several runs */
		for (int i = 0; i < nrows; i++)
			bench_tsv_row(rows[i].name, rows[i].unit, rows[i].v, rows[i].n);
		fflush(stdout);
		return;
	}
	if (opt.json) {
		printf("{\"pes\":%d,\"reps\":%d,\"scale\":%g,\"floor_cpus\":\"%s\",\"floor_rt_ns\":", npes,
		       opt.reps, opt.scale, floor_cpus);
		json_num(stdout, floor_rt_med);
		printf(",\"floor_rt_best_ns\":");
		json_num(stdout, floor_rt_min);
		printf(",\"rows\":[");
		for (int i = 0; i < nrows; i++) {
			const struct row *r = &rows[i];
			char tt[32];
			row_target_text(r, tt, sizeof(tt));
			printf("%s\n {\"name\":\"%s\",\"unit\":\"%s\",\"median\":", i ? "," : "", r->name, r->unit);
			json_num(stdout, r->med);
			printf(",\"min\":");
			json_num(stdout, r->min);
			printf(",\"max\":");
			json_num(stdout, r->max);
			printf(",\"ratio\":");
			json_num(stdout, r->ratio);
			printf(",\"ratio_best\":");
			json_num(stdout, r->ratio_best);
			printf(",\"ratio_ref\":%s,\"target\":%s%s%s,\"status\":\"%s\"}",
			       r->ref == REF_RT ? "\"floor_rt\"" : r->ref == REF_MEMCPY ? "\"memcpy\"" : "null",
			       r->tgt == TGT_NONE ? "" : "\"", r->tgt == TGT_NONE ? "null" : tt,
			       r->tgt == TGT_NONE ? "" : "\"", row_status(r));
		}
		printf("\n]}\n");
		fflush(stdout);
		return;
	}
	if (opt.header) {
		bench_table_cols(NULL, NULL, 0, 0, 0);
		printf(" %11s %11s %13s %6s\n", "ratio", "best-ratio", "target", "status");
	}
	for (int i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		char rt[24], rb[24], tt[32];
		row_ratio_text(r->ratio, r->ref, rt, sizeof(rt));
		row_ratio_text(r->ratio_best, r->ref, rb, sizeof(rb));
		row_target_text(r, tt, sizeof(tt));
		bench_table_cols(r->name, r->unit, r->med, r->min, r->max);
		printf(" %11s %11s %13s %6s\n", rt, rb, tt, row_status(r));
	}
	if (opt.footer) {
		char prefix[32] = "";
		if (npes > 0)
			snprintf(prefix, sizeof(prefix), " hoistrun -n %d", npes);
		bench_reproduce(prefix, argc, argv);
	}
	fflush(stdout);
}

/* ---- floor -------------------------------------------------------------- */

static void run_floor(int add_rows)
{
	double rt[MAX_REPS], ow[MAX_REPS];
	struct floor_opts fo = {.mode = FLOOR_MODE_LINE,
				.iters = scaled(100000),
				.warmup = scaled(20000),
				.reps = opt.reps,
				.pin = opt.pin_floor};
	int rc = floor_pingpong(&fo, rt, floor_cpus, sizeof(floor_cpus));
	if (rc == -ENODEV || rc == -ETIMEDOUT) {
		/* No floor, no ratios; the hoist rows still run. */
		fprintf(stderr, "hoist-bench: no floor measured: %s\n",
			rc == -ENODEV ? "only one CPU allowed" : "took too long (machine too busy)");
		return;
	}
	if (rc < 0)
		die("floor ping-pong: %s", strerror(-rc));
	for (int i = 0; i < opt.reps; i++)
		ow[i] = rt[i] / 2;
	double s[MAX_REPS];
	memcpy(s, rt, sizeof(double) * (size_t)opt.reps);
	qsort(s, (size_t)opt.reps, sizeof(double), bench_cmp_double);
	floor_rt_med = bench_median_sorted(s, opt.reps);
	floor_rt_min = s[0];

	double ring[MAX_REPS];
	char cpus2[32];
	fo.mode = FLOOR_MODE_RING;
	int ring_rc = floor_pingpong(&fo, ring, cpus2, sizeof(cpus2));
	if (ring_rc < 0 && ring_rc != -ETIMEDOUT)
		die("floor ring ping-pong: %s", strerror(-ring_rc));

	double ring4k[MAX_REPS];
	fo.mode = FLOOR_MODE_RING_4K;
	fo.iters = scaled(20000);
	fo.warmup = scaled(4000);
	int ring4k_rc = ring_rc ? ring_rc : floor_pingpong(&fo, ring4k, cpus2, sizeof(cpus2));
	if (ring4k_rc < 0 && ring4k_rc != -ETIMEDOUT)
		die("floor ring 4 KiB ping-pong: %s", strerror(-ring4k_rc));

	double m64[MAX_REPS], m1m[MAX_REPS];
	if ((rc = floor_memcpy(64u << 10, opt.reps, m64)) < 0 || (rc = floor_memcpy(1u << 20, opt.reps, m1m)) < 0)
		die("floor memcpy: %s", strerror(-rc));
	qsort(m64, (size_t)opt.reps, sizeof(double), bench_cmp_double);
	qsort(m1m, (size_t)opt.reps, sizeof(double), bench_cmp_double);
	memcpy_gbps[0] = bench_median_sorted(m64, opt.reps);
	memcpy_gbps[1] = bench_median_sorted(m1m, opt.reps);
	memcpy_best[0] = m64[opt.reps - 1];
	memcpy_best[1] = m1m[opt.reps - 1];

	if (!add_rows)
		return;
	char name[64];
	snprintf(name, sizeof(name), "floor one-way handoff (%s)", floor_cpus);
	add_row(name, "ns", ow, opt.reps, REF_NONE, TGT_NONE, 0);
	snprintf(name, sizeof(name), "floor round trip = RT (%s)", floor_cpus);
	add_row(name, "ns", rt, opt.reps, REF_NONE, TGT_NONE, 0);
	/* How much the machine disturbed this run: a quiet machine gives the
	 * floor's median within a few percent of its best rep. */
	double noise[MAX_REPS];
	for (int i = 0; i < opt.reps; i++)
		noise[i] = rt[i] / floor_rt_min;
	add_row("floor spread (RT rep / best RT rep)", "x", noise, opt.reps, REF_NONE, TGT_NONE, 0);
	if (ring_rc == 0)
		add_row("floor ring RT (SQE+tail, CQE+tail)", "ns", ring, opt.reps, REF_RT, TGT_NONE, 0);
	if (ring4k_rc == 0)
		add_row("floor ring RT + 4 KiB copy in/out", "ns", ring4k, opt.reps, REF_RT, TGT_NONE, 0);
	add_row("floor memcpy 64 KiB (1 process)", "GB/s", m64, opt.reps, REF_NONE, TGT_NONE, 0);
	add_row("floor memcpy 1 MiB (1 process)", "GB/s", m1m, opt.reps, REF_NONE, TGT_NONE, 0);
}

/* ---- hoist measurements -------------------------------------------------- */

#define SMALL_SLOTS 8192u /* 8-byte slots in the small-put area (64 KiB) */
#define GET_BYTES   4096u
#define BW_BYTES    (1u << 20) /* at least; the largest --bw-sizes entry if larger */

static uint64_t *small_area; /* symmetric, SMALL_SLOTS * 8 bytes */
static unsigned char *get_area; /* symmetric, GET_BYTES: what gets read */
static unsigned char *get_dst;  /* symmetric, GET_BYTES: symmetric get target */
static unsigned char *bw_area;  /* symmetric, bw_bytes */
static unsigned char *bw_src;   /* private, bw_bytes */
static size_t bw_bytes = BW_BYTES;

static unsigned char pattern(int rank, size_t i)
{
	return (unsigned char)(i * 131u + (unsigned)rank * 71u + 7u);
}

static int peer = 1; /* opt.peer, checked against npes */

/* Reads one uint64 from pe's symmetric address and compares. */
static void verify_remote_u64(int pe, const void *sym, uint64_t want, const char *what)
{
	uint64_t got = ~want;
	CHECK(hoist_get(&got, pe, sym, sizeof(got)));
	if (got != want)
		die("%s: PE %d holds %llu, expected %llu", what, pe, (unsigned long long)got,
		    (unsigned long long)want);
}

/* 8-byte puts, rank 0 -> peer: the client-side cost of one put (timed loop,
 * quiet outside) and the rate including the final quiet. */
static void bench_put(void)
{
	long n = scaled(200000);
	double ns[MAX_REPS], mops[MAX_REPS], mops_q[MAX_REPS];
	for (int rep = -1; rep < opt.reps; rep++) { /* rep -1: warm-up */
		CHECK(hoist_barrier());
		if (me == 0) {
			long iters = rep < 0 ? n / 4 + 1 : n;
			uint64_t t0 = bench_now_ns();
			for (long i = 0; i < iters; i++) {
				uint64_t v = (uint64_t)i;
				CHECK(hoist_put(peer, &small_area[(uint64_t)i & (SMALL_SLOTS - 1)], &v, sizeof(v)));
			}
			uint64_t t1 = bench_now_ns();
			CHECK(hoist_quiet());
			uint64_t t2 = bench_now_ns();
			if (rep >= 0) {
				ns[rep] = (double)(t1 - t0) / (double)iters;
				mops[rep] = (double)iters * 1e3 / (double)(t1 - t0);
				mops_q[rep] = (double)iters * 1e3 / (double)(t2 - t0);
			}
			uint64_t last = (uint64_t)(iters - 1);
			verify_remote_u64(peer, &small_area[last & (SMALL_SLOTS - 1)], last, "put 8 B");
		}
	}
	/* Bursts that fit the submission ring (no back-pressure from the
	 * daemon): the client's own cost per put. Quiet between bursts. */
	double burst_ns[MAX_REPS];
	const long burst = 256, nburst = scaled(400);
	for (int rep = -1; rep < opt.reps; rep++) {
		CHECK(hoist_barrier());
		if (me != 0)
			continue;
		uint64_t sum = 0;
		for (long b = 0; b < nburst; b++) {
			uint64_t t0 = bench_now_ns();
			for (long i = 0; i < burst; i++) {
				uint64_t v = (uint64_t)i;
				CHECK(hoist_put(peer, &small_area[(uint64_t)i & (SMALL_SLOTS - 1)], &v, sizeof(v)));
			}
			sum += bench_now_ns() - t0;
			CHECK(hoist_quiet());
		}
		if (rep >= 0)
			burst_ns[rep] = (double)sum / (double)(burst * nburst);
	}
	CHECK(hoist_barrier());
	if (me == 0) {
		add_row("put 8 B injection (per call)", "ns/op", ns, opt.reps, REF_RT, TGT_NONE, 0);
		add_row("put 8 B, bursts of 256 (per call)", "ns/op", burst_ns, opt.reps, REF_RT, TGT_NONE, 0);
		add_row("put 8 B injection rate", "Mops/s", mops, opt.reps, REF_NONE, TGT_MIN_VALUE, TARGET_PUT_MOPS);
		add_row("put 8 B rate incl. quiet", "Mops/s", mops_q, opt.reps, REF_NONE, TGT_NONE, 0);
	}
}

/* Blocking gets from the peer (--peer, default rank 1), 8 B and 4 KiB,
 * into a private buffer (the library stages the data and copies it out)
 * and, for comparison, into a symmetric buffer (the daemon writes it in
 * place). */
static void bench_get(void)
{
	static const struct {
		size_t len;
		int sym;
		const char *name;
	} cases[4] = {
		{8, 0, "get 8 B latency (blocking)"},
		{GET_BYTES, 0, "get 4 KiB latency (blocking)"},
		{8, 1, "get 8 B latency (symmetric dst)"},
		{GET_BYTES, 1, "get 4 KiB latency (symmetric dst)"},
	};
	static unsigned char priv[GET_BYTES] __attribute__((aligned(64)));
	for (size_t j = 0; j < GET_BYTES; j++)
		get_area[j] = pattern(me, j);
	for (int k = 0; k < 4; k++) {
		size_t len = cases[k].len;
		unsigned char *dst = cases[k].sym ? get_dst : priv;
		long n = scaled(len <= 64 ? 20000 : 10000);
		double ns[MAX_REPS];
		for (int rep = -1; rep < opt.reps; rep++) {
			CHECK(hoist_barrier());
			if (me != 0)
				continue;
			long iters = rep < 0 ? n / 4 + 1 : n;
			memset(dst, 0, len);
			uint64_t t0 = bench_now_ns();
			for (long i = 0; i < iters; i++)
				CHECK(hoist_get(dst, peer, get_area, len));
			uint64_t t1 = bench_now_ns();
			if (rep >= 0)
				ns[rep] = (double)(t1 - t0) / (double)iters;
			for (size_t j = 0; j < len; j++)
				if (dst[j] != pattern(peer, j))
					die("%s: byte %zu is %u, expected %u", cases[k].name, j, dst[j],
					    pattern(peer, j));
		}
		CHECK(hoist_barrier());
		if (me == 0)
			add_row(cases[k].name, "ns", ns, opt.reps, REF_RT, cases[k].sym ? TGT_NONE : TGT_MAX_RATIO,
				TARGET_GET_RATIO);
	}
}

/* Completed-put latency to the peer: one blocking put plus a quiet per
 * iteration (the put has landed at the target when quiet returns), 8 B and
 * 4 KiB from a private buffer. A full round trip, like a get. */
static void bench_lat(void)
{
	static const size_t lens[2] = {8, GET_BYTES};
	static unsigned char priv[GET_BYTES] __attribute__((aligned(64)));
	for (int k = 0; k < 2; k++) {
		size_t len = lens[k];
		long n = scaled(len <= 64 ? 20000 : 10000);
		double ns[MAX_REPS];
		for (int rep = -1; rep < opt.reps; rep++) {
			CHECK(hoist_barrier());
			if (me != 0)
				continue;
			long iters = rep < 0 ? n / 4 + 1 : n;
			uint64_t t0 = bench_now_ns();
			for (long i = 0; i < iters; i++) {
				memcpy(priv, &i, sizeof(i));
				CHECK(hoist_put(peer, get_dst, priv, len));
				CHECK(hoist_quiet());
			}
			uint64_t t1 = bench_now_ns();
			if (rep >= 0)
				ns[rep] = (double)(t1 - t0) / (double)iters;
			verify_remote_u64(peer, get_dst, (uint64_t)(iters - 1), "put latency");
		}
		CHECK(hoist_barrier());
		if (me == 0)
			add_row(len == 8 ? "put 8 B latency (put+quiet)" : "put 4 KiB latency (put+quiet)", "ns",
				ns, opt.reps, REF_RT, TGT_NONE, 0);
	}
}

/* Put bandwidth rank 0 -> peer from a private source: puts + quiet, one
 * row per --bw-sizes entry (default 64 KiB and 1 MiB). */
static void bench_bw(void)
{
	for (int k = 0; k < opt.n_bw_sizes; k++) {
		size_t len = opt.bw_sizes[k];
		size_t slots = bw_bytes / len;
		long n = scaled((long)((64u << 20) / len)); /* 64 MiB per rep */
		double gbps[MAX_REPS];
		for (int rep = -1; rep < opt.reps; rep++) {
			CHECK(hoist_barrier());
			if (me != 0)
				continue;
			long iters = rep < 0 ? n / 4 + 1 : n;
			uint64_t t0 = bench_now_ns();
			for (long i = 0; i < iters; i++) {
				/* Stamp: the source is reusable once hoist_put returned. */
				uint64_t stamp = (uint64_t)i;
				memcpy(bw_src, &stamp, sizeof(stamp));
				CHECK(hoist_put(peer, bw_area + ((size_t)i % slots) * len, bw_src, len));
			}
			CHECK(hoist_quiet());
			uint64_t t1 = bench_now_ns();
			if (rep >= 0)
				gbps[rep] = (double)len * (double)iters / (double)(t1 - t0);
			uint64_t last = (uint64_t)(iters - 1);
			unsigned char *slot = bw_area + (last % slots) * len;
			verify_remote_u64(peer, slot, last, "put bw stamp");
			uint64_t tail;
			memcpy(&tail, bw_src + len - 8, 8);
			verify_remote_u64(peer, slot + len - 8, tail, "put bw tail");
		}
		CHECK(hoist_barrier());
		if (me == 0) {
			char sz[24], name[64];
			bench_size_name(len, sz, sizeof(sz));
			snprintf(name, sizeof(name), "put bandwidth %s (+quiet)", sz);
			/* the floor measures memcpy of these two sizes only */
			int cpy = len == (64u << 10) || len == (1u << 20);
			add_row(name, "GB/s", gbps, opt.reps, cpy ? REF_MEMCPY : REF_NONE, TGT_NONE, 0);
		}
	}
}

/* Both PEs of each pair (0<->1, 2<->3, ...) put 8 B to each other at the
 * same time; the time runs from a barrier to the barrier after the quiet. */
static void bench_msgrate(void)
{
	long n = scaled(200000);
	int partner = me ^ 1;
	int active = partner < npes;
	int senders = npes & ~1;
	double agg[MAX_REPS], per[MAX_REPS];
	for (int rep = -1; rep < opt.reps; rep++) {
		long iters = rep < 0 ? n / 4 + 1 : n;
		CHECK(hoist_barrier());
		uint64_t t0 = bench_now_ns();
		if (active) {
			for (long i = 0; i < iters; i++) {
				uint64_t v = (uint64_t)i + 1000000000ull * (uint64_t)(me + 1);
				CHECK(hoist_put(partner, &small_area[(uint64_t)i & (SMALL_SLOTS - 1)], &v, sizeof(v)));
			}
			CHECK(hoist_quiet());
		}
		CHECK(hoist_barrier());
		uint64_t t1 = bench_now_ns();
		if (rep >= 0) {
			agg[rep] = (double)iters * senders * 1e3 / (double)(t1 - t0);
			per[rep] = (double)iters * 1e3 / (double)(t1 - t0);
		}
		if (active) {
			/* The partner wrote our area; the barrier ordered it before us. */
			uint64_t last = (uint64_t)(iters - 1);
			uint64_t want = last + 1000000000ull * (uint64_t)(partner + 1);
			if (small_area[last & (SMALL_SLOTS - 1)] != want)
				die("msgrate: slot holds %llu, expected %llu",
				    (unsigned long long)small_area[last & (SMALL_SLOTS - 1)], (unsigned long long)want);
		}
	}
	if (me == 0) {
		char name[64];
		snprintf(name, sizeof(name), "put 8 B msg rate, %d PEs concurrent", senders);
		add_row(name, "Mmsg/s", agg, opt.reps, REF_NONE, TGT_NONE, 0);
		add_row("  same, per PE", "Mmsg/s", per, opt.reps, REF_NONE, TGT_NONE, 0);
	}
}

static void bench_barrier(void)
{
	long n = scaled(5000);
	double us[MAX_REPS];
	for (long i = 0; i < n / 4 + 1; i++)
		CHECK(hoist_barrier());
	for (int rep = 0; rep < opt.reps; rep++) {
		CHECK(hoist_barrier());
		uint64_t t0 = bench_now_ns();
		for (long i = 0; i < n; i++)
			CHECK(hoist_barrier());
		uint64_t t1 = bench_now_ns();
		us[rep] = (double)(t1 - t0) / (double)n / 1e3;
	}
	if (me == 0) {
		char name[64];
		snprintf(name, sizeof(name), "barrier, %d PEs", npes);
		add_row(name, "us", us, opt.reps, REF_RT, TGT_NONE, 0);
	}
}

/* ---- main ------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hoistrun -n 2 hoist-bench [options]\n"
		"       hoist-bench --test floor   (standalone, no daemon)\n"
		"  --reps N      repetitions of every measurement (default 7, max %d)\n"
		"  --test LIST   comma list of floor,put,get,bw,msgrate,barrier,all,lat (default all;\n"
		"                lat = put+quiet latency, not in all)\n"
		"  --json        machine-readable output\n"
		"  --scale F     multiply every iteration count by F (default 1)\n"
		"  --no-pin      do not pin the floor's two processes to two CPUs\n"
		"  --no-floor    do not measure the floor (no x RT / x cpy ratios)\n"
		"  --peer P      the PE that rank 0 puts to and gets from (default 1)\n"
		"  --bw-sizes L  message sizes of the bw test, comma list with k/m suffixes\n"
		"                (default 64k,1m; e.g. 4k,16k,64k,256k,1m,4m; 8 B..64 MiB, at most %d)\n"
		"  --tsv         one line per row: row, name, unit, every rep's value\n"
		"  --no-header   table without its header line\n"
		"  --no-footer   table without the reproduce line\n",
		MAX_REPS, BENCH_MAX_SIZES);
}

static int parse_tests(const char *s)
{
	return bench_parse_tests(s, test_names, sizeof(test_names) / sizeof(test_names[0]));
}

static void parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--reps") && v) {
			opt.reps = atoi(v);
			i++;
			if (opt.reps < 1 || opt.reps > MAX_REPS)
				die("--reps must be 1..%d", MAX_REPS);
		} else if (!strcmp(a, "--test") && v) {
			opt.tests = parse_tests(v);
			i++;
			if (opt.tests < 0)
				die("--test: unknown test in '%s'", v);
		} else if (!strcmp(a, "--scale") && v) {
			opt.scale = atof(v);
			i++;
			if (!(opt.scale > 0 && opt.scale <= 100))
				die("--scale must be in (0, 100]");
		} else if (!strcmp(a, "--json")) {
			opt.json = 1;
		} else if (!strcmp(a, "--peer") && v) {
			opt.peer = atoi(v);
			i++;
			if (opt.peer < 1)
				die("--peer must be a rank other than 0");
		} else if (!strcmp(a, "--bw-sizes") && v) {
			opt.n_bw_sizes = bench_parse_sizes(v, opt.bw_sizes, BENCH_MAX_SIZES);
			i++;
			if (opt.n_bw_sizes < 0)
				die("--bw-sizes: '%s' is not a comma list of 1..%d sizes in 8 B..64 MiB (e.g. 4k,64k,1m)",
				    v, BENCH_MAX_SIZES);
		} else if (!strcmp(a, "--no-floor")) {
			opt.no_floor = 1;
		} else if (!strcmp(a, "--tsv")) {
			opt.tsv = 1;
		} else if (!strcmp(a, "--no-pin")) {
			opt.pin_floor = 0;
		} else if (!strcmp(a, "--no-header")) {
			opt.header = 0;
		} else if (!strcmp(a, "--no-footer")) {
			opt.footer = 0;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else {
			usage(stderr);
			exit(2);
		}
	}
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);

	/* Floor only: no daemon, no job. */
	if (opt.tests == T_FLOOR) {
		me = 0;
		run_floor(1);
		print_results(argc, argv);
		return 0;
	}

	/* Rank 0 measures the floor before attaching (the other ranks wait in
	 * hoist_init, asleep), so no hoist state is inherited by the fork and
	 * nothing of hoist runs while the floor is timed. The rank is read
	 * the way hoist_init() reads it (first variable found wins). */
	static const char *const rank_vars[] = {"HOIST_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
						"SLURM_PROCID"};
	int env_rank = 0;
	for (size_t i = 0; i < sizeof(rank_vars) / sizeof(rank_vars[0]); i++) {
		const char *r = getenv(rank_vars[i]);
		if (r) {
			env_rank = atoi(r);
			break;
		}
	}
	if (env_rank == 0 && !opt.no_floor)
		run_floor(opt.tests & T_FLOOR);

	int rc = hoist_init();
	if (rc < 0)
		die("hoist_init: %s", hoist_strerror(rc));
	me = hoist_rank();
	npes = hoist_size();
	if ((opt.tests & (T_PUT | T_GET | T_BW | T_MSGRATE | T_LAT)) && npes < 2)
		die("these tests need at least 2 PEs (hoistrun -n 2)");
	peer = opt.peer;
	if ((opt.tests & (T_PUT | T_GET | T_BW | T_LAT)) && peer >= npes)
		die("--peer %d: the job has %d PEs", peer, npes);

	small_area = hoist_malloc(SMALL_SLOTS * sizeof(uint64_t));
	get_area = hoist_malloc(GET_BYTES);
	get_dst = hoist_malloc(GET_BYTES);
	for (int k = 0; k < opt.n_bw_sizes; k++)
		if (opt.bw_sizes[k] > bw_bytes)
			bw_bytes = opt.bw_sizes[k];
	/* every rank allocates the same symmetric size, from the same options */
	bw_area = hoist_malloc(bw_bytes);
	bw_src = aligned_alloc(64, (bw_bytes + 63) & ~(size_t)63);
	if (!small_area || !get_area || !get_dst || !bw_area || !bw_src)
		die("out of memory (symmetric heap or private)");
	for (size_t i = 0; i < bw_bytes; i++)
		bw_src[i] = pattern(me, i);

	if (opt.tests & T_PUT)
		bench_put();
	if (opt.tests & T_LAT)
		bench_lat();
	if (opt.tests & T_GET)
		bench_get();
	if (opt.tests & T_BW)
		bench_bw();
	if (opt.tests & T_MSGRATE)
		bench_msgrate();
	if (opt.tests & T_BARRIER)
		bench_barrier();

	hoist_free(bw_area);
	hoist_free(get_dst);
	hoist_free(get_area);
	hoist_free(small_area);
	free(bw_src);
	CHECK(hoist_finalize());
	if (me == 0)
		print_results(argc, argv);
	return 0;
}
