/* Active messages between daemons (barrier rounds, membership,
 * departures, collectives): senders, and the transport-independent
 * dispatcher through a table indexed by wire message type that each
 * owning stage registers its handler into at start. */
#ifndef HOISTD_AM_H
#define HOISTD_AM_H

#include <stdint.h>

#include "wire.h"

struct daemon;
struct announce;

int am_send_barrier(struct daemon *d, int32_t node, uint64_t job, uint32_t epoch, uint32_t round);
int am_send_member(struct daemon *d, int32_t node, const struct announce *a);
int am_send_pe_gone(struct daemon *d, int32_t node, uint64_t job, int32_t pe, int clean,
		    uint32_t epoch, uint64_t nonce);

/* What a stage registers for one message type. */
struct am_handler {
	const char *name; /* for the log: "barrier", "member", ... */
	uint16_t hlen;    /* the extension header's exact size */
	/* the payload (and the extension's fields) well formed? NULL: a
	 * message of this type carries no payload */
	int (*payload_ok)(const void *ext, uint64_t plen);
	/* act on a well-formed one from node `from`: 0, or -errno (-EPROTO:
	 * refused, the sender broke the protocol) */
	int (*recv)(struct daemon *d, int32_t from, const void *ext, const void *payload,
		    uint64_t plen);
};

/* Register h (static storage) for wire message type `type`, at start
 * before the progress thread runs. 0; -EINVAL for a type past W__COUNT;
 * -EEXIST when another handler has the type. Registering the same
 * handler again is a no-op. */
int am_register(uint8_t type, const struct am_handler *h);
/* The stages' registrations (each registers the messages it owns); the
 * daemon calls all of them at start. */
void barrier_am_register(void);
void coll_am_register(void);
void jobs_am_register(void);
void amo_am_register(void); /* transport/amo.c: W_AMO, W_AMO_REPLY */

/* Is type registered (am_dispatch() serves it, whatever the transport)? */
int am_handles(uint8_t type);
/* Is (type, ext, payload length) a well-formed message of a registered
 * type? */
int am_payload_ok(uint8_t type, const void *ext, uint16_t hlen, uint64_t plen);
/* Act on one received from node `from`. 0, or -EPROTO (unregistered type,
 * malformed, or refused by its handler: counted as am_refused; the
 * transport decides what becomes of the connection) or another -errno. */
int am_dispatch(struct daemon *d, int32_t from, uint8_t type, const void *ext, uint16_t hlen,
		const void *payload, uint64_t plen);

#endif
