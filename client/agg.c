/*
 * Aggregation regions (seed 000, section 3.3): between
 * hoist_aggregate_begin and hoist_aggregate_end, puts and gets carry
 * HOIST_SQE_F_AGG; the daemon holds them in one pack per destination node
 * until the region ends. Gets in a region complete at its end (their dst
 * must not be read before). A conflict ends aggregation early and later
 * operations of the region are issued normally: a get of a remote range an
 * aggregated put of this region writes (bounding box per PE), or a put
 * whose source is the destination of an aggregated get still in flight.
 * Synchronisation in the region (fence, quiet, barrier: descriptors
 * without the flag) makes the daemon send what it holds.
 *
 * Only bookkeeping and quiet (wait.c): rma.c and vec.c ask here whether an
 * operation may be aggregated, nothing here calls them.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

static void agg_reset(struct hoist_ctx *c)
{
	for (int i = 0; c->agg_lo && i < c->size; i++) {
		c->agg_lo[i] = UINT64_MAX;
		c->agg_hi[i] = 0;
	}
	c->agg_get_lo = c->agg_get_hi = NULL;
}

/* A conflict: what the region aggregated so far completes now (the quiet
 * sends the held packs and waits), the rest of the region issues normally. */
void hoist__agg_break(struct hoist_ctx *c)
{
	c->agg_broken = 1;
	c->agg_early_ends++;
	int rc = hoist__quiet(c);
	if (rc && !c->sticky_err)
		c->sticky_err = rc; /* reported by the region's end */
}

int hoist__agg_put(struct hoist_ctx *c, int pe, uint64_t roff, uint64_t n, const void *src)
{
	if (!c->agg_depth || c->agg_broken)
		return 0;
	/* its source may be the destination of an aggregated get in flight */
	if (src && c->agg_get_hi && (const char *)src < c->agg_get_hi &&
	    (const char *)src + n > c->agg_get_lo) {
		hoist__agg_break(c);
		return 0;
	}
	if (roff < c->agg_lo[pe])
		c->agg_lo[pe] = roff;
	if (roff + n > c->agg_hi[pe])
		c->agg_hi[pe] = roff + n;
	c->agg_ops++;
	return 1;
}

int hoist__agg_get(struct hoist_ctx *c, int pe, uint64_t roff, uint64_t n, const void *dst)
{
	if (!c->agg_depth || c->agg_broken)
		return 0;
	/* reads what an aggregated put of this region writes: the seed's
	 * conflict; end aggregation, then issue normally */
	if (roff < c->agg_hi[pe] && roff + n > c->agg_lo[pe]) {
		hoist__agg_break(c);
		return 0;
	}
	if (dst) {
		const char *l = dst, *h = (const char *)dst + n;
		if (!c->agg_get_lo || l < c->agg_get_lo)
			c->agg_get_lo = (char *)l;
		if (h > c->agg_get_hi)
			c->agg_get_hi = (char *)h;
	}
	c->agg_ops++;
	return 1;
}

HOIST_API int hoist_aggregate_begin(void)
{
	struct hoist_ctx *c = &hoist__g;
	if (!c->initialized)
		return -ENOTCONN;
	if (c->agg_depth++)
		return 0; /* nested: one region */
	if (!c->agg_lo) {
		c->agg_lo = calloc((size_t)c->size, sizeof(*c->agg_lo));
		c->agg_hi = calloc((size_t)c->size, sizeof(*c->agg_hi));
		if (!c->agg_lo || !c->agg_hi) {
			free(c->agg_lo);
			free(c->agg_hi);
			c->agg_lo = c->agg_hi = NULL;
			c->agg_depth = 0;
			return -ENOMEM;
		}
	}
	c->agg_broken = 0;
	agg_reset(c);
	return 0;
}

HOIST_API int hoist_aggregate_end(void)
{
	struct hoist_ctx *c = &hoist__g;
	if (!c->initialized)
		return -ENOTCONN;
	if (!c->agg_depth)
		return -EINVAL;
	if (--c->agg_depth)
		return 0;
	/* the quiet is the first descriptor without HOIST_SQE_F_AGG: the
	 * daemon sends the held packs, one per node, and completes them */
	int rc = hoist__quiet(c);
	c->agg_broken = 0;
	agg_reset(c);
	return rc;
}
