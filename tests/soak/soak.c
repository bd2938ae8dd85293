/*
 * soak: a checked random workload for minutes or hours (tests/soak/soak.sh
 * runs it over several daemons and watches their memory and descriptors).
 *
 * Every PE holds, for every writer PE w, a slot of SLOT bytes that only w
 * writes. A round:
 *   1. write: every PE writes its slot on every PE (itself included) with
 *      the bytes of key(seed, round, writer, target), by a method the seed
 *      picks: put, put_nbi, strided put (even then odd 64-byte elements),
 *      vector put (chunks in reverse order), or puts in an aggregation
 *      region; then quiet and a barrier;
 *   2. read: READS random (target, writer) slots are read back by get,
 *      get_nbi, strided get or vector get and compared with the key's bytes
 *      (every byte); then a barrier (nobody writes while others read);
 *   3. collectives: allreduce (int64 sum), broadcast from a rotating root,
 *      allgather and alltoall, each result checked;
 *   4. rank 0 decides by broadcast whether another round starts (time).
 * The seed and the round of the first failure are printed: rerun with
 * SOAK_SEED. Arguments: SECONDS (default 60). Exit 0, or 1 on any
 * mismatch or error.
 */
#include "it_common.h"

#define SLOT (16u << 10)
#define CH 1024u   /* vector chunk */
#define EL 64u     /* strided element */
#define READS 6

enum { W_PUT, W_NBI, W_STRIDED, W_VEC, W_AGG, W__N };
enum { R_GET, R_NBI, R_STRIDED, R_VEC, R__N };

static uint64_t seed;
static int me, n;
static unsigned char *slots; /* symmetric: n slots */
static unsigned char *nbi_src; /* symmetric: n slots (put_nbi sources stay until quiet) */
static unsigned char *buf, *want, *got;
static unsigned char *nbi_dst; /* READS slots for get_nbi */
static uint64_t n_ops, n_bytes;

static uint64_t key(uint64_t round, int w, int t)
{
	return it_hash(seed, 0x50a4, round, (uint64_t)w, (uint64_t)t);
}

static void write_slot(uint64_t round, int t)
{
	unsigned char *dst = slots + (size_t)me * SLOT;
	uint64_t k = key(round, me, t);
	int how = (int)(it_hash(seed, 0x3e7, round, (uint64_t)me, (uint64_t)t) % W__N);
	IT_WHERE("round %" PRIu64 ": write method %d to pe %d", round, how, t);
	switch (how) {
	case W_PUT:
		it_fill(buf, SLOT, k);
		IT_OK(hoist_put(t, dst, buf, SLOT), "round %" PRIu64 " put to %d", round, t);
		memset(buf, 0xee, SLOT); /* reusable on return */
		break;
	case W_NBI: {
		unsigned char *src = nbi_src + (size_t)t * SLOT;
		it_fill(src, SLOT, k);
		IT_OK(hoist_put_nbi(t, dst, src, SLOT), "round %" PRIu64 " put_nbi to %d", round, t);
		break;
	}
	case W_STRIDED:
		it_fill(buf, SLOT, k);
		IT_OK(hoist_put_strided(t, dst, 2 * EL, buf, 2 * EL, EL, SLOT / (2 * EL)), "strided even to %d", t);
		IT_OK(hoist_put_strided(t, dst + EL, 2 * EL, buf + EL, 2 * EL, EL, SLOT / (2 * EL)),
		      "strided odd to %d", t);
		break;
	case W_VEC: {
		hoist_vec_t v[SLOT / CH];
		unsigned nc = SLOT / CH;
		it_fill(want, SLOT, k);
		for (unsigned i = 0; i < nc; i++) { /* chunks in reverse order */
			unsigned c = nc - 1 - i;
			v[i].off = (size_t)me * SLOT + (size_t)c * CH;
			v[i].len = CH;
			memcpy(buf + (size_t)i * CH, want + (size_t)c * CH, CH);
		}
		IT_OK(hoist_put_vec(t, slots, v, nc, buf), "round %" PRIu64 " vec put to %d", round, t);
		break;
	}
	case W_AGG:
		it_fill(buf, SLOT, k);
		IT_OK(hoist_aggregate_begin(), "aggregate_begin");
		for (unsigned c = 0; c < SLOT / CH; c++)
			IT_OK(hoist_put(t, dst + (size_t)c * CH, buf + (size_t)c * CH, CH), "agg put to %d", t);
		IT_OK(hoist_aggregate_end(), "round %" PRIu64 " aggregate_end (puts to %d)", round, t);
		break;
	}
	n_ops++;
	n_bytes += SLOT;
}

static void check(const unsigned char *p, uint64_t round, int t, int w, int how)
{
	size_t bad = it_check_fill(p, SLOT, key(round, w, t));
	if (bad != SLOT)
		IT_FAIL("round %" PRIu64 ": slot of writer %d on pe %d (read method %d) differs at byte %zu: 0x%02x, "
			"want 0x%02x (seed %" PRIu64 ")",
			round, w, t, how, bad, p[bad], it_fill_byte(key(round, w, t), bad), seed);
}

static void read_round(uint64_t round)
{
	struct it_rng rng = {it_hash(seed, 0x4ead, round, (uint64_t)me, 0)};
	int pend_t[READS], pend_w[READS], npend = 0;
	for (int i = 0; i < READS; i++) {
		int t = (int)it_rng_below(&rng, (uint64_t)n), w = (int)it_rng_below(&rng, (uint64_t)n);
		int how = (int)it_rng_below(&rng, R__N);
		const unsigned char *src = slots + (size_t)w * SLOT;
		IT_WHERE("round %" PRIu64 ": read method %d of writer %d's slot on pe %d", round, how, w, t);
		memset(got, 0, SLOT);
		switch (how) {
		case R_GET:
			IT_OK(hoist_get(got, t, src, SLOT), "get from %d", t);
			check(got, round, t, w, how);
			break;
		case R_NBI:
			IT_OK(hoist_get_nbi(nbi_dst + (size_t)npend * SLOT, t, src, SLOT), "get_nbi from %d", t);
			pend_t[npend] = t;
			pend_w[npend++] = w;
			break;
		case R_STRIDED:
			IT_OK(hoist_get_strided(got, 2 * EL, t, src, 2 * EL, EL, SLOT / (2 * EL)), "strided get");
			IT_OK(hoist_get_strided(got + EL, 2 * EL, t, src + EL, 2 * EL, EL, SLOT / (2 * EL)),
			      "strided get odd");
			check(got, round, t, w, how);
			break;
		case R_VEC: {
			hoist_vec_t v[SLOT / CH];
			unsigned nc = SLOT / CH;
			for (unsigned k = 0; k < nc; k++) {
				v[k].off = (size_t)w * SLOT + (size_t)(nc - 1 - k) * CH;
				v[k].len = CH;
			}
			IT_OK(hoist_get_vec(buf, t, slots, v, nc), "vec get from %d", t);
			for (unsigned k = 0; k < nc; k++)
				memcpy(got + (size_t)(nc - 1 - k) * CH, buf + (size_t)k * CH, CH);
			check(got, round, t, w, how);
			break;
		}
		}
		n_ops++;
		n_bytes += SLOT;
	}
	IT_OK(hoist_quiet(), "round %" PRIu64 " quiet after the reads", round);
	for (int i = 0; i < npend; i++)
		check(nbi_dst + (size_t)i * SLOT, round, pend_t[i], pend_w[i], R_NBI);
}

static void coll_round(uint64_t round, int64_t *a, int64_t *b)
{
	IT_WHERE("round %" PRIu64 ": collectives", round);
	a[0] = (int64_t)me + (int64_t)round;
	IT_OK(hoist_allreduce(b, a, 1, HOIST_INT64, HOIST_SUM), "allreduce");
	int64_t sum = (int64_t)n * (int64_t)round + (int64_t)n * (n - 1) / 2;
	if (b[0] != sum)
		IT_FAIL("round %" PRIu64 ": allreduce %lld, want %lld", round, (long long)b[0], (long long)sum);
	int root = (int)(round % (uint64_t)n);
	a[0] = (int64_t)key(round, root, -1);
	b[0] = 0;
	IT_OK(hoist_broadcast(b, a, 8, root), "broadcast");
	if (b[0] != (int64_t)key(round, root, -1))
		IT_FAIL("round %" PRIu64 ": broadcast from %d wrong", round, root);
	a[0] = (int64_t)key(round, me, -2);
	IT_OK(hoist_allgather(b, a, 8), "allgather");
	for (int i = 0; i < n; i++)
		if (b[i] != (int64_t)key(round, i, -2))
			IT_FAIL("round %" PRIu64 ": allgather block %d wrong", round, i);
	for (int i = 0; i < n; i++)
		a[i] = (int64_t)it_hash(seed, round, (uint64_t)me, (uint64_t)i, 0xa2a);
	IT_OK(hoist_alltoall(b, a, 8), "alltoall");
	for (int i = 0; i < n; i++)
		if (b[i] != (int64_t)it_hash(seed, round, (uint64_t)i, (uint64_t)me, 0xa2a))
			IT_FAIL("round %" PRIu64 ": alltoall block from %d wrong", round, i);
	n_ops += 4;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 60;
	it_init("soak", &me, &n);
	it_watchdog(60);
	const char *s = getenv("SOAK_SEED");
	seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
	slots = it_malloc((size_t)n * SLOT);
	nbi_src = it_malloc((size_t)n * SLOT);
	int64_t *ca = it_malloc((size_t)n * 8), *cb = it_malloc((size_t)n * 8);
	uint64_t *go = it_malloc(8), *go_in = it_malloc(8);
	buf = it_xmalloc(SLOT);
	want = it_xmalloc(SLOT);
	got = it_xmalloc(SLOT);
	nbi_dst = it_xmalloc((size_t)READS * SLOT);
	/* everyone runs with rank 0's seed */
	*go_in = seed;
	IT_OK(hoist_broadcast(go, go_in, 8, 0), "seed");
	seed = *go;
	if (me == 0)
		it_log("seed %" PRIu64 " (rerun with SOAK_SEED=%" PRIu64 "), %d PEs, %.0f s", seed, seed, n, secs);
	double start = it_now(), next_log = start + 30;
	uint64_t round = 0;
	for (;; round++) {
		for (int k = 0; k < n; k++)
			write_slot(round, (me + k) % n);
		IT_OK(hoist_quiet(), "round %" PRIu64 " quiet", round);
		IT_OK(hoist_barrier(), "round %" PRIu64 " barrier after the writes", round);
		read_round(round);
		IT_OK(hoist_barrier(), "round %" PRIu64 " barrier after the reads", round);
		coll_round(round, ca, cb);
		/* rank 0 decides for everyone (a failing PE stops the soak) */
		double now = it_now();
		*go_in = (now - start < secs && it_failures == 0) ? 1 : 0;
		IT_OK(hoist_allreduce(go, go_in, 1, HOIST_UINT64, HOIST_MIN), "continue?");
		if (me == 0 && now >= next_log) {
			it_log("%.0f s: %" PRIu64 " rounds, %" PRIu64 " operations, %.1f MiB moved by this PE", now - start,
			       round + 1, n_ops, (double)n_bytes / (1 << 20));
			next_log = now + 30;
		}
		if (!*go)
			break;
	}
	IT_OK(hoist_barrier(), "end");
	it_log("%" PRIu64 " rounds, %" PRIu64 " operations, %.1f MiB moved by this PE in %.0f s", round + 1, n_ops,
	       (double)n_bytes / (1 << 20), it_now() - start);
	free(buf);
	free(want);
	free(got);
	free(nbi_dst);
	return it_finish();
}
