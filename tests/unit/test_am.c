/* daemon/am.c: active messages are dispatched through a table indexed by
 * wire message type that the owning stages register into. A type nobody
 * registered, an out-of-range type and a message of the wrong shape are
 * refused (-EPROTO) and counted (am_refused), and the handler never runs;
 * the daemon's own registrations cover exactly the five messages the
 * stages own. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "am.h"
#include "daemon.h"
#include "unit_util.h"

static int calls;
static int32_t got_from;
static uint64_t got_plen;

static int ok_even(const void *ext, uint64_t plen)
{
	(void)ext;
	return plen % 2 == 0;
}

static int recv_count(struct daemon *d, int32_t from, const void *ext, const void *payload,
		      uint64_t plen)
{
	(void)d;
	(void)ext;
	(void)payload;
	calls++;
	got_from = from;
	got_plen = plen;
	return 0;
}

static int recv_refuse(struct daemon *d, int32_t from, const void *ext, const void *payload,
		       uint64_t plen)
{
	(void)d;
	(void)from;
	(void)ext;
	(void)payload;
	(void)plen;
	calls++;
	return -EPROTO;
}

static const struct am_handler test_am = {.name = "test", .hlen = 8, .payload_ok = ok_even,
					  .recv = recv_count};
static const struct am_handler other_am = {.name = "other", .hlen = 8, .recv = recv_refuse};

/* Nothing registered: every type is refused and counted, nothing runs. */
START_TEST(test_unregistered)
{
	struct daemon *d = calloc(1, sizeof(*d));
	ck_assert_ptr_nonnull(d);
	uint64_t ext = 0;
	ck_assert(!am_handles(W_BARRIER));
	ck_assert(!am_payload_ok(W_BARRIER, &ext, sizeof(struct wire_barrier), 0));
	ck_assert_int_eq(am_dispatch(d, 1, W_BARRIER, &ext, sizeof(struct wire_barrier), NULL, 0),
			 -EPROTO);
	ck_assert_int_eq(am_dispatch(d, 1, 255, &ext, 8, NULL, 0), -EPROTO); /* past W__COUNT */
	ck_assert_uint_eq(d->pst.am_refused, 2);
	free(d);
}
END_TEST

/* A registered handler gets its messages; the table checks the shape
 * first (extension size, the handler's payload check) and counts what a
 * handler refuses. */
START_TEST(test_registered)
{
	struct daemon *d = calloc(1, sizeof(*d));
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(am_register(W__COUNT, &test_am), -EINVAL);
	ck_assert_int_eq(am_register(W_PING, &test_am), 0);
	ck_assert_int_eq(am_register(W_PING, &test_am), 0); /* again: a no-op */
	ck_assert_int_eq(am_register(W_PING, &other_am), -EEXIST);
	ck_assert_int_eq(am_register(W_PONG, &other_am), 0);
	ck_assert(am_handles(W_PING));
	ck_assert(!am_handles(W_ACK));
	char ext[16] = {0}, payload[4] = {0};
	calls = 0;
	ck_assert_int_eq(am_dispatch(d, 3, W_PING, ext, 8, payload, 4), 0);
	ck_assert_int_eq(calls, 1);
	ck_assert_int_eq(got_from, 3);
	ck_assert_uint_eq(got_plen, 4);
	ck_assert_int_eq(am_dispatch(d, 3, W_PING, ext, 9, payload, 4), -EPROTO); /* ext size */
	ck_assert_int_eq(am_dispatch(d, 3, W_PING, ext, 8, payload, 3), -EPROTO); /* payload */
	ck_assert_int_eq(calls, 1);
	ck_assert_uint_eq(d->pst.am_refused, 2);
	ck_assert_int_eq(am_dispatch(d, 3, W_PONG, ext, 8, payload, 2), -EPROTO); /* no payload */
	ck_assert_int_eq(calls, 1);
	ck_assert_int_eq(am_dispatch(d, 3, W_PONG, ext, 8, NULL, 0), -EPROTO); /* refused by it */
	ck_assert_int_eq(calls, 2);
	ck_assert_uint_eq(d->pst.am_refused, 4);
	free(d);
}
END_TEST

/* hoistd's registrations: the barrier, departure, membership and
 * collective messages, nothing a transport serves itself. */
START_TEST(test_daemon_table)
{
	barrier_am_register();
	coll_am_register();
	jobs_am_register();
	const uint8_t mine[] = {W_BARRIER, W_MEMBER, W_PE_GONE, W_COLL, W_COLL_ABORT};
	const uint8_t theirs[] = {W_HELLO, W_AUTH, W_PUT_AM, W_PUT_DIRECT, W_GET_AM, W_GET_DIRECT,
				  W_ACK, W_GET_REPLY, W_VRESOLVE, W_VRESOLVE_REPLY, W_PACK,
				  W_PACK_REPLY};
	for (size_t i = 0; i < sizeof(mine); i++)
		ck_assert(am_handles(mine[i]));
	for (size_t i = 0; i < sizeof(theirs); i++)
		ck_assert(!am_handles(theirs[i])); /* a transport's own message */
	/* a barrier round for a job this daemon does not know: accepted, no-op */
	struct daemon *d = calloc(1, sizeof(*d));
	ck_assert_ptr_nonnull(d);
	struct wire_barrier b = {.job = 9, .epoch = 1, .round = 0};
	ck_assert_int_eq(am_dispatch(d, 1, W_BARRIER, &b, sizeof(b), NULL, 0), 0);
	ck_assert_int_eq(am_dispatch(d, 1, W_BARRIER, &b, sizeof(b), &b, 1), -EPROTO);
	ck_assert_uint_eq(d->pst.am_refused, 1);
	free(d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("am");
	TCase *tc = tcase_create("table");
	tcase_add_test(tc, test_unregistered);
	tcase_add_test(tc, test_registered);
	tcase_add_test(tc, test_daemon_table);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
