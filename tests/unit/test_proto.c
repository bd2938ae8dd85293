/* proto/hoist.proto through protobuf-c: round trips and hostile input. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hoist.pb-c.h"
#include "unit_util.h"

/* Packs any message into a malloc'd buffer. */
static uint8_t *pack(const ProtobufCMessage *m, size_t *len)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(n ? n : 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(protobuf_c_message_pack(m, buf), n);
	*len = n;
	return buf;
}

static Hoist__AttachRequest make_attach_request(void)
{
	Hoist__AttachRequest r = HOIST__ATTACH_REQUEST__INIT;
	r.abi_version = 1;
	r.job_key = "job-4711:alpha";
	r.rank = 3;
	r.size = 64;
	r.pid = 123456;
	r.heap_bytes = 64ull << 30;
	return r;
}

START_TEST(test_attach_request)
{
	Hoist__AttachRequest r = make_attach_request();
	size_t len;
	uint8_t *buf = pack(&r.base, &len);
	ck_assert_uint_eq(hoist__attach_request__get_packed_size(&r), len);
	Hoist__AttachRequest *u = hoist__attach_request__unpack(NULL, len, buf);
	ck_assert_ptr_nonnull(u);
	ck_assert_uint_eq(u->abi_version, 1);
	ck_assert_str_eq(u->job_key, "job-4711:alpha");
	ck_assert_int_eq(u->rank, 3);
	ck_assert_int_eq(u->size, 64);
	ck_assert_int_eq(u->pid, 123456);
	ck_assert_uint_eq(u->heap_bytes, 64ull << 30);
	hoist__attach_request__free_unpacked(u, NULL);

	/* extremes and defaults */
	Hoist__AttachRequest d = HOIST__ATTACH_REQUEST__INIT;
	d.rank = -1;
	d.size = INT32_MAX;
	d.heap_bytes = UINT64_MAX;
	free(buf);
	buf = pack(&d.base, &len);
	u = hoist__attach_request__unpack(NULL, len, buf);
	ck_assert_ptr_nonnull(u);
	ck_assert_uint_eq(u->abi_version, 0);
	ck_assert_str_eq(u->job_key, "");
	ck_assert_int_eq(u->rank, -1);
	ck_assert_int_eq(u->size, INT32_MAX);
	ck_assert_int_eq(u->pid, 0);
	ck_assert_uint_eq(u->heap_bytes, UINT64_MAX);
	hoist__attach_request__free_unpacked(u, NULL);
	free(buf);

	/* An all-default message packs to nothing and still unpacks. */
	Hoist__AttachRequest e = HOIST__ATTACH_REQUEST__INIT;
	ck_assert_uint_eq(hoist__attach_request__get_packed_size(&e), 0);
	u = hoist__attach_request__unpack(NULL, 0, (const uint8_t *)"");
	ck_assert_ptr_nonnull(u);
	ck_assert_str_eq(u->job_key, "");
	hoist__attach_request__free_unpacked(u, NULL);
}
END_TEST

START_TEST(test_attach_reply)
{
	Hoist__AttachReply r = HOIST__ATTACH_REPLY__INIT;
	r.status = 0;
	r.abi_version = 1;
	r.sq_entries = 1024;
	r.cq_entries = 2048;
	r.ring_bytes = 4096 + 1024 * 64 + 2048 * 16;
	r.staging_bytes = 4 << 20;
	r.heap_bytes = 1ull << 34;
	r.spin_us = 50;
	r.nfds = 4;
	size_t len;
	uint8_t *buf = pack(&r.base, &len);
	Hoist__AttachReply *u = hoist__attach_reply__unpack(NULL, len, buf);
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(u->status, 0);
	ck_assert_str_eq(u->error, "");
	ck_assert_uint_eq(u->abi_version, 1);
	ck_assert_uint_eq(u->sq_entries, 1024);
	ck_assert_uint_eq(u->cq_entries, 2048);
	ck_assert_uint_eq(u->ring_bytes, 4096 + 1024 * 64 + 2048 * 16);
	ck_assert_uint_eq(u->staging_bytes, 4 << 20);
	ck_assert_uint_eq(u->heap_bytes, 1ull << 34);
	ck_assert_uint_eq(u->spin_us, 50);
	ck_assert_uint_eq(u->nfds, 4);
	hoist__attach_reply__free_unpacked(u, NULL);
	free(buf);

	Hoist__AttachReply f = HOIST__ATTACH_REPLY__INIT;
	f.status = -ENOMEM;
	f.error = "heap of 1 TiB exceeds max_heap_bytes (4 GiB)";
	buf = pack(&f.base, &len);
	u = hoist__attach_reply__unpack(NULL, len, buf);
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(u->status, -ENOMEM);
	ck_assert_str_eq(u->error, "heap of 1 TiB exceeds max_heap_bytes (4 GiB)");
	ck_assert_uint_eq(u->nfds, 0);
	hoist__attach_reply__free_unpacked(u, NULL);
	free(buf);
}
END_TEST

START_TEST(test_stats_request)
{
	Hoist__StatsRequest r = HOIST__STATS_REQUEST__INIT;
	r.settings = 1;
	r.abi_version = 1;
	size_t len;
	uint8_t *buf = pack(&r.base, &len);
	ck_assert_uint_gt(len, 0);
	Hoist__StatsRequest *u = hoist__stats_request__unpack(NULL, len, buf);
	ck_assert_ptr_nonnull(u);
	ck_assert(u->settings);
	ck_assert_uint_eq(u->abi_version, 1);
	hoist__stats_request__free_unpacked(u, NULL);
	free(buf);
}
END_TEST

/* A StatsReply with every repeated field populated (and one empty list). */
struct stats_fixture {
	Hoist__Counter dc[3], c0[2];
	Hoist__Counter *dcp[3], *c0p[2];
	Hoist__ClientStats cl[2];
	Hoist__ClientStats *clp[2];
	Hoist__Setting se[3];
	Hoist__Setting *sep[3];
	Hoist__StatsReply r;
};

static void make_stats(struct stats_fixture *f)
{
	static const char *dnames[] = {"sqe_total", "cqe_total", "wakeups"};
	static const uint64_t dvals[] = {123456789012ull, 0, UINT64_MAX};
	for (int i = 0; i < 3; i++) {
		hoist__counter__init(&f->dc[i]);
		f->dc[i].name = (char *)dnames[i];
		f->dc[i].value = dvals[i];
		f->dcp[i] = &f->dc[i];
	}
	for (int i = 0; i < 2; i++) {
		hoist__counter__init(&f->c0[i]);
		f->c0[i].name = i ? "gets" : "puts";
		f->c0[i].value = 1000u + (unsigned)i;
		f->c0p[i] = &f->c0[i];
	}
	for (int i = 0; i < 2; i++) {
		hoist__client_stats__init(&f->cl[i]);
		f->cl[i].job_key = i ? "job-b" : "job-a";
		f->cl[i].rank = i;
		f->cl[i].pid = 4000 + i;
		f->cl[i].uid = 1000;
		f->clp[i] = &f->cl[i];
	}
	f->cl[0].n_counters = 2;
	f->cl[0].counters = f->c0p;
	/* cl[1] has no counters */
	static const char *sn[] = {"spin_us", "runtime_dir", "log_level"};
	static const char *sv[] = {"50", "", "debug"};
	static const char *ss[] = {"default", "default", "flag"};
	for (int i = 0; i < 3; i++) {
		hoist__setting__init(&f->se[i]);
		f->se[i].name = (char *)sn[i];
		f->se[i].value = (char *)sv[i];
		f->se[i].source = (char *)ss[i];
		f->sep[i] = &f->se[i];
	}
	hoist__stats_reply__init(&f->r);
	f->r.status = 0;
	f->r.version = "0.1.0";
	f->r.uptime_ms = 86400000ull * 365;
	f->r.n_daemon = 3;
	f->r.daemon = f->dcp;
	f->r.n_clients = 2;
	f->r.clients = f->clp;
	f->r.n_settings = 3;
	f->r.settings = f->sep;
}

static void check_stats(const Hoist__StatsReply *u, const struct stats_fixture *f)
{
	ck_assert_int_eq(u->status, f->r.status);
	ck_assert_str_eq(u->version, f->r.version);
	ck_assert_uint_eq(u->uptime_ms, f->r.uptime_ms);
	ck_assert_uint_eq(u->n_daemon, 3);
	for (int i = 0; i < 3; i++) {
		ck_assert_str_eq(u->daemon[i]->name, f->dc[i].name);
		ck_assert_uint_eq(u->daemon[i]->value, f->dc[i].value);
	}
	ck_assert_uint_eq(u->n_clients, 2);
	for (int i = 0; i < 2; i++) {
		const Hoist__ClientStats *c = u->clients[i];
		ck_assert_str_eq(c->job_key, f->cl[i].job_key);
		ck_assert_int_eq(c->rank, f->cl[i].rank);
		ck_assert_int_eq(c->pid, f->cl[i].pid);
		ck_assert_uint_eq(c->uid, f->cl[i].uid);
		ck_assert_uint_eq(c->n_counters, f->cl[i].n_counters);
		for (size_t k = 0; k < c->n_counters; k++) {
			ck_assert_str_eq(c->counters[k]->name, f->cl[i].counters[k]->name);
			ck_assert_uint_eq(c->counters[k]->value, f->cl[i].counters[k]->value);
		}
	}
	ck_assert_uint_eq(u->n_settings, 3);
	for (int i = 0; i < 3; i++) {
		ck_assert_str_eq(u->settings[i]->name, f->se[i].name);
		ck_assert_str_eq(u->settings[i]->value, f->se[i].value);
		ck_assert_str_eq(u->settings[i]->source, f->se[i].source);
	}
}

START_TEST(test_stats_reply)
{
	struct stats_fixture f;
	make_stats(&f);
	size_t len;
	uint8_t *buf = pack(&f.r.base, &len);
	Hoist__StatsReply *u = hoist__stats_reply__unpack(NULL, len, buf);
	ck_assert_ptr_nonnull(u);
	check_stats(u, &f);
	/* Packing the unpacked copy gives the same bytes. */
	size_t len2;
	uint8_t *buf2 = pack(&u->base, &len2);
	ck_assert_uint_eq(len2, len);
	ck_assert_mem_eq(buf2, buf, len);
	free(buf2);
	hoist__stats_reply__free_unpacked(u, NULL);
	free(buf);
}
END_TEST

/* A reply in pieces (abi 2): header + client rows, concatenated, parse as
 * one StatsReply holding every row; each piece says whether more follow. */
START_TEST(test_stats_pieces)
{
	Hoist__StatsReply head = HOIST__STATS_REPLY__INIT, rows = HOIST__STATS_REPLY__INIT;
	Hoist__CounterInfo ci = HOIST__COUNTER_INFO__INIT, *cip = &ci;
	Hoist__ClientStats c[3], *cp[3];
	head.version = rows.version = "0.1.0";
	head.uptime_ms = 42;
	head.transport = "tcp";
	head.more = 1;
	ci.section = "client";
	ci.name = "pf_history";
	ci.kind = 1;
	ci.help = "a gauge";
	head.n_schema = 1;
	head.schema = &cip;
	for (int i = 0; i < 3; i++) {
		hoist__client_stats__init(&c[i]);
		c[i].job_key = "j";
		c[i].rank = i;
		cp[i] = &c[i];
	}
	rows.n_clients = 3;
	rows.clients = cp;
	size_t l1, l2;
	uint8_t *b1 = pack(&head.base, &l1), *b2 = pack(&rows.base, &l2);
	Hoist__StatsReply *p = hoist__stats_reply__unpack(NULL, l2, b2);
	ck_assert_ptr_nonnull(p);
	ck_assert(!p->more && p->n_clients == 3);
	hoist__stats_reply__free_unpacked(p, NULL);
	uint8_t *all = malloc(l1 + l2);
	memcpy(all, b1, l1);
	memcpy(all + l1, b2, l2);
	Hoist__StatsReply *u = hoist__stats_reply__unpack(NULL, l1 + l2, all);
	ck_assert_ptr_nonnull(u);
	ck_assert_uint_eq(u->uptime_ms, 42);
	ck_assert_str_eq(u->transport, "tcp");
	ck_assert_uint_eq(u->n_schema, 1);
	ck_assert_uint_eq(u->schema[0]->kind, 1);
	ck_assert_uint_eq(u->n_clients, 3);
	ck_assert_int_eq(u->clients[2]->rank, 2);
	hoist__stats_reply__free_unpacked(u, NULL);
	free(all);
	free(b1);
	free(b2);
}
END_TEST

/* Every strict prefix of a packed message either fails to unpack or
 * unpacks to a message whose fields are the original's or defaults; cuts
 * inside a field always fail. */
START_TEST(test_truncated)
{
	struct stats_fixture f;
	make_stats(&f);
	size_t len;
	uint8_t *buf = pack(&f.r.base, &len);
	size_t nulls = 0;
	for (size_t cut = 0; cut < len; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1); /* exact size: ASan sees overreads */
		ck_assert_ptr_nonnull(copy);
		memcpy(copy, buf, cut);
		Hoist__StatsReply *u = hoist__stats_reply__unpack(NULL, cut, copy);
		if (!u) {
			nulls++;
		} else {
			/* A cut between fields: only whole leading fields survive. */
			CHK(u->n_daemon <= 3 && u->n_clients <= 2 && u->n_settings <= 3);
			CHK(u->n_settings == 0 || (u->n_clients == 2 && u->n_daemon == 3));
			for (size_t i = 0; i < u->n_clients; i++)
				CHK(u->clients[i]->n_counters == f.cl[i].n_counters);
			hoist__stats_reply__free_unpacked(u, NULL);
		}
		free(copy);
	}
	/* Most cuts land inside a field. */
	ck_assert_uint_gt(nulls, len / 2);
	/* Dropping the last byte always cuts the last setting's string. */
	uint8_t *copy = malloc(len - 1);
	memcpy(copy, buf, len - 1);
	ck_assert_ptr_null(hoist__stats_reply__unpack(NULL, len - 1, copy));
	free(copy);
	free(buf);

	Hoist__AttachRequest r = make_attach_request();
	buf = pack(&r.base, &len);
	/* heap_bytes (64 GiB) is the last field: a multi-byte varint */
	ck_assert_ptr_null(hoist__attach_request__unpack(NULL, len - 1, buf));
	ck_assert_ptr_null(hoist__attach_request__unpack(NULL, len - 3, buf));
	free(buf);
}
END_TEST

START_TEST(test_garbage)
{
	static const struct {
		const char *what;
		size_t len;
		uint8_t b[16];
	} bad[] = {
		{"all ones", 16, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"field number 0", 2, {0x00, 0x00}},
		{"wire type 7", 2, {0x0f, 0x01}},
		{"varint without value", 1, {0x08}},
		{"string longer than buffer", 3, {0x12, 0x10, 'a'}},
		{"string length overflow", 12, {0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 'a'}},
		{"11-byte varint", 12, {0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},
		{"string field sent as varint", 2, {0x10 /* field 2 (job_key), wire type 0 */, 0x05}},
		{"end group without start", 1, {0x0c}},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		Hoist__AttachRequest *u = hoist__attach_request__unpack(NULL, bad[i].len, bad[i].b);
		ck_assert_msg(u == NULL, "AttachRequest accepted garbage: %s", bad[i].what);
		Hoist__StatsReply *s = hoist__stats_reply__unpack(NULL, bad[i].len, bad[i].b);
		ck_assert_msg(s == NULL, "StatsReply accepted garbage: %s", bad[i].what);
	}
	/* A nested message whose bytes are garbage fails the whole reply. */
	static const uint8_t nested[] = {0x2a, 0x03, 0x0a, 0x05, 'x'}; /* clients { job_key: len 5, 1 byte } */
	ck_assert_ptr_null(hoist__stats_reply__unpack(NULL, sizeof(nested), nested));
}
END_TEST

START_TEST(test_random_bytes)
{
	/* Random buffers and random single-byte corruptions of a valid reply:
	 * unpack must never crash (the test runs in its own process) and
	 * whatever it returns must be freeable. */
	uint64_t seed = 7;
	size_t ok = 0, fail = 0;
	struct stats_fixture f;
	make_stats(&f);
	size_t len;
	uint8_t *valid = pack(&f.r.base, &len);
	for (int i = 0; i < 20000; i++) {
		uint64_t r = rng_next(&seed);
		size_t n;
		uint8_t *b;
		if (r & 1) {
			n = (size_t)((r >> 1) % 64);
			b = malloc(n ? n : 1);
			for (size_t k = 0; k < n; k++)
				b[k] = (uint8_t)rng_next(&seed);
		} else {
			n = len;
			b = malloc(n);
			memcpy(b, valid, n);
			b[(r >> 1) % n] ^= (uint8_t)(1 + (r >> 20) % 255);
		}
		Hoist__StatsReply *u = hoist__stats_reply__unpack(NULL, n, b);
		if (u) {
			ok++;
			/* internally consistent: every array entry present */
			for (size_t k = 0; k < u->n_clients; k++)
				CHK(u->clients[k] != NULL && u->clients[k]->job_key != NULL);
			for (size_t k = 0; k < u->n_settings; k++)
				CHK(u->settings[k] != NULL && u->settings[k]->value != NULL);
			hoist__stats_reply__free_unpacked(u, NULL);
		} else {
			fail++;
		}
		Hoist__AttachRequest *a = hoist__attach_request__unpack(NULL, n, b);
		if (a) {
			CHK(a->job_key != NULL);
			hoist__attach_request__free_unpacked(a, NULL);
		}
		free(b);
	}
	free(valid);
	ck_assert_uint_gt(fail, 1000);
	ck_assert_uint_gt(ok, 10);
}
END_TEST

static Suite *proto_suite(void)
{
	Suite *s = suite_create("proto");
	TCase *tc = tcase_create("proto");
	tcase_add_test(tc, test_attach_request);
	tcase_add_test(tc, test_attach_reply);
	tcase_add_test(tc, test_stats_request);
	tcase_add_test(tc, test_stats_reply);
	tcase_add_test(tc, test_stats_pieces);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_random_bytes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(proto_suite());
}
