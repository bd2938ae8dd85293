/*
 * shmem_rma.c - OpenSHMEM RMA, atomics, signals and point-to-point
 * synchronisation on libhoist. The typed routines are generated from the
 * type tables of shmem.h; each calls one byte-level helper here.
 */
#include <sched.h>

#include "shmem_internal.h"

/* ---- byte-level RMA -------------------------------------------------------
 * fn: the calling routine, for the message of a kept error (the macros
 * after the helpers pass __func__) */
static void rma_put_(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, size_t n,
		     int pe, int nbi)
{
	if (n == 0 || (pe = shm__ctx_pe_(fn, ctx, pe)) < 0)
		return;
	shm__rma_err(fn, nbi ? hoist_put_nbi(pe, dest, src, n) : hoist_put(pe, dest, src, n), pe,
		     dest, n);
}

static void rma_get_(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, size_t n,
		     int pe, int nbi)
{
	if (n == 0 || (pe = shm__ctx_pe_(fn, ctx, pe)) < 0)
		return;
	shm__rma_err(fn, nbi ? hoist_get_nbi(dest, pe, src, n) : hoist_get(dest, pe, src, n), pe,
		     src, n);
}

/* strides are in elements */
static void rma_iput_(const char *fn, shmem_ctx_t ctx, void *dest, const void *src,
		      ptrdiff_t dst, ptrdiff_t sst, size_t es, size_t nelems, int pe)
{
	if ((pe = shm__ctx_pe_(fn, ctx, pe)) < 0)
		return;
	shm__rma_err(fn, hoist_put_strided(pe, dest, dst * (ptrdiff_t)es, src, sst * (ptrdiff_t)es,
					   es, nelems),
		     pe, dest, 0);
}

static void rma_iget_(const char *fn, shmem_ctx_t ctx, void *dest, const void *src,
		      ptrdiff_t dst, ptrdiff_t sst, size_t es, size_t nelems, int pe)
{
	if ((pe = shm__ctx_pe_(fn, ctx, pe)) < 0)
		return;
	shm__rma_err(fn, hoist_get_strided(dest, dst * (ptrdiff_t)es, pe, src, sst * (ptrdiff_t)es,
					   es, nelems),
		     pe, src, 0);
}

static void rma_put_signal_(const char *fn, shmem_ctx_t ctx, void *dest, const void *src,
			    size_t n, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
			    int nbi)
{
	if ((pe = shm__ctx_pe_(fn, ctx, pe)) < 0)
		return;
	hoist_signal_op_t op;
	if (sig_op == SHMEM_SIGNAL_SET)
		op = HOIST_SIGNAL_SET;
	else if (sig_op == SHMEM_SIGNAL_ADD)
		op = HOIST_SIGNAL_ADD;
	else {
		shm__errf(-EINVAL, "%s: sig_op %d is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD",
			  fn, sig_op);
		return;
	}
	int rc = nbi ? hoist_put_signal_nbi(pe, dest, src, n, sig_addr, signal, op)
		     : hoist_put_signal(pe, dest, src, n, sig_addr, signal, op);
	if (rc == -EFAULT && !hoist_is_symmetric(sig_addr, sizeof(*sig_addr)))
		shm__rma_err(fn, rc, pe, sig_addr, sizeof(*sig_addr));
	else
		shm__rma_err(fn, rc, pe, dest, n);
}
#define rma_put(...) rma_put_(__func__, __VA_ARGS__)
#define rma_get(...) rma_get_(__func__, __VA_ARGS__)
#define rma_iput(...) rma_iput_(__func__, __VA_ARGS__)
#define rma_iget(...) rma_iget_(__func__, __VA_ARGS__)
#define rma_put_signal(...) rma_put_signal_(__func__, __VA_ARGS__)

#define DEF_RMA(T, N, a)                                                                           \
	void shmem_ctx_##N##_put(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe)  \
	{                                                                                          \
		rma_put(ctx, dest, source, nelems * sizeof(T), pe, 0);                             \
	}                                                                                          \
	void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe)                      \
	{                                                                                          \
		rma_put(SHMEM_CTX_DEFAULT, dest, source, nelems * sizeof(T), pe, 0);               \
	}                                                                                          \
	void shmem_ctx_##N##_put_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,      \
				     int pe)                                                       \
	{                                                                                          \
		rma_put(ctx, dest, source, nelems * sizeof(T), pe, 1);                             \
	}                                                                                          \
	void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe)                  \
	{                                                                                          \
		rma_put(SHMEM_CTX_DEFAULT, dest, source, nelems * sizeof(T), pe, 1);               \
	}                                                                                          \
	void shmem_ctx_##N##_get(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe)  \
	{                                                                                          \
		rma_get(ctx, dest, source, nelems * sizeof(T), pe, 0);                             \
	}                                                                                          \
	void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe)                      \
	{                                                                                          \
		rma_get(SHMEM_CTX_DEFAULT, dest, source, nelems * sizeof(T), pe, 0);               \
	}                                                                                          \
	void shmem_ctx_##N##_get_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,      \
				     int pe)                                                       \
	{                                                                                          \
		rma_get(ctx, dest, source, nelems * sizeof(T), pe, 1);                             \
	}                                                                                          \
	void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe)                  \
	{                                                                                          \
		rma_get(SHMEM_CTX_DEFAULT, dest, source, nelems * sizeof(T), pe, 1);               \
	}                                                                                          \
	void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe)                          \
	{                                                                                          \
		rma_put(ctx, dest, &value, sizeof(T), pe, 0);                                      \
	}                                                                                          \
	void shmem_##N##_p(T *dest, T value, int pe)                                               \
	{                                                                                          \
		rma_put(SHMEM_CTX_DEFAULT, dest, &value, sizeof(T), pe, 0);                        \
	}                                                                                          \
	T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe)                              \
	{                                                                                          \
		T v;                                                                               \
		memset(&v, 0, sizeof(v));                                                          \
		rma_get(ctx, &v, source, sizeof(T), pe, 0);                                        \
		return v;                                                                          \
	}                                                                                          \
	T shmem_##N##_g(const T *source, int pe)                                                   \
	{                                                                                          \
		return shmem_ctx_##N##_g(SHMEM_CTX_DEFAULT, source, pe);                           \
	}                                                                                          \
	void shmem_ctx_##N##_iput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,         \
				  ptrdiff_t sst, size_t nelems, int pe)                            \
	{                                                                                          \
		rma_iput(ctx, dest, source, dst, sst, sizeof(T), nelems, pe);                      \
	}                                                                                          \
	void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,               \
			      size_t nelems, int pe)                                               \
	{                                                                                          \
		rma_iput(SHMEM_CTX_DEFAULT, dest, source, dst, sst, sizeof(T), nelems, pe);        \
	}                                                                                          \
	void shmem_ctx_##N##_iget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,         \
				  ptrdiff_t sst, size_t nelems, int pe)                            \
	{                                                                                          \
		rma_iget(ctx, dest, source, dst, sst, sizeof(T), nelems, pe);                      \
	}                                                                                          \
	void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,               \
			      size_t nelems, int pe)                                               \
	{                                                                                          \
		rma_iget(SHMEM_CTX_DEFAULT, dest, source, dst, sst, sizeof(T), nelems, pe);        \
	}                                                                                          \
	void shmem_ctx_##N##_put_signal(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,   \
					uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)   \
	{                                                                                          \
		rma_put_signal(ctx, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, 0); \
	}                                                                                          \
	void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,    \
				    uint64_t signal, int sig_op, int pe)                           \
	{                                                                                          \
		rma_put_signal(SHMEM_CTX_DEFAULT, dest, source, nelems * sizeof(T), sig_addr,      \
			       signal, sig_op, pe, 0);                                             \
	}                                                                                          \
	void shmem_ctx_##N##_put_signal_nbi(shmem_ctx_t ctx, T *dest, const T *source,              \
					    size_t nelems, uint64_t *sig_addr, uint64_t signal,     \
					    int sig_op, int pe)                                    \
	{                                                                                          \
		rma_put_signal(ctx, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, 1); \
	}                                                                                          \
	void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems,                    \
					uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)   \
	{                                                                                          \
		rma_put_signal(SHMEM_CTX_DEFAULT, dest, source, nelems * sizeof(T), sig_addr,      \
			       signal, sig_op, pe, 1);                                             \
	}
SHMEM__RMA_TYPES(DEF_RMA, )

/* sized and mem forms: S bits per element (mem: bytes) */
#define SZ_8 1
#define SZ_16 2
#define SZ_32 4
#define SZ_64 8
#define SZ_128 16
#define SZ_mem 1
#define DEF_SIZED(S, a)                                                                            \
	void shmem_ctx_put##S(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe) \
	{                                                                                          \
		rma_put(ctx, dest, source, nelems * SZ_##S, pe, 0);                                \
	}                                                                                          \
	void shmem_put##S(void *dest, const void *source, size_t nelems, int pe)                   \
	{                                                                                          \
		rma_put(SHMEM_CTX_DEFAULT, dest, source, nelems * SZ_##S, pe, 0);                  \
	}                                                                                          \
	void shmem_ctx_get##S(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe) \
	{                                                                                          \
		rma_get(ctx, dest, source, nelems * SZ_##S, pe, 0);                                \
	}                                                                                          \
	void shmem_get##S(void *dest, const void *source, size_t nelems, int pe)                   \
	{                                                                                          \
		rma_get(SHMEM_CTX_DEFAULT, dest, source, nelems * SZ_##S, pe, 0);                  \
	}                                                                                          \
	void shmem_ctx_put##S##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
				    int pe)                                                        \
	{                                                                                          \
		rma_put(ctx, dest, source, nelems * SZ_##S, pe, 1);                                \
	}                                                                                          \
	void shmem_put##S##_nbi(void *dest, const void *source, size_t nelems, int pe)             \
	{                                                                                          \
		rma_put(SHMEM_CTX_DEFAULT, dest, source, nelems * SZ_##S, pe, 1);                  \
	}                                                                                          \
	void shmem_ctx_get##S##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
				    int pe)                                                        \
	{                                                                                          \
		rma_get(ctx, dest, source, nelems * SZ_##S, pe, 1);                                \
	}                                                                                          \
	void shmem_get##S##_nbi(void *dest, const void *source, size_t nelems, int pe)             \
	{                                                                                          \
		rma_get(SHMEM_CTX_DEFAULT, dest, source, nelems * SZ_##S, pe, 1);                  \
	}                                                                                          \
	void shmem_ctx_iput##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst,      \
			       ptrdiff_t sst, size_t nelems, int pe)                               \
	{                                                                                          \
		rma_iput(ctx, dest, source, dst, sst, SZ_##S, nelems, pe);                         \
	}                                                                                          \
	void shmem_iput##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,            \
			   size_t nelems, int pe)                                                  \
	{                                                                                          \
		rma_iput(SHMEM_CTX_DEFAULT, dest, source, dst, sst, SZ_##S, nelems, pe);           \
	}                                                                                          \
	void shmem_ctx_iget##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst,      \
			       ptrdiff_t sst, size_t nelems, int pe)                               \
	{                                                                                          \
		rma_iget(ctx, dest, source, dst, sst, SZ_##S, nelems, pe);                         \
	}                                                                                          \
	void shmem_iget##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,            \
			   size_t nelems, int pe)                                                  \
	{                                                                                          \
		rma_iget(SHMEM_CTX_DEFAULT, dest, source, dst, sst, SZ_##S, nelems, pe);           \
	}                                                                                          \
	void shmem_ctx_put##S##_signal(shmem_ctx_t ctx, void *dest, const void *source,             \
				       size_t nelems, uint64_t *sig_addr, uint64_t signal,          \
				       int sig_op, int pe)                                         \
	{                                                                                          \
		rma_put_signal(ctx, dest, source, nelems * SZ_##S, sig_addr, signal, sig_op, pe, 0); \
	}                                                                                          \
	void shmem_put##S##_signal(void *dest, const void *source, size_t nelems,                   \
				   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)        \
	{                                                                                          \
		rma_put_signal(SHMEM_CTX_DEFAULT, dest, source, nelems * SZ_##S, sig_addr, signal, \
			       sig_op, pe, 0);                                                     \
	}                                                                                          \
	void shmem_ctx_put##S##_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source,         \
					   size_t nelems, uint64_t *sig_addr, uint64_t signal,      \
					   int sig_op, int pe)                                     \
	{                                                                                          \
		rma_put_signal(ctx, dest, source, nelems * SZ_##S, sig_addr, signal, sig_op, pe, 1); \
	}                                                                                          \
	void shmem_put##S##_signal_nbi(void *dest, const void *source, size_t nelems,               \
				       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)    \
	{                                                                                          \
		rma_put_signal(SHMEM_CTX_DEFAULT, dest, source, nelems * SZ_##S, sig_addr, signal, \
			       sig_op, pe, 1);                                                     \
	}
SHMEM__SIZES(DEF_SIZED, )
DEF_SIZED(mem, )

/* ---- atomics --------------------------------------------------------------- */
static void amo_(const char *fn, shmem_ctx_t ctx, int pe, void *dest, hoist_amo_t op,
		 hoist_type_t t, const void *value, const void *cond, void *fetched, int nbi)
{
	if ((pe = shm__ctx_pe_(fn, ctx, pe)) < 0)
		return;
	shm__rma_err(fn, nbi ? hoist_atomic_nbi(pe, dest, op, t, value, cond, fetched)
			     : hoist_atomic(pe, dest, op, t, value, cond, fetched),
		     pe, dest, 0);
}
#define amo(...) amo_(__func__, __VA_ARGS__)

#define HT(T) SHM_HTYPE((T)0)
#define DEF_AMO_EXT(T, N, a)                                                                       \
	T shmem_ctx_##N##_atomic_fetch(shmem_ctx_t ctx, const T *source, int pe)                   \
	{                                                                                          \
		T r = 0;                                                                           \
		amo(ctx, pe, (void *)source, HOIST_AMO_FETCH, HT(T), NULL, NULL, &r, 0);           \
		return r;                                                                          \
	}                                                                                          \
	T shmem_##N##_atomic_fetch(const T *source, int pe)                                        \
	{                                                                                          \
		return shmem_ctx_##N##_atomic_fetch(SHMEM_CTX_DEFAULT, source, pe);                \
	}                                                                                          \
	void shmem_ctx_##N##_atomic_set(shmem_ctx_t ctx, T *dest, T value, int pe)                 \
	{                                                                                          \
		amo(ctx, pe, dest, HOIST_AMO_SET, HT(T), &value, NULL, NULL, 0);                   \
	}                                                                                          \
	void shmem_##N##_atomic_set(T *dest, T value, int pe)                                      \
	{                                                                                          \
		shmem_ctx_##N##_atomic_set(SHMEM_CTX_DEFAULT, dest, value, pe);                    \
	}                                                                                          \
	T shmem_ctx_##N##_atomic_swap(shmem_ctx_t ctx, T *dest, T value, int pe)                   \
	{                                                                                          \
		T r = 0;                                                                           \
		amo(ctx, pe, dest, HOIST_AMO_SWAP, HT(T), &value, NULL, &r, 0);                    \
		return r;                                                                          \
	}                                                                                          \
	T shmem_##N##_atomic_swap(T *dest, T value, int pe)                                        \
	{                                                                                          \
		return shmem_ctx_##N##_atomic_swap(SHMEM_CTX_DEFAULT, dest, value, pe);            \
	}                                                                                          \
	void shmem_ctx_##N##_atomic_fetch_nbi(shmem_ctx_t ctx, T *fetch, const T *source, int pe)  \
	{                                                                                          \
		amo(ctx, pe, (void *)source, HOIST_AMO_FETCH, HT(T), NULL, NULL, fetch, 1);        \
	}                                                                                          \
	void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe)                       \
	{                                                                                          \
		shmem_ctx_##N##_atomic_fetch_nbi(SHMEM_CTX_DEFAULT, fetch, source, pe);            \
	}                                                                                          \
	void shmem_ctx_##N##_atomic_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe)  \
	{                                                                                          \
		amo(ctx, pe, dest, HOIST_AMO_SWAP, HT(T), &value, NULL, fetch, 1);                 \
	}                                                                                          \
	void shmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe)                       \
	{                                                                                          \
		shmem_ctx_##N##_atomic_swap_nbi(SHMEM_CTX_DEFAULT, fetch, dest, value, pe);        \
	}
SHMEM__AMO_EXT(DEF_AMO_EXT, )

#define DEF_AMO_STD(T, N, a)                                                                       \
	T shmem_ctx_##N##_atomic_compare_swap(shmem_ctx_t ctx, T *dest, T cond, T value, int pe)   \
	{                                                                                          \
		T r = 0;                                                                           \
		amo(ctx, pe, dest, HOIST_AMO_CSWAP, HT(T), &value, &cond, &r, 0);                  \
		return r;                                                                          \
	}                                                                                          \
	T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe)                        \
	{                                                                                          \
		return shmem_ctx_##N##_atomic_compare_swap(SHMEM_CTX_DEFAULT, dest, cond, value, pe); \
	}                                                                                          \
	T shmem_ctx_##N##_atomic_fetch_inc(shmem_ctx_t ctx, T *dest, int pe)                       \
	{                                                                                          \
		T r = 0;                                                                           \
		amo(ctx, pe, dest, HOIST_AMO_FETCH_INC, HT(T), NULL, NULL, &r, 0);                 \
		return r;                                                                          \
	}                                                                                          \
	T shmem_##N##_atomic_fetch_inc(T *dest, int pe)                                            \
	{                                                                                          \
		return shmem_ctx_##N##_atomic_fetch_inc(SHMEM_CTX_DEFAULT, dest, pe);              \
	}                                                                                          \
	void shmem_ctx_##N##_atomic_inc(shmem_ctx_t ctx, T *dest, int pe)                          \
	{                                                                                          \
		amo(ctx, pe, dest, HOIST_AMO_INC, HT(T), NULL, NULL, NULL, 0);                     \
	}                                                                                          \
	void shmem_##N##_atomic_inc(T *dest, int pe)                                               \
	{                                                                                          \
		shmem_ctx_##N##_atomic_inc(SHMEM_CTX_DEFAULT, dest, pe);                           \
	}                                                                                          \
	T shmem_ctx_##N##_atomic_fetch_add(shmem_ctx_t ctx, T *dest, T value, int pe)              \
	{                                                                                          \
		T r = 0;                                                                           \
		amo(ctx, pe, dest, HOIST_AMO_FETCH_ADD, HT(T), &value, NULL, &r, 0);               \
		return r;                                                                          \
	}                                                                                          \
	T shmem_##N##_atomic_fetch_add(T *dest, T value, int pe)                                   \
	{                                                                                          \
		return shmem_ctx_##N##_atomic_fetch_add(SHMEM_CTX_DEFAULT, dest, value, pe);       \
	}                                                                                          \
	void shmem_ctx_##N##_atomic_add(shmem_ctx_t ctx, T *dest, T value, int pe)                 \
	{                                                                                          \
		amo(ctx, pe, dest, HOIST_AMO_ADD, HT(T), &value, NULL, NULL, 0);                   \
	}                                                                                          \
	void shmem_##N##_atomic_add(T *dest, T value, int pe)                                      \
	{                                                                                          \
		shmem_ctx_##N##_atomic_add(SHMEM_CTX_DEFAULT, dest, value, pe);                    \
	}                                                                                          \
	void shmem_ctx_##N##_atomic_compare_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T cond,   \
						     T value, int pe)                              \
	{                                                                                          \
		amo(ctx, pe, dest, HOIST_AMO_CSWAP, HT(T), &value, &cond, fetch, 1);               \
	}                                                                                          \
	void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe)       \
	{                                                                                          \
		shmem_ctx_##N##_atomic_compare_swap_nbi(SHMEM_CTX_DEFAULT, fetch, dest, cond, value, pe); \
	}                                                                                          \
	void shmem_ctx_##N##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, T *fetch, T *dest, int pe)      \
	{                                                                                          \
		amo(ctx, pe, dest, HOIST_AMO_FETCH_INC, HT(T), NULL, NULL, fetch, 1);              \
	}                                                                                          \
	void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe)                           \
	{                                                                                          \
		shmem_ctx_##N##_atomic_fetch_inc_nbi(SHMEM_CTX_DEFAULT, fetch, dest, pe);          \
	}                                                                                          \
	void shmem_ctx_##N##_atomic_fetch_add_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value,     \
						  int pe)                                          \
	{                                                                                          \
		amo(ctx, pe, dest, HOIST_AMO_FETCH_ADD, HT(T), &value, NULL, fetch, 1);            \
	}                                                                                          \
	void shmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe)                  \
	{                                                                                          \
		shmem_ctx_##N##_atomic_fetch_add_nbi(SHMEM_CTX_DEFAULT, fetch, dest, value, pe);   \
	}
SHMEM__AMO_STD(DEF_AMO_STD, )

#define OP_and AND
#define OP_or OR
#define OP_xor XOR
#define AMO_OP(op) SHM_CAT(HOIST_AMO_, OP_##op)
#define AMO_FOP(op) SHM_CAT(HOIST_AMO_FETCH_, OP_##op)
#define SHM_CAT_(a, b) a##b
#define SHM_CAT(a, b) SHM_CAT_(a, b)
#define DEF_AMO_BIT(T, N, op)                                                                      \
	T shmem_ctx_##N##_atomic_fetch_##op(shmem_ctx_t ctx, T *dest, T value, int pe)             \
	{                                                                                          \
		T r = 0;                                                                           \
		amo(ctx, pe, dest, AMO_FOP(op), HT(T), &value, NULL, &r, 0);                       \
		return r;                                                                          \
	}                                                                                          \
	T shmem_##N##_atomic_fetch_##op(T *dest, T value, int pe)                                  \
	{                                                                                          \
		return shmem_ctx_##N##_atomic_fetch_##op(SHMEM_CTX_DEFAULT, dest, value, pe);      \
	}                                                                                          \
	void shmem_ctx_##N##_atomic_##op(shmem_ctx_t ctx, T *dest, T value, int pe)                \
	{                                                                                          \
		amo(ctx, pe, dest, AMO_OP(op), HT(T), &value, NULL, NULL, 0);                      \
	}                                                                                          \
	void shmem_##N##_atomic_##op(T *dest, T value, int pe)                                     \
	{                                                                                          \
		shmem_ctx_##N##_atomic_##op(SHMEM_CTX_DEFAULT, dest, value, pe);                   \
	}                                                                                          \
	void shmem_ctx_##N##_atomic_fetch_##op##_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value,  \
						     int pe)                                       \
	{                                                                                          \
		amo(ctx, pe, dest, AMO_FOP(op), HT(T), &value, NULL, fetch, 1);                    \
	}                                                                                          \
	void shmem_##N##_atomic_fetch_##op##_nbi(T *fetch, T *dest, T value, int pe)               \
	{                                                                                          \
		shmem_ctx_##N##_atomic_fetch_##op##_nbi(SHMEM_CTX_DEFAULT, fetch, dest, value, pe); \
	}
SHMEM__AMO_BIT(DEF_AMO_BIT, and)
SHMEM__AMO_BIT(DEF_AMO_BIT, or)
SHMEM__AMO_BIT(DEF_AMO_BIT, xor)

/* pre-1.4 names */
#define DEF_DEPR_AMO(T, N, a)                                                                     \
	T shmem_##N##_cswap(T *dest, T cond, T value, int pe)                                     \
	{                                                                                         \
		return shmem_##N##_atomic_compare_swap(dest, cond, value, pe);                    \
	}                                                                                         \
	T shmem_##N##_finc(T *dest, int pe) { return shmem_##N##_atomic_fetch_inc(dest, pe); }    \
	void shmem_##N##_inc(T *dest, int pe) { shmem_##N##_atomic_inc(dest, pe); }              \
	T shmem_##N##_fadd(T *dest, T value, int pe)                                              \
	{                                                                                         \
		return shmem_##N##_atomic_fetch_add(dest, value, pe);                             \
	}                                                                                         \
	void shmem_##N##_add(T *dest, T value, int pe) { shmem_##N##_atomic_add(dest, value, pe); }
#define DEF_DEPR_AMO_EXT(T, N, a)                                                                 \
	T shmem_##N##_fetch(const T *source, int pe) { return shmem_##N##_atomic_fetch(source, pe); } \
	void shmem_##N##_set(T *dest, T value, int pe) { shmem_##N##_atomic_set(dest, value, pe); } \
	T shmem_##N##_swap(T *dest, T value, int pe) { return shmem_##N##_atomic_swap(dest, value, pe); }
SHMEM__DEPR_TYPES(DEF_DEPR_AMO, )
SHMEM__DEPR_TYPES(DEF_DEPR_AMO_EXT, )
SHMEM__AMO_EXT_ONLY(DEF_DEPR_AMO_EXT, )

/* ---- signals ------------------------------------------------------------------ */
uint64_t shmem_signal_fetch(const uint64_t *sig_addr) { return hoist_signal_fetch(sig_addr); }

uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
	uint64_t seen = 0;
	hoist_cmp_t c = shm__cmp(cmp);
	if (!c) {
		shm__err(-EINVAL);
		return hoist_signal_fetch(sig_addr);
	}
	if (shm__mt) { /* poll, the lock free between polls (shmem_internal.h) */
		int r;
		SHM_POLL(r, hoist_test_until_all(sig_addr, 1, NULL, HOIST_UINT64, c, cmp_value));
		if (r < 0)
			shm__err(r);
		return hoist_signal_fetch(sig_addr);
	}
	if (shm__err(hoist_signal_wait_until(sig_addr, c, cmp_value, &seen)))
		return hoist_signal_fetch(sig_addr);
	return seen;
}

/* ---- point-to-point synchronisation ----------------------------------------------
 * 32- and 64-bit types: libhoist's waits (spin, then sleep on the heap's
 * wake line). short and unsigned short, which libhoist has no type for:
 * the same conditions evaluated here with atomic loads, polling with
 * sched_yield() in between. */
enum { P_ALL, P_ANY, P_SOME };

#define DEF_P2P(T, N, a)                                                                           \
	static int N##_cmp1(T x, int cmp, T v)                                                     \
	{                                                                                          \
		switch (cmp) {                                                                     \
		case SHMEM_CMP_EQ: return x == v;                                                  \
		case SHMEM_CMP_NE: return x != v;                                                  \
		case SHMEM_CMP_GT: return x > v;                                                   \
		case SHMEM_CMP_GE: return x >= v;                                                  \
		case SHMEM_CMP_LT: return x < v;                                                   \
		default: return x <= v;                                                            \
		}                                                                                  \
	}                                                                                          \
	/* polled form: how many take part and hold (indices/index filled) */                     \
	static size_t N##_scan(T *ivars, size_t n, const int *status, int cmp, T v, const T *vs,   \
			       int mode, size_t *out, size_t *parts)                               \
	{                                                                                          \
		size_t hits = 0;                                                                   \
		*parts = 0;                                                                        \
		for (size_t i = 0; i < n; i++) {                                                   \
			if (status && status[i])                                                   \
				continue;                                                          \
			++*parts;                                                                  \
			T x = __atomic_load_n(&ivars[i], __ATOMIC_ACQUIRE);                        \
			if (N##_cmp1(x, cmp, vs ? vs[i] : v)) {                                    \
				if (out && (mode == P_SOME || hits == 0))                          \
					out[mode == P_SOME ? hits : 0] = i;                        \
				hits++;                                                            \
				if (mode == P_ANY)                                                 \
					return hits;                                               \
			}                                                                          \
		}                                                                                  \
		return hits;                                                                       \
	}                                                                                          \
	static size_t N##_p2p(T *ivars, size_t n, const int *status, int cmp, T v, const T *vs,    \
			      int mode, size_t *out, int wait)                                     \
	{                                                                                          \
		hoist_cmp_t c = shm__cmp(cmp);                                                     \
		size_t idx = SIZE_MAX;                                                             \
		if (!c) {                                                                          \
			shm__err(-EINVAL);                                                         \
			return mode == P_ANY ? SIZE_MAX : 0;                                       \
		}                                                                                  \
		if (sizeof(T) == 2) {                                                              \
			for (;;) {                                                                 \
				size_t parts, hits = N##_scan(ivars, n, status, cmp, v, vs, mode,   \
							      mode == P_ANY ? &idx : out, &parts); \
				if (mode == P_ALL && hits == parts)                                \
					return 1;                                                  \
				if (mode != P_ALL && (hits || !parts))                             \
					return mode == P_ANY ? (hits ? idx : SIZE_MAX) : hits;     \
				if (!wait)                                                         \
					return mode == P_ANY ? SIZE_MAX : 0;                       \
				sched_yield();                                                     \
			}                                                                          \
		}                                                                                  \
		T probe = 0;                                                                       \
		hoist_type_t t = SHM_HTYPE(probe);                                                 \
		int64_t r;                                                                         \
		if (wait && shm__mt) {                                                             \
			/* SHMEM_THREAD_MULTIPLE: poll the test form, free the lock between \
			 * polls; with nothing taking part any/some end at once, as the waits */ \
			size_t parts = 0;                                                          \
			for (size_t i = 0; i < n && !parts; i++)                                   \
				parts += !(status && status[i]);                                   \
			if (mode != P_ALL && !parts)                                               \
				return mode == P_ANY ? SIZE_MAX : 0;                               \
			switch (mode) {                                                            \
			case P_ALL:                                                                \
				SHM_POLL(r, vs ? hoist_test_until_all_vector(ivars, n, status, t, c, vs) \
					       : hoist_test_until_all(ivars, n, status, t, c, (uint64_t)v)); \
				return r < 0 ? (shm__err((int)r), 0) : 1;                          \
			case P_ANY:                                                                \
				SHM_POLL(r, vs ? hoist_test_until_any_vector(ivars, n, status, t, c, vs, &idx) \
					       : hoist_test_until_any(ivars, n, status, t, c, (uint64_t)v, &idx)); \
				return r < 0 ? (shm__err((int)r), SIZE_MAX) : idx;                 \
			default:                                                                   \
				SHM_POLL(r, vs ? hoist_test_until_some_vector(ivars, n, out, status, t, c, vs) \
					       : hoist_test_until_some(ivars, n, out, status, t, c, (uint64_t)v)); \
				return r < 0 ? (shm__err((int)r), 0) : (size_t)r;                  \
			}                                                                          \
		}                                                                                  \
		switch (mode) {                                                                    \
		case P_ALL:                                                                        \
			if (vs)                                                                    \
				r = wait ? hoist_wait_until_all_vector(ivars, n, status, t, c, vs)  \
					 : hoist_test_until_all_vector(ivars, n, status, t, c, vs); \
			else                                                                       \
				r = wait ? hoist_wait_until_all(ivars, n, status, t, c, (uint64_t)v) \
					 : hoist_test_until_all(ivars, n, status, t, c, (uint64_t)v); \
			if (r < 0)                                                                 \
				return shm__err((int)r), 0;                                        \
			return wait ? 1 : (size_t)r;                                               \
		case P_ANY:                                                                        \
			if (vs)                                                                    \
				r = wait ? hoist_wait_until_any_vector(ivars, n, status, t, c, vs, &idx) \
					 : hoist_test_until_any_vector(ivars, n, status, t, c, vs, &idx); \
			else                                                                       \
				r = wait ? hoist_wait_until_any(ivars, n, status, t, c, (uint64_t)v, &idx) \
					 : hoist_test_until_any(ivars, n, status, t, c, (uint64_t)v, &idx); \
			if (r < 0)                                                                 \
				return shm__err((int)r), SIZE_MAX;                                 \
			return (wait || r == 1) ? idx : SIZE_MAX;                                  \
		default:                                                                           \
			if (vs)                                                                    \
				r = wait ? hoist_wait_until_some_vector(ivars, n, out, status, t, c, vs) \
					 : hoist_test_until_some_vector(ivars, n, out, status, t, c, vs); \
			else                                                                       \
				r = wait ? hoist_wait_until_some(ivars, n, out, status, t, c, (uint64_t)v) \
					 : hoist_test_until_some(ivars, n, out, status, t, c, (uint64_t)v); \
			if (r < 0)                                                                 \
				return shm__err((int)r), 0;                                        \
			return (size_t)r;                                                          \
		}                                                                                  \
	}                                                                                          \
	void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value)                                 \
	{                                                                                          \
		N##_p2p(ivar, 1, NULL, cmp, cmp_value, NULL, P_ALL, NULL, 1);                      \
	}                                                                                          \
	int shmem_##N##_test(T *ivar, int cmp, T cmp_value)                                        \
	{                                                                                          \
		return (int)N##_p2p(ivar, 1, NULL, cmp, cmp_value, NULL, P_ALL, NULL, 0);          \
	}                                                                                          \
	void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,       \
					T cmp_value)                                               \
	{                                                                                          \
		N##_p2p(ivars, nelems, status, cmp, cmp_value, NULL, P_ALL, NULL, 1);              \
	}                                                                                          \
	size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp,     \
					  T cmp_value)                                             \
	{                                                                                          \
		return N##_p2p(ivars, nelems, status, cmp, cmp_value, NULL, P_ANY, NULL, 1);       \
	}                                                                                          \
	size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,               \
					   const int *status, int cmp, T cmp_value)                \
	{                                                                                          \
		return N##_p2p(ivars, nelems, status, cmp, cmp_value, NULL, P_SOME, indices, 1);   \
	}                                                                                          \
	void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status,         \
					       int cmp, T *cmp_values)                             \
	{                                                                                          \
		N##_p2p(ivars, nelems, status, cmp, 0, cmp_values, P_ALL, NULL, 1);                \
	}                                                                                          \
	size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status,       \
						 int cmp, T *cmp_values)                           \
	{                                                                                          \
		return N##_p2p(ivars, nelems, status, cmp, 0, cmp_values, P_ANY, NULL, 1);         \
	}                                                                                          \
	size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,        \
						  const int *status, int cmp, T *cmp_values)       \
	{                                                                                          \
		return N##_p2p(ivars, nelems, status, cmp, 0, cmp_values, P_SOME, indices, 1);     \
	}                                                                                          \
	int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value) \
	{                                                                                          \
		return (int)N##_p2p(ivars, nelems, status, cmp, cmp_value, NULL, P_ALL, NULL, 0);  \
	}                                                                                          \
	size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp,          \
				    T cmp_value)                                                   \
	{                                                                                          \
		return N##_p2p(ivars, nelems, status, cmp, cmp_value, NULL, P_ANY, NULL, 0);       \
	}                                                                                          \
	size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status,  \
				     int cmp, T cmp_value)                                         \
	{                                                                                          \
		return N##_p2p(ivars, nelems, status, cmp, cmp_value, NULL, P_SOME, indices, 0);   \
	}                                                                                          \
	int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,       \
					T *cmp_values)                                             \
	{                                                                                          \
		return (int)N##_p2p(ivars, nelems, status, cmp, 0, cmp_values, P_ALL, NULL, 0);    \
	}                                                                                          \
	size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,   \
					   T *cmp_values)                                          \
	{                                                                                          \
		return N##_p2p(ivars, nelems, status, cmp, 0, cmp_values, P_ANY, NULL, 0);         \
	}                                                                                          \
	size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,              \
					    const int *status, int cmp, T *cmp_values)             \
	{                                                                                          \
		return N##_p2p(ivars, nelems, status, cmp, 0, cmp_values, P_SOME, indices, 0);     \
	}
SHMEM__P2P_TYPES(DEF_P2P, )

#define DEF_DEPR_WAIT(T, N, a) \
	void shmem_##N##_wait(T *ivar, T cmp_value) { shmem_##N##_wait_until(ivar, SHMEM_CMP_NE, cmp_value); }
SHMEM__DEPR_TYPES(DEF_DEPR_WAIT, )
DEF_DEPR_WAIT(short, short, )
void shmem_wait(long *ivar, long cmp_value) { shmem_long_wait_until(ivar, SHMEM_CMP_NE, cmp_value); }
void shmem_wait_until(long *ivar, int cmp, long cmp_value)
{
	shmem_long_wait_until(ivar, cmp, cmp_value);
}
