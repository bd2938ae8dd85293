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

#include "wire.h"

struct daemon;

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

#endif
