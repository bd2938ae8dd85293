/*
 * hoist-kernels: application-shaped kernels for automatic overlap (seed 000,
 * section 4.4 / Figure 7), each written once and run three ways:
 *
 *   blocking  HOIST_AUTO=0 hoist-kernels --kernel K        (hoist_put completes
 *             remotely before it returns, every hoist_get is a round trip)
 *   auto      HOIST_AUTO=1 hoist-kernels --kernel K        (same binary, same
 *             calls: the daemon defers puts and prefetches the gets)
 *   manual    HOIST_AUTO=0 hoist-kernels --kernel K --manual   (_nbi + quiet
 *             placed by hand where a careful programmer would put them)
 *
 *   hoistrun -n 4 --nodes 2 build-kb/bench/hoist-kernels --kernel gups
 *
 * Kernels (K): gups (random 512 B / 1 KiB block updates by put, with
 * write-after-write conflicts), halo (2-D 5-point stencil, ghost rows and
 * columns fetched by get), bt (256 B elements at an 850 B stride, one get
 * per element), ft (all-to-all transpose by 4 KiB puts), cg (vector pieces
 * fetched by get, local matvec part first), halo2 (halo double-buffered:
 * the ghost gets alternate between two published buffers behind one barrier
 * call site, a period-2 phase), scatter (256 B gets at places drawn anew
 * every iteration: a phase that never repeats). Every kernel alternates phases
 * separated by hoist_barrier calls at fixed call sites (each names the phase
 * after it), computes on integers so that all three variants produce
 * bit-identical data, checks every value it receives against a local
 * recomputation, and folds its final data into a checksum.
 *
 * Timing: iterations [0, warm) are untimed (the first run of each phase is
 * the one the daemon records); the clock runs from the first barrier of
 * iteration warm to the barrier after the last iteration. Rank 0 prints one
 * line: kernel=... variant=... us_per_iter=... (the mean) us_iter_median=...
 * (the median timed iteration, top barrier to top barrier: robust against
 * one iteration that lost the CPU) checksum=... errors=...
 * (errors summed over all PEs; exit status 1 if any); ft adds a line
 * "ft_split variant=... us_per_iter=... put_us=... barrier_us=...
 * barrier_top_us=...": rank 0's time per timed iteration inside its put
 * calls, in the barrier after them and in the barrier that starts an
 * iteration (the rest is compute). --private-src (the put kernels, gups
 * and ft) puts the put source in private memory: --manual then pays the
 * blocking put's copy into the staging arena (variant manual_copy), which
 * separates the copy from everything else in auto's gap to manual.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hoist.h"

static int me, np, manual, private_src;
static long iters = 40, warm = 3;
static unsigned work_units = 1; /* scales the fixed compute of every kernel */
static uint64_t errors;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t mix4(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	return mix(mix(mix(mix(a) ^ b) ^ c) ^ d);
}

/* Fixed, data-dependent integer work (about n * 100 dependent multiplies). */
static uint64_t work(uint64_t x, unsigned n)
{
	for (unsigned i = 0; i < n * 100u * work_units; i++)
		x = (x ^ (x >> 29)) * 0x5851f42d4c957f2dull + 0x14057b7ef767814full;
	return x;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "hoist-kernels[%d]: %s: %s\n", me, what, hoist_strerror(rc));
	exit(2);
}

#define CK(call)                                                                                   \
	do {                                                                                       \
		int rc_ = (call);                                                                  \
		if (rc_)                                                                           \
			die(#call, rc_);                                                           \
	} while (0)

static void *smalloc(size_t n)
{
	void *p = hoist_malloc(n);
	if (!p)
		die("hoist_malloc", -ENOMEM);
	memset(p, 0, n);
	return p;
}

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n);
	if (!p) {
		fprintf(stderr, "hoist-kernels: out of memory\n");
		exit(2);
	}
	return p;
}

/* The PE on the other node with block placement (2 nodes, np/2 per node). */
static int far_pe(void)
{
	return (me + np / 2) % np;
}

static uint64_t t_start, t_end;
static uint64_t sink; /* keeps work() results alive; not part of the checksum */

/* Every iteration's start (after its top barrier), from warm on: rank 0
 * prints the median iteration next to the mean, a time that one preempted
 * iteration (another process took the CPU) does not move. */
static uint64_t *it_start;

static void mark_start(long it)
{
	if (it < warm)
		return;
	uint64_t t = now_ns();
	if (it == warm)
		t_start = t;
	it_start[it - warm] = t;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* median of the timed iterations' durations (the last one ends at t_end), ns */
static double iter_median_ns(void)
{
	long n = iters - warm;
	uint64_t *d = xmalloc((size_t)n * sizeof(*d));
	for (long i = 0; i < n; i++)
		d[i] = (i + 1 < n ? it_start[i + 1] : t_end) - it_start[i];
	qsort(d, (size_t)n, sizeof(*d), cmp_u64);
	double m = n % 2 ? (double)d[n / 2] : ((double)d[n / 2 - 1] + (double)d[n / 2]) / 2;
	free(d);
	return m;
}

/* ---- gups: random bulk updates by put ------------------------------------ */

#define GU_UPD 32   /* updates per PE per iteration */
#define GU_SLOTS 16 /* slots per (source PE) in each target's table */
#define GU_BLK 1024

static void gups_update(int src, long it, int u, int *tgt, int *slot, size_t *len)
{
	uint64_t r = mix4(1, (uint64_t)src, (uint64_t)it, (uint64_t)u);
	*tgt = (src + 1 + (int)(r % (uint64_t)(np - 1))) % np;
	*slot = (int)((r >> 16) % GU_SLOTS);
	*len = (r >> 32) & 1 ? 1024 : 512;
}

static uint64_t gups_word(int src, long it, int u, size_t k)
{
	return mix4(2, (uint64_t)src, (uint64_t)it * 4096 + (uint64_t)u, k);
}

static uint64_t fold(const uint64_t *w, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ w[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t k_gups(void)
{
	size_t tbytes = (size_t)np * GU_SLOTS * GU_BLK;
	uint64_t *table = smalloc(tbytes);
	/* --private-src: as ft's */
	uint64_t *src = private_src ? xmalloc((size_t)GU_UPD * GU_BLK) : smalloc((size_t)GU_UPD * GU_BLK);
	uint64_t *expect = xmalloc(tbytes);
	uint64_t h = 0, hx = 0;
	unsigned char written[64][GU_SLOTS];
	for (long it = 0; it < iters; it++) {
		CK(hoist_barrier());
		mark_start(it);
		/* gather / compute / scatter */
		memset(written, 0, sizeof(written));
		for (int u = 0; u < GU_UPD; u++) {
			int tgt, slot;
			size_t len;
			gups_update(me, it, u, &tgt, &slot, &len);
			uint64_t *b = src + (size_t)u * (GU_BLK / 8);
			for (size_t k = 0; k < len / 8; k++)
				b[k] = gups_word(me, it, u, k);
			sink += work(b[0], 2);
			uint64_t *dst = table + ((size_t)me * GU_SLOTS + (size_t)slot) * (GU_BLK / 8);
			if (manual) {
				/* a second write to the same slot must land after the first */
				if (tgt < 64 && written[tgt][slot])
					CK(hoist_fence());
				if (tgt < 64)
					written[tgt][slot] = 1;
				CK(hoist_put_nbi(tgt, dst, b, len));
			} else {
				CK(hoist_put(tgt, dst, b, len));
			}
		}
		CK(hoist_barrier()); /* (manual: implies the quiet) */
		/* fold the table this iteration produced, check it */
		h = fold(table, tbytes / 8, h);
		for (int s = 0; s < np; s++)
			for (int u = 0; u < GU_UPD; u++) {
				int tgt, slot;
				size_t len;
				gups_update(s, it, u, &tgt, &slot, &len);
				if (tgt != me)
					continue;
				uint64_t *e = expect + ((size_t)s * GU_SLOTS + (size_t)slot) * (GU_BLK / 8);
				for (size_t k = 0; k < len / 8; k++)
					e[k] = gups_word(s, it, u, k);
			}
		hx = fold(expect, tbytes / 8, hx);
		if (hx != h) {
			errors++;
			hx = h; /* report once per divergence */
		}
	}
	CK(hoist_barrier());
	t_end = now_ns();
	free(expect);
	if (private_src)
		free(src);
	return h;
}

/* ---- halo: 2-D 5-point stencil, ghosts by get ----------------------------- */

#define HN 128 /* local grid HN x HN (rows of 1 KiB) */

static uint64_t stencil(uint64_t c, uint64_t u, uint64_t d, uint64_t l, uint64_t r)
{
	return 3 * c + u + 2 * d + 5 * l + 7 * r + 1;
}

/* dbl 0: halo, the boundary republished in one buffer behind a second
 * barrier; 1: halo2, a double buffer: iteration it reads its neighbours'
 * buffer it % 2 and publishes into the other one, one barrier per
 * iteration (nobody still reads the buffer being written: its readers
 * passed the barrier after their gets), so the get phase alternates
 * between two address sets behind one call site (period 2). */
static uint64_t halo_run(int dbl)
{
	int px = 2, py = np / 2;
	if (np % 2) {
		fprintf(stderr, "hoist-kernels: halo wants an even number of PEs\n");
		exit(2);
	}
	int row = me / px, col = me % px;
	int up = ((row + py - 1) % py) * px + col, down = ((row + 1) % py) * px + col;
	int left = row * px + (col + px - 1) % px, right = row * px + (col + 1) % px;
	/* published boundary: top row, bottom row, left col, right col */
	uint64_t *pubs = smalloc((size_t)(dbl + 1) * 4 * HN * 8), *pub = pubs;
	uint64_t *ghost = xmalloc(4 * HN * 8); /* from up, down, left, right */
	uint64_t(*g)[HN] = xmalloc(sizeof(uint64_t[HN][HN]));
	uint64_t(*gn)[HN] = xmalloc(sizeof(uint64_t[HN][HN]));
	int GR = py * HN, GC = px * HN;
	for (int i = 0; i < HN; i++)
		for (int j = 0; j < HN; j++)
			g[i][j] = mix4(3, (uint64_t)(row * HN + i), (uint64_t)(col * HN + j), 0);
#define PUBLISH()                                                                                  \
	do {                                                                                       \
		for (int j_ = 0; j_ < HN; j_++) {                                                  \
			pub[j_] = g[0][j_];                                                        \
			pub[HN + j_] = g[HN - 1][j_];                                              \
			pub[2 * HN + j_] = g[j_][0];                                               \
			pub[3 * HN + j_] = g[j_][HN - 1];                                          \
		}                                                                                  \
	} while (0)
	PUBLISH();
	for (long it = 0; it < iters; it++) {
		CK(hoist_barrier());
		mark_start(it);
		pub = pubs + (dbl ? (size_t)(it % 2) * 4 * HN : 0); /* the buffer read now */
		if (manual) {
			CK(hoist_get_nbi(ghost, up, pub + HN, HN * 8));
			CK(hoist_get_nbi(ghost + HN, down, pub, HN * 8));
			CK(hoist_get_nbi(ghost + 2 * HN, left, pub + 3 * HN, HN * 8));
			CK(hoist_get_nbi(ghost + 3 * HN, right, pub + 2 * HN, HN * 8));
		}
		/* interior first: needs no ghost */
		for (int i = 1; i < HN - 1; i++)
			for (int j = 1; j < HN - 1; j++)
				gn[i][j] = stencil(g[i][j], g[i - 1][j], g[i + 1][j], g[i][j - 1], g[i][j + 1]);
		sink += work(gn[1][1], 20);
		if (manual) {
			CK(hoist_quiet());
		} else {
			CK(hoist_get(ghost, up, pub + HN, HN * 8));
			CK(hoist_get(ghost + HN, down, pub, HN * 8));
			CK(hoist_get(ghost + 2 * HN, left, pub + 3 * HN, HN * 8));
			CK(hoist_get(ghost + 3 * HN, right, pub + 2 * HN, HN * 8));
		}
		const uint64_t *gu = ghost, *gd = ghost + HN, *gl = ghost + 2 * HN, *gr = ghost + 3 * HN;
		for (int i = 0; i < HN; i++)
			for (int j = 0; j < HN; j++) {
				if (i > 0 && i < HN - 1 && j > 0 && j < HN - 1)
					continue;
				uint64_t u = i ? g[i - 1][j] : gu[j];
				uint64_t d = i < HN - 1 ? g[i + 1][j] : gd[j];
				uint64_t l = j ? g[i][j - 1] : gl[i];
				uint64_t r = j < HN - 1 ? g[i][j + 1] : gr[i];
				gn[i][j] = stencil(g[i][j], u, d, l, r);
			}
		if (!dbl)
			CK(hoist_barrier()); /* nobody reads pub any more */
		uint64_t(*t)[HN] = g;
		g = gn;
		gn = t;
		pub = pubs + (dbl ? (size_t)((it + 1) % 2) * 4 * HN : 0);
		PUBLISH();
	}
	CK(hoist_barrier());
	t_end = now_ns();
	/* check: the whole periodic global grid, recomputed here */
	uint64_t *A = xmalloc((size_t)GR * GC * 8), *B = xmalloc((size_t)GR * GC * 8);
	for (int i = 0; i < GR; i++)
		for (int j = 0; j < GC; j++)
			A[(size_t)i * GC + j] = mix4(3, (uint64_t)i, (uint64_t)j, 0);
	for (long it = 0; it < iters; it++) {
		for (int i = 0; i < GR; i++)
			for (int j = 0; j < GC; j++)
				B[(size_t)i * GC + j] = stencil(A[(size_t)i * GC + j],
								A[(size_t)((i + GR - 1) % GR) * GC + j],
								A[(size_t)((i + 1) % GR) * GC + j],
								A[(size_t)i * GC + (j + GC - 1) % GC],
								A[(size_t)i * GC + (j + 1) % GC]);
		uint64_t *t = A;
		A = B;
		B = t;
	}
	uint64_t h = 0;
	for (int i = 0; i < HN; i++) {
		for (int j = 0; j < HN; j++)
			if (g[i][j] != A[(size_t)(row * HN + i) * GC + col * HN + j])
				errors++;
		h = fold(g[i], HN, h);
	}
	free(A);
	free(B);
	free(g);
	free(gn);
	free(ghost);
	return h;
#undef PUBLISH
}

static uint64_t k_halo(void)
{
	return halo_run(0);
}

static uint64_t k_halo2(void)
{
	return halo_run(1);
}

/* ---- scatter: gets that change every iteration ------------------------------ */

#define SC_N 1024 /* elements of 256 B published per PE */
#define SC_E 32   /* gets per iteration, at places drawn anew each iteration */

static uint64_t sc_word(int pe, int e, size_t k)
{
	return mix4(6, (uint64_t)pe, (uint64_t)e, (uint64_t)k);
}

/* Every iteration each PE gets SC_E 256 B elements of the far PE at
 * places a generator draws anew (a phase whose gets never repeat: a
 * prefetcher can only waste here, so auto must back off to blocking's
 * speed), checks them and works on them. */
static uint64_t k_scatter(void)
{
	uint64_t *tab = smalloc((size_t)SC_N * 32 * 8);
	uint64_t(*buf)[32] = xmalloc(sizeof(uint64_t[SC_E][32]));
	int el[SC_E];
	for (int e = 0; e < SC_N; e++)
		for (size_t k = 0; k < 32; k++)
			tab[(size_t)e * 32 + k] = sc_word(me, e, k);
	int far = far_pe();
	uint64_t h = 0;
	for (long it = 0; it < iters; it++) {
		CK(hoist_barrier());
		mark_start(it);
		for (int i = 0; i < SC_E; i++)
			el[i] = (int)(mix4(7, (uint64_t)me, (uint64_t)it, (uint64_t)i) % SC_N);
		if (manual) { /* all of them at once, then wait */
			for (int i = 0; i < SC_E; i++)
				CK(hoist_get_nbi(buf[i], far, tab + (size_t)el[i] * 32, sizeof(buf[i])));
			CK(hoist_quiet());
		}
		for (int i = 0; i < SC_E; i++) {
			if (!manual)
				CK(hoist_get(buf[i], far, tab + (size_t)el[i] * 32, sizeof(buf[i])));
			for (size_t k = 0; k < 32; k++)
				if (buf[i][k] != sc_word(far, el[i], k))
					errors++;
			h = fold(buf[i], 32, h);
			sink += work(buf[i][0], 1);
		}
	}
	CK(hoist_barrier());
	t_end = now_ns();
	free(buf);
	return h;
}

/* ---- bt: 256 B elements at an 850 B stride, one get each ------------------- */

#define BT_E 64
#define BT_ELEM 256
#define BT_STRIDE 850

static unsigned char bt_byte(int pe, long it, int e, int k)
{
	return (unsigned char)mix4(4, (uint64_t)pe, (uint64_t)it * 1024 + (uint64_t)e, (uint64_t)k / 8) >>
	       (8 * (k % 8));
}

static uint64_t k_bt(void)
{
	unsigned char *a = smalloc((size_t)BT_E * BT_STRIDE);
	unsigned char *buf = xmalloc((size_t)BT_E * BT_ELEM);
	int p = far_pe();
	uint64_t h = 0;
	for (int e = 0; e < BT_E; e++)
		for (int k = 0; k < BT_ELEM; k++)
			a[(size_t)e * BT_STRIDE + k] = bt_byte(me, -1, e, k);
	for (long it = 0; it < iters; it++) {
		CK(hoist_barrier());
		mark_start(it);
		if (manual) {
			for (int e = 0; e < BT_E; e++)
				CK(hoist_get_nbi(buf + (size_t)e * BT_ELEM, p, a + (size_t)e * BT_STRIDE, BT_ELEM));
			CK(hoist_quiet());
		}
		for (int e = 0; e < BT_E; e++) {
			unsigned char *x = buf + (size_t)e * BT_ELEM;
			if (!manual)
				CK(hoist_get(x, p, a + (size_t)e * BT_STRIDE, BT_ELEM));
			/* per element: check against the expected, fold, compute */
			for (int k = 0; k < BT_ELEM; k++) {
				if (x[k] != bt_byte(p, it - 1, e, k))
					errors++;
				h = (h ^ x[k]) * 0x100000001b3ull;
			}
			sink += work(h, 1);
		}
		CK(hoist_barrier());
		/* update own elements (local writes) */
		for (int e = 0; e < BT_E; e++)
			for (int k = 0; k < BT_ELEM; k++)
				a[(size_t)e * BT_STRIDE + k] = bt_byte(me, it, e, k);
	}
	CK(hoist_barrier());
	t_end = now_ns();
	free(buf);
	return h;
}

/* ---- ft: all-to-all transpose by puts ----------------------------------- */

#define FT_CH 4 /* chunks per destination */
#define FT_CB 4096

static uint64_t ft_word(int s, int d, long it, int c, size_t k)
{
	return mix4(5, (uint64_t)s * 256 + (uint64_t)d, (uint64_t)it * 64 + (uint64_t)c, k);
}

/* Where ft's time goes at this PE (timed iterations): inside the put calls
 * (the blocking put under HOIST_AUTO=1 returns after copying its 4 KiB
 * source into the staging arena; hoist_put_nbi posts a zero-copy
 * descriptor; HOIST_AUTO=0's hoist_put waits for remote completion), and
 * in the barrier after them (where auto and manual wait for the puts), and
 * in the barrier that starts the next iteration (and the one after the
 * last). The rest of an iteration is compute, the same in every variant. */
static uint64_t ft_put_ns, ft_bar_ns, ft_top_ns;

static uint64_t k_ft(void)
{
	size_t per = (size_t)FT_CH * FT_CB;
	/* --private-src: the source in private memory, where hoist_put_nbi
	 * must copy it into the staging arena as the blocking put does */
	uint64_t *src = private_src ? xmalloc((size_t)np * per) : smalloc((size_t)np * per);
	uint64_t *dst = smalloc((size_t)np * per);
	uint64_t h = 0;
	for (long it = 0; it < iters; it++) {
		uint64_t t0 = now_ns();
		CK(hoist_barrier());
		if (it > warm)
			ft_top_ns += now_ns() - t0;
		mark_start(it);
		for (int i = 1; i <= np; i++) {
			int d = (me + i) % np; /* own block last */
			for (int c = 0; c < FT_CH; c++) {
				uint64_t *b = src + ((size_t)d * per + (size_t)c * FT_CB) / 8;
				for (size_t k = 0; k < FT_CB / 8; k++) /* "the FFT of this pencil" */
					b[k] = ft_word(me, d, it, c, k);
				sink += work(b[0], 8);
				uint64_t *t = dst + ((size_t)me * per + (size_t)c * FT_CB) / 8;
				t0 = now_ns();
				if (d == me)
					memcpy(t, b, FT_CB);
				else if (manual)
					CK(hoist_put_nbi(d, t, b, FT_CB));
				else
					CK(hoist_put(d, t, b, FT_CB));
				if (it >= warm && d != me)
					ft_put_ns += now_ns() - t0;
			}
		}
		t0 = now_ns();
		CK(hoist_barrier());
		if (it >= warm)
			ft_bar_ns += now_ns() - t0;
		/* the transposed data: check and fold */
		for (int s = 0; s < np; s++)
			for (int c = 0; c < FT_CH; c++) {
				const uint64_t *b = dst + ((size_t)s * per + (size_t)c * FT_CB) / 8;
				for (size_t k = 0; k < FT_CB / 8; k++)
					if (b[k] != ft_word(s, me, it, c, k))
						errors++;
				h = fold(b, FT_CB / 8, h);
			}
	}
	uint64_t t0 = now_ns();
	CK(hoist_barrier());
	t_end = now_ns();
	ft_top_ns += t_end - t0;
	if (private_src)
		free(src);
	return h;
}

/* ---- cg: vector pieces by get --------------------------------------------- */

#define CG_N 2048    /* own vector words (16 KiB) */
#define CG_PIECE 1024 /* words fetched from every other PE (8 KiB) */

static uint64_t cg_init(int pe, int i)
{
	return mix4(6, (uint64_t)pe, (uint64_t)i, 0);
}

/* y = A_own x_own + sum_q B_q piece_q; x = g(y). pieces[q] is PE q's
 * x[(me*97) % (CG_N - CG_PIECE) ...]. */
static int cg_off(int who)
{
	return (who * 97) % (CG_N - CG_PIECE);
}

static void cg_local(const uint64_t *x, uint64_t *y)
{
	for (int i = 0; i < CG_N; i++)
		y[i] = 3 * x[i] + x[(i + 1) % CG_N] + 5 * x[(i + CG_N - 1) % CG_N] + x[(i * 7) % CG_N];
}

static void cg_remote(uint64_t *y, int q, const uint64_t *piece)
{
	for (int i = 0; i < CG_N; i++)
		y[i] += (uint64_t)(q + 1) * piece[i % CG_PIECE] ^ piece[(i * 3) % CG_PIECE];
}

static uint64_t cg_next(uint64_t y, long it)
{
	return (y ^ (y >> 7)) + (uint64_t)it;
}

static uint64_t k_cg(void)
{
	uint64_t *x = smalloc(CG_N * 8);
	uint64_t *y = xmalloc(CG_N * 8);
	uint64_t *pieces = xmalloc((size_t)np * CG_PIECE * 8);
	for (int i = 0; i < CG_N; i++)
		x[i] = cg_init(me, i);
	for (long it = 0; it < iters; it++) {
		CK(hoist_barrier());
		mark_start(it);
		if (manual)
			for (int q = 0; q < np; q++)
				if (q != me)
					CK(hoist_get_nbi(pieces + (size_t)q * CG_PIECE, q, x + cg_off(me), CG_PIECE * 8));
		cg_local(x, y);
		sink += work(y[0], 20);
		if (manual)
			CK(hoist_quiet());
		for (int q = 0; q < np; q++) {
			if (q == me)
				continue;
			if (!manual)
				CK(hoist_get(pieces + (size_t)q * CG_PIECE, q, x + cg_off(me), CG_PIECE * 8));
			cg_remote(y, q, pieces + (size_t)q * CG_PIECE);
		}
		CK(hoist_barrier());
		for (int i = 0; i < CG_N; i++)
			x[i] = cg_next(y[i], it);
	}
	CK(hoist_barrier());
	t_end = now_ns();
	/* check: every PE's vector, recomputed here */
	uint64_t *X = xmalloc((size_t)np * CG_N * 8), *Y = xmalloc((size_t)np * CG_N * 8);
	for (int q = 0; q < np; q++)
		for (int i = 0; i < CG_N; i++)
			X[(size_t)q * CG_N + i] = cg_init(q, i);
	for (long it = 0; it < iters; it++) {
		for (int q = 0; q < np; q++) {
			uint64_t *yq = Y + (size_t)q * CG_N;
			cg_local(X + (size_t)q * CG_N, yq);
			for (int s = 0; s < np; s++)
				if (s != q)
					cg_remote(yq, s, X + (size_t)s * CG_N + cg_off(q));
		}
		for (size_t i = 0; i < (size_t)np * CG_N; i++)
			X[i] = cg_next(Y[i], it);
	}
	for (int i = 0; i < CG_N; i++)
		if (x[i] != X[(size_t)me * CG_N + i])
			errors++;
	uint64_t h = fold(x, CG_N, 0);
	free(X);
	free(Y);
	free(y);
	free(pieces);
	return h;
}

/* ---- main ------------------------------------------------------------------ */

static const struct {
	const char *name;
	uint64_t (*fn)(void);
	long iters;
} kernels[] = {
	{"gups", k_gups, 40}, {"halo", k_halo, 60}, {"bt", k_bt, 30},	  {"ft", k_ft, 40},
	{"cg", k_cg, 60},     {"halo2", k_halo2, 60}, {"scatter", k_scatter, 60},
};

/* the variant's name in the output: blocking, auto, manual, and with
 * --private-src (gups, ft) manual_copy / auto_private / blocking_private */
static const char *vname(int autov)
{
	if (manual)
		return private_src ? "manual_copy" : "manual";
	if (autov)
		return private_src ? "auto_private" : "auto";
	return private_src ? "blocking_private" : "blocking";
}

static void usage(FILE *f)
{
	fprintf(f, "usage: hoist-kernels --kernel gups|halo|bt|ft|cg|halo2|scatter [--manual] [--iters N] [--warm N]\n"
		   "                     [--work N] [--private-src]\n"
		   "  run under hoistrun; HOIST_AUTO=0 (blocking) or 1 (auto) selects the variant\n"
		   "  unless --manual (hand-placed _nbi + quiet; run it with HOIST_AUTO=0)\n"
		   "  --private-src: gups' and ft's put source in private memory, not the symmetric heap\n"
		   "  (hoist_put_nbi then copies it into the staging arena like a blocking put)\n");
}

int main(int argc, char **argv)
{
	const char *kname = NULL;
	long it_arg = -1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--manual"))
			manual = 1;
		else if (!strcmp(argv[i], "--kernel") && i + 1 < argc)
			kname = argv[++i];
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			it_arg = atol(argv[++i]);
		else if (!strcmp(argv[i], "--warm") && i + 1 < argc)
			warm = atol(argv[++i]);
		else if (!strcmp(argv[i], "--private-src"))
			private_src = 1;
		else if (!strcmp(argv[i], "--work") && i + 1 < argc)
			work_units = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	int k = -1;
	for (size_t i = 0; kname && i < sizeof(kernels) / sizeof(kernels[0]); i++)
		if (!strcmp(kname, kernels[i].name))
			k = (int)i;
	if (k < 0) {
		usage(stderr);
		return 2;
	}
	iters = it_arg > 0 ? it_arg : kernels[k].iters;
	if (warm < 1 || warm >= iters) {
		fprintf(stderr, "hoist-kernels: want 1 <= --warm < --iters\n");
		return 2;
	}
	it_start = xmalloc((size_t)(iters - warm) * sizeof(*it_start));
	int rc = hoist_init();
	if (rc) {
		fprintf(stderr, "hoist-kernels: hoist_init: %s %s\n", hoist_strerror(rc), hoist_error_detail());
		return 2;
	}
	me = hoist_rank();
	np = hoist_size();
	if (np < 2) {
		fprintf(stderr, "hoist-kernels: run me with 2 or more PEs\n");
		return 2;
	}
	const char *a = getenv("HOIST_AUTO");
	int autov = !(a && a[0] == '0');
	uint64_t h = kernels[k].fn();
	/* reduce checksum and errors at rank 0 */
	uint64_t *res = smalloc(2 * 8);
	res[0] = h;
	res[1] = errors;
	CK(hoist_barrier());
	uint64_t sum = 0, err = 0;
	if (me == 0)
		for (int q = 0; q < np; q++) {
			uint64_t v[2];
			CK(hoist_get(v, q, res, sizeof(v)));
			sum = mix(sum ^ v[0]);
			err += v[1];
		}
	CK(hoist_barrier());
	if (me == 0)
		printf("kernel=%s variant=%s pes=%d iters=%ld timed=%ld us_per_iter=%.2f us_iter_median=%.2f "
		       "checksum=%016llx errors=%llu sink=%llu\n",
		       kernels[k].name, vname(autov), np, iters, iters - warm,
		       (double)(t_end - t_start) / 1e3 / (double)(iters - warm), iter_median_ns() / 1e3,
		       (unsigned long long)sum,
		       (unsigned long long)err, (unsigned long long)(sink & 1));
	if (me == 0 && kernels[k].fn == k_ft) /* rank 0's own split, per timed iteration */
		printf("ft_split variant=%s us_per_iter=%.2f put_us=%.2f barrier_us=%.2f barrier_top_us=%.2f\n",
		       vname(autov),
		       (double)(t_end - t_start) / 1e3 / (double)(iters - warm),
		       (double)ft_put_ns / 1e3 / (double)(iters - warm), (double)ft_bar_ns / 1e3 / (double)(iters - warm),
		       (double)ft_top_ns / 1e3 / (double)(iters - warm));
	hoist_finalize();
	return err ? 1 : 0;
}
