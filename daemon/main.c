/*
 * hoistd: the per-node hoist daemon.
 *
 *   hoistd [--config FILE] [--print-config] [--ready-fd N] [--<setting> VALUE]...
 *   hoistd --config-example   (prints deploy/hoistd.conf.example)
 *
 * Settings come from daemon/settings.h (defaults < config file < HOISTD_*
 * environment < flags; HOIST_* still works for a setting without its
 * HOISTD_* and logs that it is deprecated). Runs in the foreground;
 * SIGTERM/SIGINT stop it.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "am.h"
#include "control.h"
#include "daemon.h"
#include "log.h"
#include "overlap.h"

#define DEFAULT_CONFIG "/etc/hoist/hoistd.conf"

static void usage(FILE *out)
{
	fprintf(out, "usage: hoistd [--config FILE] [--print-config] [--ready-fd N] [--SETTING VALUE]...\n"
		     "\nsettings (flag --name-with-dashes, environment HOISTD_NAME, config file\n"
		     "name = value; precedence, lowest first: default, config file, environment,\n"
		     "flag; HOIST_NAME is still read when HOISTD_NAME is not set, deprecated: it\n"
		     "logs a warning):\n");
	static struct hoistd_settings def;
	settings_defaults(&def);
	for (int i = 0; i < SET__COUNT; i++) {
		char flag[64], val[300];
		snprintf(flag, sizeof(flag), "%s", settings_name(i));
		for (char *p = flag; *p; p++)
			if (*p == '_')
				*p = '-';
		settings_format(&def, i, val, sizeof(val));
		fprintf(out, "  --%-20s %s (default: %s)\n", flag, settings_help(i),
			val[0] ? val : "empty");
	}
	fprintf(out, "\nconfig file: %s if it exists, or --config FILE;\n"
		     "--config-example prints every setting as a commented config file\n",
		DEFAULT_CONFIG);
}

static int mkdir_p(const char *path, mode_t mode)
{
	char tmp[4096];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static void resolve_runtime_dir(struct daemon *d)
{
	if (d->cfg.runtime_dir[0]) {
		snprintf(d->runtime_dir, sizeof(d->runtime_dir), "%s", d->cfg.runtime_dir);
		return;
	}
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	if (d->uid == 0)
		snprintf(d->runtime_dir, sizeof(d->runtime_dir), "/run/hoist");
	else if (xdg && *xdg)
		snprintf(d->runtime_dir, sizeof(d->runtime_dir), "%s/hoist", xdg);
	else
		snprintf(d->runtime_dir, sizeof(d->runtime_dir), "/tmp/hoist-%u", (unsigned)d->uid);
}

static void teardown(struct daemon *d)
{
	control_free_conns(d);
	while (d->clients) {
		struct client *c = d->clients;
		d->clients = c->ctl_next;
		overlap_destroy(c); /* the progress thread is gone: ours now */
		client_free_regions(c);
	}
	jobs_free_all(d);
	if (d->base)
		event_base_free(d->base);
	cmdq_destroy(&d->to_progress);
	cmdq_destroy(&d->to_control);
	if (d->doorbell_fd >= 0)
		close(d->doorbell_fd);
}

int main(int argc, char **argv)
{
	static struct daemon dd;
	struct daemon *d = &dd;
	const char *config = NULL;
	int print_config = 0, ready_fd = -1, rc;

	d->uid = getuid();
	d->doorbell_fd = -1;
	settings_defaults(&d->cfg);

	/* pass 1: options that are not settings */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--config-example")) {
			settings_print_example(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--version")) {
			printf("hoistd %s (ABI %u)\n", HOIST_VERSION_STRING, HOIST_ABI_VERSION);
			return 0;
		}
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			config = argv[++i];
		else if (!strncmp(argv[i], "--config=", 9))
			config = argv[i] + 9;
	}
	int line = 0;
	char err[600];
	if (config || access(DEFAULT_CONFIG, F_OK) == 0) {
		rc = settings_load_config(&d->cfg, config ? config : DEFAULT_CONFIG, &line, err,
					  sizeof(err));
		if (rc) {
			fprintf(stderr, "hoistd: %s\n", err);
			return 2;
		}
	}
	const char *bad = NULL;
	if ((rc = settings_load_env(&d->cfg, &bad))) {
		/* HOISTD_SPIN_US (or HOIST_SPIN_US) -> spin_us */
		char name[64];
		snprintf(name, sizeof(name), "%s", strchr(bad, '_') + 1);
		for (char *p = name; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		settings_explain(name, getenv(bad), rc, err, sizeof(err));
		fprintf(stderr, "hoistd: environment variable %s: %s\n", bad, err);
		return 2;
	}
	/* pass 2: flags */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--config")) {
			i++;
			continue;
		}
		if (!strncmp(a, "--config=", 9))
			continue;
		if (!strcmp(a, "--print-config")) {
			print_config = 1;
			continue;
		}
		if (!strcmp(a, "--ready-fd") && i + 1 < argc) {
			char *end;
			long fd = strtol(argv[++i], &end, 10);
			if (*end || fd < 0 || fd > 65535 || fcntl((int)fd, F_GETFD) < 0) {
				fprintf(stderr, "hoistd: --ready-fd '%s' is not an open descriptor\n", argv[i]);
				return 2;
			}
			ready_fd = (int)fd;
			continue;
		}
		if (strncmp(a, "--", 2) != 0) {
			fprintf(stderr, "hoistd: unexpected argument '%s' (see --help)\n", a);
			return 2;
		}
		char name[64], value[300];
		const char *eq = strchr(a, '=');
		size_t nl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		if (nl >= sizeof(name)) {
			fprintf(stderr, "hoistd: unknown option '%s' (see --help)\n", a);
			return 2;
		}
		memcpy(name, a + 2, nl);
		name[nl] = 0;
		for (char *p = name; *p; p++)
			if (*p == '-')
				*p = '_';
		if (eq)
			snprintf(value, sizeof(value), "%s", eq + 1);
		else if (i + 1 < argc)
			snprintf(value, sizeof(value), "%s", argv[++i]);
		else {
			fprintf(stderr, "hoistd: option '%s' needs a value\n", a);
			return 2;
		}
		rc = settings_set(&d->cfg, name, value, SRC_FLAG);
		if (rc) {
			if (rc == -ENOENT) {
				const char *near = settings_closest(name);
				char alt[80] = "";
				if (near) {
					snprintf(alt, sizeof(alt), "; did you mean '--%s'?", near);
					for (char *q = alt + 17; *q; q++)
						if (*q == '_')
							*q = '-';
				}
				fprintf(stderr, "hoistd: unknown option '--%.*s'%s (see --help)\n",
					(int)nl, a + 2, alt);
			} else {
				settings_explain(name, value, rc, err, sizeof(err));
				fprintf(stderr, "hoistd: %s (option --%.*s)\n", err, (int)nl, a + 2);
			}
			return 2;
		}
	}
	const char *why;
	if (settings_check(&d->cfg, &why)) {
		fprintf(stderr, "hoistd: invalid settings: %s\n", why);
		return 2;
	}
	hoistd_log_level = (int)d->cfg.log_level;
	/* a HOIST_<NAME> that set a value: the name libhoist reads for its own
	 * meaning (HOIST_SPIN_US, HOIST_RUNTIME_DIR), so say which to use */
	for (int i = 0; i < SET__COUNT; i++) {
		char old[64], now[64];
		if (settings_env_deprecated(&d->cfg, i))
			hlog_warn("%s is deprecated for the daemon, use %s",
				  settings_env_name(i, 1, old, sizeof(old)),
				  settings_env_name(i, 0, now, sizeof(now)));
	}
	uint64_t hb = peer_heartbeat_ms(d->cfg.heartbeat_ms, d->cfg.peer_timeout_ms);
	if (hb != d->cfg.heartbeat_ms) {
		hlog_info("heartbeat_ms %llu is over a quarter of peer_timeout_ms %llu: pinging every %llu ms",
			  (unsigned long long)d->cfg.heartbeat_ms, (unsigned long long)d->cfg.peer_timeout_ms,
			  (unsigned long long)hb);
		d->cfg.heartbeat_ms = hb;
	}
	if (print_config) {
		settings_print(&d->cfg, stdout);
		return 0;
	}

	resolve_runtime_dir(d);
	if ((rc = mkdir_p(d->runtime_dir, d->uid == 0 ? 0755 : 0700))) {
		hlog_err("cannot create runtime directory %s: %s", d->runtime_dir, strerror(-rc));
		return 1;
	}
	/* Someone else's directory (or a link to one) would let them swap our
	 * sockets: it must be ours, a real directory, writable by us only. */
	struct stat st;
	if (lstat(d->runtime_dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != d->uid ||
	    (st.st_mode & 022)) {
		hlog_err("runtime directory %s must be a directory owned by uid %u and writable by it "
			 "only", d->runtime_dir, (unsigned)d->uid);
		return 1;
	}
	/* sockaddr_un holds 108 bytes: refuse a directory whose sockets do not fit */
	if (strlen(d->runtime_dir) > 90) {
		hlog_err("runtime directory %s is too long for a Unix socket path (90 bytes max)",
			 d->runtime_dir);
		return 1;
	}
	snprintf(d->attach_path, sizeof(d->attach_path), "%.90s/hoistd.sock", d->runtime_dir);
	snprintf(d->stats_path, sizeof(d->stats_path), "%.90s/stats.sock", d->runtime_dir);

	err[0] = 0;
	if ((rc = cluster_configure(d, err, sizeof(err)))) {
		hlog_err("%s", err[0] ? err : strerror(-rc));
		return 1;
	}

	signal(SIGPIPE, SIG_IGN);
	/* every attached client holds two fds here (its connection and its
	 * heap, kept for node-local peers that map it): use the hard limit */
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	/* The node's pinned-memory budget, whatever the transport (verbs
	 * registers against it; hoistctl stats shows it as pinned_limit). */
	struct rlimit ml;
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	d->pinned_limit = settings_memlock_budget(
		d->cfg.memlock_bytes,
		getrlimit(RLIMIT_MEMLOCK, &ml) == 0 && ml.rlim_cur != RLIM_INFINITY ? (uint64_t)ml.rlim_cur
										  : SETTINGS_MEMLOCK_UNLIMITED,
		pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0, &why);
	__atomic_store_n(&d->vst.pinned_limit, d->pinned_limit, __ATOMIC_RELAXED);
	hlog_info("pinned-memory budget %llu bytes (%s)", (unsigned long long)d->pinned_limit, why);
	evthread_use_pthreads();
	d->start_ns = now_ns();
	d->doorbell_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->doorbell_fd < 0 || cmdq_init(&d->to_progress) || cmdq_init(&d->to_control)) {
		hlog_err("cannot create eventfds: %m");
		return 1;
	}
	/* the active-message handlers, each by the stage that owns the type */
	barrier_am_register();
	coll_am_register();
	jobs_am_register();
	amo_am_register();
	if ((rc = progress_start(d))) {
		hlog_err("cannot start the progress thread: %s", strerror(-rc));
		teardown(d);
		return 1;
	}
	rc = control_run(d, ready_fd);
	progress_stop(d);
	teardown(d);
	hlog_info("stopped");
	return rc ? 1 : 0;
}
