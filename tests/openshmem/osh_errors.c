/*
 * osh_errors.c - bad use gets the error code and a message that says what
 * was wrong (shmemx_last_error, shmemx_last_error_string), and the program
 * goes on: a non-symmetric address (put, get, atomic, put_signal), a PE
 * outside SHMEM_TEAM_WORLD or outside a team context's team, an invalid
 * context and team, splits of a parent without every PE past the slots, and team collectives called with mismatched arguments
 * (broadcast nelems and PE_root, PE_root outside the team, fcollect and
 * alltoall nelems, a reduction's nreduce, including 0 against 1): every
 * member gets -EINVAL and the same message, no data moves (dest and the
 * words after it keep their values), nobody hangs, and a correct call on
 * the same team right after works. On SHMEM_TEAM_WORLD a disagreeing
 * broadcast, fcollect or reduction (0 elements at one PE included) is
 * refused by libhoist on every PE, an alltoalls by the library (the sizes
 * are gathered first), and 0 elements everywhere is no error.
 */
#include "osh_common.h"

static int me, npes;

/* the kept error is code and its message contains want */
static void expect(int code, const char *want, const char *what)
{
	int e = shmemx_last_error();
	const char *m = shmemx_last_error_string();
	CHECK(e == code, "%s: error %d (%s), want %d", what, e, shmemx_strerror(e), code);
	CHECK(strstr(m, want) != NULL, "%s: message \"%s\" lacks \"%s\"", what, m, want);
	if (me == 0)
		it_log("%s: %s", what, m);
}

static long gx; /* symmetric (the program's data) */

int main(void)
{
	me = osh_start("osh_errors");
	npes = shmem_n_pes();
	int right = (me + 1) % npes;
	char want[256];

	/* ---- a non-symmetric address ---- */
	IT_WHERE("non-symmetric");
	long *priv = malloc(4 * sizeof(long)), val[4] = {1, 2, 3, 4};
	shmem_putmem(priv, val, sizeof(val), right);
	snprintf(want, sizeof(want), "shmem_putmem: %p (PE %d's side) is not symmetric", (void *)priv,
		 right);
	expect(-EFAULT, want, "putmem to malloc'ed memory");
	(void)shmem_long_g(priv, right);
	snprintf(want, sizeof(want), "long_g: %p (PE %d's side) is not symmetric", (void *)priv, right);
	expect(-EFAULT, want, "long_g from malloc'ed memory");
	shmem_long_atomic_add(priv, 1, right);
	expect(-EFAULT, "is not symmetric", "atomic_add on malloc'ed memory");
	static uint64_t sig;
	uint64_t *psig = malloc(sizeof(uint64_t));
	shmem_long_put_signal(&gx, val, 1, psig, 1, SHMEM_SIGNAL_SET, right);
	snprintf(want, sizeof(want), "%p (PE %d's side) is not symmetric", (void *)psig, right);
	expect(-EFAULT, want, "put_signal with a malloc'ed signal word");
	shmem_long_put_signal(&gx, val, 1, &sig, 1, 7, right);
	expect(-EINVAL, "sig_op 7 is neither", "put_signal with a bad sig_op");
	free(psig);
	/* nothing kept now: the string still tells the last one */
	CHECK(shmemx_last_error() == 0, "error cleared");
	CHECK(strstr(shmemx_last_error_string(), "sig_op 7") != NULL, "last message kept");

	/* ---- a PE outside the team ---- */
	IT_WHERE("PE outside");
	shmem_long_p(&gx, 1, npes);
	snprintf(want, sizeof(want), "shmem_long_p: PE %d outside SHMEM_TEAM_WORLD (%d PEs)", npes,
		 npes);
	expect(-EINVAL, want, "p to PE n_pes");
	shmem_getmem(val, &gx, sizeof(long), -1);
	snprintf(want, sizeof(want), "shmem_getmem: PE -1 outside SHMEM_TEAM_WORLD (%d PEs)", npes);
	expect(-EINVAL, want, "getmem from PE -1");
	shmem_team_t even = SHMEM_TEAM_INVALID;
	CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &even) == 0,
	      "split even");
	if (even != SHMEM_TEAM_INVALID) {
		shmem_ctx_t ctx;
		CHECK(shmem_team_create_ctx(even, 0, &ctx) == 0, "team ctx");
		int tn = shmem_team_n_pes(even);
		shmem_ctx_long_p(ctx, &gx, 5, tn);
		snprintf(want, sizeof(want), "shmem_ctx_long_p: PE %d outside the context's team (%d PEs)",
			 tn, tn);
		expect(-EINVAL, want, "ctx p outside the team");
		shmem_ctx_destroy(ctx);
	}
	/* splits of a parent without every PE use the slots there are: they
	 * run out, with a message, and the teams made work */
	if (even != SHMEM_TEAM_INVALID && shmem_team_n_pes(even) < npes) {
		IT_WHERE("slots of a smaller parent");
		static shmem_team_t sub[600];
		int made = 0, tn = shmem_team_n_pes(even);
		while (made < 600 && shmem_team_split_strided(even, 0, 1, tn, NULL, 0, &sub[made]) == 0)
			made++;
		CHECK(made >= 20 && made < 600, "%d splits of the even PEs", made);
		expect(-ENOMEM, "shmem_team_split_strided: no free team scratch slot: the parent's "
				"members hold all", "splits of the even PEs run out");
		int one = 1, sum = 0;
		static int s1, d1;
		s1 = one;
		CHECK(shmem_int_sum_reduce(sub[made - 1], &d1, &s1, 1) == 0, "sum on the last");
		sum = d1;
		CHECK(sum == tn, "sum on the last team %d, want %d", sum, tn);
		while (made > 0)
			shmem_team_destroy(sub[--made]);
		NO_ERROR("smaller parent");
	}
	shmem_ctx_long_p(SHMEM_CTX_INVALID, &gx, 5, 0);
	expect(-EINVAL, "shmem_ctx_long_p: context (nil) is not a live context", "invalid ctx");
	CHECK(shmem_team_sync(SHMEM_TEAM_INVALID) != 0, "sync invalid team fails");
	expect(-EINVAL, "shmem_team_sync: team (nil) is not a team this PE is in", "invalid team");
	shmem_team_destroy(even);
	shmem_barrier_all();

	/* ---- team collectives with mismatched arguments ---- */
	shmem_team_t all = SHMEM_TEAM_INVALID; /* every PE, on the team collectives */
	CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &all) == 0 &&
		      all != SHMEM_TEAM_INVALID,
	      "split all");
	long *src = shmem_malloc(8 * npes * sizeof(long)), *dst = shmem_malloc(8 * npes * sizeof(long));
	int *isrc = shmem_malloc(8 * sizeof(int)), *idst = shmem_malloc(8 * sizeof(int));
	for (int i = 0; i < 8 * npes; i++)
		src[i] = 1000 * me + i, dst[i] = -7;
	for (int i = 0; i < 8; i++)
		isrc[i] = me + i, idst[i] = -7;
	shmem_barrier_all();
#define UNTOUCHED(what)                                                                      \
	do {                                                                                 \
		for (int i_ = 0; i_ < 8 * npes; i_++)                                        \
			CHECK(dst[i_] == -7, "%s: dst[%d] = %ld written", what, i_, dst[i_]); \
	} while (0)

	IT_WHERE("broadcast nelems");
	CHECK(shmem_long_broadcast(all, dst, src, me == 0 ? 2 : 1, 0) != 0, "broadcast fails");
	expect(-EINVAL, "shmem_broadcast: nelems (in bytes) differs between team PEs 0 and 1 (16 and 8)",
	       "broadcast, nelems 2 at PE 0 and 1 elsewhere");
	UNTOUCHED("broadcast nelems");
	IT_WHERE("broadcast root");
	CHECK(shmem_long_broadcast(all, dst, src, 1, me == 0 ? 0 : 1) != 0, "broadcast fails");
	expect(-EINVAL, "shmem_broadcast: PE_root differs between team PEs 0 and 1 (0 and 1)",
	       "broadcast, root 0 at PE 0 and 1 elsewhere");
	UNTOUCHED("broadcast root");
	CHECK(shmem_long_broadcast(all, dst, src, 1, npes) != 0, "broadcast fails");
	snprintf(want, sizeof(want), "shmem_broadcast: PE_root %d outside the team (%d PEs)", npes, npes);
	expect(-EINVAL, want, "broadcast, root outside the team");
	UNTOUCHED("broadcast root outside");
	IT_WHERE("fcollect nelems");
	CHECK(shmem_long_fcollect(all, dst, src, me == npes - 1 ? 3 : 2) != 0, "fcollect fails");
	snprintf(want, sizeof(want),
		 "shmem_fcollect: nelems (in bytes) differs between team PEs 0 and %d (16 and 24)",
		 npes - 1);
	expect(-EINVAL, want, "fcollect, nelems 3 at the last PE");
	UNTOUCHED("fcollect");
	IT_WHERE("alltoall nelems");
	CHECK(shmem_long_alltoall(all, dst, src, me == 1 ? 1 : 2) != 0, "alltoall fails");
	expect(-EINVAL, "shmem_alltoall: nelems (in bytes) differs between team PEs 0 and 1 (16 and 8)",
	       "alltoall, nelems 1 at PE 1");
	UNTOUCHED("alltoall");
	IT_WHERE("reduce nreduce");
	CHECK(shmem_int_sum_reduce(all, idst, isrc, me == 0 ? 0 : 1) != 0, "sum fails");
	expect(-EINVAL, "shmem_int_sum_reduce: nreduce differs between team PEs 0 and 1 (0 and 1)",
	       "sum_reduce, nreduce 0 at PE 0 and 1 elsewhere");
	for (int i = 0; i < 8; i++)
		CHECK(idst[i] == -7, "sum: idst[%d] = %d written", i, idst[i]);
	CHECK(shmem_int_max_reduce(all, idst, isrc, me == 0 ? 5 : 4) != 0, "max fails");
	expect(-EINVAL, "shmem_int_max_reduce: nreduce differs between team PEs 0 and 1 (5 and 4)",
	       "max_reduce, nreduce 5 at PE 0");
	for (int i = 0; i < 8; i++)
		CHECK(idst[i] == -7, "max: idst[%d] = %d written", i, idst[i]);

	/* the team still works */
	IT_WHERE("after the mismatches");
	CHECK(shmem_long_broadcast(all, dst, src, 2, npes - 1) == 0, "good broadcast");
	CHECK(dst[0] == 1000 * (npes - 1) && dst[1] == 1000 * (npes - 1) + 1, "broadcast data");
	CHECK(shmem_int_sum_reduce(all, idst, isrc, 3) == 0, "good sum");
	for (int i = 0; i < 3; i++)
		CHECK(idst[i] == npes * (npes - 1) / 2 + npes * i, "sum [%d] = %d", i, idst[i]);
	NO_ERROR("good collectives");

	/* ---- SHMEM_TEAM_WORLD: libhoist compares the PEs' arguments ---- */
	IT_WHERE("world broadcast");
	for (int i = 0; i < 8 * npes; i++)
		dst[i] = -7;
	shmem_barrier_all();
	/* the root of a small broadcast in a one-node job (libhoist's node
	 * collectives) returns as soon as its data is safe, before the others'
	 * arguments are there: its next collective that waits for the others
	 * reports the mismatch. So every PE calls one more (good) broadcast,
	 * from PE 1 */
	int brc = shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, me == 0 ? 2 : 1, 0);
	CHECK(brc != 0 || me == 0, "world broadcast fails");
	if (brc)
		expect(-EINVAL, "shmem_broadcast on all PEs: nelems or PE_root differ between PEs",
		       "world broadcast, nelems 2 at PE 0");
	int brc2 = shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, 1, 1);
	CHECK(brc2 == 0 || (me == 0 && !brc), "the broadcast after: %d", brc2);
	if (brc2)
		expect(-EINVAL, "shmem_broadcast on all PEs: nelems or PE_root differ between PEs",
		       "world broadcast, nelems 2 at PE 0, reported by the next broadcast");
	/* with 3+ PEs the root does not wait in a later eager broadcast for
	 * the others' verdict (libhoist: they may owe it from a broadcast they
	 * read ahead): then the next collective that is no eager broadcast
	 * reports it, exactly once */
	int brc3 = shmem_int_sum_reduce(SHMEM_TEAM_WORLD, idst, isrc, 3);
	CHECK(brc3 == 0 || (me == 0 && npes > 2 && !brc && !brc2), "the sum after: %d", brc3);
	CHECK(brc || brc2 || brc3, "PE 0 not told of the world broadcast's mismatch");
	if (brc3)
		CHECK(shmemx_last_error() == -EINVAL, "the sum after: error %d, want -EINVAL",
		      shmemx_last_error());
	for (int i = 0; i < 8 * npes; i++)
		dst[i] = -7;
	shmem_barrier_all();
	CHECK(shmem_long_alltoalls(SHMEM_TEAM_WORLD, dst, src, 1, 1, me == 1 ? 2 : 1) != 0,
	      "world alltoalls fails");
	expect(-EINVAL, "shmem_alltoalls on all PEs: nelems (in bytes) differs between PEs 0 and 1 "
			"(8 and 16)", "world alltoalls, nelems 2 at PE 1");
	UNTOUCHED("world alltoalls");
	/* 0 at one PE: still a collective call, refused on every PE */
	CHECK(shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, me == 1 ? 0 : 1) != 0,
	      "world fcollect fails");
	expect(-EINVAL, "shmem_fcollect on all PEs: nelems differ", "world fcollect, nelems 0 at PE 1");
	CHECK(shmem_int_sum_reduce(SHMEM_TEAM_WORLD, idst, isrc, me == 0 ? 0 : 2) != 0,
	      "world sum fails");
	expect(-EINVAL, "shmem_int_sum_reduce on all PEs: nreduce differ",
	       "world sum, nreduce 0 at PE 0");
	/* 0 everywhere, NULL pointers: nothing to do, no error */
	CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, NULL, NULL, 0, 0) == 0 &&
		      shmem_int_sum_reduce(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0,
	      "world collectives of 0 elements");
	NO_ERROR("world collectives of 0 elements");
	CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, 1, 0) == 0 && dst[0] == 0,
	      "good world broadcast");
	NO_ERROR("good world broadcast");

	shmem_team_destroy(all);
	shmem_barrier_all();
	shmem_free(src);
	shmem_free(dst);
	shmem_free(isrc);
	shmem_free(idst);
	free(priv);
	return osh_end();
}
