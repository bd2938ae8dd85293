/*
 * Frame integrity for daemon-to-daemon tcp connections (setting
 * frame_integrity = off | mac | encrypt): a record layer under the framing
 * of wire.h, like TLS records.
 *
 * After the keyed handshake each direction of a connection is a sequence
 * of records
 *
 *     [u32 body length][body][16-byte tag]
 *
 * (1 <= body length <= FRAMES_REC_MAX, little endian). The bodies, joined,
 * are the plain frame byte stream of wire.h; a record may end inside a
 * frame. The tag is an AEAD tag (AES-256-GCM when both daemons have
 * hardware AES, else ChaCha20-Poly1305-IETF) under a per-direction session
 * key, with the record's sequence number in its direction as the nonce
 * (implicit: never sent):
 *   mac:     the record (length and body) is associated data, the message
 *            is empty: authenticated, not encrypted;
 *   encrypt: the body is the message (encrypted), the length associated
 *            data.
 * So a record that was altered, injected, replayed, reordered or dropped
 * (the next one then has the wrong sequence number) fails to open, and
 * the receiver drops the connection before any byte of it is used.
 *
 * Session keys: BLAKE2b keyed with the cluster key digest over a label,
 * the mode, the AEAD, both handshake nonces and both node ids; 64 bytes,
 * the first half for connector -> acceptor, the second for the way back.
 * Both nonces are fresh per connection, so no two connections (and no two
 * directions) share a key, and a record of one never opens in another.
 */
#ifndef HOISTD_FRAMES_H
#define HOISTD_FRAMES_H

#include <sodium.h>
#include <stdint.h>

enum frames_mode { FRAMES_OFF = 0, FRAMES_MAC = 1, FRAMES_ENCRYPT = 2 };

#define FRAMES_REC_MAX (64u << 10) /* body bytes of one record at most */
#define FRAMES_HDR 4u
#define FRAMES_TAG 16u
#define FRAMES_OVERHEAD (FRAMES_HDR + FRAMES_TAG)

struct frames_dir {
	union {
		crypto_aead_aes256gcm_state aes; /* expanded key (16-byte aligned) */
		uint8_t key[32];                 /* ChaCha20-Poly1305 */
	} k;
	uint64_t seq; /* records sealed / opened so far */
};

struct frames {
	struct frames_dir tx, rx;
	int mode; /* FRAMES_MAC or FRAMES_ENCRYPT */
	int aes;  /* 1: AES-256-GCM, 0: ChaCha20-Poly1305 */
};

/* "off" / "mac" / "encrypt" -> enum frames_mode, or -EINVAL. */
int frames_mode_parse(const char *text);
const char *frames_mode_name(int mode);
/* 1 when this CPU can run libsodium's AES-256-GCM (sodium_init first). */
int frames_aes_available(void);
const char *frames_aead_name(int aes);

/* A connection's record state (f must be 16-byte aligned: malloc is).
 * outgoing: this side is the connector. Nonces as sent in the hellos. */
void frames_init(struct frames *f, int mode, int aes, const uint8_t cluster_key[32], int outgoing,
		 const uint8_t connector_nonce[32], const uint8_t acceptor_nonce[32], int32_t connector,
		 int32_t acceptor);
void frames_wipe(struct frames *f);

/* Seal len (1..FRAMES_REC_MAX) bytes of plain stream into one record at
 * out (len + FRAMES_OVERHEAD bytes; out must not overlap in).
 * 0, -EINVAL (len) or -EOVERFLOW (sequence numbers used up). */
int frames_seal(struct frames *f, const void *in, uint32_t len, uint8_t *out);

/* The body length a record header announces: 0, or -EBADMSG when it is
 * no valid length (nothing valid can follow). */
int frames_body_len(const uint8_t *hdr, uint32_t *len);

/* Open the complete record at rec (FRAMES_HDR + len + FRAMES_TAG bytes):
 * verify its tag and, with encrypt, decrypt the body in place. The body
 * (rec + FRAMES_HDR, len bytes) is plain stream after 0; after -EBADMSG
 * nothing of it may be used (and the connection must be dropped: the
 * sequence number did not advance). */
int frames_open(struct frames *f, uint8_t *rec, uint32_t len);

#endif
