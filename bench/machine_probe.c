/*
 * hoist-machine-probe: one line that says which mode the machine is in,
 * printed by the bench scripts next to the load average.
 *
 * The 2-vCPU machines these benchmarks run on change under us from hour to
 * hour without any change of load: on the same build the 2-PE 8 B broadcast
 * took 97-105 ns in one hour and 340-390 ns in the next, and a prefetch
 * sweep's first get 25 us in one and 165-1300 us in another (bench/README.md,
 * "The machine's mode"). Two numbers tell the modes apart, and both are
 * what hoist's latencies are made of:
 *
 *   line   the round trip of one cache line between two processes pinned to
 *          two CPUs (floor.c, FLOOR_MODE_LINE): every shared-memory handoff
 *          (ring descriptor, node collective flag) costs at least half of it;
 *   wake   how long a process blocked in read() on a pipe takes to run after
 *          the other CPU wrote to it, once after 10 us and once after 1 ms
 *          of quiet: every sleeping PE or progress thread woken by a
 *          doorbell or a socket pays it (a vCPU that halted when idle is
 *          woken through the hypervisor).
 *
 * Output, one line:
 *   machine: line round trip 452 ns (cpu0/cpu1); wake-up 13.1 us after 10 us, 99.0 us after 1 ms idle
 * --json prints the same as {"line_rt_ns":..,"wake_busy_us":..,"wake_idle_us":..}.
 * Takes about half a second.
 *
 * --idle US,US,... instead prints the wake-up after each of those spells of
 * quiet, one line each (31 samples per spell: 20 ms takes 0.6 s). On this
 * machine it grows with the spell: 99 / 160 / 212 / 220 us after 1 / 5 /
 * 10 / 20 ms (bench/README.md "Two nodes on two CPUs").
 * Exit 0, or 1 with a message on stderr (2: usage).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define WAKE_SAMPLES 101

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void pin_cpu(int cpu)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	(void)sched_setaffinity(0, sizeof(one), &one);
}

/* The median wake-up latency in us of a reader blocked on a pipe, the
 * writer writing its clock every gap_us (the two pinned to CPUs a and b
 * when there are two). 0 or -errno. */
static int wake_latency(long gap_us, int a, int b, int samples, double *median_us)
{
	int to_child[2], back[2];
	if (pipe(to_child) || pipe(back))
		return -errno;
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		if (b >= 0)
			pin_cpu(b);
		uint64_t lat[WAKE_SAMPLES];
		for (int i = 0; i < samples; i++) {
			uint64_t sent;
			if (read(to_child[0], &sent, sizeof(sent)) != (ssize_t)sizeof(sent))
				_exit(1);
			lat[i] = mono_ns() - sent;
		}
		qsort(lat, samples, sizeof(lat[0]), cmp_u64);
		uint64_t med = lat[samples / 2];
		_exit(write(back[1], &med, sizeof(med)) == (ssize_t)sizeof(med) ? 0 : 1);
	}
	if (a >= 0)
		pin_cpu(a);
	int rc = 0;
	for (int i = 0; i < samples && rc == 0; i++) {
		struct timespec gap = {gap_us / 1000000, (gap_us % 1000000) * 1000};
		nanosleep(&gap, NULL);
		uint64_t now = mono_ns();
		if (write(to_child[1], &now, sizeof(now)) != (ssize_t)sizeof(now))
			rc = -EPIPE;
	}
	uint64_t med = 0;
	if (rc == 0 && read(back[0], &med, sizeof(med)) != (ssize_t)sizeof(med))
		rc = -EIO;
	int st = 0;
	waitpid(pid, &st, 0);
	if (rc == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		rc = -ECHILD;
	close(to_child[0]);
	close(to_child[1]);
	close(back[0]);
	close(back[1]);
	*median_us = (double)med / 1e3;
	return rc;
}

/* --idle LIST: the wake-up after each spell of quiet, on CPUs 0 and 1 */
static int idle_spells(const char *list)
{
	int a = -1, b = -1;
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		a = 0, b = 1;
	for (const char *p = list; *p;) {
		char *end;
		errno = 0;
		long us = strtol(p, &end, 10);
		if (errno || end == p || us < 1 || us > 1000000 || (*end && *end != ',')) {
			fprintf(stderr, "hoist-machine-probe: --idle wants microseconds 1..1000000, "
					"comma-separated: '%s'\n", list);
			return 2;
		}
		double med;
		int rc = wake_latency(us, a, b, 31, &med);
		if (rc) {
			fprintf(stderr, "hoist-machine-probe: wake-up: %s\n", strerror(-rc));
			return 1;
		}
		printf("wake-up after %ld us idle: %.1f us (median of 31)\n", us, med);
		fflush(stdout);
		p = *end ? end + 1 : end;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--idle"))
		return idle_spells(argv[2]);
	int json = argc > 1 && !strcmp(argv[1], "--json");
	if (argc > 2 || (argc == 2 && !json)) {
		fprintf(stderr, "usage: hoist-machine-probe [--json | --idle US,US,...]\n");
		return 2;
	}
	double rt[5];
	char cpus[32];
	struct floor_opts fo = {.mode = FLOOR_MODE_LINE, .iters = 20000, .warmup = 2000, .reps = 5, .pin = 1};
	int rc = floor_pingpong(&fo, rt, cpus, sizeof(cpus));
	if (rc) {
		fprintf(stderr, "hoist-machine-probe: line round trip: %s\n", strerror(-rc));
		return 1;
	}
	qsort(rt, 5, sizeof(rt[0]), bench_cmp_double);
	int a = -1, b = -1;
	if (sscanf(cpus, "cpu%d/cpu%d", &a, &b) != 2)
		a = b = -1;
	double busy, idle;
	if ((rc = wake_latency(10, a, b, WAKE_SAMPLES, &busy)) ||
	    (rc = wake_latency(1000, a, b, WAKE_SAMPLES, &idle))) {
		fprintf(stderr, "hoist-machine-probe: wake-up: %s\n", strerror(-rc));
		return 1;
	}
	if (json)
		printf("{\"line_rt_ns\": %.0f, \"line_cpus\": \"%s\", \"wake_busy_us\": %.1f, \"wake_idle_us\": %.1f}\n",
		       rt[2], cpus, busy, idle);
	else
		printf("machine: line round trip %.0f ns (%s); wake-up %.1f us after 10 us, %.1f us after 1 ms idle\n",
		       rt[2], cpus, busy, idle);
	return 0;
}
