/*
 * test_cluster: job identity on the wire (cluster_job_id). A job is its
 * owner's uid and its key; its id is a keyed hash under the cluster key, so
 * every node computes the same id, another cluster (key) or another owner
 * gets another id, and keys that collide under an unkeyed hash (FNV-1a, the
 * old job id) do not collide here.
 */
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
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
