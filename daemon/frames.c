/*
 * The record layer of frame_integrity (see frames.h): key derivation,
 * sealing and opening of records. No I/O here; tcp.c moves the bytes.
 */
#include "frames.h"

#include <errno.h>
#include <string.h>

static const char LABEL[] = "hoist frames v1";

int frames_mode_parse(const char *text)
{
	if (!strcmp(text, "off"))
		return FRAMES_OFF;
	if (!strcmp(text, "mac"))
		return FRAMES_MAC;
	if (!strcmp(text, "encrypt"))
		return FRAMES_ENCRYPT;
	return -EINVAL;
}

const char *frames_mode_name(int mode)
{
	switch (mode) {
	case FRAMES_OFF:
		return "off";
	case FRAMES_MAC:
		return "mac";
	case FRAMES_ENCRYPT:
		return "encrypt";
	default:
		return "unknown";
	}
}

int frames_aes_available(void)
{
	return crypto_aead_aes256gcm_is_available();
}

const char *frames_aead_name(int aes)
{
	return aes ? "AES-256-GCM" : "ChaCha20-Poly1305";
}

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void dir_key(struct frames_dir *d, int aes, const uint8_t key[32])
{
	memset(d, 0, sizeof(*d));
	if (aes)
		crypto_aead_aes256gcm_beforenm(&d->k.aes, key);
	else
		memcpy(d->k.key, key, 32);
}

void frames_init(struct frames *f, int mode, int aes, const uint8_t cluster_key[32], int outgoing,
		 const uint8_t connector_nonce[32], const uint8_t acceptor_nonce[32], int32_t connector,
		 int32_t acceptor)
{
	uint8_t keys[64], ids[8], params[2] = {(uint8_t)mode, (uint8_t)(aes != 0)};
	le32(ids, (uint32_t)connector);
	le32(ids + 4, (uint32_t)acceptor);
	crypto_generichash_state st;
	crypto_generichash_init(&st, cluster_key, 32, sizeof(keys));
	crypto_generichash_update(&st, (const uint8_t *)LABEL, sizeof(LABEL));
	crypto_generichash_update(&st, params, sizeof(params));
	crypto_generichash_update(&st, connector_nonce, 32);
	crypto_generichash_update(&st, acceptor_nonce, 32);
	crypto_generichash_update(&st, ids, sizeof(ids));
	crypto_generichash_final(&st, keys, sizeof(keys));
	f->mode = mode;
	f->aes = aes != 0;
	/* keys[0..31]: connector -> acceptor; keys[32..63]: back */
	dir_key(&f->tx, f->aes, outgoing ? keys : keys + 32);
	dir_key(&f->rx, f->aes, outgoing ? keys + 32 : keys);
	sodium_memzero(keys, sizeof(keys));
	sodium_memzero(&st, sizeof(st));
}

void frames_wipe(struct frames *f)
{
	sodium_memzero(f, sizeof(*f));
}

static void nonce_of(uint64_t seq, uint8_t n[12])
{
	memset(n, 0, 12);
	for (int i = 0; i < 8; i++)
		n[i] = (uint8_t)(seq >> (8 * i));
}

int frames_seal(struct frames *f, const void *in, uint32_t len, uint8_t *out)
{
	uint8_t n[12];
	if (!len || len > FRAMES_REC_MAX)
		return -EINVAL;
	if (f->tx.seq == UINT64_MAX)
		return -EOVERFLOW;
	nonce_of(f->tx.seq++, n);
	le32(out, len);
	uint8_t *body = out + FRAMES_HDR, *tag = body + len;
	if (f->mode == FRAMES_MAC) {
		/* the record is associated data: authenticated, sent as is (an
		 * empty message: the body pointers are not written) */
		memcpy(body, in, len);
		if (f->aes)
			crypto_aead_aes256gcm_encrypt_detached_afternm(body, tag, NULL, body, 0, out,
								       FRAMES_HDR + len, NULL, n,
								       &f->tx.k.aes);
		else
			crypto_aead_chacha20poly1305_ietf_encrypt_detached(body, tag, NULL, body, 0, out,
									   FRAMES_HDR + len, NULL, n,
									   f->tx.k.key);
	} else if (f->aes) {
		crypto_aead_aes256gcm_encrypt_detached_afternm(body, tag, NULL, in, len, out, FRAMES_HDR,
							       NULL, n, &f->tx.k.aes);
	} else {
		crypto_aead_chacha20poly1305_ietf_encrypt_detached(body, tag, NULL, in, len, out,
								   FRAMES_HDR, NULL, n, f->tx.k.key);
	}
	return 0;
}

int frames_body_len(const uint8_t *hdr, uint32_t *len)
{
	uint32_t v = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 |
		     (uint32_t)hdr[3] << 24;
	if (!v || v > FRAMES_REC_MAX)
		return -EBADMSG;
	*len = v;
	return 0;
}

int frames_open(struct frames *f, uint8_t *rec, uint32_t len)
{
	uint8_t n[12];
	uint32_t hl;
	if (frames_body_len(rec, &hl) || hl != len || f->rx.seq == UINT64_MAX)
		return -EBADMSG;
	nonce_of(f->rx.seq, n);
	uint8_t *body = rec + FRAMES_HDR, *tag = body + len;
	int rc;
	if (f->mode == FRAMES_MAC) {
		if (f->aes)
			rc = crypto_aead_aes256gcm_decrypt_detached_afternm(body, NULL, body, 0, tag, rec,
									    FRAMES_HDR + len, n,
									    &f->rx.k.aes);
		else
			rc = crypto_aead_chacha20poly1305_ietf_decrypt_detached(body, NULL, body, 0, tag,
										rec, FRAMES_HDR + len,
										n, f->rx.k.key);
	} else if (f->aes) {
		rc = crypto_aead_aes256gcm_decrypt_detached_afternm(body, NULL, body, len, tag, rec,
								    FRAMES_HDR, n, &f->rx.k.aes);
	} else {
		rc = crypto_aead_chacha20poly1305_ietf_decrypt_detached(body, NULL, body, len, tag, rec,
									FRAMES_HDR, n, f->rx.k.key);
	}
	if (rc)
		return -EBADMSG;
	f->rx.seq++;
	return 0;
}
