/*
 * Point-to-point synchronisation: hoist_wait_until* / hoist_test_until*
 * on variables of the caller's own heap (hoist.h).
 *
 * Nothing is posted: the variables are plain memory that other PEs' puts
 * (the daemon's copies and tcp receives, same-node PEs' direct stores)
 * change. A wait scans them, spins for the client's spin budget
 * (HOIST_SPIN_US, as wait.c does for the rings; again after every wake-up
 * that did not end the wait), then sleeps on the seq
 * word of its heap's wake line, which every writer bumps and FUTEX_WAKEs
 * when the waiting flag is set and the write overlaps the range of the
 * variables the wait published there (protocol in hoist_shm.h: a stream
 * of puts and atomics into other words of the heap leaves the sleeper
 * alone). Sleeps are
 * bounded by wait_poll_ms: NIC-placed data (verbs RDMA WRITE) bumps
 * nothing, and a vanished daemon is noticed then.
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "hoist_futex.h"
#include "internal.h"

enum p2p_mode { P2P_ALL, P2P_ANY, P2P_SOME };

struct p2p {
	const char *base;   /* the variables, in the own heap */
	size_t n;
	const int *status;  /* nonzero: left out; NULL: all take part */
	hoist_type_t type;
	hoist_cmp_t cmp;
	uint64_t value;     /* scalar forms */
	const char *values; /* vector forms: one per variable, else NULL */
	size_t esz;
	enum p2p_mode mode;
	uint64_t off;       /* heap-file offset of the variables: the waited range
			     * [off, off + n * esz) goes to the wake line */
};

static size_t type_size(hoist_type_t t)
{
	switch (t) {
	case HOIST_INT32:
	case HOIST_UINT32:
		return 4;
	case HOIST_INT64:
	case HOIST_UINT64:
		return 8;
	case HOIST_FLOAT: /* no point-to-point type: -EINVAL */
	case HOIST_DOUBLE:
		break;
	}
	return 0;
}

static int check(struct hoist_ctx *c, struct p2p *q, const void *ivars, int vector,
		 const void *out)
{
	if (!c->initialized)
		return -ENOTCONN;
	q->esz = type_size(q->type);
	if (!q->esz || (int)q->cmp < (int)HOIST_CMP_EQ || (int)q->cmp > (int)HOIST_CMP_LE)
		return -EINVAL;
	if (q->n == 0)
		return 0;
	if (!ivars || (vector && !q->values) || (q->mode != P2P_ALL && !out))
		return -EINVAL;
	if (q->n > SIZE_MAX / q->esz || ((uintptr_t)ivars & (q->esz - 1)))
		return -EINVAL;
	const char *a = ivars;
	/* the heap's last line is its wake line, not a variable */
	uint64_t off, rlo, rhi;
	if (hoist__sym_region(c, a, &off, &rlo, &rhi))
		return -EFAULT;
	if (rhi > c->heap_bytes - HOIST_HEAP_WAKE_BYTES)
		rhi = c->heap_bytes - HOIST_HEAP_WAKE_BYTES;
	if (!hoist_range_ok(off, q->n * q->esz, rhi))
		return -EFAULT;
	q->base = a;
	q->off = off;
	return 0;
}

/* Does element i compare true? Loads are atomic: writers store
 * concurrently. */
static int elem_true(const struct p2p *q, size_t i)
{
	int64_t s, sv;
	uint64_t u, uv;
	const void *vp = q->values ? q->values + i * q->esz : NULL;
	switch (q->type) {
	case HOIST_INT32: {
		int32_t x = __atomic_load_n((const int32_t *)q->base + i, __ATOMIC_RELAXED), v;
		if (vp)
			__builtin_memcpy(&v, vp, 4);
		else
			v = (int32_t)(uint32_t)q->value;
		s = x, sv = v;
		goto signed_cmp;
	}
	case HOIST_INT64: {
		int64_t x = __atomic_load_n((const int64_t *)q->base + i, __ATOMIC_RELAXED), v;
		if (vp)
			__builtin_memcpy(&v, vp, 8);
		else
			v = (int64_t)q->value;
		s = x, sv = v;
		goto signed_cmp;
	}
	case HOIST_UINT32: {
		uint32_t x = __atomic_load_n((const uint32_t *)q->base + i, __ATOMIC_RELAXED), v;
		if (vp)
			__builtin_memcpy(&v, vp, 4);
		else
			v = (uint32_t)q->value;
		u = x, uv = v;
		goto unsigned_cmp;
	}
	case HOIST_UINT64: {
		uint64_t x = __atomic_load_n((const uint64_t *)q->base + i, __ATOMIC_RELAXED), v;
		if (vp)
			__builtin_memcpy(&v, vp, 8);
		else
			v = q->value;
		u = x, uv = v;
		goto unsigned_cmp;
	}
	case HOIST_FLOAT: /* refused by check() */
	case HOIST_DOUBLE:
		break;
	}
	return 0;
signed_cmp:
	switch (q->cmp) {
	case HOIST_CMP_EQ: return s == sv;
	case HOIST_CMP_NE: return s != sv;
	case HOIST_CMP_GT: return s > sv;
	case HOIST_CMP_GE: return s >= sv;
	case HOIST_CMP_LT: return s < sv;
	case HOIST_CMP_LE: return s <= sv;
	}
	return 0;
unsigned_cmp:
	switch (q->cmp) {
	case HOIST_CMP_EQ: return u == uv;
	case HOIST_CMP_NE: return u != uv;
	case HOIST_CMP_GT: return u > uv;
	case HOIST_CMP_GE: return u >= uv;
	case HOIST_CMP_LT: return u < uv;
	case HOIST_CMP_LE: return u <= uv;
	}
	return 0;
}

/* One look: ALL 1/0; ANY 1 (*out = index) / 0; SOME the number true
 * (indices in out). *none: no element takes part. */
static int64_t scan(const struct p2p *q, size_t *out, int *none)
{
	int64_t cnt = 0;
	size_t taking = 0;
	for (size_t i = 0; i < q->n; i++) {
		if (q->status && q->status[i])
			continue;
		taking++;
		int t = elem_true(q, i);
		if (q->mode == P2P_ALL) {
			if (!t)
				return 0;
		} else if (t) {
			out[cnt++] = i;
			if (q->mode == P2P_ANY)
				return 1;
		}
	}
	*none = taking == 0;
	return q->mode == P2P_ALL ? 1 : cnt;
}

static void ctr_inc(uint64_t *p)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The result of the first scan that is true (or of one with nothing taking
 * part), else -errno. */
static int64_t p2p_run(struct hoist_ctx *c, const struct p2p *q, size_t *out, int wait)
{
	int none = 0;
	int64_t r = q->n ? scan(q, out, &none) : (int64_t)(q->mode == P2P_ALL);
	if (r || none || !q->n || !wait)
		goto done;
	struct hoist_ctrl *ctrl = c->ring.ctrl;
	struct hoist_heap_wake *w = hoist_heap_wake_of(c->heap_base, c->heap_bytes);
	ctr_inc(&ctrl->p2p_waits);
	hoist__kick(c); /* our own earlier puts may be what others wait for */
	uint64_t start = 0;
	for (unsigned spins = 1;; spins++) {
		if ((r = scan(q, out, &none)))
			break;
		if (spins < 64) {
			hoist_cpu_relax();
			continue;
		}
		uint64_t t = mono_ns();
		if (!start)
			start = t;
		if (t - start < (uint64_t)c->spin_us * 1000u) {
			if ((spins & 15) == 0)
				sched_yield(); /* writers may share our core */
			else
				hoist_cpu_relax();
			continue;
		}
		/* sleep: range, flag, fence, read seq, recheck (hoist_shm.h);
		 * writers of other words see the range and do not wake us */
		__atomic_store_n(&w->wait_lo, q->off, __ATOMIC_RELAXED);
		__atomic_store_n(&w->wait_hi, q->off + q->n * q->esz, __ATOMIC_RELAXED);
		__atomic_store_n(&w->waiting, 1, __ATOMIC_RELAXED);
		hoist_smp_mb(); /* pairs with the fence in hoist_heap_touched() */
		uint32_t seq = __atomic_load_n(&w->seq, __ATOMIC_RELAXED);
		if ((r = scan(q, out, &none))) {
			__atomic_store_n(&w->waiting, 0, __ATOMIC_RELAXED);
			break;
		}
		ctr_inc(&ctrl->p2p_sleeps);
		int rc = hoist_futex_wait(&w->seq, seq, (uint64_t)c->wait_poll_ms * 1000000u);
		__atomic_store_n(&w->waiting, 0, __ATOMIC_RELAXED);
		if (rc == 0 || rc == -EAGAIN) {
			ctr_inc(&ctrl->p2p_wakeups); /* a writer moved seq */
			/* Spin the whole budget again before the next sleep: a
			 * store to the waited words that did not end the wait
			 * is often followed by more (a counter on its way up;
			 * stores elsewhere in the heap wake nobody), and a waiter
			 * that slept again at once made each of them pay a
			 * FUTEX_WAKE (~0.3-1.5 us per same-node put). */
			start = 0;
			spins = 1;
		} else if (rc == -ETIMEDOUT) {
			int err = hoist__check_daemon(c);
			if (!err)
				err = __atomic_load_n(&ctrl->job_error, __ATOMIC_ACQUIRE);
			if (err && !(r = scan(q, out, &none)))
				return err;
		}
	}
done:
	/* what the writer stored before the variable is visible now */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return r;
}

static int64_t p2p(void *ivars, size_t n, const int *status, hoist_type_t type,
		   hoist_cmp_t cmp, uint64_t value, const void *values, int vector,
		   enum p2p_mode mode, size_t *out, int wait)
{
	struct hoist_ctx *c = &hoist__g;
	struct p2p q = {.n = n, .status = status, .type = type, .cmp = cmp, .value = value,
			.values = values, .mode = mode};
	int rc = check(c, &q, ivars, vector, out);
	if (rc)
		return rc;
	if (mode == P2P_ANY && out)
		*out = SIZE_MAX;
	return p2p_run(c, &q, out, wait);
}

HOIST_API int hoist_wait_until(void *ivar, hoist_type_t type, hoist_cmp_t cmp, uint64_t value)
{
	int64_t r = p2p(ivar, 1, NULL, type, cmp, value, NULL, 0, P2P_ALL, NULL, 1);
	return r < 0 ? (int)r : 0;
}

HOIST_API int hoist_test_until(void *ivar, hoist_type_t type, hoist_cmp_t cmp, uint64_t value)
{
	return (int)p2p(ivar, 1, NULL, type, cmp, value, NULL, 0, P2P_ALL, NULL, 0);
}

HOIST_API int hoist_wait_until_all(void *ivars, size_t nelems, const int *status,
				   hoist_type_t type, hoist_cmp_t cmp, uint64_t value)
{
	int64_t r = p2p(ivars, nelems, status, type, cmp, value, NULL, 0, P2P_ALL, NULL, 1);
	return r < 0 ? (int)r : 0;
}

HOIST_API int hoist_wait_until_any(void *ivars, size_t nelems, const int *status,
				   hoist_type_t type, hoist_cmp_t cmp, uint64_t value,
				   size_t *index)
{
	int64_t r = p2p(ivars, nelems, status, type, cmp, value, NULL, 0, P2P_ANY, index, 1);
	return r < 0 ? (int)r : 0;
}

HOIST_API int64_t hoist_wait_until_some(void *ivars, size_t nelems, size_t *indices,
					const int *status, hoist_type_t type, hoist_cmp_t cmp,
					uint64_t value)
{
	return p2p(ivars, nelems, status, type, cmp, value, NULL, 0, P2P_SOME, indices, 1);
}

HOIST_API int hoist_test_until_all(void *ivars, size_t nelems, const int *status,
				   hoist_type_t type, hoist_cmp_t cmp, uint64_t value)
{
	return (int)p2p(ivars, nelems, status, type, cmp, value, NULL, 0, P2P_ALL, NULL, 0);
}

HOIST_API int hoist_test_until_any(void *ivars, size_t nelems, const int *status,
				   hoist_type_t type, hoist_cmp_t cmp, uint64_t value,
				   size_t *index)
{
	return (int)p2p(ivars, nelems, status, type, cmp, value, NULL, 0, P2P_ANY, index, 0);
}

HOIST_API int64_t hoist_test_until_some(void *ivars, size_t nelems, size_t *indices,
					const int *status, hoist_type_t type, hoist_cmp_t cmp,
					uint64_t value)
{
	return p2p(ivars, nelems, status, type, cmp, value, NULL, 0, P2P_SOME, indices, 0);
}

HOIST_API int hoist_wait_until_all_vector(void *ivars, size_t nelems, const int *status,
					  hoist_type_t type, hoist_cmp_t cmp, const void *values)
{
	int64_t r = p2p(ivars, nelems, status, type, cmp, 0, values, 1, P2P_ALL, NULL, 1);
	return r < 0 ? (int)r : 0;
}

HOIST_API int hoist_wait_until_any_vector(void *ivars, size_t nelems, const int *status,
					  hoist_type_t type, hoist_cmp_t cmp, const void *values,
					  size_t *index)
{
	int64_t r = p2p(ivars, nelems, status, type, cmp, 0, values, 1, P2P_ANY, index, 1);
	return r < 0 ? (int)r : 0;
}

HOIST_API int64_t hoist_wait_until_some_vector(void *ivars, size_t nelems, size_t *indices,
					       const int *status, hoist_type_t type,
					       hoist_cmp_t cmp, const void *values)
{
	return p2p(ivars, nelems, status, type, cmp, 0, values, 1, P2P_SOME, indices, 1);
}

HOIST_API int hoist_test_until_all_vector(void *ivars, size_t nelems, const int *status,
					  hoist_type_t type, hoist_cmp_t cmp, const void *values)
{
	return (int)p2p(ivars, nelems, status, type, cmp, 0, values, 1, P2P_ALL, NULL, 0);
}

HOIST_API int hoist_test_until_any_vector(void *ivars, size_t nelems, const int *status,
					  hoist_type_t type, hoist_cmp_t cmp, const void *values,
					  size_t *index)
{
	return (int)p2p(ivars, nelems, status, type, cmp, 0, values, 1, P2P_ANY, index, 0);
}

HOIST_API int64_t hoist_test_until_some_vector(void *ivars, size_t nelems, size_t *indices,
					       const int *status, hoist_type_t type,
					       hoist_cmp_t cmp, const void *values)
{
	return p2p(ivars, nelems, status, type, cmp, 0, values, 1, P2P_SOME, indices, 0);
}

/* shmem_signal_wait_until: a wait on a HOIST_UINT64, then the value read
 * with acquire; a writer may change it again in between, so the value
 * handed back is one that satisfies the comparison (else wait again). */
HOIST_API int hoist_signal_wait_until(uint64_t *sig_addr, hoist_cmp_t cmp, uint64_t value,
				      uint64_t *observed)
{
	for (;;) {
		int rc = hoist_wait_until(sig_addr, HOIST_UINT64, cmp, value);
		if (rc)
			return rc;
		uint64_t v = __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
		int ok = 0;
		switch (cmp) {
		case HOIST_CMP_EQ: ok = v == value; break;
		case HOIST_CMP_NE: ok = v != value; break;
		case HOIST_CMP_GT: ok = v > value; break;
		case HOIST_CMP_GE: ok = v >= value; break;
		case HOIST_CMP_LT: ok = v < value; break;
		case HOIST_CMP_LE: ok = v <= value; break;
		}
		if (ok) {
			if (observed)
				*observed = v;
			return 0;
		}
	}
}
