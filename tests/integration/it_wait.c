/*
 * Point-to-point synchronisation (hoist_wait_until*, hoist_test_until*).
 *
 *   it_wait   (2 PEs or more; run with HOIST_DIRECT=1 and =0, and across
 *              two daemons so that rank 1 is on another node)
 *   it_wait --poll  (2 PEs on one node, a short HOIST_WAIT_POLL_MS): rank 1
 *              stores through hoist_ptr, which wakes nobody (as data a NIC
 *              places); the sleep's bound must end rank 0's wait.
 *   it_wait --stream  (2 PEs, a long HOIST_SPIN_US): once rank 0 sleeps,
 *              rank 1 puts STREAM_N values into the variable it waits on,
 *              spaced, each but the last not ending the wait; a waiter
 *              woken spins its budget again before it sleeps, so the
 *              stream must cost a few wake-ups, not one a put.
 *   it_wait --cover  (2 PEs, a long HOIST_WAIT_POLL_MS; direct, through the
 *              daemon, across two daemons): rank 0 sleeps on some words
 *              of its heap (wait_until on one, wait_until_any over four,
 *              wait_until_all_vector over four) while rank 1 puts and
 *              atomically adds COVER_H times into other words of it, each
 *              once rank 0 sleeps; only writes that cover the waited words
 *              wake (hoist_heap_touched_range): rank 0 must be woken once
 *              per form, by the last write, which lands in its range, and
 *              rank 1 on the direct path must count COVER_H skipped wakes
 *              per form (the daemon's heap_wakes_skipped: wait_stats.sh).
 *
 * Rank 0 alone first checks every comparison and type against a model,
 * the test forms true and false, all/any/some with and without status
 * masks, the vector forms, and bad arguments.
 *
 * Then rank 1 wakes rank 0 ROUNDS times. Each round rank 0 waits (one of
 * the wait forms), and rank 1 puts only once rank 0 sleeps: it reads the
 * waiting flag of rank 0's heap wake line (hoist_shm.h) with hoist_get
 * until it is set. Each round's put takes another path: plain put, strided,
 * vector, and an aggregated put (a pack between daemons). Rank 0 checks
 * that it slept and that a writer, not the timeout, ended the sleep (its
 * p2p counters); run with HOIST_WAIT_POLL_MS so long that only a wake can
 * end it in the test's lifetime: a writer path that does not wake leaves
 * rank 0 asleep, and the watchdog turns the hang into a failure.
 * With HOIST_DIRECT=1 and both on one node the plain puts are direct
 * stores (rank 1 checks its direct-put counter). A last round has rank 0
 * wait for the dst of a broadcast it started, rooted at rank 1, which
 * joins once rank 0 sleeps: the daemon's landing of a collective wakes it.
 */
#include "it_common.h"
#include "internal.h"

#define ROUNDS 15
#define WATCHDOG_S 20
#define N 4

static int64_t model(hoist_type_t t, hoist_cmp_t cmp, uint64_t a, uint64_t b)
{
	int64_t sa, sb;
	uint64_t ua, ub;
	switch (t) {
	case HOIST_INT32: sa = (int32_t)(uint32_t)a, sb = (int32_t)(uint32_t)b; goto s;
	case HOIST_INT64: sa = (int64_t)a, sb = (int64_t)b; goto s;
	case HOIST_UINT32: ua = (uint32_t)a, ub = (uint32_t)b; goto u;
	case HOIST_UINT64: ua = a, ub = b; goto u;
	case HOIST_FLOAT: /* no point-to-point type */
	case HOIST_DOUBLE:
		break;
	}
	return -1;
s:
	switch (cmp) {
	case HOIST_CMP_EQ: return sa == sb;
	case HOIST_CMP_NE: return sa != sb;
	case HOIST_CMP_GT: return sa > sb;
	case HOIST_CMP_GE: return sa >= sb;
	case HOIST_CMP_LT: return sa < sb;
	case HOIST_CMP_LE: return sa <= sb;
	}
	return -1;
u:
	switch (cmp) {
	case HOIST_CMP_EQ: return ua == ub;
	case HOIST_CMP_NE: return ua != ub;
	case HOIST_CMP_GT: return ua > ub;
	case HOIST_CMP_GE: return ua >= ub;
	case HOIST_CMP_LT: return ua < ub;
	case HOIST_CMP_LE: return ua <= ub;
	}
	return -1;
}

static size_t tsize(hoist_type_t t)
{
	return t == HOIST_INT32 || t == HOIST_UINT32 ? 4 : 8;
}

static void store(void *p, hoist_type_t t, uint64_t v)
{
	if (tsize(t) == 4) {
		uint32_t x = (uint32_t)v;
		memcpy(p, &x, 4);
	} else {
		memcpy(p, &v, 8);
	}
}

/* Every comparison and type, test and (already true) wait, scalar forms. */
static void local_compare(char *var)
{
	static const hoist_type_t types[] = {HOIST_INT32, HOIST_UINT32,
						  HOIST_INT64, HOIST_UINT64};
	/* pairs around equality, the sign bit, and wrap-around */
	static const uint64_t pairs[][2] = {
		{5, 5}, {4, 5}, {6, 5}, {UINT64_MAX, 1}, {1, UINT64_MAX}, {0x80000000u, 0x7fffffffu},
		{0x8000000000000000ull, 0x7fffffffffffffffull}, {0, 0}, {0xffffffffu, 0}};
	for (size_t ti = 0; ti < 4; ti++) {
		hoist_type_t t = types[ti];
		for (size_t pi = 0; pi < sizeof(pairs) / sizeof(pairs[0]); pi++) {
			store(var, t, pairs[pi][0]);
			for (int cmp = HOIST_CMP_EQ; cmp <= HOIST_CMP_LE; cmp++) {
				IT_WHERE("compare type %d pair %zu cmp %d", (int)t, pi, cmp);
				int want = (int)model(t, (hoist_cmp_t)cmp, pairs[pi][0], pairs[pi][1]);
				IT_EXPECT(hoist_test_until(var, t, (hoist_cmp_t)cmp, pairs[pi][1]), want,
					  "type %d pair %zu cmp %d", (int)t, pi, cmp);
				if (want)
					IT_OK(hoist_wait_until(var, t, (hoist_cmp_t)cmp, pairs[pi][1]),
					      "already true: type %d pair %zu cmp %d", (int)t, pi, cmp);
				/* the array forms agree on one element */
				IT_EXPECT(hoist_test_until_all(var, 1, NULL, t, (hoist_cmp_t)cmp, pairs[pi][1]),
					  want, "all, type %d pair %zu cmp %d", (int)t, pi, cmp);
				size_t idx = 7;
				IT_EXPECT(hoist_test_until_any(var, 1, NULL, t, (hoist_cmp_t)cmp, pairs[pi][1], &idx),
					  want, "any, type %d pair %zu cmp %d", (int)t, pi, cmp);
				if (idx != (want ? 0 : SIZE_MAX))
					IT_FAIL("any: index %zu, want %s", idx, want ? "0" : "SIZE_MAX");
				/* vector form with the value in an array of the type */
				char val[8];
				store(val, t, pairs[pi][1]);
				IT_EXPECT(hoist_test_until_all_vector(var, 1, NULL, t, (hoist_cmp_t)cmp, val),
					  want, "all_vector, type %d pair %zu cmp %d", (int)t, pi, cmp);
			}
		}
	}
}

/* all/any/some with and without status masks, and the vector forms, on an
 * int64 array {10, 20, 30, 40} and uint32 array. */
static void local_arrays(int64_t *a, uint32_t *u)
{
	for (int i = 0; i < N; i++) {
		a[i] = 10 * (i + 1);
		u[i] = (uint32_t)(10 * (i + 1));
	}
	const int skip1[N] = {0, 1, 0, 0}, skip_all[N] = {1, 1, 1, 1}, only2[N] = {1, 1, 0, 1};
	size_t idx = 0, ids[N];
	IT_WHERE("arrays");
	/* all */
	IT_EXPECT(hoist_test_until_all(a, N, NULL, HOIST_INT64, HOIST_CMP_GE, 10), 1);
	IT_EXPECT(hoist_test_until_all(a, N, NULL, HOIST_INT64, HOIST_CMP_NE, 20), 0);
	IT_EXPECT(hoist_test_until_all(a, N, skip1, HOIST_INT64, HOIST_CMP_NE, 20), 1);
	IT_OK(hoist_wait_until_all(a, N, skip1, HOIST_INT64, HOIST_CMP_NE, 20));
	IT_EXPECT(hoist_test_until_all(a, N, skip_all, HOIST_INT64, HOIST_CMP_EQ, 99), 1,
		  "nothing takes part: true");
	IT_OK(hoist_wait_until_all(a, N, skip_all, HOIST_INT64, HOIST_CMP_EQ, 99));
	IT_EXPECT(hoist_test_until_all(u, N, NULL, HOIST_UINT32, HOIST_CMP_LT, 41), 1);
	IT_EXPECT(hoist_test_until_all(u, N, NULL, HOIST_UINT32, HOIST_CMP_LT, 40), 0);
	/* any */
	IT_EXPECT(hoist_test_until_any(a, N, NULL, HOIST_INT64, HOIST_CMP_GT, 25, &idx), 1);
	if (idx != 2 && idx != 3)
		IT_FAIL("any > 25: index %zu", idx);
	IT_EXPECT(hoist_test_until_any(a, N, only2, HOIST_INT64, HOIST_CMP_GT, 25, &idx), 1);
	if (idx != 2)
		IT_FAIL("any > 25 of {2}: index %zu", idx);
	IT_EXPECT(hoist_test_until_any(a, N, NULL, HOIST_INT64, HOIST_CMP_GT, 40, &idx), 0);
	if (idx != SIZE_MAX)
		IT_FAIL("any false: index %zu", idx);
	IT_EXPECT(hoist_test_until_any(a, N, skip1, HOIST_INT64, HOIST_CMP_EQ, 20, &idx), 0,
		  "the only match is masked");
	IT_OK(hoist_wait_until_any(a, N, skip1, HOIST_INT64, HOIST_CMP_LE, 10, &idx));
	if (idx != 0)
		IT_FAIL("wait any <= 10: index %zu", idx);
	idx = 0;
	IT_OK(hoist_wait_until_any(a, N, skip_all, HOIST_INT64, HOIST_CMP_EQ, 99, &idx));
	if (idx != SIZE_MAX)
		IT_FAIL("wait any, nothing takes part: index %zu", idx);
	/* some */
	int64_t n = hoist_test_until_some(a, N, ids, NULL, HOIST_INT64, HOIST_CMP_GE, 20);
	if (n != 3 || ids[0] != 1 || ids[1] != 2 || ids[2] != 3)
		IT_FAIL("some >= 20: %" PRId64 " (%zu %zu %zu)", n, ids[0], ids[1], ids[2]);
	n = hoist_test_until_some(a, N, ids, skip1, HOIST_INT64, HOIST_CMP_GE, 20);
	if (n != 2 || ids[0] != 2 || ids[1] != 3)
		IT_FAIL("some >= 20 without 1: %" PRId64, n);
	n = hoist_test_until_some(a, N, ids, NULL, HOIST_INT64, HOIST_CMP_GT, 40);
	if (n != 0)
		IT_FAIL("some > 40: %" PRId64, n);
	n = hoist_wait_until_some(u, N, ids, only2, HOIST_UINT32, HOIST_CMP_EQ, 30);
	if (n != 1 || ids[0] != 2)
		IT_FAIL("wait some == 30 of {2}: %" PRId64, n);
	n = hoist_wait_until_some(u, N, ids, skip_all, HOIST_UINT32, HOIST_CMP_EQ, 30);
	if (n != 0)
		IT_FAIL("wait some, nothing takes part: %" PRId64, n);
	/* vector forms: one value per element */
	int64_t v_eq[N] = {10, 20, 30, 40}, v_mix[N] = {10, 99, 99, 40};
	uint32_t u_lt[N] = {11, 20, 31, 41};
	IT_EXPECT(hoist_test_until_all_vector(a, N, NULL, HOIST_INT64, HOIST_CMP_EQ, v_eq), 1);
	IT_EXPECT(hoist_test_until_all_vector(a, N, NULL, HOIST_INT64, HOIST_CMP_EQ, v_mix), 0);
	const int mid[N] = {0, 1, 1, 0};
	IT_EXPECT(hoist_test_until_all_vector(a, N, mid, HOIST_INT64, HOIST_CMP_EQ, v_mix), 1);
	IT_OK(hoist_wait_until_all_vector(a, N, mid, HOIST_INT64, HOIST_CMP_EQ, v_mix));
	IT_EXPECT(hoist_test_until_any_vector(u, N, NULL, HOIST_UINT32, HOIST_CMP_GE, u_lt, &idx), 1);
	if (idx != 1)
		IT_FAIL("any_vector >=: index %zu", idx);
	IT_OK(hoist_wait_until_any_vector(u, N, NULL, HOIST_UINT32, HOIST_CMP_GE, u_lt, &idx));
	if (idx != 1)
		IT_FAIL("wait any_vector >=: index %zu", idx);
	n = hoist_test_until_some_vector(u, N, ids, NULL, HOIST_UINT32, HOIST_CMP_LT, u_lt);
	if (n != 3 || ids[0] != 0 || ids[1] != 2 || ids[2] != 3)
		IT_FAIL("some_vector <: %" PRId64, n);
	n = hoist_wait_until_some_vector(u, N, ids, skip1, HOIST_UINT32, HOIST_CMP_LT, u_lt);
	if (n != 3 || ids[0] != 0 || ids[1] != 2 || ids[2] != 3)
		IT_FAIL("wait some_vector <: %" PRId64, n);
	/* nelems 0 */
	IT_EXPECT(hoist_test_until_all(NULL, 0, NULL, HOIST_INT64, HOIST_CMP_EQ, 0), 1);
	IT_EXPECT(hoist_test_until_any(NULL, 0, NULL, HOIST_INT64, HOIST_CMP_EQ, 0, &idx), 0);
	if ((int)hoist_wait_until_some(NULL, 0, NULL, NULL, HOIST_INT64, HOIST_CMP_EQ, 0) != 0)
		IT_FAIL("some of nothing");
}

static void bad_args(int64_t *a)
{
	struct hoist_ctx *c = hoist__ctx();
	int64_t stack = 0;
	size_t idx, ids[N];
	IT_WHERE("bad arguments");
	IT_EXPECT(hoist_test_until(a, HOIST_FLOAT, HOIST_CMP_EQ, 0), -EINVAL, "float");
	IT_EXPECT(hoist_wait_until(a, HOIST_DOUBLE, HOIST_CMP_EQ, 0), -EINVAL, "double");
	IT_EXPECT(hoist_wait_until(a, (hoist_type_t)9, HOIST_CMP_EQ, 0), -EINVAL, "type 9");
	IT_EXPECT(hoist_wait_until(a, HOIST_INT64, (hoist_cmp_t)0, 0), -EINVAL, "cmp 0");
	IT_EXPECT(hoist_test_until(a, HOIST_INT64, (hoist_cmp_t)7, 0), -EINVAL, "cmp 7");
	IT_EXPECT(hoist_wait_until((char *)a + 4, HOIST_INT64, HOIST_CMP_EQ, 0), -EINVAL,
		  "misaligned 64");
	IT_EXPECT(hoist_test_until((char *)a + 2, HOIST_UINT32, HOIST_CMP_EQ, 0), -EINVAL,
		  "misaligned 32");
	IT_EXPECT(hoist_wait_until(&stack, HOIST_INT64, HOIST_CMP_EQ, 0), -EFAULT, "not in heap");
	IT_EXPECT(hoist_wait_until(NULL, HOIST_INT64, HOIST_CMP_EQ, 0), -EINVAL, "NULL");
	/* the wake line is not a variable; nor is past the end */
	char *line = c->heap_base + c->heap_bytes - 64;
	IT_EXPECT(hoist_wait_until(line, HOIST_UINT32, HOIST_CMP_EQ, 0), -EFAULT, "wake line");
	IT_EXPECT(hoist_test_until_all(line - 8, 2, NULL, HOIST_INT64, HOIST_CMP_EQ, 0), -EFAULT,
		  "into the wake line");
	IT_EXPECT(hoist_test_until_all(a, SIZE_MAX / 2, NULL, HOIST_INT64, HOIST_CMP_EQ, 0),
		  -EINVAL, "overflowing count");
	IT_EXPECT(hoist_test_until_all(a, 1u << 30, NULL, HOIST_INT64, HOIST_CMP_EQ, 0), -EFAULT,
		  "past the heap");
	IT_EXPECT(hoist_wait_until_any(a, N, NULL, HOIST_INT64, HOIST_CMP_EQ, 0, NULL), -EINVAL,
		  "any without index");
	IT_EXPECT((int)hoist_wait_until_some(a, N, NULL, NULL, HOIST_INT64, HOIST_CMP_EQ, 0),
		  -EINVAL, "some without indices");
	IT_EXPECT(hoist_wait_until_all_vector(a, N, NULL, HOIST_INT64, HOIST_CMP_EQ, NULL), -EINVAL,
		  "vector without values");
	IT_EXPECT(hoist_test_until_any_vector(&stack, 1, NULL, HOIST_INT64, HOIST_CMP_EQ, a, &idx),
		  -EFAULT, "vector not in heap");
	IT_EXPECT((int)hoist_test_until_some_vector(a, N, ids, NULL, HOIST_INT64, (hoist_cmp_t)99, a),
		  -EINVAL, "vector bad cmp");
	void *peer = hoist_size() > 1 ? hoist_ptr(a, 1) : NULL;
	if (peer)
		IT_EXPECT(hoist_wait_until(peer, HOIST_INT64, HOIST_CMP_EQ, 0), -EFAULT,
			  "another PE's variable");
}

/* Rank 1's view of rank 0's waiting flag (its heap's wake line). */
static uint32_t peer_waiting(void)
{
	struct hoist_ctx *c = hoist__ctx();
	struct hoist_heap_wake w;
	/* the line is inside [0, heap_bytes): a get may read it */
	int rc = hoist_get(&w, 0, c->heap_base + c->heap_bytes - HOIST_HEAP_WAKE_BYTES, sizeof(w));
	if (rc) {
		IT_FAIL("get of rank 0's wake line: %s", it_errname(rc));
		exit(1);
	}
	return w.waiting;
}

/* Rank 1: poll rank 0's waiting flag until rank 0 sleeps (a 1 ms nap
 * every 64 polls). */
static void until_peer_sleeps(void)
{
	unsigned polls = 0;
	while (!peer_waiting())
		if (++polls % 64 == 0) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
}

enum { PATH_PUT, PATH_STRIDED, PATH_VEC, PATH_AGG, PATH_AMO, NPATHS };
static const char *path_name[] = {"put", "strided", "vector", "aggregated", "atomic"};

/* Rank 1: what round k puts into rank 0's flags, once rank 0 sleeps. */
static void round_values(int k, int form, int64_t *v)
{
	int64_t b = 100 * (int64_t)k;
	memset(v, 0, N * sizeof(*v));
	switch (form) {
	case 0: v[0] = b; break;                                   /* wait_until >= b */
	case 1: v[0] = b, v[2] = b + 2, v[3] = b + 3; break;       /* all >= b, 1 masked */
	case 2: v[1] = b + 1; break;                               /* any >= b: 1 */
	case 3: v[2] = b + 2; break;                               /* some >= b: {2} */
	case 4: for (int i = 0; i < N; i++) v[i] = b + i; break;   /* all_vector == */
	default: v[3] = b + 3; break;                              /* any_vector >=: 3 */
	}
}

static void writer(int64_t *flags, int k, int path)
{
	int64_t v[N];
	round_values(k, k % 6, v);
	struct hoist_ctx *c = hoist__ctx();
	uint64_t direct_before = c->direct_puts;
	/* no progress bump while polling: a waiter that never sleeps hangs
	 * here and the watchdog says so */
	until_peer_sleeps();
	IT_WHERE("round %d: rank 0 sleeps, %s put", k, path_name[path]);
	switch (path) {
	case PATH_PUT:
		IT_OK(hoist_put(0, flags, v, sizeof(v)), "round %d", k);
		break;
	case PATH_STRIDED:
		IT_OK(hoist_put_strided(0, flags, 8, v, 8, 8, N), "round %d", k);
		break;
	case PATH_VEC: {
		hoist_vec_t vec[2] = {{0, 16}, {16, 16}};
		IT_OK(hoist_put_vec(0, flags, vec, 2, v), "round %d", k);
		break;
	}
	case PATH_AMO: /* one atomic set per element the round names */
		for (int i = 0; i < N; i++)
			if (v[i])
				IT_OK(hoist_atomic(0, &flags[i], HOIST_AMO_SET, HOIST_INT64, &v[i], NULL,
						   NULL),
				      "round %d", k);
		break;
	default:
		IT_OK(hoist_aggregate_begin());
		IT_OK(hoist_put(0, flags, v, sizeof(v)), "round %d", k);
		IT_OK(hoist_aggregate_end(), "round %d", k);
		break;
	}
	IT_OK(hoist_quiet(), "round %d", k);
	const char *d = getenv("HOIST_DIRECT");
	if (path == PATH_PUT && hoist_ptr(flags, 0) && !(d && !strcmp(d, "0")) &&
	    c->direct_puts == direct_before)
		IT_FAIL("round %d: the put to a same-node PE was not direct", k);
}

static void waiter(int64_t *flags, int k)
{
	struct hoist_ctrl *ctrl = hoist__ctx()->ring.ctrl;
	uint64_t sleeps = ctrl->p2p_sleeps, wakeups = ctrl->p2p_wakeups, waits = ctrl->p2p_waits;
	int64_t b = 100 * (int64_t)k;
	int64_t want[N];
	const int skip1[N] = {0, 1, 0, 0};
	size_t idx = 99, ids[N];
	int64_t n;
	int form = k % 6;
	IT_WHERE("round %d: waiting (form %d)", k, form);
	/* a fresh period from here: the watchdog's SIGALRM interrupts the
	 * sleep (EINTR, and the wait rechecks), so it must judge this wait
	 * alone, before that recheck could hide a missing wake */
	it_watchdog(WATCHDOG_S);
	switch (form) {
	case 0:
		IT_OK(hoist_wait_until(&flags[0], HOIST_INT64, HOIST_CMP_GE, (uint64_t)b));
		break;
	case 1:
		IT_OK(hoist_wait_until_all(flags, N, skip1, HOIST_INT64, HOIST_CMP_GE, (uint64_t)b));
		break;
	case 2:
		IT_OK(hoist_wait_until_any(flags, N, NULL, HOIST_INT64, HOIST_CMP_GE, (uint64_t)b, &idx));
		if (idx != 1)
			IT_FAIL("round %d: any woke with index %zu", k, idx);
		break;
	case 3:
		n = hoist_wait_until_some(flags, N, ids, NULL, HOIST_INT64, HOIST_CMP_GE, (uint64_t)b);
		if (n != 1 || ids[0] != 2)
			IT_FAIL("round %d: some woke with %" PRId64 " (first %zu)", k, n, ids[0]);
		break;
	case 4:
		for (int i = 0; i < N; i++)
			want[i] = b + i;
		IT_OK(hoist_wait_until_all_vector(flags, N, NULL, HOIST_INT64, HOIST_CMP_EQ, want));
		break;
	default:
		for (int i = 0; i < N; i++)
			want[i] = b;
		IT_OK(hoist_wait_until_any_vector(flags, N, NULL, HOIST_INT64, HOIST_CMP_GE, want, &idx));
		if (idx != 3)
			IT_FAIL("round %d: any_vector woke with index %zu", k, idx);
		break;
	}
	int64_t v[N];
	round_values(k, form, v);
	/* the elements the condition names; the rest of a strided or vector
	 * put may land after the wait returned */
	for (int i = 0; i < N; i++)
		if (v[i] && flags[i] != v[i])
			IT_FAIL("round %d: flags[%d] = %" PRId64 ", want %" PRId64, k, i, flags[i], v[i]);
	if (ctrl->p2p_waits != waits + 1)
		IT_FAIL("round %d: p2p_waits %" PRIu64 " -> %" PRIu64 ", want +1", k, waits, ctrl->p2p_waits);
	if (ctrl->p2p_sleeps <= sleeps)
		IT_FAIL("round %d: the waiter never slept", k);
	if (ctrl->p2p_wakeups <= wakeups)
		IT_FAIL("round %d: no writer ended the sleep", k);
}

/* Rank 0 sleeps on the dst of its own split-phase broadcast; rank 1, the
 * root, joins only then; the others join at once. */
static void coll_round(int rank, int64_t *bdst, int64_t *bsrc)
{
	const int64_t want = 0x5157415954ll;
	*bdst = 0;
	*bsrc = rank == 1 ? want : -1;
	IT_OK(hoist_barrier(), "broadcast round");
	if (hoist__ctx()->nc_on) {
		/* a one-node job's collectives run among the PEs: each writes
		 * its own dst in its hoist_wait, nobody wakes it before (the
		 * daemon's writes and wakes: it_wait_3_daemon, HOIST_DIRECT=0) */
		IT_OK(hoist_broadcast(bdst, bsrc, sizeof(*bdst), 1), "broadcast");
		if (*bdst != want)
			IT_FAIL("broadcast round: dst %" PRId64, *bdst);
		return;
	}
	if (rank == 0) {
		struct hoist_ctrl *ctrl = hoist__ctx()->ring.ctrl;
		uint64_t sleeps = ctrl->p2p_sleeps, wakeups = ctrl->p2p_wakeups;
		hoist_req_t *req = NULL;
		IT_OK(hoist_broadcast_start(bdst, bsrc, sizeof(*bdst), 1, &req));
		IT_WHERE("broadcast round: waiting for dst");
		it_watchdog(WATCHDOG_S); /* as in waiter() */
		IT_OK(hoist_wait_until(bdst, HOIST_INT64, HOIST_CMP_EQ, (uint64_t)want));
		IT_OK(hoist_wait(req), "broadcast");
		if (ctrl->p2p_sleeps <= sleeps)
			IT_FAIL("broadcast round: the waiter never slept");
		if (ctrl->p2p_wakeups <= wakeups)
			IT_FAIL("broadcast round: no writer ended the sleep");
	} else if (rank == 1) {
		until_peer_sleeps();
		IT_WHERE("broadcast round: rank 0 sleeps, broadcasting");
		IT_OK(hoist_broadcast(bdst, bsrc, sizeof(*bdst), 1));
	} else {
		IT_OK(hoist_broadcast(bdst, bsrc, sizeof(*bdst), 1));
	}
	if (*bdst != want)
		IT_FAIL("broadcast round: dst %" PRId64, *bdst);
}

/* A store nobody announces (hoist_ptr; verbs RDMA WRITEs likewise): only
 * the bounded sleep lets rank 0 see it. */
static int poll_round(int rank, int64_t *flags)
{
	IT_OK(hoist_barrier());
	if (rank == 0) {
		struct hoist_ctrl *ctrl = hoist__ctx()->ring.ctrl;
		uint64_t sleeps = ctrl->p2p_sleeps;
		IT_WHERE("poll round: waiting");
		it_watchdog(WATCHDOG_S);
		IT_OK(hoist_wait_until(&flags[0], HOIST_INT64, HOIST_CMP_EQ, 7));
		if (ctrl->p2p_sleeps <= sleeps)
			IT_FAIL("poll round: the waiter never slept");
	} else if (rank == 1) {
		int64_t *p = hoist_ptr(flags, 0);
		if (!p) {
			IT_FAIL("poll round: rank 0 is not on this node");
			exit(1);
		}
		until_peer_sleeps();
		__atomic_store_n(p, 7, __ATOMIC_RELEASE);
	}
	IT_OK(hoist_barrier());
	return it_finish();
}

#define STREAM_N 400

static int stream_round(int rank, int64_t *flags)
{
	IT_OK(hoist_barrier());
	if (rank == 0) {
		struct hoist_ctrl *ctrl = hoist__ctx()->ring.ctrl;
		uint64_t sleeps = ctrl->p2p_sleeps, wakeups = ctrl->p2p_wakeups;
		IT_WHERE("stream: waiting for %d", STREAM_N);
		it_watchdog(WATCHDOG_S);
		IT_OK(hoist_wait_until(&flags[0], HOIST_INT64, HOIST_CMP_EQ, STREAM_N));
		uint64_t ds = ctrl->p2p_sleeps - sleeps, dw = ctrl->p2p_wakeups - wakeups;
		it_log("stream: %d puts, %" PRIu64 " sleeps, %" PRIu64 " wake-ups", STREAM_N, ds, dw);
		if (ds == 0 || dw == 0)
			IT_FAIL("stream: the waiter slept %" PRIu64 " times, was woken %" PRIu64, ds, dw);
		/* one a put when a woken waiter sleeps again at once */
		if (dw > STREAM_N / 10)
			IT_FAIL("stream: %" PRIu64 " wake-ups for %d puts, want at most %d", dw, STREAM_N,
				STREAM_N / 10);
	} else if (rank == 1) {
		until_peer_sleeps();
		IT_WHERE("stream: rank 0 sleeps, putting");
		for (int64_t v = 1; v <= STREAM_N; v++) {
			IT_OK(hoist_put(0, &flags[0], &v, sizeof(v)), "stream put %" PRId64, v);
			struct timespec ts = {0, 20000}; /* longer than a wake-up and a recheck */
			nanosleep(&ts, NULL);
			it_watchdog(WATCHDOG_S);
		}
	}
	IT_OK(hoist_barrier());
	return it_finish();
}

#define COVER_H 64
#define COVER_FORMS 3

/* Rank 1: write into rank 0's heap away from what it waits on, COVER_H
 * times (puts and atomic adds alternating), each once rank 0 sleeps. */
static void cover_hammer(int64_t *other, int form)
{
	struct hoist_ctrl *ctrl = hoist__ctx()->ring.ctrl;
	uint64_t skipped = ctrl->heap_wakes_direct_skipped, sent = ctrl->heap_wakes_direct;
	uint64_t direct = hoist__ctx()->direct_puts + hoist__ctx()->direct_amos;
	for (int64_t i = 0; i < COVER_H; i++) {
		until_peer_sleeps();
		IT_WHERE("cover form %d: rank 0 sleeps, write %" PRId64 " elsewhere", form, i);
		if (i % 2)
			IT_OK(hoist_put(0, &other[i % 8], &i, sizeof(i)), "cover put %" PRId64, i);
		else
			IT_OK(hoist_atomic(0, &other[i % 8], HOIST_AMO_ADD, HOIST_INT64, &i, NULL,
					   NULL),
			      "cover atomic %" PRId64, i);
		IT_OK(hoist_quiet(), "cover %" PRId64, i); /* executed: rank 0 saw it or not */
		it_watchdog(WATCHDOG_S);
	}
	/* the direct path counts in this PE's control page */
	if (hoist__ctx()->direct_puts + hoist__ctx()->direct_amos - direct == COVER_H) {
		uint64_t ds = ctrl->heap_wakes_direct_skipped - skipped;
		uint64_t dw = ctrl->heap_wakes_direct - sent;
		it_log("cover form %d: direct writes skipped %" PRIu64 " wakes, sent %" PRIu64, form,
		       ds, dw);
		if (ds != COVER_H || dw != 0)
			IT_FAIL("cover form %d: %" PRIu64 " wakes skipped, %" PRIu64
				" sent for %d writes elsewhere into a sleeping PE's heap, want %d and 0",
				form, ds, dw, COVER_H, COVER_H);
	}
}

static int cover_round(int rank, int64_t *flags, int64_t *other)
{
	for (int form = 0; form < COVER_FORMS; form++) {
		memset(flags, 0, N * sizeof(*flags));
		memset(other, 0, 8 * sizeof(*other));
		IT_OK(hoist_barrier(), "cover form %d", form);
		int64_t b = 1000 + form, want[N];
		size_t idx = 99;
		if (rank == 0) {
			struct hoist_ctrl *ctrl = hoist__ctx()->ring.ctrl;
			uint64_t sleeps = ctrl->p2p_sleeps, wakeups = ctrl->p2p_wakeups;
			IT_WHERE("cover form %d: waiting", form);
			it_watchdog(WATCHDOG_S); /* as in waiter() */
			switch (form) {
			case 0:
				IT_OK(hoist_wait_until(&flags[0], HOIST_INT64, HOIST_CMP_EQ,
						       (uint64_t)b));
				break;
			case 1:
				IT_OK(hoist_wait_until_any(flags, N, NULL, HOIST_INT64, HOIST_CMP_EQ,
							   (uint64_t)b, &idx));
				if (idx != 2)
					IT_FAIL("cover: any woke with index %zu, want 2", idx);
				break;
			default:
				for (int i = 0; i < N; i++)
					want[i] = i == 3 ? b : 0;
				IT_OK(hoist_wait_until_all_vector(flags, N, NULL, HOIST_INT64,
								  HOIST_CMP_EQ, want));
				break;
			}
			uint64_t ds = ctrl->p2p_sleeps - sleeps, dw = ctrl->p2p_wakeups - wakeups;
			it_log("cover form %d: %" PRIu64 " sleeps, %" PRIu64 " wake-ups", form, ds, dw);
			if (ds == 0)
				IT_FAIL("cover form %d: the waiter never slept", form);
			/* the writes elsewhere must not have woken it: one wake-up,
			 * by the write into its range */
			if (dw != 1)
				IT_FAIL("cover form %d: woken %" PRIu64 " times, want once (by the "
					"write it waits for; %d writes elsewhere)",
					form, dw, COVER_H);
			for (int i = 0; i < 8; i++)
				if (other[i] != (i % 2 ? 56 + i : 8 * i + 224))
					IT_FAIL("cover form %d: other[%d] = %" PRId64, form, i,
						other[i]);
		} else if (rank == 1) {
			cover_hammer(other, form);
			until_peer_sleeps();
			IT_WHERE("cover form %d: rank 0 sleeps, writing its word", form);
			/* the one write it waits for: a put for forms 0 and 2, an
			 * atomic for form 1 */
			int slot = form == 0 ? 0 : form == 1 ? 2 : 3;
			if (form == 1)
				IT_OK(hoist_atomic(0, &flags[slot], HOIST_AMO_SET, HOIST_INT64, &b, NULL,
						   NULL));
			else
				IT_OK(hoist_put(0, &flags[slot], &b, sizeof(b)));
			IT_OK(hoist_quiet());
		}
		IT_OK(hoist_barrier(), "cover form %d end", form);
	}
	return it_finish();
}

int main(int argc, char **argv)
{
	int rank, size;
	it_init("it_wait", &rank, &size);
	it_watchdog(WATCHDOG_S);
	if (size < 2) {
		IT_FAIL("needs 2 PEs");
		return it_finish();
	}
	int64_t *flags = it_malloc(N * sizeof(int64_t));
	int64_t *bdst = it_malloc(sizeof(int64_t)), *bsrc = it_malloc(sizeof(int64_t));
	int64_t *a = it_malloc(N * sizeof(int64_t));
	uint32_t *u = it_malloc(N * sizeof(uint32_t));
	char *var = it_malloc(64);
	memset(flags, 0, N * sizeof(int64_t));
	if (argc > 1 && !strcmp(argv[1], "--poll"))
		return poll_round(rank, flags);
	if (argc > 1 && !strcmp(argv[1], "--stream"))
		return stream_round(rank, flags);
	if (argc > 1 && !strcmp(argv[1], "--cover")) {
		int64_t *other = it_malloc(8 * sizeof(int64_t));
		return cover_round(rank, flags, other);
	}
	if (rank == 0) {
		local_compare(var);
		local_arrays(a, u);
		bad_args(a);
	}
	IT_OK(hoist_barrier());
	for (int k = 1; k <= ROUNDS; k++) {
		IT_OK(hoist_barrier(), "round %d", k);
		if (rank == 0)
			waiter(flags, k);
		else if (rank == 1)
			writer(flags, k, k % NPATHS);
	}
	coll_round(rank, bdst, bsrc);
	IT_OK(hoist_barrier());
	if (rank == 0) {
		struct hoist_ctrl *ctrl = hoist__ctx()->ring.ctrl;
		it_log("p2p waits %" PRIu64 " sleeps %" PRIu64 " wakeups %" PRIu64, ctrl->p2p_waits,
		       ctrl->p2p_sleeps, ctrl->p2p_wakeups);
	}
	return it_finish();
}
