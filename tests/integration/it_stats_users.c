/*
 * it_stats_users: who sees what in `hoistctl stats` of a root daemon
 * (issue 10, item 4). Needs root (skips with 77 otherwise); run directly
 * under harness.sh (its runtime directory is 0755, the daemon root's).
 *
 * Two users, uid 65534 and an arbitrary uid U, each run a job of one PE
 * (puts, gets, barriers) and keep it attached. Then `hoistctl stats
 * --json` and `hoistctl stats --phases` run as each of them and as root:
 *   - each user sees its own job (key, rank, pid, uid) and nothing that
 *     names the other's: no client row, key, pid or phase row of it;
 *   - root sees both;
 *   - the daemon-wide totals are there for everyone.
 */
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "it_common.h"

static int drop_to(uid_t u)
{
	if (u == 0)
		return 0;
	if (setgroups(0, NULL) != 0 || setgid((gid_t)u) != 0 || setuid(u) != 0) {
		perror("it_stats_users: setuid");
		return -1;
	}
	return 0;
}

struct holder {
	uid_t uid;
	char job[64];
	pid_t pid;
	int stop_w;
};

/* A PE of uid u that works a little, reports ready and stays attached
 * until stop is closed. */
static int holder_start(struct holder *h, const char *dir)
{
	int rp[2], sp[2];
	if (pipe2(rp, O_CLOEXEC) || pipe2(sp, O_CLOEXEC))
		return -1;
	fflush(NULL);
	h->pid = fork();
	if (h->pid < 0)
		return -1;
	if (h->pid == 0) {
		alarm(50);
		close(rp[0]);
		close(sp[1]);
		if (drop_to(h->uid))
			_exit(2);
		setenv("HOIST_RUNTIME_DIR", dir, 1);
		setenv("HOIST_JOB", h->job, 1);
		setenv("HOIST_RANK", "0", 1);
		setenv("HOIST_SIZE", "1", 1);
		setenv("HOIST_HEAP_SIZE", "1m", 1);
		setenv("HOIST_DIRECT", "0", 1); /* through the daemon: counters move */
		int rc = hoist_init();
		if (rc) {
			fprintf(stderr, "[it_stats_users] FAIL: uid %u: hoist_init: %s (%s)\n", (unsigned)h->uid,
				it_errname(rc), hoist_error_detail());
			_exit(1);
		}
		uint64_t *x = hoist_malloc(64), v = 7, back = 0;
		for (int i = 0; x && i < 3; i++) {
			hoist_put(0, x, &v, sizeof(v));
			hoist_barrier();
			hoist_get(&back, 0, x, sizeof(back));
		}
		char c = 'R';
		if (write(rp[1], &c, 1) != 1)
			_exit(2);
		while (read(sp[0], &c, 1) > 0) {
		}
		_exit(hoist_finalize() ? 1 : 0);
	}
	close(rp[1]);
	close(sp[0]);
	h->stop_w = sp[1];
	char c;
	ssize_t n = read(rp[0], &c, 1);
	close(rp[0]);
	return n == 1 ? 0 : -1;
}

static int holder_stop(struct holder *h)
{
	close(h->stop_w);
	int st;
	waitpid(h->pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Run hoistctl as uid u with args, stdout into path. Exit status or -1. */
static int ctl_as(uid_t u, const char *path, const char *a1, const char *a2)
{
	const char *ctl = getenv("HOIST_HOISTCTL"), *dir = getenv("HOIST_RUNTIME_DIR");
	fflush(NULL);
	pid_t p = fork();
	if (p == 0) {
		alarm(30);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 1) < 0 || drop_to(u))
			_exit(2);
		execl(ctl, ctl, "--runtime-dir", dir, "stats", a1, a2, (char *)NULL);
		_exit(127);
	}
	int st;
	if (p < 0 || waitpid(p, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static int fails;

/* What viewer (uid v) must see and must not see. */
static void check_view(const char *tmp, uid_t v, const struct holder *hs, int nh)
{
	char jpath[300], tpath[300];
	snprintf(jpath, sizeof(jpath), "%s/json-%u", tmp, (unsigned)v);
	snprintf(tpath, sizeof(tpath), "%s/table-%u", tmp, (unsigned)v);
	int rj = ctl_as(v, jpath, "--json", "--settings");
	int rt = ctl_as(v, tpath, "--phases", "--settings");
	if (rj != 0 || rt != 0) {
		fprintf(stderr, "[it_stats_users] FAIL: hoistctl stats as uid %u exited %d / %d\n", (unsigned)v, rj, rt);
		fails++;
		return;
	}
	/* JSON: the client rows are exactly the visible jobs' ranks */
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "python3 -c '\n"
		 "import json, sys\n"
		 "doc = json.load(open(sys.argv[1])); v = int(sys.argv[2]); jobs = sys.argv[3:]\n"
		 "bad = []\n"
		 "cl = doc.get(\"clients\", [])\n"
		 "for c in cl:\n"
		 "    if v != 0 and c.get(\"uid\") != v: bad.append(\"client of uid %%r (job %%r, pid %%r) visible\" %% (c.get(\"uid\"), c.get(\"job\"), c.get(\"pid\")))\n"
		 "for j in jobs:\n"
		 "    if not any(c.get(\"job\") == j for c in cl): bad.append(\"own/visible job %%s missing\" %% j)\n"
		 "for k in (\"attaches\", \"clients\", \"jobs\", \"puts\"):\n"
		 "    if k not in doc.get(\"daemon\", {}): bad.append(\"daemon total %%s missing\" %% k)\n"
		 "for b in bad: print(\"  \" + b, file=sys.stderr)\n"
		 "sys.exit(1 if bad else 0)' '%s' %u",
		 jpath, (unsigned)v);
	for (int i = 0; i < nh; i++)
		if (v == 0 || hs[i].uid == v) {
			size_t l = strlen(cmd);
			snprintf(cmd + l, sizeof(cmd) - l, " '%s'", hs[i].job);
		}
	if (system(cmd) != 0) {
		fprintf(stderr, "[it_stats_users] FAIL: stats --json as uid %u (above)\n", (unsigned)v);
		fails++;
	}
	/* both outputs: other users' job keys and pids appear nowhere */
	const char *paths[2] = {jpath, tpath};
	for (int p = 0; p < 2; p++) {
		char *text = slurp(paths[p]);
		if (!text) {
			fails++;
			continue;
		}
		for (int i = 0; i < nh; i++) {
			int visible = v == 0 || hs[i].uid == v;
			int shown = strstr(text, hs[i].job) != NULL;
			if (visible != shown) {
				fprintf(stderr, "[it_stats_users] FAIL: %s as uid %u %s job %s of uid %u\n",
					p ? "stats --phases" : "stats --json", (unsigned)v,
					shown ? "shows" : "does not show", hs[i].job, (unsigned)hs[i].uid);
				fails++;
			}
			char pid[32];
			snprintf(pid, sizeof(pid), "\"pid\":%d,", (int)hs[i].pid);
			if (p == 0 && !visible && strstr(text, pid)) {
				fprintf(stderr, "[it_stats_users] FAIL: stats --json as uid %u shows pid %d of uid %u\n",
					(unsigned)v, (int)hs[i].pid, (unsigned)hs[i].uid);
				fails++;
			}
		}
		/* the phase rows exist (and are filtered like the client rows) */
		for (int i = 0; p == 1 && i < nh; i++) {
			if (v != 0 && hs[i].uid != v)
				continue;
			char *sect = strstr(text, "\nphases");
			char *row = sect ? strstr(sect, hs[i].job) : NULL;
			char *eol = row ? strchr(row, '\n') : NULL;
			char *ph = row ? strstr(row, "phase 0x") : NULL;
			if (!ph || (eol && ph > eol)) {
				fprintf(stderr, "[it_stats_users] FAIL: stats --phases as uid %u has no phase row of job %s\n",
					(unsigned)v, hs[i].job);
				fails++;
			}
		}
		if (p == 1 && !strstr(text, "attaches")) {
			fprintf(stderr, "[it_stats_users] FAIL: the table as uid %u lacks the daemon totals\n", (unsigned)v);
			fails++;
		}
	}
	fprintf(stderr, "[it_stats_users] checked what uid %u sees\n", (unsigned)v);
}

int main(void)
{
	setvbuf(stderr, NULL, _IOLBF, 0);
	it_name = "it_stats_users";
	if (geteuid() != 0) {
		fprintf(stderr, "[it_stats_users] skipped: needs root\n");
		return IT_SKIP;
	}
	const char *dir = getenv("HOIST_RUNTIME_DIR");
	if (!dir || !getenv("HOIST_HOISTCTL")) {
		fprintf(stderr, "[it_stats_users] FAIL: run me under harness.sh\n");
		return 1;
	}
	it_watchdog(90);
	char tmp[] = "/tmp/hoist-stats-users.XXXXXX";
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	struct holder hs[2] = {{.uid = 65534}, {.uid = (uid_t)(42000 + getpid() % 10000)}};
	snprintf(hs[0].job, sizeof(hs[0].job), "vis-a-%d", (int)getpid());
	snprintf(hs[1].job, sizeof(hs[1].job), "vis-b-%d", (int)getpid());
	for (int i = 0; i < 2; i++)
		if (holder_start(&hs[i], dir)) {
			fprintf(stderr, "[it_stats_users] FAIL: the job of uid %u did not start\n", (unsigned)hs[i].uid);
			fails++;
		}
	if (!fails) {
		check_view(tmp, hs[0].uid, hs, 2);
		check_view(tmp, hs[1].uid, hs, 2);
		check_view(tmp, 0, hs, 2);
	}
	/* the later holder inherited the earlier one's stop pipe: stop it first */
	for (int i = 1; i >= 0; i--)
		if (hs[i].pid > 0 && holder_stop(&hs[i])) {
			fprintf(stderr, "[it_stats_users] FAIL: the job of uid %u did not finish cleanly\n",
				(unsigned)hs[i].uid);
			fails++;
		}
	char rm[400];
	snprintf(rm, sizeof(rm), "rm -rf '%s'", tmp);
	if (system(rm) != 0)
		fails++;
	if (fails) {
		fprintf(stderr, "[it_stats_users] %d failure(s)\n", fails);
		return 1;
	}
	fprintf(stderr, "[it_stats_users] PASS\n");
	return 0;
}
