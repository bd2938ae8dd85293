/*
 * it_impostor: a client attaches only to its own daemon (issue 10, item 1).
 * Needs root (skips with 77 otherwise); run directly under harness.sh.
 *
 * The victim is an arbitrary non-root uid V (no passwd entry) with
 * HOIST_RUNTIME_DIR and XDG_RUNTIME_DIR unset, so it looks in the default
 * /tmp/hoist-V. A fake listener there records every byte it receives. Each
 * case breaks exactly one thing the client checks, and the client must
 * refuse with -EPERM and a detail naming it, having sent nothing:
 *
 *   impostor    uid 65534 made /tmp/hoist-V itself and listens there (the
 *               attack of the issue: everything is the other user's)
 *   dir_owner   directory owned by 65534 (socket and listener root's)
 *   dir_mode    directory root's but mode 0777
 *   sock_owner  socket file owned by 65534 (directory, listener root's)
 *   peercred    directory and socket file root's, but the process that
 *               called listen() runs as 65534 (only SO_PEERCRED shows it)
 *
 *   sock_perm   everything root's, socket mode 0600: connect() fails with
 *               EACCES, which is -EACCES "permission denied", not a story
 *               about jobs of other users
 *
 * Deadlines (the listener is root's, so every check passes):
 *   silent      accepts and reads the request, never answers: -ETIMEDOUT
 *               after HOIST_ATTACH_TIMEOUT_MS (HOIST_RUNTIME_DIR set)
 *   half        answers "accepted, job_timeout_ms 300" and then nothing:
 *               -ETIMEDOUT after job_timeout_ms + the client's margin
 *
 * hoistctl as V checks the same way (ctl_peercred: a listener of 65534 on
 * a root-owned stats.sock) and gives up on a silent one (ctl_silent).
 *
 * And the real daemons still work for V: a hoistd started as V with its
 * default runtime directory (/tmp/hoist-V, found with the variables
 * unset), and the harness's root daemon (HOIST_RUNTIME_DIR), also for a
 * job that assembles long after HOIST_ATTACH_TIMEOUT_MS (slow_job: the
 * daemon's "accepted" answer moves the client to the job's deadline).
 */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "hoist.pb-c.h"
#include "hoist_shm.h"
#include "it_common.h"

#define OTHER 65534u /* the impostor */

static uid_t victim;
static char vdir[64], vsock[96];

static void cleanup_vdir(void)
{
	/* async-signal-safe: what the fakes and daemons leave is sockets */
	unlink(vsock);
	char s[128];
	snprintf(s, sizeof(s), "%s/stats.sock", vdir);
	unlink(s);
	rmdir(vdir);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "[it_impostor] FAIL: watchdog expired (a client or fake hung)\n";
	ssize_t w = write(2, m, sizeof(m) - 1);
	(void)w;
	cleanup_vdir();
	_exit(1);
}

static int drop_to(uid_t u)
{
	if (geteuid() == u)
		return 0;
	if (setgroups(0, NULL) != 0 || setgid((gid_t)u) != 0 || setuid(u) != 0) {
		perror("it_impostor: setuid");
		return -1;
	}
	return 0;
}

/* ---- the fake listener -------------------------------------------------- */

enum { ANSWER_NONE = 0, ANSWER_ACCEPTED };

struct fake_cfg {
	int dir_by_other;   /* 65534 makes the directory (0755); else the parent did */
	uid_t bind_uid;     /* who creates the socket file */
	int sock_to_other;  /* the socket file is chowned to 65534 */
	uid_t listen_uid;   /* who calls listen() (SO_PEERCRED) */
	int answer;
	int stats;          /* listen on stats.sock (hoistctl) instead of hoistd.sock */
	mode_t sock_mode;   /* 0: 0666 */
};

/* root makes the directory, binds and listens on hoistd.sock (0666), never
 * answers; the arguments change that */
#define FAKE(...) ((struct fake_cfg){__VA_ARGS__})

struct fake {
	pid_t pid;
	int stop_w, res_r;
};

struct fake_res {
	long conns, bytes;
};

static void fake_answer_accepted(int fd)
{
	Hoist__AttachReply rep = HOIST__ATTACH_REPLY__INIT;
	rep.error = "";
	rep.abi_version = HOIST_ABI_VERSION;
	rep.accepted = 1;
	rep.job_timeout_ms = 300;
	uint8_t buf[64];
	size_t n = hoist__attach_reply__pack(&rep, buf);
	if (send(fd, buf, n, MSG_NOSIGNAL) != (ssize_t)n)
		perror("fake: send accepted");
}

static void fake_child(const struct fake_cfg *cfg, int stop_r, int res_w)
{
	alarm(60);
	if (cfg->dir_by_other) {
		if (drop_to(OTHER) || mkdir(vdir, 0755) != 0 || chmod(vdir, 0755) != 0) {
			perror("fake: mkdir");
			_exit(2);
		}
	}
	if (drop_to(cfg->bind_uid))
		_exit(2);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (cfg->stats)
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/stats.sock", vdir);
	else
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", vsock);
	int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(sa.sun_path, cfg->sock_mode ? cfg->sock_mode : 0666) != 0) {
		perror("fake: bind");
		_exit(2);
	}
	if (cfg->sock_to_other && chown(sa.sun_path, OTHER, OTHER)) {
		perror("fake: chown");
		_exit(2);
	}
	if (drop_to(cfg->listen_uid) || listen(lfd, 16) != 0) {
		perror("fake: listen");
		_exit(2);
	}
	struct fake_res r = {0, 0};
	char ready = 'R';
	if (write(res_w, &ready, 1) != 1)
		_exit(2);
	struct pollfd p[18];
	int np = 2;
	p[0] = (struct pollfd){.fd = stop_r, .events = POLLIN};
	p[1] = (struct pollfd){.fd = lfd, .events = POLLIN};
	for (int done = 0; !done;) {
		if (poll(p, (nfds_t)np, -1) < 0)
			continue;
		done = p[0].revents != 0;
		/* drain everything that came, also on the way out */
		int cfd;
		while (np < 18 && (cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
			r.conns++;
			p[np++] = (struct pollfd){.fd = cfd, .events = POLLIN};
		}
		for (int i = 2; i < np; i++) {
			char buf[4096];
			ssize_t n;
			while ((n = recv(p[i].fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
				r.bytes += n;
				if (cfg->answer == ANSWER_ACCEPTED)
					fake_answer_accepted(p[i].fd);
			}
			if (n == 0) /* hung up: stop polling it */
				p[i].events = 0, p[i].fd = -p[i].fd - 1;
		}
	}
	if (write(res_w, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(2);
	_exit(0);
}

static int fake_start(struct fake *f, const struct fake_cfg *cfg)
{
	int sp[2], rp[2];
	if (pipe(sp) || pipe(rp))
		return -1;
	fflush(NULL);
	f->pid = fork();
	if (f->pid < 0)
		return -1;
	if (f->pid == 0) {
		close(sp[1]);
		close(rp[0]);
		fake_child(cfg, sp[0], rp[1]);
	}
	close(sp[0]);
	close(rp[1]);
	f->stop_w = sp[1];
	f->res_r = rp[0];
	char c;
	if (read(f->res_r, &c, 1) != 1 || c != 'R') {
		fprintf(stderr, "[it_impostor] FAIL: the fake listener did not start\n");
		return -1;
	}
	return 0;
}

static int fake_stop(struct fake *f, struct fake_res *r)
{
	close(f->stop_w);
	ssize_t n = read(f->res_r, r, sizeof(*r));
	close(f->res_r);
	int st;
	waitpid(f->pid, &st, 0);
	return n == (ssize_t)sizeof(*r) ? 0 : -1;
}

/* ---- the victim ----------------------------------------------------------- */

struct victim_res {
	int rc;
	char detail[512];
};

/* hoist_init (and a put/get to itself when it works) as uid V in a child;
 * runtime_dir NULL: the defaults (both variables unset). */
static int run_victim(const char *runtime_dir, const char *attach_ms, struct victim_res *out)
{
	int pp[2];
	if (pipe(pp))
		return -1;
	fflush(NULL);
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		close(pp[0]);
		alarm(30); /* a hang is a failure, not a slow pass */
		struct victim_res r;
		memset(&r, 0, sizeof(r));
		if (drop_to(victim))
			_exit(2);
		unsetenv("XDG_RUNTIME_DIR");
		if (runtime_dir)
			setenv("HOIST_RUNTIME_DIR", runtime_dir, 1);
		else
			unsetenv("HOIST_RUNTIME_DIR");
		if (attach_ms)
			setenv("HOIST_ATTACH_TIMEOUT_MS", attach_ms, 1);
		else
			unsetenv("HOIST_ATTACH_TIMEOUT_MS");
		char job[64];
		snprintf(job, sizeof(job), "impostor-victim-%d", (int)getpid());
		setenv("HOIST_JOB", job, 1);
		setenv("HOIST_RANK", "0", 1);
		setenv("HOIST_SIZE", "1", 1);
		setenv("HOIST_HEAP_SIZE", "1m", 1);
		r.rc = hoist_init();
		snprintf(r.detail, sizeof(r.detail), "%s", hoist_error_detail());
		if (r.rc == 0) {
			uint64_t *x = hoist_malloc(64), v = 0x5eed, back = 0;
			if (!x || hoist_put(0, x, &v, sizeof(v)) || hoist_get(&back, 0, x, sizeof(back)) ||
			    back != v) {
				r.rc = -EIO;
				snprintf(r.detail, sizeof(r.detail), "attached, but put/get to itself failed");
			}
			int f = hoist_finalize();
			if (f && !r.rc) {
				r.rc = f;
				snprintf(r.detail, sizeof(r.detail), "hoist_finalize failed");
			}
		}
		ssize_t w = write(pp[1], &r, sizeof(r));
		_exit(w == (ssize_t)sizeof(r) ? 0 : 2);
	}
	close(pp[1]);
	ssize_t n = read(pp[0], out, sizeof(*out));
	close(pp[0]);
	int st;
	waitpid(p, &st, 0);
	if (n != (ssize_t)sizeof(*out)) {
		fprintf(stderr, "[it_impostor] FAIL: the victim died without a result (wait status %d)\n", st);
		return -1;
	}
	out->detail[sizeof(out->detail) - 1] = 0;
	return 0;
}

/* ---- cases ---------------------------------------------------------------- */

static int fails;

static void check(int ok, const char *cas, const char *fmt, const char *a, const char *b)
{
	if (ok)
		return;
	fprintf(stderr, "[it_impostor %s] FAIL: ", cas);
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\n");
	fails++;
}

/* Build the setting, let V try, and check the outcome. */
static void fake_case(const char *cas, struct fake_cfg cfg, uid_t dir_uid, mode_t dir_mode,
		      const char *runtime_dir, const char *attach_ms, int want, const char *detail_has,
		      int want_bytes)
{
	cleanup_vdir();
	if (!cfg.dir_by_other) { /* root makes it, then hands it over */
		if (mkdir(vdir, 0755) != 0 || chmod(vdir, dir_mode) != 0 ||
		    (dir_uid && chown(vdir, dir_uid, (gid_t)dir_uid))) {
			perror("it_impostor: mkdir");
			fails++;
			return;
		}
	}
	struct fake f;
	if (fake_start(&f, &cfg)) {
		fails++;
		cleanup_vdir();
		return;
	}
	struct victim_res v;
	double t0 = it_now();
	int vr = run_victim(runtime_dir, attach_ms, &v);
	double t1 = it_now();
	struct fake_res r = {-1, -1};
	if (fake_stop(&f, &r))
		fprintf(stderr, "[it_impostor %s] FAIL: no result from the fake listener\n", cas), fails++;
	cleanup_vdir();
	if (vr) {
		fails++;
		return;
	}
	fprintf(stderr, "[it_impostor %s] hoist_init as uid %u: %s after %.1f s, detail \"%s\"; "
			"the fake saw %ld connection(s), %ld byte(s)\n",
		cas, (unsigned)victim, it_errname(v.rc), t1 - t0, v.detail, r.conns, r.bytes);
	char want_s[32];
	snprintf(want_s, sizeof(want_s), "%s", it_errname(want));
	check(v.rc == want, cas, "hoist_init returned %s, expected %s", it_errname(v.rc), want_s);
	check(strstr(v.detail, detail_has) != NULL, cas, "detail \"%s\" does not say \"%s\"", v.detail,
	      detail_has);
	if (want_bytes)
		check(r.bytes > 0, cas, "the fake received no request%s%s (so the deadline was not what ended it)",
		      "", "");
	else
		check(r.bytes == 0, cas, "the client wrote to the untrusted listener%s%s", "", "");
}

/* hoistctl stats as V (default runtime directory) against a fake on
 * stats.sock: it must fail, say detail_has, and send nothing (or, for a
 * silent listener, send its request and give up). */
static void ctl_case(const char *cas, struct fake_cfg cfg, const char *detail_has, int want_bytes,
		     int want_status)
{
	cleanup_vdir();
	cfg.stats = 1;
	if (mkdir(vdir, 0755) != 0 || chmod(vdir, 0755) != 0) {
		perror("it_impostor: mkdir");
		fails++;
		return;
	}
	struct fake f;
	if (fake_start(&f, &cfg)) {
		fails++;
		cleanup_vdir();
		return;
	}
	int ep[2];
	if (pipe(ep)) {
		fails++;
		return;
	}
	fflush(NULL);
	pid_t p = fork();
	if (p == 0) {
		alarm(30);
		close(ep[0]);
		dup2(ep[1], 2);
		int nul = open("/dev/null", O_WRONLY);
		dup2(nul, 1);
		if (drop_to(victim))
			_exit(2);
		unsetenv("XDG_RUNTIME_DIR");
		unsetenv("HOIST_RUNTIME_DIR");
		const char *ctl = getenv("HOIST_HOISTCTL");
		execl(ctl, ctl, "stats", (char *)NULL);
		_exit(127);
	}
	close(ep[1]);
	char err[1024] = {0};
	size_t got = 0;
	ssize_t n;
	while (got < sizeof(err) - 1 && (n = read(ep[0], err + got, sizeof(err) - 1 - got)) > 0)
		got += (size_t)n;
	close(ep[0]);
	int st;
	waitpid(p, &st, 0);
	struct fake_res r = {-1, -1};
	if (fake_stop(&f, &r))
		fprintf(stderr, "[it_impostor %s] FAIL: no result from the fake listener\n", cas), fails++;
	cleanup_vdir();
	char *nl = strchr(err, '\n');
	if (nl)
		*nl = 0;
	fprintf(stderr, "[it_impostor %s] hoistctl stats as uid %u: wait status %d, \"%s\"; the fake saw %ld "
			"connection(s), %ld byte(s)\n",
		cas, (unsigned)victim, st, err, r.conns, r.bytes);
	/* 1: not trusted; 4: a listener that does not answer (hoistctl --help) */
	char want[32];
	snprintf(want, sizeof(want), " %d", want_status);
	check(WIFEXITED(st) && WEXITSTATUS(st) == want_status, cas, "hoistctl did not fail with status%s%s",
	      want, "");
	check(strstr(err, detail_has) != NULL, cas, "hoistctl said \"%s\", not \"%s\"", err, detail_has);
	if (want_bytes)
		check(r.bytes > 0, cas, "the fake received no request%s%s", "", "");
	else
		check(r.bytes == 0, cas, "hoistctl wrote to the untrusted listener%s%s", "", "");
}

/* A hoistd run as V with its defaults: the runtime directory is /tmp/hoist-V. */
static void real_user_daemon(void)
{
	const char *hoistd = getenv("HOIST_HOISTD"), *hdir = getenv("HOIST_RUNTIME_DIR");
	cleanup_vdir();
	char logp[512];
	snprintf(logp, sizeof(logp), "%s/impostor-user-hoistd.log", hdir);
	int rp[2];
	if (pipe(rp)) {
		fails++;
		return;
	}
	fflush(NULL);
	pid_t d = fork();
	if (d == 0) {
		int lfd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (lfd >= 0) {
			dup2(lfd, 2);
			dup2(lfd, 1);
		}
		close(rp[0]);
		if (rp[1] != 3) {
			dup2(rp[1], 3);
			close(rp[1]);
		}
		if (drop_to(victim))
			_exit(2);
		unsetenv("XDG_RUNTIME_DIR");
		unsetenv("HOIST_RUNTIME_DIR");
		execl(hoistd, hoistd, "--ready-fd", "3", (char *)NULL);
		_exit(127);
	}
	close(rp[1]);
	char line[8] = {0};
	ssize_t n = read(rp[0], line, 6);
	close(rp[0]);
	if (n != 6 || strncmp(line, "READY\n", 6)) {
		fprintf(stderr, "[it_impostor user_daemon] FAIL: hoistd as uid %u did not get ready (log %s)\n",
			(unsigned)victim, logp);
		kill(d, SIGKILL);
		waitpid(d, NULL, 0);
		cleanup_vdir();
		fails++;
		return;
	}
	struct victim_res v;
	int vr = run_victim(NULL, NULL, &v);
	kill(d, SIGTERM);
	int st;
	waitpid(d, &st, 0);
	cleanup_vdir();
	if (vr) {
		fails++;
		return;
	}
	fprintf(stderr, "[it_impostor user_daemon] uid %u with its own hoistd in %s: %s \"%s\"\n",
		(unsigned)victim, vdir, it_errname(v.rc), v.detail);
	check(v.rc == 0, "user_daemon", "hoist_init/put/get returned %s (%s), expected 0",
	      it_errname(v.rc), v.detail);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "user_daemon", "V's hoistd did not exit cleanly%s%s",
	      "", "");
}

/* One rank of a 2-rank job on the root daemon with a first-answer deadline
 * much shorter than the time the job takes to assemble. */
static pid_t slow_rank(const char *hdir, const char *job, int rank)
{
	fflush(NULL);
	pid_t p = fork();
	if (p != 0)
		return p;
	alarm(30);
	if (drop_to(victim))
		_exit(2);
	setenv("HOIST_RUNTIME_DIR", hdir, 1);
	setenv("HOIST_ATTACH_TIMEOUT_MS", "2000", 1);
	setenv("HOIST_JOB", job, 1);
	setenv("HOIST_RANK", rank ? "1" : "0", 1);
	setenv("HOIST_SIZE", "2", 1);
	setenv("HOIST_HEAP_SIZE", "1m", 1);
	int rc = hoist_init();
	if (rc) {
		fprintf(stderr, "[it_impostor slow_job] FAIL: rank %d: hoist_init returned %s (%s)\n", rank,
			it_errname(rc), hoist_error_detail());
		_exit(1);
	}
	rc = hoist_barrier();
	int f = hoist_finalize();
	if (rc || f) {
		fprintf(stderr, "[it_impostor slow_job] FAIL: rank %d: barrier %s, finalize %d\n", rank,
			it_errname(rc), f);
		_exit(1);
	}
	_exit(0);
}

/* The first answer is "accepted", so the final reply may take as long as
 * the job needs (up to job_timeout_ms), not HOIST_ATTACH_TIMEOUT_MS. */
static void slow_job(const char *hdir)
{
	char job[64];
	snprintf(job, sizeof(job), "impostor-slow-%d", (int)getpid());
	pid_t r0 = slow_rank(hdir, job, 0);
	sleep(5); /* rank 1 comes long after rank 0's 2 s first deadline */
	pid_t r1 = slow_rank(hdir, job, 1);
	int s0, s1;
	waitpid(r1, &s1, 0);
	waitpid(r0, &s0, 0);
	int ok = WIFEXITED(s0) && !WEXITSTATUS(s0) && WIFEXITED(s1) && !WEXITSTATUS(s1);
	fprintf(stderr, "[it_impostor slow_job] rank 1 attached 5 s after rank 0 (first deadline 2 s): %s\n",
		ok ? "both attached" : "FAIL");
	if (!ok)
		fails++;
}

int main(void)
{
	setvbuf(stderr, NULL, _IOLBF, 0);
	it_name = "it_impostor";
	if (geteuid() != 0) {
		fprintf(stderr, "[it_impostor] skipped: needs root\n");
		return IT_SKIP;
	}
	const char *hdir = getenv("HOIST_RUNTIME_DIR");
	if (!hdir || !getenv("HOIST_HOISTD")) {
		fprintf(stderr, "[it_impostor] FAIL: run me under harness.sh\n");
		return 1;
	}
	/* an arbitrary uid nobody else's test is likely to use at the same time */
	victim = (uid_t)(42000 + getpid() % 10000);
	for (;; victim++) {
		snprintf(vdir, sizeof(vdir), "/tmp/hoist-%u", (unsigned)victim);
		struct stat sb;
		if (lstat(vdir, &sb) != 0)
			break;
	}
	snprintf(vsock, sizeof(vsock), "%s/hoistd.sock", vdir);
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	alarm(100);
	fprintf(stderr, "[it_impostor] victim uid %u, default runtime directory %s\n", (unsigned)victim, vdir);

	/* every refusal must come before the client sends; a short first
	 * deadline keeps a broken check from waiting 10 s per case */
	const char *ms = "1500";
	fake_case("impostor", FAKE(.dir_by_other = 1, .bind_uid = OTHER, .listen_uid = OTHER), 0, 0,
		  NULL, ms, -EPERM, "belongs to uid 65534", 0);
	fake_case("dir_owner", FAKE(.answer = ANSWER_NONE), OTHER, 0755, NULL, ms, -EPERM, "runtime directory", 0);
	fake_case("dir_mode", FAKE(.answer = ANSWER_NONE), 0, 0777, NULL, ms, -EPERM, "writable", 0);
	fake_case("sock_owner", FAKE(.sock_to_other = 1), 0, 0755, NULL, ms, -EPERM, "socket", 0);
	fake_case("peercred", FAKE(.listen_uid = OTHER), 0, 0755, NULL, ms, -EPERM, "runs as uid 65534", 0);
	/* item 5: a socket V may not open is a permission problem, said as such */
	fake_case("sock_perm", FAKE(.sock_mode = 0600), 0, 0755, NULL, ms, -EACCES,
		  "permission denied connecting", 0);
	const char *eacces = hoist_strerror(-EACCES);
	check(strstr(eacces, "permission") && !strstr(eacces, "another user"), "sock_perm",
	      "hoist_strerror(-EACCES) says \"%s\"%s", eacces, "");
	/* deadlines: a root-owned listener passes every check */
	fake_case("silent", FAKE(.answer = ANSWER_NONE), 0, 0755, vdir, ms, -ETIMEDOUT, "did not answer", 1);
	fake_case("half", FAKE(.answer = ANSWER_ACCEPTED), 0, 0755, vdir, ms, -ETIMEDOUT, "no final reply", 1);

	/* hoistctl: the same check (one function), and a deadline */
	ctl_case("ctl_peercred", FAKE(.listen_uid = OTHER), "runs as uid 65534", 0, 1);
	ctl_case("ctl_silent", FAKE(.answer = ANSWER_NONE), "no answer within", 1, 4);

	/* the real daemons still serve V */
	real_user_daemon();
	struct victim_res v;
	if (run_victim(hdir, NULL, &v) == 0) {
		fprintf(stderr, "[it_impostor root_daemon] uid %u on the root hoistd in %s: %s \"%s\"\n",
			(unsigned)victim, hdir, it_errname(v.rc), v.detail);
		check(v.rc == 0, "root_daemon", "hoist_init/put/get returned %s (%s), expected 0",
		      it_errname(v.rc), v.detail);
	} else {
		fails++;
	}
	slow_job(hdir);
	cleanup_vdir();
	struct stat sb;
	if (lstat(vdir, &sb) == 0) {
		fprintf(stderr, "[it_impostor] FAIL: could not remove %s\n", vdir);
		fails++;
	}
	if (fails) {
		fprintf(stderr, "[it_impostor] %d failure(s)\n", fails);
		return 1;
	}
	fprintf(stderr, "[it_impostor] PASS\n");
	return 0;
}
