/*
 * it_uid: a job belongs to the uid that attached first; a PE of another uid
 * that claims to be part of it is refused with -EACCES. Needs root (skips
 * with 77 otherwise). Run directly under harness.sh (no hoistrun): it forks
 * its own processes.
 *
 *   A  root,   job J rank 0 of 2: attaches first (waits for the job)
 *   B  nobody, job J rank 1 of 2: hoist_init must return -EACCES
 *   D  nobody, own job of size 1: must work (the socket is reachable by
 *      nobody, so B's refusal really is the daemon's credential check)
 *   C  root,   job J rank 1 of 2: completes the job; A and C then put/get
 *      to each other and finish normally.
 */
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "it_common.h"

#define NOBODY 65534

static void set_job(const char *job, int rank, int size)
{
	char r[16], s[16];
	snprintf(r, sizeof(r), "%d", rank);
	snprintf(s, sizeof(s), "%d", size);
	setenv("HOIST_JOB", job, 1);
	setenv("HOIST_RANK", r, 1);
	setenv("HOIST_SIZE", s, 1);
}

static int become_nobody(void)
{
	if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0) {
		perror("it_uid: dropping to uid 65534");
		return -1;
	}
	return 0;
}

/* A normal PE: init, exchange data with the other ranks, finalize. */
static int good_pe(const char *tag)
{
	int me, n;
	it_init(tag, &me, &n);
	unsigned char *buf = it_malloc(4096);
	unsigned char src[1000], back[1000];
	int to = (me + 1) % n, from = (me + n - 1) % n;
	it_fill(src, sizeof(src), it_hash(0x01d, (uint64_t)me, 0, 0, 0));
	IT_OK(hoist_put(to, buf, src, sizeof(src)), "put to pe %d", to);
	IT_OK(hoist_barrier());
	size_t off = it_check_fill(buf, sizeof(src), it_hash(0x01d, (uint64_t)from, 0, 0, 0));
	if (off != sizeof(src))
		IT_FAIL("data from pe %d wrong at offset %zu", from, off);
	IT_OK(hoist_get(back, to, buf, sizeof(back)), "get from pe %d", to);
	if (memcmp(back, src, sizeof(back)) != 0)
		IT_FAIL("get from pe %d returned wrong data", to);
	IT_OK(hoist_barrier());
	return it_finish();
}

static pid_t spawn(int (*fn)(const char *), const char *arg)
{
	fflush(NULL);
	pid_t p = fork();
	if (p < 0) {
		perror("fork");
		exit(1);
	}
	if (p == 0) {
		it_watchdog(40);
		_exit(fn(arg));
	}
	return p;
}

static int child_a(const char *job)
{
	set_job(job, 0, 2);
	return good_pe("it_uid A (root, rank 0)");
}

static int child_c(const char *job)
{
	set_job(job, 1, 2);
	return good_pe("it_uid C (root, rank 1)");
}

static int child_b(const char *job)
{
	set_job(job, 1, 2);
	if (become_nobody())
		return 1;
	int rc = hoist_init();
	if (rc == -EACCES) {
		fprintf(stderr, "[it_uid B (nobody, rank 1)] refused with -EACCES as expected\n");
		return 0;
	}
	fprintf(stderr, "[it_uid B (nobody, rank 1)] FAIL: hoist_init into root's job %s returned %s (%s), "
			"expected -EACCES\n",
		job, it_errname(rc), hoist_strerror(rc));
	if (rc == 0)
		hoist_finalize();
	return 1;
}

static int child_d(const char *job)
{
	char own[300];
	snprintf(own, sizeof(own), "%s-nobody", job);
	set_job(own, 0, 1);
	if (become_nobody())
		return 1;
	return good_pe("it_uid D (nobody, own job)");
}

static int stats_have(const char *job)
{
	const char *ctl = getenv("HOIST_HOISTCTL"), *dir = getenv("HOIST_RUNTIME_DIR"),
		   *src = getenv("IT_SRC_DIR");
	if (!ctl || !dir || !src)
		return 0;
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "'%s' --runtime-dir '%s' stats --json 2>/dev/null | python3 '%s/it_json.py' has-string '%s'",
		 ctl, dir, src, job);
	return system(cmd) == 0;
}

static int reap(pid_t p, const char *what)
{
	int st;
	if (waitpid(p, &st, 0) < 0) {
		perror("waitpid");
		return 1;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st))
		fprintf(stderr, "[it_uid] FAIL: %s exited with %d\n", what, WEXITSTATUS(st));
	else
		fprintf(stderr, "[it_uid] FAIL: %s killed by signal %d\n", what, WTERMSIG(st));
	return 1;
}

int main(void)
{
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (geteuid() != 0) {
		fprintf(stderr, "[it_uid] skipped: needs root\n");
		return IT_SKIP;
	}
	const char *dir = getenv("HOIST_RUNTIME_DIR");
	struct stat sb;
	if (!dir || stat(dir, &sb) != 0 || (sb.st_mode & 0005) != 0005) {
		fprintf(stderr, "[it_uid] FAIL: HOIST_RUNTIME_DIR (%s) missing or not accessible to other users\n",
			dir ? dir : "unset");
		return 1;
	}
	it_watchdog(50);
	static char job[64];
	snprintf(job, sizeof(job), "uid-%d", (int)getpid());

	pid_t a = spawn(child_a, job);
	/* A must own the job before B tries */
	int seen = 0;
	for (int i = 0; i < 100 && !seen; i++) {
		seen = stats_have(job);
		if (!seen)
			usleep(50000);
	}
	if (!seen) {
		fprintf(stderr, "[it_uid] note: job %s (rank 0 attaching) not listed by hoistctl stats; "
				"giving rank 0 one more second\n", job);
		sleep(1);
	}
	pid_t b = spawn(child_b, job);
	int fails = reap(b, "B (nobody joining root's job)");
	pid_t d = spawn(child_d, job);
	fails += reap(d, "D (nobody, own job of size 1; if this fails, uid 65534 cannot use the daemon at all "
			    "and the refusal of B proves nothing)");
	pid_t c = spawn(child_c, job);
	fails += reap(c, "C (root, rank 1)");
	fails += reap(a, "A (root, rank 0)");
	if (fails)
		return 1;
	fprintf(stderr, "[it_uid] PASS\n");
	return 0;
}
