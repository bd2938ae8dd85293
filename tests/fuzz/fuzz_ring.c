/*
 * fuzz_ring: the submission ring driven by a client. This program is a PE
 * (one-rank job) of a real hoistd: every input is cut into 64-byte
 * descriptors that go into its submission ring as they are (user_data
 * cleared so that the library files their completions as errors), then
 * hoist_quiet must return (within libFuzzer's -timeout) and the daemon
 * must still be alive and serve a valid put and get of the PE's own heap.
 * A daemon crash (ASan in the daemon: run it from a sanitizer build), a
 * hang, or a wrong result aborts with the input saved.
 *
 * Run under tests/integration/harness.sh (it starts the daemon, exports
 * HOIST_RUNTIME_DIR and HOISTD_PID, and fails if the daemon died):
 *   harness.sh hoistd hoistrun hoistctl -- fuzz_ring -max_total_time=20 CORPUS
 * The fuzzer's coverage feedback is the client's (the daemon is another
 * process); the descriptors' content is what is fuzzed. The ring counters
 * themselves are not: a client that corrupts them is cut off for good
 * (client_break), which would end the run; it_malformed covers that.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct hoist_ctx *c;
static uint64_t *buf;
static pid_t daemon_pid;

static void die(const char *what, int rc)
{
	fprintf(stderr, "fuzz_ring: %s: %d (%s)\n", what, rc, hoist_strerror(rc));
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	char job[64];
	snprintf(job, sizeof(job), "fuzz-ring-%d", (int)getpid());
	setenv("HOIST_RANK", "0", 1);
	setenv("HOIST_SIZE", "1", 1);
	setenv("HOIST_JOB", job, 1);
	const char *p = getenv("HOISTD_PID");
	daemon_pid = p ? (pid_t)atoi(p) : 0;
	if (!getenv("HOIST_RUNTIME_DIR")) {
		fprintf(stderr, "fuzz_ring: HOIST_RUNTIME_DIR is not set (run under harness.sh)\n");
		exit(2);
	}
	int rc = hoist_init();
	if (rc)
		die("hoist_init", rc);
	c = hoist__ctx();
	buf = hoist_malloc(1 << 16);
	if (!buf)
		die("hoist_malloc", -12);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = size / sizeof(struct hoist_sqe);
	if (n > (size_t)c->ring.sq_mask + 1)
		n = (size_t)c->ring.sq_mask + 1;
	for (size_t i = 0; i < n; i++) {
		struct hoist_sqe s;
		memcpy(&s, data + i * sizeof(s), sizeof(s));
		s.user_data = 0;
		struct hoist_sqe *slot;
		int rc = hoist__sqe_get(c, &slot);
		if (rc)
			die("hoist__sqe_get", rc);
		memcpy(slot, &s, sizeof(s));
		hoist__sqe_submit(c);
	}
	int rc = hoist_quiet();
	(void)rc; /* the fuzzed descriptors' errors (once) */
	rc = hoist_quiet();
	if (rc)
		die("second hoist_quiet", rc);
	if (daemon_pid > 0 && kill(daemon_pid, 0) != 0)
		die("the daemon is gone", -3);
	/* the daemon still serves: a put and a get of this PE's own heap */
	uint64_t v = 0x5eed0000u + size, back = 0;
	rc = hoist_put(0, buf, &v, sizeof(v));
	if (rc)
		die("hoist_put after the input", rc);
	rc = hoist_get(&back, 0, buf, sizeof(back));
	if (rc || back != v)
		die("hoist_get after the input", rc ? rc : -5);
	return 0;
}
