/*
 * it_strided: strided and vector puts/gets of every shape against a model,
 * to every PE of the job (itself, same node, other nodes), then the errors:
 * what the library refuses, and malformed descriptors written straight
 * into the ring that the daemon must refuse (and keep serving).
 *
 * Layout of each PE's symmetric area: src (S bytes, it_fill(key_src(pe)),
 * never written) and n dst areas of S bytes, dst[w] written only by PE w
 * (initially it_fill(key_dst(pe, w))). A get is checked against the model
 * of the target's src; a put updates a local model of dst[me] at the
 * target, and the touched range (with margins) is read back and compared.
 *
 * Links hoist_static for the raw-descriptor part.
 */
#include "internal.h"
#include "it_common.h"

#define S (1u << 20)
#define MARGIN 64

static uint64_t key_src(int pe) { return 1000u * (uint64_t)pe + 1; }
static uint64_t key_dst(int pe, int w) { return 1000u * (uint64_t)pe + 2 + (uint64_t)w; }

struct shape {
	size_t elem;
	ptrdiff_t rstride, lstride;
	size_t count;
};

static const struct shape shapes[] = {
	{1, 1, 1, 1000},
	{1, 2, 3, 100000},     /* large count */
	{3, 7, 5, 333},
	{8, -8, 8, 30000},     /* negative remote stride */
	{8, 16, -24, 5000},    /* negative local stride */
	{16, 4, 16, 100},      /* remote stride < elem: overlapping elements */
	{16, 0, 16, 50},       /* stride 0 */
	{16, 32, 8, 100},      /* local stride < elem */
	{256, 850, 850, 300},  /* seed 000 Figure 6 */
	{256, 850, 256, 1200},
	{1000, 1001, -1500, 200},
	{4096, 5000, 4096, 100},
	{70000, 70001, 70000, 3},   /* an element larger than one pack */
	{300000, 300001, 300000, 2}, /* an element larger than a staging chunk */
	{5, 5, 5, 0},          /* count 0 */
	{0, 8, 8, 10},         /* elem 0 */
};

/* Base offset so that every element of (stride, elem, count) is >= MARGIN. */
static size_t base_for(ptrdiff_t stride, size_t elem, size_t count)
{
	(void)elem;
	if (stride < 0 && count)
		return MARGIN + (size_t)(-stride) * (count - 1);
	return MARGIN;
}

static size_t extent(ptrdiff_t stride, size_t elem, size_t count)
{
	if (!count)
		return 0;
	size_t s = (size_t)(stride < 0 ? -stride : stride);
	return s * (count - 1) + elem;
}

static unsigned char *src_model[64];

static const unsigned char *model_src(int pe)
{
	if (!src_model[pe]) {
		src_model[pe] = it_xmalloc(S);
		it_fill(src_model[pe], S, key_src(pe));
	}
	return src_model[pe];
}

static int cmp_report(const unsigned char *got, const unsigned char *want, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (got[i] != want[i]) {
			IT_FAIL("%s: byte %zu is 0x%02x, model 0x%02x", what, i, got[i], want[i]);
			return 1;
		}
	return 0;
}

static unsigned char *src, *dst;       /* symmetric */
static unsigned char *dst_model[64];   /* my dst area at each target */

static void test_get_strided(int t, const struct shape *sh, int me)
{
	char what[160];
	snprintf(what, sizeof(what), "get_strided from %d elem %zu rstride %td lstride %td count %zu", t,
		 sh->elem, sh->rstride, sh->lstride, sh->count);
	size_t rb = base_for(sh->rstride, sh->elem, sh->count);
	size_t lb = base_for(sh->lstride, sh->elem, sh->count);
	size_t ln = lb + extent(sh->lstride, sh->elem, sh->count) + MARGIN;
	unsigned char *l = it_xmalloc(ln), *m = it_xmalloc(ln);
	it_fill(l, ln, 77 + (uint64_t)me);
	memcpy(m, l, ln);
	const unsigned char *ms = model_src(t);
	for (size_t i = 0; i < sh->count; i++)
		memcpy(m + lb + (ptrdiff_t)i * sh->lstride, ms + rb + (ptrdiff_t)i * sh->rstride, sh->elem);
	if (IT_OK(hoist_get_strided(l + lb, sh->lstride, t, src + rb, sh->rstride, sh->elem, sh->count),
		  "%s", what) == 0)
		cmp_report(l, m, ln, what);
	free(l);
	free(m);
}

/* Read back [lo, hi) of my dst area at t and compare with the model. */
static void check_dst(int t, size_t lo, size_t hi, const char *what)
{
	lo = lo > MARGIN ? lo - MARGIN : 0;
	hi = hi + MARGIN < S ? hi + MARGIN : S;
	int me = hoist_rank();
	unsigned char *g = it_xmalloc(hi - lo);
	if (IT_OK(hoist_get(g, t, dst + (size_t)me * S + lo, hi - lo), "read back %s", what) == 0)
		cmp_report(g, dst_model[t] + lo, hi - lo, what);
	free(g);
}

static void test_put_strided(int t, const struct shape *sh, int me, uint64_t salt)
{
	char what[160];
	snprintf(what, sizeof(what), "put_strided to %d elem %zu rstride %td lstride %td count %zu", t,
		 sh->elem, sh->rstride, sh->lstride, sh->count);
	size_t rb = base_for(sh->rstride, sh->elem, sh->count);
	size_t lb = base_for(sh->lstride, sh->elem, sh->count);
	size_t ln = lb + extent(sh->lstride, sh->elem, sh->count) + MARGIN;
	unsigned char *l = it_xmalloc(ln);
	it_fill(l, ln, salt);
	unsigned char *m = dst_model[t];
	for (size_t i = 0; i < sh->count; i++)
		memcpy(m + rb + (ptrdiff_t)i * sh->rstride, l + lb + (ptrdiff_t)i * sh->lstride, sh->elem);
	unsigned char *rdst = dst + (size_t)me * S;
	if (IT_OK(hoist_put_strided(t, rdst + rb, sh->rstride, l + lb, sh->lstride, sh->elem, sh->count),
		  "%s", what) == 0) {
		/* the source is reusable on return */
		memset(l, 0xee, ln);
		size_t lo = sh->rstride < 0 && sh->count ? rb - (size_t)(-sh->rstride) * (sh->count - 1) : rb;
		check_dst(t, lo, lo + extent(sh->rstride, sh->elem, sh->count), what);
	}
	free(l);
}

/* A random list: offsets anywhere in the area (overlaps and repeats
 * included), lengths 0..300, now and then a long one. */
static size_t random_vec(struct it_rng *r, hoist_vec_t *v, size_t nvec)
{
	size_t total = 0;
	for (size_t k = 0; k < nvec; k++) {
		size_t len = it_rng_below(r, 8) == 0 ? 0 : 1 + it_rng_below(r, 300);
		if (it_rng_below(r, 200) == 0)
			len = 70000 + it_rng_below(r, 9000);
		v[k].len = len;
		v[k].off = it_rng_below(r, S - len + 1);
		if (k && it_rng_below(r, 10) == 0)
			v[k].off = v[k - 1].off + it_rng_below(r, 8); /* overlap the previous */
		if (v[k].off + len > S)
			v[k].off = S - len;
		total += len;
	}
	return total;
}

static void test_vec(int t, size_t nvec, int me, uint64_t seed)
{
	struct it_rng r = {seed};
	hoist_vec_t *v = it_xmalloc(nvec * sizeof(*v));
	size_t total = random_vec(&r, v, nvec);
	char what[128];
	/* get */
	snprintf(what, sizeof(what), "get_vec from %d nvec %zu total %zu", t, nvec, total);
	unsigned char *l = it_xmalloc(total + MARGIN), *m = it_xmalloc(total + MARGIN);
	it_fill(l, total + MARGIN, seed + 5);
	memcpy(m, l, total + MARGIN);
	const unsigned char *ms = model_src(t);
	size_t pos = 0;
	for (size_t k = 0; k < nvec; k++) {
		memcpy(m + pos, ms + v[k].off, v[k].len);
		pos += v[k].len;
	}
	if (IT_OK(hoist_get_vec(l, t, src, v, nvec), "%s", what) == 0)
		cmp_report(l, m, total + MARGIN, what);
	/* put */
	snprintf(what, sizeof(what), "put_vec to %d nvec %zu total %zu", t, nvec, total);
	it_fill(l, total, seed + 9);
	pos = 0;
	size_t lo = S, hi = 0;
	for (size_t k = 0; k < nvec; k++) {
		memcpy(dst_model[t] + v[k].off, l + pos, v[k].len);
		pos += v[k].len;
		if (v[k].len && v[k].off < lo)
			lo = v[k].off;
		if (v[k].len && v[k].off + v[k].len > hi)
			hi = v[k].off + v[k].len;
	}
	if (IT_OK(hoist_put_vec(t, dst + (size_t)me * S, v, nvec, l), "%s", what) == 0 && hi > lo)
		check_dst(t, lo, hi, what);
	free(l);
	free(m);
	free(v);
}

/* ---- the daemon's own validation: raw descriptors ------------------------ */

static int raw(struct hoist_ctx *c, struct hoist_sqe s)
{
	struct hoist_op *op;
	int rc = hoist__op_alloc(c, &op);
	if (rc)
		return rc;
	struct hoist_sqe *slot;
	if ((rc = hoist__sqe_get(c, &slot))) {
		hoist__op_free(c, op);
		return rc;
	}
	s.user_data = hoist__op_udata(c, op);
	s.flags |= HOIST_SQE_F_CQE;
	*slot = s;
	hoist__sqe_submit(c);
	rc = hoist__wait_op(c, op);
	hoist__op_free(c, op);
	return rc;
}

static struct hoist_sqe strided_sqe(uint8_t opcode, int pe, uint64_t roff, uint64_t elem, int64_t stride,
				    uint64_t count, uint64_t local_off)
{
	struct hoist_sqe s = {.opcode = opcode, .pe = pe, .seg = HOIST_SEG_HEAP, .remote_off = roff,
			      .len = elem, .local_off = local_off};
	memcpy(s.inline_data, &stride, 8);
	memcpy(s.inline_data + 8, &count, 8);
	return s;
}

static void test_errors(int me, int n)
{
	int t = (me + 1) % n;
	unsigned char buf[4096];
	unsigned char *sym_end = src + S * (size_t)(n + 1);
	(void)sym_end;
	struct hoist_ctx *c = hoist__ctx();
	uint64_t heap = c->heap_bytes, stg = c->stage.size;
	uint64_t soff = (uint64_t)(src - (unsigned char *)c->heap_base);

	/* the library */
	IT_EXPECT(hoist_get_strided(buf, 8, t, src, (ptrdiff_t)heap, 8, 2), -EFAULT, "2nd element past the heap");
	IT_EXPECT(hoist_get_strided(buf, 8, t, src, -8, 8, 2), -EFAULT, "negative stride below the heap");
	IT_EXPECT(hoist_put_strided(t, src, 1, buf, 1, 1, SIZE_MAX), -EFAULT, "count SIZE_MAX stride 1");
	IT_EXPECT(hoist_put_strided(t, src, 0, buf, 0, 16, SIZE_MAX / 8), -EINVAL, "elem*count overflows");
	IT_EXPECT(hoist_put_strided(t, buf, 8, buf, 8, 8, 4), -EFAULT, "dst not symmetric");
	IT_EXPECT(hoist_get_strided(NULL, 8, t, src, 8, 8, 4), -EINVAL, "NULL dst");
	IT_EXPECT(hoist_put_strided(n, src, 8, buf, 8, 8, 4), -EINVAL, "pe == size");
	IT_OK(hoist_put_strided(t, src, 8, NULL, 8, 8, 0), "count 0 is a no-op");
	hoist_vec_t bad[2] = {{0, 8}, {heap, 8}};
	IT_EXPECT(hoist_get_vec(buf, t, src, bad, 2), -EFAULT, "vec element past the heap");
	hoist_vec_t wrap[1] = {{SIZE_MAX - 2, 8}};
	IT_EXPECT(hoist_put_vec(t, src, wrap, 1, buf), -EFAULT, "vec offset wraps");
	IT_EXPECT(hoist_get_vec(buf, t, src, NULL, 3), -EINVAL, "NULL list");
	IT_OK(hoist_get_vec(buf, t, src, bad, 0), "nvec 0 is a no-op");

	/* the daemon: descriptors the library would never write */
	struct { const char *what; struct hoist_sqe s; int want; } cases[] = {
		{"strided last element past the heap", strided_sqe(HOIST_OP_GET_STRIDED, t, soff, 8, (int64_t)heap, 2, 0), -EFAULT},
		{"strided negative below 0", strided_sqe(HOIST_OP_PUT_STRIDED, t, 8, 8, -16, 2, 0), -EFAULT},
		{"strided stride*count overflows", strided_sqe(HOIST_OP_GET_STRIDED, t, 0, 1, INT64_MAX, 3, 0), -EFAULT},
		{"strided count*len overflows", strided_sqe(HOIST_OP_PUT_STRIDED, t, 0, 1u << 20, 0, 1ull << 60, 0), -EINVAL},
		{"strided local range past staging", strided_sqe(HOIST_OP_PUT_STRIDED, t, 0, 64, 64, 4, stg - 64), -EFAULT},
		{"strided count huge", strided_sqe(HOIST_OP_GET_STRIDED, t, 0, 8, 8, UINT64_MAX, 0), -EINVAL},
		{"strided pe -1", strided_sqe(HOIST_OP_GET_STRIDED, -1, 0, 8, 8, 1, 0), -EINVAL},
		{"strided inline flag", strided_sqe(HOIST_OP_GET_STRIDED, t, 0, 8, 8, 1, 0), -EINVAL},
		{"vec nvec too many", strided_sqe(HOIST_OP_GET_VEC, t, 0, 8, HOIST_VEC_MAX + 1, 0, 0), -EINVAL},
		{"vec list past staging", strided_sqe(HOIST_OP_GET_VEC, t, 0, 8, 4, (int64_t)stg - 16, 0), -EFAULT},
	};
	cases[7].s.flags = HOIST_SQE_F_INLINE;
	/* vec with a list in staging: element past the heap, sum mismatch */
	uint64_t loff;
	int64_t id = hoist__stage_alloc_wait(c, 4096, &loff);
	if (id < 0) {
		IT_FAIL("staging: %s", it_errname((int)id));
		return;
	}
	struct hoist_vec_elem *lst = (struct hoist_vec_elem *)(c->staging_base + loff);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		IT_EXPECT(raw(c, cases[k].s), cases[k].want, "raw descriptor: %s", cases[k].what);
	lst[0] = (struct hoist_vec_elem){0, 8};
	lst[1] = (struct hoist_vec_elem){heap - 4, 8};
	IT_EXPECT(raw(c, strided_sqe(HOIST_OP_GET_VEC, t, 0, 16, 2, (int64_t)loff, loff + 1024)), -EFAULT,
		  "raw vec element past the heap");
	lst[1] = (struct hoist_vec_elem){UINT64_MAX - 3, 8};
	IT_EXPECT(raw(c, strided_sqe(HOIST_OP_PUT_VEC, t, 8, 16, 2, (int64_t)loff, loff + 1024)), -EFAULT,
		  "raw vec offset wraps");
	lst[1] = (struct hoist_vec_elem){64, 8};
	IT_EXPECT(raw(c, strided_sqe(HOIST_OP_PUT_VEC, t, 0, 17, 2, (int64_t)loff, loff + 1024)), -EINVAL,
		  "raw vec lengths do not sum to len");
	IT_OK(raw(c, strided_sqe(HOIST_OP_GET_VEC, t, soff, 16, 2, (int64_t)loff, loff + 1024)),
	      "raw vec that is fine");
	const unsigned char *ms = model_src(t);
	if (memcmp(c->staging_base + loff + 1024, ms, 8) || memcmp(c->staging_base + loff + 1032, ms + 64, 8))
		IT_FAIL("raw vec get: wrong data");
	IT_OK(raw(c, strided_sqe(HOIST_OP_GET_STRIDED, t, soff, 0, 8, 5, 0)), "raw strided elem 0: no-op");
	IT_OK(raw(c, strided_sqe(HOIST_OP_GET_STRIDED, t, soff, 8, 8, 0, 0)), "raw strided count 0: no-op");
	staging_release(&c->stage, id);
	/* the daemon keeps serving */
	struct shape sh = {256, 850, 850, 30};
	test_get_strided(t, &sh, me);
}

int main(void)
{
	int me, n;
	it_init("it_strided", &me, &n);
	it_watchdog(100);
	if (n > 64) {
		IT_FAIL("at most 64 PEs");
		return 1;
	}
	src = it_malloc(S * (size_t)(n + 1));
	dst = src + S;
	it_fill(src, S, key_src(me));
	for (int w = 0; w < n; w++)
		it_fill(dst + (size_t)w * S, S, key_dst(me, w));
	for (int t = 0; t < n; t++) {
		dst_model[t] = it_xmalloc(S);
		it_fill(dst_model[t], S, key_dst(t, me));
	}
	IT_OK(hoist_barrier(), "start");
	uint64_t salt = 1;
	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
		for (int d = 0; d < n; d++) {
			int t = (me + d) % n;
			test_get_strided(t, &shapes[k], me);
			test_put_strided(t, &shapes[k], me, 1000 * (uint64_t)me + salt++);
		}
	}
	size_t nvecs[] = {0, 1, 17, 3000};
	for (size_t k = 0; k < sizeof(nvecs) / sizeof(nvecs[0]); k++)
		for (int d = 0; d < n; d++)
			test_vec((me + d) % n, nvecs[k], me, 77 * (uint64_t)me + k * 13 + (uint64_t)d);
	test_errors(me, n);
	IT_OK(hoist_barrier(), "end");
	/* nobody wrote src; dst areas hold exactly the writers' models: each
	 * writer checked its own area at every target already */
	size_t at = it_check_fill(src, S, key_src(me));
	if (at != S)
		IT_FAIL("my src area changed at byte %zu", at);
	IT_OK(hoist_finalize(), "finalize");
	if (it_failures)
		return 1;
	if (me == 0)
		it_log("ok: %zu shapes x %d targets, vectors, errors", sizeof(shapes) / sizeof(shapes[0]), n);
	return 0;
}
