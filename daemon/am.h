/* Active messages between daemons (barrier rounds, membership,
 * departures): senders and the transport-independent dispatcher. */
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

/* Is (type, ext, payload length) a well-formed active message? */
int am_payload_ok(uint8_t type, const void *ext, uint16_t hlen, uint64_t plen);
/* Act on one received from node `from`. 0 or -EPROTO (drop the peer). */
/* Is type one of the messages am_dispatch() serves (whatever the transport)? */
int am_handles(uint8_t type);
int am_dispatch(struct daemon *d, int32_t from, uint8_t type, const void *ext, uint16_t hlen,
		const void *payload, uint64_t plen);

#endif
