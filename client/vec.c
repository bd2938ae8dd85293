/*
 * Strided and vector (indexed) puts and gets, and aggregation regions.
 *
 * One descriptor per chunk of elements (HOIST_OP_*_STRIDED / *_VEC): the
 * local side is handled here (gathered into / scattered out of staging,
 * the copy every staged put/get pays anyway), the remote side travels as
 * parameters (stride and count, or an element list in staging); the
 * daemon packs the elements for the target daemon, which unpacks them.
 * Inside an aggregation region (agg.c) they carry HOIST_SQE_F_AGG.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define GET_PIPELINE 8

/* Remote offsets of count elements of elem bytes from sym at stride:
 * [*lo, *hi) inside the heap, else -EFAULT. */
static int strided_box(struct hoist_ctx *c, const void *sym, ptrdiff_t stride, size_t elem,
		       size_t count, uint64_t *first, uint64_t *lo, uint64_t *hi)
{
	uint64_t off, rlo, rhi; /* all elements in the part (heap, data) sym is in */
	if (hoist__sym_region(c, sym, &off, &rlo, &rhi))
		return -EFAULT;
	__int128 last = (__int128)off + (__int128)stride * (__int128)(count - 1);
	__int128 l = last < (__int128)off ? last : (__int128)off;
	__int128 h = (last > (__int128)off ? last : (__int128)off) + (__int128)elem;
	if (l < (__int128)rlo || h > (__int128)rhi)
		return -EFAULT;
	*first = off;
	*lo = (uint64_t)l;
	*hi = (uint64_t)h;
	return 0;
}

static int common_checks(struct hoist_ctx *c, int pe)
{
	if (!c->initialized)
		return -ENOTCONN;
	if (pe < 0 || pe >= c->size)
		return -EINVAL;
	return 0;
}

static int post_multi(struct hoist_ctx *c, uint8_t opcode, uint8_t flags, int pe, uint64_t roff,
		      uint64_t len, uint64_t local_off, uint64_t p0, uint64_t p1, uint64_t user_data)
{
	struct hoist_sqe *sqe;
	int rc = hoist__sqe_get(c, &sqe);
	if (rc)
		return rc;
	*sqe = (struct hoist_sqe){.opcode = opcode, .flags = flags, .pe = pe, .user_data = user_data,
				  .remote_off = roff, .len = len, .local_off = local_off,
				  .seg = HOIST_SEG_HEAP};
	memcpy(sqe->inline_data, &p0, 8);
	memcpy(sqe->inline_data + 8, &p1, 8);
	hoist__sqe_submit(c);
	return 0;
}

/* Wait for a staged get, copy its data out, free it; keep the first error. */
static void finish(struct hoist_ctx *c, struct hoist_op *op, int *err)
{
	int rc = hoist__wait_op(c, op);
	if (rc == 0 && op->copyout)
		hoist__op_copyout(c, op);
	if (rc && !*err)
		*err = rc;
	hoist__op_free(c, op);
}

/* An in-flight staged get: blocking callers keep a small pipeline, an
 * aggregating region hands it to the nbi list (completed by its quiet). */
struct pipe {
	struct hoist_op *q[GET_PIPELINE];
	unsigned first, count, depth;
	int nbi;
	int err;
};

static void pipe_init(struct hoist_ctx *c, struct pipe *p, int nbi)
{
	memset(p, 0, sizeof(*p));
	p->depth = c->nops < GET_PIPELINE ? c->nops : GET_PIPELINE;
	p->nbi = nbi;
}

static void pipe_push(struct hoist_ctx *c, struct pipe *p, struct hoist_op *op)
{
	if (p->nbi) {
		hoist__nbi_append(c, op);
		return;
	}
	p->q[(p->first + p->count) % GET_PIPELINE] = op;
	p->count++;
}

static void pipe_pop(struct hoist_ctx *c, struct pipe *p)
{
	finish(c, p->q[p->first], &p->err);
	p->first = (p->first + 1) % GET_PIPELINE;
	p->count--;
}

/* An op slot and staging space for a get of len bytes, finishing earlier
 * pipeline entries when short. */
static int pipe_slot(struct hoist_ctx *c, struct pipe *p, uint64_t len, struct hoist_op **out)
{
	if (!p->nbi && p->count == p->depth)
		pipe_pop(c, p);
	struct hoist_op *op;
	int rc = hoist__op_alloc(c, &op);
	if (rc)
		return rc;
	uint64_t soff;
	int64_t id;
	while ((id = staging_alloc(&c->stage, len, &soff)) == -EAGAIN && p->count)
		pipe_pop(c, p);
	if (id == -EAGAIN)
		id = hoist__stage_alloc_wait(c, len, &soff);
	if (id < 0) {
		hoist__op_free(c, op);
		return (int)id;
	}
	op->stage_id = id;
	op->stage_off = soff;
	*out = op;
	return 0;
}

static int pipe_end(struct hoist_ctx *c, struct pipe *p, int rc)
{
	while (p->count)
		pipe_pop(c, p);
	return rc ? rc : p->err;
}

/* ---- strided ------------------------------------------------------------- */

HOIST_API int hoist_put_strided(int pe, void *dst, ptrdiff_t dst_stride, const void *src,
				ptrdiff_t src_stride, size_t elem_size, size_t count)
{
	struct hoist_ctx *c = &hoist__g;
	int rc = common_checks(c, pe);
	if (rc)
		return rc;
	if (count == 0 || elem_size == 0)
		return 0;
	uint64_t roff, lo, hi, total;
	if ((rc = strided_box(c, dst, dst_stride, elem_size, count, &roff, &lo, &hi)))
		return rc;
	if (!src || __builtin_mul_overflow((uint64_t)elem_size, (uint64_t)count, &total))
		return -EINVAL;
	size_t per = hoist__chunk_bytes(c) / elem_size;
	if (per == 0) { /* elements bigger than a staging chunk: one put each */
		for (size_t i = 0; i < count; i++) {
			rc = hoist_put(pe, (char *)dst + (ptrdiff_t)i * dst_stride,
				       (const char *)src + (ptrdiff_t)i * src_stride, elem_size);
			if (rc)
				return rc;
		}
		return 0;
	}
	uint8_t agg = 0;
	if (c->agg_depth && hoist__agg_put(c, pe, lo, hi - lo, NULL))
		agg = HOIST_SQE_F_AGG;
	/* its source may be the destination of an aggregated get in flight
	 * (copied out only at the region's end): the box of its elements */
	if (agg && c->agg_get_hi) {
		const char *s0 = src, *s1 = (const char *)src + (ptrdiff_t)(count - 1) * src_stride;
		const char *slo = s0 < s1 ? s0 : s1, *shi = (s0 < s1 ? s1 : s0) + elem_size;
		if (slo < c->agg_get_hi && shi > c->agg_get_lo) {
			hoist__agg_break(c);
			agg = 0;
		}
	}
	for (size_t i = 0; i < count;) {
		size_t n = count - i < per ? count - i : per;
		uint64_t soff;
		int64_t id = hoist__stage_alloc_wait(c, (uint64_t)n * elem_size, &soff);
		if (id < 0)
			return (int)id;
		char *to = c->staging_base + soff;
		for (size_t k = 0; k < n; k++)
			memcpy(to + k * elem_size, (const char *)src + (ptrdiff_t)(i + k) * src_stride,
			       elem_size);
		uint64_t r = (uint64_t)((int64_t)roff + (int64_t)i * dst_stride);
		/* pending node barriers' notify first: it takes a slot */
		if ((rc = hoist__nb_flush(c))) {
			staging_release(&c->stage, id);
			return rc;
		}
		uint32_t at = c->ring.sq_tail;
		if ((rc = post_multi(c, HOIST_OP_PUT_STRIDED, agg, pe, r, elem_size, soff,
				     (uint64_t)dst_stride, n, 0))) {
			staging_release(&c->stage, id);
			return rc;
		}
		staging_bind_sq(&c->stage, id, at);
		i += n;
	}
	if (!c->auto_overlap && !agg)
		return hoist__quiet(c);
	return 0;
}

HOIST_API int hoist_get_strided(void *dst, ptrdiff_t dst_stride, int pe, const void *src,
				ptrdiff_t src_stride, size_t elem_size, size_t count)
{
	struct hoist_ctx *c = &hoist__g;
	int rc = common_checks(c, pe);
	if (rc)
		return rc;
	if (count == 0 || elem_size == 0)
		return 0;
	uint64_t roff, lo, hi, total;
	if ((rc = strided_box(c, src, src_stride, elem_size, count, &roff, &lo, &hi)))
		return rc;
	if (!dst || __builtin_mul_overflow((uint64_t)elem_size, (uint64_t)count, &total))
		return -EINVAL;
	size_t per = hoist__chunk_bytes(c) / elem_size;
	if (per == 0) {
		for (size_t i = 0; i < count; i++) {
			rc = hoist_get((char *)dst + (ptrdiff_t)i * dst_stride, pe,
				       (const char *)src + (ptrdiff_t)i * src_stride, elem_size);
			if (rc)
				return rc;
		}
		return 0;
	}
	int agg = 0;
	if (c->agg_depth) {
		/* the local box of the destination elements */
		char *d0 = dst, *d1 = (char *)dst + (ptrdiff_t)(count - 1) * dst_stride;
		char *llo = d0 < d1 ? d0 : d1, *lhi = (d0 < d1 ? d1 : d0) + elem_size;
		agg = hoist__agg_get(c, pe, lo, hi - lo, NULL);
		if (agg) {
			if (!c->agg_get_lo || llo < c->agg_get_lo)
				c->agg_get_lo = llo;
			if (lhi > c->agg_get_hi)
				c->agg_get_hi = lhi;
		}
	}
	struct pipe p;
	pipe_init(c, &p, agg);
	for (size_t i = 0; i < count && !p.err;) {
		size_t n = count - i < per ? count - i : per;
		struct hoist_op *op;
		if ((rc = pipe_slot(c, &p, (uint64_t)n * elem_size, &op)))
			return pipe_end(c, &p, rc);
		op->copyout = 2;
		op->dst = (char *)dst + (ptrdiff_t)i * dst_stride;
		op->dst_stride = dst_stride;
		op->elem = elem_size;
		op->count = n;
		op->len = (uint64_t)n * elem_size;
		uint64_t r = (uint64_t)((int64_t)roff + (int64_t)i * src_stride);
		if ((rc = post_multi(c, HOIST_OP_GET_STRIDED,
				     (uint8_t)(HOIST_SQE_F_CQE | (agg ? HOIST_SQE_F_AGG : 0)), pe, r,
				     elem_size, op->stage_off, (uint64_t)src_stride, n,
				     hoist__op_udata(c, op)))) {
			hoist__op_free(c, op);
			return pipe_end(c, &p, rc);
		}
		pipe_push(c, &p, op);
		i += n;
	}
	return pipe_end(c, &p, 0);
}

/* ---- vector -------------------------------------------------------------- */

/* Checks every element of a list: inside the heap at base. Sum of lengths. */
static int vec_check(struct hoist_ctx *c, const void *base, const hoist_vec_t *vec, size_t nvec,
		     uint64_t *boff, uint64_t *total, uint64_t *lo, uint64_t *hi)
{
	if (nvec && !vec)
		return -EINVAL;
	uint64_t b, sum = 0, rlo, rhi; /* every element in base's part (heap, data) */
	if (hoist__sym_region(c, base, &b, &rlo, &rhi))
		return -EFAULT;
	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t k = 0; k < nvec; k++) {
		uint64_t o;
		if (__builtin_add_overflow(b, (uint64_t)vec[k].off, &o) ||
		    !hoist_range_ok(o, vec[k].len, rhi))
			return -EFAULT;
		if (__builtin_add_overflow(sum, (uint64_t)vec[k].len, &sum))
			return -EINVAL;
		if (!vec[k].len)
			continue;
		if (o < *lo)
			*lo = o;
		if (o + vec[k].len > *hi)
			*hi = o + vec[k].len;
	}
	if (*lo > *hi)
		*lo = *hi = 0;
	*boff = b;
	*total = sum;
	return 0;
}

/* The next batch of a list, from element *k at byte *part of it: at most
 * room bytes of list + data (elements longer than that are split). Writes
 * the batch's list to out (if not NULL); returns its element count and
 * adds its data bytes to *bytes. */
static uint64_t vec_batch(const hoist_vec_t *vec, size_t nvec, size_t *k, uint64_t *part,
			  uint64_t room, struct hoist_vec_elem *out, uint64_t *bytes)
{
	uint64_t n = 0, used = 0;
	*bytes = 0;
	while (*k < nvec) {
		uint64_t left = vec[*k].len - *part;
		if (left == 0) {
			(*k)++;
			*part = 0;
			continue;
		}
		if (used + sizeof(struct hoist_vec_elem) + 1 > room)
			break;
		uint64_t take = room - used - sizeof(struct hoist_vec_elem);
		if (take > left)
			take = left;
		if (out)
			out[n] = (struct hoist_vec_elem){.off = vec[*k].off + *part, .len = take};
		n++;
		used += sizeof(struct hoist_vec_elem) + take;
		*bytes += take;
		*part += take;
		if (n == HOIST_VEC_MAX)
			break;
	}
	return n;
}

HOIST_API int hoist_put_vec(int pe, void *dst, const hoist_vec_t *vec, size_t nvec, const void *src)
{
	struct hoist_ctx *c = &hoist__g;
	int rc = common_checks(c, pe);
	if (rc)
		return rc;
	uint64_t base, total, lo, hi;
	if ((rc = vec_check(c, dst, vec, nvec, &base, &total, &lo, &hi)))
		return rc;
	if (total == 0)
		return 0;
	if (!src)
		return -EINVAL;
	uint8_t agg = 0;
	if (c->agg_depth && hoist__agg_put(c, pe, lo, hi - lo, NULL))
		agg = HOIST_SQE_F_AGG;
	/* its source may be the destination of an aggregated get in flight */
	if (agg && c->agg_get_hi && (const char *)src < c->agg_get_hi &&
	    (const char *)src + total > c->agg_get_lo) {
		hoist__agg_break(c);
		agg = 0;
	}
	uint64_t room = hoist__chunk_bytes(c);
	size_t k = 0;
	uint64_t part = 0, done = 0;
	while (done < total) {
		size_t k0 = k;
		uint64_t part0 = part, bytes;
		uint64_t n = vec_batch(vec, nvec, &k, &part, room, NULL, &bytes);
		uint64_t soff;
		uint64_t lbytes = n * sizeof(struct hoist_vec_elem);
		int64_t id = hoist__stage_alloc_wait(c, lbytes + bytes, &soff);
		if (id < 0)
			return (int)id;
		k = k0;
		part = part0;
		vec_batch(vec, nvec, &k, &part, room, (struct hoist_vec_elem *)(c->staging_base + soff),
			  &bytes);
		memcpy(c->staging_base + soff + lbytes, (const char *)src + done, bytes);
		/* pending node barriers' notify first: it takes a slot */
		if ((rc = hoist__nb_flush(c))) {
			staging_release(&c->stage, id);
			return rc;
		}
		uint32_t at = c->ring.sq_tail;
		if ((rc = post_multi(c, HOIST_OP_PUT_VEC, agg, pe, base, bytes, soff + lbytes, n, soff,
				     0))) {
			staging_release(&c->stage, id);
			return rc;
		}
		staging_bind_sq(&c->stage, id, at);
		done += bytes;
	}
	if (!c->auto_overlap && !agg)
		return hoist__quiet(c);
	return 0;
}

HOIST_API int hoist_get_vec(void *dst, int pe, const void *src, const hoist_vec_t *vec, size_t nvec)
{
	struct hoist_ctx *c = &hoist__g;
	int rc = common_checks(c, pe);
	if (rc)
		return rc;
	uint64_t base, total, lo, hi;
	if ((rc = vec_check(c, src, vec, nvec, &base, &total, &lo, &hi)))
		return rc;
	if (total == 0)
		return 0;
	if (!dst)
		return -EINVAL;
	int agg = c->agg_depth && hoist__agg_get(c, pe, lo, hi - lo, NULL);
	if (agg) {
		char *l = dst, *h = (char *)dst + total;
		if (!c->agg_get_lo || l < c->agg_get_lo)
			c->agg_get_lo = l;
		if (h > c->agg_get_hi)
			c->agg_get_hi = h;
	}
	uint64_t room = hoist__chunk_bytes(c);
	size_t k = 0;
	uint64_t part = 0, done = 0;
	struct pipe p;
	pipe_init(c, &p, agg);
	while (done < total && !p.err) {
		size_t k0 = k;
		uint64_t part0 = part, bytes;
		uint64_t n = vec_batch(vec, nvec, &k, &part, room, NULL, &bytes);
		uint64_t lbytes = n * sizeof(struct hoist_vec_elem);
		struct hoist_op *op;
		if ((rc = pipe_slot(c, &p, lbytes + bytes, &op)))
			return pipe_end(c, &p, rc);
		k = k0;
		part = part0;
		vec_batch(vec, nvec, &k, &part, room,
			  (struct hoist_vec_elem *)(c->staging_base + op->stage_off), &bytes);
		uint64_t list_off = op->stage_off;
		op->stage_off += lbytes; /* the data follows the list */
		op->copyout = 1;
		op->dst = (char *)dst + done;
		op->len = bytes;
		if ((rc = post_multi(c, HOIST_OP_GET_VEC,
				     (uint8_t)(HOIST_SQE_F_CQE | (agg ? HOIST_SQE_F_AGG : 0)), pe, base,
				     bytes, op->stage_off, n, list_off, hoist__op_udata(c, op)))) {
			hoist__op_free(c, op);
			return pipe_end(c, &p, rc);
		}
		pipe_push(c, &p, op);
		done += bytes;
	}
	return pipe_end(c, &p, 0);
}
