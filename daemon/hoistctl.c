/*
 * hoistctl: the admin CLI of hoistd.
 *
 *   hoistctl [OPTIONS] stats [--json] [--settings] [--phases] [--all]
 *                            [--interval N [--count K]]
 *   hoistctl [OPTIONS] metrics
 *   hoistctl [OPTIONS] ping
 *
 * Renders whatever counters the daemon reports: names, kinds (counter or
 * gauge) and help texts come from the daemon's tables (the reply's
 * schema), so the table, JSON and Prometheus outputs never drift apart.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "hoist.pb-c.h"
#include "hoist_verify.h"

#ifndef HOIST_VERSION_STRING
#define HOIST_VERSION_STRING "0.1.0"
#endif

/* exit statuses: scripts (deploy/hoist-node.sh) tell "nobody there" from
 * "there but no answer" */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,     /* the daemon answered an error, or untrusted, ... */
	EXIT_USAGE = 2,
	EXIT_NODAEMON = 3, /* no socket, or nobody listens on it */
	EXIT_NOANSWER = 4, /* a listener, but no complete answer in time */
};

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

static int timeout_ms = 5000; /* connect, request, and each piece of the answer */

/* The daemon is checked as libhoist checks it (hoist_verify.h) before
 * anything is sent; why[] says what was wrong. The reply comes in pieces
 * (StatsReply.more); their concatenation parses as the whole reply. */
static Hoist__StatsReply *query(const char *dir, int settings, int header_only, int *err,
				char *why, size_t why_len)
{
	int fd = hoist_verify_connect(dir, "stats.sock", timeout_ms, why, why_len);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	Hoist__StatsRequest req = HOIST__STATS_REQUEST__INIT;
	req.settings = settings;
	req.abi_version = 2;
	req.header_only = header_only;
	uint8_t out[64];
	size_t n = hoist__stats_request__pack(&req, out);
	if (send(fd, out, n, MSG_NOSIGNAL) < 0) {
		*err = errno == EAGAIN ? -ETIMEDOUT : -errno;
		snprintf(why, why_len, "sending the request: %s", strerror(-*err));
		close(fd);
		return NULL;
	}
	size_t cap = 1 << 20, all_len = 0, all_cap = 0;
	uint8_t *buf = malloc(cap), *all = NULL;
	Hoist__StatsReply *rep = NULL;
	int pieces = 0;
	*err = buf ? 0 : -ENOMEM;
	while (!*err) {
		struct iovec iov = {.iov_base = buf, .iov_len = cap};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
		ssize_t r = hoist_recvmsg_deadline(fd, &mh, 0, timeout_ms);
		if (r <= 0) {
			*err = r < 0 ? (int)r : -ECONNRESET;
			if (r == -ETIMEDOUT)
				snprintf(why, why_len, "no %s within %d ms", pieces ? "further answer" : "answer",
					 timeout_ms);
			else if (r == 0)
				snprintf(why, why_len, "the daemon closed the connection%s",
					 pieces ? " in the middle of its answer" : " without an answer");
			else
				snprintf(why, why_len, "%s", strerror((int)-r));
			break;
		}
		Hoist__StatsReply *piece = hoist__stats_reply__unpack(NULL, (size_t)r, buf);
		if (!piece) {
			*err = -EPROTO;
			snprintf(why, why_len, "malformed answer");
			break;
		}
		int more = piece->more;
		hoist__stats_reply__free_unpacked(piece, NULL);
		if (all_len + (size_t)r > all_cap) {
			size_t nc = (all_len + (size_t)r) * 2;
			uint8_t *na = realloc(all, nc);
			if (!na) {
				*err = -ENOMEM;
				break;
			}
			all = na;
			all_cap = nc;
		}
		memcpy(all + all_len, buf, (size_t)r);
		all_len += (size_t)r;
		pieces++;
		if (!more) {
			rep = hoist__stats_reply__unpack(NULL, all_len, all);
			if (!rep) {
				*err = -EPROTO;
				snprintf(why, why_len, "malformed answer");
			}
			break;
		}
	}
	close(fd);
	free(buf);
	free(all);
	return rep;
}

/* ---- schema: kind and help of each name ---- */

static const Hoist__CounterInfo *info_of(const Hoist__StatsReply *r, const char *section,
					 const char *name)
{
	for (size_t i = 0; i < r->n_schema; i++)
		if (!strcmp(r->schema[i]->section, section) && !strcmp(r->schema[i]->name, name))
			return r->schema[i];
	return NULL;
}

static int is_gauge(const Hoist__StatsReply *r, const char *section, const char *name)
{
	const Hoist__CounterInfo *ci = info_of(r, section, name);
	return ci && ci->kind == 1;
}

/* ---- UTF-8 ---- */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if s[0] does not
 * start one (overlong forms, surrogates and > U+10FFFF are invalid). */
static int utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	int n;
	unsigned min, cp;
	if ((c & 0xe0) == 0xc0)
		n = 2, min = 0x80, cp = c & 0x1f;
	else if ((c & 0xf0) == 0xe0)
		n = 3, min = 0x800, cp = c & 0x0f;
	else if ((c & 0xf8) == 0xf0)
		n = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* JSON string: quotes, backslashes and control characters escaped; a byte
 * that is not part of valid UTF-8 becomes U+FFFD (\ufffd). */
static void json_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	fputc('"', f);
	while (*s) {
		int n = utf8_len(s);
		if (n == 0) {
			fputs("\\ufffd", f);
			s++;
		} else if (*s == '"' || *s == '\\') {
			fprintf(f, "\\%c", *s);
			s++;
		} else if (*s < 0x20 || *s == 0x7f) {
			fprintf(f, "\\u%04x", *s);
			s++;
		} else {
			fwrite(s, 1, (size_t)n, f);
			s += n;
		}
	}
	fputc('"', f);
}

/* Prometheus label value: backslash, quote and newline escaped; other
 * control characters and bytes that are not valid UTF-8 become U+FFFD. */
static void prom_label(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	while (*s) {
		int n = utf8_len(s);
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (n == 0 || *s < 0x20 || *s == 0x7f)
			fputs("\xef\xbf\xbd", f);
		else
			fwrite(s, 1, (size_t)n, f);
		s += n ? n : 1;
	}
}

/* For the terminal: printable as is, the rest as \xNN (a key is shown
 * whole, never cut, and cannot move the cursor). */
static void term_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	while (*s) {
		int n = utf8_len(s);
		if (n == 0 || *s < 0x20 || *s == 0x7f || *s == '\\') {
			if (*s == '\\')
				fputs("\\\\", f);
			else
				fprintf(f, "\\x%02x", *s);
			s++;
		} else {
			fwrite(s, 1, (size_t)n, f);
			s += n;
		}
	}
}

/* ---- phase ids -> call sites ----
 * A barrier's phase id is FNV-1a-32(object file name) << 32 | offset in
 * the object (client/sync.c). The object is found among the client's
 * mapped files; addr2line turns object+offset into file:line when the
 * object has line information and belongs to root or the caller. Ids that match no object (hoist_phase ids,
 * a client that is gone or not ours to inspect) stay hex. */

static uint32_t fnv1a32(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

struct site {
	uint64_t id;
	char text[512];
};
static struct site *sites;
static size_t nsites, cap_sites;

static int find_object(int pid, uint32_t hash, char *path, size_t len)
{
	char mp[64], line[4096 + 256];
	snprintf(mp, sizeof(mp), "/proc/%d/maps", pid);
	FILE *f = fopen(mp, "r");
	if (!f)
		return 0;
	int found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		if (!p)
			continue;
		p[strcspn(p, "\n")] = 0;
		const char *base = strrchr(p, '/') + 1;
		if (fnv1a32(base) == hash) {
			snprintf(path, len, "%s", p);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

static int have_addr2line = -1;

static const char *site_of(int pid, uint64_t id)
{
	for (size_t i = 0; i < nsites; i++)
		if (sites[i].id == id)
			return sites[i].text;
	char path[4096], text[512];
	uint32_t off = (uint32_t)id;
	snprintf(text, sizeof(text), "0x%llx", (unsigned long long)id);
	if (!find_object(pid, (uint32_t)(id >> 32), path, sizeof(path)))
		return NULL; /* maybe another rank can tell; do not cache */
	const char *base = strrchr(path, '/') + 1;
	snprintf(text, sizeof(text), "%s+0x%x", base, off);
	if (have_addr2line < 0)
		have_addr2line = system("command -v addr2line >/dev/null 2>&1") == 0;
	/* addr2line parses the file: only one that root or the caller owns
	 * (root's cron job must not feed a user's crafted ELF to binutils) */
	struct stat st;
	int trusted = stat(path, &st) == 0 && (st.st_uid == 0 || st.st_uid == geteuid());
	if (trusted && have_addr2line && !strchr(path, '\'')) {
		char cmd[4300], out[400];
		/* the return address follows the call: its line is the byte before */
		snprintf(cmd, sizeof(cmd), "addr2line -e '%s' 0x%x 2>/dev/null", path, off ? off - 1 : 0);
		FILE *p = popen(cmd, "r");
		if (p) {
			if (fgets(out, sizeof(out), p) && out[0] != '?') {
				out[strcspn(out, " \n")] = 0;
				const char *file = strrchr(out, '/');
				snprintf(text, sizeof(text), "%s", file ? file + 1 : out);
			}
			pclose(p);
		}
	}
	if (nsites == cap_sites) {
		size_t nc = cap_sites ? cap_sites * 2 : 16;
		struct site *ns = realloc(sites, nc * sizeof(*ns));
		if (!ns)
			return NULL;
		sites = ns;
		cap_sites = nc;
	}
	sites[nsites].id = id;
	snprintf(sites[nsites].text, sizeof(sites[nsites].text), "%s", text);
	return sites[nsites++].text;
}

static const char *phase_name(const Hoist__ClientStats *c, const Hoist__PhaseStats *ph, char *buf,
			      size_t len)
{
	const char *s = site_of(c->pid, ph->id);
	snprintf(buf, len, "%s", s ? s : "");
	if (!s)
		snprintf(buf, len, "0x%llx", (unsigned long long)ph->id);
	return buf;
}

/* ---- rates between two snapshots ---- */

struct prev {
	const Hoist__StatsReply *r;
	double dt; /* seconds between the snapshots (daemon uptime) */
};

static const Hoist__ClientStats *prev_client(const struct prev *pv, const Hoist__ClientStats *c)
{
	if (!pv || !pv->r)
		return NULL;
	for (size_t i = 0; i < pv->r->n_clients; i++) {
		const Hoist__ClientStats *o = pv->r->clients[i];
		if (o->rank == c->rank && o->pid == c->pid && o->uid == c->uid &&
		    !strcmp(o->job_key, c->job_key))
			return o;
	}
	return NULL;
}

static int prev_value(Hoist__Counter **cs, size_t n, const char *name, size_t hint, uint64_t *v)
{
	if (hint < n && !strcmp(cs[hint]->name, name)) {
		*v = cs[hint]->value;
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(cs[i]->name, name)) {
			*v = cs[i]->value;
			return 1;
		}
	return 0;
}

static double rate(uint64_t now, uint64_t before, double dt)
{
	return now >= before && dt > 0 ? (double)(now - before) / dt : 0.0;
}

/* ---- JSON ---- */

static void json_counters(FILE *f, Hoist__Counter **cs, size_t n)
{
	fputc('{', f);
	for (size_t k = 0; k < n; k++) {
		fputs(k ? "," : "", f);
		json_str(f, cs[k]->name);
		fprintf(f, ":%llu", (unsigned long long)cs[k]->value);
	}
	fputc('}', f);
}

/* "rates": per-second rates of the counters (not the gauges) */
static void json_rates(FILE *f, const Hoist__StatsReply *r, const char *section,
		       Hoist__Counter **cs, size_t n, Hoist__Counter **ps, size_t pn, double dt)
{
	fputs(",\"rates\":{", f);
	int first = 1;
	for (size_t k = 0; k < n; k++) {
		uint64_t before;
		if (is_gauge(r, section, cs[k]->name) || !prev_value(ps, pn, cs[k]->name, k, &before))
			continue;
		fputs(first ? "" : ",", f);
		first = 0;
		json_str(f, cs[k]->name);
		fprintf(f, ":%.3f", rate(cs[k]->value, before, dt));
	}
	fputc('}', f);
}

static void print_json(const Hoist__StatsReply *r, const struct prev *pv)
{
	FILE *f = stdout;
	fputs("{\"version\":", f);
	json_str(f, r->version);
	fprintf(f, ",\"uptime_ms\":%llu,\"transport\":", (unsigned long long)r->uptime_ms);
	json_str(f, r->transport && *r->transport ? r->transport : "unknown");
	fputs(",\"daemon\":", f);
	json_counters(f, r->daemon, r->n_daemon);
	fputs(",\"gauges\":[", f);
	for (size_t i = 0, first = 1; i < r->n_daemon; i++)
		if (is_gauge(r, "daemon", r->daemon[i]->name)) {
			fputs(first ? "" : ",", f);
			first = 0;
			json_str(f, r->daemon[i]->name);
		}
	fputc(']', f);
	if (pv && pv->r) {
		fprintf(f, ",\"interval_s\":%.3f", pv->dt);
		json_rates(f, r, "daemon", r->daemon, r->n_daemon, pv->r->daemon, pv->r->n_daemon, pv->dt);
	}
	fputs(",\"clients\":[", f);
	for (size_t i = 0; i < r->n_clients; i++) {
		const Hoist__ClientStats *c = r->clients[i];
		fprintf(f, "%s{\"job\":", i ? "," : "");
		json_str(f, c->job_key);
		fprintf(f, ",\"rank\":%d,\"pid\":%d,\"uid\":%u,\"counters\":", c->rank, c->pid, c->uid);
		json_counters(f, c->counters, c->n_counters);
		const Hoist__ClientStats *o = prev_client(pv, c);
		if (o)
			json_rates(f, r, "client", c->counters, c->n_counters, o->counters, o->n_counters,
				   pv->dt);
		fputs(",\"phases\":[", f);
		for (size_t p = 0; p < c->n_phases; p++) {
			const Hoist__PhaseStats *ph = c->phases[p];
			char name[512];
			fprintf(f, "%s{\"id\":\"0x%llx\",\"site\":", p ? "," : "", (unsigned long long)ph->id);
			json_str(f, phase_name(c, ph, name, sizeof(name)));
			for (size_t k = 0; k < ph->n_counters; k++) {
				fputc(',', f);
				json_str(f, ph->counters[k]->name);
				fprintf(f, ":%llu", (unsigned long long)ph->counters[k]->value);
			}
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fputs("],\"peers\":[", f);
	for (size_t i = 0; i < r->n_peers; i++) {
		const Hoist__PeerStats *p = r->peers[i];
		fprintf(f, "%s{\"node\":%d,\"addr\":", i ? "," : "", p->node);
		json_str(f, p->addr);
		fputs(",\"state\":", f);
		json_str(f, p->state);
		fputs(",\"counters\":", f);
		json_counters(f, p->counters, p->n_counters);
		fputc('}', f);
	}
	fputc(']', f);
	if (r->n_settings) {
		fputs(",\"settings\":{", f);
		for (size_t i = 0; i < r->n_settings; i++) {
			fputs(i ? "," : "", f);
			json_str(f, r->settings[i]->name);
			fputc(':', f);
			json_str(f, r->settings[i]->value);
		}
		fputs("},\"settings_source\":{", f);
		for (size_t i = 0; i < r->n_settings; i++) {
			fputs(i ? "," : "", f);
			json_str(f, r->settings[i]->name);
			fputc(':', f);
			json_str(f, r->settings[i]->source);
		}
		fputc('}', f);
	}
	fputs("}\n", f);
}

/* ---- the table: narrow, nothing cut ---- */

static int show_phases, show_all;

/* name=value items wrapped below 80 columns; zero counters only with
 * --all (gauges always). Returns how many zeros were left out. */
static int print_items(const Hoist__StatsReply *r, const char *section, Hoist__Counter **cs,
		       size_t n, Hoist__Counter **ps, size_t pn, double dt, const char *indent)
{
	int col = 0, hidden = 0;
	for (size_t k = 0; k < n; k++) {
		int gauge = is_gauge(r, section, cs[k]->name);
		if (!cs[k]->value && !gauge && !show_all) {
			hidden++;
			continue;
		}
		char item[200];
		uint64_t before;
		int w;
		if (ps && !gauge && prev_value(ps, pn, cs[k]->name, k, &before))
			w = snprintf(item, sizeof(item), "%s=%llu (%.1f/s)", cs[k]->name,
				     (unsigned long long)cs[k]->value, rate(cs[k]->value, before, dt));
		else
			w = snprintf(item, sizeof(item), "%s=%llu", cs[k]->name,
				     (unsigned long long)cs[k]->value);
		if (col && col + 2 + w > 78) {
			printf("\n");
			col = 0;
		}
		printf("%s%s", col ? "  " : indent, item);
		col += (col ? 2 : (int)strlen(indent)) + w;
	}
	if (col)
		printf("\n");
	return hidden;
}

static void print_table(const Hoist__StatsReply *r, const struct prev *pv)
{
	const Hoist__StatsReply *p = pv ? pv->r : NULL;
	double dt = pv ? pv->dt : 0;
	printf("hoistd %s, up %.1f s, transport %s\n", r->version, (double)r->uptime_ms / 1000.0,
	       r->transport && *r->transport ? r->transport : "unknown");
	if (p)
		printf("rates over the last %.1f s\n", dt);
	/* daemon: counters (nonzero unless --all), then gauges */
	printf("\ndaemon counters\n");
	int hidden = 0;
	for (size_t i = 0; i < r->n_daemon; i++) {
		const Hoist__Counter *c = r->daemon[i];
		if (is_gauge(r, "daemon", c->name))
			continue;
		if (!c->value && !show_all) {
			hidden++;
			continue;
		}
		uint64_t before;
		if (p && prev_value(p->daemon, p->n_daemon, c->name, i, &before))
			printf("  %-26s %14llu %12.1f/s\n", c->name, (unsigned long long)c->value,
			       rate(c->value, before, dt));
		else
			printf("  %-26s %llu\n", c->name, (unsigned long long)c->value);
	}
	if (hidden)
		printf("  (%d counters are 0; --all shows them)\n", hidden);
	printf("\ndaemon gauges\n");
	for (size_t i = 0; i < r->n_daemon; i++)
		if (is_gauge(r, "daemon", r->daemon[i]->name))
			printf("  %-26s %llu\n", r->daemon[i]->name,
			       (unsigned long long)r->daemon[i]->value);

	if (!r->n_clients)
		printf("\nclients: none attached\n");
	else
		printf("\nclients (%zu)\n", r->n_clients);
	for (size_t i = 0; i < r->n_clients; i++) {
		const Hoist__ClientStats *c = r->clients[i];
		const Hoist__ClientStats *o = prev_client(pv, c);
		printf("  job \"");
		term_str(stdout, c->job_key);
		printf("\" rank %d pid %d uid %u\n", c->rank, c->pid, c->uid);
		int z = print_items(r, "client", c->counters, c->n_counters, o ? o->counters : NULL,
				    o ? o->n_counters : 0, dt, "    ");
		if (z == (int)c->n_counters)
			printf("    (all counters 0)\n");
	}
	if (show_phases) {
		printf("\nphases (automatic overlap; per client, most recent)\n");
		for (size_t i = 0; i < r->n_clients; i++) {
			const Hoist__ClientStats *c = r->clients[i];
			for (size_t k = 0; k < c->n_phases; k++) {
				const Hoist__PhaseStats *ph = c->phases[k];
				char name[512];
				printf("  ");
				term_str(stdout, c->job_key);
				printf(" rank %d  phase 0x%llx %s\n", c->rank, (unsigned long long)ph->id,
				       phase_name(c, ph, name, sizeof(name)));
				int save = show_all;
				show_all = 1;
				print_items(r, "phase", ph->counters, ph->n_counters, NULL, 0, 0, "    ");
				show_all = save;
			}
		}
	}
	if (r->n_peers)
		printf("\npeers\n");
	for (size_t i = 0; i < r->n_peers; i++) {
		const Hoist__PeerStats *pe = r->peers[i];
		printf("  node %d %s %s\n", pe->node, pe->addr, pe->state);
		const Hoist__PeerStats *po = NULL;
		for (size_t k = 0; p && k < p->n_peers; k++)
			if (p->peers[k]->node == pe->node)
				po = p->peers[k];
		print_items(r, "peer", pe->counters, pe->n_counters, po ? po->counters : NULL,
			    po ? po->n_counters : 0, dt, "    ");
	}
	if (r->n_settings) {
		printf("\nsettings (effective; where from)\n");
		for (size_t i = 0; i < r->n_settings; i++)
			printf("  %-22s %s (%s)\n", r->settings[i]->name, r->settings[i]->value,
			       r->settings[i]->source);
	}
}

/* ---- Prometheus text exposition format (version 0.0.4) ---- */

static void prom_help(const char *metric, const char *kind, const char *help)
{
	printf("# HELP %s ", metric);
	for (const char *s = help ? help : ""; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", stdout);
		else if (*s == '\n')
			fputs("\\n", stdout);
		else
			putchar(*s);
	}
	printf("\n# TYPE %s %s\n", metric, kind);
}

static void prom_name(char *out, size_t len, const char *section, const char *name, int gauge)
{
	snprintf(out, len, "hoist_%s%s%s%s", section, *section ? "_" : "", name, gauge ? "" : "_total");
}

static void client_labels(const Hoist__ClientStats *c)
{
	printf("job=\"");
	prom_label(stdout, c->job_key);
	printf("\",rank=\"%d\",uid=\"%u\"", c->rank, c->uid);
}

static void print_metrics(const Hoist__StatsReply *r)
{
	char m[300];
	prom_help("hoist_up", "gauge", "1: the daemon answered hoistctl");
	printf("hoist_up 1\n");
	prom_help("hoist_info", "gauge", "the daemon's version and transport (value always 1)");
	printf("hoist_info{version=\"");
	prom_label(stdout, r->version);
	printf("\",transport=\"");
	prom_label(stdout, r->transport && *r->transport ? r->transport : "unknown");
	printf("\"} 1\n");
	prom_help("hoist_uptime_seconds", "gauge", "seconds since the daemon started");
	printf("hoist_uptime_seconds %.3f\n", (double)r->uptime_ms / 1000.0);
	for (size_t i = 0; i < r->n_daemon; i++) {
		const Hoist__Counter *c = r->daemon[i];
		const Hoist__CounterInfo *ci = info_of(r, "daemon", c->name);
		int gauge = ci && ci->kind == 1;
		prom_name(m, sizeof(m), "", c->name, gauge);
		prom_help(m, gauge ? "gauge" : "counter", ci ? ci->help : "");
		printf("%s %llu\n", m, (unsigned long long)c->value);
	}
	/* per client: one family per counter, a sample per client */
	if (r->n_clients) {
		const Hoist__ClientStats *c0 = r->clients[0];
		for (size_t k = 0; k < c0->n_counters; k++) {
			const char *name = c0->counters[k]->name;
			const Hoist__CounterInfo *ci = info_of(r, "client", name);
			int gauge = ci && ci->kind == 1;
			prom_name(m, sizeof(m), "client", name, gauge);
			prom_help(m, gauge ? "gauge" : "counter", ci ? ci->help : "");
			for (size_t i = 0; i < r->n_clients; i++) {
				const Hoist__ClientStats *c = r->clients[i];
				uint64_t v;
				if (!prev_value(c->counters, c->n_counters, name, k, &v))
					continue;
				printf("%s{", m);
				client_labels(c);
				printf("} %llu\n", (unsigned long long)v);
			}
		}
	}
	/* per phase of a client: the phase label is its call site */
	const Hoist__PhaseStats *ph0 = NULL;
	for (size_t i = 0; i < r->n_clients && !ph0; i++)
		if (r->clients[i]->n_phases)
			ph0 = r->clients[i]->phases[0];
	for (size_t k = 0; ph0 && k < ph0->n_counters; k++) {
		const char *name = ph0->counters[k]->name;
		const Hoist__CounterInfo *ci = info_of(r, "phase", name);
		int gauge = ci && ci->kind == 1;
		prom_name(m, sizeof(m), "phase", name, gauge);
		prom_help(m, gauge ? "gauge" : "counter", ci ? ci->help : "");
		for (size_t i = 0; i < r->n_clients; i++) {
			const Hoist__ClientStats *c = r->clients[i];
			for (size_t p = 0; p < c->n_phases; p++) {
				const Hoist__PhaseStats *ph = c->phases[p];
				uint64_t v;
				char site[512];
				if (!prev_value(ph->counters, ph->n_counters, name, k, &v))
					continue;
				printf("%s{", m);
				client_labels(c);
				printf(",phase=\"");
				prom_label(stdout, phase_name(c, ph, site, sizeof(site)));
				printf("\",phase_id=\"0x%llx\"} %llu\n", (unsigned long long)ph->id,
				       (unsigned long long)v);
			}
		}
	}
	if (r->n_peers) {
		prom_help("hoist_peer_state", "gauge", "1 for the peer's connection state");
		for (size_t i = 0; i < r->n_peers; i++) {
			printf("hoist_peer_state{peer=\"%d\",addr=\"", r->peers[i]->node);
			prom_label(stdout, r->peers[i]->addr);
			printf("\",state=\"");
			prom_label(stdout, r->peers[i]->state);
			printf("\"} 1\n");
		}
		const Hoist__PeerStats *p0 = r->peers[0];
		for (size_t k = 0; k < p0->n_counters; k++) {
			const char *name = p0->counters[k]->name;
			const Hoist__CounterInfo *ci = info_of(r, "peer", name);
			int gauge = ci && ci->kind == 1;
			prom_name(m, sizeof(m), "peer", name, gauge);
			prom_help(m, gauge ? "gauge" : "counter", ci ? ci->help : "");
			for (size_t i = 0; i < r->n_peers; i++) {
				uint64_t v;
				if (!prev_value(r->peers[i]->counters, r->peers[i]->n_counters, name, k, &v))
					continue;
				printf("%s{peer=\"%d\"} %llu\n", m, r->peers[i]->node, (unsigned long long)v);
			}
		}
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hoistctl [OPTIONS] stats [--json] [--settings] [--phases] [--all]\n"
		"                              [--interval N [--count K]]\n"
		"       hoistctl [OPTIONS] metrics\n"
		"       hoistctl [OPTIONS] ping\n"
		"       hoistctl --version | --help\n"
		"\n"
		"  stats      the daemon's counters and gauges, one block per client, the peers.\n"
		"             The table shows counters that are not 0 (--all: every one);\n"
		"             --json: one JSON object (bytes of a job key that are not UTF-8\n"
		"             become \\ufffd); --settings: the effective settings, apart;\n"
		"             --phases: the recent phases of each client, named by call site\n"
		"             (file:line with addr2line, else object+0xoffset);\n"
		"             --interval N: a snapshot every N seconds with per-second rates\n"
		"             of the counters since the previous one, --count K of them\n"
		"             (with --json: one object per line, \"rates\" added)\n"
		"  metrics    Prometheus text format (node exporter textfile collector):\n"
		"             hoist_<name>_total counters, hoist_<name> gauges, per client\n"
		"             hoist_client_* {job,rank,uid}, per phase hoist_phase_*\n"
		"             {job,rank,uid,phase,phase_id}, per peer hoist_peer_* {peer}\n"
		"  ping       exit 0 if a hoistd answers\n"
		"\n"
		"OPTIONS\n"
		"  --runtime-dir DIR  default $HOIST_RUNTIME_DIR, /run/hoist as root,\n"
		"                     else per-user\n"
		"  --timeout MS       give up after MS without progress (default 5000)\n"
		"\n"
		"Exit status: 0 answered; 1 the daemon answered an error or is not trusted;\n"
		"2 usage; 3 no daemon (no socket, nobody listening); 4 a daemon listens but\n"
		"did not answer completely within the timeout (busy or stuck).\n");
}

static int exit_for(int err)
{
	if (err == -ENOENT || err == -ECONNREFUSED || err == -ENOTSOCK)
		return EXIT_NODAEMON;
	if (err == -ETIMEDOUT || err == -ECONNRESET || err == -EAGAIN)
		return EXIT_NOANSWER;
	return EXIT_FAIL;
}

int main(int argc, char **argv)
{
	char dir[256];
	default_dir(dir, sizeof(dir));
	const char *cmd = NULL;
	int json = 0, settings = 0;
	long interval = 0, count = 0;
	for (int i = 1; i < argc; i++) {
		char *end;
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
		else if (!strcmp(argv[i], "--all"))
			show_all = 1;
		else if ((!strcmp(argv[i], "--interval") || !strcmp(argv[i], "--count") ||
			  !strcmp(argv[i], "--timeout")) && i + 1 < argc) {
			long v = strtol(argv[i + 1], &end, 10);
			if (*end || v < 1 || v > 86400000) {
				fprintf(stderr, "hoistctl: %s wants a positive number, not '%s'\n", argv[i],
					argv[i + 1]);
				return EXIT_USAGE;
			}
			if (!strcmp(argv[i], "--interval"))
				interval = v;
			else if (!strcmp(argv[i], "--count"))
				count = v;
			else
				timeout_ms = (int)v;
			i++;
		} else if (!strcmp(argv[i], "--version")) {
			printf("hoistctl %s\n", HOIST_VERSION_STRING);
			return 0;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!cmd && argv[i][0] != '-')
			cmd = argv[i];
		else {
			fprintf(stderr, "hoistctl: unexpected argument '%s'\n", argv[i]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!cmd || (strcmp(cmd, "stats") && strcmp(cmd, "ping") && strcmp(cmd, "metrics"))) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((interval || count) && strcmp(cmd, "stats")) {
		fprintf(stderr, "hoistctl: --interval and --count are for stats\n");
		return EXIT_USAGE;
	}
	if (count && !interval)
		interval = 1;
	int ping = !strcmp(cmd, "ping");
	Hoist__StatsReply *prev = NULL;
	int rc = EXIT_OK;
	for (long n = 0; !interval || !count || n < count; n++) {
		if (n) {
			fflush(stdout);
			struct timespec ts = {.tv_sec = interval};
			while (nanosleep(&ts, &ts) && errno == EINTR) {
			}
		}
		int err;
		char why[512] = "";
		Hoist__StatsReply *r = query(dir, settings, ping, &err, why, sizeof(why));
		if (!r) {
			fprintf(stderr, "hoistctl: cannot query a hoistd in %s: %s\n", dir, why);
			rc = exit_for(err);
			break;
		}
		if (r->status) {
			fprintf(stderr, "hoistctl: daemon answered %s\n", strerror(-r->status));
			rc = r->status == -EBUSY ? EXIT_NOANSWER : EXIT_FAIL;
			hoist__stats_reply__free_unpacked(r, NULL);
			break;
		}
		struct prev pv = {.r = prev};
		if (prev)
			pv.dt = (double)(r->uptime_ms - prev->uptime_ms) / 1000.0;
		if (ping)
			printf("hoistd %s in %s: up %.1f s\n", r->version, dir, (double)r->uptime_ms / 1000.0);
		else if (!strcmp(cmd, "metrics"))
			print_metrics(r);
		else if (json)
			print_json(r, prev ? &pv : NULL);
		else {
			if (n)
				printf("\n");
			print_table(r, prev ? &pv : NULL);
		}
		if (prev)
			hoist__stats_reply__free_unpacked(prev, NULL);
		prev = r;
		if (!interval)
			break;
	}
	if (prev)
		hoist__stats_reply__free_unpacked(prev, NULL);
	free(sites);
	return rc;
}
