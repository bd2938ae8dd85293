/*
 * it_nodebar: the node barrier. In a job whose PEs are all on one daemon
 * (HOIST_DIRECT=1) every barrier after the first completes among the PEs
 * in shared memory (client/sync.c); the daemon only counts.
 *
 *   it_nodebar        correctness and the path taken:
 *     - 300 rounds: every PE puts the round into its slot at every PE (the
 *       direct path), every 7th round also a 4 KiB strided put to the next
 *       PE (always through the daemon: the barrier must complete it); after
 *       the barrier every slot and the block hold the round (slots double
 *       buffered by round parity, so one barrier per round suffices; one PE
 *       per round dawdles now and then, so the others must wait);
 *     - 100 split-phase rounds, notify / local work / wait, the same check;
 *     - IT_NB_WANT=node: all but the first barrier (hoist_malloc's) were
 *       node barriers (barriers_node), exactly one waited for the daemon's
 *       epoch, and the barriers posted no quiet for the direct puts;
 *       IT_NB_WANT=epoch (HOIST_DIRECT=0): none was a node barrier.
 *   it_nodebar lazy   16 x sq_entries node barriers back to back,
 *     alternating between two call sites (two phases: each barrier is a
 *     lazy notify of its own, HOIST_SQE_F_LAZY, without a doorbell):
 *     - the daemon still counted every one: after hoist_finalize's wait
 *       for its epoch nothing is left (checked by the epoch: barrier_epoch
 *       reached every barrier of the job);
 *     - the client rang when half its SQ held notifies (nb_kicks > 0;
 *       without that doorbell the daemon sleeps until the SQ is full and
 *       at least 16 notifies find it full, 29-62 seen; with it 0 when
 *       the daemon gets a CPU, up to 269 under TSan beside other work);
 *     - lazy notifies are no reason for the daemon's progress thread to
 *       poll on: woken by a doorbell it counts them and sleeps again
 *       without spinning, so its spin's yields (hoistctl's prog_yields,
 *       read by rank 0 through $HOIST_HOISTCTL before and after, the
 *       daemon left 100 ms to fall asleep first) stay below one per 32
 *       barriers (0-2 when quiet; without that, every wake-up spun for HOIST_SPIN_US, and at low
 *       load it never slept again: a third runnable thread beside the 2
 *       PEs on 2 CPUs).
 *     then as many of one call site: they are told to the daemon in runs
 *     (at most nbar/4096 + 2 notifies besides those posted before a wait
 *     for the daemon; one per barrier without the runs), and after a
 *     descriptor posted behind them (hoist_phase, then a quiet) the
 *     daemon's "barriers" counter of the rank is every barrier it passed
 *     (the run goes before the descriptor: without that 32442 of 32771).
 *   it_nodebar kill   the last rank waits until every other PE arrived at a
 *     node barrier (it reads the arrival count), then SIGKILLs itself: each
 *     other PE's wait must end with an error, not hang; it prints
 *     "NODEBAR-KILL-OK" (node_kill.sh counts them).
 */
#include <inttypes.h>
#include <signal.h>

#include "internal.h"
#include "it_common.h"

#define ROUNDS 300
#define SPLIT_ROUNDS 100
#define BLOCK 4096u

static volatile uint64_t sink;

static void check(uint64_t *slots, unsigned char *block, int n, int me, uint64_t want, int with_block,
		  const char *what, int r)
{
	for (int s = 0; s < n; s++) {
		uint64_t v = __atomic_load_n(&slots[s], __ATOMIC_ACQUIRE);
		if (v != want)
			IT_FAIL("%s round %d: slot of pe %d holds %" PRIu64 ", want %" PRIu64, what, r, s,
				v, want);
	}
	if (with_block) {
		int from = (me + n - 1) % n;
		size_t off = it_check_fill(block, BLOCK, it_hash(0xb10c, (uint64_t)from, want, 0, 0));
		if (off != BLOCK)
			IT_FAIL("%s round %d: strided block from pe %d wrong at %zu (a daemon-path "
				"put before the barrier was not complete after it)", what, r, from, off);
	}
}

static void puts_of(uint64_t *slots, unsigned char *block, unsigned char *src, int n, int me, uint64_t v,
		    int with_block, int r)
{
	for (int i = 0; i < n; i++) {
		int t = (me + i) % n;
		IT_OK(hoist_put(t, &slots[me], &v, sizeof(v)), "round %d slot put to %d", r, t);
	}
	if (with_block) {
		it_fill(src, BLOCK, it_hash(0xb10c, (uint64_t)me, v, 0, 0));
		IT_OK(hoist_put_strided((me + 1) % n, block, 64, src, 64, 64, BLOCK / 64),
		      "round %d strided put", r);
	}
}

static int kill_test(int me, int n)
{
	struct hoist_ctx *c = hoist__ctx();
	IT_OK(hoist_barrier(), "the first barrier (on the daemon epoch)");
	if (!c->nb_line) {
		IT_FAIL("no node barrier in a one-node job of %d PEs", n);
		return 1;
	}
	if (me == n - 1) {
		/* everyone else arrived at node barrier nb_k + 1: die */
		IT_WHERE("victim: wait for %d arrivals", n - 1);
		while (hoist__nb_arrived(c, c->nb_k + 1, 0) != n - 1)
			usleep(1000);
		usleep(20000); /* let them sleep */
		kill(getpid(), SIGKILL);
	}
	IT_WHERE("survivor: barrier while the last rank dies");
	int rc = hoist_barrier();
	if (rc == 0)
		IT_FAIL("the barrier completed though rank %d died before arriving", n - 1);
	else
		it_log("barrier ended with %s", it_errname(rc));
	hoist_finalize();
	if (it_failures)
		return 1;
	fprintf(stderr, "[it_nodebar rank %d] NODEBAR-KILL-OK %s\n", me, it_errname(rc));
	return 0;
}

/* two call sites, so two phases (the barrier's phase id is its return
 * address): barriers alternating between them are one notify each; the
 * stores keep the compiler from folding the two functions into one */
__attribute__((noinline)) static int bar_a(void)
{
	sink = 1;
	return hoist_barrier();
}

__attribute__((noinline)) static int bar_b(void)
{
	sink = 2;
	return hoist_barrier();
}

/* this job's rank me's barrier notifies as the daemon counted them
 * (hoistctl stats --json: its "barriers" counter), -1 if unreadable */
static long long my_barriers(int me)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd),
		 "'%s' --runtime-dir '%s' stats --json | python3 -c \"import json,sys\n"
		 "d=json.load(sys.stdin)\n"
		 "for c in d.get('clients', []):\n"
		 "    if c.get('job') == '%s' and c.get('rank') == %d:\n"
		 "        print(c['counters']['barriers'])\"",
		 getenv("HOIST_HOISTCTL"), getenv("HOIST_RUNTIME_DIR"), getenv("HOIST_JOB"), me);
	FILE *f = popen(cmd, "r");
	long long n = -1;
	if (f) {
		if (fscanf(f, "%lld", &n) != 1)
			n = -1;
		pclose(f);
	}
	return n;
}

static int lazy_test(int me)
{
	struct hoist_ctx *c = hoist__ctx();
	/* for the job's doorbell and SQ-full counts (below); its barrier is the first */
	uint64_t *count = hoist_malloc(4 * sizeof(*count));
	if (!count) {
		IT_FAIL("hoist_malloc of 32 bytes failed");
		return it_finish();
	}
	IT_OK(hoist_barrier(), "the second barrier (the first on the node)");
	uint32_t t0 = c->barrier_target;
	if (!c->nb_line) {
		IT_FAIL("no node barrier in a one-node job");
		return it_finish();
	}
	uint32_t entries = c->ring.sq_mask + 1;
	uint32_t nbar = 16 * entries;
	long long y0 = 0;
	if (me == 0) {
		usleep(100000); /* the daemon's spin after the first barrier ends */
		if ((y0 = it_stats_daemon("prog_yields")) < 0)
			IT_FAIL("no prog_yields from $HOIST_HOISTCTL stats --json");
	}
	uint64_t w0 = c->nb_sq_waits, k0 = c->nb_kicks, n0 = c->barriers_node;
	for (uint32_t i = 0; i < nbar; i++) {
		IT_WHERE("barrier %u of %u", i, nbar);
		if (IT_OK(i & 1 ? bar_b() : bar_a(), "barrier %u", i))
			break;
	}
	long long yields = me == 0 ? it_stats_daemon("prog_yields") - y0 : 0;
	/* rank 1's hoist_finalize is work for the daemon: not before rank 0 read */
	IT_OK(hoist_barrier(), "the barrier after the count");
	uint64_t waits = c->nb_sq_waits - w0, kicks = c->nb_kicks - k0;
	it_log("%u node barriers (SQ of %u): %" PRIu64 " found the SQ full, %" PRIu64
	       " half-full doorbells; the daemon's spin yielded %lld times", nbar, entries, waits,
	       kicks, yields);
	if (c->barriers_node - n0 != nbar + 1)
		IT_FAIL("%" PRIu64 " node barriers, want %u", c->barriers_node - n0, nbar + 1);
	/* The client rings when half its SQ holds notifies the daemon has not
	 * taken: the daemon sleeps through lazy notifies, so without the
	 * doorbell a notify finds the SQ full every sq_entries barriers (29-62
	 * of 16,384 seen quiet). One doorbell wakes the daemon for every ring:
	 * the PE that rings first may be the one each time (0 and 74 seen),
	 * so the job's sums. When the PEs are slow (2 CPU hogs beside them)
	 * the daemon's own wake-ups may drain the SQs before half of one
	 * fills: no doorbell and no full SQ, which is right. How many find it
	 * full although the doorbell rang depends on whether the daemon gets
	 * a CPU after it: 0 quiet, 269 under TSan beside other work, so only
	 * a full SQ that no doorbell preceded fails */
	count[0] = kicks;
	count[1] = waits;
	IT_OK(hoist_allreduce(&count[2], &count[0], 2, HOIST_UINT64, HOIST_SUM),
	      "allreduce of the doorbell and SQ-full counts");
	if (count[2] == 0 && count[3] > 0)
		IT_FAIL("%" PRIu64 " notifies of the job found the SQ full in %u node barriers, and "
			"no PE rang the half-full doorbell", count[3], nbar);
	/* 0-2 when the machine is quiet; a loaded one may make the spin
	 * after the first barrier outlast the 100 ms or wake the thread for
	 * other reasons now and then. Lazy notifies counted as work made it
	 * spin through the run: 5,220 and 9,040 yields in 16,384 barriers */
	if (yields > nbar / 32)
		IT_FAIL("the daemon's progress thread spun (%lld yields) in %u node barriers: lazy "
			"notifies kept it polling", yields, nbar);
	/* one call site: one notify stands for a run of its barriers (at
	 * most 4096, client/sync.c), but for those posted before a sleep
	 * (whatever waits for the daemon needs its count; how many depends
	 * on the load: counted apart, nb_flush_wait). Without the runs:
	 * one notify per barrier, 16 x sq_entries */
	uint64_t nn0 = c->nb_notifies, nw0 = c->nb_flush_wait;
	for (uint32_t i = 0; i < nbar; i++) {
		IT_WHERE("one-site barrier %u of %u", i, nbar);
		if (IT_OK(hoist_barrier(), "one-site barrier %u", i))
			break;
	}
	uint64_t told = c->nb_notifies - nn0, told_wait = c->nb_flush_wait - nw0;
	it_log("%u barriers of one call site: %" PRIu64 " notifies, %" PRIu64
	       " of them before a wait for the daemon", nbar, told, told_wait);
	if (told - told_wait > nbar / 4096 + 2)
		IT_FAIL("%" PRIu64 " notifies (%" PRIu64 " before a wait) for %u barriers of one "
			"call site: not told in runs", told, told_wait, nbar);
	/* a descriptor after the run: the daemon counts the run first (its
	 * notify goes before it), so once the quiet behind it completed,
	 * the daemon's count of our notifies is every barrier we passed */
	IT_OK(hoist_phase(0x6e62), "hoist_phase after the run");
	IT_OK(hoist_quiet(), "quiet after the run");
	long long counted = my_barriers(me);
	if (counted != (long long)c->barrier_target)
		IT_FAIL("the daemon counted %lld barrier notifies of rank %d after a descriptor "
			"posted behind %u barriers", counted, me, c->barrier_target);
	IT_OK(hoist_barrier(), "the barrier after the daemon's count");
	uint32_t target = c->barrier_target;
	int rc = hoist_finalize(); /* waits for the daemon's epoch: every notify counted */
	if (rc)
		IT_FAIL("hoist_finalize: %s", it_errname(rc));
	else if (target - t0 != 2 * nbar + 2)
		IT_FAIL("%u barriers posted after the first node barrier, want %u", target - t0,
			2 * nbar + 2);
	if (it_failures)
		return 1;
	fprintf(stderr, "[it_nodebar] lazy PASS\n");
	return 0;
}

int main(int argc, char **argv)
{
	int me, n;
	it_init("it_nodebar", &me, &n);
	it_watchdog(50);
	if (argc > 1 && !strcmp(argv[1], "kill"))
		return kill_test(me, n);
	if (argc > 1 && !strcmp(argv[1], "lazy"))
		return lazy_test(me);
	struct hoist_ctx *c = hoist__ctx();
	uint64_t *slots = it_malloc(2 * (size_t)n * sizeof(uint64_t));
	unsigned char *block = it_malloc(2 * (size_t)BLOCK);
	unsigned char *src = it_xmalloc(BLOCK);
	unsigned char *work = it_xmalloc(1 << 16);
	memset(work, 1, 1 << 16);
	IT_OK(hoist_barrier(), "initial");
	uint64_t q0 = c->quiets_posted;
	uint64_t nstrided = 0, nbar = 0;

	for (int r = 1; r <= ROUNDS; r++) {
		int b = r % 2, with_block = r % 7 == 0;
		IT_WHERE("round %d", r);
		if (r % n == me && r % 5 == 0)
			usleep(300);
		puts_of(slots + (size_t)b * n, block + (size_t)b * BLOCK, src, n, me, (uint64_t)r,
			with_block, r);
		nstrided += with_block;
		nbar++;
		if (IT_OK(hoist_barrier(), "round %d", r) != 0)
			continue;
		check(slots + (size_t)b * n, block + (size_t)b * BLOCK, n, me, (uint64_t)r, with_block,
		      "barrier", r);
	}
	for (int r = 1; r <= SPLIT_ROUNDS; r++) {
		int b = r % 2, with_block = r % 10 == 5;
		uint64_t v = 100000u + (uint64_t)r;
		IT_WHERE("split round %d", r);
		puts_of(slots + (size_t)b * n, block + (size_t)b * BLOCK, src, n, me, v, with_block, r);
		nstrided += with_block;
		nbar++;
		if (IT_OK(hoist_barrier_notify(), "split round %d", r) != 0)
			continue;
		for (size_t i = 0; i < ((r % n == me) ? (1u << 16) : 4096u); i++)
			work[i] = (unsigned char)(work[i] * 31 + (unsigned)r);
		sink += work[r];
		if (r % n == me && r % 4 == 0)
			usleep(300);
		if (IT_OK(hoist_barrier_wait(), "split round %d", r) != 0)
			continue;
		check(slots + (size_t)b * n, block + (size_t)b * BLOCK, n, me, v, with_block,
		      "split barrier", r);
	}

	const char *want = getenv("IT_NB_WANT");
	/* barriers so far: 2 in it_malloc, the initial one, the rounds */
	uint64_t total = 3 + nbar;
	it_log("%" PRIu64 " node barriers, %" PRIu64 " on the daemon's epoch, %" PRIu64
	       " quiets posted for %" PRIu64 " strided puts",
	       c->barriers_node, c->barriers_epoch, c->quiets_posted - q0, nstrided);
	if (want && !strcmp(want, "node")) {
		if (c->barriers_epoch != 1 || c->barriers_node != total - 1)
			IT_FAIL("%" PRIu64 " node barriers and %" PRIu64 " epoch waits, want %" PRIu64
				" and 1", c->barriers_node, c->barriers_epoch, total - 1);
		/* a quiet only where a strided put went to the daemon */
		if (c->quiets_posted - q0 != nstrided)
			IT_FAIL("%" PRIu64 " quiets posted by %" PRIu64 " barriers, want %" PRIu64
				" (one per barrier after a strided put)",
				c->quiets_posted - q0, nbar, nstrided);
	} else if (want && !strcmp(want, "epoch")) {
		if (c->barriers_node != 0 || c->barriers_epoch != total)
			IT_FAIL("%" PRIu64 " node barriers and %" PRIu64 " epoch waits, want 0 and %" PRIu64,
				c->barriers_node, c->barriers_epoch, total);
	}
	IT_OK(hoist_barrier(), "final");
	free(src);
	free(work);
	return it_finish();
}
