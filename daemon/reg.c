/*
 * Registration of clients' memory (see reg.h): the budget, the grace
 * period and the pinned table, once for every transport; the transport
 * only makes and releases its handles (transport.h: mem_reg, mem_dereg,
 * mem_rkey).
 */
#include "reg.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "transport.h"
#include "wire.h"

void reg_pinned_add(struct daemon *d, int64_t delta)
{
	uint64_t v = __atomic_add_fetch(&d->pinned_bytes, (uint64_t)delta, __ATOMIC_RELAXED);
	__atomic_store_n(&d->vst.pinned_bytes, v, __ATOMIC_RELAXED);
}

static int has_handles(void *const *mr)
{
	for (int i = 0; i < REG_NHANDLES; i++)
		if (mr[i])
			return 1;
	return 0;
}

static void handles_release(struct daemon *d, void **mr)
{
	if (has_handles(mr) && d->xport && d->xport->mem_dereg)
		d->xport->mem_dereg(d, mr);
	for (int i = 0; i < REG_NHANDLES; i++)
		mr[i] = NULL;
}

int reg_init(struct daemon *d)
{
	struct reg *r = &d->reg;
	memset(r, 0, sizeof(*r));
	r->npins = (uint32_t)d->cfg.max_clients;
	if (r->npins > 65536)
		r->npins = 65536; /* the slot is the low 16 bits of the key */
	r->pins = calloc(r->npins, sizeof(*r->pins));
	if (!r->pins)
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	r->defer_tail = &r->defer;
	r->ready = 1;
	return 0;
}

void reg_fini(struct daemon *d)
{
	struct reg *r = &d->reg;
	if (!r->ready)
		return;
	reg_release_all(d);
	free(r->pins);
	r->pins = NULL;
	r->npins = 0;
	pthread_mutex_destroy(&r->lock);
	r->ready = 0;
}

static void defer_free(struct daemon *d, struct reg_defer *e)
{
	handles_release(d, e->mr);
	for (int i = 0; i < REG_NHANDLES; i++)
		region_destroy(&e->rg[i]);
	reg_pinned_add(d, -(int64_t)e->pinned);
	free(e);
}

/* Release the deferred registrations due by now, or (need) the oldest ones
 * until need more bytes fit the budget. Any thread. Returns the bytes
 * released. */
static uint64_t defer_release(struct daemon *d, uint64_t now, uint64_t need)
{
	struct reg *r = &d->reg;
	struct reg_defer *done = NULL, **tail = &done;
	uint64_t freed = 0;
	pthread_mutex_lock(&r->lock);
	uint64_t used = __atomic_load_n(&d->pinned_bytes, __ATOMIC_RELAXED);
	while (r->defer) {
		struct reg_defer *e = r->defer;
		if (need ? used - freed + need <= d->pinned_limit : e->due_ns > now)
			break;
		r->defer = e->next;
		freed += e->pinned;
		e->next = NULL;
		*tail = e;
		tail = &e->next;
	}
	if (!r->defer)
		r->defer_tail = &r->defer;
	__atomic_store_n(&r->defer_due, r->defer ? r->defer->due_ns : 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&r->lock);
	while (done) {
		struct reg_defer *e = done;
		done = e->next;
		if (need)
			STAT_INC(&d->vst, pinned_grace_cut);
		defer_free(d, e);
	}
	return freed;
}

int reg_register(struct daemon *d, struct client *c, char *why, size_t whylen)
{
	if (!d->xport || !d->xport->mem_reg)
		return 0; /* nothing is pinned: no handles, no budget */
	uint64_t need = c->heap.bytes + c->staging.bytes + (c->pf.base ? c->pf.bytes : 0);
	uint64_t used = __atomic_load_n(&d->pinned_bytes, __ATOMIC_RELAXED);
	if ((used + need > d->pinned_limit || used + need < used) &&
	    __atomic_load_n(&d->reg.defer_due, __ATOMIC_RELAXED)) {
		/* the budget before the grace period of departed clients: a
		 * peer's stale key is unlikely this late, a refusal certain */
		defer_release(d, 0, need);
		used = __atomic_load_n(&d->pinned_bytes, __ATOMIC_RELAXED);
	}
	if (used + need > d->pinned_limit || used + need < used) {
		STAT_INC(&d->vst, pinned_refused);
		snprintf(why, whylen,
			 "cannot pin %llu bytes (heap %llu + staging %llu + prefetch %llu): the daemon's "
			 "memlock budget is %llu bytes and %llu are pinned; raise the memlock limit "
			 "(ulimit -l / RLIMIT_MEMLOCK, LimitMEMLOCK= in systemd) or hoistd's memlock_bytes",
			 (unsigned long long)need, (unsigned long long)c->heap.bytes,
			 (unsigned long long)c->staging.bytes,
			 (unsigned long long)(c->pf.base ? c->pf.bytes : 0),
			 (unsigned long long)d->pinned_limit, (unsigned long long)used);
		return -ENOMEM;
	}
	int rc = d->xport->mem_reg(d, c, why, whylen);
	if (rc) {
		handles_release(d, c->mr); /* whatever it made before failing */
		STAT_INC(&d->vst, pinned_refused);
		return rc;
	}
	c->pinned = need;
	reg_pinned_add(d, (int64_t)need);
	return 0;
}

void reg_deregister(struct daemon *d, struct client *c)
{
	handles_release(d, c->mr);
	if (c->pinned)
		reg_pinned_add(d, -(int64_t)c->pinned);
	c->pinned = 0;
}

void reg_retire(struct daemon *d, struct client *c)
{
	struct reg *r = &d->reg;
	if (!has_handles(c->mr))
		return;
	struct reg_defer *e = r->ready ? calloc(1, sizeof(*e)) : NULL;
	if (!e) {
		reg_deregister(d, c);
		return;
	}
	struct region *rg[REG_NHANDLES] = {&c->heap, &c->staging, &c->pf};
	for (int i = 0; i < REG_NHANDLES; i++) {
		e->mr[i] = c->mr[i];
		c->mr[i] = NULL;
		e->rg[i] = *rg[i];
		region_close_fd(&e->rg[i]); /* the mapping is what stays */
		rg[i]->base = NULL;
		rg[i]->fd = -1;
	}
	e->pinned = c->pinned;
	c->pinned = 0;
	uint64_t grace = d->cfg.peer_timeout_ms > REG_GRACE_MIN_MS ? d->cfg.peer_timeout_ms
								    : REG_GRACE_MIN_MS;
	e->due_ns = now_ns() + grace * 1000000ull;
	pthread_mutex_lock(&r->lock);
	*r->defer_tail = e;
	r->defer_tail = &e->next;
	__atomic_store_n(&r->defer_due, r->defer->due_ns, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&r->lock);
	STAT_INC(&d->vst, pinned_deferred);
}

void reg_timers(struct daemon *d, uint64_t now)
{
	uint64_t due = __atomic_load_n(&d->reg.defer_due, __ATOMIC_RELAXED);
	if (due && now >= due)
		defer_release(d, now, 0);
}

void reg_release_all(struct daemon *d)
{
	if (!d->reg.ready)
		return;
	for (struct client *c = d->clients; c; c = c->ctl_next)
		reg_deregister(d, c);
	defer_release(d, UINT64_MAX, 0);
}

/* ---- the pinned table (progress thread) ---------------------------------- */

int reg_pin(struct daemon *d, struct client *c)
{
	struct reg *r = &d->reg;
	for (uint32_t i = 0; i < r->npins; i++) {
		struct reg_pin *p = &r->pins[i];
		if (p->used)
			continue;
		p->used = 1;
		p->client = c;
		p->base = c->heap.base;
		p->len = c->heap.bytes;
		p->gen++;
		p->tag = (uint16_t)(randombytes_random() | 1);
		p->rkey = c->mr[0] && d->xport->mem_rkey ? d->xport->mem_rkey(c->mr[0])
							 : (uint32_t)p->tag << 16 | i;
		c->pin_slot = i;
		return 0;
	}
	return -ENOSPC;
}

void reg_unpin(struct daemon *d, struct client *c)
{
	struct reg *r = &d->reg;
	if (c->pin_slot >= r->npins)
		return;
	struct reg_pin *p = &r->pins[c->pin_slot];
	if (p->used && p->client == c) {
		p->used = 0;
		p->client = NULL;
		p->tag = 0;
		p->rkey = 0;
	}
}

int reg_entry(struct daemon *d, const struct client *c, struct wire_entry *e)
{
	struct reg *r = &d->reg;
	const struct reg_pin *p = c->pin_slot < r->npins ? &r->pins[c->pin_slot] : NULL;
	if (!p || !p->used || p->client != c)
		return -ENOMEM; /* the table was full: by name only */
	if (d->xport->mem_reg && !c->mr[0])
		return -ENOMEM; /* the transport needs a handle it does not have */
	*e = (struct wire_entry){.node = d->net.self, .rkey = p->rkey,
				 .base = (uint64_t)(uintptr_t)p->base, .len = p->len,
				 .gen = p->gen, .valid = 1};
	return 0;
}

const struct reg_pin *reg_find(const struct daemon *d, uint32_t rkey, uint32_t gen)
{
	const struct reg *r = &d->reg;
	uint32_t slot = rkey & 0xffff;
	const struct reg_pin *p = slot < r->npins ? &r->pins[slot] : NULL;
	if (!p || !p->used || p->rkey != rkey || p->gen != gen)
		return NULL;
	return p;
}
