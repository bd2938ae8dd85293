/*
 * shmem-amo: bench/amo_bench.c's measurements with Open MPI's OpenSHMEM,
 * its reference in bench/run-amo.sh, which builds and runs it:
 *   oshcc -O2 -Ibench bench/shmem_amo.c -o shmem-amo
 *   oshrun --allow-run-as-root --oversubscribe --mca osc ^rdma -np 2 ./shmem-amo
 *   (across "nodes": -x UCX_TLS=tcp,self, the peer over loopback TCP)
 * PE 0 against PE 1, same tests, sizing, checks and output lines as
 * amo-bench ("row NAME UNIT VALUE"):
 *   fadd   shmem_long_atomic_fetch_add(w, 1, 1), ns per operation
 *   cswap  shmem_long_atomic_compare_swap(w, cur, cur + 1, 1), ns
 *   add    N shmem_long_atomic_add(w, 1, 1), then shmem_quiet, Mops/s
 *   get    shmem_long_g(w, 1), ns per operation (context)
 *   wake   ping-pong of shmem_long_p, each side in shmem_long_wait_until
 *          (SHMEM_CMP_EQ) on its own word; half the round trip, ns
 * PE 1 meanwhile waits in shmem_long_wait_until on a control word, which
 * drives UCX's progress (the best case for a transport whose target
 * must progress for remote atomics: UCX over tcp).
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { T_FADD = 1, T_CSWAP = 2, T_ADD = 4, T_WAKE = 8, T_GET = 16, T_ALL = 31 };
enum { CTL_WAKE = 1, CTL_END = 2 }; /* the control word: seq * 16 + kind */
#define WAKE_STOP (-1L)

/* symmetric (static data), each on its own cache line */
#define LINE __attribute__((aligned(BENCH_CACHELINE)))
static long w_fadd LINE, w_cswap LINE, w_add LINE, w_get LINE, w_ctl LINE, w_ping LINE, w_pong LINE;
static int smoke;
static double time_ms = 300;

static void die(const char *what)
{
	fprintf(stderr, "shmem-amo: %s\n", what);
	shmem_global_exit(1);
	exit(1);
}

static long sized(double est, long lo, long hi)
{
	return bench_sized(est, lo, hi, time_ms, smoke);
}

static double run_fadd(long *expect, long n)
{
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		if (shmem_long_atomic_fetch_add(&w_fadd, 1, 1) != (*expect)++)
			die("fetch-add returned a wrong value");
	return (double)(bench_now_ns() - t0) / (double)n;
}

static double run_get(long n)
{
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		if (shmem_long_g(&w_get, 1) != 0x600d)
			die("get returned a wrong value");
	return (double)(bench_now_ns() - t0) / (double)n;
}

static double run_cswap(long *cur, long n)
{
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		if (shmem_long_atomic_compare_swap(&w_cswap, *cur, *cur + 1, 1) != *cur)
			die("compare-and-swap did not match");
		++*cur;
	}
	return (double)(bench_now_ns() - t0) / (double)n;
}

static double run_add(long *total, long n)
{
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		shmem_long_atomic_add(&w_add, 1, 1);
	shmem_quiet();
	double ns = (double)(bench_now_ns() - t0);
	*total += n;
	if (shmem_long_atomic_fetch(&w_add, 1) != *total)
		die("wrong total after the adds");
	return (double)n * 1e3 / ns;
}

static double run_wake(long *seq, long n)
{
	uint64_t t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		long v = ++*seq;
		shmem_long_p(&w_ping, v, 1);
		shmem_long_wait_until(&w_pong, SHMEM_CMP_EQ, v);
	}
	return (double)(bench_now_ns() - t0) / (double)n / 2;
}

static void wake_server(void)
{
	static long last;
	for (;;) {
		shmem_long_wait_until(&w_ping, SHMEM_CMP_NE, last);
		long v = shmem_long_atomic_fetch(&w_ping, shmem_my_pe());
		if (v == WAKE_STOP) {
			last = v;
			return;
		}
		if (v != last + 1)
			die("ping out of sequence");
		last = v;
		shmem_long_p(&w_pong, v, 0);
	}
}

static void ctl(long *seq, long kind)
{
	shmem_long_p(&w_ctl, ++*seq * 16 + kind, 1);
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
				{"fadd", T_FADD}, {"cswap", T_CSWAP}, {"add", T_ADD}, {"wake", T_WAKE}, {"get", T_GET},
			};
			tests = bench_parse_tests(argv[++i], names, sizeof(names) / sizeof(names[0]));
			if (tests < 0) {
				fprintf(stderr, "shmem-amo: unknown test in '%s'\n", argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr, "usage: shmem-amo [--test fadd,cswap,add,get,wake] [--time-ms T] "
					"[--smoke]\n");
			return 2;
		}
	}
	shmem_init();
	if (shmem_n_pes() != 2)
		die("needs 2 PEs");
	w_get = 0x600d;
	shmem_barrier_all();
	if (shmem_my_pe() == 1) {
		long seen = 0;
		for (;;) {
			shmem_long_wait_until(&w_ctl, SHMEM_CMP_NE, seen);
			seen = shmem_long_atomic_fetch(&w_ctl, 1);
			if (seen % 16 == CTL_WAKE)
				wake_server();
			else if (seen % 16 == CTL_END)
				break;
		}
	} else {
		long seq = 0, wseq = 0, fadd_next = 0, cswap_cur = 0, add_total = 0;
		if (tests & T_FADD) {
			double est = run_fadd(&fadd_next, smoke ? 10 : 200);
			double v = run_fadd(&fadd_next, sized(est, 100, 5000000));
			if (shmem_long_atomic_fetch(&w_fadd, 1) != fadd_next)
				die("fetch-add total");
			printf("row fadd ns %.1f\n", v);
		}
		if (tests & T_CSWAP) {
			double est = run_cswap(&cswap_cur, smoke ? 10 : 200);
			double v = run_cswap(&cswap_cur, sized(est, 100, 5000000));
			if (shmem_long_atomic_fetch(&w_cswap, 1) != cswap_cur)
				die("compare-and-swap total");
			printf("row cswap ns %.1f\n", v);
		}
		if (tests & T_ADD) {
			double est = run_add(&add_total, smoke ? 100 : 2000);
			double v = run_add(&add_total, sized(1e3 / est, 1000, 20000000));
			printf("row add Mops/s %.4f\n", v);
		}
		if (tests & T_GET) {
			double est = run_get(smoke ? 10 : 200);
			printf("row get ns %.1f\n", run_get(sized(est, 100, 5000000)));
		}
		if (tests & T_WAKE) {
			ctl(&seq, CTL_WAKE);
			double est = run_wake(&wseq, smoke ? 10 : 100);
			double v = run_wake(&wseq, sized(2 * est, 100, 2000000));
			shmem_long_p(&w_ping, WAKE_STOP, 1);
			printf("row wake ns %.1f\n", v);
		}
		fflush(stdout);
		ctl(&seq, CTL_END);
	}
	shmem_barrier_all();
	shmem_finalize();
	return 0;
}
