/*
 * osh_team.c - teams beyond SHMEM_TEAM_WORLD: split_strided into even and
 * odd PEs (and a split of a split), split_2d, their my_pe/n_pes/translate/
 * get_config, SHMEM_TEAM_INVALID for the PEs outside, every collective on
 * a split team (sync, broadcast, collect, fcollect, alltoall, alltoalls,
 * reductions of a libhoist type and of one it lacks) and on
 * SHMEM_TEAM_SHARED, the deprecated active-set forms on the odd PEs,
 * split/destroy more times than there are scratch slots, and 70 split
 * teams alive at once (more than the first chunk of slots), each with a
 * broadcast and a sum, twice. Every result is
 * compared with the value computed here from the members' world PEs.
 */
#include "osh_common.h"

#define K 3
static int me, npes;
static long *src, *dst; /* symmetric, 64 * npes longs */
/* symmetric, several chunks of a team's scratch (shmem_malloc is over all
 * PEs: not called in a team's part) */
static const size_t big = 5000;
static int *big_buf;

/* member i of team t is world PE w[i] */
static void members(shmem_team_t t, int *w)
{
	for (int i = 0; i < shmem_team_n_pes(t); i++)
		w[i] = shmem_team_translate_pe(t, i, SHMEM_TEAM_WORLD);
}

static void fill(long *d)
{
	for (int i = 0; i < 64 * npes; i++)
		d[i] = -3;
}

/* every collective on t, results from the members' world PEs */
static void collectives(shmem_team_t t, const char *name)
{
	int n = shmem_team_n_pes(t), ti = shmem_team_my_pe(t), w[64];
	CHECK(n >= 1 && n <= 64 && ti >= 0 && ti < n, "%s: n %d me %d", name, n, ti);
	members(t, w);
	CHECK(w[ti] == me, "%s: translate self", name);
	for (int i = 0; i < n; i++)
		CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, w[i], t) == i, "%s: back %d", name, i);
	CHECK(shmem_team_sync(t) == 0, "%s: sync", name);

	IT_WHERE("broadcast");
	int root = n - 1;
	for (int k = 0; k < K; k++) {
		src[k] = me * 10 + k;
		dst[k] = -1;
	}
	CHECK(shmem_team_sync(t) == 0, "sync"); /* the root's puts come after our -1 */
	CHECK(shmem_long_broadcast(t, dst, src, K, root) == 0, "%s: broadcast", name);
	for (int k = 0; k < K; k++)
		CHECK(dst[k] == w[root] * 10 + k, "%s: broadcast [%d] = %ld", name, k, dst[k]);

	IT_WHERE("fcollect");
	fill(dst);
	CHECK(shmem_team_sync(t) == 0, "sync");
	CHECK(shmem_long_fcollect(t, dst, src, K) == 0, "%s: fcollect", name);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < K; k++)
			CHECK(dst[i * K + k] == w[i] * 10 + k, "%s: fcollect [%d][%d]", name, i, k);

	IT_WHERE("collect"); /* member i gives i + 1 elements */
	fill(dst);
	CHECK(shmem_team_sync(t) == 0, "sync");
	for (int k = 0; k <= ti; k++)
		src[k] = me * 100 + k;
	CHECK(shmem_long_collect(t, dst, src, (size_t)ti + 1) == 0, "%s: collect", name);
	for (int i = 0, o = 0; i < n; o += ++i)
		for (int k = 0; k <= i; k++)
			CHECK(dst[o + k] == w[i] * 100 + k, "%s: collect [%d][%d]", name, i, k);

	IT_WHERE("alltoall");
	fill(dst);
	CHECK(shmem_team_sync(t) == 0, "sync");
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 2; k++)
			src[i * 2 + k] = me * 1000 + i * 10 + k;
	CHECK(shmem_long_alltoall(t, dst, src, 2) == 0, "%s: alltoall", name);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 2; k++)
			CHECK(dst[i * 2 + k] == w[i] * 1000 + ti * 10 + k, "%s: alltoall [%d][%d]",
			      name, i, k);

	IT_WHERE("alltoalls"); /* one element per pair, source stride 3, dest 2 */
	CHECK(shmem_team_sync(t) == 0, "sync");
	for (int i = 0; i < n; i++)
		src[i * 3] = me * 1000 + i;
	for (int i = 0; i < 2 * n; i++)
		dst[i] = -7;
	CHECK(shmem_long_alltoalls(t, dst, src, 2, 3, 1) == 0, "%s: alltoalls", name);
	for (int i = 0; i < n; i++)
		CHECK(dst[i * 2] == w[i] * 1000 + ti && dst[i * 2 + 1] == -7, "%s: alltoalls [%d]",
		      name, i);

	IT_WHERE("reductions");
	CHECK(shmem_team_sync(t) == 0, "sync");
	long sum = 0, max = 0;
	unsigned char x = 0;
	for (int i = 0; i < n; i++) {
		sum += w[i] + 1;
		max = w[i] > max ? w[i] : max;
		x ^= (unsigned char)(1u << (w[i] % 8));
	}
	src[0] = me + 1;
	src[1] = me;
	CHECK(shmem_long_sum_reduce(t, dst, src, 1) == 0 && dst[0] == sum, "%s: sum %ld", name,
	      dst[0]);
	CHECK(shmem_long_max_reduce(t, dst, src + 1, 1) == 0 && dst[0] == max, "%s: max", name);
	unsigned char *cs = (unsigned char *)src, *cd = (unsigned char *)dst;
	cs[0] = (unsigned char)(1u << (me % 8));
	CHECK(shmem_uchar_xor_reduce(t, cd, cs, 1) == 0 && cd[0] == x, "%s: uchar xor", name);
	/* in place, several chunks of the scratch: element j of member i is i + j */
	int *ib = big_buf;
	for (size_t j = 0; j < big; j++)
		ib[j] = (int)(me + j);
	CHECK(shmem_int_sum_reduce(t, ib, ib, big) == 0, "%s: in-place sum", name);
	long wsum = 0;
	for (int i = 0; i < n; i++)
		wsum += w[i];
	for (size_t j = 0; j < big; j++)
		CHECK(ib[j] == (int)(wsum + (long)n * (long)j), "%s: in-place sum [%zu]", name, j);
	NO_ERROR(name);
}

int main(void)
{
	me = osh_start("osh_team");
	npes = shmem_n_pes();
	src = shmem_malloc(64 * (size_t)npes * sizeof(long));
	dst = shmem_malloc(64 * (size_t)npes * sizeof(long));
	big_buf = shmem_malloc(big * sizeof(int));
	CHECK(src && dst && big_buf, "malloc");

	IT_WHERE("split even/odd");
	shmem_team_t even = SHMEM_TEAM_WORLD, odd = SHMEM_TEAM_WORLD;
	shmem_team_config_t cfg = {.num_contexts = 3};
	CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, &cfg,
				       SHMEM_TEAM_NUM_CONTEXTS, &even) == 0,
	      "split even");
	if (npes > 1)
		CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odd) == 0,
		      "split odd");
	else
		odd = SHMEM_TEAM_INVALID;
	shmem_team_t mine = me % 2 ? odd : even, other = me % 2 ? even : odd;
	CHECK(mine != SHMEM_TEAM_INVALID, "in my team");
	CHECK(other == SHMEM_TEAM_INVALID, "outside the other team: SHMEM_TEAM_INVALID");
	CHECK(shmem_team_n_pes(mine) == (me % 2 ? npes / 2 : (npes + 1) / 2), "n_pes");
	CHECK(shmem_team_my_pe(mine) == me / 2, "my_pe");
	CHECK(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1 && shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1,
	      "INVALID: -1");
	CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me ^ 1, mine) == -1, "other parity: -1");
	shmem_team_config_t got = {.num_contexts = -1};
	CHECK(shmem_team_get_config(mine, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 &&
		      got.num_contexts == (me % 2 ? 0 : 3),
	      "get_config %d", got.num_contexts);
	collectives(mine, me % 2 ? "odd" : "even");

	IT_WHERE("split of a split"); /* the last two of my team */
	int mn = shmem_team_n_pes(mine);
	if (mn >= 2) {
		shmem_team_t tail = SHMEM_TEAM_WORLD;
		CHECK(shmem_team_split_strided(mine, mn - 2, 1, 2, NULL, 0, &tail) == 0, "split");
		if (shmem_team_my_pe(mine) >= mn - 2) {
			CHECK(tail != SHMEM_TEAM_INVALID && shmem_team_n_pes(tail) == 2, "tail");
			CHECK(shmem_team_translate_pe(tail, 0, SHMEM_TEAM_WORLD) ==
				      shmem_team_translate_pe(mine, mn - 2, SHMEM_TEAM_WORLD),
			      "tail member 0");
			collectives(tail, "tail");
			shmem_team_destroy(tail);
		} else {
			CHECK(tail == SHMEM_TEAM_INVALID, "not in tail");
		}
	}
	shmem_barrier_all();

	IT_WHERE("split_2d"); /* rows of 2: x teams {0,1} {2,3} ..., y teams the columns */
	shmem_team_t xt = SHMEM_TEAM_INVALID, yt = SHMEM_TEAM_INVALID;
	CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &xt, NULL, 0, &yt) == 0, "split_2d");
	CHECK(xt != SHMEM_TEAM_INVALID && yt != SHMEM_TEAM_INVALID, "in both axes");
	CHECK(shmem_team_my_pe(xt) == me % 2 && shmem_team_n_pes(xt) == (npes - me / 2 * 2 < 2 ? 1 : 2),
	      "x team");
	CHECK(shmem_team_my_pe(yt) == me / 2 && shmem_team_n_pes(yt) == (npes - me % 2 + 1) / 2,
	      "y team");
	for (int i = 0; i < shmem_team_n_pes(yt); i++)
		CHECK(shmem_team_translate_pe(yt, i, SHMEM_TEAM_WORLD) == me % 2 + 2 * i, "y member");
	collectives(xt, "x");
	collectives(yt, "y");
	shmem_team_destroy(xt);
	shmem_team_destroy(yt);

	IT_WHERE("SHARED");
	collectives(SHMEM_TEAM_SHARED, "shared");

	IT_WHERE("active sets"); /* the odd PEs: start 1, stride 2^1 */
	static long pSync[SHMEM_REDUCE_SYNC_SIZE];
	static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
	int on = npes / 2;
	if (me % 2 && on >= 1) {
		shmem_barrier(1, 1, on, pSync);
		src[0] = me;
		dst[0] = -1;
		shmem_long_sum_to_all(dst, src, 1, 1, 1, on, pWrk, pSync);
		CHECK(dst[0] == (long)on * on, "odd sum_to_all %ld", dst[0]); /* 1 + 3 + ... */
		for (int k = 0; k < 2; k++) {
			src[k] = me * 10 + k;
			dst[k] = -1;
		}
		shmem_barrier(1, 1, on, pSync); /* the root's puts come after our -1 */
		shmem_broadcast64(dst, src, 2, 0, 1, 1, on, pSync);
		for (int k = 0; k < 2; k++)
			CHECK(dst[k] == (me == 1 ? -1 : 10 + k), "broadcast64 [%d]", k);
		shmem_barrier(1, 1, on, pSync);
		shmem_fcollect64(dst, src, 2, 1, 1, on, pSync);
		for (int i = 0; i < on; i++)
			CHECK(dst[2 * i] == (2 * i + 1) * 10 && dst[2 * i + 1] == (2 * i + 1) * 10 + 1,
			      "fcollect64 [%d]", i);
		shmem_barrier(1, 1, on, pSync);
		int *is = (int *)src, *id = (int *)dst;
		for (int i = 0; i < on; i++)
			is[i] = me * 100 + i;
		shmem_alltoall32(id, is, 1, 1, 1, on, pSync);
		for (int i = 0; i < on; i++)
			CHECK(id[i] == (2 * i + 1) * 100 + me / 2, "alltoall32 [%d]", i);
		NO_ERROR("active set");
	}
	shmem_barrier_all();

	IT_WHERE("more splits than slots");
	for (int r = 0; r < 40; r++) {
		shmem_team_t t = SHMEM_TEAM_INVALID;
		CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, r % npes, 0, 1, NULL, 0, &t) == 0,
		      "split %d", r);
		CHECK((t != SHMEM_TEAM_INVALID) == (me == r % npes), "one PE team %d", r);
		if (t != SHMEM_TEAM_INVALID)
			CHECK(shmem_team_sync(t) == 0, "sync one");
		/* one PE holds a slot the others do not: the split of all agrees
		 * on another */
		shmem_team_t all = SHMEM_TEAM_INVALID;
		CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &all) == 0 &&
			      all != SHMEM_TEAM_INVALID,
		      "split all %d", r);
		src[0] = 1;
		CHECK(shmem_long_sum_reduce(all, dst, src, 1) == 0 && dst[0] == npes, "sum all %d", r);
		shmem_team_destroy(all);
		shmem_team_destroy(t);
	}
	/* more live split teams than the first chunk of scratch slots holds
	 * (32, 2 taken): splits of SHMEM_TEAM_WORLD add chunks; twice, so the
	 * second round reuses the slots the destroys gave back */
	enum { NLIVE = 70 };
	static shmem_team_t live[NLIVE];
	for (int round = 0; round < 2; round++) {
		IT_WHERE("70 live teams, round %d", round);
		for (int i = 0; i < NLIVE; i++) {
			/* even i: all PEs; odd i: every other PE, from PE (i/2)%2 */
			int st = i % 2 ? (i / 2) % 2 : 0, stride = i % 2 ? 2 : 1;
			int size = i % 2 ? (npes - st + 1) / 2 : npes;
			live[i] = SHMEM_TEAM_INVALID;
			CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, st, stride, size, NULL, 0,
						       &live[i]) == 0,
			      "live split %d: %s", i, shmemx_last_error_string());
			int in = me >= st && (me - st) % stride == 0;
			CHECK((live[i] != SHMEM_TEAM_INVALID) == in, "live team %d membership", i);
		}
		/* team i broadcasts into dst[i] (a root may put before a member
		 * arrived: each team has its own word) */
		for (int i = 0; i < NLIVE; i++)
			dst[i] = -1;
		shmem_barrier_all();
		for (int i = 0; i < NLIVE; i++) {
			shmem_team_t t = live[i];
			if (t == SHMEM_TEAM_INVALID)
				continue;
			int n = shmem_team_n_pes(t), root = i % n;
			int wroot = shmem_team_translate_pe(t, root, SHMEM_TEAM_WORLD);
			src[0] = i * 1000 + me;
			CHECK(shmem_long_broadcast(t, &dst[i], src, 1, root) == 0 &&
				      dst[i] == i * 1000 + wroot,
			      "live team %d broadcast: %ld", i, dst[i]);
			src[1] = me + i;
			CHECK(shmem_long_sum_reduce(t, &dst[100], &src[1], 1) == 0, "live sum %d", i);
			long want = 0;
			for (int k = 0; k < n; k++)
				want += shmem_team_translate_pe(t, k, SHMEM_TEAM_WORLD) + i;
			CHECK(dst[100] == want, "live team %d sum %ld, want %ld", i, dst[100], want);
		}
		NO_ERROR("live teams");
		for (int i = 0; i < NLIVE; i += 2) /* give back in a mixed order */
			shmem_team_destroy(live[i]);
		for (int i = 1; i < NLIVE; i += 2)
			shmem_team_destroy(live[i]);
		shmem_barrier_all();
	}
	shmem_team_destroy(mine);
	shmem_free(big_buf);
	shmem_free(src);
	shmem_free(dst);
	return osh_end();
}
