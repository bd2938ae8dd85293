/*
 * it_nodecoll: the node collectives (client/nodecoll.c). In a job whose PEs
 * are all on one daemon (HOIST_DIRECT=1) every collective after the first
 * barrier runs among the PEs through their heaps; the daemon sees none.
 *
 *   it_nodecoll        (it_coll checks every kind, type, op and size against
 *                      a model; this test checks what is particular to the
 *                      node path)
 *     - reuse: 400 broadcasts of 8 B from PE 0 back to back into the same
 *       dst (eager: the root returns at once and runs ahead by up to
 *       HOIST_NC_SLOTS), one PE dawdling now and then: each must see its
 *       own round's value, so the root never overwrites a slot a slow PE
 *       still reads; the root changes its dst the moment it returns, and
 *       nobody (the daemon, over several nodes) may write it after that;
 *     - ahead (3+ PEs, one node): a reader of an eager broadcast returns
 *       once the root is there, not waiting for the other readers: PE 1
 *       makes 8 broadcasts before the last PE (waiting for PE 1's flag)
 *       starts its first; over several nodes (IT_NC_AHEAD=1: PEs 0 and 1
 *       on one node) the same, PE 1 not waiting for the inter-node step;
 *     - remote (several nodes, IT_NC_REMOTE=A,W: two ranks on a node
 *       without PE 0): A reads 8 broadcasts from PE 0 before W starts
 *       its first (the daemon's inbox, ABI 11);
 *     - owed (4+ PEs, one node): those readers go on to a barrier owing
 *       their full compare, and the root reads the next broadcast: it
 *       must not wait there for their compare (they make it only after
 *       the barrier);
 *     - reuse, read in place: 60 allgathers of 4 KiB per PE (above the
 *       eager limit: read from the PEs' src directly); one PE per round
 *       starts, sleeps, then waits, the others overwrite their src the
 *       moment their blocking call returns: the slow PE must still get the
 *       round's blocks (no PE returns before everyone read its src);
 *     - in place, above and below the eager limit: allreduce with dst ==
 *       src, alltoall of 8 B and of 1 KiB per pair;
 *     - split phase: 3 * HOIST_NC_SLOTS allreduces in flight, waited for
 *       in reverse order (a start beyond the slots completes the oldest);
 *     - hoist_wait_from before the others read: allgathers of 4 KiB per
 *       PE (not eager); every PE starts, the others then wait for PE 0's
 *       flag before they wait for the collective (read PE 0's src), and
 *       PE 0 sets the flags only once hoist_wait_from returned every
 *       block (checked): wait_from must return once the blocks are in
 *       dst, not when every PE read (that would deadlock: the watchdog);
 *     - the path: colls_node counts every collective, and the daemon's
 *       own counter of collective descriptors (hoistctl stats: colls) of
 *       this PE stays 0. IT_NC_WANT=daemon (HOIST_DIRECT=0): the reverse.
 *     - every kind at 64 B and 4 KiB (both sides of HOIST_NC_EAGER),
 *       every root, checked element by element.
 *     - every op slot held by split-phase allreduces (the next start
 *       returns -EBUSY on every PE): a blocking broadcast still runs and
 *       delivers (one node: its request is on the stack, no slot held).
 *   IT_NC_WANT=auto (a job over several daemons, tests/multinode): the
 *     node path where this PE's node holds 2+ PEs, the daemon's per-PE
 *     path where it is alone. On the node path the node's PEs meet in
 *     shared memory and ONE of them posts a node descriptor for each
 *     collective (HOIST_COLL_F_NODE): the daemon's colls of this PE equal
 *     the node descriptors it posted, and over the node's PEs of the job
 *     they add up to the collectives called (not PEs times that).
 *   it_nodecoll kill   the last rank waits until every other PE of its
 *     node arrived at a node collective (their arrived words), then
 *     SIGKILLs itself: each other PE's allreduce (on every node) must end
 *     with an error, not hang; it prints "NODECOLL-KILL-OK" (node_kill.sh
 *     counts them).
 */
#include <inttypes.h>
#include <signal.h>

#include "internal.h"
#include "it_common.h"

#define BCASTS 400
#define GATHERS 60
#define BIG 4096u

static int me, n;
static uint64_t ncoll; /* collectives this PE called */

/* colls of this PE in the daemon's stats (hoistctl stats --json), or -1 */
static long daemon_colls(void)
{
	long long v;
	return it_stats_clients("colls", me, &v, 1) == 1 ? (long)v : -1;
}

/* colls over this job's clients on this PE's daemon, or -1 */
static long daemon_colls_node(void)
{
	long long v;
	return it_stats_clients("colls", -1, &v, 1) == 1 ? (long)v : -1;
}

/* every kind at a size below and above the eager limit, every root */
static void part_kinds(unsigned char *d, unsigned char *s)
{
	for (size_t len = 64; len <= BIG; len *= BIG / 64) {
		for (int root = 0; root < n; root++) {
			IT_WHERE("broadcast %zu root %d", len, root);
			uint64_t key = it_hash(0xbc, (uint64_t)root, len, 0, 0);
			it_fill(s, len, me == root ? key : it_hash(0xdead, (uint64_t)me, 0, 0, 0));
			memset(d, 0x5a, len);
			IT_OK(hoist_broadcast(d, s, len, root), "broadcast %zu root %d", len, root);
			ncoll++;
			if (it_check_fill(d, len, key) != len)
				IT_FAIL("broadcast %zu from %d: wrong", len, root);
			IT_WHERE("reduce %zu root %d", len, root);
			int64_t *sv = (int64_t *)s, *dv = (int64_t *)d;
			size_t cnt = len / 8;
			for (size_t i = 0; i < cnt; i++)
				sv[i] = (int64_t)(i * 3 + 1) * (me + 1) + root;
			memset(d, 0, len);
			IT_OK(hoist_reduce(d, s, cnt, HOIST_INT64, HOIST_SUM, root), "reduce %zu", len);
			ncoll++;
			if (me == root)
				for (size_t i = 0; i < cnt; i++)
					if (dv[i] != (int64_t)(i * 3 + 1) * n * (n + 1) / 2 + (int64_t)root * n) {
						IT_FAIL("reduce %zu root %d: [%zu] = %" PRId64, len, root, i,
							dv[i]);
						break;
					}
		}
		IT_WHERE("allreduce %zu", len);
		int64_t *sv = (int64_t *)s, *dv = (int64_t *)d;
		size_t cnt = len / 8;
		for (size_t i = 0; i < cnt; i++)
			sv[i] = (int64_t)((i + 7) * 1000 + (size_t)me);
		IT_OK(hoist_allreduce(d, s, cnt, HOIST_INT64, HOIST_MAX), "allreduce %zu", len);
		ncoll++;
		for (size_t i = 0; i < cnt; i++)
			if (dv[i] != (int64_t)((i + 7) * 1000 + (size_t)(n - 1))) {
				IT_FAIL("allreduce %zu: [%zu] = %" PRId64, len, i, dv[i]);
				break;
			}
		size_t bl = len == 64 ? 16 : BIG; /* a contribution below, above the eager limit */
		IT_WHERE("allgather %zu", bl);
		it_fill(s, bl, it_hash(0xa9, (uint64_t)me, bl, 0, 0));
		IT_OK(hoist_allgather(d, s, bl), "allgather %zu", bl);
		ncoll++;
		for (int p = 0; p < n; p++)
			if (it_check_fill(d + (size_t)p * bl, bl, it_hash(0xa9, (uint64_t)p, bl, 0, 0)) != bl)
				IT_FAIL("allgather %zu: block of PE %d wrong", bl, p);
		IT_WHERE("alltoall %zu", bl);
		for (int q = 0; q < n; q++)
			it_fill(s + (size_t)q * bl, bl, it_hash(0xa7, (uint64_t)me, (uint64_t)q, bl, 0));
		IT_OK(hoist_alltoall(d, s, bl), "alltoall %zu", bl);
		ncoll++;
		for (int p = 0; p < n; p++)
			if (it_check_fill(d + (size_t)p * bl, bl,
					  it_hash(0xa7, (uint64_t)p, (uint64_t)me, bl, 0)) != bl)
				IT_FAIL("alltoall %zu: block from PE %d wrong", bl, p);
	}
}

static void part_bcast_reuse(uint64_t *dst, uint64_t *src)
{
	for (int r = 1; r <= BCASTS; r++) {
		IT_WHERE("broadcast %d", r);
		if (me == 0)
			*src = 0xb0000000u + (uint64_t)r;
		else if (r % 16 == me % 16 && r % 3 == 0)
			usleep(500); /* a slow reader: the root runs ahead */
		if (me == 0 && r > 1 && *dst != ~(0xb0000000u + (uint64_t)(r - 1)))
			IT_FAIL("broadcast %d: the root's dst changed after the root returned (%#" PRIx64
				"): written late by the daemon", r - 1, *dst);
		IT_OK(hoist_broadcast(dst, src, sizeof(*dst), 0), "broadcast %d", r);
		ncoll++;
		if (*dst != 0xb0000000u + (uint64_t)r)
			IT_FAIL("broadcast %d: got %#" PRIx64 " (a later round's value: the root "
				"overwrote a slot still read)", r, *dst);
		if (me == 0) /* its dst is its own again: nobody may write it now */
			*dst = ~*dst;
	}
	IT_OK(hoist_barrier(), "after the broadcasts");
	if (me == 0 && *dst != ~(0xb0000000u + (uint64_t)BCASTS))
		IT_FAIL("the root's dst changed after the root returned (%#" PRIx64 ")", *dst);
}

/* 3+ PEs, one node: a reader of an eager broadcast needs the root and
 * nobody else (root_read, client/nodecoll.c). PE 1 makes AHEAD broadcasts
 * from PE 0 (each checked) before the last PE starts its first: that one
 * waits for PE 1's flag, put after PE 1's last broadcast returned. A reader
 * that waits for every PE's arrival never returns (the watchdog) */
#define AHEAD 8

static void part_bcast_ahead(uint64_t *dst, uint64_t *src, int64_t *flag)
{
	for (int r = 1; r <= AHEAD; r++) {
		IT_WHERE("broadcast ahead %d", r);
		if (me == n - 1 && r == 1)
			IT_OK(hoist_wait_until(flag, HOIST_INT64, HOIST_CMP_EQ, 1),
			      "PE 1's flag: its %d broadcasts returned", AHEAD);
		if (me == 0)
			*src = 0xa0000000u + (uint64_t)r;
		IT_OK(hoist_broadcast(dst, src, sizeof(*dst), 0), "broadcast ahead %d", r);
		ncoll++;
		if (*dst != 0xa0000000u + (uint64_t)r)
			IT_FAIL("broadcast ahead %d: got %#" PRIx64, r, *dst);
		if (me == 1 && r == AHEAD) {
			int64_t one = 1;
			IT_OK(hoist_put(n - 1, flag, &one, sizeof(one)), "the flag");
			IT_OK(hoist_quiet(), "the flag");
		}
	}
	IT_OK(hoist_barrier(), "after the broadcasts ahead");
}

/* Several nodes (IT_NC_REMOTE=A,W: ranks A and W share a node that does
 * not hold PE 0): PE A reads AHEAD broadcasts from PE 0 before PE W starts
 * its first. The daemon copies each one's data into the node's inbox as
 * it arrives (ABI 11), so A needs neither W's arrival (the node's
 * descriptor) nor the check round between the daemons. An A that waits
 * for either hangs (the watchdog). The allreduce first settles every
 * earlier broadcast of the node (their inbox entries are free again). */
static void part_bcast_remote(uint64_t *dst, uint64_t *src, int64_t *flag, int a, int w)
{
	int64_t one = 1;
	*src = 1;
	IT_OK(hoist_allreduce(dst, src, 1, HOIST_INT64, HOIST_SUM), "before the remote reads");
	ncoll++;
	if (*dst != (uint64_t)n)
		IT_FAIL("allreduce before the remote reads: %" PRIu64 ", want %d", *dst, n);
	/* IT_NC_ROOT_MSGS=K: the root's daemon sends K collective messages
	 * per broadcast (its first step's stream stands for its check header
	 * to that node, WIRE_COLL_F_CHECK). Counted from here, where every
	 * earlier collective of the root's node is done, to the barrier,
	 * which the other nodes pass only once every broadcast reached them */
	const char *rm = getenv("IT_NC_ROOT_MSGS");
	long long msgs0 = me == 0 && rm && *rm ? it_stats_daemon("coll_msgs_out") : -1;
	/* A's daemon: every one of them went to the inbox before W arrived */
	long long early0 = me == a ? it_stats_daemon("coll_inbox_early") : -1;
	for (int r = 1; r <= AHEAD; r++) {
		IT_WHERE("remote broadcast %d", r);
		if (me == w && r == 1)
			IT_OK(hoist_wait_until(flag, HOIST_INT64, HOIST_CMP_EQ, 1),
			      "PE %d's flag: its %d broadcasts from another node returned", a, AHEAD);
		if (me == 0)
			*src = 0xb0000000u + (uint64_t)r;
		IT_OK(hoist_broadcast(dst, src, sizeof(*dst), 0), "remote broadcast %d", r);
		ncoll++;
		if (*dst != 0xb0000000u + (uint64_t)r)
			IT_FAIL("remote broadcast %d: got %#" PRIx64, r, *dst);
		if (me == a && r == AHEAD) {
			IT_OK(hoist_put(w, flag, &one, sizeof(one)), "the flag");
			IT_OK(hoist_quiet(), "the flag");
		}
	}
	IT_OK(hoist_barrier(), "after the remote broadcasts");
	if (early0 >= 0) {
		long long got = it_stats_daemon("coll_inbox_early") - early0;
		if (got != AHEAD)
			IT_FAIL("%lld broadcasts written into the inbox early, want %d", got, AHEAD);
	}
	if (msgs0 >= 0) {
		long long got = it_stats_daemon("coll_msgs_out") - msgs0;
		if (got != (long long)AHEAD * atoi(rm))
			IT_FAIL("the root's daemon sent %lld collective messages for %d broadcasts, want %d each",
				got, AHEAD, atoi(rm));
	}
}

/* 4+ PEs, one node: the PEs that read a broadcast ahead (their full
 * compare owed until the last PE arrives) go on to a barrier, and the
 * root of that broadcast reads the next one from PE 1: it must not wait
 * there for the others' compare of the first (the verdict of its eager
 * root), which they make only in a later collective -- after the barrier
 * that waits for the root. The last PE starts only once PEs 1..n-2 put
 * their flag after both broadcasts. A root that waits hangs (watchdog). */
static void part_bcast_owed(uint64_t *dst, uint64_t *src, int64_t *owed)
{
	IT_WHERE("broadcasts owed");
	if (me == n - 1)
		for (int p = 1; p < n - 1; p++)
			IT_OK(hoist_wait_until(&owed[p], HOIST_INT64, HOIST_CMP_EQ, 1),
			      "PE %d's flag: its broadcasts returned", p);
	for (int r = 0; r < 2; r++) {
		if (me == r)
			*src = 0xc0000000u + (uint64_t)r;
		IT_OK(hoist_broadcast(dst, src, sizeof(*dst), r), "broadcast owed %d", r);
		ncoll++;
		if (*dst != 0xc0000000u + (uint64_t)r)
			IT_FAIL("broadcast owed %d: got %#" PRIx64, r, *dst);
	}
	if (me > 0 && me < n - 1) {
		int64_t one = 1;
		IT_OK(hoist_put(n - 1, &owed[me], &one, sizeof(one)), "the flag");
		IT_OK(hoist_quiet(), "the flag");
	}
	IT_OK(hoist_barrier(), "after the broadcasts owed");
}

static void part_gather_reuse(unsigned char *dst, unsigned char *src)
{
	for (int r = 1; r <= GATHERS; r++) {
		IT_WHERE("allgather %d", r);
		it_fill(src, BIG, it_hash(0x9a7, (uint64_t)me, (uint64_t)r, 0, 0));
		if (r % n == me) { /* slow: arrive, dawdle, then read */
			hoist_req_t *q = NULL;
			IT_OK(hoist_allgather_start(dst, src, BIG, &q), "allgather %d start", r);
			usleep(2000);
			IT_OK(hoist_wait(q), "allgather %d wait", r);
		} else {
			IT_OK(hoist_allgather(dst, src, BIG), "allgather %d", r);
			memset(src, 0xee, BIG); /* at once: src is ours again */
		}
		ncoll++;
		for (int p = 0; p < n; p++) {
			size_t off = it_check_fill(dst + (size_t)p * BIG, BIG,
						   it_hash(0x9a7, (uint64_t)p, (uint64_t)r, 0, 0));
			if (off != BIG)
				IT_FAIL("allgather %d: block of PE %d wrong at %zu (its src changed "
					"before this PE read it)", r, p, off);
		}
	}
}

#define FROMS 8

static void part_wait_from(unsigned char *dst, unsigned char *src, int64_t *flag)
{
	for (int r = 1; r <= FROMS; r++) {
		IT_WHERE("wait_from round %d", r);
		it_fill(src, BIG, it_hash(0xf70, (uint64_t)me, (uint64_t)r, 0, 0));
		hoist_req_t *q = NULL;
		IT_OK(hoist_allgather_start(dst, src, BIG, &q), "wait_from %d start", r);
		ncoll++;
		if (me == 0) {
			for (int k = 0; k < n; k++) {
				int p = (k + r) % n; /* another order each round */
				IT_OK(hoist_wait_from(q, p), "wait_from %d from %d", r, p);
				size_t off = it_check_fill(dst + (size_t)p * BIG, BIG,
							   it_hash(0xf70, (uint64_t)p, (uint64_t)r, 0, 0));
				if (off != BIG)
					IT_FAIL("wait_from %d: block of PE %d wrong at %zu", r, p, off);
			}
			int64_t v = r;
			for (int p = 1; p < n; p++)
				IT_OK(hoist_put(p, flag, &v, sizeof(v)), "wait_from %d flag %d", r, p);
			IT_OK(hoist_quiet());
		} else {
			IT_OK(hoist_wait_until(flag, HOIST_INT64, HOIST_CMP_EQ, (uint64_t)r),
			      "wait_from %d: PE 0's flag", r);
		}
		IT_OK(hoist_wait(q), "wait_from %d wait", r);
		for (int p = 0; p < n; p++) {
			size_t off = it_check_fill(dst + (size_t)p * BIG, BIG,
						   it_hash(0xf70, (uint64_t)p, (uint64_t)r, 0, 0));
			if (off != BIG)
				IT_FAIL("wait_from %d: after the wait, block of PE %d wrong at %zu", r,
					p, off);
		}
	}
}

static void part_in_place(int64_t *v, unsigned char *a2a)
{
	/* allreduce dst == src: 4 (eager) and 1024 elements (8 KiB, read in place) */
	for (size_t cnt = 4; cnt <= 1024; cnt *= 256) {
		IT_WHERE("allreduce in place %zu", cnt);
		for (size_t i = 0; i < cnt; i++)
			v[i] = (int64_t)(i + 1) * (me + 1);
		IT_OK(hoist_allreduce(v, v, cnt, HOIST_INT64, HOIST_SUM), "in place %zu", cnt);
		ncoll++;
		for (size_t i = 0; i < cnt; i++)
			if (v[i] != (int64_t)(i + 1) * n * (n + 1) / 2) {
				IT_FAIL("allreduce in place %zu: [%zu] = %" PRId64, cnt, i, v[i]);
				break;
			}
	}
	/* alltoall dst == src, 8 B (eager) and 1 KiB per pair (a PE's 2+ KiB: read in place) */
	for (size_t len = 8; len <= 1024; len *= 128) {
		IT_WHERE("alltoall in place %zu", len);
		for (int q = 0; q < n; q++)
			it_fill(a2a + (size_t)q * len, len, it_hash(0xa2a, (uint64_t)me, (uint64_t)q, len, 0));
		IT_OK(hoist_alltoall(a2a, a2a, len), "alltoall in place %zu", len);
		ncoll++;
		for (int p = 0; p < n; p++)
			if (it_check_fill(a2a + (size_t)p * len, len,
					  it_hash(0xa2a, (uint64_t)p, (uint64_t)me, len, 0)) != len)
				IT_FAIL("alltoall in place %zu: block from PE %d wrong", len, p);
	}
}

static void part_split(int64_t *d, int64_t *s)
{
	enum { K = 3 * HOIST_NC_SLOTS };
	hoist_req_t *q[K];
	for (int i = 0; i < K; i++) {
		s[i] = (int64_t)(i + 1) * 1000 + me;
		IT_OK(hoist_allreduce_start(&d[i], &s[i], 1, HOIST_INT64, HOIST_SUM, &q[i]), "start %d", i);
		ncoll++;
	}
	for (int i = K - 1; i >= 0; i--) {
		IT_OK(hoist_wait(q[i]), "wait %d", i);
		int64_t want = (int64_t)(i + 1) * 1000 * n + (int64_t)n * (n - 1) / 2;
		if (d[i] != want)
			IT_FAIL("split %d: %" PRId64 ", want %" PRId64, i, d[i], want);
	}
}

/* every op slot held by a split-phase request (the next start: -EBUSY,
 * nothing posted, on every PE alike): a blocking collective on the node
 * path keeps its request on the stack and still runs */
static void part_slots_held(uint64_t *b8)
{
	struct hoist_ctx *c = hoist__ctx();
	uint32_t k = c->nops + 1; /* one more than there are slots */
	int64_t *d = it_malloc(k * sizeof(*d)), *s = it_malloc(sizeof(int64_t));
	hoist_req_t **q = malloc(k * sizeof(*q));
	if (!q)
		IT_FAIL("malloc");
	*s = me + 1;
	uint32_t held = 0;
	for (; held < k; held++) {
		IT_WHERE("slots: start %u", held);
		int rc = hoist_allreduce_start(&d[held], s, 1, HOIST_INT64, HOIST_SUM, &q[held]);
		if (rc == -EBUSY)
			break;
		IT_OK(rc, "slots: start %u", held);
		ncoll++;
	}
	if (held == 0 || held == k)
		IT_FAIL("slots: %u of %u starts before -EBUSY", held, k);
	IT_WHERE("slots: a blocking broadcast with %u slots held", held);
	b8[0] = me == 0 ? 0x5107ed : 0;
	IT_OK(hoist_broadcast(&b8[1], &b8[0], 8, 0), "broadcast with every op slot held");
	ncoll++;
	if (b8[1] != 0x5107ed)
		IT_FAIL("slots: the broadcast delivered %#" PRIx64, b8[1]);
	for (uint32_t i = 0; i < held; i++) {
		IT_OK(hoist_wait(q[i]), "slots: wait %u", i);
		if (d[i] != (int64_t)n * (n + 1) / 2)
			IT_FAIL("slots: allreduce %u: %" PRId64, i, d[i]);
	}
	free(q);
}

static int kill_test(void)
{
	struct hoist_ctx *c = hoist__ctx();
	int64_t *s = it_malloc(64), *d = it_malloc(64); /* the first barrier */
	*s = me;
	IT_OK(hoist_allreduce(d, s, 1, HOIST_INT64, HOIST_SUM), "a first allreduce");
	if (!c->nc_on || !c->nc_base) { /* mapped by the first collective */
		IT_FAIL("no node collectives on a node of %d PEs", (int)c->npeers);
		return 1;
	}
	if (me == n - 1) {
		/* everyone else arrived at the next one: die */
		uint32_t want = c->nc_m + 1;
		IT_WHERE("victim: wait for the others' arrival at %u", want);
		for (int i = 0; i < c->nc_n; i++) {
			int p = c->nc_ranks[i];
			if (p == me)
				continue;
			struct hoist_nc_hdr *h = (struct hoist_nc_hdr *)(c->nc_base[p] + c->nc_off);
			while (__atomic_load_n(&h->arrived, __ATOMIC_ACQUIRE) != want)
				usleep(1000);
		}
		usleep(20000); /* let them sleep */
		kill(getpid(), SIGKILL);
	}
	IT_WHERE("survivor: allreduce while the last rank dies");
	int rc = hoist_allreduce(d, s, 1, HOIST_INT64, HOIST_SUM);
	if (rc == 0)
		IT_FAIL("the allreduce completed though rank %d died before arriving", n - 1);
	else
		it_log("allreduce ended with %s", it_errname(rc));
	hoist_finalize();
	if (it_failures)
		return 1;
	fprintf(stderr, "[it_nodecoll rank %d] NODECOLL-KILL-OK %s\n", me, it_errname(rc));
	return 0;
}

int main(int argc, char **argv)
{
	it_init("it_nodecoll", &me, &n);
	it_watchdog(50);
	if (argc > 1 && !strcmp(argv[1], "kill"))
		return kill_test();
	const char *want = getenv("IT_NC_WANT");
	struct hoist_ctx *c = hoist__ctx();
	int mn = want && !strcmp(want, "auto");
	int want_node = mn ? c->npeers >= 2 : !want || strcmp(want, "daemon") != 0;
	uint64_t *b8 = it_malloc(64);
	unsigned char *gd = it_malloc((size_t)n * BIG), *gs = it_malloc(BIG);
	int64_t *v = it_malloc(1024 * sizeof(int64_t));
	unsigned char *a2a = it_malloc((size_t)n * 1024);
	int64_t *sd = it_malloc(3 * HOIST_NC_SLOTS * sizeof(int64_t));
	int64_t *ss = it_malloc(3 * HOIST_NC_SLOTS * sizeof(int64_t));
	unsigned char *kd = it_malloc((size_t)n * BIG), *ks = it_malloc((size_t)n * BIG);
	int64_t *flag = it_malloc(sizeof(int64_t)), *ahead = it_malloc(sizeof(int64_t));
	*flag = 0;
	*ahead = 0;
	int64_t *remote = it_malloc(sizeof(int64_t));
	*remote = 0;
	int64_t *owed = it_malloc((size_t)n * sizeof(int64_t));
	memset(owed, 0, (size_t)n * sizeof(int64_t));
	uint64_t node0 = c->colls_node, posted0 = c->colls_node_posted;
	long dc0 = daemon_colls(), dn0 = mn ? daemon_colls_node() : 0;

	part_bcast_reuse(b8, b8 + 1);
	/* several nodes: where PEs 0 and 1 share a node (IT_NC_AHEAD=1, the
	 * same on every PE) PE 1 copies the root's slot and returns before the
	 * other nodes' PEs start (ABI 9) */
	const char *ah = getenv("IT_NC_AHEAD");
	if ((mn ? ah && !strcmp(ah, "1") : want_node) && n >= 3)
		part_bcast_ahead(b8, b8 + 1, ahead);
	const char *ra = getenv("IT_NC_REMOTE");
	int ra_a, ra_w;
	if (mn && ra && sscanf(ra, "%d,%d", &ra_a, &ra_w) == 2)
		part_bcast_remote(b8, b8 + 1, remote, ra_a, ra_w);
	if (want_node && !mn && n >= 4)
		part_bcast_owed(b8, b8 + 1, owed);
	part_gather_reuse(gd, gs);
	part_in_place(v, a2a);
	part_split(sd, ss);
	part_kinds(kd, ks);
	part_wait_from(gd, gs, flag);
	if (want_node && !mn)
		part_slots_held(b8);

	IT_OK(hoist_barrier(), "the end");
	if (want_node != (c->nc_on && c->nc_base && !c->nc_err))
		IT_FAIL("node collectives %s, want them %s", c->nc_on ? "on" : "off",
			want_node ? "on" : "off");
	uint64_t node = c->colls_node - node0;
	long dc = daemon_colls();
	it_log("%" PRIu64 " collectives: %" PRIu64 " on the node path, the daemon executed %ld", ncoll,
	       node, dc);
	if (mn) {
		/* the collectives before node0 (it_init's, the first barrier's
		 * allocations) went the daemon's way: count from dc0, dn0 */
		long dn = daemon_colls_node();
		uint64_t posted = c->colls_node_posted - posted0;
		dc -= dc0;
		dn -= dn0;
		it_log("several nodes (%u PEs here): %" PRIu64 " node descriptors posted by this PE, "
		       "%ld by this node's PEs of the job", c->npeers, posted, dn);
		if (want_node && (node != ncoll || dc != (long)posted || dn != (long)ncoll))
			IT_FAIL("%" PRIu64 " collectives: %" PRIu64 " took the node path, the daemon "
				"executed %ld of this PE's descriptors (it posted %" PRIu64 ") and %ld of "
				"the node's (want all, equal, %" PRIu64 ")",
				ncoll, node, dc, posted, dn, ncoll);
		if (!want_node && (node != 0 || dc != (long)ncoll))
			IT_FAIL("alone on its node: %" PRIu64 " collectives: %" PRIu64 " took the node "
				"path, the daemon executed %ld (want 0, all)", ncoll, node, dc);
	} else if (want_node && (node != ncoll || dc != 0))
		IT_FAIL("%" PRIu64 " collectives: %" PRIu64 " took the node path, the daemon executed "
			"%ld (want all, 0)", ncoll, node, dc);
	if (!want_node && (node != 0 || dc != (long)ncoll))
		IT_FAIL("HOIST_DIRECT=0: %" PRIu64 " collectives: %" PRIu64 " took the node path, the "
			"daemon executed %ld (want 0, all)", ncoll, node, dc);
	return it_finish();
}
