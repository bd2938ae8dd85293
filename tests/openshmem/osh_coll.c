/*
 * osh_coll.c - OpenSHMEM setup/query, memory management, teams, contexts,
 * collectives and the deprecated (active-set) forms around them: every result is
 * compared with the value computed here. Reductions: every op for every
 * type of its table (libhoist's allreduce for the types it has, the
 * gathered fallback for the others, one large enough to take several
 * chunks).
 */
#include <complex.h>

#include "osh_common.h"

#define K 5
static int me, npes;
static void *sbuf, *dbuf; /* symmetric, K elements of any type */

/* reduction inputs of PE p, element i: bit patterns (and/or/xor), small
 * numbers (the rest: no overflow in any type) */
#define RV_and(T, p, i) ((T)((1 << (((p) + (i)) % 6)) | 64))
#define RV_or RV_and
#define RV_xor RV_and
#define RV_max(T, p, i) ((T)(((p) * 3 + (i)) % 7 + 1))
#define RV_min RV_max
#define RV_sum(T, p, i) ((T)(1 + ((p) + (i)) % 2))
#define RV_prod RV_sum
#define EOP_and(T, a, b) ((T)((a) & (b)))
#define EOP_or(T, a, b) ((T)((a) | (b)))
#define EOP_xor(T, a, b) ((T)((a) ^ (b)))
#define EOP_max(T, a, b) ((a) > (b) ? (a) : (b))
#define EOP_min(T, a, b) ((a) < (b) ? (a) : (b))
#define EOP_sum(T, a, b) ((T)((a) + (b)))
#define EOP_prod(T, a, b) ((T)((a) * (b)))

#define T_RED(T, N, op)                                                                      \
	static void r_##N##_##op(void)                                                       \
	{                                                                                    \
		IT_WHERE("reduce " #N " " #op);                                              \
		T *s = sbuf, *d = dbuf;                                                      \
		for (int i = 0; i < K; i++)                                                  \
			s[i] = RV_##op(T, me, i);                                            \
		CHECK(shmem_##N##_##op##_reduce(SHMEM_TEAM_WORLD, d, s, K) == 0, #N " " #op); \
		for (int i = 0; i < K; i++) {                                                \
			T e = RV_##op(T, 0, i);                                              \
			for (int p = 1; p < npes; p++)                                       \
				e = EOP_##op(T, e, RV_##op(T, p, i));                        \
			CHECK(d[i] == e, #N "_" #op "_reduce [%d]", i);                      \
		}                                                                            \
	}
SHMEM__BITRED(T_RED, and)
SHMEM__BITRED(T_RED, or)
SHMEM__BITRED(T_RED, xor)
SHMEM__MMRED(T_RED, max)
SHMEM__MMRED(T_RED, min)
SHMEM__ARRED(T_RED, sum)
SHMEM__ARRED(T_RED, prod)

static void t_reductions(void)
{
#define RUN(T, N, op) r_##N##_##op();
	SHMEM__BITRED(RUN, and)
	SHMEM__BITRED(RUN, or)
	SHMEM__BITRED(RUN, xor)
	SHMEM__MMRED(RUN, max)
	SHMEM__MMRED(RUN, min)
	SHMEM__ARRED(RUN, sum)
	SHMEM__ARRED(RUN, prod)
	NO_ERROR("reductions");

	IT_WHERE("reduce chunks");
	enum { BIG = 20000 }; /* short: several scratch chunks */
	short *s = shmem_malloc(BIG * sizeof(short)), *d = shmem_malloc(BIG * sizeof(short));
	for (int i = 0; i < BIG; i++)
		s[i] = (short)((me + i) % 3 - 1);
	CHECK(shmem_short_sum_reduce(SHMEM_TEAM_WORLD, d, s, BIG) == 0, "short sum big");
	int bad = 0;
	for (int i = 0; i < BIG; i++) {
		int e = 0;
		for (int p = 0; p < npes; p++)
			e += (p + i) % 3 - 1;
		bad += d[i] != e;
	}
	CHECK(bad == 0, "short sum big: %d wrong", bad);
	/* in place, and the generic selection */
	long *l = (long *)s;
	for (int i = 0; i < K; i++)
		l[i] = me * 10 + i;
	CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, l, l, K) == 0, "in-place generic sum");
	for (int i = 0; i < K; i++)
		CHECK(l[i] == 10L * npes * (npes - 1) / 2 + (long)i * npes, "in-place sum [%d]", i);
	shmem_barrier_all();
	shmem_free(d);
	shmem_free(s);
	NO_ERROR("reduce chunks");
}

static void t_data_collectives(void)
{
	IT_WHERE("broadcast");
	int root = npes - 1;
	long *s = shmem_malloc(64 * sizeof(long)), *d = shmem_malloc(64 * sizeof(long));
	for (int i = 0; i < 64; i++) {
		s[i] = me * 100 + i;
		d[i] = -1;
	}
	shmem_barrier_all();
	CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, d, s, 8, root) == 0, "broadcast");
	for (int i = 0; i < 64; i++)
		CHECK(d[i] == (i < 8 ? root * 100 + i : -1), "broadcast [%d]", i);
	shmem_barrier_all();
	CHECK(shmem_broadcastmem(SHMEM_TEAM_WORLD, d, s, 3, 0) == 0, "broadcastmem");
	/* the first 3 bytes of PE 0's s[0] (0) over root's s[0] from before */
	long want0 = root * 100, zero = 0;
	memcpy(&want0, &zero, 3);
	CHECK(d[0] == want0 && d[1] == root * 100 + 1, "broadcastmem data");
	shmem_barrier_all();

	IT_WHERE("collect");
	int *ci = shmem_malloc(64 * sizeof(int)), *co = shmem_malloc(64 * sizeof(int));
	for (int j = 0; j <= me; j++)
		ci[j] = 100 * me + j;
	CHECK(shmem_int_collect(SHMEM_TEAM_WORLD, co, ci, (size_t)me + 1) == 0, "collect");
	for (int p = 0, k = 0; p < npes; p++)
		for (int j = 0; j <= p; j++, k++)
			CHECK(co[k] == 100 * p + j, "collect [%d]", k);

	IT_WHERE("fcollect");
	for (int j = 0; j < 3; j++)
		s[j] = me * 10 + j;
	CHECK(shmem_long_fcollect(SHMEM_TEAM_WORLD, d, s, 3) == 0, "fcollect");
	for (int p = 0; p < npes; p++)
		for (int j = 0; j < 3; j++)
			CHECK(d[p * 3 + j] == p * 10 + j, "fcollect [%d]", p * 3 + j);
	shmem_barrier_all();

	IT_WHERE("alltoall");
	for (int j = 0; j < npes; j++)
		for (int k = 0; k < 2; k++)
			ci[j * 2 + k] = me * 100 + j * 10 + k;
	CHECK(shmem_int_alltoall(SHMEM_TEAM_WORLD, co, ci, 2) == 0, "alltoall");
	for (int i = 0; i < npes; i++)
		for (int k = 0; k < 2; k++)
			CHECK(co[i * 2 + k] == i * 100 + me * 10 + k, "alltoall [%d]", i * 2 + k);
	shmem_barrier_all();

	IT_WHERE("alltoalls");
	memset(co, 0, 64 * sizeof(int));
	for (int j = 0; j < npes; j++)
		for (int k = 0; k < 2; k++)
			ci[j * 2 * 3 + k * 3] = me * 100 + j * 10 + k;
	shmem_barrier_all();
	CHECK(shmem_int_alltoalls(SHMEM_TEAM_WORLD, co, ci, 2, 3, 2) == 0, "alltoalls");
	for (int i = 0; i < npes; i++)
		for (int k = 0; k < 2; k++) {
			CHECK(co[i * 2 * 2 + k * 2] == i * 100 + me * 10 + k, "alltoalls [%d]", i * 4 + k * 2);
			CHECK(co[i * 2 * 2 + k * 2 + 1] == 0, "alltoalls gap [%d]", i * 4 + k * 2 + 1);
		}
	shmem_barrier_all();

	IT_WHERE("deprecated active set");
	static long pSync[SHMEM_BCAST_SYNC_SIZE];
	for (int i = 0; i < 8; i++) {
		s[i] = me * 1000 + i;
		d[i] = -1;
	}
	shmem_barrier(0, 0, npes, pSync);
	shmem_sync(0, 0, npes, pSync);
	int r64 = 1 % npes;
	shmem_broadcast64(d, s, 4, r64, 0, 0, npes, pSync);
	for (int i = 0; i < 8; i++)
		CHECK(d[i] == (me == r64 || i >= 4 ? -1 : r64 * 1000 + i), "broadcast64 [%d]", i);
	shmem_barrier_all();
	for (int i = 0; i < 8; i++)
		ci[i] = me * 7 + i, co[i] = -1;
	shmem_barrier_all();
	shmem_broadcast32(co, ci, 2, 0, 0, 0, npes, pSync);
	CHECK(me == 0 ? co[0] == -1 : (co[0] == 0 && co[1] == 1 && co[2] == -1), "broadcast32");
	/* back to back, sizes growing and shrinking (the library's scratch
	 * grows under them), roots changing: every non-root gets the root's
	 * words, the root's dest stays as it was */
	{
		static const size_t words[] = {1, 300, 2, 5000, 64, 5000, 9000, 3};
		long *bs = shmem_malloc(9000 * sizeof(long)), *bd = shmem_malloc(9000 * sizeof(long));
		CHECK(bs && bd, "broadcast64 buffers");
		for (int k = 0; bs && bd && k < (int)(sizeof(words) / sizeof(words[0])); k++) {
			int rt = k % npes;
			for (size_t i = 0; i < words[k]; i++)
				bs[i] = (long)k << 40 | (long)me << 20 | (long)i, bd[i] = -7;
			shmem_broadcast64(bd, bs, words[k], rt, 0, 0, npes, pSync);
			size_t bad = words[k];
			for (size_t i = 0; i < words[k] && bad == words[k]; i++)
				if (bd[i] != (me == rt ? -7 : ((long)k << 40 | (long)rt << 20 | (long)i)))
					bad = i;
			CHECK(bad == words[k], "broadcast64 #%d (%zu words, root %d) wrong at %zu", k, words[k], rt, bad);
			/* the source (and the rest of the heap) is left alone */
			for (size_t i = 0; i < words[k] && bad == words[k]; i++)
				if (bs[i] != ((long)k << 40 | (long)me << 20 | (long)i))
					bad = i;
			CHECK(bad == words[k], "broadcast64 #%d (%zu words) changed source word %zu", k, words[k], bad);
			shmem_barrier_all(); /* bs and bd are rewritten next */
		}
		shmem_free(bd);
		shmem_free(bs);
	}
	shmem_sync_all();
	CHECK(shmem_team_sync(SHMEM_TEAM_WORLD) == 0, "team_sync WORLD");
	shmem_barrier_all();
	shmem_free(co);
	shmem_free(ci);
	shmem_free(d);
	shmem_free(s);
	NO_ERROR("collectives");
}

static void t_setup_memory_teams(void)
{
	IT_WHERE("setup");
	int prov = -1;
	CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &prov) == 0, "init_thread again");
	/* a second init provides what the first (shmem_init: SINGLE) did */
	CHECK(prov == SHMEM_THREAD_SINGLE, "provided %d", prov);
	shmem_query_thread(&prov);
	CHECK(prov == SHMEM_THREAD_SINGLE, "query_thread %d", prov);
	CHECK(_my_pe() == me && _num_pes() == npes, "_my_pe/_num_pes");
	CHECK(shmem_pe_accessible(npes - 1) && !shmem_pe_accessible(npes) && !shmem_pe_accessible(-1),
	      "pe_accessible");
	int local = 0;
	CHECK(shmem_addr_accessible(sbuf, (me + 1) % npes) == 1, "addr_accessible heap");
	CHECK(shmem_addr_accessible(&local, 0) == 0, "addr_accessible stack");
	CHECK(shmem_ptr(sbuf, me) == sbuf, "shmem_ptr self");
	int maj = 0, min = 0;
	char name[SHMEM_MAX_NAME_LEN];
	shmem_info_get_version(&maj, &min);
	shmem_info_get_name(name);
	CHECK(maj == 1 && min == 5 && SHMEM_MAJOR_VERSION == 1 && SHMEM_MINOR_VERSION == 5, "version");
	CHECK(strstr(name, "hoist") != NULL, "name '%s'", name);

	IT_WHERE("memory");
	long *m = shmem_malloc(1000 * sizeof(long));
	for (int i = 0; i < 1000; i++)
		m[i] = ~0L;
	shmem_free(m);
	long *c = shmem_calloc(1000, sizeof(long));
	int nz = 0;
	for (int i = 0; i < 1000; i++)
		nz += c[i] != 0;
	CHECK(nz == 0, "calloc: %d nonzero", nz);
	for (int i = 0; i < 1000; i++)
		c[i] = me * 5000 + i;
	long *r = shmem_realloc(c, 3000 * sizeof(long));
	CHECK(r != NULL, "realloc");
	nz = 0;
	for (int i = 0; i < 1000; i++)
		nz += r[i] != me * 5000 + i;
	CHECK(nz == 0, "realloc kept: %d wrong", nz);
	shmem_long_p(&r[2999], me, (me + 1) % npes);
	shmem_barrier_all();
	CHECK(r[2999] == (me + npes - 1) % npes, "put into the grown block");
	char *al = shmem_align(4096, 100);
	CHECK(al && ((uintptr_t)al & 4095) == 0 && shmem_addr_accessible(al, 0), "align");
	void *h = shmem_malloc_with_hints(64, SHMEM_MALLOC_ATOMICS_REMOTE);
	void *o = shmalloc(16), *oa = shmemalign(256, 8);
	CHECK(h && o && oa && ((uintptr_t)oa & 255) == 0, "with_hints/shmalloc/shmemalign");
	o = shrealloc(o, 32);
	CHECK(shmem_malloc(0) == NULL, "malloc(0)");
	shfree(oa);
	shfree(o);
	shmem_free(h);
	shmem_free(al);
	shmem_free(r);
	NO_ERROR("memory");

	IT_WHERE("teams");
	CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me && shmem_team_n_pes(SHMEM_TEAM_WORLD) == npes,
	      "team WORLD");
	int ns = shmem_team_n_pes(SHMEM_TEAM_SHARED), mine = 0;
	for (int p = 0; p < npes; p++)
		mine += shmem_ptr(sbuf, p) != NULL;
	CHECK(ns == mine && ns >= 1, "team SHARED has %d PEs, %d mappable", ns, mine);
	CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, SHMEM_TEAM_SHARED) ==
		      shmem_team_my_pe(SHMEM_TEAM_SHARED), "translate self");
	for (int i = 0; i < ns; i++) {
		int w = shmem_team_translate_pe(SHMEM_TEAM_SHARED, i, SHMEM_TEAM_WORLD);
		CHECK(w >= 0 && shmem_ptr(sbuf, w) != NULL, "SHARED member %d -> %d", i, w);
	}
	CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, npes, SHMEM_TEAM_SHARED) == -1, "translate out");
	CHECK(shmem_team_sync(SHMEM_TEAM_SHARED) == 0 && shmem_team_sync(SHMEM_TEAM_SHARED) == 0,
	      "team_sync SHARED");
	shmem_team_config_t cfg = {.num_contexts = 9};
	CHECK(shmem_team_get_config(SHMEM_TEAM_WORLD, SHMEM_TEAM_NUM_CONTEXTS, &cfg) == 0 &&
		      cfg.num_contexts == 0, "get_config");
	long *x = sbuf, *y = dbuf;
	x[0] = 1;
	int rc = shmem_long_sum_reduce(SHMEM_TEAM_SHARED, y, x, 1);
	CHECK(rc == 0 && y[0] == ns, "sum over SHARED (%d PEs)", ns);
	NO_ERROR("teams");

	IT_WHERE("ctx and splits");
	shmem_team_t t = SHMEM_TEAM_WORLD; /* splits: osh_team */
	CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes + 1, NULL, 0, &t) != 0 &&
		      t == SHMEM_TEAM_INVALID, "split_strided past the parent fails cleanly");
	CHECK(shmemx_last_error() == -EINVAL, "split: -EINVAL kept");
	shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
	CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0 && ctx != SHMEM_CTX_INVALID, "ctx_create");
	shmem_ctx_destroy(ctx); /* contexts in depth: osh_ctx */
	shmem_team_t ct = SHMEM_TEAM_INVALID;
	CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &ct) == 0 && ct == SHMEM_TEAM_WORLD, "ctx_get_team");
	shmem_barrier_all();

	IT_WHERE("errors");
	long stackvar = 0;
	shmem_long_p(&stackvar, 1, (me + 1) % npes);
	CHECK(shmemx_last_error() == -EFAULT, "put to a non-symmetric address: -EFAULT");
	shmem_long_p(x, 1, npes);
	CHECK(shmemx_last_error() == -EINVAL, "PE outside the job: -EINVAL");
	CHECK(shmemx_last_error() == 0, "cleared");
	CHECK(strlen(shmemx_strerror(-EFAULT)) > 0, "strerror");
	shmem_barrier_all();
}

/* the deprecated active-set forms over the set of all PEs */
static void t_active_set(void)
{
	IT_WHERE("active set");
	static long pSync[SHMEM_REDUCE_SYNC_SIZE];
	long *l = shmem_malloc(64 * sizeof(long)), *ld = shmem_malloc(64 * sizeof(long));
	int *i32 = shmem_malloc(64 * sizeof(int)), *id = shmem_malloc(64 * sizeof(int));
	short *sh = shmem_malloc(4 * sizeof(short)), *sd = shmem_malloc(4 * sizeof(short));
	double *dv = shmem_malloc(2 * sizeof(double)), *dd = shmem_malloc(2 * sizeof(double));
	static long pWrkL[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 8];
	static int pWrkI[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 8];
	static short pWrkS[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 8];
	static double pWrkD[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 8];
	for (int i = 0; i < 2; i++) {
		l[i] = me + i;
		i32[i] = me * 3 - i;
		sh[i] = (short)(1 << (me + i));
		dv[i] = 1.0 + me;
	}
	shmem_barrier_all();
	shmem_long_sum_to_all(ld, l, 2, 0, 0, npes, pWrkL, pSync);
	shmem_barrier_all();
	shmem_int_max_to_all(id, i32, 2, 0, 0, npes, pWrkI, pSync);
	shmem_barrier_all();
	shmem_short_or_to_all(sd, sh, 2, 0, 0, npes, pWrkS, pSync);
	shmem_barrier_all();
	shmem_double_prod_to_all(dd, dv, 2, 0, 0, npes, pWrkD, pSync);
	long sum0 = (long)npes * (npes - 1) / 2;
	double prod = 1;
	for (int p = 0; p < npes; p++)
		prod *= 1.0 + p;
	CHECK(ld[0] == sum0 && ld[1] == sum0 + npes, "long_sum_to_all");
	CHECK(id[0] == (npes - 1) * 3 && id[1] == (npes - 1) * 3 - 1, "int_max_to_all");
	CHECK(sd[0] == (short)((1 << npes) - 1) && sd[1] == (short)(((1 << npes) - 1) << 1),
	      "short_or_to_all");
	CHECK(dd[0] == prod && dd[1] == prod, "double_prod_to_all");
	shmem_barrier_all();

	for (int j = 0; j < 2; j++)
		l[j] = me * 10 + j;
	shmem_fcollect64(ld, l, 2, 0, 0, npes, pSync);
	for (int p = 0; p < npes; p++)
		CHECK(ld[2 * p] == p * 10 && ld[2 * p + 1] == p * 10 + 1, "fcollect64 [%d]", p);
	shmem_barrier_all();
	for (int j = 0; j <= me; j++)
		i32[j] = me * 100 + j;
	shmem_collect32(id, i32, (size_t)me + 1, 0, 0, npes, pSync);
	for (int p = 0, k = 0; p < npes; p++)
		for (int j = 0; j <= p; j++, k++)
			CHECK(id[k] == p * 100 + j, "collect32 [%d]", k);
	shmem_barrier_all();
	for (int j = 0; j < npes; j++)
		l[j] = me * 100 + j;
	shmem_alltoall64(ld, l, 1, 0, 0, npes, pSync);
	for (int p = 0; p < npes; p++)
		CHECK(ld[p] == p * 100 + me, "alltoall64 [%d]", p);
	shmem_barrier_all();
	memset(id, 0, 64 * sizeof(int));
	for (int j = 0; j < npes; j++)
		i32[2 * j] = me * 100 + j;
	shmem_barrier_all();
	shmem_alltoalls32(id, i32, 1, 2, 1, 0, 0, npes, pSync);
	for (int p = 0; p < npes; p++)
		CHECK(id[p] == p * 100 + me, "alltoalls32 [%d]", p);
	NO_ERROR("active set");
	if (npes > 1) { /* an active set of one PE (smaller sets: osh_team) */
		ld[0] = -5;
		shmem_long_sum_to_all(ld, l, 1, me, 0, 1, pWrkL, pSync);
		CHECK(ld[0] == l[0], "an active set of one PE");
		NO_ERROR("active set of one");
	}
	shmem_barrier_all();
	shmem_free(dd);
	shmem_free(dv);
	shmem_free(sd);
	shmem_free(sh);
	shmem_free(id);
	shmem_free(i32);
	shmem_free(ld);
	shmem_free(l);
}

int main(void)
{
	me = osh_start("osh_coll");
	npes = shmem_n_pes();
	sbuf = shmem_malloc(K * 32);
	dbuf = shmem_malloc(K * 32);
	t_setup_memory_teams();
	t_data_collectives();
	t_reductions();
	t_active_set();
	shmem_free(dbuf);
	shmem_free(sbuf);
	return osh_end();
}
