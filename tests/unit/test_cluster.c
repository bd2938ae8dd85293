/*
 * test_cluster: job identity on the wire (cluster_job_id). A job is its
 * owner's uid and its key; its id is a keyed hash under the cluster key, so
 * every node computes the same id, another cluster (key) or another owner
 * gets another id, and keys that collide under an unkeyed hash (FNV-1a, the
 * old job id) do not collide here.
 *
 * And how a daemon without node_id finds itself in the node list: the one
 * entry whose address is one of this host's; none or several is an error
 * that asks for node_id.
 *
 * And when a silent peer counts as lost: within peer_timeout_ms of its last
 * sign of life, never while it is merely idle.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

static char keyfile[2][64];

static void write_key(int i, const char *text)
{
	snprintf(keyfile[i], sizeof(keyfile[i]), "/tmp/hoist-test-cluster.XXXXXX");
	int fd = mkstemp(keyfile[i]);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* A daemon of a 2-node cluster (node id `self`) holding key file k. */
static void configure(struct daemon *d, int k, int self)
{
	memset(d, 0, sizeof(*d));
	settings_defaults(&d->cfg);
	snprintf(d->cfg.nodes, sizeof(d->cfg.nodes), "127.0.0.1:7701,127.0.0.1:7702");
	snprintf(d->cfg.cluster_key_file, sizeof(d->cfg.cluster_key_file), "%s", keyfile[k]);
	d->cfg.node_id = (uint64_t)self;
	d->cfg.source[SET_node_id] = SRC_FLAG;
	char err[256];
	ck_assert_msg(cluster_configure(d, err, sizeof(err)) == 0, "%s", err);
}

static void setup(void)
{
	write_key(0, "0123456789abcdef0123456789abcdef\n");
	write_key(1, "another cluster's key, 32 bytes!\n");
}

static void teardown(void)
{
	unlink(keyfile[0]);
	unlink(keyfile[1]);
}

START_TEST(test_same_on_every_node)
{
	static struct daemon a, b;
	configure(&a, 0, 0);
	configure(&b, 0, 1);
	ck_assert_uint_eq(cluster_job_id(&a.net, 1001, "slurm-77.0"),
			  cluster_job_id(&b.net, 1001, "slurm-77.0"));
	ck_assert_uint_ne(cluster_job_id(&a.net, 1001, "slurm-77.0"), 0);
	free(a.net.peers);
	free(b.net.peers);
}
END_TEST

START_TEST(test_owner_and_key_name_the_job)
{
	static struct daemon a;
	configure(&a, 0, 0);
	uint64_t id = cluster_job_id(&a.net, 1001, "slurm-77.0");
	ck_assert_uint_ne(id, cluster_job_id(&a.net, 0, "slurm-77.0"));
	ck_assert_uint_ne(id, cluster_job_id(&a.net, 65534, "slurm-77.0"));
	ck_assert_uint_ne(id, cluster_job_id(&a.net, 1001, "slurm-77.1"));
	/* the same 64-bit FNV-1a hash, the wire id before */
	ck_assert_uint_ne(cluster_job_id(&a.net, 1001, "jf048c0605a57f7a3"),
			  cluster_job_id(&a.net, 1001, "je38a16c1c13e79cc"));
	free(a.net.peers);
}
END_TEST

START_TEST(test_keyed_by_the_cluster)
{
	static struct daemon a, b;
	configure(&a, 0, 0);
	configure(&b, 1, 0);
	ck_assert_uint_ne(cluster_job_id(&a.net, 1001, "slurm-77.0"),
			  cluster_job_id(&b.net, 1001, "slurm-77.0"));
	free(a.net.peers);
	free(b.net.peers);
}
END_TEST

START_TEST(test_single_node_random_key)
{
	/* a node of its own has no cluster key: ids are keyed by a secret of
	 * its own, so nobody can compute them from outside */
	static struct daemon a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	settings_defaults(&a.cfg);
	settings_defaults(&b.cfg);
	char err[256];
	ck_assert_int_eq(cluster_configure(&a, err, sizeof(err)), 0);
	ck_assert_int_eq(cluster_configure(&b, err, sizeof(err)), 0);
	ck_assert_uint_ne(cluster_job_id(&a.net, 1001, "k"), cluster_job_id(&b.net, 1001, "k"));
	ck_assert_uint_eq(cluster_job_id(&a.net, 1001, "k"), cluster_job_id(&a.net, 1001, "k"));
}
END_TEST

/* A daemon of the cluster `nodes` that was not given node_id. */
static int configure_unset(struct daemon *d, const char *nodes, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	settings_defaults(&d->cfg);
	snprintf(d->cfg.nodes, sizeof(d->cfg.nodes), "%s", nodes);
	snprintf(d->cfg.cluster_key_file, sizeof(d->cfg.cluster_key_file), "%s", keyfile[0]);
	err[0] = 0;
	return cluster_configure(d, err, errlen);
}

static struct in_addr ip(const char *text)
{
	struct in_addr a;
	ck_assert_int_eq(inet_pton(AF_INET, text, &a), 1);
	return a;
}

START_TEST(test_self_index_from_addresses)
{
	static struct daemon d;
	d.net.nnodes = 3;
	struct peer peers[3] = {0};
	const char *list[3] = {"192.0.2.1", "192.0.2.2", "192.0.2.3"};
	for (int i = 0; i < 3; i++)
		peers[i].addr.sin_addr = ip(list[i]);
	d.net.peers = peers;
	struct in_addr host_b[] = {ip("127.0.0.1"), ip("10.9.8.7"), ip("192.0.2.2")};
	int first = -1, second = -1;
	ck_assert_int_eq(cluster_self_index(&d.net, host_b, 3, &first, &second), 1);
	struct in_addr host_c[] = {ip("192.0.2.3")};
	ck_assert_int_eq(cluster_self_index(&d.net, host_c, 1, &first, &second), 2);
	struct in_addr elsewhere[] = {ip("127.0.0.1"), ip("192.0.2.4")};
	ck_assert_int_eq(cluster_self_index(&d.net, elsewhere, 2, &first, &second), -ENOENT);
	/* one host holding two entries' addresses: which one is it? */
	struct in_addr both[] = {ip("192.0.2.3"), ip("192.0.2.1")};
	ck_assert_int_eq(cluster_self_index(&d.net, both, 2, &first, &second), -EEXIST);
	ck_assert_int_eq(first, 0);
	ck_assert_int_eq(second, 2);
	/* the same address twice in the list: also ambiguous */
	peers[2].addr.sin_addr = ip("192.0.2.2");
	ck_assert_int_eq(cluster_self_index(&d.net, host_b, 3, &first, &second), -EEXIST);
	ck_assert_int_eq(first, 1);
	ck_assert_int_eq(second, 2);
}
END_TEST

/* This host always has 127.0.0.1 (lo); 192.0.2.0/24 (TEST-NET-1) is no
 * address of a test machine outside the namespaces the tests make. */
START_TEST(test_configure_derives_node_id)
{
	static struct daemon d;
	char err[600];
	ck_assert_msg(configure_unset(&d, "192.0.2.250:7701,127.0.0.1:7702,192.0.2.251:7703", err,
				      sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(d.net.self, 1);
	ck_assert_int_eq(d.net.nnodes, 3);
	free(d.net.peers);
}
END_TEST

START_TEST(test_configure_several_on_this_host)
{
	static struct daemon d;
	char err[600];
	ck_assert_int_eq(configure_unset(&d, "127.0.0.1:7701,127.0.0.1:7702", err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "several") && strstr(err, "set node_id") &&
			      strstr(err, "127.0.0.1:7702"), "%s", err);
	free(d.net.peers);
}
END_TEST

START_TEST(test_configure_not_in_the_list)
{
	static struct daemon d;
	char err[600];
	ck_assert_int_eq(configure_unset(&d, "192.0.2.250:7701,192.0.2.251:7702", err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "no entry") && strstr(err, "set node_id"), "%s", err);
	free(d.net.peers);
}
END_TEST

/* node_id given: used as given, even where the addresses say otherwise */
START_TEST(test_configure_explicit_node_id)
{
	static struct daemon d;
	char err[600];
	memset(&d, 0, sizeof(d));
	settings_defaults(&d.cfg);
	snprintf(d.cfg.cluster_key_file, sizeof(d.cfg.cluster_key_file), "%s", keyfile[0]);
	ck_assert_int_eq(settings_set(&d.cfg, "nodes", "127.0.0.1:7701,127.0.0.1:7702", SRC_FILE), 0);
	ck_assert_int_eq(settings_set(&d.cfg, "node_id", "1", SRC_ENV), 0);
	ck_assert_msg(cluster_configure(&d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(d.net.self, 1);
	free(d.net.peers);
	/* also 0, the default value, when it was set on purpose */
	memset(&d, 0, sizeof(d));
	settings_defaults(&d.cfg);
	snprintf(d.cfg.cluster_key_file, sizeof(d.cfg.cluster_key_file), "%s", keyfile[0]);
	ck_assert_int_eq(settings_set(&d.cfg, "nodes", "192.0.2.250:1,127.0.0.1:2", SRC_FLAG), 0);
	ck_assert_int_eq(settings_set(&d.cfg, "node_id", "0", SRC_FLAG), 0);
	ck_assert_msg(cluster_configure(&d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(d.net.self, 0);
	free(d.net.peers);
}
END_TEST

/* Peer loss within the promise. The transports look for silent peers every
 * peer_check_interval_ns and declare one lost once its silence exceeds
 * peer_silence_limit_ns. Whenever in a check interval a peer falls silent,
 * the first check that sees it over the limit must come no later than
 * peer_timeout_ms after its last sign of life; and a healthy idle peer,
 * whose answers can be heartbeat_ms plus one check interval apart, must
 * never be over the limit. The old rule (limit = peer_timeout_ms) noticed a
 * stopped peer up to one interval late: 5.06-5.20 s with the 5 s default. */
START_TEST(test_peer_lost_within_timeout)
{
	static const uint64_t conf[][2] = {/* heartbeat_ms, peer_timeout_ms */
		{1000, 5000}, {10, 100}, {100, 100}, {250, 1000}, {1000, 1000},
		{1000, 30000}, {600000, 3600000}, {10, 3600000}, {5000, 5000}};
	for (size_t k = 0; k < sizeof(conf) / sizeof(conf[0]); k++) {
		uint64_t to = conf[k][1], hb = peer_heartbeat_ms(conf[k][0], to); /* as main.c */
		uint64_t g = peer_check_interval_ns(hb, to), limit = peer_silence_limit_ns(hb, to);
		ck_assert_uint_gt(g, 0);
		/* the checks run at 0, g, 2g, ...; the peer's last sign of
		 * life comes at last (anywhere in an interval), then silence */
		for (uint64_t step = 0; step < 97; step++) {
			uint64_t last = 3 * g + step * g / 97, t = 0;
			while (!(t > last && t - last > limit))
				t += g;
			ck_assert_msg(t - last <= to * 1000000ull,
				      "hb %llu timeout %llu: lost %llu ns after the last sign of life",
				      (unsigned long long)hb, (unsigned long long)to,
				      (unsigned long long)(t - last));
		}
		/* no false loss: the pings leave room (main.c clamps heartbeat_ms) */
		ck_assert_uint_ge(limit, hb * 1000000ull + 2 * g);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cluster");
	TCase *tc = tcase_create("job id");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_same_on_every_node);
	tcase_add_test(tc, test_owner_and_key_name_the_job);
	tcase_add_test(tc, test_keyed_by_the_cluster);
	tcase_add_test(tc, test_single_node_random_key);
	suite_add_tcase(s, tc);
	tc = tcase_create("node id");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_self_index_from_addresses);
	tcase_add_test(tc, test_configure_derives_node_id);
	tcase_add_test(tc, test_configure_several_on_this_host);
	tcase_add_test(tc, test_configure_not_in_the_list);
	tcase_add_test(tc, test_configure_explicit_node_id);
	suite_add_tcase(s, tc);
	tc = tcase_create("peer loss");
	tcase_add_test(tc, test_peer_lost_within_timeout);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
