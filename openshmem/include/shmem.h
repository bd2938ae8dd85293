/*
 * shmem.h - OpenSHMEM 1.5 on hoist (libhoist-shmem).
 *
 * The typed families are generated from the X-macro tables below (one per
 * type class of the specification: RMA, AMO standard/extended/bitwise,
 * point-to-point, reductions); each table takes a callback X(TYPE,
 * TYPENAME, arg). The *_GEN tables hold the types the C11 generic macros
 * select on (the specification leaves the <stdint.h> typedefs, size_t and
 * ptrdiff_t out of them: they alias the base types); the *_SIZED tables the
 * rest. Which parts of the specification are implemented: README,
 * "OpenSHMEM"; shmemx.h holds the hoist extensions.
 */
#ifndef HOIST_SHMEM_H
#define HOIST_SHMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- library constants ---------------------------------------------------- */
#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define SHMEM_MAX_NAME_LEN 256
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define SHMEM_VENDOR_STRING "hoist OpenSHMEM (libhoist-shmem)"
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING

#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

#define SHMEM_CMP_EQ 0
#define SHMEM_CMP_NE 1
#define SHMEM_CMP_GT 2
#define SHMEM_CMP_LE 3
#define SHMEM_CMP_LT 4
#define SHMEM_CMP_GE 5
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_LE SHMEM_CMP_LE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_GE SHMEM_CMP_GE

#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

#define SHMEM_CTX_PRIVATE (1L << 0)
#define SHMEM_CTX_SERIALIZED (1L << 1)
#define SHMEM_CTX_NOSTORE (1L << 2)

#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)

#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)

/* active-set collectives (deprecated): sizes of pSync/pWrk */
#define SHMEM_SYNC_VALUE (-1L)
#define SHMEM_BARRIER_SYNC_SIZE 1
#define SHMEM_BCAST_SYNC_SIZE 2
#define SHMEM_COLLECT_SYNC_SIZE 3
#define SHMEM_REDUCE_SYNC_SIZE 3
#define SHMEM_ALLTOALL_SYNC_SIZE 1
#define SHMEM_ALLTOALLS_SYNC_SIZE 1
#define SHMEM_SYNC_SIZE 3
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_ALLTOALL_SYNC_SIZE SHMEM_ALLTOALL_SYNC_SIZE
#define _SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_ALLTOALLS_SYNC_SIZE
#define _SHMEM_SYNC_SIZE SHMEM_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

/* ---- handles ------------------------------------------------------------- */
typedef struct shmem__ctx *shmem_ctx_t;
typedef struct shmem__team *shmem_team_t;
typedef struct {
	int num_contexts;
} shmem_team_config_t;

extern shmem_ctx_t SHMEM_CTX_DEFAULT;
extern shmem_team_t SHMEM_TEAM_WORLD;
extern shmem_team_t SHMEM_TEAM_SHARED;
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)

/* ---- type tables ---------------------------------------------------------- */
#define SHMEM__RMA_GEN(X, a)                                                                \
	X(float, float, a) X(double, double, a) X(long double, longdouble, a) X(char, char, a) \
	X(signed char, schar, a) X(short, short, a) X(int, int, a) X(long, long, a)            \
	X(long long, longlong, a) X(unsigned char, uchar, a) X(unsigned short, ushort, a)      \
	X(unsigned int, uint, a) X(unsigned long, ulong, a) X(unsigned long long, ulonglong, a)
#define SHMEM__RMA_SIZED(X, a)                                                              \
	X(int8_t, int8, a) X(int16_t, int16, a) X(int32_t, int32, a) X(int64_t, int64, a)      \
	X(uint8_t, uint8, a) X(uint16_t, uint16, a) X(uint32_t, uint32, a)                     \
	X(uint64_t, uint64, a) X(size_t, size, a) X(ptrdiff_t, ptrdiff, a)
#define SHMEM__RMA_TYPES(X, a) SHMEM__RMA_GEN(X, a) SHMEM__RMA_SIZED(X, a)

#define SHMEM__AMO_GEN(X, a)                                                         \
	X(int, int, a) X(long, long, a) X(long long, longlong, a) X(unsigned int, uint, a) \
	X(unsigned long, ulong, a) X(unsigned long long, ulonglong, a)
#define SHMEM__AMO_SIZED(X, a)                                                       \
	X(int32_t, int32, a) X(int64_t, int64, a) X(uint32_t, uint32, a)              \
	X(uint64_t, uint64, a) X(size_t, size, a) X(ptrdiff_t, ptrdiff, a)
#define SHMEM__AMO_STD(X, a) SHMEM__AMO_GEN(X, a) SHMEM__AMO_SIZED(X, a)
/* the extended AMO types are the standard ones plus these (fetch, set, swap) */
#define SHMEM__AMO_EXT_ONLY(X, a) X(float, float, a) X(double, double, a)
#define SHMEM__AMO_EXT(X, a) SHMEM__AMO_STD(X, a) SHMEM__AMO_EXT_ONLY(X, a)
#define SHMEM__AMO_EXT_GEN(X, a) SHMEM__AMO_GEN(X, a) SHMEM__AMO_EXT_ONLY(X, a)
#define SHMEM__AMO_BIT_GEN(X, a) \
	X(unsigned int, uint, a) X(unsigned long, ulong, a) X(unsigned long long, ulonglong, a)
#define SHMEM__AMO_BIT_SIZED(X, a) \
	X(int32_t, int32, a) X(int64_t, int64, a) X(uint32_t, uint32, a) X(uint64_t, uint64, a)
#define SHMEM__AMO_BIT(X, a) SHMEM__AMO_BIT_GEN(X, a) SHMEM__AMO_BIT_SIZED(X, a)

#define SHMEM__P2P_GEN(X, a)                                                            \
	X(short, short, a) X(int, int, a) X(long, long, a) X(long long, longlong, a)         \
	X(unsigned short, ushort, a) X(unsigned int, uint, a) X(unsigned long, ulong, a)     \
	X(unsigned long long, ulonglong, a)
#define SHMEM__P2P_SIZED(X, a) SHMEM__AMO_SIZED(X, a)
#define SHMEM__P2P_TYPES(X, a) SHMEM__P2P_GEN(X, a) SHMEM__P2P_SIZED(X, a)

/* reductions: and/or/xor. 1.5's table has the unsigned and fixed-width
 * types; short, int, long and long long (1.4's *_to_all types) are kept for
 * the team form too, as Sandia OpenSHMEM does, so programs written against
 * it (shmem_int_and_reduce, shmem_or_reduce on an int array) build */
#define SHMEM__BITRED_GEN(X, a)                                                          \
	X(unsigned char, uchar, a) X(unsigned short, ushort, a) X(unsigned int, uint, a)     \
	X(unsigned long, ulong, a) X(unsigned long long, ulonglong, a) X(short, short, a)    \
	X(int, int, a) X(long, long, a) X(long long, longlong, a)
#define SHMEM__BITRED_SIZED(X, a)                                                        \
	X(int8_t, int8, a) X(int16_t, int16, a) X(int32_t, int32, a) X(int64_t, int64, a)   \
	X(uint8_t, uint8, a) X(uint16_t, uint16, a) X(uint32_t, uint32, a)                  \
	X(uint64_t, uint64, a) X(size_t, size, a)
#define SHMEM__BITRED(X, a) SHMEM__BITRED_GEN(X, a) SHMEM__BITRED_SIZED(X, a)
/* max/min */
#define SHMEM__MMRED_GEN(X, a)                                                           \
	X(char, char, a) X(signed char, schar, a) X(short, short, a) X(int, int, a)          \
	X(long, long, a) X(long long, longlong, a) X(unsigned char, uchar, a)                \
	X(unsigned short, ushort, a) X(unsigned int, uint, a) X(unsigned long, ulong, a)     \
	X(unsigned long long, ulonglong, a) X(float, float, a) X(double, double, a)          \
	X(long double, longdouble, a)
#define SHMEM__MMRED_SIZED(X, a) X(ptrdiff_t, ptrdiff, a) SHMEM__BITRED_SIZED(X, a)
#define SHMEM__MMRED(X, a) SHMEM__MMRED_GEN(X, a) SHMEM__MMRED_SIZED(X, a)
/* sum/prod: max/min's types and the complex ones */
#ifndef __cplusplus
#define SHMEM__CPLXRED(X, a) X(double _Complex, complexd, a) X(float _Complex, complexf, a)
#else
#define SHMEM__CPLXRED(X, a)
#endif
#define SHMEM__ARRED_GEN(X, a) SHMEM__MMRED_GEN(X, a) SHMEM__CPLXRED(X, a)
#define SHMEM__ARRED(X, a) SHMEM__MMRED(X, a) SHMEM__CPLXRED(X, a)

#define SHMEM__SIZES(X, a) X(8, a) X(16, a) X(32, a) X(64, a) X(128, a)

/* ---- library setup, exit, query (9.1) -------------------------------------- */
void shmem_init(void);
int shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
void shmem_finalize(void);
void shmem_global_exit(int status);
int shmem_my_pe(void);
int shmem_n_pes(void);
int shmem_pe_accessible(int pe);
int shmem_addr_accessible(const void *addr, int pe);
void *shmem_ptr(const void *dest, int pe);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name);
/* profiling control (10): level 0 off, 1 default, 2 detailed, others the
 * tool's; libhoist-shmem has no profiler of its own, so it is a call for a
 * tool to intercept (as shmem_pcontrol, calling pshmem_pcontrol) */
void shmem_pcontrol(const int level, ...);

/* ---- teams (9.4) ------------------------------------------------------------ */
int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
			     const shmem_team_config_t *config, long config_mask,
			     shmem_team_t *new_team);
int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
			const shmem_team_config_t *xaxis_config, long xaxis_mask,
			shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
			long yaxis_mask, shmem_team_t *yaxis_team);
void shmem_team_destroy(shmem_team_t team);

/* ---- memory management (9.3) -------------------------------------------------- */
void *shmem_malloc(size_t size);
void *shmem_malloc_with_hints(size_t size, long hints);
void *shmem_calloc(size_t count, size_t size);
void *shmem_align(size_t alignment, size_t size);
void *shmem_realloc(void *ptr, size_t size);
void shmem_free(void *ptr);

/* ---- contexts (9.5) ------------------------------------------------------------ */
int shmem_ctx_create(long options, shmem_ctx_t *ctx);
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
void shmem_ctx_destroy(shmem_ctx_t ctx);
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);

/* ---- RMA (9.6) ----------------------------------------------------------------- */
#define SHMEM__DECL_RMA(T, N, a)                                                                  \
	void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe);                      \
	void shmem_ctx_##N##_put(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe); \
	void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe);                      \
	void shmem_ctx_##N##_get(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe); \
	void shmem_##N##_p(T *dest, T value, int pe);                                               \
	void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe);                          \
	T shmem_##N##_g(const T *source, int pe);                                                   \
	T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe);                              \
	void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,               \
			      size_t nelems, int pe);                                               \
	void shmem_ctx_##N##_iput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,         \
				  ptrdiff_t sst, size_t nelems, int pe);                            \
	void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,               \
			      size_t nelems, int pe);                                               \
	void shmem_ctx_##N##_iget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,         \
				  ptrdiff_t sst, size_t nelems, int pe);                            \
	void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe);                  \
	void shmem_ctx_##N##_put_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,      \
				     int pe);                                                       \
	void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe);                  \
	void shmem_ctx_##N##_get_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,      \
				     int pe);                                                       \
	void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,    \
				    uint64_t signal, int sig_op, int pe);                           \
	void shmem_ctx_##N##_put_signal(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,   \
					uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);   \
	void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems,                    \
					uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);   \
	void shmem_ctx_##N##_put_signal_nbi(shmem_ctx_t ctx, T *dest, const T *source,              \
					    size_t nelems, uint64_t *sig_addr, uint64_t signal,     \
					    int sig_op, int pe);
SHMEM__RMA_TYPES(SHMEM__DECL_RMA, )

#define SHMEM__DECL_SIZED(S, a)                                                                    \
	void shmem_put##S(void *dest, const void *source, size_t nelems, int pe);                    \
	void shmem_ctx_put##S(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe); \
	void shmem_get##S(void *dest, const void *source, size_t nelems, int pe);                    \
	void shmem_ctx_get##S(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe); \
	void shmem_iput##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,             \
			   size_t nelems, int pe);                                                   \
	void shmem_ctx_iput##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst,       \
			       ptrdiff_t sst, size_t nelems, int pe);                                \
	void shmem_iget##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,             \
			   size_t nelems, int pe);                                                   \
	void shmem_ctx_iget##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst,       \
			       ptrdiff_t sst, size_t nelems, int pe);                                \
	void shmem_put##S##_nbi(void *dest, const void *source, size_t nelems, int pe);              \
	void shmem_ctx_put##S##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,  \
				    int pe);                                                         \
	void shmem_get##S##_nbi(void *dest, const void *source, size_t nelems, int pe);              \
	void shmem_ctx_get##S##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,  \
				    int pe);                                                         \
	void shmem_put##S##_signal(void *dest, const void *source, size_t nelems,                    \
				   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);         \
	void shmem_ctx_put##S##_signal(shmem_ctx_t ctx, void *dest, const void *source,              \
				       size_t nelems, uint64_t *sig_addr, uint64_t signal,           \
				       int sig_op, int pe);                                          \
	void shmem_put##S##_signal_nbi(void *dest, const void *source, size_t nelems,                \
				       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);     \
	void shmem_ctx_put##S##_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source,          \
					   size_t nelems, uint64_t *sig_addr, uint64_t signal,       \
					   int sig_op, int pe);
SHMEM__SIZES(SHMEM__DECL_SIZED, )
SHMEM__DECL_SIZED(mem, )

/* ---- AMOs (9.7) ------------------------------------------------------------------- */
#define SHMEM__DECL_AMO_EXT(T, N, a)                                                            \
	T shmem_##N##_atomic_fetch(const T *source, int pe);                                      \
	T shmem_ctx_##N##_atomic_fetch(shmem_ctx_t ctx, const T *source, int pe);                 \
	void shmem_##N##_atomic_set(T *dest, T value, int pe);                                    \
	void shmem_ctx_##N##_atomic_set(shmem_ctx_t ctx, T *dest, T value, int pe);               \
	T shmem_##N##_atomic_swap(T *dest, T value, int pe);                                      \
	T shmem_ctx_##N##_atomic_swap(shmem_ctx_t ctx, T *dest, T value, int pe);                 \
	void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe);                     \
	void shmem_ctx_##N##_atomic_fetch_nbi(shmem_ctx_t ctx, T *fetch, const T *source, int pe); \
	void shmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe);                     \
	void shmem_ctx_##N##_atomic_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);
SHMEM__AMO_EXT(SHMEM__DECL_AMO_EXT, )

#define SHMEM__DECL_AMO_STD(T, N, a)                                                              \
	T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe);                        \
	T shmem_ctx_##N##_atomic_compare_swap(shmem_ctx_t ctx, T *dest, T cond, T value, int pe);   \
	T shmem_##N##_atomic_fetch_inc(T *dest, int pe);                                            \
	T shmem_ctx_##N##_atomic_fetch_inc(shmem_ctx_t ctx, T *dest, int pe);                       \
	void shmem_##N##_atomic_inc(T *dest, int pe);                                               \
	void shmem_ctx_##N##_atomic_inc(shmem_ctx_t ctx, T *dest, int pe);                          \
	T shmem_##N##_atomic_fetch_add(T *dest, T value, int pe);                                   \
	T shmem_ctx_##N##_atomic_fetch_add(shmem_ctx_t ctx, T *dest, T value, int pe);              \
	void shmem_##N##_atomic_add(T *dest, T value, int pe);                                      \
	void shmem_ctx_##N##_atomic_add(shmem_ctx_t ctx, T *dest, T value, int pe);                 \
	void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe);       \
	void shmem_ctx_##N##_atomic_compare_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T cond,    \
						     T value, int pe);                              \
	void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe);                           \
	void shmem_ctx_##N##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, T *fetch, T *dest, int pe);      \
	void shmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe);                  \
	void shmem_ctx_##N##_atomic_fetch_add_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value,      \
						  int pe);
SHMEM__AMO_STD(SHMEM__DECL_AMO_STD, )

#define SHMEM__DECL_AMO_BIT1(T, N, op)                                                      \
	T shmem_##N##_atomic_fetch_##op(T *dest, T value, int pe);                            \
	T shmem_ctx_##N##_atomic_fetch_##op(shmem_ctx_t ctx, T *dest, T value, int pe);       \
	void shmem_##N##_atomic_##op(T *dest, T value, int pe);                               \
	void shmem_ctx_##N##_atomic_##op(shmem_ctx_t ctx, T *dest, T value, int pe);          \
	void shmem_##N##_atomic_fetch_##op##_nbi(T *fetch, T *dest, T value, int pe);         \
	void shmem_ctx_##N##_atomic_fetch_##op##_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, \
						     int pe);
SHMEM__AMO_BIT(SHMEM__DECL_AMO_BIT1, and)
SHMEM__AMO_BIT(SHMEM__DECL_AMO_BIT1, or)
SHMEM__AMO_BIT(SHMEM__DECL_AMO_BIT1, xor)

/* ---- signals (9.8) ------------------------------------------------------------------ */
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* ---- collectives (9.9) ----------------------------------------------------------------- */
void shmem_barrier_all(void);
void shmem_sync_all(void);
int shmem_team_sync(shmem_team_t team);
int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
		       int PE_root);
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
		       ptrdiff_t sst, size_t nelems);
#define SHMEM__DECL_COLL(T, N, a)                                                             \
	int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems,   \
				  int PE_root);                                                 \
	int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems);    \
	int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems);   \
	int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems);   \
	int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst,   \
				  ptrdiff_t sst, size_t nelems);
SHMEM__RMA_TYPES(SHMEM__DECL_COLL, )
#define SHMEM__DECL_RED(T, N, op) \
	int shmem_##N##_##op##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);
SHMEM__BITRED(SHMEM__DECL_RED, and)
SHMEM__BITRED(SHMEM__DECL_RED, or)
SHMEM__BITRED(SHMEM__DECL_RED, xor)
SHMEM__MMRED(SHMEM__DECL_RED, max)
SHMEM__MMRED(SHMEM__DECL_RED, min)
SHMEM__ARRED(SHMEM__DECL_RED, sum)
SHMEM__ARRED(SHMEM__DECL_RED, prod)

/* ---- point-to-point synchronisation (9.10) ---------------------------------------------- */
#define SHMEM__DECL_P2P(T, N, a)                                                                \
	void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value);                               \
	void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,      \
					T cmp_value);                                             \
	size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp,    \
					  T cmp_value);                                           \
	size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,              \
					   const int *status, int cmp, T cmp_value);              \
	void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status,        \
					       int cmp, T *cmp_values);                           \
	size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status,      \
						 int cmp, T *cmp_values);                         \
	size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,       \
						  const int *status, int cmp, T *cmp_values);     \
	int shmem_##N##_test(T *ivar, int cmp, T cmp_value);                                      \
	int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp,             \
				 T cmp_value);                                                    \
	size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp,          \
				    T cmp_value);                                                 \
	size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status, \
				     int cmp, T cmp_value);                                       \
	int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,      \
					T *cmp_values);                                           \
	size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,   \
					   T *cmp_values);                                        \
	size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,             \
					    const int *status, int cmp, T *cmp_values);
SHMEM__P2P_TYPES(SHMEM__DECL_P2P, )

/* ---- memory ordering (9.11) and locks (9.12) ---------------------------------------------- */
void shmem_fence(void);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_quiet(void);
void shmem_ctx_quiet(shmem_ctx_t ctx);
void shmem_set_lock(long *lock);
void shmem_clear_lock(long *lock);
int shmem_test_lock(long *lock);

/* ---- deprecated names (still used by existing programs) ------------------------------------ */
void start_pes(int npes);
int _my_pe(void);
int _num_pes(void);
void *shmalloc(size_t size);
void shfree(void *ptr);
void *shrealloc(void *ptr, size_t size);
void *shmemalign(size_t alignment, size_t size);
void shmem_clear_cache_inv(void);
void shmem_set_cache_inv(void);
void shmem_clear_cache_line_inv(void *dest);
void shmem_set_cache_line_inv(void *dest);
void shmem_udcflush(void);
void shmem_udcflush_line(void *dest);
/* active-set collectives: any set PE_start + i * 2^logPE_stride (i <
 * PE_size) that holds the caller (else -EINVAL for shmemx_last_error());
 * pSync and pWrk are not used, so two sets sharing a PE must not be in
 * collectives at the same time */
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);
/* OpenSHMEM 1.5's shmem_sync(team) and the deprecated active-set
 * shmem_sync(PE_start, logPE_stride, PE_size, pSync) share one name (the
 * specification's own examples call the team form): the argument count picks
 * shmem_team_sync or the active-set function; 2 or 3 arguments do not compile */
#define SHMEM__SYNC_PICK(_1, _2, _3, _4, name, ...) name
#define shmem_sync(...)                                                                   \
	SHMEM__SYNC_PICK(__VA_ARGS__, shmem_sync, shmem__sync_takes_1_or_4_arguments,    \
			 shmem__sync_takes_1_or_4_arguments, shmem_team_sync, )(__VA_ARGS__)
#define SHMEM__DECL_ASET(S, a)                                                                   \
	void shmem_broadcast##S(void *dest, const void *source, size_t nelems, int PE_root,      \
				int PE_start, int logPE_stride, int PE_size, long *pSync);      \
	void shmem_collect##S(void *dest, const void *source, size_t nelems, int PE_start,      \
			      int logPE_stride, int PE_size, long *pSync);                      \
	void shmem_fcollect##S(void *dest, const void *source, size_t nelems, int PE_start,     \
			       int logPE_stride, int PE_size, long *pSync);                     \
	void shmem_alltoall##S(void *dest, const void *source, size_t nelems, int PE_start,     \
			       int logPE_stride, int PE_size, long *pSync);                     \
	void shmem_alltoalls##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,   \
				size_t nelems, int PE_start, int logPE_stride, int PE_size,     \
				long *pSync);
SHMEM__DECL_ASET(32, )
SHMEM__DECL_ASET(64, )
#define SHMEM__TOALL_BIT(X, a) \
	X(short, short, a) X(int, int, a) X(long, long, a) X(long long, longlong, a)
#define SHMEM__TOALL_MM(X, a) \
	SHMEM__TOALL_BIT(X, a) X(float, float, a) X(double, double, a) X(long double, longdouble, a)
#define SHMEM__TOALL_AR(X, a) SHMEM__TOALL_MM(X, a) SHMEM__CPLXRED(X, a)
#define SHMEM__DECL_TOALL(T, N, op)                                                               \
	void shmem_##N##_##op##_to_all(T *dest, const T *source, int nreduce, int PE_start,      \
				       int logPE_stride, int PE_size, T *pWrk, long *pSync);
SHMEM__TOALL_BIT(SHMEM__DECL_TOALL, and)
SHMEM__TOALL_BIT(SHMEM__DECL_TOALL, or)
SHMEM__TOALL_BIT(SHMEM__DECL_TOALL, xor)
SHMEM__TOALL_MM(SHMEM__DECL_TOALL, max)
SHMEM__TOALL_MM(SHMEM__DECL_TOALL, min)
SHMEM__TOALL_AR(SHMEM__DECL_TOALL, sum)
SHMEM__TOALL_AR(SHMEM__DECL_TOALL, prod)
/* pre-1.4 atomic names and shmem_TYPENAME_wait */
#define SHMEM__DEPR_AMO(T, N, a)                                        \
	T shmem_##N##_cswap(T *dest, T cond, T value, int pe);            \
	T shmem_##N##_finc(T *dest, int pe);                              \
	void shmem_##N##_inc(T *dest, int pe);                            \
	T shmem_##N##_fadd(T *dest, T value, int pe);                     \
	void shmem_##N##_add(T *dest, T value, int pe);
#define SHMEM__DEPR_AMO_EXT(T, N, a)                                    \
	T shmem_##N##_fetch(const T *source, int pe);                     \
	void shmem_##N##_set(T *dest, T value, int pe);                   \
	T shmem_##N##_swap(T *dest, T value, int pe);
#define SHMEM__DEPR_TYPES(X, a) X(int, int, a) X(long, long, a) X(long long, longlong, a)
SHMEM__DEPR_TYPES(SHMEM__DEPR_AMO, )
SHMEM__DEPR_TYPES(SHMEM__DEPR_AMO_EXT, )
SHMEM__AMO_EXT_ONLY(SHMEM__DEPR_AMO_EXT, )
#define SHMEM__DEPR_WAIT(T, N, a)                                       \
	void shmem_##N##_wait(T *ivar, T cmp_value);
SHMEM__DEPR_TYPES(SHMEM__DEPR_WAIT, )
SHMEM__DEPR_WAIT(short, short, )
void shmem_wait(long *ivar, long cmp_value);
void shmem_wait_until(long *ivar, int cmp, long cmp_value);

/* ---- C11 generic selection (10) ------------------------------------------------------------ */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)
struct shmem__nomatch;
#define SHMEM__CAT_(a, b) a##b
#define SHMEM__CAT(a, b) SHMEM__CAT_(a, b)
#define SHMEM__NARG(...) SHMEM__NARG_(__VA_ARGS__, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define SHMEM__NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, N, ...) N
/* T: shmem_N_op, and the ctx form */
#define SHMEM__GA(T, N, op) T: shmem_##N##_##op,
#define SHMEM__GA_CTX(T, N, op) T: shmem_ctx_##N##_##op,
#define SHMEM__SEL(table, op, ctrl) _Generic((ctrl), table(SHMEM__GA, op) struct shmem__nomatch *: 0)
#define SHMEM__SELC(table, op, ctrl) \
	_Generic((ctrl), table(SHMEM__GA_CTX, op) struct shmem__nomatch *: 0)
/* name(args) or name(ctx, args): n is the argument count without ctx; the
 * type comes from the pointed-to type of argument k (1-based, without ctx) */
#define SHMEM__DISPATCH(table, op, n, ...) \
	SHMEM__CAT(SHMEM__DISPATCH_, SHMEM__CAT(SHMEM__NARG(__VA_ARGS__), _##n))(table, op, __VA_ARGS__)
#define SHMEM__DISPATCH_2_2(tb, op, a1, ...) SHMEM__SEL(tb, op, *(a1))(a1, __VA_ARGS__)
#define SHMEM__DISPATCH_3_3(tb, op, a1, ...) SHMEM__SEL(tb, op, *(a1))(a1, __VA_ARGS__)
#define SHMEM__DISPATCH_4_4(tb, op, a1, ...) SHMEM__SEL(tb, op, *(a1))(a1, __VA_ARGS__)
#define SHMEM__DISPATCH_5_5(tb, op, a1, ...) SHMEM__SEL(tb, op, *(a1))(a1, __VA_ARGS__)
#define SHMEM__DISPATCH_6_6(tb, op, a1, ...) SHMEM__SEL(tb, op, *(a1))(a1, __VA_ARGS__)
#define SHMEM__DISPATCH_7_7(tb, op, a1, ...) SHMEM__SEL(tb, op, *(a1))(a1, __VA_ARGS__)
#define SHMEM__DISPATCH_3_2(tb, op, c, a1, ...) SHMEM__SELC(tb, op, *(a1))(c, a1, __VA_ARGS__)
#define SHMEM__DISPATCH_4_3(tb, op, c, a1, ...) SHMEM__SELC(tb, op, *(a1))(c, a1, __VA_ARGS__)
#define SHMEM__DISPATCH_5_4(tb, op, c, a1, ...) SHMEM__SELC(tb, op, *(a1))(c, a1, __VA_ARGS__)
#define SHMEM__DISPATCH_6_5(tb, op, c, a1, ...) SHMEM__SELC(tb, op, *(a1))(c, a1, __VA_ARGS__)
#define SHMEM__DISPATCH_7_6(tb, op, c, a1, ...) SHMEM__SELC(tb, op, *(a1))(c, a1, __VA_ARGS__)
#define SHMEM__DISPATCH_8_7(tb, op, c, a1, ...) SHMEM__SELC(tb, op, *(a1))(c, a1, __VA_ARGS__)

#define shmem_put(...) SHMEM__DISPATCH(SHMEM__RMA_GEN, put, 4, __VA_ARGS__)
#define shmem_get(...) SHMEM__DISPATCH(SHMEM__RMA_GEN, get, 4, __VA_ARGS__)
#define shmem_p(...) SHMEM__DISPATCH(SHMEM__RMA_GEN, p, 3, __VA_ARGS__)
#define shmem_g(...) SHMEM__DISPATCH(SHMEM__RMA_GEN, g, 2, __VA_ARGS__)
#define shmem_iput(...) SHMEM__DISPATCH(SHMEM__RMA_GEN, iput, 6, __VA_ARGS__)
#define shmem_iget(...) SHMEM__DISPATCH(SHMEM__RMA_GEN, iget, 6, __VA_ARGS__)
#define shmem_put_nbi(...) SHMEM__DISPATCH(SHMEM__RMA_GEN, put_nbi, 4, __VA_ARGS__)
#define shmem_get_nbi(...) SHMEM__DISPATCH(SHMEM__RMA_GEN, get_nbi, 4, __VA_ARGS__)
#define shmem_put_signal(...) SHMEM__DISPATCH(SHMEM__RMA_GEN, put_signal, 7, __VA_ARGS__)
#define shmem_put_signal_nbi(...) SHMEM__DISPATCH(SHMEM__RMA_GEN, put_signal_nbi, 7, __VA_ARGS__)

#define shmem_atomic_fetch(...) SHMEM__DISPATCH(SHMEM__AMO_EXT_GEN, atomic_fetch, 2, __VA_ARGS__)
#define shmem_atomic_set(...) SHMEM__DISPATCH(SHMEM__AMO_EXT_GEN, atomic_set, 3, __VA_ARGS__)
#define shmem_atomic_swap(...) SHMEM__DISPATCH(SHMEM__AMO_EXT_GEN, atomic_swap, 3, __VA_ARGS__)
#define shmem_atomic_fetch_nbi(...) \
	SHMEM__DISPATCH(SHMEM__AMO_EXT_GEN, atomic_fetch_nbi, 3, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...) \
	SHMEM__DISPATCH(SHMEM__AMO_EXT_GEN, atomic_swap_nbi, 4, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) \
	SHMEM__DISPATCH(SHMEM__AMO_GEN, atomic_compare_swap, 4, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...) SHMEM__DISPATCH(SHMEM__AMO_GEN, atomic_fetch_inc, 2, __VA_ARGS__)
#define shmem_atomic_inc(...) SHMEM__DISPATCH(SHMEM__AMO_GEN, atomic_inc, 2, __VA_ARGS__)
#define shmem_atomic_fetch_add(...) SHMEM__DISPATCH(SHMEM__AMO_GEN, atomic_fetch_add, 3, __VA_ARGS__)
#define shmem_atomic_add(...) SHMEM__DISPATCH(SHMEM__AMO_GEN, atomic_add, 3, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) \
	SHMEM__DISPATCH(SHMEM__AMO_GEN, atomic_compare_swap_nbi, 5, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) \
	SHMEM__DISPATCH(SHMEM__AMO_GEN, atomic_fetch_inc_nbi, 3, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) \
	SHMEM__DISPATCH(SHMEM__AMO_GEN, atomic_fetch_add_nbi, 4, __VA_ARGS__)
#define shmem_atomic_fetch_and(...) SHMEM__DISPATCH(SHMEM__AMO_BIT_GEN, atomic_fetch_and, 3, __VA_ARGS__)
#define shmem_atomic_fetch_or(...) SHMEM__DISPATCH(SHMEM__AMO_BIT_GEN, atomic_fetch_or, 3, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...) SHMEM__DISPATCH(SHMEM__AMO_BIT_GEN, atomic_fetch_xor, 3, __VA_ARGS__)
#define shmem_atomic_and(...) SHMEM__DISPATCH(SHMEM__AMO_BIT_GEN, atomic_and, 3, __VA_ARGS__)
#define shmem_atomic_or(...) SHMEM__DISPATCH(SHMEM__AMO_BIT_GEN, atomic_or, 3, __VA_ARGS__)
#define shmem_atomic_xor(...) SHMEM__DISPATCH(SHMEM__AMO_BIT_GEN, atomic_xor, 3, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) \
	SHMEM__DISPATCH(SHMEM__AMO_BIT_GEN, atomic_fetch_and_nbi, 4, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...) \
	SHMEM__DISPATCH(SHMEM__AMO_BIT_GEN, atomic_fetch_or_nbi, 4, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) \
	SHMEM__DISPATCH(SHMEM__AMO_BIT_GEN, atomic_fetch_xor_nbi, 4, __VA_ARGS__)

/* the deprecated generic AMO names of 1.3/1.4 */
#define shmem_fetch(...) shmem_atomic_fetch(__VA_ARGS__)
#define shmem_set(...) shmem_atomic_set(__VA_ARGS__)
#define shmem_swap(...) shmem_atomic_swap(__VA_ARGS__)
#define shmem_cswap(...) shmem_atomic_compare_swap(__VA_ARGS__)
#define shmem_finc(...) shmem_atomic_fetch_inc(__VA_ARGS__)
#define shmem_inc(...) shmem_atomic_inc(__VA_ARGS__)
#define shmem_fadd(...) shmem_atomic_fetch_add(__VA_ARGS__)
#define shmem_add(...) shmem_atomic_add(__VA_ARGS__)

/* point-to-point: no ctx form; the first argument selects */
#define SHMEM__P2PSEL(op, ivar) SHMEM__SEL(SHMEM__P2P_GEN, op, *(ivar))
#define shmem_wait_until(ivar, ...) SHMEM__P2PSEL(wait_until, ivar)(ivar, __VA_ARGS__)
#define shmem_wait_until_all(ivars, ...) SHMEM__P2PSEL(wait_until_all, ivars)(ivars, __VA_ARGS__)
#define shmem_wait_until_any(ivars, ...) SHMEM__P2PSEL(wait_until_any, ivars)(ivars, __VA_ARGS__)
#define shmem_wait_until_some(ivars, ...) SHMEM__P2PSEL(wait_until_some, ivars)(ivars, __VA_ARGS__)
#define shmem_wait_until_all_vector(ivars, ...) \
	SHMEM__P2PSEL(wait_until_all_vector, ivars)(ivars, __VA_ARGS__)
#define shmem_wait_until_any_vector(ivars, ...) \
	SHMEM__P2PSEL(wait_until_any_vector, ivars)(ivars, __VA_ARGS__)
#define shmem_wait_until_some_vector(ivars, ...) \
	SHMEM__P2PSEL(wait_until_some_vector, ivars)(ivars, __VA_ARGS__)
#define shmem_test(ivar, ...) SHMEM__P2PSEL(test, ivar)(ivar, __VA_ARGS__)
#define shmem_test_all(ivars, ...) SHMEM__P2PSEL(test_all, ivars)(ivars, __VA_ARGS__)
#define shmem_test_any(ivars, ...) SHMEM__P2PSEL(test_any, ivars)(ivars, __VA_ARGS__)
#define shmem_test_some(ivars, ...) SHMEM__P2PSEL(test_some, ivars)(ivars, __VA_ARGS__)
#define shmem_test_all_vector(ivars, ...) SHMEM__P2PSEL(test_all_vector, ivars)(ivars, __VA_ARGS__)
#define shmem_test_any_vector(ivars, ...) SHMEM__P2PSEL(test_any_vector, ivars)(ivars, __VA_ARGS__)
#define shmem_test_some_vector(ivars, ...) \
	SHMEM__P2PSEL(test_some_vector, ivars)(ivars, __VA_ARGS__)

/* collectives: team first, dest selects */
#define SHMEM__COLLSEL(table, op, team, dest) SHMEM__SEL(table, op, *(dest))
#define shmem_broadcast(team, dest, ...) \
	SHMEM__COLLSEL(SHMEM__RMA_GEN, broadcast, team, dest)(team, dest, __VA_ARGS__)
#define shmem_collect(team, dest, ...) \
	SHMEM__COLLSEL(SHMEM__RMA_GEN, collect, team, dest)(team, dest, __VA_ARGS__)
#define shmem_fcollect(team, dest, ...) \
	SHMEM__COLLSEL(SHMEM__RMA_GEN, fcollect, team, dest)(team, dest, __VA_ARGS__)
#define shmem_alltoall(team, dest, ...) \
	SHMEM__COLLSEL(SHMEM__RMA_GEN, alltoall, team, dest)(team, dest, __VA_ARGS__)
#define shmem_alltoalls(team, dest, ...) \
	SHMEM__COLLSEL(SHMEM__RMA_GEN, alltoalls, team, dest)(team, dest, __VA_ARGS__)
#define shmem_and_reduce(team, dest, ...) \
	SHMEM__COLLSEL(SHMEM__BITRED_GEN, and_reduce, team, dest)(team, dest, __VA_ARGS__)
#define shmem_or_reduce(team, dest, ...) \
	SHMEM__COLLSEL(SHMEM__BITRED_GEN, or_reduce, team, dest)(team, dest, __VA_ARGS__)
#define shmem_xor_reduce(team, dest, ...) \
	SHMEM__COLLSEL(SHMEM__BITRED_GEN, xor_reduce, team, dest)(team, dest, __VA_ARGS__)
#define shmem_max_reduce(team, dest, ...) \
	SHMEM__COLLSEL(SHMEM__MMRED_GEN, max_reduce, team, dest)(team, dest, __VA_ARGS__)
#define shmem_min_reduce(team, dest, ...) \
	SHMEM__COLLSEL(SHMEM__MMRED_GEN, min_reduce, team, dest)(team, dest, __VA_ARGS__)
#define shmem_sum_reduce(team, dest, ...) \
	SHMEM__COLLSEL(SHMEM__ARRED_GEN, sum_reduce, team, dest)(team, dest, __VA_ARGS__)
#define shmem_prod_reduce(team, dest, ...) \
	SHMEM__COLLSEL(SHMEM__ARRED_GEN, prod_reduce, team, dest)(team, dest, __VA_ARGS__)
#endif /* C11 */

#ifdef __cplusplus
}
#endif

#endif /* HOIST_SHMEM_H */
