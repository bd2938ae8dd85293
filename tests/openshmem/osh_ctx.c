/*
 * osh_ctx.c - OpenSHMEM contexts: shmem_ctx_create with each option,
 * shmem_team_create_ctx on SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED (team-
 * relative PE numbers), shmem_ctx_get_team; on a created context put, get,
 * p, g, iput, iget, the nbi forms, put_signal, fetch_add, add, inc,
 * compare_swap, swap, fetch, set, ctx_fence and ctx_quiet with the results
 * checked; shmem_ctx_destroy quiets; bad arguments fail.
 */
#include "osh_common.h"

#define N 16
static long src[N], dst[N], dst2[N], counter, word, flagv;
static uint64_t sig;

static void ctx_rma(shmem_ctx_t ctx, int me, int npes, const char *what)
{
	IT_WHERE("%s", what);
	int right = (me + 1) % npes, left = (me + npes - 1) % npes;
	for (int i = 0; i < N; i++) {
		src[i] = me * 1000 + i;
		dst[i] = dst2[i] = -1;
	}
	shmem_barrier_all();
	shmem_ctx_long_put(ctx, dst, src, N, right);
	shmem_ctx_quiet(ctx);
	shmem_barrier_all();
	for (int i = 0; i < N; i++)
		CHECK(dst[i] == left * 1000 + i, "%s put dst[%d]=%ld", what, i, dst[i]);
	long got[N];
	shmem_ctx_long_get(ctx, got, src, N, right);
	for (int i = 0; i < N; i++)
		CHECK(got[i] == right * 1000 + i, "%s get", what);
	CHECK(shmem_ctx_long_g(ctx, &src[3], right) == right * 1000 + 3, "%s g", what);
	shmem_barrier_all();
	/* nbi put + ctx_fence + flag put: the flag implies the data */
	shmem_ctx_putmem_nbi(ctx, dst2, src, sizeof(src), right);
	shmem_ctx_fence(ctx);
	shmem_ctx_long_p(ctx, &flagv, 1, right);
	shmem_long_wait_until(&flagv, SHMEM_CMP_EQ, 1);
	for (int i = 0; i < N; i++)
		CHECK(dst2[i] == left * 1000 + i, "%s put_nbi + fence", what);
	long g2[N];
	shmem_ctx_long_get_nbi(ctx, g2, src, N, left);
	shmem_ctx_quiet(ctx);
	for (int i = 0; i < N; i++)
		CHECK(g2[i] == left * 1000 + i, "%s get_nbi", what);
	shmem_barrier_all();
	flagv = 0;
	/* strided: every other element */
	for (int i = 0; i < N; i++)
		dst[i] = -1;
	shmem_barrier_all();
	shmem_ctx_long_iput(ctx, dst, src, 2, 1, N / 2, right);
	shmem_ctx_quiet(ctx);
	shmem_barrier_all();
	for (int i = 0; i < N; i++)
		CHECK(dst[i] == (i % 2 ? -1 : left * 1000 + i / 2), "%s iput [%d]", what, i);
	long ig[N / 2];
	shmem_ctx_long_iget(ctx, ig, src, 1, 2, N / 2, right);
	for (int i = 0; i < N / 2; i++)
		CHECK(ig[i] == right * 1000 + 2 * i, "%s iget", what);
	/* put_signal: the data is there when the signal is */
	shmem_barrier_all();
	shmem_ctx_long_put_signal(ctx, dst2, src, N, &sig, 7, SHMEM_SIGNAL_ADD, right);
	CHECK(shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 7) == 7, "%s signal", what);
	for (int i = 0; i < N; i++)
		CHECK(dst2[i] == left * 1000 + i, "%s put_signal data", what);
	shmem_barrier_all();
	sig = 0;
	/* atomics at PE 0 from everyone */
	for (int i = 0; i < 10; i++) {
		long old = shmem_ctx_long_atomic_fetch_add(ctx, &counter, 3, 0);
		CHECK(old >= 0 && old < 60L * npes, "%s fetch_add %ld", what, old);
		shmem_ctx_long_atomic_add(ctx, &counter, 2, 0);
		shmem_ctx_long_atomic_inc(ctx, &counter, 0);
	}
	long prev = shmem_ctx_long_atomic_compare_swap(ctx, &word, 0, me + 1, 0);
	shmem_ctx_quiet(ctx);
	shmem_barrier_all();
	if (me == 0) {
		CHECK(counter == 60L * npes, "%s counter %ld", what, counter);
		CHECK(word >= 1 && word <= npes, "%s cswap winner", what);
	}
	CHECK(prev == 0 || (prev >= 1 && prev <= npes), "%s cswap old", what);
	shmem_barrier_all();
	if (me == 0) {
		long w = shmem_ctx_long_atomic_swap(ctx, &word, 0, 0);
		CHECK(w >= 1 && w <= npes, "%s swap", what);
		shmem_ctx_long_atomic_set(ctx, &counter, 0, 0);
		CHECK(shmem_ctx_long_atomic_fetch(ctx, &counter, 0) == 0, "%s set/fetch", what);
	}
	shmem_barrier_all();
	NO_ERROR(what);
}

int main(void)
{
	int me = osh_start("osh_ctx"), npes = shmem_n_pes();
	shmem_team_t team;

	/* every option, each alone and together */
	long opts[] = {0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED, SHMEM_CTX_NOSTORE,
		       SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE};
	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
		shmem_ctx_t ctx = SHMEM_CTX_INVALID;
		CHECK(shmem_ctx_create(opts[k], &ctx) == 0 && ctx != SHMEM_CTX_INVALID,
		      "shmem_ctx_create(%ld)", opts[k]);
		if (ctx == SHMEM_CTX_INVALID)
			return osh_end();
		CHECK(shmem_ctx_get_team(ctx, &team) == 0 && team == SHMEM_TEAM_WORLD, "ctx team");
		char what[64];
		snprintf(what, sizeof(what), "ctx options %ld", opts[k]);
		ctx_rma(ctx, me, npes, what);
		shmem_ctx_destroy(ctx);
	}
	/* the default context still works alongside */
	ctx_rma(SHMEM_CTX_DEFAULT, me, npes, "default ctx");

	/* a context of SHMEM_TEAM_WORLD; two live at once */
	shmem_ctx_t a = SHMEM_CTX_INVALID, b = SHMEM_CTX_INVALID;
	CHECK(shmem_team_create_ctx(SHMEM_TEAM_WORLD, 0, &a) == 0 && a, "team ctx world");
	CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &b) == 0 && b && b != a, "second ctx");
	if (!a || !b)
		return osh_end();
	ctx_rma(a, me, npes, "world team ctx");
	ctx_rma(b, me, npes, "second live ctx");

	/* destroy quiets: nbi puts on the context are complete after it */
	IT_WHERE("destroy quiets");
	int right = (me + 1) % npes, left = (me + npes - 1) % npes;
	for (int i = 0; i < N; i++)
		dst[i] = -1;
	shmem_barrier_all();
	long val[N];
	for (int i = 0; i < N; i++)
		val[i] = 5000 + me * 10 + i;
	shmem_ctx_long_put_nbi(a, dst, val, N, right);
	shmem_ctx_destroy(a);
	for (int i = 0; i < N; i++)
		val[i] = -7; /* the source is reusable once destroy returned */
	shmem_barrier_all();
	for (int i = 0; i < N; i++)
		CHECK(dst[i] == 5000 + left * 10 + i, "after destroy dst[%d]=%ld", i, dst[i]);
	shmem_ctx_destroy(b);

	/* SHMEM_TEAM_SHARED: PE numbers are the team's */
	IT_WHERE("shared team ctx");
	shmem_ctx_t s = SHMEM_CTX_INVALID;
	CHECK(shmem_team_create_ctx(SHMEM_TEAM_SHARED, 0, &s) == 0 && s, "team ctx shared");
	if (s) {
		CHECK(shmem_ctx_get_team(s, &team) == 0 && team == SHMEM_TEAM_SHARED, "shared ctx team");
		int sn = shmem_team_n_pes(SHMEM_TEAM_SHARED), sme = shmem_team_my_pe(SHMEM_TEAM_SHARED);
		int sr = (sme + 1) % sn;
		int wr = shmem_team_translate_pe(SHMEM_TEAM_SHARED, sr, SHMEM_TEAM_WORLD);
		word = -1;
		shmem_barrier_all();
		/* team PE sr is world PE wr: the put lands there */
		shmem_ctx_long_p(s, &word, me, sr);
		shmem_ctx_quiet(s);
		shmem_barrier_all();
		int sl = (sme + sn - 1) % sn;
		int wl = shmem_team_translate_pe(SHMEM_TEAM_SHARED, sl, SHMEM_TEAM_WORLD);
		CHECK(word == wl, "shared ctx put from %d (want %d)", (int)word, wl);
		CHECK(shmem_ctx_long_atomic_fetch(s, &word, sr) == me, "shared ctx fetch at %d", wr);
		NO_ERROR("shared ctx");
		/* a PE outside the team fails (kept error) */
		shmem_ctx_long_p(s, &word, 1, sn);
		CHECK(shmemx_last_error() == -EINVAL, "pe outside the context's team");
		shmem_barrier_all();
		shmem_ctx_destroy(s);
	}

	/* bad use */
	IT_WHERE("bad use");
	shmem_ctx_t bad = (shmem_ctx_t)1;
	CHECK(shmem_ctx_create(1L << 20, &bad) != 0 && bad == SHMEM_CTX_INVALID, "unknown option");
	CHECK(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &bad) != 0 && bad == SHMEM_CTX_INVALID,
	      "invalid team");
	CHECK(shmem_ctx_get_team(SHMEM_CTX_INVALID, &team) != 0 && team == SHMEM_TEAM_INVALID,
	      "invalid ctx team");
	shmemx_last_error();
	shmem_ctx_long_p(SHMEM_CTX_INVALID, &word, 1, 0);
	CHECK(shmemx_last_error() == -EINVAL, "op on SHMEM_CTX_INVALID");
	shmem_barrier_all();
	return osh_end();
}
