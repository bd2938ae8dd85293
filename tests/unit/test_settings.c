/* daemon/settings.c: table, parsing, file, environment, precedence. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "settings.h"
#include "unit_util.h"

static struct hoistd_settings s;
static char tmpdir[] = "/tmp/hoist-unit-settings-XXXXXX";
static int tmpdir_made;

static void clear_env(void)
{
	for (int i = 0; i < SET__COUNT; i++) {
		char e[64];
		unsetenv(settings_env_name(i, 0, e, sizeof(e)));
		unsetenv(settings_env_name(i, 1, e, sizeof(e)));
	}
}

static void setup(void)
{
	clear_env();
	settings_defaults(&s);
}

/* Writes text into a fresh file in the test's temp dir; returns its path
 * (static buffer). */
static const char *write_file(const char *name, const char *text)
{
	static char path[256];
	if (!tmpdir_made) {
		ck_assert_ptr_nonnull(mkdtemp(tmpdir));
		tmpdir_made = 1;
	}
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

static void rm_file(const char *path)
{
	unlink(path);
}

START_TEST(test_defaults_valid)
{
	/* Every default of the table parses and is inside its own range. */
#define X(name, type, def, min, max, help)                                          \
	{                                                                           \
		struct hoistd_settings t;                                           \
		memset(&t, 0, sizeof(t));                                           \
		ck_assert_msg(settings_set(&t, #name, def, SRC_DEFAULT) == 0,      \
			      "default of %s (\"%s\") rejected", #name, def);       \
	}
	HOISTD_SETTINGS(X)
#undef X
	const char *why = NULL;
	ck_assert_int_eq(settings_check(&s, &why), 0);
	for (int i = 0; i < SET__COUNT; i++)
		ck_assert_int_eq(s.source[i], SRC_DEFAULT);
	ck_assert_str_eq(s.runtime_dir, "");
	ck_assert_uint_eq(s.log_level, 2); /* info */
	ck_assert_uint_eq(s.spin_us, 50);
	ck_assert_uint_eq(s.sq_entries, 1024);
	ck_assert_uint_eq(s.cq_entries, 2048);
	ck_assert_uint_eq(s.staging_bytes, 4ull << 20);
	ck_assert_uint_eq(s.max_heap_bytes, 4ull << 30);
	ck_assert_uint_eq(s.batch, 64);
	ck_assert_uint_eq(s.job_timeout_ms, 30000);
	ck_assert_uint_eq(s.max_clients, 1024);
}
END_TEST

START_TEST(test_set_good)
{
	ck_assert_int_eq(settings_set(&s, "spin_us", "100", SRC_FLAG), 0);
	ck_assert_uint_eq(s.spin_us, 100);
	ck_assert_int_eq(s.source[SET_spin_us], SRC_FLAG);
	ck_assert_int_eq(settings_set(&s, "spin_us", "0", SRC_FLAG), 0); /* min is 0 */
	ck_assert_uint_eq(s.spin_us, 0);
	ck_assert_int_eq(settings_set(&s, "spin_us", "1000000", SRC_FLAG), 0); /* max inclusive */
	ck_assert_uint_eq(s.spin_us, 1000000);
	ck_assert_int_eq(settings_set(&s, "log_level", "debug", SRC_ENV), 0);
	ck_assert_uint_eq(s.log_level, 3);
	ck_assert_int_eq(settings_set(&s, "log_level", "ERROR", SRC_ENV), 0);
	ck_assert_uint_eq(s.log_level, 0);
	ck_assert_int_eq(settings_set(&s, "runtime_dir", "/tmp/hoist dir", SRC_FILE), 0);
	ck_assert_str_eq(s.runtime_dir, "/tmp/hoist dir");
	ck_assert_int_eq(s.source[SET_runtime_dir], SRC_FILE);
	ck_assert_int_eq(settings_set(&s, "staging_bytes", "64m", SRC_FLAG), 0);
	ck_assert_uint_eq(s.staging_bytes, 64ull << 20);
	ck_assert_int_eq(settings_set(&s, "staging_bytes", "4g", SRC_FLAG), 0); /* max 1<<32 */
	ck_assert_uint_eq(s.staging_bytes, 4ull << 30);
	ck_assert_int_eq(settings_set(&s, "max_heap_bytes", "4096", SRC_FLAG), 0);
	ck_assert_uint_eq(s.max_heap_bytes, 4096);
	char buf[64];
	ck_assert_str_eq(settings_format(&s, SET_staging_bytes, buf, sizeof(buf)), "4294967296");
	ck_assert_str_eq(settings_format(&s, SET_log_level, buf, sizeof(buf)), "error");
	ck_assert_str_eq(settings_format(&s, SET_runtime_dir, buf, sizeof(buf)), "/tmp/hoist dir");
}
END_TEST

START_TEST(test_set_bad)
{
	const char *bad_uint[] = {"", "abc", "12x", "1.5", "-1", "4k", " ", "12 "};
	for (size_t i = 0; i < sizeof(bad_uint) / sizeof(bad_uint[0]); i++)
		ck_assert_msg(settings_set(&s, "spin_us", bad_uint[i], SRC_FLAG) == -EINVAL,
			      "spin_us \"%s\"", bad_uint[i]);
	const char *bad_size[] = {"", "k", "4q", "4kk", "-4k", "4 k", "m64"};
	for (size_t i = 0; i < sizeof(bad_size) / sizeof(bad_size[0]); i++)
		ck_assert_msg(settings_set(&s, "staging_bytes", bad_size[i], SRC_FLAG) == -EINVAL,
			      "staging_bytes \"%s\"", bad_size[i]);
	ck_assert_int_eq(settings_set(&s, "log_level", "verbose", SRC_FLAG), -EINVAL);
	ck_assert_int_eq(settings_set(&s, "log_level", "", SRC_FLAG), -EINVAL);
	ck_assert_int_eq(settings_set(&s, "log_level", "2", SRC_FLAG), -EINVAL);
	/* A rejected value leaves value and source alone. */
	ck_assert_uint_eq(s.spin_us, 50);
	ck_assert_uint_eq(s.staging_bytes, 4ull << 20);
	ck_assert_uint_eq(s.log_level, 2);
	for (int i = 0; i < SET__COUNT; i++)
		ck_assert_int_eq(s.source[i], SRC_DEFAULT);
}
END_TEST

START_TEST(test_set_range)
{
	ck_assert_int_eq(settings_set(&s, "spin_us", "1000001", SRC_FLAG), -ERANGE);
	ck_assert_int_eq(settings_set(&s, "spin_us", "99999999999999999999999", SRC_FLAG), -ERANGE);
	ck_assert_int_eq(settings_set(&s, "sq_entries", "4", SRC_FLAG), -ERANGE);
	ck_assert_int_eq(settings_set(&s, "sq_entries", "131072", SRC_FLAG), -ERANGE);
	ck_assert_int_eq(settings_set(&s, "batch", "0", SRC_FLAG), -ERANGE);
	ck_assert_int_eq(settings_set(&s, "staging_bytes", "1k", SRC_FLAG), -ERANGE);
	ck_assert_int_eq(settings_set(&s, "staging_bytes", "4097m", SRC_FLAG), -ERANGE);
	ck_assert_int_eq(settings_set(&s, "max_heap_bytes", "2t", SRC_FLAG), -ERANGE);
	ck_assert_int_eq(settings_set(&s, "max_heap_bytes", "17179869184g", SRC_FLAG), -ERANGE);
	char longdir[400];
	memset(longdir, 'd', sizeof(longdir) - 1);
	longdir[sizeof(longdir) - 1] = 0;
	ck_assert_int_eq(settings_set(&s, "runtime_dir", longdir, SRC_FLAG), -ERANGE);
	longdir[255] = 0; /* 255 chars + NUL fits char[256] */
	ck_assert_int_eq(settings_set(&s, "runtime_dir", longdir, SRC_FLAG), 0);
	ck_assert_uint_eq(strlen(s.runtime_dir), 255);
	ck_assert_uint_eq(s.spin_us, 50);
	ck_assert_uint_eq(s.sq_entries, 1024);
	ck_assert_uint_eq(s.max_heap_bytes, 4ull << 30);
}
END_TEST

START_TEST(test_set_unknown)
{
	ck_assert_int_eq(settings_set(&s, "nope", "1", SRC_FLAG), -ENOENT);
	ck_assert_int_eq(settings_set(&s, "", "1", SRC_FLAG), -ENOENT);
	ck_assert_int_eq(settings_set(&s, "spin_us_", "1", SRC_FLAG), -ENOENT);
	ck_assert_int_eq(settings_set(&s, "SPIN_US_X", "1", SRC_FLAG), -ENOENT);
	/* Unknown name wins over a bad value. */
	ck_assert_int_eq(settings_set(&s, "nope", "garbage", SRC_FLAG), -ENOENT);
}
END_TEST

START_TEST(test_parse_size)
{
	struct {
		const char *text;
		uint64_t v;
	} good[] = {
		{"0", 0},
		{"12", 12},
		{"4k", 4096},
		{"4K", 4096},
		{"64m", 64ull << 20},
		{"2g", 2ull << 30},
		{"1t", 1ull << 40},
		{"18446744073709551615", UINT64_MAX},
		{"16777215t", 16777215ull << 40},
		{"17179869183g", 17179869183ull << 30},
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		uint64_t v = 1234;
		ck_assert_msg(settings_parse_size(good[i].text, &v) == 0, "\"%s\" rejected", good[i].text);
		ck_assert_msg(v == good[i].v, "\"%s\" -> %llu", good[i].text, (unsigned long long)v);
	}
	struct {
		const char *text;
		int rc;
	} bad[] = {
		{"", -EINVAL},
		{"k", -EINVAL},
		{"-4k", -EINVAL},
		{"4x", -EINVAL},
		{"4kk", -EINVAL},
		{"4k ", -EINVAL},
		{"0x10", -EINVAL},
		{"18446744073709551616", -ERANGE},
		{"17179869184g", -ERANGE},
		{"16777216t", -ERANGE},
		{"18014398509481984k", -ERANGE},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 1234;
		int rc = settings_parse_size(bad[i].text, &v);
		ck_assert_msg(rc == bad[i].rc, "\"%s\": %d, want %d", bad[i].text, rc, bad[i].rc);
		ck_assert_uint_eq(v, 1234);
	}
	uint64_t v = 0;
	ck_assert_int_eq(settings_parse_size(NULL, &v), -EINVAL);
}
END_TEST

START_TEST(test_negative_with_leading_space)
{
	/* The '-' check looks at the first byte only, but strtoull() skips
	 * leading white space and accepts a sign: " -1" must not parse as a
	 * huge value (environment values are not trimmed). */
	uint64_t v = 1234;
	int rc = settings_parse_size(" -1", &v);
	ck_assert_msg(rc == -EINVAL, "settings_parse_size(\" -1\") = %d, value %llu", rc,
		      (unsigned long long)v);
	rc = settings_set(&s, "batch", " -18446744073709551615", SRC_ENV);
	ck_assert_msg(rc == -EINVAL, "batch \" -18446744073709551615\" = %d, batch %llu", rc,
		      (unsigned long long)s.batch);
}
END_TEST

START_TEST(test_file)
{
	const char *path = write_file("good.conf",
				      "# hoistd test config\n"
				      "\n"
				      "spin_us = 10   # trailing comment\n"
				      "   sq-entries=256\n"
				      "\tlog_level\t=\tdebug\n"
				      "runtime_dir = /tmp/hoist test dir\n"
				      "staging_bytes = 8m\n"
				      "# cq_entries = 3\n");
	int line = -1;
	ck_assert_int_eq(settings_load_file(&s, path, &line), 0);
	ck_assert_uint_eq(s.spin_us, 10);
	ck_assert_uint_eq(s.sq_entries, 256);
	ck_assert_uint_eq(s.log_level, 3);
	ck_assert_str_eq(s.runtime_dir, "/tmp/hoist test dir");
	ck_assert_uint_eq(s.staging_bytes, 8ull << 20);
	ck_assert_uint_eq(s.cq_entries, 2048);
	ck_assert_int_eq(s.source[SET_spin_us], SRC_FILE);
	ck_assert_int_eq(s.source[SET_sq_entries], SRC_FILE);
	ck_assert_int_eq(s.source[SET_cq_entries], SRC_DEFAULT);
	rm_file(path);
}
END_TEST

START_TEST(test_file_errors)
{
	int line = -1;
	const char *path = write_file("noeq.conf", "# ok\nspin_us = 5\nthis line is bad\nbatch = 8\n");
	ck_assert_int_eq(settings_load_file(&s, path, &line), -EINVAL);
	ck_assert_int_eq(line, 3);
	ck_assert_uint_eq(s.spin_us, 5); /* lines before the error applied */
	ck_assert_uint_eq(s.batch, 64);  /* lines after it not */
	rm_file(path);

	settings_defaults(&s);
	line = -1;
	path = write_file("range.conf", "\n\n\nbatch = 0\n");
	ck_assert_int_eq(settings_load_file(&s, path, &line), -ERANGE);
	ck_assert_int_eq(line, 4);
	rm_file(path);

	line = -1;
	path = write_file("unknown.conf", "spin_us=1\nno_such_key = 1\n");
	ck_assert_int_eq(settings_load_file(&s, path, &line), -ENOENT);
	ck_assert_int_eq(line, 2);
	rm_file(path);

	line = -1;
	path = write_file("badval.conf", "log-level = loud\n");
	ck_assert_int_eq(settings_load_file(&s, path, &line), -EINVAL);
	ck_assert_int_eq(line, 1);
	rm_file(path);

	line = -1;
	ck_assert_int_eq(settings_load_file(&s, "/nonexistent/hoistd.conf", &line), -ENOENT);
}
END_TEST

/* The words an operator reads: file, line, key, the values it takes, and
 * the closest known key for a typo. */
START_TEST(test_file_error_words)
{
	char err[600];
	int line = -1;
	const char *path = write_file("typo.conf", "spin_us = 5\nmax_client = 3\n");
	ck_assert_int_eq(settings_load_config(&s, path, &line, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, ":2: unknown setting 'max_client'") &&
			      strstr(err, "did you mean 'max_clients'"), "%s", err);
	ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "%s", err);
	rm_file(path);

	path = write_file("size.conf", "\nstaging_bytes = 1t\n");
	ck_assert_int_eq(settings_load_config(&s, path, &line, err, sizeof(err)), -ERANGE);
	ck_assert_msg(strstr(err, ":2: staging_bytes: '1t' is out of range") &&
			      strstr(err, "from 4k to 4g"), "%s", err);
	rm_file(path);

	path = write_file("level.conf", "log_level = loud\n");
	ck_assert_int_eq(settings_load_config(&s, path, &line, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, ":1: log_level: 'loud' is not valid: one of error, warn, info, debug"),
		      "%s", err);
	rm_file(path);

	path = write_file("uint.conf", "batch = 0\n");
	ck_assert_int_eq(settings_load_config(&s, path, &line, err, sizeof(err)), -ERANGE);
	ck_assert_msg(strstr(err, "batch: '0' is out of range: a whole number from 1 to 65536"), "%s",
		      err);
	rm_file(path);

	path = write_file("noeq2.conf", "just words\n");
	ck_assert_int_eq(settings_load_config(&s, path, &line, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, ":1: expected 'setting = value', got 'just words'"), "%s", err);
	rm_file(path);

	/* no line number for a file that cannot be opened ("conf0" before) */
	ck_assert_int_eq(settings_load_config(&s, "/nonexistent/h.conf", &line, err, sizeof(err)),
			 -ENOENT);
	ck_assert_str_eq(err, "/nonexistent/h.conf: No such file or directory");

	ck_assert_ptr_null(settings_closest("completely_different"));
	ck_assert_str_eq(settings_closest("spinus"), "spin_us");
}
END_TEST

START_TEST(test_env)
{
	ck_assert_int_eq(setenv("HOISTD_SPIN_US", "20", 1), 0);
	ck_assert_int_eq(setenv("HOISTD_SQ_ENTRIES", "512", 1), 0);
	ck_assert_int_eq(setenv("HOISTD_RUNTIME_DIR", "/tmp/envdir", 1), 0);
	const char *bad = NULL;
	ck_assert_int_eq(settings_load_env(&s, &bad), 0);
	ck_assert_uint_eq(s.spin_us, 20);
	ck_assert_uint_eq(s.sq_entries, 512);
	ck_assert_str_eq(s.runtime_dir, "/tmp/envdir");
	ck_assert_int_eq(s.source[SET_spin_us], SRC_ENV);
	ck_assert_int_eq(s.source[SET_batch], SRC_DEFAULT);
	ck_assert_int_eq(settings_env_deprecated(&s, SET_spin_us), 0);

	ck_assert_int_eq(setenv("HOISTD_BATCH", "lots", 1), 0);
	bad = NULL;
	ck_assert_int_eq(settings_load_env(&s, &bad), -EINVAL);
	ck_assert_ptr_nonnull(bad);
	ck_assert_str_eq(bad, "HOISTD_BATCH");
	ck_assert_int_eq(setenv("HOISTD_BATCH", "0", 1), 0);
	ck_assert_int_eq(settings_load_env(&s, &bad), -ERANGE);
	ck_assert_str_eq(bad, "HOISTD_BATCH");
	clear_env();
}
END_TEST

/* HOIST_<NAME>, the name the daemon used to share with libhoist: still
 * read when HOISTD_<NAME> is not set, and marked deprecated; HOISTD_ wins. */
START_TEST(test_env_deprecated)
{
	char buf[64];
	ck_assert_str_eq(settings_env_name(SET_spin_us, 0, buf, sizeof(buf)), "HOISTD_SPIN_US");
	ck_assert_str_eq(settings_env_name(SET_spin_us, 1, buf, sizeof(buf)), "HOIST_SPIN_US");
	ck_assert_int_eq(setenv("HOIST_SPIN_US", "21", 1), 0);
	ck_assert_int_eq(setenv("HOIST_RUNTIME_DIR", "/tmp/client-dir", 1), 0);
	ck_assert_int_eq(setenv("HOISTD_RUNTIME_DIR", "/tmp/daemon-dir", 1), 0);
	const char *bad = NULL;
	ck_assert_int_eq(settings_load_env(&s, &bad), 0);
	ck_assert_uint_eq(s.spin_us, 21);
	ck_assert_int_eq(s.source[SET_spin_us], SRC_ENV);
	ck_assert_int_eq(settings_env_deprecated(&s, SET_spin_us), 1);
	ck_assert_str_eq(s.runtime_dir, "/tmp/daemon-dir");
	ck_assert_int_eq(settings_env_deprecated(&s, SET_runtime_dir), 0);
	ck_assert_int_eq(settings_env_deprecated(&s, SET_batch), 0);
	/* a flag overrides it: the variable is not used, nothing to say */
	ck_assert_int_eq(settings_set(&s, "spin_us", "22", SRC_FLAG), 0);
	ck_assert_int_eq(settings_env_deprecated(&s, SET_spin_us), 0);

	ck_assert_int_eq(setenv("HOIST_BATCH", "lots", 1), 0);
	ck_assert_int_eq(settings_load_env(&s, &bad), -EINVAL);
	ck_assert_str_eq(bad, "HOIST_BATCH");
	ck_assert_int_eq(setenv("HOISTD_BATCH", "7", 1), 0); /* the bad old one is not read */
	ck_assert_int_eq(settings_load_env(&s, &bad), 0);
	ck_assert_uint_eq(s.batch, 7);
	ck_assert_int_eq(settings_env_deprecated(&s, SET_batch), 0);
	clear_env();
}
END_TEST

START_TEST(test_precedence)
{
	const char *path = write_file("prec.conf", "spin_us = 10\nbatch = 32\nsq_entries = 256\n");
	ck_assert_int_eq(setenv("HOISTD_SPIN_US", "20", 1), 0);
	ck_assert_int_eq(setenv("HOISTD_SQ_ENTRIES", "512", 1), 0);
	int line = 0;
	const char *bad = NULL;
	/* hoistd's order: defaults, file, environment, flags. */
	ck_assert_int_eq(settings_load_file(&s, path, &line), 0);
	ck_assert_int_eq(settings_load_env(&s, &bad), 0);
	ck_assert_int_eq(settings_set(&s, "spin_us", "30", SRC_FLAG), 0);
	ck_assert_uint_eq(s.spin_us, 30);
	ck_assert_int_eq(s.source[SET_spin_us], SRC_FLAG);
	ck_assert_uint_eq(s.sq_entries, 512);
	ck_assert_int_eq(s.source[SET_sq_entries], SRC_ENV);
	ck_assert_uint_eq(s.batch, 32);
	ck_assert_int_eq(s.source[SET_batch], SRC_FILE);
	ck_assert_uint_eq(s.cq_entries, 2048);
	ck_assert_int_eq(s.source[SET_cq_entries], SRC_DEFAULT);
	ck_assert_str_eq(settings_source_name(s.source[SET_spin_us]), "flag");
	ck_assert_str_eq(settings_source_name(s.source[SET_sq_entries]), "env");
	ck_assert_str_eq(settings_source_name(s.source[SET_batch]), "file");
	ck_assert_str_eq(settings_source_name(s.source[SET_cq_entries]), "default");
	const char *why = NULL;
	ck_assert_int_eq(settings_check(&s, &why), 0);
	clear_env();
	rm_file(path);
}
END_TEST

START_TEST(test_check)
{
	const char *why = NULL;
	ck_assert_int_eq(settings_set(&s, "sq_entries", "1000", SRC_FLAG), 0); /* in range */
	ck_assert_int_eq(settings_check(&s, &why), -EINVAL);
	ck_assert_ptr_nonnull(why);
	ck_assert_ptr_nonnull(strstr(why, "sq_entries"));

	settings_defaults(&s);
	why = NULL;
	ck_assert_int_eq(settings_set(&s, "cq_entries", "3000", SRC_FLAG), 0);
	ck_assert_int_eq(settings_check(&s, &why), -EINVAL);
	ck_assert_ptr_nonnull(why);
	ck_assert_ptr_nonnull(strstr(why, "cq_entries"));

	settings_defaults(&s);
	why = NULL;
	ck_assert_int_eq(settings_set(&s, "cq_entries", "512", SRC_FLAG), 0); /* < sq 1024 */
	ck_assert_int_eq(settings_check(&s, &why), -EINVAL);
	ck_assert_ptr_nonnull(why);

	ck_assert_int_eq(settings_set(&s, "sq_entries", "512", SRC_FLAG), 0); /* cq == sq is fine */
	ck_assert_int_eq(settings_check(&s, &why), 0);
	ck_assert_int_eq(settings_set(&s, "sq_entries", "8", SRC_FLAG), 0);
	ck_assert_int_eq(settings_set(&s, "cq_entries", "131072", SRC_FLAG), 0);
	ck_assert_int_eq(settings_check(&s, &why), 0);
}
END_TEST

/* transport and the verbs settings: the three transports, a GID index that
 * is "auto" or a number, memlock_bytes as a size */
START_TEST(test_check_transport)
{
	const char *why = NULL;
	ck_assert_str_eq(s.transport, "auto");
	ck_assert_str_eq(s.rdma_gid_index, "auto");
	ck_assert_uint_eq(s.memlock_bytes, 0);
	static const char *const good[] = {"auto", "verbs", "tcp"};
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(settings_set(&s, "transport", good[i], SRC_FLAG), 0);
		ck_assert_int_eq(settings_check(&s, &why), 0);
	}
	ck_assert_int_eq(settings_set(&s, "transport", "rdma", SRC_FLAG), 0);
	ck_assert_int_eq(settings_check(&s, &why), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "transport"));

	settings_defaults(&s);
	ck_assert_int_eq(settings_set(&s, "rdma_gid_index", "3", SRC_FLAG), 0);
	ck_assert_int_eq(settings_check(&s, &why), 0);
	ck_assert_int_eq(settings_set(&s, "rdma_gid_index", "x1", SRC_FLAG), 0);
	ck_assert_int_eq(settings_check(&s, &why), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "rdma_gid_index"));
	ck_assert_int_eq(settings_set(&s, "rdma_gid_index", "", SRC_FLAG), 0);
	ck_assert_int_eq(settings_check(&s, &why), -EINVAL);

	settings_defaults(&s);
	ck_assert_int_eq(settings_set(&s, "memlock_bytes", "400m", SRC_FLAG), 0);
	ck_assert_uint_eq(s.memlock_bytes, 400ull << 20);
	ck_assert_int_eq(settings_set(&s, "rdma_port", "256", SRC_FLAG), -ERANGE);
}
END_TEST

START_TEST(test_print)
{
	ck_assert_int_eq(settings_set(&s, "spin_us", "77", SRC_FLAG), 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	settings_print(&s, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_ptr_nonnull(text);
	char buf[300];
	int lines = 0;
	for (char *p = text; *p; p++)
		lines += *p == '\n';
	ck_assert_int_eq(lines, SET__COUNT);
	for (int i = 0; i < SET__COUNT; i++) {
		const char *name = settings_name(i);
		ck_assert_ptr_nonnull(name);
		ck_assert_ptr_nonnull(settings_help(i));
		/* the line that starts with the name also shows value and help */
		char *line = text;
		while (line && strncmp(line, name, strlen(name)) != 0) {
			line = strchr(line, '\n');
			if (line)
				line++;
		}
		ck_assert_msg(line != NULL, "settings_print lacks %s", name);
		char *eol = strchr(line, '\n');
		ck_assert_ptr_nonnull(eol);
		*eol = 0;
		const char *val = settings_format(&s, i, buf, sizeof(buf));
		if (*val)
			ck_assert_msg(strstr(line, val) != NULL, "line \"%s\" lacks value %s", line, val);
		ck_assert_msg(strstr(line, settings_help(i)) != NULL, "line \"%s\" lacks help", line);
		ck_assert_msg(strstr(line, settings_source_name(s.source[i])) != NULL,
			      "line \"%s\" lacks source", line);
		*eol = '\n';
	}
	ck_assert_ptr_nonnull(strstr(text, "77"));
	free(text);
}
END_TEST

static void teardown_all(void)
{
	clear_env();
	if (!tmpdir_made)
		return;
	/* Also what a failed test left behind. */
	DIR *d = opendir(tmpdir);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				unlinkat(dirfd(d), de->d_name, 0);
		closedir(d);
	}
	rmdir(tmpdir);
}

/* The pinned-memory budget is never unlimited (issue 13). */
START_TEST(test_memlock_budget)
{
	const char *why = NULL;
	ck_assert_uint_eq(settings_memlock_budget(1 << 20, 64 << 20, 8ull << 30, &why), 1 << 20);
	ck_assert_str_eq(why, "memlock_bytes");
	ck_assert_uint_eq(settings_memlock_budget(0, 64 << 20, 8ull << 30, &why), 64 << 20);
	ck_assert_str_eq(why, "RLIMIT_MEMLOCK");
	ck_assert_uint_eq(settings_memlock_budget(0, SETTINGS_MEMLOCK_UNLIMITED, 8ull << 30, &why),
			  4ull << 30);
	ck_assert_ptr_nonnull(strstr(why, "half"));
	ck_assert_uint_eq(settings_memlock_budget(5ull << 30, SETTINGS_MEMLOCK_UNLIMITED, 8ull << 30, &why),
			  5ull << 30);
}
END_TEST

static Suite *settings_suite(void)
{
	Suite *su = suite_create("settings");
	TCase *tc = tcase_create("settings");
	tcase_add_checked_fixture(tc, setup, teardown_all);
	tcase_add_test(tc, test_defaults_valid);
	tcase_add_test(tc, test_set_good);
	tcase_add_test(tc, test_set_bad);
	tcase_add_test(tc, test_set_range);
	tcase_add_test(tc, test_set_unknown);
	tcase_add_test(tc, test_parse_size);
	tcase_add_test(tc, test_negative_with_leading_space);
	tcase_add_test(tc, test_file);
	tcase_add_test(tc, test_file_errors);
	tcase_add_test(tc, test_file_error_words);
	tcase_add_test(tc, test_env);
	tcase_add_test(tc, test_env_deprecated);
	tcase_add_test(tc, test_precedence);
	tcase_add_test(tc, test_check);
	tcase_add_test(tc, test_check_transport);
	tcase_add_test(tc, test_print);
	tcase_add_test(tc, test_memlock_budget);
	suite_add_tcase(su, tc);
	return su;
}

int main(void)
{
	return run_suite(settings_suite());
}
