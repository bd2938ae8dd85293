/*
 * Packed operations (wire.h, W_PACK / W_PACK_REPLY): the pack layer every
 * transport uses. It builds a peer's open pack (pack_begin, pack_append,
 * pack_must_close, pack_due), serves a received pack (pack_serve: checked
 * whole, executed, its reply written), answers our own packs from their
 * reply (pack_res_ok per element, pack_answer for a whole reply,
 * pack_finish) and fails them on loss (pack_finish with the error). A
 * transport only carries the bytes: tcp (tcp.c) as frames, streaming a
 * reply's get data straight to the destinations; verbs as SEND/RECV active
 * messages (both payloads are at most WIRE_AM_MAX_PAYLOAD).
 *
 * The one rule for a malformed pack (its content is malformed - element
 * count, ops, reserved fields, lengths, a reply that could not travel - in
 * a message or frame that is itself intact): it is REFUSED WHOLE. None of
 * its elements is applied, it is counted in the sender's packs_refused,
 * and it is answered with a W_PACK_REPLY whose status is -EPROTO, so every
 * element of it fails with -EPROTO at the sender; the connection stays up
 * and keeps serving. A malformed reply to our own pack likewise fails every
 * element of that pack with -EPROTO (packs_refused of the answering peer)
 * and keeps the connection. What is not a pack at all stays a framing error
 * of the transport (tcp: a pack frame on the wrong connection, a payload
 * larger than any pack, a reply to no pack of ours drop the connection).
 * Progress thread.
 */
#ifndef HOISTD_PACK_H
#define HOISTD_PACK_H

#include <stdint.h>

#include "transport.h"
#include "wire.h"

struct daemon;
struct pack_open;
struct pack_slot;
struct peer_stats;

/* Check a pack's structure (every element complete, known ops, reserved
 * fields zero, exact length, its reply within WIRE_AM_MAX_PAYLOAD).
 * 0 and *reply_len (the reply payload's size at most), or -EPROTO. */
int pack_check(const struct wire_pack *w, const char *payload, uint64_t plen, uint64_t *reply_len);

/* Execute a checked pack in order, each element against its target PE's
 * heap (-ECONNRESET: PE not here, -EINVAL: segment or a misaligned atomic,
 * -EFAULT: outside the heap; an atomic by hoist_amo_apply, counted in
 * amo_served and amo_served_packed), writing the reply payload to out (reply_len bytes available).
 * Returns the reply payload's length; *ops / *bytes: elements that
 * succeeded and their bytes. */
uint64_t pack_execute(struct daemon *d, const struct wire_pack *w, const char *payload, char *out,
		      uint64_t *ops, uint64_t *bytes);

/* Serve a peer's pack (its header w, valid only if ext_ok: the header
 * extension had the right size; payload of plen bytes): checked whole, then
 * executed in order; the reply payload is written to out (room for
 * WIRE_AM_MAX_PAYLOAD bytes) and its header to *rep. A malformed pack is
 * refused (the rule above): rep->status -EPROTO, nothing applied, 0 reply
 * bytes. Counts packs_in / ops_in / bytes_in or packs_refused of node
 * from. Returns the reply payload's length. */
uint64_t pack_serve(struct daemon *d, int32_t from, const struct wire_pack *w, int ext_ok,
		    const char *payload, uint64_t plen, char *out, struct wire_pack_reply *rep);

/* Count and log a malformed pack or pack reply from node from (the rule
 * above). */
void pack_refused(struct daemon *d, int32_t from, const char *what);

/* Is r a valid result for element s of our pack (status <= 0, data only
 * for a get that succeeded and then exactly its length)? */
int pack_res_ok(const struct pack_slot *s, const struct wire_pack_res *r);

/* The whole reply (header rep, payload in of plen bytes) to our pack of n
 * elements s: get data copied to the destinations, every element completed
 * in order, s freed. A malformed reply fails them all with -EPROTO (the
 * rule above; counted). 0 or -EPROTO (malformed, handled). */
int pack_answer(struct daemon *d, int32_t from, struct pack_slot *s, uint32_t n,
		const struct wire_pack_reply *rep, const char *in, uint64_t plen);

/* Complete the n elements s of a pack, each with its own result (s[k].res)
 * if res is 0, else all with res (the pack was refused, its reply
 * malformed, or the peer lost); frees s. Completions may open and send new
 * packs: s must already be off every list. */
void pack_finish(struct daemon *d, struct pack_slot *s, uint32_t n, int res);

/* Fail every element of the unsent pack pk with res (the peer is lost);
 * pk is empty after. */
void pack_fail_open(struct daemon *d, struct pack_open *pk, int res);

/* Send the open packs through the transport's send(d, node) (0 or
 * -errno; on an error the pack stays open: a later send or the peer's
 * loss handles it): all of them (held ones too: an aggregation region
 * ended), or only those pack_due() says go (end of a progress pass). */
void pack_flush(struct daemon *d, int all, int (*send)(struct daemon *d, int32_t node));

/* End of a progress pass: must the open pack pk go now (not held by an
 * aggregation region, and not one that grew in this pass while clients
 * still have descriptors queued: it may grow in the next pass too)?
 * Starts pk's next pass. */
int pack_due(const struct daemon *d, struct pack_open *pk);

/* Does this put/get/atomic travel in a pack? XP_RF_PACK (strided/vector
 * elements and aggregation-region operations) always when it fits one,
 * other small operations (non-fetching atomics included) when coalescing
 * is on; XP_RF_ALONE (prefetches, signals) and fetching atomics never. */
int pack_eligible(struct daemon *d, const struct xp_req *rq);

/* Request and reply payload bytes one put/get (kind) of len bytes, or one
 * non-fetching atomic (XP_AMO: operands out, a status back), adds to a
 * pack. 0, or -EOPNOTSUPP/-EPROTO for a kind a pack does not carry (the
 * transport refused and counted it before; this only never lets one
 * through as a get). */
int pack_elem_size(enum xp_kind kind, uint64_t len, uint32_t *req, uint32_t *rep);

/* Must the open pack pk be sent before rq, needing req request and rep
 * reply bytes, joins (another job, or no room)? */
int pack_must_close(const struct pack_open *pk, const struct xp_req *rq, uint32_t req, uint32_t rep);

/* Open the empty pack pk for its first element rq (buffer of
 * WIRE_AM_MAX_PAYLOAD kept across packs). 0 or -ENOMEM. */
int pack_begin(struct pack_open *pk, const struct xp_req *rq);

/* Append one put/get/non-fetching atomic to the open pack pk (opened by
 * pack_begin, room checked by pack_must_close): the element, a put's data
 * or an atomic's operands copied now (the client reuses its staging and
 * descriptor), its cookie; an atomic counts in its client's amo_packed.
 * 0, -ENOMEM, -EOPNOTSUPP for a fetching atomic, or pack_elem_size()'s
 * error for another kind (nothing appended). */
int pack_append(struct pack_open *pk, const struct xp_req *rq);

/* Stats of one pack of nelem operations sent (packs_out, ops_packed,
 * amos_packed, packs_mixed, hdr_bytes_saved). */
void pack_count_sent(struct peer_stats *st, const struct pack_open *pk);

/* Forget the open pack's contents after it was sent or failed. */
void pack_reset(struct pack_open *pk);

#endif
