/*
 * amo-bench: remote atomics and point-to-point wake-up through hoist, PE 0
 * against PE 1. The reference is bench/shmem_amo.c (the same measurements
 * with Open MPI's OpenSHMEM); bench/run-amo.sh runs both side by side.
 *
 *   hoistrun -n 2 [--nodes 2] amo-bench [--test LIST] [--time-ms T] [--smoke]
 *
 * Tests (LIST: a comma list of these, default all; each prints one value
 * per run, run-amo.sh repeats runs and takes median and spread):
 *   fadd   fetch-add latency: blocking hoist_atomic FETCH_ADD of 1 on a
 *          HOIST_INT64 word of PE 1, ns per operation
 *   cswap  compare-and-swap latency: hoist_atomic CSWAP that always
 *          succeeds (cmp is the word's value), ns per operation
 *   add    non-fetching add rate: N hoist_atomic_nbi ADD of 1, then one
 *          hoist_quiet, million operations per second
 *   get    for context: 8-byte hoist_get latency (a plain round trip
 *          through the same path), ns per operation
 *   putq   8-byte hoist_put to PE 1 followed by hoist_quiet (the put's
 *          remote completion: one round trip), ns per put+quiet
 *   wake   wait-until wake-up latency for a remote put: ping-pong of 8-byte
 *          hoist_put, each side sleeping in hoist_wait_until (EQ) on its own
 *          word until the other's put lands; half the round trip, ns
 *   flag   writes elsewhere while the target waits: PE 1 waits in
 *          hoist_wait_until on a flag of its heap while PE 0 puts 8 B and
 *          atomically adds (nbi), FLAG_K of them alternating, into other
 *          words of PE 1's heap, then puts the flag; PE 1 answers with a
 *          put (as wake). ns per round (FLAG_K writes + flag + answer).
 *          A waiter woken by writes that do not touch its flag pays a
 *          wake-up and a context switch per write (bench/run-wakecover.sh)
 * Each measurement is warmed up and sized from the warm-up to take about
 * --time-ms (default 300). Meanwhile PE 1 waits in hoist_wait_until on a
 * control word of its heap (spin, then sleep: the daemon does the work).
 * Every result is checked: the values fetch-add returned are consecutive,
 * every compare-and-swap matched, the word holds the exact total after the
 * adds, every wake-up saw the exact value; a wrong one exits 1.
 * --smoke: a few fixed iterations, no calibration (ctest amo_bench_smoke
 * and mn_amo_bench_smoke: results, not speed).
 * Output (PE 0): "row NAME UNIT VALUE" per test.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "hoist.h"

enum { T_FADD = 1, T_CSWAP = 2, T_ADD = 4, T_WAKE = 8, T_GET = 16, T_PUTQ = 32, T_FLAG = 64, T_ALL = 127 };
#define FLAG_K 64
enum { CTL_WAKE = 1, CTL_END = 2 }; /* the control word: seq * 16 + kind */
#define WAKE_STOP UINT64_MAX

/* symmetric; each word on its own cache line (PE 1 spins on ctl and ping) */
#define LINE _Alignas(BENCH_CACHELINE)
struct words {
	LINE int64_t fadd;
	LINE int64_t cswap;
	LINE int64_t add;
	LINE int64_t get;
	LINE int64_t putq;
	LINE uint64_t ctl;  /* PE 0 -> PE 1: what to do */
	LINE uint64_t ping; /* PE 0 -> PE 1 (wake) */
	LINE uint64_t pong; /* PE 1 -> PE 0 (wake) */
	LINE int64_t oput;  /* PE 0 -> PE 1 (flag): written, never waited on */
	LINE int64_t oadd;
};

static struct words *w;
static int smoke;
static double time_ms = 300;

static void die(const char *what, int rc)
{
	fprintf(stderr, "amo-bench: %s (%d)\n", what, rc);
	exit(1);
}

#define OK(call)                                                                                   \
	do {                                                                                       \
		int rc_ = (call);                                                                  \
		if (rc_)                                                                           \
			die(#call, rc_);                                                           \
	} while (0)

/* iterations for about time_ms, from est ns per op */
static long sized(double est, long lo, long hi)
{
	return bench_sized(est, lo, hi, time_ms, smoke);
}

static int64_t fetch(int64_t *word)
{
	int64_t v;
	OK(hoist_atomic(1, word, HOIST_AMO_FETCH, HOIST_INT64, NULL, NULL, &v));
	return v;
}

static double run_fadd(int64_t *expect, long n)
{
	int64_t one = 1, old;
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		OK(hoist_atomic(1, &w->fadd, HOIST_AMO_FETCH_ADD, HOIST_INT64, &one, NULL, &old));
		if (old != (*expect)++) {
			fprintf(stderr, "amo-bench: fetch-add returned %lld, want %lld\n",
				(long long)old, (long long)*expect - 1);
			exit(1);
		}
	}
	return (double)(bench_now_ns() - t0) / (double)n;
}

static double run_get(long n)
{
	int64_t v;
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		OK(hoist_get(&v, 1, &w->get, sizeof(v)));
		if (v != 0x600d)
			die("get returned a wrong value", (int)v);
	}
	return (double)(bench_now_ns() - t0) / (double)n;
}

/* n puts of 8 B, each followed by a quiet; the last value is checked */
static double run_putq(int64_t *val, long n)
{
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		int64_t v = ++*val;
		OK(hoist_put(1, &w->putq, &v, sizeof(v)));
		OK(hoist_quiet());
	}
	double ns = (double)(bench_now_ns() - t0) / (double)n;
	int64_t got;
	OK(hoist_get(&got, 1, &w->putq, sizeof(got)));
	if (got != *val) {
		fprintf(stderr, "amo-bench: put+quiet left %lld, want %lld\n", (long long)got,
			(long long)*val);
		exit(1);
	}
	return ns;
}

static double run_cswap(int64_t *cur, long n)
{
	int64_t old;
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		int64_t next = *cur + 1;
		OK(hoist_atomic(1, &w->cswap, HOIST_AMO_CSWAP, HOIST_INT64, &next, cur, &old));
		if (old != *cur) {
			fprintf(stderr, "amo-bench: compare-and-swap saw %lld, want %lld\n",
				(long long)old, (long long)*cur);
			exit(1);
		}
		*cur = next;
	}
	return (double)(bench_now_ns() - t0) / (double)n;
}

static double run_add(int64_t *total, long n)
{
	int64_t one = 1;
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		OK(hoist_atomic_nbi(1, &w->add, HOIST_AMO_ADD, HOIST_INT64, &one, NULL, NULL));
	OK(hoist_quiet());
	double ns = (double)(bench_now_ns() - t0);
	*total += n;
	int64_t v = fetch(&w->add);
	if (v != *total) {
		fprintf(stderr, "amo-bench: %lld after the adds, want %lld\n", (long long)v,
			(long long)*total);
		exit(1);
	}
	return (double)n * 1e3 / ns; /* Mops/s */
}

/* PE 0's side of the ping-pong: n round trips from *seq on */
static double run_wake(uint64_t *seq, long n)
{
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		uint64_t v = ++*seq;
		OK(hoist_put(1, &w->ping, &v, sizeof(v)));
		OK(hoist_wait_until(&w->pong, HOIST_UINT64, HOIST_CMP_EQ, v));
	}
	return (double)(bench_now_ns() - t0) / (double)n / 2;
}

/* PE 0's side of flag: n rounds of FLAG_K writes elsewhere, the flag
 * (ping), the answer (pong); *seq as in run_wake, *total the adds */
static double run_flag(uint64_t *seq, int64_t *total, long n)
{
	int64_t one = 1;
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		for (int k = 0; k < FLAG_K; k++) {
			if (k % 2) {
				OK(hoist_atomic_nbi(1, &w->oadd, HOIST_AMO_ADD, HOIST_INT64, &one, NULL,
						    NULL));
				++*total;
			} else {
				int64_t v = (int64_t)i * FLAG_K + k;
				OK(hoist_put(1, &w->oput, &v, sizeof(v)));
			}
		}
		uint64_t v = ++*seq;
		OK(hoist_put(1, &w->ping, &v, sizeof(v)));
		OK(hoist_wait_until(&w->pong, HOIST_UINT64, HOIST_CMP_EQ, v));
	}
	double ns = (double)(bench_now_ns() - t0) / (double)n;
	OK(hoist_quiet());
	int64_t got = fetch(&w->oadd);
	if (got != *total) {
		fprintf(stderr, "amo-bench: flag: %lld after the adds, want %lld\n", (long long)got,
			(long long)*total);
		exit(1);
	}
	return ns;
}

/* PE 1's side: echo every ping until WAKE_STOP */
static void wake_server(void)
{
	static uint64_t last;
	for (;;) {
		OK(hoist_wait_until(&w->ping, HOIST_UINT64, HOIST_CMP_NE, last));
		uint64_t v = __atomic_load_n(&w->ping, __ATOMIC_ACQUIRE);
		if (v == WAKE_STOP) {
			/* back to the last ping (wake and flag may both run),
			 * then the answer: PE 0 writes ping or ctl again only
			 * after it, so neither the stop nor a stale CTL_WAKE can
			 * be missed or taken twice */
			__atomic_store_n(&w->ping, last, __ATOMIC_RELEASE);
			OK(hoist_put(0, &w->pong, &v, sizeof(v)));
			return;
		}
		if (v != last + 1) {
			fprintf(stderr, "amo-bench: ping %llu after %llu\n", (unsigned long long)v,
				(unsigned long long)last);
			exit(1);
		}
		last = v;
		OK(hoist_put(0, &w->pong, &v, sizeof(v)));
	}
}

/* PE 0: end PE 1's wake_server, and wait until it has ended */
static void wake_stop(void)
{
	uint64_t stop = WAKE_STOP;
	OK(hoist_put(1, &w->ping, &stop, sizeof(stop)));
	OK(hoist_wait_until(&w->pong, HOIST_UINT64, HOIST_CMP_EQ, WAKE_STOP));
}

static void ctl(uint64_t *seq, uint64_t kind)
{
	uint64_t v = ++*seq * 16 + kind;
	OK(hoist_put(1, &w->ctl, &v, sizeof(v)));
}

int main(int argc, char **argv)
{
	int tests = T_ALL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--smoke")) {
			smoke = 1;
		} else if (!strcmp(argv[i], "--time-ms") && i + 1 < argc) {
			time_ms = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--test") && i + 1 < argc) {
			static const struct bench_test_name names[] = {
				{"fadd", T_FADD}, {"cswap", T_CSWAP}, {"add", T_ADD}, {"wake", T_WAKE},
				{"get", T_GET},	  {"putq", T_PUTQ},   {"flag", T_FLAG},
			};
			tests = bench_parse_tests(argv[++i], names, sizeof(names) / sizeof(names[0]));
			if (tests < 0)
				die("unknown test", 0);
		} else {
			fprintf(stderr, "usage: amo-bench [--test fadd,cswap,add,get,putq,wake,flag] [--time-ms T] "
					"[--smoke]\n");
			return 2;
		}
	}
	OK(hoist_init());
	if (hoist_size() != 2)
		die("needs 2 PEs", hoist_size());
	int me = hoist_rank();
	w = hoist_malloc(sizeof(*w));
	if (!w)
		die("hoist_malloc", 0);
	memset(w, 0, sizeof(*w));
	w->get = 0x600d;
	OK(hoist_barrier());

	if (me == 1) {
		uint64_t seen = 0;
		for (;;) {
			OK(hoist_wait_until(&w->ctl, HOIST_UINT64, HOIST_CMP_NE, seen));
			seen = __atomic_load_n(&w->ctl, __ATOMIC_ACQUIRE);
			if (seen % 16 == CTL_WAKE)
				wake_server();
			else if (seen % 16 == CTL_END)
				break;
		}
	} else {
		uint64_t seq = 0, wseq = 0;
		int64_t fadd_next = 0, cswap_cur = 0, add_total = 0, putq_val = 0;
		if (tests & T_FADD) {
			double est = run_fadd(&fadd_next, smoke ? 10 : 200);
			double v = run_fadd(&fadd_next, sized(est, 100, 5000000));
			if (fetch(&w->fadd) != fadd_next)
				die("fetch-add total", 0);
			printf("row fadd ns %.1f\n", v);
		}
		if (tests & T_CSWAP) {
			double est = run_cswap(&cswap_cur, smoke ? 10 : 200);
			double v = run_cswap(&cswap_cur, sized(est, 100, 5000000));
			if (fetch(&w->cswap) != cswap_cur)
				die("compare-and-swap total", 0);
			printf("row cswap ns %.1f\n", v);
		}
		if (tests & T_ADD) {
			double est = run_add(&add_total, smoke ? 100 : 2000); /* Mops/s */
			double v = run_add(&add_total, sized(1e3 / est, 1000, 20000000));
			printf("row add Mops/s %.4f\n", v);
		}
		if (tests & T_GET) {
			double est = run_get(smoke ? 10 : 200);
			printf("row get ns %.1f\n", run_get(sized(est, 100, 5000000)));
		}
		if (tests & T_PUTQ) {
			double est = run_putq(&putq_val, smoke ? 10 : 200);
			printf("row putq ns %.1f\n", run_putq(&putq_val, sized(est, 100, 5000000)));
		}
		if (tests & T_WAKE) {
			ctl(&seq, CTL_WAKE);
			double est = run_wake(&wseq, smoke ? 10 : 100);
			double v = run_wake(&wseq, sized(2 * est, 100, 2000000));
			wake_stop();
			printf("row wake ns %.1f\n", v);
		}
		if (tests & T_FLAG) {
			int64_t total = 0;
			ctl(&seq, CTL_WAKE);
			double est = run_flag(&wseq, &total, smoke ? 5 : 20);
			double v = run_flag(&wseq, &total, sized(est, 20, 200000));
			wake_stop();
			printf("row flag ns %.1f\n", v);
		}
		fflush(stdout);
		ctl(&seq, CTL_END);
	}
	OK(hoist_barrier());
	hoist_free(w);
	OK(hoist_finalize());
	return 0;
}
