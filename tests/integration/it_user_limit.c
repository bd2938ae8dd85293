/*
 * it_user_limit: one user's half-assembled jobs cannot lock the others out
 * of a shared daemon (max_clients_per_user). Needs root (skips with 77
 * otherwise). The daemon runs with --max-clients 8 --max-clients-per-user 3.
 *
 *   uid 65534 attaches ranks 0..7 of a job of 100 ranks, one process each:
 *   such attaches wait for the job forever (until job_timeout_ms). The
 *   first 3 must wait, the other 5 must get -EUSERS at once.
 *   root then runs a job of 2 ranks on the same daemon: it must work
 *   (before, uid 65534 held all 8 client slots and root got -EUSERS).
 */
#include <grp.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "it_common.h"

#define NOBODY 65534
#define TRIES 8
#define PER_USER 3

/* the daemon's attaches counter, or -1 */
static int attaches(void)
{
	return (int)it_stats_probe(NULL, "max", "attaches");
}

static int root_pe(const char *job, int rank)
{
	it_set_job(job, rank, 2);
	int me, n;
	it_init("it_user_limit root", &me, &n);
	long *x = it_malloc(sizeof(long));
	long v = 1000 + me, got = 0;
	IT_OK(hoist_put(1 - me, x, &v, sizeof(v)));
	IT_OK(hoist_barrier());
	if (*x != 1000 + (1 - me))
		IT_FAIL("got %ld from pe %d", *x, 1 - me);
	IT_OK(hoist_get(&got, 1 - me, x, sizeof(got)));
	if (got != 1000 + me)
		IT_FAIL("get returned %ld", got);
	IT_OK(hoist_barrier());
	return it_finish();
}

int main(void)
{
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (geteuid() != 0) {
		fprintf(stderr, "[it_user_limit] skipped: needs root\n");
		return IT_SKIP;
	}
	char njob[64], rjob[64];
	snprintf(njob, sizeof(njob), "limit-nobody-%d", (int)getpid());
	snprintf(rjob, sizeof(rjob), "limit-root-%d", (int)getpid());
	pid_t kids[TRIES];
	int waiting = 0, refused = 0, other = 0, base = attaches();
	if (base < 0) {
		fprintf(stderr, "[it_user_limit] FAIL: hoistctl stats --json gave no attaches counter\n");
		return 1;
	}
	for (int i = 0; i < TRIES; i++) {
		fflush(NULL);
		kids[i] = fork();
		if (kids[i] == 0) {
			it_set_job(njob, i, 100);
			if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
				_exit(99);
			int rc = hoist_init();
			_exit(rc == -EUSERS ? 10 : 11); /* 0 cannot happen: 100 ranks never come */
		}
		/* it either waits (attached: the counter moves) or exits */
		for (;;) {
			int st;
			pid_t w = waitpid(kids[i], &st, WNOHANG);
			if (w == kids[i]) {
				kids[i] = 0;
				if (WIFEXITED(st) && WEXITSTATUS(st) == 10)
					refused++;
				else {
					fprintf(stderr, "[it_user_limit] attach %d of uid %d ended with status %d\n",
						i, NOBODY, WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
					other++;
				}
				break;
			}
			if (attaches() >= base + waiting + 1) {
				waiting++;
				break;
			}
			usleep(20000);
		}
	}
	fprintf(stderr, "[it_user_limit] uid %d: %d attaches waiting, %d refused with -EUSERS\n", NOBODY,
		waiting, refused);
	int fails = 0;
	if (waiting != PER_USER || refused != TRIES - PER_USER || other) {
		fprintf(stderr, "[it_user_limit] FAIL: want %d waiting and %d refused\n", PER_USER,
			TRIES - PER_USER);
		fails++;
	}
	pid_t r[2];
	for (int i = 0; i < 2; i++) {
		fflush(NULL);
		r[i] = fork();
		if (r[i] == 0)
			_exit(root_pe(rjob, i));
	}
	for (int i = 0; i < 2; i++) {
		int st;
		if (waitpid(r[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "[it_user_limit] FAIL: root's rank %d failed next to uid %d's attaches\n",
				i, NOBODY);
			fails++;
		}
	}
	for (int i = 0; i < TRIES; i++)
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
	if (fails)
		return 1;
	fprintf(stderr, "[it_user_limit] PASS\n");
	return 0;
}
