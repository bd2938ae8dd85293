/*
 * hoist-ptr-bench: same-node get (and put) through hoist_ptr vs through the
 * daemon. Run as a job of 2 PEs on one hoistd (bench/run-ptr.sh); rank 0
 * reads from / writes to rank 1, rank 1 waits in a barrier.
 *
 *   hoistrun -n 2 build/bench/hoist-ptr-bench [--reps N] [--sizes 8,4096,65536]
 *
 * Methods, per size, each rep timed over enough iterations for ~30 ms:
 *   ptr      p = hoist_ptr(src, 1); memcpy(dst, p, n)   (lookup included)
 *   get      hoist_get(dst, 1, src, n), the library's direct path
 *   daemon   hoist_get(dst, 1, src, n) with the direct path off: a
 *            descriptor, the daemon's copy into staging, copy-out
 *   put      hoist_put(1, dst, src, n) direct (+ one quiet at the end)
 *   putd     the same through the daemon
 * dst is a private (malloc) buffer for gets, src a private buffer for puts.
 * The direct path is switched per method through the library's context
 * (this program links the static library), so all rows come from one job.
 * After each method the data is checked against rank 1's pattern.
 *
 * Output: one line per (method, size): "row METHOD SIZE median min max" in
 * ns per operation, read by run-ptr.sh.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "internal.h"

#define MAXREPS 51

static unsigned char pat(size_t i)
{
	return (unsigned char)(i * 131u + 7u);
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "hoist-ptr-bench: %s: %s\n", what, hoist_strerror(rc));
	exit(1);
}

enum method { M_PTR, M_GET, M_DAEMON, M_PUT, M_PUTD, M__N };
static const char *const names[M__N] = {"ptr", "get", "daemon", "put", "putd"};

/* One pass of iters operations; returns ns per operation. */
static size_t put_off; /* puts land in [put_off, 2 * put_off), gets read [0, n) */

static double pass(enum method m, char *sym, char *priv, size_t n, long iters)
{
	struct hoist_ctx *c = hoist__ctx();
	c->direct = !(m == M_DAEMON || m == M_PUTD);
	uint64_t t0 = bench_now_ns();
	int rc = 0;
	switch (m) {
	case M_PTR:
		for (long i = 0; i < iters; i++) {
			const char *p = hoist_ptr(sym, 1);
			memcpy(priv, p, n);
			__asm__ __volatile__("" ::"r"(priv) : "memory");
		}
		break;
	case M_GET:
	case M_DAEMON:
		for (long i = 0; i < iters && !rc; i++)
			rc = hoist_get(priv, 1, sym, n);
		break;
	case M_PUT:
	case M_PUTD:
		for (long i = 0; i < iters && !rc; i++)
			rc = hoist_put(1, sym + put_off, priv, n);
		if (!rc)
			rc = hoist_quiet();
		break;
	default:
		break;
	}
	uint64_t t1 = bench_now_ns();
	if (rc)
		die(names[m], rc);
	return (double)(t1 - t0) / (double)iters;
}

int main(int argc, char **argv)
{
	int reps = 7;
	size_t sizes[8] = {8, 4096, 65536};
	int nsizes = 3;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
			nsizes = 0;
			for (char *s = strtok(argv[++i], ","); s && nsizes < 8; s = strtok(NULL, ","))
				sizes[nsizes++] = strtoull(s, NULL, 10);
		} else {
			fprintf(stderr, "usage: hoist-ptr-bench [--reps N] [--sizes a,b,c]\n");
			return 2;
		}
	}
	if (reps < 1 || reps > MAXREPS)
		reps = 7;
	int rc = hoist_init();
	if (rc)
		die("hoist_init", rc);
	if (hoist_size() != 2)
		die("needs exactly 2 PEs", -EINVAL);
	int me = hoist_rank();
	size_t maxn = 0;
	for (int s = 0; s < nsizes; s++)
		maxn = sizes[s] > maxn ? sizes[s] : maxn;
	put_off = maxn;
	char *sym = hoist_malloc(2 * maxn);
	char *priv = malloc(maxn);
	if (!sym || !priv)
		die("allocation", -ENOMEM);
	for (size_t i = 0; i < maxn; i++) {
		sym[i] = (char)pat(i);
		priv[i] = (char)pat(i + 1);
	}
	if ((rc = hoist_barrier()))
		die("barrier", rc);
	if (me == 0) {
		if (!hoist_ptr(sym, 1))
			die("hoist_ptr(sym, 1) is NULL: is PE 1 on this node?", -EREMOTE);
		for (int s = 0; s < nsizes; s++) {
			size_t n = sizes[s];
			for (int m = 0; m < M__N; m++) {
				/* calibrate: ~30 ms per rep */
				double est = pass((enum method)m, sym, priv, n, 64);
				long iters = (long)(30e6 / (est > 1 ? est : 1));
				iters = iters < 100 ? 100 : iters > 20000000 ? 20000000 : iters;
				pass((enum method)m, sym, priv, n, iters / 4 + 1); /* warm */
				double v[MAXREPS];
				for (int r = 0; r < reps; r++)
					v[r] = pass((enum method)m, sym, priv, n, iters);
				/* the data moved: gets read rank 1's pattern, puts wrote ours */
				if (m <= M_DAEMON) {
					for (size_t i = 0; i < n; i++)
						if ((unsigned char)priv[i] != pat(i))
							die("get data differs from the owner's pattern", -EIO);
					for (size_t i = 0; i < n; i++)
						priv[i] = (char)pat(i + 1);
				} else {
					char *back = malloc(n);
					if (!back || (rc = hoist_get(back, 1, sym + put_off, n)))
						die("put check", rc ? rc : -ENOMEM);
					if (memcmp(back, priv, n))
						die("put data did not arrive", -EIO);
					free(back);
				}
				qsort(v, (size_t)reps, sizeof(double), bench_cmp_double);
				printf("row %s %zu %.1f %.1f %.1f\n", names[m], n,
				       bench_median_sorted(v, reps), v[0], v[reps - 1]);
				fflush(stdout);
			}
		}
	}
	if ((rc = hoist_barrier()))
		die("barrier", rc);
	hoist_finalize();
	return 0;
}
