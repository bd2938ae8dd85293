/*
 * Packed operations (wire.h, W_PACK / W_PACK_REPLY), the parts every
 * transport shares: checking a pack, executing it against this node's PEs
 * and writing its reply. tcp (net.c) calls them on frames; a transport that
 * carries packs as active messages (verbs SEND/RECV: both payloads are at
 * most WIRE_AM_MAX_PAYLOAD) calls them on its receive buffers.
 * Progress thread.
 */
#ifndef HOISTD_PACK_H
#define HOISTD_PACK_H

#include <stdint.h>

#include "transport.h"
#include "wire.h"

struct daemon;
struct pack_open;
struct peer_stats;

/* Check a pack's structure (every element complete, known ops, reserved
 * fields zero, exact length, its reply within WIRE_AM_MAX_PAYLOAD).
 * 0 and *reply_len (the reply payload's size at most), or -EPROTO. */
int pack_check(const struct wire_pack *w, const char *payload, uint64_t plen, uint64_t *reply_len);

/* Execute a checked pack in order, each element against its target PE's
 * heap (-ECONNRESET: PE not here, -EINVAL: segment, -EFAULT: outside the
 * heap), writing the reply payload to out (reply_len bytes available).
 * Returns the reply payload's length; *ops / *bytes: elements that
 * succeeded and their bytes. */
uint64_t pack_execute(struct daemon *d, const struct wire_pack *w, const char *payload, char *out,
		      uint64_t *ops, uint64_t *bytes);

/* Does this put/get travel in a pack? XP_RF_PACK (strided/vector elements
 * and aggregation-region operations) always when it fits one, other small
 * operations when coalescing is on; XP_RF_ALONE (prefetches) never. */
int pack_eligible(struct daemon *d, const struct xp_req *rq);

/* Request and reply payload bytes one put/get (kind) of len bytes adds to
 * a pack. 0, or -EOPNOTSUPP/-EPROTO for a kind a pack does not carry
 * (the transport refused and counted it before; this only never lets one
 * through as a get). */
int pack_elem_size(enum xp_kind kind, uint64_t len, uint32_t *req, uint32_t *rep);

/* Must the open pack pk be sent before rq, needing req request and rep
 * reply bytes, joins (another job, or no room)? */
int pack_must_close(const struct pack_open *pk, const struct xp_req *rq, uint32_t req, uint32_t rep);

/* Open the empty pack pk for its first element rq (buffer of
 * WIRE_AM_MAX_PAYLOAD kept across packs). 0 or -ENOMEM. */
int pack_begin(struct pack_open *pk, const struct xp_req *rq);

/* Append one put/get to the open pack pk (opened by pack_begin, room
 * checked by pack_must_close): the element, a put's data copied now (the
 * client reuses its staging and descriptor), its cookie. 0, -ENOMEM, or
 * pack_elem_size()'s error for another kind (nothing appended). */
int pack_append(struct pack_open *pk, const struct xp_req *rq);

/* Stats of one pack of nelem operations sent (packs_out, ops_packed,
 * packs_mixed, hdr_bytes_saved). */
void pack_count_sent(struct peer_stats *st, const struct pack_open *pk);

/* Forget the open pack's contents after it was sent or failed. */
void pack_reset(struct pack_open *pk);

#endif
