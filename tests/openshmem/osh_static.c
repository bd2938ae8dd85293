/*
 * osh_static.c - global and static variables are symmetric (OpenSHMEM 1.5,
 * "Memory Management": data objects of static storage duration). Built as
 * a position-independent executable; with address-space randomisation on,
 * each PE has its statics at its own address, and every operation still
 * reaches the peer's copy: put/get/p/g, iput, an atomic counter, a
 * put_signal, wait_until on a static, shmem_ptr and shmem_addr_accessible,
 * and a collective on static buffers. Initial values of .data and the zeroes
 * of .bss survive shmem_init.
 */
#include <stdint.h>

#include "osh_common.h"

static long s_init = 0x1234567890L;  /* .data */
int g_arr[64] = {[0] = 7, [63] = 9}; /* .data, global */
static long s_bss[1024];             /* .bss */
static long s_counter;               /* PE 0's is the counter */
static int s_flag;                   /* waited on */
static uint64_t s_sig;
static long s_strided[16];
static struct {
	double d;
	char c[24];
} s_rec;
static long s_src[8], s_dst[8 * 4];

static int aslr_on(void)
{
	FILE *f = fopen("/proc/sys/kernel/randomize_va_space", "r");
	int v = 0;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v != 0;
}

int main(void)
{
	s_rec.d = 2.5; /* written before init: kept */
	int me = osh_start("osh_static");
	int n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;

	IT_WHERE("initial values");
	CHECK(s_init == 0x1234567890L && g_arr[0] == 7 && g_arr[63] == 9 && s_rec.d == 2.5,
	      "initialised data changed by shmem_init");
	for (int i = 0; i < 1024; i++)
		CHECK(s_bss[i] == 0, "bss[%d] = %ld after shmem_init", i, s_bss[i]);
	CHECK(shmem_addr_accessible(&s_init, right) == 1, "a static is not accessible");
	long stack_var = 0;
	CHECK(shmem_addr_accessible(&stack_var, right) == 0, "a stack variable is accessible");

	IT_WHERE("addresses");
	/* each PE's address of s_init, at PE 0 */
	static uintptr_t addrs[64];
	uintptr_t mine = (uintptr_t)&s_init;
	if (n <= 64)
		shmem_putmem(&addrs[me], &mine, sizeof mine, 0);
	shmem_barrier_all();
	if (me == 0 && aslr_on() && n > 1 && n <= 64) {
		int differ = 0;
		for (int p = 1; p < n; p++)
			differ |= addrs[p] != addrs[0];
		CHECK(differ, "ASLR is on but every PE has its statics at one address");
	}

	IT_WHERE("put/get/p/g");
	long blk[1024];
	for (int i = 0; i < 1024; i++)
		blk[i] = (long)me * 100000 + i;
	shmem_long_put(s_bss, blk, 1024, right);
	shmem_int_p(&g_arr[1], 1000 + me, right);
	shmem_putmem(s_rec.c, "static record", 14, right);
	shmem_barrier_all();
	for (int i = 0; i < 1024; i++)
		CHECK(s_bss[i] == (long)left * 100000 + i, "bss[%d] = %ld from PE %d", i, s_bss[i],
		      left);
	CHECK(g_arr[1] == 1000 + left, "g_arr[1] = %d", g_arr[1]);
	CHECK(strcmp(s_rec.c, "static record") == 0, "record '%s'", s_rec.c);
	long got = shmem_long_g(&s_init, right);
	CHECK(got == 0x1234567890L, "g of the right PE's static: %ld", got);
	int ga[2];
	shmem_int_get(ga, &g_arr[62], 2, left);
	CHECK(ga[0] == 0 && ga[1] == 9, "get of g_arr[62..63]: %d %d", ga[0], ga[1]);

	IT_WHERE("iput");
	long sv[4] = {me + 1, me + 2, me + 3, me + 4};
	shmem_long_iput(s_strided, sv, 4, 1, 4, right);
	shmem_barrier_all();
	for (int i = 0; i < 4; i++)
		CHECK(s_strided[4 * i] == left + 1 + i, "iput element %d = %ld", i, s_strided[4 * i]);

	IT_WHERE("atomics");
	long fetched[64];
	int rounds = 50;
	for (int r = 0; r < rounds; r++)
		fetched[r % 64] = shmem_long_atomic_fetch_add(&s_counter, 1, 0);
	(void)fetched;
	shmem_barrier_all();
	if (me == 0)
		CHECK(s_counter == (long)rounds * n, "counter %ld, want %ld", s_counter,
		      (long)rounds * n);

	IT_WHERE("wait_until and signal");
	shmem_int_atomic_set(&s_flag, me + 1, right);
	shmem_int_wait_until(&s_flag, SHMEM_CMP_EQ, left + 1);
	for (int i = 0; i < 1024; i++)
		blk[i] = -((long)me * 100000 + i);
	shmem_long_put_signal(&s_bss[0], blk, 1024, &s_sig, 1, SHMEM_SIGNAL_ADD, right);
	shmem_signal_wait_until(&s_sig, SHMEM_CMP_EQ, 1);
	for (int i = 0; i < 1024; i++)
		CHECK(s_bss[i] == -((long)left * 100000 + i), "signalled bss[%d] = %ld", i, s_bss[i]);

	IT_WHERE("shmem_ptr");
	for (int p = 0; p < n; p++) {
		long *rp = shmem_ptr(&s_init, p);
		if (p == me)
			CHECK(rp == &s_init, "shmem_ptr to self");
		else if (rp)
			CHECK(*rp == 0x1234567890L, "through shmem_ptr: %ld", *rp);
	}

	IT_WHERE("collective");
	for (int i = 0; i < 8; i++)
		s_src[i] = me * 8 + i;
	shmem_barrier_all();
	if (n <= 4) {
		shmem_long_fcollect(SHMEM_TEAM_WORLD, s_dst, s_src, 8);
		for (int i = 0; i < 8 * n; i++)
			CHECK(s_dst[i] == i, "fcollect[%d] = %ld", i, s_dst[i]);
	}
	shmem_barrier_all();
	return osh_end();
}
