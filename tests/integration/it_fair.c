/*
 * it_fair: one client's huge strided descriptor does not hold the
 * progress thread, and so every other job of the node, until it is done.
 *
 *   A  job fair-A-<pid>, 1 PE, heap HEAP: posts ROUNDS raw PUT_STRIDED
 *      descriptors to itself, each element 1 B, stride 0, count = HEAP, the
 *      source in its own heap (HOIST_SQE_F_LOCAL_HEAP: one descriptor, no
 *      staging chunks), then waits for them and checks the result (the last
 *      element wins: byte HEAP-1 of the source at offset 0).
 *   B  job fair-B-<pid>, 1 PE, HOIST_DIRECT=0 (every get goes through the
 *      daemon): once A has posted, gets 8 bytes from itself again and again
 *      until A says its descriptors completed, counting the gets that
 *      completed in between.
 *
 * A daemon that runs a strided descriptor to the end in one go serves none
 * or one of B's gets while A's are in flight (they need HEAP * ROUNDS
 * element copies); one that yields between passes serves B after every
 * slice. B must have completed at least MIN_GETS. Not timed: counts.
 */
#include "internal.h"
#include "it_common.h"

#include <sys/mman.h>
#include <sys/wait.h>

#define HEAP (16u << 20)
#define ROUNDS 4
#define MIN_GETS 32

struct shared {
	volatile int a_posted, a_done, b_started;
	volatile long b_gets_during;
};

static int run_a(struct shared *sh, const char *job)
{
	setenv("HOIST_JOB", job, 1);
	int me, n;
	it_init("it_fair A", &me, &n);
	struct hoist_ctx *c = hoist__ctx();
	unsigned char *heap = (unsigned char *)c->heap_base;
	for (uint64_t i = 0; i < HEAP; i++)
		heap[i] = (unsigned char)(i * 131u + 7u);
	unsigned char want = heap[HEAP - 1];
	while (!sh->b_started)
		usleep(1000);
	struct hoist_op *ops[ROUNDS];
	for (int r = 0; r < ROUNDS; r++) {
		struct hoist_sqe *slot = NULL;
		if (IT_OK(hoist__op_alloc(c, &ops[r]), "op") || IT_OK(hoist__sqe_get(c, &slot), "sqe"))
			return it_finish();
		*slot = (struct hoist_sqe){.opcode = HOIST_OP_PUT_STRIDED,
					   .flags = HOIST_SQE_F_LOCAL_HEAP | HOIST_SQE_F_CQE,
					   .pe = 0, .seg = HOIST_SEG_HEAP, .remote_off = 0, .len = 1,
					   .local_off = 0, .user_data = hoist__op_udata(c, ops[r])};
		uint64_t p[2] = {0, HEAP}; /* stride 0, count */
		memcpy(slot->inline_data, p, sizeof(p));
		hoist__sqe_submit(c);
	}
	hoist__kick(c);
	sh->a_posted = 1;
	for (int r = 0; r < ROUNDS; r++) {
		IT_OK(hoist__wait_op(c, ops[r]), "strided put %d", r);
		hoist__op_free(c, ops[r]);
	}
	sh->a_done = 1;
	if (heap[0] != want)
		IT_FAIL("offset 0 holds %u, want %u (the last element's source byte)", heap[0], want);
	return it_finish();
}

static int run_b(struct shared *sh, const char *job)
{
	setenv("HOIST_JOB", job, 1);
	setenv("HOIST_DIRECT", "0", 1);
	int me, n;
	it_init("it_fair B", &me, &n);
	uint64_t *x = it_malloc(64), v = 0;
	*x = 0x5eed;
	sh->b_started = 1;
	while (!sh->a_posted)
		usleep(100);
	long during = 0;
	while (!sh->a_done) {
		IT_OK(hoist_get(&v, 0, x, sizeof(v)), "get");
		if (v != 0x5eed)
			IT_FAIL("get returned %#llx", (unsigned long long)v);
		if (!sh->a_done)
			during++;
	}
	sh->b_gets_during = during;
	return it_finish();
}

int main(void)
{
	setvbuf(stderr, NULL, _IOLBF, 0);
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				 -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	char ja[64], jb[64], hs[32];
	snprintf(ja, sizeof(ja), "fair-A-%d", (int)getpid());
	snprintf(jb, sizeof(jb), "fair-B-%d", (int)getpid());
	snprintf(hs, sizeof(hs), "%u", HEAP);
	setenv("HOIST_RANK", "0", 1);
	setenv("HOIST_SIZE", "1", 1);
	setenv("HOIST_HEAP_SIZE", hs, 1);
	fflush(NULL);
	pid_t b = fork();
	if (b == 0)
		_exit(run_b(sh, jb));
	pid_t a = fork();
	if (a == 0)
		_exit(run_a(sh, ja));
	int fails = 0, st;
	pid_t who[2] = {a, b};
	for (int i = 0; i < 2; i++)
		if (waitpid(who[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "[it_fair] FAIL: %s failed\n", i ? "B" : "A");
			fails++;
		}
	fprintf(stderr, "[it_fair] B completed %ld gets while A's %d strided puts of %u elements "
			"were in flight\n", sh->b_gets_during, ROUNDS, HEAP);
	if (sh->b_gets_during < MIN_GETS) {
		fprintf(stderr, "[it_fair] FAIL: fewer than %d: the strided descriptors held the progress "
				"thread\n", MIN_GETS);
		fails++;
	}
	if (fails)
		return 1;
	fprintf(stderr, "[it_fair] PASS\n");
	return 0;
}
