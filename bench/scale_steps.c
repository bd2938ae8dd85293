/*
 * bench/scale_steps.c - one job in steps, for bench/run-scale.sh: the
 * script reads every daemon's counters between the steps, so each step's
 * messages, bytes and connections can be told apart.
 *
 *   hoist-scale-steps GATE_DIR
 *
 * Step 0 is hoist_init (the job assembles: membership), 1 the two
 * hoist_malloc calls of the buffers below, 2 one barrier, 3 one allreduce
 * of one int64 (8 B), 4 one alltoall of 8 B per pair of PEs, 5
 * hoist_finalize. After step s every PE creates GATE_DIR/done-s-RANK
 * and (but after the last step) waits until GATE_DIR/go-(s+1) exists: the
 * script creates it once every PE is done and it has read the counters.
 * A PE is done only when its own daemon has everything the step needs, so
 * with all PEs done no message of the step is still on its way. The
 * results are checked; exit 0 if they are right.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <hoist.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *gate;
static int rank = -1;

static void done(int step)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/done-%d-%d", gate, step, rank);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		fprintf(stderr, "scale-steps: cannot create %s: %s\n", p, strerror(errno));
		exit(1);
	}
	close(fd);
}

/* the script's go; polled (a bench helper: no watchdog of its own, the
 * script's cluster timeout ends a stuck job) */
static void wait_go(int step)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/go-%d", gate, step);
	struct timespec ts = {0, 5 * 1000 * 1000};
	while (access(p, F_OK) != 0)
		nanosleep(&ts, NULL);
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "scale-steps: rank %d: %s: %d (%s)\n", rank, what, rc, strerror(rc < 0 ? -rc : rc));
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: hoist-scale-steps GATE_DIR\n");
		return 2;
	}
	gate = argv[1];
	int rc = hoist_init();
	if (rc)
		return fail("hoist_init", rc);
	rank = hoist_rank();
	int n = hoist_size();
	done(0);
	wait_go(1);

	int64_t *ar = hoist_malloc(2 * sizeof(int64_t));
	uint64_t *a2a = hoist_malloc(2 * (size_t)n * sizeof(uint64_t));
	if (!ar || !a2a)
		return fail("hoist_malloc", -ENOMEM);
	done(1);
	wait_go(2);

	if ((rc = hoist_barrier()))
		return fail("hoist_barrier", rc);
	done(2);
	wait_go(3);

	ar[0] = rank + 1;
	if ((rc = hoist_allreduce(&ar[1], &ar[0], 1, HOIST_INT64, HOIST_SUM)))
		return fail("hoist_allreduce", rc);
	if (ar[1] != (int64_t)n * (n + 1) / 2)
		return fail("allreduce result", -EPROTO);
	done(3);
	wait_go(4);

	for (int i = 0; i < n; i++)
		a2a[i] = (uint64_t)rank << 32 | (uint64_t)i;
	if ((rc = hoist_alltoall(a2a + n, a2a, sizeof(uint64_t))))
		return fail("hoist_alltoall", rc);
	for (int i = 0; i < n; i++)
		if (a2a[n + i] != ((uint64_t)i << 32 | (uint64_t)rank))
			return fail("alltoall result", -EPROTO);
	done(4);
	wait_go(5);

	if ((rc = hoist_finalize()))
		return fail("hoist_finalize", rc);
	done(5);
	return 0;
}
