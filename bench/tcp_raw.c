/*
 * tcp-raw: what plain TCP over loopback costs on this machine, the
 * reference for hoist's multi-node rows (bench/run-nodes.sh).
 *
 *   tcp-raw [--reps N] [--scale F] [--test LIST] [--bw-sizes L] [--pin] [--json | --tsv]
 *
 * Every measurement forks a server process that connects to a listener on
 * 127.0.0.1 owned by this process (the client); both ends set TCP_NODELAY,
 * as hoistd does between daemons. The client does all the timing.
 *
 *   rtt        ping-pong of 8 B and 4 KiB messages, blocking sockets: the
 *              client sends a message, the server reads it completely and
 *              sends it back. Mean round trip per rep.
 *   rtt-busy   the same with MSG_DONTWAIT and spinning on EAGAIN on both
 *              sides (hoistd's progress threads busy-poll their sockets).
 *   stream     64 KiB and 1 MiB messages (--bw-sizes: any list of sizes),
 *              client -> server, 64 MiB per rep (blocking); the server
 *              answers the rep's last 8 bytes once it has read all of the
 *              rep, so a rep is timed like puts + quiet.
 *
 * Each measurement is warmed up, then repeated --reps times; a row shows
 * the median, min and max over the reps. Received data is checked (the
 * echo carries the sequence number and the last byte, the stream's
 * acknowledgement the stamp of the rep's last message).
 */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "bench.h"

#define MAX_REPS 101
#define MAX_ROWS (8 + BENCH_MAX_SIZES)
#define STREAM_BYTES (64ull << 20) /* per rep */

enum { T_RTT = 1, T_RTT_BUSY = 2, T_STREAM = 4, T_ALL = 7 };

static struct {
	int reps, tests, json, tsv, header, footer, pin;
	double scale;
	size_t bw_sizes[BENCH_MAX_SIZES]; /* --bw-sizes: the stream's message sizes */
	int n_bw_sizes;
} opt = {.reps = 7, .tests = T_ALL, .header = 1, .footer = 1, .scale = 1.0,
	 .bw_sizes = {64u << 10, 1u << 20}, .n_bw_sizes = 2};

struct row {
	char name[64];
	const char *unit;
	double v[MAX_REPS];
	double med, min, max;
};
static struct row rows[MAX_ROWS];
static int nrows;

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "tcp-raw: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static long scaled(long n)
{
	long v = (long)((double)n * opt.scale);
	return v < 1 ? 1 : v;
}

static void add_row(const char *name, const char *unit, const double *v)
{
	if (nrows == MAX_ROWS)
		die("too many rows");
	struct row *r = &rows[nrows++];
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->unit = unit;
	memcpy(r->v, v, sizeof(double) * (size_t)opt.reps);
	bench_stats(v, opt.reps, &r->med, &r->min, &r->max);
}

/* ---- sockets ------------------------------------------------------------ */

static void nodelay(int fd)
{
	int one = 1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		die("TCP_NODELAY: %s", strerror(errno));
}

/* Whole-buffer transfers. busy: MSG_DONTWAIT and spin on EAGAIN. 0 or -1
 * (EOF or error; errno set). */
static int send_all(int fd, const void *p, size_t n, int busy)
{
	const char *c = p;
	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL | (busy ? MSG_DONTWAIT : 0));
		if (w < 0) {
			if (errno == EINTR || (busy && (errno == EAGAIN || errno == EWOULDBLOCK)))
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int recv_all(int fd, void *p, size_t n, int busy)
{
	char *c = p;
	while (n) {
		ssize_t r = recv(fd, c, n, busy ? MSG_DONTWAIT : 0);
		if (r < 0) {
			if (errno == EINTR || (busy && (errno == EAGAIN || errno == EWOULDBLOCK)))
				continue;
			return -1;
		}
		if (r == 0) {
			errno = ECONNRESET;
			return -1;
		}
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

static void pin_to(int cpu)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	(void)sched_setaffinity(0, sizeof(one), &one);
}

/* The first two CPUs this process may use, or -1. */
static void two_cpus(int *a, int *b)
{
	cpu_set_t set;
	*a = *b = -1;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			if (*a < 0)
				*a = c;
			else {
				*b = c;
				return;
			}
		}
}

struct conn {
	int fd;
	pid_t child;
	volatile int *srv_cpu; /* shared: the CPU the server last ran on */
};

enum srv_mode { SRV_ECHO, SRV_ECHO_BUSY, SRV_SINK };

/* Forks the server, which connects to our listener and runs mode over
 * msg-byte messages: echoes `count` messages, or (SRV_SINK) reads `count`
 * chunks of `total` bytes and answers one byte after each. */
static struct conn start_server(enum srv_mode mode, size_t msg, long count, uint64_t total)
{
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0)
		die("socket: %s", strerror(errno));
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 1) < 0 ||
	    getsockname(ls, (struct sockaddr *)&sa, &sl) < 0)
		die("listen on 127.0.0.1: %s", strerror(errno));
	int ca = -1, cb = -1;
	if (opt.pin)
		two_cpus(&ca, &cb);
	volatile int *srv_cpu = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (srv_cpu == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	*srv_cpu = -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(ls);
		if (cb >= 0)
			pin_to(cb);
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			_exit(2);
		nodelay(fd);
		unsigned char *buf = malloc(msg);
		if (!buf)
			_exit(3);
		int busy = mode == SRV_ECHO_BUSY;
		for (long i = 0; i < count; i++) {
			if (mode == SRV_SINK) {
				uint64_t got = 0;
				while (got < total) {
					size_t want = total - got < msg ? (size_t)(total - got) : msg;
					if (recv_all(fd, buf, want, 0) < 0)
						_exit(4);
					got += want;
				}
				/* the last word of the rep, back as the acknowledgement */
				if (send_all(fd, buf + msg - 8, 8, 0) < 0)
					_exit(5);
			} else {
				if (recv_all(fd, buf, msg, busy) < 0)
					_exit(4);
				*srv_cpu = sched_getcpu();
				if (send_all(fd, buf, msg, busy) < 0)
					_exit(4);
			}
		}
		_exit(0);
	}
	if (ca >= 0)
		pin_to(ca);
	int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		die("accept: %s", strerror(errno));
	close(ls);
	nodelay(fd);
	return (struct conn){.fd = fd, .child = pid, .srv_cpu = srv_cpu};
}

static void stop_server(struct conn *c)
{
	int st = 0;
	close(c->fd);
	munmap((void *)c->srv_cpu, 4096);
	if (waitpid(c->child, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("server process failed (wait status 0x%x)", st);
	if (opt.pin) {
		cpu_set_t all;
		CPU_ZERO(&all);
		for (int i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &all);
		(void)sched_setaffinity(0, sizeof(all), &all);
	}
}

/* ---- measurements ------------------------------------------------------- */

static void rtt(size_t len, int busy)
{
	long n = scaled(len <= 64 ? 20000 : 10000), warm = n / 4 + 1;
	struct conn c = start_server(busy ? SRV_ECHO_BUSY : SRV_ECHO, len, warm + n * opt.reps, 0);
	static unsigned char out[4096], in[4096];
	double ns[MAX_REPS], same[MAX_REPS];
	long seq = 0;
	for (int rep = -1; rep < opt.reps; rep++) {
		long iters = rep < 0 ? warm : n, nsame = 0;
		uint64_t t0 = bench_now_ns();
		for (long i = 0; i < iters; i++, seq++) {
			memcpy(out, &seq, sizeof(seq));
			if (len > 8)
				out[len - 1] = (unsigned char)seq; /* and the last byte */
			if (send_all(c.fd, out, len, busy) < 0 || recv_all(c.fd, in, len, busy) < 0)
				die("ping-pong %zu B: %s", len, strerror(errno));
			/* the server stored its CPU before it answered */
			nsame += *c.srv_cpu == sched_getcpu();
		}
		uint64_t t1 = bench_now_ns();
		long last = seq - 1;
		if (memcmp(in, &last, sizeof(last)) != 0 || memcmp(in + 8, out + 8, len - 8) != 0)
			die("ping-pong %zu B: the echo does not match", len);
		if (rep >= 0) {
			ns[rep] = (double)(t1 - t0) / (double)iters;
			same[rep] = 100.0 * (double)nsame / (double)iters;
		}
	}
	stop_server(&c);
	char name[64];
	const char *sz = len == 8 ? "8 B" : "4 KiB", *how = busy ? "busy-poll" : "blocking";
	snprintf(name, sizeof(name), "tcp RTT %s (%s)", sz, how);
	add_row(name, "ns", ns);
	/* Where the scheduler ran the two: on one CPU a blocking round trip is
	 * two same-CPU wake-ups, on two CPUs two cross-CPU wake-ups (IPIs). */
	snprintf(name, sizeof(name), "  %s %s: both on one CPU", sz, how);
	add_row(name, "%", same);
}

static void stream(size_t len)
{
	uint64_t total = (uint64_t)scaled((long)(STREAM_BYTES / len)) * len;
	struct conn c = start_server(SRV_SINK, len, opt.reps + 1, total);
	unsigned char *src = aligned_alloc(64, len);
	if (!src)
		die("out of memory");
	for (size_t i = 0; i < len; i++)
		src[i] = (unsigned char)(i * 131u + 7u);
	double gbps[MAX_REPS];
	for (int rep = -1; rep < opt.reps; rep++) {
		uint64_t stamp = 0;
		uint64_t t0 = bench_now_ns();
		for (uint64_t sent = 0; sent < total; sent += len) {
			stamp = sent / len + (uint64_t)(rep + 1) * 1000000ull;
			memcpy(src + len - 8, &stamp, 8); /* as hoist-bench stamps its source */
			if (send_all(c.fd, src, len, 0) < 0)
				die("stream %zu B: %s", len, strerror(errno));
		}
		uint64_t ack;
		if (recv_all(c.fd, &ack, 8, 0) < 0)
			die("stream %zu B: no acknowledgement: %s", len, strerror(errno));
		uint64_t t1 = bench_now_ns();
		if (ack != stamp)
			die("stream %zu B: the server read %llu last, expected %llu", len, (unsigned long long)ack,
			    (unsigned long long)stamp);
		if (rep >= 0)
			gbps[rep] = (double)total / (double)(t1 - t0);
	}
	stop_server(&c);
	free(src);
	char sz[24], name[64];
	bench_size_name(len, sz, sizeof(sz));
	snprintf(name, sizeof(name), "tcp stream %s msgs", sz);
	add_row(name, "GB/s", gbps);
}

/* ---- output --------------------------------------------------------------- */

static void print_results(int argc, char **argv)
{
	if (opt.tsv) {
		for (int i = 0; i < nrows; i++)
			bench_tsv_row(rows[i].name, rows[i].unit, rows[i].v, opt.reps);
	} else if (opt.json) {
		printf("{\"reps\":%d,\"scale\":%g,\"pinned\":%s,\"rows\":[", opt.reps, opt.scale,
		       opt.pin ? "true" : "false");
		for (int i = 0; i < nrows; i++)
			printf("%s\n {\"name\":\"%s\",\"unit\":\"%s\",\"median\":%.6g,\"min\":%.6g,\"max\":%.6g}",
			       i ? "," : "", rows[i].name, rows[i].unit, rows[i].med, rows[i].min, rows[i].max);
		printf("\n]}\n");
	} else {
		if (opt.header) {
			bench_table_cols(NULL, NULL, 0, 0, 0);
			printf("\n");
		}
		for (int i = 0; i < nrows; i++) {
			bench_table_cols(rows[i].name, rows[i].unit, rows[i].med, rows[i].min, rows[i].max);
			printf("\n");
		}
		if (opt.footer)
			bench_reproduce(NULL, argc, argv);
	}
	fflush(stdout);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tcp-raw [options]\n"
		"  --reps N      repetitions of every measurement (default 7, max %d)\n"
		"  --test LIST   comma list of rtt,rtt-busy,stream,all (default all)\n"
		"  --scale F     multiply every iteration count by F (default 1)\n"
		"  --bw-sizes L  message sizes of the stream test, comma list with k/m suffixes\n"
		"                (default 64k,1m; e.g. 4k,16k,64k,256k,1m,4m; 8 B..64 MiB, at most %d)\n"
		"  --pin         pin client and server to two different CPUs (default: the\n"
		"                scheduler places them, as it places hoistd's threads)\n"
		"  --json        machine-readable output\n"
		"  --tsv         one line per row: row, name, unit, every rep's value\n"
		"  --no-header   table without its header line\n"
		"  --no-footer   table without the reproduce line\n",
		MAX_REPS, BENCH_MAX_SIZES);
}

static int parse_tests(const char *s)
{
	static const struct bench_test_name names[] = {
		{"rtt", T_RTT}, {"rtt-busy", T_RTT_BUSY}, {"stream", T_STREAM}, {"all", T_ALL},
	};
	return bench_parse_tests(s, names, sizeof(names) / sizeof(names[0]));
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--reps") && v) {
			opt.reps = atoi(v);
			i++;
			if (opt.reps < 1 || opt.reps > MAX_REPS)
				die("--reps must be 1..%d", MAX_REPS);
		} else if (!strcmp(a, "--test") && v) {
			opt.tests = parse_tests(v);
			i++;
			if (opt.tests < 0)
				die("--test: unknown test in '%s'", v);
		} else if (!strcmp(a, "--scale") && v) {
			opt.scale = atof(v);
			i++;
			if (!(opt.scale > 0 && opt.scale <= 100))
				die("--scale must be in (0, 100]");
		} else if (!strcmp(a, "--bw-sizes") && v) {
			opt.n_bw_sizes = bench_parse_sizes(v, opt.bw_sizes, BENCH_MAX_SIZES);
			i++;
			if (opt.n_bw_sizes < 0)
				die("--bw-sizes: '%s' is not a comma list of 1..%d sizes in 8 B..64 MiB (e.g. 4k,64k,1m)",
				    v, BENCH_MAX_SIZES);
		} else if (!strcmp(a, "--pin")) {
			opt.pin = 1;
		} else if (!strcmp(a, "--json")) {
			opt.json = 1;
		} else if (!strcmp(a, "--tsv")) {
			opt.tsv = 1;
		} else if (!strcmp(a, "--no-header")) {
			opt.header = 0;
		} else if (!strcmp(a, "--no-footer")) {
			opt.footer = 0;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (opt.tests & T_RTT) {
		rtt(8, 0);
		rtt(4096, 0);
	}
	if (opt.tests & T_RTT_BUSY) {
		rtt(8, 1);
		rtt(4096, 1);
	}
	if (opt.tests & T_STREAM) {
		for (int k = 0; k < opt.n_bw_sizes; k++)
			stream(opt.bw_sizes[k]);
	}
	print_results(argc, argv);
	return 0;
}
