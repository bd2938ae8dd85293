/* daemon/frames.c: the record layer of frame_integrity. Seal and open in
 * both modes and with both AEADs; every kind of tampering (a flipped bit
 * anywhere, replay, reorder, a dropped record, truncation, a forged
 * length) and every key mismatch (mode, AEAD, nonces, node ids, direction,
 * cluster key) must fail to open. */
#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "unit_util.h"

static uint8_t KEY[32], NC[32], NA[32];

static void setup(void)
{
	ck_assert_int_ge(sodium_init(), 0);
	for (int i = 0; i < 32; i++) {
		KEY[i] = (uint8_t)(i * 7 + 1);
		NC[i] = (uint8_t)(i * 13 + 2);
		NA[i] = (uint8_t)(i * 17 + 3);
	}
}

/* A connector / acceptor pair (aligned: the AES state wants 16). */
struct pair {
	struct frames *c, *a;
};

static struct frames *fr_new(void)
{
	struct frames *f = aligned_alloc(64, (sizeof(struct frames) + 63) & ~(size_t)63);
	ck_assert_ptr_nonnull(f);
	return f;
}

static struct pair pair_new(int mode, int aes)
{
	struct pair p = {fr_new(), fr_new()};
	frames_init(p.c, mode, aes, KEY, 1, NC, NA, 3, 5);
	frames_init(p.a, mode, aes, KEY, 0, NC, NA, 3, 5);
	return p;
}

static void pair_free(struct pair *p)
{
	frames_wipe(p->c);
	frames_wipe(p->a);
	free(p->c);
	free(p->a);
}

static int aes_ok(int aes)
{
	return !aes || frames_aes_available();
}

static void fill(uint8_t *b, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 31 + seed);
}

/* seal len bytes of pattern seed from f into rec */
static void seal(struct frames *f, uint8_t *rec, uint32_t len, uint32_t seed)
{
	uint8_t *in = malloc(len);
	fill(in, len, seed);
	ck_assert_int_eq(frames_seal(f, in, len, rec), 0);
	free(in);
}

static void check_body(const uint8_t *rec, uint32_t len, uint32_t seed)
{
	uint8_t *want = malloc(len);
	fill(want, len, seed);
	CHK(memcmp(rec + FRAMES_HDR, want, len) == 0);
	free(want);
}

/* mode x aes over the loop index */
#define MODE(i) ((i) / 2 ? FRAMES_ENCRYPT : FRAMES_MAC)
#define AES(i) ((i) % 2)

START_TEST(test_round_trip)
{
	int mode = MODE(_i), aes = AES(_i);
	if (!aes_ok(aes))
		return;
	struct pair p = pair_new(mode, aes);
	static const uint32_t lens[] = {1, 16, 72, 4095, 65535, FRAMES_REC_MAX};
	uint8_t *rec = malloc(FRAMES_REC_MAX + FRAMES_OVERHEAD);
	for (int dir = 0; dir < 2; dir++) {
		struct frames *tx = dir ? p.a : p.c, *rx = dir ? p.c : p.a;
		for (unsigned k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			uint32_t len = lens[k], blen = 0;
			seal(tx, rec, len, k);
			ck_assert_int_eq(frames_body_len(rec, &blen), 0);
			ck_assert_uint_eq(blen, len);
			uint8_t *want = malloc(len);
			fill(want, len, k);
			/* mac sends the body as is; encrypt does not */
			if (mode == FRAMES_MAC)
				CHK(memcmp(rec + FRAMES_HDR, want, len) == 0);
			else if (len >= 16)
				CHK(memcmp(rec + FRAMES_HDR, want, len) != 0);
			free(want);
			ck_assert_int_eq(frames_open(rx, rec, len), 0);
			check_body(rec, len, k);
		}
	}
	free(rec);
	pair_free(&p);
}
END_TEST

/* Every single bit flipped anywhere in a record (header, body, tag)
 * makes it fail, and a failed open does not advance the sequence. */
START_TEST(test_every_bit)
{
	int mode = MODE(_i), aes = AES(_i);
	if (!aes_ok(aes))
		return;
	struct pair p = pair_new(mode, aes);
	const uint32_t len = 40, total = len + FRAMES_OVERHEAD;
	uint8_t rec[40 + FRAMES_OVERHEAD], bad[sizeof(rec)];
	seal(p.c, rec, len, 9);
	for (uint32_t bit = 0; bit < total * 8; bit++) {
		memcpy(bad, rec, total);
		bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		/* (a flipped header bit: the record claims another length) */
		CHK(frames_open(p.a, bad, len) == -EBADMSG);
		CHK_EQ(p.a->rx.seq, 0);
	}
	ck_assert_int_eq(frames_open(p.a, rec, len), 0);
	check_body(rec, len, 9);
	pair_free(&p);
}
END_TEST

/* Replay, reorder, drop: the implicit sequence number catches each. */
START_TEST(test_sequence)
{
	int mode = MODE(_i), aes = AES(_i);
	if (!aes_ok(aes))
		return;
	struct pair p = pair_new(mode, aes);
	enum { N = 4, L = 100 };
	uint8_t rec[N][L + FRAMES_OVERHEAD], tmp[L + FRAMES_OVERHEAD];
	for (int k = 0; k < N; k++)
		seal(p.c, rec[k], L, (uint32_t)k);
	/* reorder: record 1 before record 0 */
	memcpy(tmp, rec[1], sizeof(tmp));
	ck_assert_int_eq(frames_open(p.a, tmp, L), -EBADMSG);
	memcpy(tmp, rec[0], sizeof(tmp));
	ck_assert_int_eq(frames_open(p.a, tmp, L), 0);
	/* replay: record 0 again */
	memcpy(tmp, rec[0], sizeof(tmp));
	ck_assert_int_eq(frames_open(p.a, tmp, L), -EBADMSG);
	/* drop: record 2 without record 1 */
	memcpy(tmp, rec[2], sizeof(tmp));
	ck_assert_int_eq(frames_open(p.a, tmp, L), -EBADMSG);
	/* in order it goes on */
	for (int k = 1; k < N; k++) {
		ck_assert_int_eq(frames_open(p.a, rec[k], L), 0);
		check_body(rec[k], L, (uint32_t)k);
	}
	/* a record reflected back to its sender does not open either */
	uint8_t back[L + FRAMES_OVERHEAD];
	seal(p.c, back, L, 7);
	ck_assert_int_eq(frames_open(p.c, back, L), -EBADMSG);
	pair_free(&p);
}
END_TEST

/* Truncated or extended records and forged lengths. */
START_TEST(test_lengths)
{
	int mode = MODE(_i), aes = AES(_i);
	if (!aes_ok(aes))
		return;
	struct pair p = pair_new(mode, aes);
	uint8_t rec[64 + FRAMES_OVERHEAD], tmp[sizeof(rec)];
	uint32_t len = 64, blen;
	seal(p.c, rec, len, 1);
	/* the receiver takes the length from the header: opening with another
	 * one (a truncated record, the tag taken from the body) fails */
	memcpy(tmp, rec, sizeof(tmp));
	ck_assert_int_eq(frames_open(p.a, tmp, len - 1), -EBADMSG);
	/* a forged header length (shorter: tag read from the body) */
	memcpy(tmp, rec, sizeof(tmp));
	tmp[0] = (uint8_t)(len - 16);
	ck_assert_int_eq(frames_body_len(tmp, &blen), 0);
	ck_assert_int_eq(frames_open(p.a, tmp, blen), -EBADMSG);
	/* lengths no record has */
	uint8_t h[4] = {0, 0, 0, 0};
	ck_assert_int_eq(frames_body_len(h, &blen), -EBADMSG);
	uint32_t big = FRAMES_REC_MAX + 1;
	memcpy(h, &big, 4);
	ck_assert_int_eq(frames_body_len(h, &blen), -EBADMSG);
	h[0] = 0xff, h[1] = 0xff, h[2] = 0xff, h[3] = 0xff;
	ck_assert_int_eq(frames_body_len(h, &blen), -EBADMSG);
	/* the sealer refuses them too */
	ck_assert_int_eq(frames_seal(p.c, rec, 0, tmp), -EINVAL);
	CHK_EQ(p.a->rx.seq, 0);
	ck_assert_int_eq(frames_open(p.a, rec, len), 0);
	pair_free(&p);
}
END_TEST

/* Keys differ with anything the handshake binds: mode, AEAD, either
 * nonce, either node id, the cluster key. */
START_TEST(test_key_mismatch)
{
	int mode = MODE(_i), aes = AES(_i);
	if (!aes_ok(aes))
		return;
	struct frames *tx = fr_new(), *rx = fr_new();
	frames_init(tx, mode, aes, KEY, 1, NC, NA, 3, 5);
	uint8_t rec[48 + FRAMES_OVERHEAD], tmp[sizeof(rec)];
	seal(tx, rec, 48, 2);
	uint8_t k2[32], n2[32];
	memcpy(k2, KEY, 32);
	k2[31] ^= 1;
	memcpy(n2, NC, 32);
	n2[0] ^= 0x80;
	for (int v = 0; v < 7; v++) {
		int m2 = mode, a2 = aes;
		const uint8_t *key = KEY, *nc = NC, *na = NA;
		int32_t ci = 3, ai = 5;
		switch (v) {
		case 0: m2 = mode == FRAMES_MAC ? FRAMES_ENCRYPT : FRAMES_MAC; break;
		case 1: a2 = !aes; if (!aes_ok(a2)) continue; break;
		case 2: key = k2; break;
		case 3: nc = n2; break;
		case 4: na = n2; break;
		case 5: ci = 4; break;
		case 6: ai = 6; break;
		}
		frames_init(rx, m2, a2, key, 0, nc, na, ci, ai);
		memcpy(tmp, rec, sizeof(tmp));
		if (frames_open(rx, tmp, 48) != -EBADMSG)
			ck_abort_msg("variant %d opened a record sealed under other parameters", v);
	}
	frames_init(rx, mode, aes, KEY, 0, NC, NA, 3, 5);
	ck_assert_int_eq(frames_open(rx, rec, 48), 0);
	frames_wipe(tx);
	frames_wipe(rx);
	free(tx);
	free(rx);
}
END_TEST

START_TEST(test_modes_and_limits)
{
	ck_assert_int_eq(frames_mode_parse("off"), FRAMES_OFF);
	ck_assert_int_eq(frames_mode_parse("mac"), FRAMES_MAC);
	ck_assert_int_eq(frames_mode_parse("encrypt"), FRAMES_ENCRYPT);
	ck_assert_int_eq(frames_mode_parse("MAC"), -EINVAL);
	ck_assert_int_eq(frames_mode_parse(""), -EINVAL);
	ck_assert_str_eq(frames_mode_name(FRAMES_ENCRYPT), "encrypt");
	ck_assert_str_eq(frames_mode_name(7), "unknown");
	struct pair p = pair_new(FRAMES_MAC, 0);
	uint8_t in[8] = {0}, out[8 + FRAMES_OVERHEAD];
	/* the sequence never wraps (a nonce would repeat) */
	p.c->tx.seq = UINT64_MAX;
	ck_assert_int_eq(frames_seal(p.c, in, 8, out), -EOVERFLOW);
	p.c->tx.seq = UINT64_MAX - 1;
	p.a->rx.seq = UINT64_MAX - 1;
	ck_assert_int_eq(frames_seal(p.c, in, 8, out), 0);
	ck_assert_int_eq(frames_open(p.a, out, 8), 0);
	ck_assert_int_eq(frames_seal(p.c, in, 8, out), -EOVERFLOW);
	pair_free(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("frames");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_loop_test(tc, test_round_trip, 0, 4);
	tcase_add_loop_test(tc, test_every_bit, 0, 4);
	tcase_add_loop_test(tc, test_sequence, 0, 4);
	tcase_add_loop_test(tc, test_lengths, 0, 4);
	tcase_add_loop_test(tc, test_key_mismatch, 0, 4);
	tcase_add_test(tc, test_modes_and_limits);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
