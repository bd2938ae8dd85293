/*
 * Registration of clients' memory: the one door attach.c and the engine
 * use, whatever the transport.
 *
 * - register / deregister: a client's segments (heap, staging, prefetch
 *   region) at attach, against the node's memlock budget (d->pinned_limit,
 *   main.c). The transport is asked only for its handles (mem_reg: verbs
 *   registers memory regions; tcp and the local path have none, and then
 *   nothing is pinned and no budget applies).
 * - retire: a departed client's handles and the memory under them stay
 *   for a grace period, max(peer_timeout_ms, REG_GRACE_MIN_MS): a peer may
 *   still hold its heap's remote key (the PE_GONE notice that invalidates
 *   it is on its way) and use it. Released by reg_timers when due, or
 *   early (oldest first) when an attach needs the bytes.
 * - the pinned table: every attached heap a peer may address directly,
 *   with its remote key (the transport's, mem_rkey, or this table's own
 *   tag << 16 | slot) and a generation; reg_entry is what a peer caches.
 *
 * Threads: register/deregister/retire on the control thread; reg_timers,
 * the table (pin/unpin/entry/find) on the progress thread; reg_pinned_add
 * on any. The deferred list is under a mutex (both threads release it).
 */
#ifndef HOISTD_REG_H
#define HOISTD_REG_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "region.h"

struct daemon;
struct client;
struct wire_entry;

#define REG_GRACE_MIN_MS 2000ull /* a departed client's registrations outlive it */
#define REG_NHANDLES 3           /* heap, staging, prefetch region (XP_NMR) */

/* One entry of the pinned table. */
struct reg_pin {
	struct client *client;
	char *base;
	uint64_t len;
	uint32_t gen;
	uint32_t rkey;  /* what a peer sends back: the transport's remote key of
			 * the heap, or tag << 16 | slot */
	uint16_t tag;
	uint8_t used;
};

/* A departed client's handles and the memory under them (retire). */
struct reg_defer {
	struct reg_defer *next;
	uint64_t due_ns;
	void *mr[REG_NHANDLES];
	struct region rg[REG_NHANDLES];
	uint64_t pinned;
};

struct reg {
	pthread_mutex_t lock;          /* the deferred list */
	struct reg_defer *defer, **defer_tail; /* oldest (earliest due) first */
	uint64_t defer_due;            /* due time of the oldest, 0: none (atomic) */
	struct reg_pin *pins;
	uint32_t npins;
	int ready;
};

/* Set up (main thread, before the threads and the transport start) and
 * free (after they stopped). 0 or -ENOMEM. */
int reg_init(struct daemon *d);
void reg_fini(struct daemon *d);

/* Register client c's segments (control thread, at attach): check the
 * budget (cutting the grace period of departed clients if that makes the
 * bytes fit), then the transport's mem_reg. 0, or -ENOMEM/-errno with why
 * filled for the client (counted as pinned_refused). */
int reg_register(struct daemon *d, struct client *c, char *why, size_t whylen);
/* The client is being freed (control thread): its handles, and the
 * segments they cover, go on the deferred list (pinned_deferred); its
 * regions are left unmapped (base NULL) for region_destroy. Nothing to
 * keep (no handles): nothing happens. */
void reg_retire(struct daemon *d, struct client *c);
/* Release c's handles and budget now. */
void reg_deregister(struct daemon *d, struct client *c);
/* Progress thread: release the deferred registrations due by now. */
void reg_timers(struct daemon *d, uint64_t now);
/* Stopping (threads joined, the transport not yet stopped): release every
 * client's handles and every deferred registration. */
void reg_release_all(struct daemon *d);

/* Budget bookkeeping of what a transport pins for itself (verbs: receive
 * and bounce buffers): delta bytes more (or fewer). Any thread. */
void reg_pinned_add(struct daemon *d, int64_t delta);

/* The pinned table (progress thread). reg_pin gives c's heap an entry:
 * 0 or -ENOSPC (table full: reachable by name only). */
int reg_pin(struct daemon *d, struct client *c);
void reg_unpin(struct daemon *d, struct client *c);
/* What a peer may cache to address c's heap directly: 0 and *e filled
 * (node, remote key, base, length, generation, valid), or -ENOMEM (no
 * entry, or the transport has no handle for the heap). */
int reg_entry(struct daemon *d, const struct client *c, struct wire_entry *e);
/* The entry a peer's key (tag << 16 | slot) and generation name, or NULL
 * (stale: the client left, or the slot went to another one). */
const struct reg_pin *reg_find(const struct daemon *d, uint32_t rkey, uint32_t gen);

#endif
