/*
 * test_peer: the peer layer both network transports use (daemon/transport/peer.c).
 *
 * - heartbeats: the periodic check, when a ping is due (up, none
 *   unanswered, heartbeat_ms since the last), what a pong answers, and
 *   when silence means lost (only while an answer is awaited);
 * - connection attempts: the retry backoff doubles within its bounds and
 *   gives up after the timeout; a lost peer is not tried before its retry
 *   time unless it reached us itself;
 * - the loss path: the node is marked lost and counted once, the
 *   transport's drop runs each time;
 * - the keyed handshake: a MAC under the right key passes, under another
 *   key, role, transport label or node pair it does not; the bytes are the
 *   ones the wire always had (HMAC over label, role, nonce, node ids);
 * - the replay window: a captured connect request is refused however many
 *   others were accepted since, and so is an older or stale one.
 */
#include <check.h>
#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "peer.h"
#include "unit_util.h"

#define MS 1000000ull

START_TEST(test_check_interval)
{
	uint64_t next = 0, g = peer_check_interval_ns(1000, 5000);
	ck_assert_int_eq(peer_check_due(&next, 10 * MS, 1000, 5000), 1);
	ck_assert_uint_eq(next, 10 * MS + g);
	ck_assert_int_eq(peer_check_due(&next, 10 * MS + g - 1, 1000, 5000), 0);
	ck_assert_int_eq(peer_check_due(&next, 10 * MS + g, 1000, 5000), 1);
}
END_TEST

START_TEST(test_ping_due_and_pong)
{
	struct peer_link l;
	struct peer_stats st;
	memset(&l, 0, sizeof(l));
	memset(&st, 0, sizeof(st));
	uint64_t t0 = 1000 * MS;
	ck_assert_int_eq(peer_ping_due(&l, t0 + 5000 * MS, 100), 0); /* not up */
	peer_up(&l, t0);
	ck_assert_int_eq(l.state, PEER_UP);
	ck_assert_int_eq(peer_ping_due(&l, t0 + 100 * MS, 100), 0); /* not yet */
	ck_assert_int_eq(peer_ping_due(&l, t0 + 101 * MS, 100), 1);
	uint64_t tag = l.ping_tag;
	ck_assert_uint_eq(l.ping_sent_ns, t0 + 101 * MS);
	/* one unanswered: no second ping, however long */
	ck_assert_int_eq(peer_ping_due(&l, t0 + 900 * MS, 100), 0);
	ck_assert_int_eq(peer_pong(&l, &st, tag + 1, t0 + 150 * MS), 0); /* stale */
	ck_assert_uint_ne(l.ping_sent_ns, 0);
	ck_assert_int_eq(peer_pong(&l, &st, tag, t0 + 151 * MS), 1);
	ck_assert_uint_eq(l.ping_sent_ns, 0);
	ck_assert_uint_eq(st.rtt_us, 50000);
	ck_assert_int_eq(peer_pong(&l, &st, tag, t0 + 152 * MS), 0); /* twice */
	ck_assert_int_eq(peer_ping_due(&l, t0 + 201 * MS, 100), 0);
	ck_assert_int_eq(peer_ping_due(&l, t0 + 202 * MS, 100), 1);
	ck_assert_uint_eq(l.ping_tag, tag + 1);
	peer_ping_unsent(&l); /* it could not go: due again at once */
	ck_assert_int_eq(peer_ping_due(&l, t0 + 500 * MS, 100), 1);
}
END_TEST

START_TEST(test_silence)
{
	uint64_t limit = peer_silence_limit_ns(1000, 5000), heard = 77 * MS;
	/* idle (nothing awaited): never lost */
	ck_assert_int_eq(peer_silent(heard + 100 * limit, heard, 0, limit), 0);
	ck_assert_int_eq(peer_silent(heard + limit, heard, 1, limit), 0);
	ck_assert_int_eq(peer_silent(heard + limit + 1, heard, 1, limit), 1);
	/* heard after now (a clock read earlier): not silent */
	ck_assert_int_eq(peer_silent(heard - 1, heard, 1, limit), 0);
	/* a connection the peer opened hears only its pings when idle: they
	 * may come heartbeat_ms plus a check interval apart, never judge it
	 * by less; nor by more than peer_timeout_ms */
	static const uint64_t conf[][2] = {{1000, 5000}, {10, 100}, {100, 100}, {1000, 1000}};
	for (size_t k = 0; k < sizeof(conf) / sizeof(conf[0]); k++) {
		uint64_t to = conf[k][1], hb = peer_heartbeat_ms(conf[k][0], to);
		uint64_t in = peer_silence_limit_in_ns(hb, to), g = peer_check_interval_ns(hb, to);
		ck_assert_uint_ge(in, peer_silence_limit_ns(hb, to));
		ck_assert_uint_ge(in, hb * MS + 2 * g < to * MS ? hb * MS + 2 * g : to * MS);
		ck_assert_uint_le(in, to * MS);
	}
}
END_TEST

START_TEST(test_backoff)
{
	struct peer_link l;
	memset(&l, 0, sizeof(l));
	uint64_t t0 = 50 * MS, to = 5000 * MS;
	peer_trying(&l, t0);
	ck_assert_int_eq(l.state, PEER_CONNECTING);
	ck_assert_uint_eq(l.first_try_ns, t0);
	uint32_t want = PEER_BACKOFF_MIN_MS;
	for (int k = 0; k < 12; k++) {
		uint64_t now = t0 + (uint64_t)k * MS;
		ck_assert_int_eq(peer_backoff(&l, now, to), 0);
		ck_assert_uint_eq(l.backoff_ms, want);
		ck_assert_uint_eq(l.retry_at_ns, now + want * MS);
		want = want * 2 > PEER_BACKOFF_MAX_MS ? PEER_BACKOFF_MAX_MS : want * 2;
		peer_trying(&l, now + 1); /* the retry keeps the first try's time */
		ck_assert_uint_eq(l.first_try_ns, t0);
		ck_assert_uint_eq(l.retry_at_ns, 0);
	}
	ck_assert_int_eq(peer_backoff(&l, t0 + to + 1, to), -ETIMEDOUT);
	peer_up(&l, t0 + to);
	ck_assert_uint_eq(l.backoff_ms, 0);
	ck_assert_uint_eq(l.first_try_ns, 0);
}
END_TEST

static int drops;
static void drop(struct daemon *d, int32_t node, void *arg)
{
	(void)d;
	ck_assert_int_eq(node, 3);
	ck_assert_ptr_eq(arg, &drops);
	drops++;
}

START_TEST(test_lost_once)
{
	struct daemon *d = calloc(1, sizeof(*d));
	ck_assert_ptr_nonnull(d);
	struct peer_link l;
	struct peer_stats st;
	memset(&l, 0, sizeof(l));
	memset(&st, 0, sizeof(st));
	peer_up(&l, now_ns());
	l.ping_sent_ns = now_ns();
	drops = 0;
	peer_lost(d, 3, &l, &st, "n3:1", "test", drop, &drops);
	ck_assert_int_eq(l.state, PEER_LOST);
	ck_assert_uint_eq(l.ping_sent_ns, 0);
	ck_assert_uint_eq(st.losses, 1);
	ck_assert_int_eq(drops, 1);
	peer_lost(d, 3, &l, &st, "n3:1", "again", drop, &drops);
	ck_assert_uint_eq(st.losses, 1); /* counted (and logged) once */
	ck_assert_int_eq(drops, 2);
	/* not tried again at once; unless it reached us itself */
	ck_assert_int_eq(peer_may_try(&l, now_ns()), -ECONNRESET);
	ck_assert_int_eq(peer_may_try(&l, l.retry_after_ns), 0);
	peer_alive(&l);
	ck_assert_int_eq(peer_may_try(&l, now_ns()), 0);
	free(d);
}
END_TEST

/* The MACs the wire always carried, HMAC-SHA256(key; label role nonce
 * acceptor connector) with the node ids in host (little-endian) order, as
 * Python's hmac computes them for key 0..31, nonce 100..131 (tcp: 32
 * bytes) or 100..115 (verbs: 16), role "acceptor", acceptor 1, connector 2. */
static const uint8_t kat[2][32] = {
	{0xc6, 0x44, 0x6a, 0x86, 0x53, 0x15, 0x59, 0x82, 0x37, 0xbd, 0x2a, 0x20, 0x3e, 0xbc, 0xf0, 0x50,
	 0xa6, 0xf1, 0x7f, 0x79, 0x8c, 0xaf, 0xe9, 0xfe, 0x9c, 0xe4, 0x2d, 0x01, 0xd5, 0x02, 0x95, 0x2b},
	{0xeb, 0x88, 0xdd, 0x7a, 0x80, 0xdc, 0x50, 0xfe, 0x50, 0x32, 0x98, 0xb2, 0x54, 0x48, 0xf1, 0xa2,
	 0x78, 0xa2, 0xda, 0xd1, 0x95, 0x8a, 0x9e, 0xb6, 0x59, 0xe2, 0x99, 0xc0, 0x98, 0x91, 0xe6, 0x81},
};

START_TEST(test_handshake_mac)
{
	ck_assert_int_ge(sodium_init(), 0);
	uint8_t key[32], other[32], nonce[32], mac[32];
	for (int i = 0; i < 32; i++) {
		key[i] = (uint8_t)i;
		other[i] = (uint8_t)i;
		nonce[i] = (uint8_t)(100 + i);
	}
	other[7] ^= 0x80; /* one bit off the cluster key */
	static const char *const labels[] = {"", "verbs-"};
	static const size_t nlens[] = {32, 16};
	for (int t = 0; t < 2; t++) {
		const char *lb = labels[t];
		size_t nl = nlens[t];
		peer_hs_mac(key, lb, "acceptor", nonce, nl, 1, 2, mac);
		ck_assert_mem_eq(mac, kat[t], 32); /* the wire's bytes */
		ck_assert_int_eq(peer_hs_verify(key, lb, "acceptor", nonce, nl, 1, 2, mac, 32), 0);
		ck_assert_int_eq(peer_hs_verify(other, lb, "acceptor", nonce, nl, 1, 2, mac, 32),
				 -EACCES);
		ck_assert_int_eq(peer_hs_verify(key, lb, "connector", nonce, nl, 1, 2, mac, 32),
				 -EACCES);
		ck_assert_int_eq(peer_hs_verify(key, labels[!t], "acceptor", nonce, nl, 1, 2, mac, 32),
				 -EACCES);
		ck_assert_int_eq(peer_hs_verify(key, lb, "acceptor", nonce, nl, 2, 1, mac, 32),
				 -EACCES);
		ck_assert_int_eq(peer_hs_verify(key, lb, "acceptor", nonce, nl, 1, 2, mac, 31),
				 -EACCES);
		ck_assert_int_eq(peer_hs_verify(key, lb, "acceptor", nonce, nl, 1, 2, NULL, 0),
				 -EACCES);
		uint8_t bad[32];
		memcpy(bad, mac, 32);
		bad[31] ^= 1;
		ck_assert_int_eq(peer_hs_verify(key, lb, "acceptor", nonce, nl, 1, 2, bad, 32),
				 -EACCES);
		nonce[0] ^= 1; /* another nonce (a replayed proof) */
		ck_assert_int_eq(peer_hs_verify(key, lb, "acceptor", nonce, nl, 1, 2, mac, 32),
				 -EACCES);
		nonce[0] ^= 1;
	}
	/* the hello's rules: this build's version, our node list, another node */
	ck_assert_int_eq(peer_hello_ok(WIRE_VERSION, 4, 2, 0, 4), 1);
	ck_assert_int_eq(peer_hello_ok(WIRE_VERSION + 1, 4, 2, 0, 4), 0);
	ck_assert_int_eq(peer_hello_ok(WIRE_VERSION, 3, 2, 0, 4), 0);
	ck_assert_int_eq(peer_hello_ok(WIRE_VERSION, 4, 0, 0, 4), 0);
	ck_assert_int_eq(peer_hello_ok(WIRE_VERSION, 4, 4, 0, 4), 0);
	ck_assert_int_eq(peer_hello_ok(WIRE_VERSION, 4, -1, 0, 4), 0);
}
END_TEST

/* A captured connect request is refused however many others were
 * accepted since (the nonce table keeps only PEER_SEEN_MAX), and so is one
 * older than the last accepted from its node or outside the clock window. */
START_TEST(test_connect_replay)
{
	struct peer_replay *r = calloc(1, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	uint64_t last[3] = {0, 0, 0};
	r->last_ts = last;
	const uint64_t now = 1700000000ull * 1000000000ull;
	uint8_t nonce[16];
	uint64_t seed = 7;
	for (int i = 0; i < 16; i++)
		nonce[i] = (uint8_t)rng_next(&seed);
	uint64_t ts = now - 1000;
	memcpy(nonce, &ts, 8);
	uint8_t captured[16];
	memcpy(captured, nonce, 16);
	ck_assert_int_eq(peer_fresh(r, 1, ts, nonce, now), 1);
	ck_assert_int_eq(peer_fresh(r, 1, ts, captured, now), 0); /* at once */
	for (int k = 0; k < 300; k++) { /* other nodes connect and reconnect */
		uint64_t t = now - 900 + (uint64_t)k;
		memcpy(nonce, &t, 8);
		for (int i = 8; i < 16; i++)
			nonce[i] = (uint8_t)rng_next(&seed);
		ck_assert_int_eq(peer_fresh(r, 2, t, nonce, now), 1);
	}
	ck_assert_int_eq(peer_fresh(r, 1, ts, captured, now + 1000), 0); /* later */
	uint64_t older = ts - 1;
	memcpy(nonce, &older, 8);
	ck_assert_int_eq(peer_fresh(r, 1, older, nonce, now), 0);
	uint64_t stale = now - PEER_AUTH_WINDOW_NS - 1;
	memcpy(nonce, &stale, 8);
	ck_assert_int_eq(peer_fresh(r, 0, stale, nonce, now), 0);
	uint64_t future = now + PEER_AUTH_WINDOW_NS + 1;
	memcpy(nonce, &future, 8);
	ck_assert_int_eq(peer_fresh(r, 0, future, nonce, now), 0);
	uint64_t newer = ts + 1;
	memcpy(nonce, &newer, 8);
	ck_assert_int_eq(peer_fresh(r, 1, newer, nonce, now), 1); /* it reconnects */
	/* what a connector sends increases whatever the clock does */
	uint64_t sent = 0;
	ck_assert_uint_eq(peer_next_ts(&sent, 500), 500);
	ck_assert_uint_eq(peer_next_ts(&sent, 400), 501);
	ck_assert_uint_eq(peer_next_ts(&sent, 900), 900);
	free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("peer");
	TCase *tc = tcase_create("heartbeat");
	tcase_add_test(tc, test_check_interval);
	tcase_add_test(tc, test_ping_due_and_pong);
	tcase_add_test(tc, test_silence);
	suite_add_tcase(s, tc);
	tc = tcase_create("attempts");
	tcase_add_test(tc, test_backoff);
	tcase_add_test(tc, test_lost_once);
	suite_add_tcase(s, tc);
	tc = tcase_create("handshake");
	tcase_add_test(tc, test_handshake_mac);
	tcase_add_test(tc, test_connect_replay);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
