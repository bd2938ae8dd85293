/*
 * it_coll: collectives against a model every PE computes itself.
 *
 *   it_coll        every kind, type and operation at several sizes (some
 *                  above the 60 KiB active-message payload), every root,
 *                  in place and not; 200 iterations of random kinds and
 *                  sizes (the same random sequence on every PE); split-
 *                  phase forms in flight together, interleaved with puts
 *                  and gets, hoist_wait_from in random order with each
 *                  block checked as soon as it is reported; slab delivery
 *                  (below); invalid arguments and disagreements fail on
 *                  every PE with the same error, and the next collective
 *                  still works.
 *   it_coll kill   the last PE dies (SIGKILL) while the others are in an
 *                  allreduce: they must get -ECONNRESET (the watchdog turns
 *                  a hang into a failure). Driven by coll_kill.sh.
 *
 * Slab delivery: with IT_COLL_LATE=p (a PE on another node than PE 0),
 * PE p posts its alltoall only after PE 0 told it to (a put), and PE 0
 * tells it only after hoist_wait_from() returned the blocks of PE 0's own
 * node: if blocks were delivered only at the end, this would deadlock.
 * The daemon's per-PE path only (HOIST_DIRECT=0 in the environment, the
 * same on every PE): on the node path (nodecoll.c) hoist_wait_from
 * delivers every block at once, when the whole collective completed.
 */
#include <signal.h>

#include "internal.h"
#include "it_common.h"

#define NTYPES 5
#define NOPS 7

static int me, n;

static size_t esize(int t)
{
	return t == HOIST_INT32 || t == HOIST_FLOAT ? 4 : 8;
}

static const char *tname[] = {"int32", "int64", "uint64", "float", "double"};
static const char *oname[] = {"sum", "prod", "min", "max", "and", "or", "xor"};

/* Element i of PE p's vector: integers use every bit; floating point values
 * are small integers (every order of summation is exact; products of
 * {-2..2} over 9 PEs too). */
static void elem(int t, int op, uint64_t seed, int p, size_t i, void *out)
{
	uint64_t h = it_hash(seed, (uint64_t)p, i, (uint64_t)t, (uint64_t)op);
	double fv = op == HOIST_PROD ? (double)((int64_t)(h % 5) - 2) : (double)((int64_t)(h % 2001) - 1000);
	switch (t) {
	case HOIST_INT32: { int32_t v = (int32_t)(uint32_t)h; memcpy(out, &v, 4); break; }
	case HOIST_INT64: { int64_t v = (int64_t)h; memcpy(out, &v, 8); break; }
	case HOIST_UINT64: memcpy(out, &h, 8); break;
	case HOIST_FLOAT: { float v = (float)fv; memcpy(out, &v, 4); break; }
	case HOIST_DOUBLE: memcpy(out, &fv, 8); break;
	}
}

#define MODEL(T, U)                                                                                \
	do {                                                                                       \
		T x, y, z;                                                                         \
		memcpy(&x, acc, sizeof(T));                                                        \
		memcpy(&y, v, sizeof(T));                                                          \
		switch (op) {                                                                      \
		case HOIST_SUM: z = (T)((U)x + (U)y); break;                                       \
		case HOIST_PROD: z = (T)((U)x * (U)y); break;                                      \
		case HOIST_MIN: z = x < y ? x : y; break;                                          \
		case HOIST_MAX: z = x > y ? x : y; break;                                          \
		default: z = BITS; break;                                                          \
		}                                                                                  \
		memcpy(acc, &z, sizeof(T));                                                        \
	} while (0)

static void model_op(int t, int op, void *acc, const void *v)
{
#define BITS (op == HOIST_AND ? (x & y) : op == HOIST_OR ? (x | y) : (x ^ y))
	switch (t) {
	case HOIST_INT32: MODEL(int32_t, uint32_t); break;
	case HOIST_INT64: MODEL(int64_t, uint64_t); break;
	case HOIST_UINT64: MODEL(uint64_t, uint64_t); break;
#undef BITS
#define BITS x
	case HOIST_FLOAT: MODEL(float, float); break;
	case HOIST_DOUBLE: MODEL(double, double); break;
#undef BITS
	}
}

/* expected[i] = op over p of elem(p, i) */
static void model_reduce(int t, int op, uint64_t seed, size_t count, void *expect)
{
	size_t es = esize(t);
	unsigned char v[8];
	for (size_t i = 0; i < count; i++) {
		char *acc = (char *)expect + i * es;
		elem(t, op, seed, 0, i, acc);
		for (int p = 1; p < n; p++) {
			elem(t, op, seed, p, i, v);
			model_op(t, op, acc, v);
		}
	}
}

static void fill_vec(int t, int op, uint64_t seed, int p, size_t count, void *buf)
{
	for (size_t i = 0; i < count; i++)
		elem(t, op, seed, p, i, (char *)buf + i * esize(t));
}

static char *A, *B;     /* symmetric work areas */
static char *expect;    /* private model */
static size_t AREA;

/* ---- one checked collective of each kind -------------------------------- */

static void do_allreduce(int t, int op, size_t count, int inplace, uint64_t seed, int rooted, int root)
{
	size_t bytes = count * esize(t);
	char *src = A, *dst = inplace ? A : B;
	fill_vec(t, op, seed, me, count, src);
	if (!inplace)
		memset(dst, 0xee, bytes + 64);
	else
		memset(A + bytes, 0xee, 64);
	IT_WHERE("%s %s %s count %zu inplace %d", rooted ? "reduce" : "allreduce", tname[t], oname[op],
		 count, inplace);
	int rc = rooted ? hoist_reduce(dst, src, count, (hoist_type_t)t, (hoist_op_t)op, root)
			: hoist_allreduce(dst, src, count, (hoist_type_t)t, (hoist_op_t)op);
	if (rc) {
		IT_FAIL("%s %s %s count %zu inplace %d returned %s", rooted ? "reduce" : "allreduce",
			tname[t], oname[op], count, inplace, it_errname(rc));
		return;
	}
	if (rooted && me != root) {
		if (!inplace && it_check_byte(dst, bytes, 0xee) != bytes)
			IT_FAIL("reduce wrote the dst of non-root PE %d", me);
		return;
	}
	model_reduce(t, op, seed, count, expect);
	if (memcmp(dst, expect, bytes) != 0) {
		size_t i = 0;
		while (memcmp(dst + i * esize(t), expect + i * esize(t), esize(t)) == 0)
			i++;
		IT_FAIL("%s %s %s count %zu inplace %d: element %zu differs", rooted ? "reduce" : "allreduce",
			tname[t], oname[op], count, inplace, i);
	}
	if (it_check_byte(dst + bytes, 64, 0xee) != 64)
		IT_FAIL("%s count %zu wrote past dst", rooted ? "reduce" : "allreduce", count);
}

static void do_broadcast(size_t len, int root, int inplace, uint64_t seed)
{
	char *dst = inplace ? A : B;
	memset(A, 0x11, len + 64);
	memset(B, 0x22, len + 64);
	if (me == root)
		it_fill(A, len, seed);
	IT_WHERE("broadcast len %zu root %d", len, root);
	int rc = hoist_broadcast(dst, A, len, root);
	if (rc) {
		IT_FAIL("broadcast len %zu root %d returned %s", len, root, it_errname(rc));
		return;
	}
	size_t bad = it_check_fill(dst, len, seed);
	if (bad != len)
		IT_FAIL("broadcast len %zu root %d inplace %d: byte %zu differs", len, root, inplace, bad);
	if (it_check_byte(dst + len, 64, inplace ? 0x11 : 0x22) != 64)
		IT_FAIL("broadcast len %zu wrote past dst", len);
}

static uint64_t block_key(uint64_t seed, int from, int to)
{
	return it_hash(seed, 0xb10c, (uint64_t)from, (uint64_t)to, 0);
}

/* PE from's block as PE `to` must see it: allgather blocks do not depend
 * on the receiver. */
static size_t check_block(int alltoall, const char *dst, size_t len, uint64_t seed, int from)
{
	return it_check_fill(dst + (size_t)from * len, len, block_key(seed, from, alltoall ? me : -1));
}

static void fill_exchange(int alltoall, char *src, size_t len, uint64_t seed)
{
	if (alltoall)
		for (int q = 0; q < n; q++)
			it_fill(src + (size_t)q * len, len, block_key(seed, me, q));
	else
		it_fill(src, len, block_key(seed, me, -1));
}

static void do_exchange(int alltoall, size_t len, int inplace, uint64_t seed)
{
	char *src = A, *dst = inplace ? A : B;
	size_t total = (size_t)n * len;
	memset(dst, 0x33, total + 64);
	fill_exchange(alltoall, src, len, seed);
	IT_WHERE("%s len %zu inplace %d", alltoall ? "alltoall" : "allgather", len, inplace);
	int rc = alltoall ? hoist_alltoall(dst, src, len) : hoist_allgather(dst, src, len);
	if (rc) {
		IT_FAIL("%s len %zu returned %s", alltoall ? "alltoall" : "allgather", len, it_errname(rc));
		return;
	}
	for (int p = 0; p < n; p++) {
		size_t bad = check_block(alltoall, dst, len, seed, p);
		if (bad != len) {
			IT_FAIL("%s len %zu inplace %d: block of PE %d byte %zu differs",
				alltoall ? "alltoall" : "allgather", len, inplace, p, bad);
			break;
		}
	}
	if (it_check_byte(dst + total, 64, 0x33) != 64)
		IT_FAIL("%s len %zu wrote past dst", alltoall ? "alltoall" : "allgather", len);
}

/* ---- parts ---------------------------------------------------------------- */

/* Signed zeros: odd PEs give -0.0, even ones +0.0 (and a NaN in the
 * second element from the last PE). Every PE must get the same bits
 * (min -0.0, max +0.0, a NaN wins), whichever node combined in which
 * order. */
static void part_signed_zero(void)
{
	for (int op = HOIST_MIN; op <= HOIST_MAX; op++) {
		IT_WHERE("signed zeros, %s", oname[op]);
		double v[2] = {me & 1 ? -0.0 : 0.0, me == n - 1 ? __builtin_nan("") : 1.0 * me};
		memcpy(A, v, sizeof(v));
		IT_OK(hoist_allreduce(B, A, 2, HOIST_DOUBLE, (hoist_op_t)op));
		double r[2];
		memcpy(r, B, sizeof(r));
		int want_neg = op == HOIST_MIN && n > 1;
		if (r[0] != 0 || (__builtin_signbit(r[0]) != 0) != want_neg)
			IT_FAIL("%s of +-0.0 over %d PEs gave %g (sign %d)", oname[op], n, r[0],
				__builtin_signbit(r[0]) != 0);
		if (r[1] == r[1])
			IT_FAIL("%s with a NaN gave %g", oname[op], r[1]);
	}
}

static void part_every_op(void)
{
	static const size_t counts[] = {1, 3, 1000, 17000};
	uint64_t seed = 1;
	for (int t = 0; t < NTYPES; t++)
		for (int op = 0; op < NOPS; op++) {
			if (t >= HOIST_FLOAT && op >= HOIST_AND) {
				IT_EXPECT(hoist_allreduce(B, A, 4, (hoist_type_t)t, (hoist_op_t)op), -EINVAL,
					  "bitwise %s on %s", oname[op], tname[t]);
				continue;
			}
			for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
				do_allreduce(t, op, counts[k], 0, seed++, 0, 0);
				do_allreduce(t, op, counts[k], 1, seed++, 0, 0);
				int root = (int)(seed % (uint64_t)n);
				do_allreduce(t, op, counts[k], (int)(k & 1), seed++, 1, root);
			}
		}
}

static void part_shapes(void)
{
	static const size_t lens[] = {0, 1, 13, 8192, 70001};
	uint64_t seed = 1000;
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		for (int root = 0; root < n; root++)
			do_broadcast(lens[k], root, root & 1, seed++);
		for (int inplace = 0; inplace < 2; inplace++) {
			do_exchange(0, lens[k], inplace, seed++);
			do_exchange(1, lens[k], inplace, seed++);
		}
	}
	/* a large allreduce: the ring over 3+ nodes */
	do_allreduce(HOIST_DOUBLE, HOIST_SUM, 40000, 0, seed++, 0, 0);
	do_allreduce(HOIST_INT64, HOIST_XOR, 40001, 1, seed++, 0, 0);
}

static void part_random(unsigned iters)
{
	struct it_rng rng = {0xc0113c7};
	for (unsigned it = 0; it < iters; it++) {
		uint64_t seed = 50000 + it;
		unsigned kind = (unsigned)it_rng_below(&rng, 5);
		int inplace = (int)it_rng_below(&rng, 2);
		size_t len = it_rng_below(&rng, 4) == 0 ? 60000 + it_rng_below(&rng, 100000)
							 : it_rng_below(&rng, 3000);
		int root = (int)it_rng_below(&rng, (uint64_t)n);
		int t = (int)it_rng_below(&rng, NTYPES);
		int op = (int)it_rng_below(&rng, t >= HOIST_FLOAT ? 4 : NOPS);
		switch (kind) {
		case 0: do_broadcast(len, root, inplace, seed); break;
		case 1: do_allreduce(t, op, len / 8 + 1, inplace, seed, 0, 0); break;
		case 2: do_allreduce(t, op, len / 8 + 1, inplace, seed, 1, root); break;
		case 3: do_exchange(0, len / 4, inplace, seed); break;
		case 4: do_exchange(1, len / 4, inplace, seed); break;
		}
	}
}

/* Several split-phase collectives in flight with puts and gets between. */
static void part_split(unsigned iters, char *C, char *D, char *E)
{
	struct it_rng rng = {0x5b1175 + (uint64_t)me};
	for (unsigned it = 0; it < iters; it++) {
		uint64_t seed = 90000 + it * 7;
		size_t len = it % 3 == 0 ? 70000 : 1 + it * 37;
		size_t count = 5000 + it;
		/* allreduce of int64 sum: A -> B; alltoall C -> D; allgather E -> E+... */
		fill_vec(HOIST_INT64, HOIST_SUM, seed, me, count, A);
		fill_exchange(1, C, len, seed + 1);
		fill_exchange(0, E, len, seed + 2);
		char *G = E + len; /* allgather dst follows its src block */
		hoist_req_t *r1 = NULL, *r2 = NULL, *r3 = NULL;
		IT_WHERE("split %u start", it);
		IT_OK(hoist_allreduce_start(B, A, count, HOIST_INT64, HOIST_SUM, &r1), "split %u", it);
		IT_OK(hoist_alltoall_start(D, C, len, &r2), "split %u", it);
		IT_OK(hoist_allgather_start(G, E, len, &r3), "split %u", it);
		/* puts and gets while they run: into the neighbour's area 2 of
		 * the put window, from the neighbour's area written last round */
		int right = (me + 1) % n, left = (me + n - 1) % n;
		char *win = D + AREA - 128; /* beyond every alltoall dst */
		uint64_t mine = it_hash(seed, (uint64_t)me, 7, 7, 7);
		IT_OK(hoist_put(right, win, &mine, 8), "split %u put", it);
		uint64_t got = 0;
		IT_OK(hoist_get(&got, left, win + 8, 8), "split %u get", it);
		uint64_t want = it ? it_hash(90000 + (it - 1) * 7, (uint64_t)((left + n - 1) % n), 7, 7, 7) : 0;
		if (got != want)
			IT_FAIL("split %u: get from PE %d read %" PRIx64 ", want %" PRIx64, it, left, got, want);
		/* blocks in a random order, each checked as soon as it is there */
		int order[64];
		for (int p = 0; p < n; p++)
			order[p] = p;
		for (int p = n - 1; p > 0; p--) {
			int k = (int)it_rng_below(&rng, (uint64_t)p + 1), x = order[p];
			order[p] = order[k];
			order[k] = x;
		}
		for (int k = 0; k < n; k++) {
			int p = order[k];
			IT_WHERE("split %u wait_from %d", it, p);
			if (IT_OK(hoist_wait_from(r2, p), "split %u alltoall from %d", it, p) == 0 &&
			    check_block(1, D, len, seed + 1, p) != len)
				IT_FAIL("split %u: alltoall block of PE %d wrong when wait_from returned", it, p);
			if (IT_OK(hoist_wait_from(r3, p), "split %u allgather from %d", it, p) == 0 &&
			    it_check_fill(G + (size_t)p * len, len, block_key(seed + 2, p, -1)) != len)
				IT_FAIL("split %u: allgather block of PE %d wrong when wait_from returned", it, p);
		}
		IT_EXPECT(hoist_wait_from(r1, 0), -EINVAL, "wait_from on an allreduce");
		IT_EXPECT(hoist_wait_from(r2, n), -EINVAL, "wait_from PE outside the job");
		IT_OK(hoist_wait(r3), "split %u", it);
		IT_OK(hoist_wait(r2), "split %u", it);
		IT_WHERE("split %u wait allreduce", it);
		if (IT_OK(hoist_wait(r1), "split %u", it) == 0) {
			model_reduce(HOIST_INT64, HOIST_SUM, seed, count, expect);
			if (memcmp(B, expect, count * 8))
				IT_FAIL("split %u: allreduce result wrong", it);
		}
		/* the put landed once a barrier completed (it implies quiet) */
		IT_OK(hoist_barrier(), "split %u", it);
		uint64_t in;
		memcpy(&in, win, 8);
		uint64_t from_left = it_hash(seed, (uint64_t)left, 7, 7, 7);
		if (in != from_left)
			IT_FAIL("split %u: put from PE %d not there", it, left);
		memcpy(win + 8, win, 8); /* what the right neighbour gets next round */
		IT_OK(hoist_barrier(), "split %u", it);
	}
}

static void part_slabs(char *C, char *D, uint64_t *flag)
{
	const char *e = getenv("IT_COLL_LATE");
	int late = e ? atoi(e) : -1;
	const char *direct = getenv("HOIST_DIRECT");
	if (late <= 0 || late >= n || !direct || strcmp(direct, "0"))
		return; /* the node path delivers every block at once */
	size_t len = 4096;
	uint64_t seed = 777;
	fill_exchange(1, C, len, seed);
	*flag = 0;
	IT_OK(hoist_barrier());
	hoist_req_t *r = NULL;
	if (me == late) {
		IT_WHERE("slabs: late PE waits for PE 0's go");
		if (!it_wait_u64(flag, 1, 40))
			IT_FAIL("slabs: no go from PE 0");
	}
	IT_OK(hoist_alltoall_start(D, C, len, &r));
	if (me == 0) {
		IT_WHERE("slabs: PE 0 waits for its own block before the late PE started");
		IT_OK(hoist_wait_from(r, 0));
		if (check_block(1, D, len, seed, 0) != len)
			IT_FAIL("slabs: own block wrong");
		uint64_t one = 1;
		IT_OK(hoist_put(late, flag, &one, 8));
		IT_OK(hoist_quiet());
	}
	IT_WHERE("slabs: wait");
	IT_OK(hoist_wait(r));
	for (int p = 0; p < n; p++)
		if (check_block(1, D, len, seed, p) != len)
			IT_FAIL("slabs: block of PE %d wrong", p);
	IT_OK(hoist_barrier());
}

static void part_invalid(void)
{
	uint64_t seed = 123456;
	/* every PE the same bad argument */
	IT_EXPECT(hoist_broadcast(B, A, 8, n), -EINVAL, "root == size");
	IT_EXPECT(hoist_reduce(B, A, 8, HOIST_INT32, HOIST_SUM, -1), -EINVAL, "root -1");
	IT_EXPECT(hoist_allreduce(B, A, 8, (hoist_type_t)99, HOIST_SUM), -EINVAL, "type 99");
	IT_EXPECT(hoist_allreduce(B, A, 8, HOIST_INT32, (hoist_op_t)7), -EINVAL, "op 7");
	IT_EXPECT(hoist_allreduce(B, A, 8, HOIST_DOUBLE, HOIST_XOR), -EINVAL, "xor on double");
	do_allreduce(HOIST_INT32, HOIST_SUM, 100, 0, seed++, 0, 0);
	/* one PE disagrees: everybody fails */
	if (n > 1) {
		IT_EXPECT(hoist_allreduce(B, A, me == n - 1 ? 9 : 8, HOIST_INT32, HOIST_SUM), -EINVAL,
			  "count differs on PE %d", n - 1);
		do_allreduce(HOIST_INT64, HOIST_MAX, 70, 0, seed++, 0, 0);
		IT_EXPECT(hoist_broadcast(B, A, 64, me == 0 ? 1 : 0), -EINVAL, "root differs on PE 0");
		/* the root of an eager broadcast (the node path of a one-node
		 * job) returns before it can see the mismatch: its next
		 * collective reports it (and still runs). A reader (3+ PEs)
		 * whose parameters agree with the root's and that finds the
		 * root there before every other PE compares with the root
		 * alone and returns (root_read in client/nodecoll.c): the
		 * full compare comes later, so the broadcast or the next
		 * collective that is not an eager broadcast reports it, one
		 * of the two. Over several nodes every reader on the root's
		 * node copies the root's slot and returns: the next
		 * collective that is no eager broadcast reports it; on the
		 * other nodes a node-path reader takes the root's data from
		 * the node's inbox when it came before the verdict (ABI 11):
		 * one of the two again. The PE whose len differs: the
		 * broadcast */
		struct hoist_ctx *hc = hoist__ctx();
		int node1 = hc->nc_on && !hc->nc_mn;
		int brc = hoist_broadcast(B, A, me == n - 1 ? 65 : 64, 0);
		int arc = hoist_allreduce(B, A, 1, HOIST_INT64, HOIST_SUM);
		/* a reader that agrees with the root, on the root's node */
		int ahead = hc->nc_on && hc->nc_base && hc->nc_base[0] && me != 0 && me != n - 1;
		int want_b = -EINVAL;
		if (hc->nc_on && me == 0)
			want_b = 0;
		else if (ahead && hc->nc_mn) /* several nodes: it copies the root's slot */
			want_b = 0;
		else if (ahead && node1 && brc == 0) /* one node: if it found the root alone */
			want_b = 0;
		else if (hc->nc_on && hc->nc_mn && hc->nc_base && !hc->nc_base[0] && me != n - 1 &&
			 brc == 0) /* the root on another node: if the inbox came first */
			want_b = 0;
		if (brc != want_b || arc != (want_b ? 0 : -EINVAL))
			IT_FAIL("len differs on PE %d: the broadcast returned %s, the allreduce after "
				"it %s (want -EINVAL from %s)", n - 1, it_errname(brc), it_errname(arc),
				want_b ? "the broadcast" : "the allreduce");
		/* every PE names itself the root: on the node path each is
		 * the root of an eager broadcast, returns at once and compares
		 * nothing; nobody else compares either (no PE reads): each
		 * must still learn of it by its next collective */
		int all_early = hoist__ctx()->nc_on;
		IT_EXPECT(hoist_broadcast(B, A, 8, me), all_early ? 0 : -EINVAL,
			  "every PE names itself the root");
		IT_EXPECT(hoist_allreduce(B, A, 1, HOIST_INT64, HOIST_SUM), all_early ? -EINVAL : 0,
			  "the collective after the broadcast whose every PE was its root");
		IT_EXPECT(hoist_reduce(B, A, 4, HOIST_INT32, HOIST_SUM, me == n - 1 ? 0 : n - 1), -EINVAL,
			  "reduce root differs");
		if (me == 0)
			IT_EXPECT(hoist_allgather(B, A, 8), -EINVAL, "kind differs (allgather)");
		else
			IT_EXPECT(hoist_allreduce(B, A, 1, HOIST_INT64, HOIST_SUM), -EINVAL, "kind differs");
		do_broadcast(100, n - 1, 0, seed++);
		IT_EXPECT(hoist_alltoall(B, A, me == 0 ? 16 : 8), -EINVAL, "size differs");
		IT_EXPECT(hoist_allreduce(B, A, 8, HOIST_INT32, me == 0 ? HOIST_MAX : HOIST_MIN), -EINVAL,
			  "op differs");
		do_exchange(0, 100, 0, seed++);
	}
	/* one PE's dst outside its heap: the error reaches every PE */
	char priv[64];
	IT_EXPECT(hoist_allgather(me == n - 1 ? priv : B, A, 8), -EFAULT, "dst of PE %d not symmetric", n - 1);
	IT_EXPECT(hoist_alltoall(B, A, (size_t)1 << 40), -EFAULT, "src/dst beyond the heap");
	do_exchange(1, 33, 0, seed++);
	/* a NULL request: -EINVAL, the collective still runs */
	IT_EXPECT(hoist_allreduce_start(B, A, 8, HOIST_INT32, HOIST_SUM, NULL), -EINVAL, "NULL req");
	do_allreduce(HOIST_UINT64, HOIST_OR, 10, 1, seed++, 0, 0);
	IT_EXPECT(hoist_wait(NULL), -EINVAL);
	IT_EXPECT(hoist_wait_from(NULL, 0), -EINVAL);
}

static int run_kill(void)
{
	it_init("it_coll kill", &me, &n);
	it_watchdog(40);
	double *a = it_malloc(4096), *b = it_malloc(4096);
	for (int i = 0; i < 16; i++)
		a[i] = me + i;
	IT_OK(hoist_allreduce(b, a, 16, HOIST_DOUBLE, HOIST_SUM));
	IT_OK(hoist_barrier());
	if (me == n - 1) {
		/* the others are (about to be) in the allreduce */
		struct timespec ts = {0, 200 * 1000 * 1000};
		nanosleep(&ts, NULL);
		raise(SIGKILL);
	}
	IT_WHERE("allreduce with a dying PE");
	IT_EXPECT(hoist_allreduce(b, a, 16, HOIST_DOUBLE, HOIST_SUM), -ECONNRESET);
	IT_WHERE("alltoall after the death");
	IT_EXPECT(hoist_alltoall(b, a, 8), -ECONNRESET);
	hoist_finalize();
	if (it_failures)
		return 1;
	fprintf(stderr, "[it_coll kill rank %d] PASS\n", me);
	return 0;
}

/* The PEs with IT_COLL_STALL set stop before an allreduce; coll_kill.sh
 * kills their daemon: the others' allreduce fails with -ECONNRESET. */
static int run_peer(void)
{
	it_init("it_coll peer", &me, &n);
	it_watchdog(40);
	int64_t *a = it_malloc(4096), *b = it_malloc(4096);
	a[0] = me;
	IT_OK(hoist_allreduce(b, a, 1, HOIST_INT64, HOIST_SUM));
	if (b[0] != (int64_t)n * (n - 1) / 2)
		IT_FAIL("allreduce before the loss: %lld", (long long)b[0]);
	IT_OK(hoist_barrier());
	const char *stall = getenv("IT_COLL_STALL");
	if (stall && strcmp(stall, "1") == 0) {
		fprintf(stderr, "[it_coll peer rank %d] stalling\n", me);
		for (;;)
			pause(); /* the script kills us after our daemon */
	}
	IT_WHERE("allreduce while a node is lost");
	IT_EXPECT(hoist_allreduce(b, a, 512, HOIST_INT64, HOIST_SUM), -ECONNRESET);
	IT_EXPECT(hoist_broadcast(b, a, 8, 0), -ECONNRESET);
	hoist_finalize();
	if (it_failures)
		return 1;
	fprintf(stderr, "[it_coll peer rank %d] PASS\n", me);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "kill") == 0)
		return run_kill();
	if (argc > 1 && strcmp(argv[1], "peer") == 0)
		return run_peer();
	it_init("it_coll", &me, &n);
	it_watchdog(110);
	if (n > 64) {
		IT_FAIL("at most 64 PEs");
		return it_finish();
	}
	AREA = (n < 3 ? 3 : (size_t)n) * 180000 + 4096; /* 40001 * 8 fits */
	A = it_malloc(AREA);
	B = it_malloc(AREA);
	char *C = it_malloc(AREA), *D = it_malloc(AREA), *E = it_malloc(AREA);
	uint64_t *flag = it_malloc(64);
	expect = it_xmalloc(AREA);
	memset(D, 0, AREA);
	IT_OK(hoist_barrier());
	unsigned iters = getenv("IT_COLL_ITERS") ? (unsigned)atoi(getenv("IT_COLL_ITERS")) : 200;

	part_every_op();
	part_signed_zero();
	part_shapes();
	part_invalid();
	part_random(iters);
	part_split(20, C, D, E);
	part_slabs(C, D, flag);
	free(expect);
	return it_finish();
}
