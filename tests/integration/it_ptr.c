/*
 * it_ptr: node-local direct access (hoist_ptr) and the same-node put/get
 * fast path, against a model of which PE lives on which node.
 *
 *   it_ptr [--nodes K] [--die]
 *
 * --nodes K: the job runs on K daemons placed as hoistrun places ranks
 * (rank i on node i*K/N); default 1. --cyclic K: rank i on node i%K
 * (ptr_cyclic.sh starts the ranks itself). A PE is local iff it is on my
 * node.
 *
 * 1. Before hoist_init and for bad arguments hoist_ptr is NULL: PE -1, N,
 *    addresses outside the heap (stack, just before it, its end). For me it
 *    is the address itself; for a local PE non-NULL, for a remote one NULL.
 * 2. Stores through the pointer: every PE writes word[me] in every local
 *    PE's `box` through hoist_ptr; barrier; every PE checks its own box
 *    (local writers: their value, remote ones: untouched) and then reads
 *    every PE's box with hoist_get (remote: daemon, local: direct or daemon).
 * 3. Puts, read through the pointer: every PE hoist_puts word[me] into
 *    every PE's `inbox` (8 B inline and 4 KiB staged); barrier; every PE
 *    reads every local PE's inbox through hoist_ptr.
 * 4. Read-your-writes and ordering: to every local PE, a 256 KiB staged
 *    put (queued in the daemon) followed at once by an 8 B put to its
 *    first word, then a get of all of it: the small put must not overtake
 *    the large one, the get must see both. Repeated with a remote put in
 *    front so the ring is not empty.
 * 5. With HOIST_DIRECT unset the library must have done some gets and puts
 *    itself (when there are local peers); with HOIST_DIRECT=0 none.
 * --die (3+ PEs on one node): rank 1 maps rank 2, then exits without
 *    finalizing. Rank 0 keeps using its mapping of rank 1 (no crash, the
 *    memory reads back), hoist_ptr of rank 1 still gives the mapping it
 *    already had, and the daemon still serves hoist_ptr requests.
 */
#include "it_common.h"
#include "internal.h"

#define BIG (256u << 10)

static int nnodes = 1, npes, cyclic;

static int node_of(int pe)
{
	return cyclic ? pe % nnodes : (int)((long)pe * nnodes / npes);
}

static uint64_t word(int src, int dst, int round)
{
	return it_hash((uint64_t)src, (uint64_t)dst, (uint64_t)round, 0x7074, 1) | 1;
}

static int die_mode(int me, int n)
{
	if (n < 3 || nnodes != 1) {
		IT_FAIL("--die needs 3+ PEs on one node");
		return it_finish();
	}
	uint64_t *x = it_malloc(4096);
	x[0] = word(me, me, 99);
	IT_OK(hoist_barrier());
	uint64_t *p1 = NULL;
	if (me == 0) {
		p1 = hoist_ptr(x, 1);
		if (!p1 || p1[0] != word(1, 1, 99))
			IT_FAIL("hoist_ptr(x, 1) = %p before the death", (void *)p1);
	}
	if (me == 1) {
		uint64_t *p2 = hoist_ptr(x, 2);
		if (!p2 || p2[0] != word(2, 2, 99))
			IT_FAIL("hoist_ptr(x, 2) = %p", (void *)p2);
	}
	IT_OK(hoist_barrier());
	if (me == 1)
		_exit(it_failures ? 1 : 0); /* dies: no finalize */
	/* the next barrier fails once the daemon noticed the death */
	int rc = hoist_barrier();
	if (rc != -ECONNRESET)
		IT_FAIL("barrier after rank 1 died returned %s", it_errname(rc));
	if (me == 0) {
		/* the dead PE's heap stays mapped and valid */
		for (int i = 0; i < 512; i++)
			p1[i] = word(0, 1, i);
		for (int i = 0; i < 512; i++)
			if (p1[i] != word(0, 1, i))
				IT_FAIL("dead peer's heap word %d reads %#" PRIx64, i, p1[i]);
		if (hoist_ptr(x, 1) != p1)
			IT_FAIL("hoist_ptr(x, 1) changed after the death");
		/* the daemon still answers: rank 2 is alive and not mapped yet */
		uint64_t *p2 = hoist_ptr(x, 2);
		if (!p2 || p2[0] != word(2, 2, 99))
			IT_FAIL("hoist_ptr(x, 2) after rank 1 died = %p", (void *)p2);
		/* the daemon path decides for a job with a dead PE */
		uint64_t v = 0;
		IT_EXPECT(hoist_get(&v, 1, x, 8), -ECONNRESET, " (get from the dead PE)");
		IT_OK(hoist_get(&v, 2, x, 8), " (get from a live PE)");
		if (v != word(2, 2, 99))
			IT_FAIL("get from rank 2 after the death: %#" PRIx64, v);
		/* the others wait for this, the job has no barrier left */
		for (int q = 2; q < n; q++) {
			uint64_t *pq = hoist_ptr(x, q);
			if (pq)
				__atomic_store_n(&pq[1], 0xd0e, __ATOMIC_RELEASE);
			else
				IT_FAIL("hoist_ptr(x, %d) = NULL after the death", q);
		}
	} else {
		IT_WHERE("waiting for rank 0's store through hoist_ptr");
		while (__atomic_load_n(&x[1], __ATOMIC_ACQUIRE) != 0xd0e)
			usleep(1000);
	}
	hoist_finalize(); /* fails: the job lost a PE */
	if (it_failures) {
		fprintf(stderr, "[%s rank %d] %lu failure(s)\n", it_name, it_rank, it_failures);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int die = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
			nnodes = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cyclic") && i + 1 < argc)
			nnodes = atoi(argv[++i]), cyclic = 1;
		else if (!strcmp(argv[i], "--die"))
			die = 1;
	}
	static uint64_t before;
	if (hoist_ptr(&before, 0) != NULL) {
		fprintf(stderr, "[it_ptr] FAIL hoist_ptr before hoist_init is not NULL\n");
		return 1;
	}
	int me, n;
	it_init("it_ptr", &me, &n);
	it_watchdog(50);
	npes = n;
	if (nnodes < 1 || nnodes > n) {
		IT_FAIL("--nodes %d with %d PEs", nnodes, n);
		return it_finish();
	}
	if (die)
		return die_mode(me, n);
	const char *dv = getenv("HOIST_DIRECT");
	int direct = !(dv && !strcmp(dv, "0"));
	int nlocal = 0;
	for (int q = 0; q < n; q++)
		nlocal += node_of(q) == node_of(me);

	uint64_t *box = it_malloc((size_t)n * 8);
	uint64_t *inbox = it_malloc((size_t)n * 8);
	char *blk = it_malloc((size_t)n * 4096);
	char *big = it_malloc(BIG);
	struct hoist_ctx *c = hoist__ctx();

	/* 1. arguments and placement */
	IT_WHERE("argument checks");
	uint64_t on_stack = 0;
	if (hoist_ptr(box, -1) || hoist_ptr(box, n) || hoist_ptr(box, n + 7) || hoist_ptr(box, -1000))
		IT_FAIL("hoist_ptr with an invalid PE is not NULL");
	for (int q = 0; q < n; q++) {
		if (hoist_ptr(&on_stack, q) || hoist_ptr(NULL, q) ||
		    hoist_ptr(c->heap_base - 1, q) || hoist_ptr(c->heap_base + c->heap_bytes, q))
			IT_FAIL("hoist_ptr of an address outside the heap, pe %d, is not NULL", q);
		void *p = hoist_ptr(box, q);
		if (q == me && p != box)
			IT_FAIL("hoist_ptr(box, me) = %p, box = %p", p, (void *)box);
		if (node_of(q) == node_of(me) && !p)
			IT_FAIL("hoist_ptr(box, %d) = NULL for a PE of my node", q);
		if (node_of(q) != node_of(me) && p)
			IT_FAIL("hoist_ptr(box, %d) = %p for a PE of node %d", q, p, node_of(q));
		if (p && q != me && (p == box || hoist_is_symmetric(p, 1)))
			IT_FAIL("hoist_ptr(box, %d) = %p points into my own heap", q, p);
		/* the last byte of the heap is inside, its end is not */
		char *last = hoist_ptr(c->heap_base + c->heap_bytes - 1, q);
		if ((last != NULL) != (p != NULL))
			IT_FAIL("hoist_ptr(heap end - 1, %d) = %p", q, (void *)last);
		if (p && last && last - (char *)p != (c->heap_base + c->heap_bytes - 1) - (char *)box)
			IT_FAIL("hoist_ptr offsets differ for pe %d", q);
	}

	for (int round = 0; round < 3; round++) {
		/* 2. stores through the pointer */
		IT_WHERE("round %d: stores through hoist_ptr", round);
		memset(box, 0, (size_t)n * 8);
		IT_OK(hoist_barrier());
		for (int q = 0; q < n; q++) {
			uint64_t *pb = hoist_ptr(box, q);
			if (pb)
				pb[me] = word(me, q, round);
		}
		IT_OK(hoist_barrier());
		for (int s = 0; s < n; s++) {
			uint64_t want = node_of(s) == node_of(me) ? word(s, me, round) : 0;
			if (box[s] != want)
				IT_FAIL("round %d: box[%d] = %#" PRIx64 ", want %#" PRIx64, round, s, box[s], want);
		}
		for (int q = 0; q < n; q++) {
			uint64_t got[64];
			uint64_t *dst = n <= 64 ? got : NULL;
			if (!dst)
				break;
			IT_OK(hoist_get(dst, q, box, (size_t)n * 8), " (get box of %d)", q);
			for (int s = 0; s < n; s++) {
				uint64_t want = node_of(s) == node_of(q) ? word(s, q, round) : 0;
				if (got[s] != want)
					IT_FAIL("round %d: get of pe %d box[%d] = %#" PRIx64 ", want %#" PRIx64,
						round, q, s, got[s], want);
			}
		}
		IT_OK(hoist_barrier());

		/* 3. puts, read through the pointer */
		IT_WHERE("round %d: puts, loads through hoist_ptr", round);
		char *src = it_xmalloc(4096);
		for (int q = 0; q < n; q++) {
			uint64_t w = word(me, q, round + 10);
			IT_OK(hoist_put(q, &inbox[me], &w, 8), " (put to %d)", q);
			it_fill(src, 4096, word(me, q, round + 20));
			IT_OK(hoist_put(q, blk + (size_t)me * 4096, src, 4096), " (4 KiB put to %d)", q);
			memset(src, 0, 4096); /* reusable on return */
		}
		free(src);
		IT_OK(hoist_barrier());
		for (int q = 0; q < n; q++) {
			uint64_t *pi = hoist_ptr(inbox, q);
			char *pk = hoist_ptr(blk, q);
			if ((pi != NULL) != (node_of(q) == node_of(me)) || (pk != NULL) != (pi != NULL)) {
				IT_FAIL("hoist_ptr(inbox, %d) = %p", q, (void *)pi);
				continue;
			}
			if (!pi)
				continue;
			for (int s = 0; s < n; s++) {
				if (pi[s] != word(s, q, round + 10))
					IT_FAIL("round %d: pe %d inbox[%d] via hoist_ptr = %#" PRIx64, round, q, s,
						pi[s]);
				size_t bad = it_check_fill(pk + (size_t)s * 4096, 4096, word(s, q, round + 20));
				if (bad != 4096)
					IT_FAIL("round %d: pe %d block of %d via hoist_ptr differs at %zu", round,
						q, s, bad);
			}
		}
		IT_OK(hoist_barrier());

		/* 4. read-your-writes and ordering with queued puts; each PE
		 * writes only its own slice of every local PE's `big` */
		IT_WHERE("round %d: ordering", round);
		size_t slice = (BIG / (size_t)n) & ~(size_t)63;
		char *pat = it_xmalloc(slice), *back = it_xmalloc(slice);
		for (int k = 0; k < 2; k++) {
			for (int q = 0; q < n; q++) {
				if (node_of(q) != node_of(me))
					continue;
				char *at = big + (size_t)me * slice;
				if (k == 1) { /* something in front: the ring is not empty */
					IT_OK(hoist_fence());
					int r = (me + 1) % n;
					for (int t = 0; t < n && node_of(r) == node_of(me); t++)
						r = (r + 1) % n;
					if (node_of(r) != node_of(me)) {
						uint64_t w = 1;
						IT_OK(hoist_put(r, &inbox[me], &w, 8));
					}
				}
				uint64_t key = word(me, q, round * 2 + k + 40);
				it_fill(pat, slice, key);
				IT_OK(hoist_put(q, at, pat, slice), " (slice put to %d)", q);
				uint64_t w = word(me, q, round * 2 + k + 60);
				IT_OK(hoist_put(q, at, &w, 8), " (8 B put to %d)", q);
				memset(back, 0, slice);
				IT_OK(hoist_get(back, q, at, slice), " (slice get from %d)", q);
				memcpy(pat, &w, 8);
				if (memcmp(back, pat, slice) != 0) {
					size_t i = 0;
					while (i < slice && back[i] == pat[i])
						i++;
					IT_FAIL("round %d/%d: pe %d slice differs at %zu after put, put, get", round,
						k, q, i);
				}
				uint64_t one = 0;
				IT_OK(hoist_get(&one, q, at, 8));
				if (one != w)
					IT_FAIL("round %d/%d: pe %d first word %#" PRIx64 ", want %#" PRIx64, round,
						k, q, one, w);
			}
		}
		free(pat);
		free(back);
		IT_OK(hoist_quiet());
		IT_OK(hoist_barrier());
	}

	/* 5. did the library go direct? */
	IT_WHERE("counters");
	if (direct && nlocal > 0 && (c->direct_gets == 0 || c->direct_puts == 0))
		IT_FAIL("%d local PEs but %" PRIu64 " direct gets, %" PRIu64 " direct puts", nlocal,
			c->direct_gets, c->direct_puts);
	if (!direct && (c->direct_gets || c->direct_puts))
		IT_FAIL("HOIST_DIRECT=0 but %" PRIu64 " direct gets, %" PRIu64 " direct puts",
			c->direct_gets, c->direct_puts);
	it_log("%d of %d PEs local; %" PRIu64 " direct gets, %" PRIu64 " direct puts", nlocal, n,
	       c->direct_gets, c->direct_puts);
	int rc = it_finish();
	if (hoist_ptr(box, me) != NULL) {
		fprintf(stderr, "[it_ptr rank %d] FAIL hoist_ptr after finalize is not NULL\n", me);
		rc = 1;
	}
	return rc;
}
