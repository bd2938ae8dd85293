#include "staging.h"

#include <errno.h>
#include <stdlib.h>

int staging_init(struct staging *s, uint64_t size, uint32_t nrec)
{
	if (size < 2 * STAGING_ALIGN || !nrec || (nrec & (nrec - 1)))
		return -EINVAL;
	s->rec = calloc(nrec, sizeof(*s->rec));
	if (!s->rec)
		return -ENOMEM;
	s->size = size & ~(uint64_t)(STAGING_ALIGN - 1);
	s->head = s->tail = 0;
	s->nrec = nrec;
	s->rhead = s->rtail = 0;
	s->sq_head = 0;
	return 0;
}

void staging_fini(struct staging *s)
{
	free(s->rec);
	s->rec = NULL;
}

int64_t staging_alloc(struct staging *s, uint64_t len, uint64_t *off)
{
	if (len > staging_max_alloc(s)) /* before rounding: no overflow */
		return -ENOMEM;
	if (len == 0)
		len = 1;
	len = (len + STAGING_ALIGN - 1) & ~(uint64_t)(STAGING_ALIGN - 1);
	if (len > staging_max_alloc(s))
		return -ENOMEM;
	if (s->rhead - s->rtail == s->nrec)
		return -EAGAIN;
	uint64_t pos = s->head;
	uint64_t at = pos % s->size;
	if (at + len > s->size) /* do not wrap inside one allocation */
		pos += s->size - at;
	if (pos + len - s->tail > s->size)
		return -EAGAIN;
	uint32_t id = s->rhead++;
	struct staging_rec *r = &s->rec[id & (s->nrec - 1)];
	r->end = pos + len;
	r->done = 0;
	r->on_sq = 0;
	s->head = pos + len;
	*off = pos % s->size;
	return id;
}

static int sq_passed(const struct staging *s, const struct staging_rec *r)
{
	return r->on_sq && (int32_t)(s->sq_head - r->sq_idx) > 0;
}

/* Reclaim from the tail over every released record. A put payload counts
 * as released once the daemon's head passed its SQE, even if it was queued
 * behind a get that was held at the time. */
static void advance(struct staging *s)
{
	while (s->rtail != s->rhead) {
		struct staging_rec *r = &s->rec[s->rtail & (s->nrec - 1)];
		if (!r->done && !sq_passed(s, r))
			break;
		s->tail = r->end;
		s->rtail++;
	}
}

void staging_bind_sq(struct staging *s, int64_t id, uint32_t sq_idx)
{
	struct staging_rec *r = &s->rec[(uint32_t)id & (s->nrec - 1)];
	r->sq_idx = sq_idx;
	r->on_sq = 1;
}

void staging_release(struct staging *s, int64_t id)
{
	s->rec[(uint32_t)id & (s->nrec - 1)].done = 1;
	advance(s);
}

void staging_sq_done(struct staging *s, uint32_t sq_head)
{
	s->sq_head = sq_head;
	advance(s);
}

uint64_t staging_in_use(const struct staging *s)
{
	return s->head - s->tail;
}
