/*
 * hoistctl: the admin CLI of hoistd.
 *
 *   hoistctl [--runtime-dir DIR] stats [--json] [--settings]
 *   hoistctl [--runtime-dir DIR] ping
 *
 * Renders whatever counters the daemon reports (names come from the
 * daemon's tables), so the table and JSON outputs never drift apart.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "hoist.pb-c.h"
#include "hoist_verify.h"

static void default_dir(char *buf, size_t len)
{
	const char *env = getenv("HOIST_RUNTIME_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char sock[300];
	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	if (getuid() != 0) { /* the per-user daemon if one runs, else the node's */
		if (xdg && *xdg)
			snprintf(buf, len, "%s/hoist", xdg);
		else
			snprintf(buf, len, "/tmp/hoist-%u", (unsigned)getuid());
		snprintf(sock, sizeof(sock), "%s/stats.sock", buf);
		if (access(sock, F_OK) == 0)
			return;
	}
	snprintf(buf, len, "/run/hoist");
}

/* Deadline of the connect, the request and the answer. */
#define QUERY_TIMEOUT_MS 5000

/* The daemon is checked as libhoist checks it (hoist_verify.h) before
 * anything is sent; why[] says what was wrong. */
static Hoist__StatsReply *query(const char *dir, int settings, int *err, char *why, size_t why_len)
{
	int fd = hoist_verify_connect(dir, "stats.sock", QUERY_TIMEOUT_MS, why, why_len);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	Hoist__StatsRequest req = HOIST__STATS_REQUEST__INIT;
	req.settings = settings;
	req.abi_version = 1;
	uint8_t out[64];
	size_t n = hoist__stats_request__pack(&req, out);
	if (send(fd, out, n, MSG_NOSIGNAL) < 0) {
		*err = errno == EAGAIN ? -ETIMEDOUT : -errno;
		snprintf(why, why_len, "sending the request: %s", strerror(-*err));
		close(fd);
		return NULL;
	}
	size_t cap = 1 << 20;
	uint8_t *buf = malloc(cap);
	struct iovec iov = {.iov_base = buf, .iov_len = cap};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t r = buf ? hoist_recvmsg_deadline(fd, &mh, 0, QUERY_TIMEOUT_MS) : -ENOMEM;
	close(fd);
	*err = r < 0 ? (int)r : 0;
	Hoist__StatsReply *rep = r > 0 ? hoist__stats_reply__unpack(NULL, (size_t)r, buf) : NULL;
	if (r >= 0 && !rep)
		*err = -EPROTO;
	if (r == -ETIMEDOUT)
		snprintf(why, why_len, "no answer within %d ms", QUERY_TIMEOUT_MS);
	else if (*err)
		snprintf(why, why_len, "%s", r == 0 ? "the daemon closed the connection" : strerror(-*err));
	free(buf);
	return rep;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_json(const Hoist__StatsReply *r)
{
	printf("{\"version\":");
	json_str(r->version);
	printf(",\"uptime_ms\":%llu,\"daemon\":{", (unsigned long long)r->uptime_ms);
	for (size_t i = 0; i < r->n_daemon; i++) {
		printf("%s", i ? "," : "");
		json_str(r->daemon[i]->name);
		printf(":%llu", (unsigned long long)r->daemon[i]->value);
	}
	printf("},\"clients\":[");
	for (size_t i = 0; i < r->n_clients; i++) {
		const Hoist__ClientStats *c = r->clients[i];
		printf("%s{\"job\":", i ? "," : "");
		json_str(c->job_key);
		printf(",\"rank\":%d,\"pid\":%d,\"uid\":%u,\"counters\":{", c->rank, c->pid, c->uid);
		for (size_t k = 0; k < c->n_counters; k++) {
			printf("%s", k ? "," : "");
			json_str(c->counters[k]->name);
			printf(":%llu", (unsigned long long)c->counters[k]->value);
		}
		printf("},\"phases\":[");
		for (size_t p = 0; p < c->n_phases; p++) {
			const Hoist__PhaseStats *ph = c->phases[p];
			printf("%s{\"id\":\"0x%llx\"", p ? "," : "", (unsigned long long)ph->id);
			for (size_t k = 0; k < ph->n_counters; k++) {
				printf(",");
				json_str(ph->counters[k]->name);
				printf(":%llu", (unsigned long long)ph->counters[k]->value);
			}
			printf("}");
		}
		printf("]}");
	}
	printf("],\"peers\":[");
	for (size_t i = 0; i < r->n_peers; i++) {
		const Hoist__PeerStats *p = r->peers[i];
		printf("%s{\"node\":%d,\"addr\":", i ? "," : "", p->node);
		json_str(p->addr);
		printf(",\"state\":");
		json_str(p->state);
		printf(",\"counters\":{");
		for (size_t k = 0; k < p->n_counters; k++) {
			printf("%s", k ? "," : "");
			json_str(p->counters[k]->name);
			printf(":%llu", (unsigned long long)p->counters[k]->value);
		}
		printf("}}");
	}
	printf("]");
	if (r->n_settings) {
		printf(",\"settings\":{");
		for (size_t i = 0; i < r->n_settings; i++) {
			printf("%s", i ? "," : "");
			json_str(r->settings[i]->name);
			printf(":");
			json_str(r->settings[i]->value);
		}
		printf("}");
	}
	printf("}\n");
}

static int show_phases;

static void print_table(const Hoist__StatsReply *r)
{
	printf("hoistd %s, up %.1f s\n\ndaemon\n", r->version, (double)r->uptime_ms / 1000.0);
	for (size_t i = 0; i < r->n_daemon; i++)
		printf("  %-18s %llu\n", r->daemon[i]->name, (unsigned long long)r->daemon[i]->value);
	if (r->n_clients) {
		/* one row per client, one column per counter */
		const Hoist__ClientStats *c0 = r->clients[0];
		printf("\nclients\n  %-24s %5s %7s", "job", "rank", "pid");
		for (size_t k = 0; k < c0->n_counters; k++)
			printf(" %10.10s", c0->counters[k]->name);
		printf("\n");
		for (size_t i = 0; i < r->n_clients; i++) {
			const Hoist__ClientStats *c = r->clients[i];
			printf("  %-24.24s %5d %7d", c->job_key, c->rank, c->pid);
			for (size_t k = 0; k < c->n_counters; k++)
				printf(" %10llu", (unsigned long long)c->counters[k]->value);
			printf("\n");
		}
	} else {
		printf("\nclients: none attached\n");
	}
	if (show_phases) {
		printf("\nphases (automatic overlap; per client, most recent)\n");
		for (size_t i = 0; i < r->n_clients; i++) {
			const Hoist__ClientStats *c = r->clients[i];
			for (size_t p = 0; p < c->n_phases; p++) {
				const Hoist__PhaseStats *ph = c->phases[p];
				printf("  %-24.24s %5d  phase 0x%-14llx", c->job_key, c->rank,
				       (unsigned long long)ph->id);
				for (size_t k = 0; k < ph->n_counters; k++)
					printf(" %s=%llu", ph->counters[k]->name,
					       (unsigned long long)ph->counters[k]->value);
				printf("\n");
			}
		}
	}
	if (r->n_peers) {
		const Hoist__PeerStats *p0 = r->peers[0];
		printf("\npeers\n  %4s %-22s %-10s", "node", "addr", "state");
		for (size_t k = 0; k < p0->n_counters; k++)
			printf(" %10.10s", p0->counters[k]->name);
		printf("\n");
		for (size_t i = 0; i < r->n_peers; i++) {
			const Hoist__PeerStats *p = r->peers[i];
			printf("  %4d %-22.22s %-10s", p->node, p->addr, p->state);
			for (size_t k = 0; k < p->n_counters; k++)
				printf(" %10llu", (unsigned long long)p->counters[k]->value);
			printf("\n");
		}
	}
	if (r->n_settings) {
		printf("\nsettings\n");
		for (size_t i = 0; i < r->n_settings; i++)
			printf("  %-18s %-24s (%s)\n", r->settings[i]->name, r->settings[i]->value,
			       r->settings[i]->source);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: hoistctl [--runtime-dir DIR] stats [--json] [--settings] [--phases]\n"
		   "       hoistctl [--runtime-dir DIR] ping\n"
		   "DIR defaults to $HOIST_RUNTIME_DIR, /run/hoist as root, else per-user.\n");
}

int main(int argc, char **argv)
{
	char dir[256];
	default_dir(dir, sizeof(dir));
	const char *cmd = NULL;
	int json = 0, settings = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runtime-dir") && i + 1 < argc)
			snprintf(dir, sizeof(dir), "%s", argv[++i]);
		else if (!strncmp(argv[i], "--runtime-dir=", 14))
			snprintf(dir, sizeof(dir), "%s", argv[i] + 14);
		else if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--settings"))
			settings = 1;
		else if (!strcmp(argv[i], "--phases"))
			show_phases = 1;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!cmd && argv[i][0] != '-')
			cmd = argv[i];
		else {
			fprintf(stderr, "hoistctl: unexpected argument '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (!cmd || (strcmp(cmd, "stats") && strcmp(cmd, "ping"))) {
		usage(stderr);
		return 2;
	}
	int err;
	char why[512] = "";
	Hoist__StatsReply *r = query(dir, settings, &err, why, sizeof(why));
	if (!r) {
		fprintf(stderr, "hoistctl: cannot query a hoistd in %s: %s\n", dir, why);
		return 1;
	}
	if (!strcmp(cmd, "ping"))
		printf("hoistd %s in %s: up %.1f s\n", r->version, dir, (double)r->uptime_ms / 1000.0);
	else if (json)
		print_json(r);
	else
		print_table(r);
	int rc = r->status ? 1 : 0;
	if (r->status)
		fprintf(stderr, "hoistctl: daemon answered %s\n", strerror(-r->status));
	hoist__stats_reply__free_unpacked(r, NULL);
	return rc;
}
