/*
 * it_static: global and static variables are symmetric
 * (hoist_init_with(HOIST_INIT_SYMMETRIC_DATA)), in a position-independent
 * executable with ASLR: every operation on the address of a static or
 * global of this program reaches the other PE's copy, on whatever path
 * the launcher's placement and HOIST_DIRECT choose (direct, daemon, tcp).
 *
 *   it_static [--mismatch]
 *
 * 1. Before init: globals written before hoist_init keep their values, so
 *    do initialized .data and zeroed .bss; the data segment is not a
 *    memfd before, it is one after (/proc/self/maps).
 * 2. Addresses: every PE puts &s_long into PE 0's static table; with ASLR
 *    on (randomize_va_space != 0) PE 0 checks that they differ (the test
 *    is PIE).
 * 3. Puts (8 B inline, 4 KiB and 300 KiB staged, blocking and nbi, a
 *    static source read in place by nbi), gets (into the stack, into a
 *    static: the daemon writes our data segment), strided puts, to the
 *    right neighbour and from the left one, into a global struct, an int
 *    array and a .bss buffer; every value checked.
 * 4. Atomics: everyone FETCH_ADDs PE 0's static counter; CSWAP on a
 *    global; PE 0 sleeps in hoist_wait_until on a static until every
 *    other PE's atomic ADD arrived; put-with-signal into a static with
 *    hoist_signal_wait_until on a static signal.
 * 5. Collectives with static buffers: broadcast, allreduce.
 * 6. hoist_ptr(&static, local pe) is that PE's copy (stores through it
 *    land), hoist_ptr(&static, me) is the address itself; hoist_is_symmetric
 *    of a static is 1, of the stack 0, of a range leaving the segment 0.
 * 7. Counters (this program links the static archive): with the right
 *    neighbour on this node and HOIST_DIRECT unset the library did some
 *    puts itself; with
 *    HOIST_DIRECT=0 none.
 * 8. hoist_finalize: the segment is private memory again (not a memfd),
 *    with the values it had.
 * --mismatch (2 PEs): rank 0 asks for symmetric data, rank 1 does not:
 *    both fail hoist_init, rank 0's hoist_error_detail says why.
 */
#include <stdint.h>

#include "it_common.h"
#include "internal.h"

#define BIG (300u << 10)
#define MAXPE 64

struct rec {
	long a;
	int b[5];
	double d;
	uint64_t tail[64];
};

static long s_long = 1234;                                 /* .data */
long g_before;                                             /* .bss, written before init */
static int s_arr[1024] = {[0] = 7, [1023] = 9};            /* .data */
static int z_arr[2048];                                    /* .bss */
struct rec g_rec = {11, {1, 2, 3, 4, 5}, 2.5, {0}};        /* .data */
static uint64_t s_addrs[MAXPE];
static unsigned char s_big[BIG];                           /* .bss, staged puts */
static unsigned char s_src[BIG];                           /* nbi zero-copy source */
static unsigned char s_getdst[BIG];                        /* get into a static */
static uint64_t s_ctr, s_flag, s_sig, s_cas = 5;
static uint64_t s_sigdata[32];
static int s_stride[64];
static double s_bcast[16];
static int64_t s_red_src[8], s_red_dst[8];
static uint64_t s_ptr_box[MAXPE];

static uint64_t word(int src, int dst, int k)
{
	return it_hash((uint64_t)src, (uint64_t)dst, (uint64_t)k, 0x5747, 3) | 1;
}

/* Is the page of p mapped from a memfd (the heap file)? -1: not found. */
static int in_memfd(const void *p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	char line[512];
	int r = -1;
	uintptr_t a = (uintptr_t)p;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi) {
			r = strstr(line, "memfd:") != NULL;
			break;
		}
	}
	fclose(f);
	return r;
}

static int mismatch(void)
{
	const char *r = getenv("HOIST_RANK");
	int rank = r ? atoi(r) : 0;
	it_name = "it_static --mismatch";
	it_rank = rank;
	int rc = rank == 0 ? hoist_init_with(HOIST_INIT_SYMMETRIC_DATA) : hoist_init();
	if (rc == 0) {
		IT_FAIL("hoist_init succeeded with PEs that disagree on symmetric data");
		hoist_finalize();
	} else if (rank == 0 && !strstr(hoist_error_detail(), "symmetric data")) {
		IT_FAIL("hoist_init returned %s, detail '%s' does not mention symmetric data",
			it_errname(rc), hoist_error_detail());
	}
	if (in_memfd(&s_long) != 0)
		IT_FAIL("after a failed hoist_init the data segment is not private memory");
	if (rank == 0 && !it_failures)
		fprintf(stderr, "[%s] PASS: %s\n", it_name, hoist_error_detail());
	return it_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--mismatch"))
		return mismatch();
	it_watchdog(20);
	g_before = 4242;
	z_arr[17] = 0; /* stays zero */
	if (in_memfd(&s_long) != 0)
		IT_FAIL("the data segment is a memfd before hoist_init");
	IT_EXPECT(hoist_init_with(0x80), -EINVAL, " (unknown flag)");

	it_name = "it_static";
	setvbuf(stderr, NULL, _IOLBF, 0);
	int rc = hoist_init_with(HOIST_INIT_SYMMETRIC_DATA);
	if (rc) {
		fprintf(stderr, "[it_static] FAIL hoist_init_with: %s (%s)\n", it_errname(rc),
			hoist_error_detail());
		return 1;
	}
	int me = hoist_rank(), n = hoist_size();
	it_rank = me;
	if (n > MAXPE) {
		IT_FAIL("at most %d PEs", MAXPE);
		return it_finish();
	}
	int right = (me + 1) % n, left = (me + n - 1) % n;

	/* 1. values survive the move */
	IT_WHERE("initial values");
	if (in_memfd(&s_long) != 1 || in_memfd(&s_big[BIG - 1]) != 1 || in_memfd(&g_rec) != 1)
		IT_FAIL("the data segment is not in the heap file after hoist_init");
	if (s_long != 1234 || g_before != 4242 || s_arr[0] != 7 || s_arr[1023] != 9 || g_rec.a != 11 ||
	    g_rec.b[4] != 5 || g_rec.d != 2.5 || s_cas != 5)
		IT_FAIL("initial values changed by hoist_init: s_long %ld g_before %ld s_arr %d/%d "
			"g_rec %ld/%d/%g", s_long, g_before, s_arr[0], s_arr[1023], g_rec.a, g_rec.b[4], g_rec.d);
	for (size_t i = 0; i < sizeof(z_arr) / sizeof(z_arr[0]); i++)
		if (z_arr[i]) {
			IT_FAIL("z_arr[%zu] = %d after hoist_init", i, z_arr[i]);
			break;
		}
	for (size_t i = 0; i < BIG; i++)
		if (s_big[i]) {
			IT_FAIL("s_big[%zu] = %d after hoist_init", i, s_big[i]);
			break;
		}
	IT_OK(hoist_barrier());

	/* 2. the addresses differ (PIE + ASLR) */
	IT_WHERE("addresses");
	uint64_t mine = (uint64_t)(uintptr_t)&s_long;
	IT_OK(hoist_put(0, &s_addrs[me], &mine, 8));
	IT_OK(hoist_barrier());
	if (me == 0) {
		FILE *f = fopen("/proc/sys/kernel/randomize_va_space", "r");
		int aslr = 0;
		if (f) {
			if (fscanf(f, "%d", &aslr) != 1)
				aslr = 0;
			fclose(f);
		}
		int same = 0;
		for (int q = 1; q < n; q++)
			same += s_addrs[q] == s_addrs[0];
		fprintf(stderr, "[it_static] &s_long on PE 0: %#" PRIx64 ", on PE %d: %#" PRIx64 " (ASLR %d)\n",
			s_addrs[0], n - 1, s_addrs[n - 1], aslr);
		for (int q = 0; q < n; q++)
			if (!s_addrs[q])
				IT_FAIL("PE %d's put of its address did not land", q);
		if (aslr && n > 1 && same == n - 1 && s_addrs[0])
			IT_FAIL("&s_long is the same on every PE with ASLR on: not a PIE?");
	}

	/* 3. puts to the right neighbour */
	IT_WHERE("puts");
	uint64_t v = word(me, right, 0);
	IT_OK(hoist_put(right, &s_long, &v, sizeof(long)), " (8 B into a static long)");
	int ia[1024];
	for (int i = 0; i < 1024; i++)
		ia[i] = (int)word(me, right, i + 1);
	IT_OK(hoist_put(right, s_arr, ia, sizeof(ia)), " (4 KiB into a static int array)");
	struct rec r = {.a = (long)word(me, right, 2000), .b = {me, right, 3, 4, 5}, .d = me + 0.5};
	for (int i = 0; i < 64; i++)
		r.tail[i] = word(me, right, 3000 + i);
	IT_OK(hoist_put(right, &g_rec, &r, sizeof(r)), " (a global struct)");
	unsigned char *big = malloc(BIG);
	for (size_t i = 0; i < BIG; i++)
		big[i] = it_fill_byte(word(me, right, 9), i);
	IT_OK(hoist_put(right, s_big, big, BIG), " (300 KiB into .bss)");
	for (size_t i = 0; i < BIG; i++)
		s_src[i] = it_fill_byte(word(me, right, 10), i);
	IT_OK(hoist_put_nbi(right, s_getdst, s_src, BIG), " (nbi, static source)");
	int st[32];
	for (int i = 0; i < 32; i++)
		st[i] = (int)word(me, right, 4000 + i);
	IT_OK(hoist_put_strided(right, s_stride, 2 * sizeof(int), st, sizeof(int), sizeof(int), 32));
	IT_OK(hoist_quiet());
	IT_OK(hoist_barrier());
	IT_WHERE("checking puts");
	if ((uint64_t)s_long != (uint64_t)(long)word(left, me, 0))
		IT_FAIL("s_long = %#lx, want %#" PRIx64 " from PE %d", s_long, word(left, me, 0), left);
	for (int i = 0; i < 1024; i++)
		if (s_arr[i] != (int)word(left, me, i + 1)) {
			IT_FAIL("s_arr[%d] = %#x", i, s_arr[i]);
			break;
		}
	if (g_rec.a != (long)word(left, me, 2000) || g_rec.b[0] != left || g_rec.b[1] != me ||
	    g_rec.d != left + 0.5 || g_rec.tail[63] != word(left, me, 3063))
		IT_FAIL("g_rec = {%ld, {%d, %d}, %g}", g_rec.a, g_rec.b[0], g_rec.b[1], g_rec.d);
	for (size_t i = 0; i < BIG; i++)
		if (s_big[i] != it_fill_byte(word(left, me, 9), i)) {
			IT_FAIL("s_big[%zu] = %d", i, s_big[i]);
			break;
		}
	for (size_t i = 0; i < BIG; i++)
		if (s_getdst[i] != it_fill_byte(word(left, me, 10), i)) {
			IT_FAIL("s_getdst[%zu] = %d after the nbi put from a static", i, s_getdst[i]);
			break;
		}
	for (int i = 0; i < 32; i++)
		if (s_stride[2 * i] != (int)word(left, me, 4000 + i) || s_stride[2 * i + 1] != 0) {
			IT_FAIL("s_stride[%d..] = %d %d", 2 * i, s_stride[2 * i], s_stride[2 * i + 1]);
			break;
		}
	IT_OK(hoist_barrier());

	/* gets from the left neighbour: what its right neighbour (me) put is
	 * there, read back into the stack and into a static */
	IT_WHERE("gets");
	long gl = 0;
	IT_OK(hoist_get(&gl, left, &s_long, sizeof(long)));
	if ((uint64_t)gl != (uint64_t)(long)word((left + n - 1) % n, left, 0))
		IT_FAIL("get of s_long at PE %d = %#lx", left, gl);
	struct rec gr;
	IT_OK(hoist_get(&gr, left, &g_rec, sizeof(gr)));
	if (gr.a != (long)word((left + n - 1) % n, left, 2000) || gr.b[1] != left)
		IT_FAIL("get of g_rec at PE %d = {%ld, {%d, %d}}", left, gr.a, gr.b[0], gr.b[1]);
	IT_OK(hoist_barrier()); /* everyone read s_getdst before it is overwritten */
	IT_OK(hoist_get(s_getdst, left, s_big, BIG), " (into a static)");
	for (size_t i = 0; i < BIG; i++)
		if (s_getdst[i] != it_fill_byte(word((left + n - 1) % n, left, 9), i)) {
			IT_FAIL("get into a static: byte %zu = %d", i, s_getdst[i]);
			break;
		}
	memset(s_getdst, 0, 4096);
	IT_OK(hoist_get_nbi(s_getdst, left, s_arr, 4096), " (nbi into a static)");
	IT_OK(hoist_quiet());
	if (((int *)(void *)s_getdst)[5] != (int)word((left + n - 1) % n, left, 6))
		IT_FAIL("nbi get into a static: %d", ((int *)(void *)s_getdst)[5]);
	IT_OK(hoist_barrier());

	/* 4. atomics and waits on statics */
	IT_WHERE("atomics");
	uint64_t one = 1, got = 0;
	IT_OK(hoist_atomic(0, &s_ctr, HOIST_AMO_FETCH_ADD, HOIST_UINT64, &one, NULL, &got));
	if (got >= (uint64_t)n)
		IT_FAIL("fetch-add on PE 0's s_ctr fetched %" PRIu64, got);
	uint64_t cmp = 5, nv = 100 + (uint64_t)me, old = 0;
	IT_OK(hoist_atomic(right, &s_cas, HOIST_AMO_CSWAP, HOIST_UINT64, &nv, &cmp, &old));
	if (old != 5)
		IT_FAIL("cswap on PE %d's s_cas fetched %" PRIu64, right, old);
	if (me != 0)
		IT_OK(hoist_atomic(0, &s_flag, HOIST_AMO_ADD, HOIST_UINT64, &one, NULL, NULL));
	IT_OK(hoist_quiet());
	if (me == 0) {
		IT_WHERE("PE 0 waits for %d atomic adds on a static", n - 1);
		IT_OK(hoist_wait_until(&s_flag, HOIST_UINT64, HOIST_CMP_EQ, (uint64_t)(n - 1)));
	}
	uint64_t sd[32];
	for (int i = 0; i < 32; i++)
		sd[i] = word(me, right, 5000 + i);
	IT_OK(hoist_put_signal(right, s_sigdata, sd, sizeof(sd), &s_sig, 1, HOIST_SIGNAL_ADD));
	IT_WHERE("waiting for the signal from PE %d", left);
	uint64_t seen = 0;
	IT_OK(hoist_signal_wait_until(&s_sig, HOIST_CMP_GE, 1, &seen));
	for (int i = 0; i < 32; i++)
		if (s_sigdata[i] != word(left, me, 5000 + i)) {
			IT_FAIL("signal seen (%" PRIu64 ") but s_sigdata[%d] = %#" PRIx64, seen, i, s_sigdata[i]);
			break;
		}
	IT_OK(hoist_barrier());
	if (me == 0 && s_ctr != (uint64_t)n)
		IT_FAIL("s_ctr = %" PRIu64 " after %d fetch-adds", s_ctr, n);
	if (s_cas != 100 + (uint64_t)left)
		IT_FAIL("s_cas = %" PRIu64 ", want %d", s_cas, 100 + left);

	/* 5. collectives on static buffers */
	IT_WHERE("collectives");
	if (me == 0)
		for (int i = 0; i < 16; i++)
			s_bcast[i] = i * 1.25;
	IT_OK(hoist_broadcast(s_bcast, s_bcast, sizeof(s_bcast), 0));
	for (int i = 0; i < 16; i++)
		if (s_bcast[i] != i * 1.25) {
			IT_FAIL("broadcast into a static: [%d] = %g", i, s_bcast[i]);
			break;
		}
	for (int i = 0; i < 8; i++)
		s_red_src[i] = me * 10 + i;
	IT_OK(hoist_allreduce(s_red_dst, s_red_src, 8, HOIST_INT64, HOIST_SUM));
	for (int i = 0; i < 8; i++)
		if (s_red_dst[i] != (int64_t)n * (n - 1) / 2 * 10 + (int64_t)n * i) {
			IT_FAIL("allreduce into a static: [%d] = %" PRId64, i, s_red_dst[i]);
			break;
		}

	/* 6. hoist_ptr and hoist_is_symmetric */
	IT_WHERE("hoist_ptr");
	long on_stack = 0;
	if (hoist_is_symmetric(&s_long, sizeof(s_long)) != 1 || hoist_is_symmetric(&g_rec, sizeof(g_rec)) != 1)
		IT_FAIL("hoist_is_symmetric of a static is 0");
	if (hoist_is_symmetric(&on_stack, sizeof(on_stack)) != 0)
		IT_FAIL("hoist_is_symmetric of the stack is 1");
	if (hoist_is_symmetric(s_big, 1ull << 40) != 0)
		IT_FAIL("hoist_is_symmetric of a range leaving the data segment is 1");
	if (hoist_ptr(&s_long, me) != &s_long)
		IT_FAIL("hoist_ptr(&s_long, me) = %p, not %p", hoist_ptr(&s_long, me), (void *)&s_long);
	s_ptr_box[me] = word(me, me, 6000);
	IT_OK(hoist_barrier());
	int locals = 0;
	for (int q = 0; q < n; q++) {
		if (q == me)
			continue;
		uint64_t *p = hoist_ptr(s_ptr_box, q);
		if (!p)
			continue; /* another node */
		locals++;
		if (p[q] != word(q, q, 6000))
			IT_FAIL("hoist_ptr(s_ptr_box, %d)[%d] = %#" PRIx64, q, q, p[q]);
		__atomic_store_n(&p[me], word(me, q, 6001), __ATOMIC_RELAXED);
	}
	IT_OK(hoist_barrier());
	for (int q = 0; q < n; q++) {
		if (q == me || !hoist_ptr(s_ptr_box, q))
			continue;
		if (s_ptr_box[q] != word(q, me, 6001))
			IT_FAIL("store of PE %d through hoist_ptr: s_ptr_box[%d] = %#" PRIx64, q, q, s_ptr_box[q]);
	}

	/* 7. which path */
	struct hoist_ctx *c = hoist__ctx();
	const char *d = getenv("HOIST_DIRECT");
	if (d && !strcmp(d, "0") && c->direct_puts)
		IT_FAIL("HOIST_DIRECT=0 but %" PRIu64 " direct puts", c->direct_puts);
	if ((!d || strcmp(d, "0")) && right != me && hoist_ptr(s_ptr_box, right) && !c->direct_puts)
		IT_FAIL("the right neighbour is on this node, HOIST_DIRECT on, but no direct put");
	if (me == 0)
		fprintf(stderr, "[it_static] %d PEs, %d local peers; direct puts %" PRIu64 " gets %" PRIu64
			" amos %" PRIu64 "\n", n, locals, c->direct_puts, c->direct_gets, c->direct_amos);

	/* 8. finalize: private again, values kept */
	long keep = s_long;
	rc = hoist_finalize();
	if (rc)
		IT_FAIL("hoist_finalize returned %s", it_errname(rc));
	if (s_long != keep || s_big[0] != it_fill_byte(word(left, me, 9), 0))
		IT_FAIL("s_long / s_big changed by hoist_finalize");
	if (in_memfd(&s_long) != 0 || in_memfd(&s_big[BIG - 1]) != 0)
		IT_FAIL("the data segment is still in the heap file after hoist_finalize");
	free(big);
	if (it_failures) {
		fprintf(stderr, "[%s rank %d] %lu failure(s)\n", it_name, it_rank, it_failures);
		return 1;
	}
	if (me == 0)
		fprintf(stderr, "[it_static rank 0] PASS\n");
	return 0;
}
