/*
 * hoistrun - start the PEs of a hoist job.
 *
 *   hoistrun -n N [--runtime-dir DIR | --runtime-dirs D1,D2,... | --nodes K]
 *            [--job KEY] [--tag-output] [--timeout SEC] [--grace SEC]
 *            [--bind-to core|none] [-v] [--] prog [args...]
 *
 * Forks N processes running prog, each with HOIST_RANK=i, HOIST_SIZE=N,
 * HOIST_JOB=KEY and HOIST_RUNTIME_DIR, and waits for all of them. It does
 * not link libhoist: it only sets the environment that hoist_init() reads.
 *
 * Which daemon, without --nodes/--runtime-dirs: the one answering (accepting
 * a connection on hoistd.sock) in --runtime-dir, else $HOIST_RUNTIME_DIR,
 * else the directory libhoist would pick (client/env.c). When none answers
 * there, a private hoistd is started for the job in a fresh mkdtemp
 * directory (mode 0700), found like --nodes finds it; hoistrun waits for its
 * READY on --ready-fd, points the ranks at it, and stops it afterwards
 * (SIGTERM; anything but exit status 0 fails the run).
 *
 * --tag-output: each rank's stdout and stderr are pipes to hoistrun, which
 * relays them line by line to its own stdout and stderr with a "[rank] "
 * prefix. hoistrun is the only writer, so lines never mix; an unfinished last
 * line gets a newline; after the last rank exited, pipes still held open
 * (by a rank's children) are relayed until they have been silent for
 * TAG_DRAIN_S. Signals then arrive through a signalfd, polled with the pipes.
 *
 * Several nodes on one machine: --nodes K starts K hoistd daemons on
 * loopback, each with its own runtime directory and port and a freshly
 * made cluster key, places the ranks on them in blocks (rank i on node
 * i*K/N) and stops the daemons afterwards; a daemon that does not exit
 * cleanly fails the run. --runtime-dirs places the ranks the same way on
 * daemons that already run.
 *
 * --bind-to core: rank i is bound (sched_setaffinity in the child, before
 * exec) to the (i mod n)-th of the n CPUs hoistrun itself may run on; the
 * daemons it starts keep hoistrun's whole set. Unbound, two PEs of a node
 * barrier that the kernel puts on one CPU pay a hand-over per barrier
 * (bench/README.md, "The node barrier's notify in runs").
 *
 * Process handling:
 * - Every rank runs in its own process group, so that stopping a rank also
 *   stops whatever it started (a shell wrapper's children). The one exception
 *   is rank 0 when hoistrun runs in the foreground of a terminal: it stays in
 *   hoistrun's group so it can read the terminal. Ranks other than 0 read
 *   stdin from /dev/null.
 * - Each rank gets PR_SET_PDEATHSIG=SIGKILL: if hoistrun is killed, its
 *   ranks do not live on.
 * - All signals are taken synchronously (sigtimedwait) in one loop; no
 *   signal handlers.
 * - When a rank fails, the other ranks get --grace seconds to finish (they
 *   usually fail on their own with -ECONNRESET), then SIGTERM, then SIGKILL
 *   KILL_DELAY seconds later.
 * - SIGINT/SIGTERM/SIGHUP are forwarded to every rank; a second one sends
 *   SIGKILL.
 *
 * Exit status: 0 when every rank exited 0; 124 after --timeout; 128+sig
 * when hoistrun itself was interrupted by signal sig; 127 when prog could
 * not be executed; otherwise the exit status of the first rank that failed
 * (1 when that rank was killed by a signal).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RANKS 65536
#define DEFAULT_GRACE_S 10.0
#define KILL_DELAY_S 3.0 /* SIGTERM -> SIGKILL */
#define EXIT_TIMEOUT 124
#define EXIT_NOEXEC 127

enum rank_state { R_NOT_STARTED, R_RUNNING, R_DONE };

/* --tag-output: one pipe per rank and stream, relayed line by line. */
#define TAG_LINE_MAX 65536 /* a longer line is relayed in pieces */
struct tagbuf {
	int fd;        /* read end, -1 once at EOF */
	size_t len;    /* bytes of an unfinished line in buf */
	char *buf;     /* TAG_LINE_MAX bytes */
};

struct rank {
	pid_t pid;
	int own_pgrp; /* 1: the rank leads its own process group */
	enum rank_state state;
	int status;    /* waitpid status once R_DONE */
	int signalled; /* hoistrun sent it a signal */
	struct tagbuf tag[2]; /* stdout, stderr (--tag-output) */
};

struct run {
	struct rank *ranks;
	int n;
	int alive;
	int verbose;
	double grace_s;
	double timeout_s; /* 0: none */

	int first_fail; /* rank index, -1 none */
	int exec_failed;
	int timed_out;
	int got_signal; /* signal that interrupted hoistrun, 0 none */
	int nsignals;   /* forwarded signals so far */

	double t_timeout; /* absolute monotonic seconds; 0 = not armed */
	double t_grace;   /* SIGTERM the remaining ranks at this time */
	double t_kill;    /* SIGKILL the remaining ranks at this time */
	const char **rank_dir; /* HOIST_RUNTIME_DIR per rank, or NULL */
	int tag_output;        /* --tag-output */
	int out_broken[2];     /* our stdout/stderr failed: drop, keep draining */
	int *bind_cpu;         /* --bind-to core: the CPU of each rank, or NULL */
};

static const char *prog_name = "hoistrun";

/* Daemons started by --nodes, or the one private daemon of a job that found
 * no hoistd answering (single). */
struct cluster {
	int n;
	int single;            /* 1: the private daemon, no cluster settings */
	char base[256];        /* temporary directory holding everything */
	char key[300];
	pid_t *pid;
	int *status;
	int *done;
	char (*dir)[300];
	int died;              /* a daemon exited before we stopped it */
};
static struct cluster *g_cluster;

/* "hoistd of node 3" or "the private hoistd", for messages */
static const char *dname(const struct cluster *cl, int i)
{
	static char buf[64];
	if (cl->single)
		return "the private hoistd";
	snprintf(buf, sizeof(buf), "hoistd of node %d", i);
	return buf;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s -n N [options] [--] prog [args...]\n"
		"\n"
		"Start N processes of prog on this node as one hoist job and wait for them.\n"
		"Each process gets HOIST_RANK (0..N-1), HOIST_SIZE=N, HOIST_JOB and\n"
		"HOIST_RUNTIME_DIR in its environment, which hoist_init() uses to attach to\n"
		"a hoistd.\n"
		"\n"
		"Which hoistd: the one answering in --runtime-dir DIR, else in\n"
		"$HOIST_RUNTIME_DIR, else in the directory libhoist would use (the per-user\n"
		"daemon's, else /run/hoist). When none answers there, hoistrun starts a\n"
		"private hoistd for the job in a fresh directory (mode 0700), waits until\n"
		"it is ready, and stops it after the job (a daemon that does not exit with\n"
		"status 0 fails the run). -v says which of the two happened.\n"
		"\n"
		"Options:\n"
		"  -n, --np N            number of processes (ranks), 1..%d (required)\n"
		"      --runtime-dir DIR the hoistd to use (HOIST_RUNTIME_DIR=DIR); a private\n"
		"                        one is started when none answers there\n"
		"      --nodes K         start K hoistd daemons on loopback (each its own\n"
		"                        runtime dir and port, a fresh cluster key), place\n"
		"                        the ranks on them in blocks, stop them afterwards\n"
		"      --runtime-dirs D1,D2,...  place the ranks in blocks on running daemons\n"
		"      --hoistd PATH     hoistd to start, for --nodes or a private daemon\n"
		"                        (default: $HOISTD, next to hoistrun, ../daemon/hoistd,\n"
		"                        ../sbin/hoistd of the install, then PATH)\n"
		"      --hoistd-arg ARG  pass ARG to every daemon hoistrun starts (repeat)\n"
		"      --job KEY         job key (HOIST_JOB); default hoistrun-<pid>-<ns>\n"
		"      --tag-output      prefix every line of each rank's stdout and stderr\n"
		"                        with [rank] (relayed whole lines, one pipe per rank\n"
		"                        and stream; a line longer than %d bytes is cut)\n"
		"      --timeout SEC     kill all ranks after SEC seconds, exit 124 (times\n"
		"                        $HOIST_TEST_SCALE when set, as the daemons' 10 s\n"
		"                        READY and 5 s stop limits and their 5 s peer and\n"
		"                        handshake timeouts: slow test builds)\n"
		"      --grace SEC       after a rank fails, wait SEC seconds (default %g)\n"
		"                        before terminating the others\n"
		"      --bind-to WHAT    core: bind rank i to the i-th CPU hoistrun may run\n"
		"                        on (round robin when there are more ranks than\n"
		"                        CPUs), as Open MPI's mpirun binds to cores; a rank\n"
		"                        that stays on its CPU waits for no migration in a\n"
		"                        node barrier. none (default): the ranks inherit\n"
		"                        hoistrun's CPU set. The daemons hoistrun starts are\n"
		"                        never bound.\n"
		"  -v, --verbose         print which hoistd is used, what is started and\n"
		"                        how each rank ended\n"
		"  -h, --help            this text\n"
		"      --version         print the version\n"
		"\n"
		"SIGINT, SIGTERM and SIGHUP are forwarded to all ranks; a second one kills\n"
		"them. Ranks other than 0 read stdin from /dev/null.\n"
		"\n"
		"Exit status: 0 if every rank exited 0; otherwise a line per failed rank is\n"
		"printed and the status is that of the first rank that failed (1 if it was\n"
		"killed by a signal, or if a daemon hoistrun started failed); 124 on\n"
		"--timeout; 127 if prog cannot be executed; 128+SIG if hoistrun was\n"
		"interrupted by signal SIG.\n"
		"\n"
		"Example:\n"
		"  hoistrun -n 4 ./hoist-demo                     # node's hoistd, or a private one\n"
		"  hoistrun -n 4 --tag-output --runtime-dir /tmp/hoist ./hoist-demo\n"
		"  hoistrun -n 8 --nodes 4 ./hoist-demo\n",
		prog_name, MAX_RANKS, TAG_LINE_MAX, DEFAULT_GRACE_S);
}

/* --bind-to core: rank i gets the (i mod n)-th of the n CPUs in hoistrun's
 * own affinity mask (a job started under taskset or a Slurm allocation
 * binds within it). */
static int bind_ranks(struct run *r)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0) {
		fprintf(stderr, "%s: --bind-to core: sched_getaffinity: %s\n", prog_name, strerror(errno));
		return -errno;
	}
	int cpus[CPU_SETSIZE], n = 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	r->bind_cpu = calloc((size_t)r->n, sizeof(*r->bind_cpu));
	if (!r->bind_cpu || n == 0) {
		fprintf(stderr, "%s: --bind-to core: %s\n", prog_name, n ? "out of memory" : "no CPU");
		return -ENOMEM;
	}
	for (int i = 0; i < r->n; i++)
		r->bind_cpu[i] = cpus[i % n];
	return 0;
}

static int parse_count(const char *s, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end)
		return -EINVAL;
	if (v < 1 || v > MAX_RANKS)
		return -ERANGE;
	*out = (int)v;
	return 0;
}

/* Seconds, fractional allowed; positive: must be > 0 (else >= 0). */
static int parse_seconds(const char *s, int positive, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v))
		return -EINVAL;
	if (v < 0 || (positive && v == 0) || v > 1e8)
		return -ERANGE;
	*out = v;
	return 0;
}

static void signal_rank(struct run *r, int i, int sig)
{
	struct rank *k = &r->ranks[i];
	if (k->state != R_RUNNING || k->pid <= 0)
		return; /* never kill(0) or kill(-1) */
	k->signalled = 1;
	/* Our own child: kill(-pgid) cannot hit anything but the rank's
	 * group, which it leads and which stays ours until we reap it. */
	if (k->own_pgrp) {
		if (kill(-k->pid, sig) == 0)
			return;
	}
	kill(k->pid, sig);
}

static void signal_all(struct run *r, int sig)
{
	for (int i = 0; i < r->n; i++)
		signal_rank(r, i, sig);
}

static void report_rank(const struct run *r, int i)
{
	const struct rank *k = &r->ranks[i];
	int st = k->status;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		if (r->verbose)
			fprintf(stderr, "%s: rank %d exited with status 0\n", prog_name, i);
		return;
	}
	if (WIFEXITED(st))
		fprintf(stderr, "%s: rank %d exited with status %d\n", prog_name, i,
			WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		fprintf(stderr, "%s: rank %d killed by signal %d (%s)%s\n", prog_name, i,
			WTERMSIG(st), strsignal(WTERMSIG(st)),
			k->signalled ? ", sent by hoistrun" : "");
	else
		fprintf(stderr, "%s: rank %d ended with wait status 0x%x\n", prog_name, i, st);
}

static int rank_of_pid(const struct run *r, pid_t pid)
{
	for (int i = 0; i < r->n; i++)
		if (r->ranks[i].pid == pid)
			return i;
	return -1;
}

static void reap(struct run *r)
{
	for (;;) {
		int st;
		pid_t pid = waitpid(-1, &st, WNOHANG);
		if (pid <= 0)
			return; /* 0: none ready; -1/ECHILD: none left */
		int i = rank_of_pid(r, pid);
		if (i < 0 && g_cluster) {
			for (int k = 0; k < g_cluster->n; k++)
				if (g_cluster->pid[k] == pid) {
					g_cluster->done[k] = 1;
					g_cluster->status[k] = st;
					g_cluster->died = 1;
					fprintf(stderr, "%s: %s exited during the run (log: %s/hoistd.log)\n",
						prog_name, dname(g_cluster, k), g_cluster->dir[k]);
				}
			continue;
		}
		if (i < 0 || r->ranks[i].state != R_RUNNING)
			continue;
		struct rank *k = &r->ranks[i];
		k->state = R_DONE;
		k->status = st;
		r->alive--;
		report_rank(r, i);
		int failed = !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		if (failed && r->first_fail < 0 && !k->signalled) {
			r->first_fail = i;
			if (r->alive > 0 && r->t_grace == 0 && r->t_kill == 0) {
				r->t_grace = now_s() + r->grace_s;
				if (r->verbose || r->grace_s > 0)
					fprintf(stderr,
						"%s: rank %d failed; %d rank%s left, terminating the rest in %g s unless they exit\n",
						prog_name, i, r->alive, r->alive == 1 ? "" : "s",
						r->grace_s);
			}
		}
	}
}

static int sigpipe_ignored_by_us; /* --tag-output: we write to pipes */

/* Restore what the child must not inherit from hoistrun. */
static void child_reset_signals(const sigset_t *orig_mask)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	if (sigpipe_ignored_by_us)
		sigaction(SIGPIPE, &sa, NULL);
	sigprocmask(SIG_SETMASK, orig_mask, NULL);
}

/*
 * Start rank i. The child reports an exec failure as an errno on a
 * close-on-exec pipe; EOF means exec succeeded. Returns 0, or -errno of the
 * failed fork/exec (after printing why).
 */
static int start_rank(struct run *r, int i, char **argv, const sigset_t *orig_mask,
		      int keep_rank0_fg)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%d", i);
	if (r->rank_dir && setenv("HOIST_RUNTIME_DIR", r->rank_dir[i], 1) != 0) {
		fprintf(stderr, "%s: setenv: %s\n", prog_name, strerror(errno));
		return -errno;
	}
	if (setenv("HOIST_RANK", buf, 1) != 0) {
		fprintf(stderr, "%s: setenv: %s\n", prog_name, strerror(errno));
		return -errno;
	}

	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0) {
		int e = errno;
		fprintf(stderr, "%s: pipe: %s\n", prog_name, strerror(e));
		return -e;
	}
	int out[2][2] = {{-1, -1}, {-1, -1}}; /* --tag-output: stdout, stderr */
	for (int s = 0; r->tag_output && s < 2; s++) {
		if (pipe2(out[s], O_CLOEXEC) != 0) {
			int e = errno;
			fprintf(stderr, "%s: pipe: %s\n", prog_name, strerror(e));
			for (int x = 0; x <= s; x++)
				for (int y = 0; y < 2; y++)
					if (out[x][y] >= 0)
						close(out[x][y]);
			close(p[0]);
			close(p[1]);
			return -e;
		}
	}
	pid_t parent = getpid();
	int own_pgrp = !(i == 0 && keep_rank0_fg);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		fprintf(stderr, "%s: fork for rank %d: %s\n", prog_name, i, strerror(e));
		close(p[0]);
		close(p[1]);
		for (int x = 0; r->tag_output && x < 2; x++) {
			close(out[x][0]);
			close(out[x][1]);
		}
		return -e;
	}
	if (pid == 0) {
		close(p[0]);
		if (r->tag_output) { /* dup2 clears close-on-exec on the copies */
			dup2(out[0][1], STDOUT_FILENO);
			dup2(out[1][1], STDERR_FILENO);
		}
		if (own_pgrp)
			setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) /* hoistrun died before prctl */
			_exit(EXIT_NOEXEC);
		if (i != 0) {
			int fd = open("/dev/null", O_RDONLY);
			if (fd >= 0 && fd != STDIN_FILENO) {
				dup2(fd, STDIN_FILENO);
				close(fd);
			}
		}
		child_reset_signals(orig_mask);
		int e[2] = {0, 0}; /* what failed (0 exec, 1 bind), errno */
		if (r->bind_cpu) {
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET(r->bind_cpu[i], &one);
			if (sched_setaffinity(0, sizeof(one), &one) != 0)
				e[0] = 1;
		}
		if (!e[0])
			execvp(argv[0], argv);
		e[1] = errno;
		ssize_t w = write(p[1], e, sizeof(e));
		(void)w;
		_exit(EXIT_NOEXEC);
	}
	/* Also in the parent, so that kill(-pid) works even if we signal the
	 * rank before it ran setpgid (EACCES after exec is harmless). */
	if (own_pgrp)
		setpgid(pid, pid);
	close(p[1]);

	struct rank *k = &r->ranks[i];
	for (int x = 0; r->tag_output && x < 2; x++) {
		close(out[x][1]);
		fcntl(out[x][0], F_SETFL, O_NONBLOCK);
		k->tag[x].fd = out[x][0];
		k->tag[x].len = 0;
	}
	k->pid = pid;
	k->own_pgrp = own_pgrp;
	k->state = R_RUNNING;
	r->alive++;

	int e[2] = {0, 0};
	ssize_t got;
	do
		got = read(p[0], e, sizeof(e));
	while (got < 0 && errno == EINTR);
	close(p[0]);
	if (got == (ssize_t)sizeof(e)) {
		if (e[0] == 1)
			fprintf(stderr, "%s: rank %d: cannot bind to CPU %d: %s\n", prog_name, i,
				r->bind_cpu[i], strerror(e[1]));
		else
			fprintf(stderr, "%s: cannot execute '%s': %s\n", prog_name, argv[0],
				strerror(e[1]));
		return -e[1];
	}
	if (r->verbose && r->bind_cpu)
		fprintf(stderr, "%s: rank %d: pid %d, CPU %d\n", prog_name, i, (int)pid,
			r->bind_cpu[i]);
	else if (r->verbose)
		fprintf(stderr, "%s: rank %d: pid %d\n", prog_name, i, (int)pid);
	return 0;
}

static void handle_signal(struct run *r, int sig, const siginfo_t *info)
{
	if (sig == SIGCHLD)
		return; /* reap() runs on every turn */
	r->nsignals++;
	if (!r->got_signal)
		r->got_signal = sig;
	if (r->nsignals > 1) {
		fprintf(stderr, "%s: %s again, killing all ranks\n", prog_name, strsignal(sig));
		signal_all(r, SIGKILL);
		return;
	}
	/* A terminal's SIGINT (si_code SI_KERNEL) already reached every process
	 * of the foreground group, i.e. a rank 0 that shares ours. */
	int from_tty = info->si_code == SI_KERNEL;
	for (int i = 0; i < r->n; i++) {
		if (from_tty && !r->ranks[i].own_pgrp)
			continue;
		signal_rank(r, i, sig);
	}
	if (r->verbose)
		fprintf(stderr, "%s: forwarded %s to the ranks\n", prog_name, strsignal(sig));
	/* Escalate to SIGKILL if they ignore it. */
	double t = now_s() + (r->grace_s > KILL_DELAY_S ? r->grace_s : KILL_DELAY_S);
	if (r->t_kill == 0 || r->t_kill > t)
		r->t_kill = t;
}

static void check_deadlines(struct run *r)
{
	double t = now_s();
	if (r->t_timeout > 0 && t >= r->t_timeout && !r->timed_out && r->alive > 0) {
		r->timed_out = 1;
		fprintf(stderr, "%s: timeout after %g s, terminating %d rank%s\n", prog_name,
			r->timeout_s, r->alive, r->alive == 1 ? "" : "s");
		signal_all(r, SIGTERM);
		r->t_grace = 0;
		if (r->t_kill == 0 || r->t_kill > t + KILL_DELAY_S)
			r->t_kill = t + KILL_DELAY_S;
	}
	if (r->t_grace > 0 && t >= r->t_grace) {
		r->t_grace = 0;
		if (r->alive > 0) {
			fprintf(stderr, "%s: terminating %d remaining rank%s\n", prog_name, r->alive,
				r->alive == 1 ? "" : "s");
			signal_all(r, SIGTERM);
			if (r->t_kill == 0 || r->t_kill > t + KILL_DELAY_S)
				r->t_kill = t + KILL_DELAY_S;
		}
	}
	if (r->t_kill > 0 && t >= r->t_kill) {
		r->t_kill = 0;
		if (r->alive > 0) {
			fprintf(stderr, "%s: killing %d rank%s that did not exit\n", prog_name,
				r->alive, r->alive == 1 ? "" : "s");
			signal_all(r, SIGKILL);
		}
	}
}

static double next_deadline(const struct run *r)
{
	double d = 0;
	const double c[3] = {r->timed_out ? 0 : r->t_timeout, r->t_grace, r->t_kill};
	for (int j = 0; j < 3; j++)
		if (c[j] > 0 && (d == 0 || c[j] < d))
			d = c[j];
	return d;
}

/* ---- --tag-output ---------------------------------------------------- */

#define TAG_DRAIN_S 1.0 /* after the last rank exited: how long a pipe that
			   stays open (a rank's leftover child) may be silent */

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) { /* a non-blocking stdout */
				struct pollfd pf = {.fd = fd, .events = POLLOUT};
				poll(&pf, 1, -1);
				continue;
			}
			return -errno;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Write "[i] " a b "\n" to our stdout (s 0) or stderr (s 1), in one piece.
 * hoistrun is the only writer of relayed output and single-threaded, so
 * lines never mix. */
static void tag_emit(struct run *r, int i, int s, const char *a, size_t an, const char *b, size_t bn)
{
	if (r->out_broken[s])
		return;
	char *line = malloc(an + bn + 24);
	if (!line)
		return;
	int pl = snprintf(line, 24, "[%d] ", i);
	memcpy(line + pl, a, an);
	memcpy(line + pl + an, b, bn);
	line[(size_t)pl + an + bn] = '\n';
	if (write_all(s ? STDERR_FILENO : STDOUT_FILENO, line, (size_t)pl + an + bn + 1))
		r->out_broken[s] = 1; /* keep draining the ranks' pipes */
	free(line);
}

/* Read what rank i wrote to stream s; relay its complete lines. Returns the
 * bytes read, 0 at EOF (the pipe is closed then, an unfinished last line
 * relayed with a newline), -1 when nothing was there. */
static ssize_t tag_read(struct run *r, int i, int s)
{
	struct tagbuf *t = &r->ranks[i].tag[s];
	static char in[65536];
	ssize_t got = read(t->fd, in, sizeof(in));
	if (got < 0 && (errno == EAGAIN || errno == EINTR))
		return -1;
	if (got <= 0) { /* EOF (or an error, same thing here) */
		if (t->len)
			tag_emit(r, i, s, t->buf, t->len, "", 0);
		t->len = 0;
		close(t->fd);
		t->fd = -1;
		free(t->buf);
		t->buf = NULL;
		return 0;
	}
	const char *p = in, *end = in + got;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (nl) {
			tag_emit(r, i, s, t->buf ? t->buf : "", t->len, p, (size_t)(nl - p));
			t->len = 0;
			p = nl + 1;
			continue;
		}
		/* an unfinished line: keep it, relay it in pieces when too long */
		if (!t->buf && !(t->buf = malloc(TAG_LINE_MAX))) {
			tag_emit(r, i, s, p, (size_t)(end - p), "", 0);
			break;
		}
		size_t n = (size_t)(end - p), room = TAG_LINE_MAX - t->len;
		size_t take = n < room ? n : room;
		memcpy(t->buf + t->len, p, take);
		t->len += take;
		p += take;
		if (t->len == TAG_LINE_MAX) {
			tag_emit(r, i, s, t->buf, t->len, "", 0);
			t->len = 0;
		}
	}
	return got;
}

/* wait_loop for --tag-output: signals through a signalfd, so that one poll
 * waits for them, the ranks' output and the next deadline. After the last
 * rank exited, what its pipes still hold is relayed up to EOF. */
static void wait_loop_tagged(struct run *r, int sfd)
{
	struct pollfd *pf = calloc((size_t)r->n * 2 + 1, sizeof(*pf));
	int *who = calloc((size_t)r->n * 2 + 1, sizeof(*who));
	if (!pf || !who) {
		fprintf(stderr, "%s: out of memory\n", prog_name);
		exit(1);
	}
	double lull = 0; /* all ranks gone: give up on silent pipes at this time */
	for (;;) {
		reap(r);
		check_deadlines(r);
		int np = 0;
		pf[np++] = (struct pollfd){.fd = sfd, .events = POLLIN};
		for (int i = 0; i < r->n; i++)
			for (int s = 0; s < 2; s++)
				if (r->ranks[i].tag[s].fd >= 0) {
					who[np] = i * 2 + s;
					pf[np++] = (struct pollfd){.fd = r->ranks[i].tag[s].fd, .events = POLLIN};
				}
		if (r->alive == 0) {
			if (np == 1)
				break;
			if (lull == 0)
				lull = now_s() + TAG_DRAIN_S;
			else if (now_s() >= lull)
				break;
		}
		double d = next_deadline(r);
		if (r->alive == 0)
			d = lull;
		int ms = -1;
		if (d > 0) {
			double left = d - now_s();
			ms = left <= 0 ? 0 : (int)(left * 1000) + 1;
		}
		if (poll(pf, (nfds_t)np, ms) <= 0)
			continue;
		if (pf[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				siginfo_t info;
				memset(&info, 0, sizeof(info));
				info.si_code = si.ssi_code;
				handle_signal(r, (int)si.ssi_signo, &info);
			}
		}
		for (int k = 1; k < np; k++)
			if (pf[k].revents) {
				/* drain it: whatever is in the pipe when the rank
				 * exits is relayed, however much that is */
				/* bounded, so a rank that never stops writing
				 * cannot keep us from signals and deadlines */
				for (int rounds = 0; rounds < 16; rounds++) {
					if (tag_read(r, who[k] / 2, who[k] % 2) <= 0)
						break;
					if (r->alive == 0)
						lull = now_s() + TAG_DRAIN_S;
				}
			}
	}
	/* silent pipes still open (held by a rank's children): relay the
	 * unfinished lines, close */
	for (int i = 0; i < r->n; i++)
		for (int s = 0; s < 2; s++) {
			struct tagbuf *t = &r->ranks[i].tag[s];
			if (t->fd < 0)
				continue;
			if (t->len)
				tag_emit(r, i, s, t->buf, t->len, "", 0);
			close(t->fd);
			t->fd = -1;
			free(t->buf);
			t->buf = NULL;
		}
	free(pf);
	free(who);
}

static void wait_loop(struct run *r, const sigset_t *set)
{
	for (;;) {
		reap(r);
		check_deadlines(r);
		if (r->alive == 0)
			return;
		double d = next_deadline(r);
		siginfo_t info;
		int sig;
		if (d > 0) {
			double left = d - now_s();
			if (left < 0)
				left = 0;
			struct timespec ts;
			ts.tv_sec = (time_t)left;
			ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
			if (ts.tv_nsec > 999999999L)
				ts.tv_nsec = 999999999L;
			sig = sigtimedwait(set, &info, &ts);
		} else {
			sig = sigwaitinfo(set, &info);
		}
		if (sig > 0)
			handle_signal(r, sig, &info);
	}
}

static int exit_status(const struct run *r)
{
	if (r->timed_out)
		return EXIT_TIMEOUT;
	if (r->got_signal)
		return 128 + r->got_signal;
	if (r->exec_failed)
		return EXIT_NOEXEC;
	if (r->first_fail >= 0) {
		int st = r->ranks[r->first_fail].status;
		if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
			return WEXITSTATUS(st);
		return 1;
	}
	for (int i = 0; i < r->n; i++) {
		int st = r->ranks[i].status;
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
			return 1;
	}
	return 0;
}

/* ---- --nodes: daemons on loopback ------------------------------------- */

static int find_hoistd(char *out, size_t len, const char *given)
{
	if (given) {
		snprintf(out, len, "%s", given);
		return access(out, X_OK) == 0 ? 0 : -errno;
	}
	const char *env = getenv("HOISTD");
	if (env && *env) {
		snprintf(out, len, "%s", env);
		return access(out, X_OK) == 0 ? 0 : -errno;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			static const char *const rel[] = {"/hoistd", "/../daemon/hoistd", "/../sbin/hoistd"};
			for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
				snprintf(out, len, "%s%s", self, rel[i]);
				if (access(out, X_OK) == 0)
					return 0;
			}
		}
	}
	snprintf(out, len, "hoistd"); /* from PATH */
	return 0;
}

/* Free loopback ports: bind to port 0 and keep them all bound until every
 * one is chosen, so no two daemons get the same. */
static int pick_ports(int k, int *ports)
{
	int *fds = calloc((size_t)k, sizeof(int)), rc = 0;
	if (!fds)
		return -ENOMEM;
	for (int i = 0; i < k; i++) {
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t sl = sizeof(sa);
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
		    getsockname(fds[i], (struct sockaddr *)&sa, &sl) < 0) {
			rc = -errno;
			break;
		}
		ports[i] = ntohs(sa.sin_port);
	}
	for (int i = 0; i < k; i++)
		if (fds[i] > 0)
			close(fds[i]);
	free(fds);
	return rc;
}

static void cluster_cleanup_files(struct cluster *cl, int keep)
{
	if (keep) {
		fprintf(stderr, "%s: daemon logs kept in %s\n", prog_name, cl->base);
		return;
	}
	char path[400];
	for (int i = 0; i < cl->n; i++) {
		snprintf(path, sizeof(path), "%s/hoistd.log", cl->dir[i]);
		unlink(path);
		rmdir(cl->dir[i]);
	}
	unlink(cl->key);
	snprintf(path, sizeof(path), "%s/nodes", cl->base); /* the hostfile of a long node list */
	unlink(path);
	rmdir(cl->base);
}

static void print_log(const char *dir)
{
	char path[400], line[512];
	snprintf(path, sizeof(path), "%s/hoistd.log", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "  | %s", line);
	fclose(f);
}

/* Stop the daemons; 0 if every one exited with status 0. */
/* HOIST_TEST_SCALE (>= 1): test suites on sanitizer builds or loaded
 * machines stretch every time limit by this factor (--timeout, the
 * daemons' READY and stop; tests/integration/it_common.h). */
static double test_scale(void)
{
	const char *sc = getenv("HOIST_TEST_SCALE");
	double f = sc ? strtod(sc, NULL) : 1.0;
	return f > 1.0 && f <= 1000.0 ? f : 1.0;
}

static int cluster_stop(struct cluster *cl, int verbose)
{
	int bad = 0;
	for (int i = 0; i < cl->n; i++)
		if (!cl->done[i] && cl->pid[i] > 0)
			kill(cl->pid[i], SIGTERM);
	double deadline = now_s() + 5 * test_scale();
	for (int i = 0; i < cl->n; i++) {
		while (!cl->done[i] && cl->pid[i] > 0) {
			int st;
			pid_t p = waitpid(cl->pid[i], &st, WNOHANG);
			if (p == cl->pid[i]) {
				cl->done[i] = 1;
				cl->status[i] = st;
				break;
			}
			if (p < 0) {
				cl->done[i] = 1;
				cl->status[i] = 0;
				break;
			}
			if (now_s() > deadline) {
				fprintf(stderr, "%s: %s did not stop; killing it\n", prog_name, dname(cl, i));
				kill(cl->pid[i], SIGKILL);
				deadline = now_s() + 5;
			}
			struct timespec ts = {0, 10 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
		int st = cl->status[i];
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			bad = 1;
			fprintf(stderr, "%s: %s ended badly (wait status 0x%x); its log:\n",
				prog_name, dname(cl, i), st);
			print_log(cl->dir[i]);
		}
	}
	cluster_cleanup_files(cl, bad || (verbose && !cl->single));
	if (verbose && cl->single)
		fprintf(stderr, "%s: stopped the private hoistd (pid %d): %s\n", prog_name, (int)cl->pid[0],
			bad ? "it failed" : "exit status 0");
	return bad ? -EIO : 0;
}

static int cluster_start(struct cluster *cl, int k, const char *hoistd_given, char **extra,
			 int nextra, int verbose, int single)
{
	char hoistd[PATH_MAX];
	int rc = find_hoistd(hoistd, sizeof(hoistd), hoistd_given);
	if (rc) {
		fprintf(stderr, "%s: hoistd not found or not executable: %s\n", prog_name, strerror(-rc));
		return rc;
	}
	cl->n = 0;
	cl->single = single;
	cl->pid = calloc((size_t)k, sizeof(*cl->pid));
	cl->status = calloc((size_t)k, sizeof(*cl->status));
	cl->done = calloc((size_t)k, sizeof(*cl->done));
	cl->dir = calloc((size_t)k, sizeof(*cl->dir));
	int *ports = calloc((size_t)k, sizeof(int));
	if (!cl->pid || !cl->status || !cl->done || !cl->dir || !ports)
		return -ENOMEM;
	const char *tmp = getenv("TMPDIR");
	snprintf(cl->base, sizeof(cl->base), "%s/hoistrun-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(cl->base)) {
		fprintf(stderr, "%s: mkdtemp: %s\n", prog_name, strerror(errno));
		return -errno;
	}
	/* the cluster key (32 random bytes, hex, readable by us only) and the
	 * ports; one private daemon has neither: it is no cluster */
	char *nodes = NULL;
	snprintf(cl->key, sizeof(cl->key), "%s/cluster.key", cl->base);
	if (!single) {
		unsigned char raw[32];
		if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
			return -EIO;
		int kfd = open(cl->key, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (kfd < 0)
			return -errno;
		char hex[65];
		for (int i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", raw[i]);
		ssize_t w = write(kfd, hex, 64);
		close(kfd);
		if (w != 64)
			return -EIO;
		if ((rc = pick_ports(k, ports))) {
			fprintf(stderr, "%s: cannot find free ports: %s\n", prog_name, strerror(-rc));
			free(ports);
			return rc;
		}
		size_t nl = (size_t)k * 24 + 1;
		nodes = calloc(nl, 1);
		if (!nodes)
			return -ENOMEM;
		for (int i = 0; i < k; i++) {
			size_t at = strlen(nodes);
			snprintf(nodes + at, nl - at, "%s127.0.0.1:%d", i ? "," : "", ports[i]);
		}
		/* a setting holds 255 bytes (about 15 daemons' host:port): a
		 * longer list goes to hoistd as a hostfile, one host:port a line */
		if (strlen(nodes) > 255) {
			char hf[PATH_MAX];
			snprintf(hf, sizeof(hf), "%s/nodes", cl->base);
			FILE *f = fopen(hf, "wx");
			if (!f) {
				rc = -errno;
				fprintf(stderr, "%s: cannot write %s: %s\n", prog_name, hf, strerror(-rc));
				free(nodes);
				free(ports);
				return rc;
			}
			for (char *p = nodes; *p; p++)
				fputc(*p == ',' ? '\n' : *p, f);
			fputc('\n', f);
			if (fclose(f)) {
				free(nodes);
				free(ports);
				return -EIO;
			}
			free(nodes);
			nodes = malloc(strlen(hf) + 2);
			if (!nodes) {
				free(ports);
				return -ENOMEM;
			}
			snprintf(nodes, strlen(hf) + 2, "@%s", hf);
		}
	}
	free(ports);

	int *ready = calloc((size_t)k, sizeof(int));
	if (!ready) {
		free(nodes);
		return -ENOMEM;
	}
	for (int i = 0; i < k; i++) {
		snprintf(cl->dir[i], sizeof(cl->dir[i]), "%s/node%d", cl->base, i);
		if (mkdir(cl->dir[i], 0700) < 0) {
			rc = -errno;
			break;
		}
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0) {
			rc = -errno;
			break;
		}
		char log[400], id[16], rfd[16];
		snprintf(log, sizeof(log), "%s/hoistd.log", cl->dir[i]);
		snprintf(id, sizeof(id), "%d", i);
		snprintf(rfd, sizeof(rfd), "%d", p[1]);
		pid_t pid = fork();
		if (pid == 0) {
			fcntl(p[1], F_SETFD, 0); /* the one fd hoistd inherits */
			int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
			if (lfd >= 0)
				dup2(lfd, STDERR_FILENO);
			setpgid(0, 0);
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			char **av = calloc((size_t)nextra + 16, sizeof(char *));
			int a = 0;
			av[a++] = hoistd;
			av[a++] = "--runtime-dir";
			av[a++] = cl->dir[i];
			if (!single) {
				av[a++] = "--nodes";
				av[a++] = nodes;
				av[a++] = "--node-id";
				av[a++] = id;
				av[a++] = "--cluster-key-file";
				av[a++] = cl->key;
			}
			av[a++] = "--ready-fd";
			av[a++] = rfd;
			/* a slow (sanitizer) build stretches the daemons' liveness
			 * limits too, before the caller's own --hoistd-arg */
			char pto[32], hto[32];
			if (test_scale() > 1) {
				snprintf(pto, sizeof(pto), "--peer-timeout-ms=%.0f", 5000 * test_scale());
				snprintf(hto, sizeof(hto), "--handshake-timeout-ms=%.0f",
					 5000 * test_scale());
				av[a++] = pto;
				av[a++] = hto;
			}
			for (int x = 0; x < nextra; x++)
				av[a++] = extra[x];
			av[a] = NULL;
			execvp(hoistd, av);
			fprintf(stderr, "cannot execute %s: %s\n", hoistd, strerror(errno));
			_exit(EXIT_NOEXEC);
		}
		close(p[1]);
		if (pid < 0) {
			rc = -errno;
			close(p[0]);
			break;
		}
		cl->pid[i] = pid;
		ready[i] = p[0];
		cl->n++;
	}
	/* every daemon says READY (or dies: EOF) within 10 s (scaled) */
	double deadline = now_s() + 10 * test_scale();
	for (int i = 0; i < cl->n && !rc; i++) {
		struct pollfd pf = {.fd = ready[i], .events = POLLIN};
		int left = (int)((deadline - now_s()) * 1000);
		char buf[8] = {0};
		if (left < 0 || poll(&pf, 1, left) != 1 || read(ready[i], buf, sizeof(buf)) < 5 ||
		    strncmp(buf, "READY", 5) != 0) {
			fprintf(stderr, "%s: %s did not become ready; its log:\n", prog_name, dname(cl, i));
			print_log(cl->dir[i]);
			rc = -EIO;
		}
	}
	for (int i = 0; i < cl->n; i++)
		close(ready[i]);
	free(ready);
	free(nodes);
	if (rc) {
		cluster_stop(cl, 1);
		return rc;
	}
	if (verbose && single)
		fprintf(stderr, "%s: started a private hoistd (%s, pid %d) in %s for this job\n", prog_name,
			hoistd, (int)cl->pid[0], cl->dir[0]);
	else if (verbose)
		fprintf(stderr, "%s: %d daemons ready under %s\n", prog_name, cl->n, cl->base);
	return 0;
}

/* ---- which hoistd --------------------------------------------------- */

/* The runtime directory libhoist would use (client/env.c): HOIST_RUNTIME_DIR,
 * else the per-user daemon's directory when its socket exists, else the
 * node's /run/hoist. */
static void default_runtime_dir(char *buf, size_t len)
{
	const char *env = getenv("HOIST_RUNTIME_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char sock[PATH_MAX + 16];
	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	if (getuid() != 0) {
		if (xdg && *xdg)
			snprintf(buf, len, "%s/hoist", xdg);
		else
			snprintf(buf, len, "/tmp/hoist-%u", (unsigned)getuid());
		snprintf(sock, sizeof(sock), "%s/hoistd.sock", buf);
		if (access(sock, F_OK) == 0)
			return;
	}
	snprintf(buf, len, "/run/hoist");
}

/* Does a hoistd accept connections on DIR's attach socket? */
static int daemon_answers(const char *dir)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/hoistd.sock", dir) >=
	    sizeof(sa.sun_path))
		return 0;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	int ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/* Split "a,b,c" into dirs (pointers into s). */
static int split_dirs(char *s, const char ***out)
{
	int n = 1;
	for (char *p = s; *p; p++)
		n += *p == ',';
	const char **v = calloc((size_t)n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	int k = 0;
	char *save = NULL;
	for (char *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save))
		v[k++] = t;
	*out = v;
	return k;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"np", required_argument, NULL, 'n'},
		{"runtime-dir", required_argument, NULL, 'R'},
		{"job", required_argument, NULL, 'J'},
		{"timeout", required_argument, NULL, 'T'},
		{"grace", required_argument, NULL, 'G'},
		{"nodes", required_argument, NULL, 'N'},
		{"runtime-dirs", required_argument, NULL, 'D'},
		{"hoistd", required_argument, NULL, 'H'},
		{"hoistd-arg", required_argument, NULL, 'A'},
		{"tag-output", no_argument, NULL, 'O'},
		{"bind-to", required_argument, NULL, 'B'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct run r;
	memset(&r, 0, sizeof(r));
	r.first_fail = -1;
	r.grace_s = DEFAULT_GRACE_S;
	const char *runtime_dir = NULL, *job = NULL, *hoistd = NULL;
	char *dirs_arg = NULL;
	char *extra[64];
	int nextra = 0, nodes = 0, bind_core = 0;
	int rc;

	if (argc > 0 && argv[0] && strrchr(argv[0], '/'))
		prog_name = strrchr(argv[0], '/') + 1;
	else if (argc > 0 && argv[0] && *argv[0])
		prog_name = argv[0];

	opterr = 0;
	int c;
	/* '+': stop at the first non-option, the program's own flags are its. */
	while ((c = getopt_long(argc, argv, "+:n:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			rc = parse_count(optarg, &r.n);
			if (rc) {
				fprintf(stderr, "%s: -n wants a number of processes between 1 and %d, not '%s'\n",
					prog_name, MAX_RANKS, optarg);
				return 2;
			}
			break;
		case 'R':
			if (!*optarg) {
				fprintf(stderr, "%s: --runtime-dir wants a directory\n", prog_name);
				return 2;
			}
			runtime_dir = optarg;
			break;
		case 'J':
			if (!*optarg || strlen(optarg) > 255) {
				fprintf(stderr, "%s: --job wants a key of 1..255 characters\n", prog_name);
				return 2;
			}
			job = optarg;
			break;
		case 'T':
			if (parse_seconds(optarg, 1, &r.timeout_s)) {
				fprintf(stderr, "%s: --timeout wants seconds > 0, not '%s'\n", prog_name, optarg);
				return 2;
			}
			break;
		case 'G':
			if (parse_seconds(optarg, 0, &r.grace_s)) {
				fprintf(stderr, "%s: --grace wants seconds >= 0, not '%s'\n", prog_name, optarg);
				return 2;
			}
			break;
		case 'N':
			if (parse_count(optarg, &nodes) || nodes > 4096) {
				fprintf(stderr, "%s: --nodes wants a number of daemons between 1 and 4096, not '%s'\n",
					prog_name, optarg);
				return 2;
			}
			break;
		case 'D':
			dirs_arg = optarg;
			break;
		case 'H':
			hoistd = optarg;
			break;
		case 'A':
			if (nextra == 64) {
				fprintf(stderr, "%s: too many --hoistd-arg\n", prog_name);
				return 2;
			}
			extra[nextra++] = optarg;
			break;
		case 'B':
			if (!strcmp(optarg, "core") || !strcmp(optarg, "none")) {
				bind_core = !strcmp(optarg, "core");
				break;
			}
			fprintf(stderr, "%s: --bind-to wants core or none, not '%s'\n", prog_name, optarg);
			return 2;
		case 'O': r.tag_output = 1; break;
		case 'v': r.verbose = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("hoistrun %s\n", HOIST_VERSION_STRING); return 0;
		case ':':
			fprintf(stderr, "%s: option '%s' needs a value\n", prog_name, argv[optind - 1]);
			fprintf(stderr, "Try '%s --help'.\n", prog_name);
			return 2;
		default:
			if (optopt)
				fprintf(stderr, "%s: unknown option '-%c'\n", prog_name, optopt);
			else
				fprintf(stderr, "%s: unknown option '%s'\n", prog_name, argv[optind - 1]);
			fprintf(stderr, "Try '%s --help'.\n", prog_name);
			return 2;
		}
	}
	if (r.n == 0) {
		fprintf(stderr, "%s: missing -n N (the number of processes)\n", prog_name);
		fprintf(stderr, "Try '%s --help'.\n", prog_name);
		return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no program to run\n", prog_name);
		fprintf(stderr, "Try '%s --help'.\n", prog_name);
		return 2;
	}
	char **prog = &argv[optind];
	if ((nodes > 0) + (dirs_arg != NULL) + (runtime_dir != NULL) > 1) {
		fprintf(stderr, "%s: --nodes, --runtime-dirs and --runtime-dir exclude each other\n",
			prog_name);
		return 2;
	}

	/* No --nodes, no --runtime-dirs: the hoistd answering where libhoist
	 * would look, else a private one for this job. */
	static struct cluster cl;
	char probe_dir[PATH_MAX];
	if (nodes == 0 && !dirs_arg) {
		if (runtime_dir)
			snprintf(probe_dir, sizeof(probe_dir), "%s", runtime_dir);
		else
			default_runtime_dir(probe_dir, sizeof(probe_dir));
		if (daemon_answers(probe_dir)) {
			runtime_dir = probe_dir;
			if (r.verbose)
				fprintf(stderr, "%s: using the hoistd answering in %s\n", prog_name, probe_dir);
		} else {
			if (r.verbose)
				fprintf(stderr, "%s: no hoistd answers in %s: starting a private one\n",
					prog_name, probe_dir);
			if (cluster_start(&cl, 1, hoistd, extra, nextra, r.verbose, 1))
				return 1;
			g_cluster = &cl;
			runtime_dir = cl.dir[0];
		}
	}

	char keybuf[96];
	if (!job) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		snprintf(keybuf, sizeof(keybuf), "hoistrun-%d-%llu", (int)getpid(),
			 (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
		job = keybuf;
	}
	char sizebuf[32];
	snprintf(sizebuf, sizeof(sizebuf), "%d", r.n);
	if (setenv("HOIST_SIZE", sizebuf, 1) || setenv("HOIST_JOB", job, 1) ||
	    (runtime_dir && setenv("HOIST_RUNTIME_DIR", runtime_dir, 1))) {
		fprintf(stderr, "%s: setenv: %s\n", prog_name, strerror(errno));
		return 1;
	}

	r.ranks = calloc((size_t)r.n, sizeof(*r.ranks));
	if (!r.ranks) {
		fprintf(stderr, "%s: out of memory\n", prog_name);
		return 1;
	}
	for (int i = 0; i < r.n; i++)
		r.ranks[i].tag[0].fd = r.ranks[i].tag[1].fd = -1;

	/* where each rank attaches: blocks of ranks per daemon */
	const char **daemon_dirs = NULL;
	int ndaemons = 0;
	if (dirs_arg) {
		ndaemons = split_dirs(dirs_arg, &daemon_dirs);
		if (ndaemons <= 0) {
			fprintf(stderr, "%s: --runtime-dirs wants DIR[,DIR...]\n", prog_name);
			return 2;
		}
	} else if (nodes > 0) {
		if (cluster_start(&cl, nodes, hoistd, extra, nextra, r.verbose, 0))
			return 1;
		g_cluster = &cl;
		ndaemons = cl.n;
		daemon_dirs = calloc((size_t)ndaemons, sizeof(*daemon_dirs));
		if (!daemon_dirs)
			return 1;
		for (int i = 0; i < ndaemons; i++)
			daemon_dirs[i] = cl.dir[i];
	}
	if (ndaemons) {
		r.rank_dir = calloc((size_t)r.n, sizeof(*r.rank_dir));
		if (!r.rank_dir)
			return 1;
		for (int i = 0; i < r.n; i++)
			r.rank_dir[i] = daemon_dirs[(int)((long long)i * ndaemons / r.n)];
	}

	if (bind_core && bind_ranks(&r))
		return 1;

	/* Take the signals we care about synchronously from here on; the
	 * children get the original mask back before exec. */
	sigset_t set, orig;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, &orig) != 0) {
		fprintf(stderr, "%s: sigprocmask: %s\n", prog_name, strerror(errno));
		return 1;
	}
	int sfd = -1;
	if (r.tag_output) {
		/* we write the ranks' output to our stdout/stderr: a closed one
		 * must not kill us (and through PDEATHSIG, the job) */
		struct sigaction old;
		if (sigaction(SIGPIPE, NULL, &old) == 0 && old.sa_handler != SIG_IGN) {
			signal(SIGPIPE, SIG_IGN);
			sigpipe_ignored_by_us = 1;
		}
		sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
		if (sfd < 0) {
			fprintf(stderr, "%s: signalfd: %s\n", prog_name, strerror(errno));
			return 1;
		}
	}

	/* Rank 0 keeps the terminal when we are the terminal's foreground job. */
	int keep_rank0_fg = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();

	if (r.verbose)
		fprintf(stderr, "%s: job %s, %d rank%s of %s%s%s\n", prog_name, job, r.n,
			r.n == 1 ? "" : "s", prog[0], runtime_dir ? ", runtime dir " : "",
			runtime_dir ? runtime_dir : "");

	if (r.timeout_s > 0) {
		r.timeout_s *= test_scale();
		r.t_timeout = now_s() + r.timeout_s;
	}
	for (int i = 0; i < r.n; i++) {
		rc = start_rank(&r, i, prog, &orig, keep_rank0_fg);
		if (rc) {
			r.exec_failed = 1;
			if (r.alive > 0) {
				signal_all(&r, SIGTERM);
				r.t_kill = now_s() + KILL_DELAY_S;
			}
			break;
		}
		/* A signal during startup: stop starting more ranks. */
		struct timespec zero = {0, 0};
		siginfo_t info;
		int sig;
		while ((sig = sigtimedwait(&set, &info, &zero)) > 0)
			handle_signal(&r, sig, &info);
		if (r.got_signal)
			break;
	}

	if (r.tag_output)
		wait_loop_tagged(&r, sfd);
	else
		wait_loop(&r, &set);
	if (sfd >= 0)
		close(sfd);
	int status = exit_status(&r);
	if (g_cluster && (cluster_stop(g_cluster, r.verbose) || g_cluster->died) && status == 0)
		status = 1; /* a daemon that crashed fails the run */
	if (g_cluster) {
		free(cl.pid);
		free(cl.status);
		free(cl.done);
		free(cl.dir);
	}
	free(daemon_dirs);
	free(r.rank_dir);
	free(r.bind_cpu);
	if (r.verbose)
		fprintf(stderr, "%s: exit status %d\n", prog_name, status);
	free(r.ranks);
	return status;
}
