/*
 * osh_rma.c - OpenSHMEM RMA: for every standard RMA type, put, put_nbi, p,
 * iput (and their ctx forms) to the right neighbour, get, get_nbi, g, iget
 * back from it, put_signal and put_signal_nbi; the sized (8..128) and mem
 * forms; the C11 generic put/get/p/g; a pshmem_ profiling wrapper. Every
 * value is checked.
 */
#include "osh_common.h"

#define K 16
static int me, npes, right, left;

/* value of element i sent by PE p (small: exact in every type) */
#define V(T, p, i) ((T)((p) * 31 + (i) + 1))
#define W(T, p, i) ((T)((p) * 7 + (i) + 2))

#define T_RMA(T, N, a)                                                                        \
	static void t_##N(void)                                                               \
	{                                                                                     \
		IT_WHERE("type " #N);                                                         \
		T *d = shmem_calloc(4 * K, sizeof(T));                                        \
		uint64_t *sig = shmem_calloc(2, sizeof(uint64_t));                            \
		T src[K], src2[K], g[K];                                                      \
		for (int i = 0; i < K; i++) {                                                 \
			src[i] = V(T, me, i);                                                 \
			src2[i] = W(T, me, i);                                                \
		}                                                                             \
		shmem_##N##_put(d, src, K, right);                                            \
		shmem_ctx_##N##_put_nbi(SHMEM_CTX_DEFAULT, d + K, src, K, right);             \
		for (int i = 0; i < K; i++)                                                   \
			shmem_##N##_p(d + 2 * K + i, src[i], right);                          \
		shmem_##N##_iput(d + 3 * K, src, 2, 1, K / 2, right);                         \
		shmem_quiet();                                                                \
		shmem_barrier_all();                                                          \
		for (int i = 0; i < K; i++) {                                                 \
			CHECK(d[i] == V(T, left, i), #N " put [%d]", i);                      \
			CHECK(d[K + i] == V(T, left, i), #N " ctx put_nbi [%d]", i);          \
			CHECK(d[2 * K + i] == V(T, left, i), #N " p [%d]", i);                \
			CHECK(d[3 * K + i] == (i % 2 ? (T)0 : V(T, left, i / 2)), #N " iput [%d]", i); \
		}                                                                             \
		/* right's d holds what this PE sent */                                       \
		memset(g, 0, sizeof(g));                                                      \
		shmem_##N##_get(g, d, K, right);                                              \
		for (int i = 0; i < K; i++)                                                   \
			CHECK(g[i] == V(T, me, i), #N " get [%d]", i);                        \
		memset(g, 0, sizeof(g));                                                      \
		shmem_ctx_##N##_get_nbi(SHMEM_CTX_DEFAULT, g, d + K, K, right);               \
		shmem_##N##_get_nbi(g + K / 2, d + K + K / 2, K / 2, right);                  \
		shmem_quiet();                                                                \
		for (int i = 0; i < K; i++)                                                   \
			CHECK(g[i] == V(T, me, i), #N " get_nbi [%d]", i);                    \
		for (int i = 0; i < K; i++)                                                   \
			CHECK(shmem_##N##_g(d + 2 * K + i, right) == V(T, me, i), #N " g [%d]", i); \
		CHECK(shmem_ctx_##N##_g(SHMEM_CTX_DEFAULT, d + 5, right) == V(T, me, 5), #N " ctx g"); \
		memset(g, 0, sizeof(g));                                                      \
		shmem_##N##_iget(g, d, 1, 3, K / 3, right);                                   \
		for (int i = 0; i < K; i++)                                                   \
			CHECK(g[i] == (i < K / 3 ? V(T, me, 3 * i) : (T)0), #N " iget [%d]", i); \
		shmem_barrier_all(); /* everyone read before the signals overwrite */         \
		shmem_##N##_put_signal(d, src2, K, &sig[0], 7, SHMEM_SIGNAL_SET, right);      \
		shmem_##N##_put_signal_nbi(d + K, src2, K, &sig[1], 1, SHMEM_SIGNAL_ADD, right); \
		CHECK(shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, 7) == 7, #N " signal SET"); \
		for (int i = 0; i < K; i++)                                                   \
			CHECK(d[i] == W(T, left, i), #N " put_signal data [%d]", i);          \
		CHECK(shmem_signal_wait_until(&sig[1], SHMEM_CMP_GE, 1) == 1, #N " signal ADD"); \
		for (int i = 0; i < K; i++)                                                   \
			CHECK(d[K + i] == W(T, left, i), #N " put_signal_nbi data [%d]", i);  \
		shmem_quiet();                                                                \
		shmem_barrier_all();                                                          \
		shmem_free(sig);                                                              \
		shmem_free(d);                                                                \
		NO_ERROR(#N);                                                                 \
	}
SHMEM__RMA_TYPES(T_RMA, )
#define RUN(T, N, a) t_##N();

static unsigned char byte_of(int pe, size_t i) { return (unsigned char)(pe * 53 + i * 7 + 1); }

/* sized forms: S bits per element, n elements */
#define T_SIZED(S, a)                                                                           \
	static void t_sized##S(void)                                                            \
	{                                                                                       \
		IT_WHERE("sized " #S);                                                          \
		enum { E = S / 8, N = 8 };                                                      \
		unsigned char *d = shmem_calloc(4 * N, E), src[N * E], g[2 * N * E];            \
		uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));                              \
		for (size_t i = 0; i < N * E; i++)                                              \
			src[i] = byte_of(me, i);                                                \
		shmem_put##S(d, src, N, right);                                                 \
		shmem_put##S##_nbi(d + N * E, src, N, right);                                   \
		shmem_ctx_iput##S(SHMEM_CTX_DEFAULT, d + 2 * N * E, src, 2, 1, N / 2, right);   \
		shmem_quiet();                                                                  \
		shmem_barrier_all();                                                            \
		for (size_t i = 0; i < N * E; i++) {                                            \
			CHECK(d[i] == byte_of(left, i), "put" #S " byte %zu", i);               \
			CHECK(d[N * E + i] == byte_of(left, i), "put" #S "_nbi byte %zu", i);   \
			size_t el = i / E, b = i % E;                                           \
			CHECK(d[2 * N * E + i] == (el % 2 ? 0 : byte_of(left, el / 2 * E + b)), \
			      "iput" #S " byte %zu", i);                                        \
		}                                                                               \
		memset(g, 0, sizeof(g));                                                        \
		shmem_get##S(g, d, N, right);                                                   \
		shmem_get##S##_nbi(g + N * E, d + N * E, N, right);                             \
		shmem_quiet();                                                                  \
		for (size_t i = 0; i < N * E; i++) {                                            \
			CHECK(g[i] == byte_of(me, i), "get" #S " byte %zu", i);                 \
			CHECK(g[N * E + i] == byte_of(me, i), "get" #S "_nbi byte %zu", i);     \
		}                                                                               \
		memset(g, 0, sizeof(g));                                                        \
		shmem_iget##S(g, d, 1, 2, N / 2, right);                                        \
		for (size_t i = 0; i < N / 2 * E; i++)                                          \
			CHECK(g[i] == byte_of(me, (i / E) * 2 * E + i % E), "iget" #S " byte %zu", i); \
		shmem_barrier_all();                                                            \
		shmem_put##S##_signal(d + 3 * N * E, src, N, sig, 1, SHMEM_SIGNAL_ADD, right);  \
		shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 1);                                  \
		for (size_t i = 0; i < N * E; i++)                                              \
			CHECK(d[3 * N * E + i] == byte_of(left, i), "put" #S "_signal byte %zu", i); \
		shmem_barrier_all();                                                            \
		shmem_free(sig);                                                                \
		shmem_free(d);                                                                  \
		NO_ERROR("sized " #S);                                                          \
	}
SHMEM__SIZES(T_SIZED, )

static void t_mem(void)
{
	IT_WHERE("mem");
	enum { N = 100000 }; /* beyond one staging chunk */
	unsigned char *d = shmem_malloc(2 * N), *src = malloc(N), *g = malloc(N);
	uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
	for (size_t i = 0; i < N; i++)
		src[i] = byte_of(me, i);
	shmem_putmem(d, src, N, right);
	shmem_putmem_signal_nbi(d + N, src, N, sig, 5, SHMEM_SIGNAL_SET, right);
	CHECK(shmem_signal_wait_until(sig, SHMEM_CMP_NE, 0) == 5, "putmem_signal_nbi");
	shmem_quiet();
	shmem_barrier_all();
	size_t bad = 0;
	for (size_t i = 0; i < 2 * N; i++)
		bad += d[i] != byte_of(left, i % N);
	CHECK(bad == 0, "putmem: %zu bytes wrong", bad);
	shmem_getmem(g, d, N, right);
	bad = 0;
	for (size_t i = 0; i < N; i++)
		bad += g[i] != byte_of(me, i);
	CHECK(bad == 0, "getmem: %zu bytes wrong", bad);
	memset(g, 0, N);
	shmem_ctx_getmem_nbi(SHMEM_CTX_DEFAULT, g, d + N, N, right);
	shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
	bad = 0;
	for (size_t i = 0; i < N; i++)
		bad += g[i] != byte_of(me, i);
	CHECK(bad == 0, "getmem_nbi: %zu bytes wrong", bad);
	shmem_barrier_all();
	free(src);
	free(g);
	shmem_free(sig);
	shmem_free(d);
	NO_ERROR("mem");
}

/* C11 generic selection: the typed routine for the pointed-to type, with
 * and without a context */
static void t_generic(void)
{
	IT_WHERE("generic");
	double *dd = shmem_calloc(4, sizeof(double));
	long *dl = shmem_calloc(4, sizeof(long));
	double sd[2] = {1.5, -2.25};
	long sl[2] = {1L << 40, -7};
	shmem_put(dd, sd, 2, right);
	shmem_put(SHMEM_CTX_DEFAULT, dl, sl, 2, right);
	shmem_p(dd + 2, 3.75, right);
	shmem_p(SHMEM_CTX_DEFAULT, dl + 2, 99L, right);
	shmem_barrier_all();
	CHECK(dd[0] == 1.5 && dd[1] == -2.25 && dd[2] == 3.75, "generic put/p double");
	CHECK(dl[0] == 1L << 40 && dl[1] == -7 && dl[2] == 99, "generic put/p long");
	CHECK(shmem_g(dd + 1, right) == -2.25, "generic g");
	CHECK(shmem_g(SHMEM_CTX_DEFAULT, dl + 2, right) == 99, "generic ctx g");
	long gl[2] = {0, 0};
	shmem_get(gl, dl, 2, right);
	CHECK(gl[0] == 1L << 40 && gl[1] == -7, "generic get");
	shmem_barrier_all();
	shmem_free(dd);
	shmem_free(dl);
	NO_ERROR("generic");
}

/* The profiling interface: this program wraps shmem_longlong_p (the
 * library's pshmem_longlong_p does the work) and counts the calls. */
void pshmem_longlong_p(long long *dest, long long value, int pe);
int pshmem_my_pe(void);
static unsigned long wrapped_p;
void shmem_longlong_p(long long *dest, long long value, int pe)
{
	wrapped_p++;
	pshmem_longlong_p(dest, value, pe);
}

int main(void)
{
	me = osh_start("osh_rma");
	npes = shmem_n_pes();
	right = (me + 1) % npes;
	left = (me + npes - 1) % npes;
	SHMEM__RMA_TYPES(RUN, )
#define RUNS(S, a) t_sized##S();
	SHMEM__SIZES(RUNS, )
	t_mem();
	t_generic();
	CHECK(wrapped_p == K, "the wrapper of shmem_longlong_p ran %lu times", wrapped_p);
	CHECK(pshmem_my_pe() == me, "pshmem_my_pe");
	return osh_end();
}
