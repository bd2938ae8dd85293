#include "settings.h"

#include "hoist_size.h"

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const level_names[] = {"error", "warn", "info", "debug"};

enum stype { T_STR, T_UINT, T_SIZE, T_LEVEL };

struct setting_desc {
	const char *name;
	enum stype type;
	const char *def;
	uint64_t min, max;
	const char *help;
	size_t offset;
};

static const struct setting_desc table[SET__COUNT] = {
#define X(n, type, d, mn, mx, h) [SET_##n] = {#n, T_##type, d, mn, mx, h, offsetof(struct hoistd_settings, n)},
	HOISTD_SETTINGS(X)
#undef X
};

int settings_parse_size(const char *text, uint64_t *out)
{
	return hoist_parse_size(text, out); /* the library's grammar too */
}

static int parse_uint(const char *text, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!text || !isdigit((unsigned char)*text))
		return -EINVAL;
	unsigned long long v = strtoull(text, &end, 10); /* "010" is ten */
	if (errno == ERANGE)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int settings_set(struct hoistd_settings *s, const char *name, const char *value,
		 enum settings_source src)
{
	for (int i = 0; i < SET__COUNT; i++) {
		const struct setting_desc *d = &table[i];
		if (strcmp(d->name, name) != 0)
			continue;
		char *field = (char *)s + d->offset;
		uint64_t v = 0;
		int rc = 0;
		switch (d->type) {
		case T_STR:
			if (strlen(value) >= 256)
				return -ERANGE;
			strcpy(field, value);
			s->source[i] = src;
			return 0;
		case T_UINT: rc = parse_uint(value, &v); break;
		case T_SIZE: rc = settings_parse_size(value, &v); break;
		case T_LEVEL:
			rc = -EINVAL;
			for (unsigned l = 0; l < 4; l++)
				if (strcasecmp(value, level_names[l]) == 0) {
					v = l;
					rc = 0;
				}
			break;
		}
		if (rc)
			return rc;
		if (v < d->min || v > d->max)
			return -ERANGE;
		memcpy(field, &v, sizeof(v));
		s->source[i] = src;
		return 0;
	}
	return -ENOENT;
}

void settings_defaults(struct hoistd_settings *s)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < SET__COUNT; i++) {
		int rc = settings_set(s, table[i].name, table[i].def, SRC_DEFAULT);
		(void)rc; /* the table's defaults are checked by the unit tests */
	}
}

static char *trim(char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	char *e = p + strlen(p);
	while (e > p && isspace((unsigned char)e[-1]))
		*--e = 0;
	return p;
}

/* Edit distance of two short names (a typo's closest known key). */
static unsigned distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 99;
	unsigned row[64];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *settings_closest(const char *name)
{
	const char *best = NULL;
	unsigned bd = 99;
	for (int i = 0; i < SET__COUNT; i++) {
		unsigned dd = distance(name, table[i].name);
		if (dd < bd) {
			bd = dd;
			best = table[i].name;
		}
	}
	size_t n = strlen(name);
	return bd <= (n < 9 ? 2u : (unsigned)n / 3) ? best : NULL;
}

static void size_words(uint64_t v, char *buf, size_t len)
{
	static const char suffix[] = "kmgt";
	int k = -1;
	while (v && v % 1024 == 0 && k < 3) {
		v /= 1024;
		k++;
	}
	if (k < 0)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)v, suffix[k]);
}

void settings_explain(const char *name, const char *value, int rc, char *buf, size_t len)
{
	const struct setting_desc *d = NULL;
	for (int i = 0; i < SET__COUNT && !d; i++)
		if (strcmp(table[i].name, name) == 0)
			d = &table[i];
	if (!d) {
		const char *near = settings_closest(name);
		snprintf(buf, len, "unknown setting '%s'%s%s%s (hoistd --help lists every setting)", name,
			 near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
		return;
	}
	char lo[32], hi[32];
	switch (d->type) {
	case T_STR:
		snprintf(buf, len, "%s: '%.60s' is too long (at most 255 bytes)", name, value);
		return;
	case T_UINT:
		snprintf(buf, len, "%s: '%.60s' is %s: a whole number from %llu to %llu", name, value,
			 rc == -ERANGE ? "out of range" : "not valid", (unsigned long long)d->min,
			 (unsigned long long)d->max);
		return;
	case T_SIZE:
		size_words(d->min, lo, sizeof(lo));
		size_words(d->max, hi, sizeof(hi));
		snprintf(buf, len,
			 "%s: '%.60s' is %s: a size from %s to %s bytes, digits with an optional k, m, "
			 "g or t (powers of 1024)", name, value,
			 rc == -ERANGE ? "out of range" : "not valid", lo, hi);
		return;
	case T_LEVEL:
		snprintf(buf, len, "%s: '%.60s' is not valid: one of error, warn, info, debug", name,
			 value);
		return;
	}
}

int settings_load_file(struct hoistd_settings *s, const char *path, int *line)
{
	return settings_load_config(s, path, line, NULL, 0);
}

int settings_load_config(struct hoistd_settings *s, const char *path, int *line, char *err,
			 size_t errlen)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		int rc = -errno;
		if (err)
			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	char buf[1024];
	int n = 0, rc = 0;
	while (fgets(buf, sizeof(buf), f)) {
		n++;
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = 0;
		char *p = trim(buf);
		if (!*p)
			continue;
		char *eq = strchr(p, '=');
		if (!eq) {
			rc = -EINVAL;
			if (err)
				snprintf(err, errlen, "%s:%d: expected 'setting = value', got '%.80s'", path,
					 n, p);
			break;
		}
		*eq = 0;
		char *key = trim(p), *value = trim(eq + 1);
		for (char *k = key; *k; k++)
			if (*k == '-')
				*k = '_';
		rc = settings_set(s, key, value, SRC_FILE);
		if (rc) {
			if (err) {
				char why[400];
				settings_explain(key, value, rc, why, sizeof(why));
				snprintf(err, errlen, "%s:%d: %s", path, n, why);
			}
			break;
		}
	}
	fclose(f);
	if (rc && line)
		*line = n;
	return rc;
}

const char *settings_env_name(int id, int deprecated, char *buf, size_t len)
{
	snprintf(buf, len, "%s_%s", deprecated ? "HOIST" : "HOISTD", table[id].name);
	for (char *k = buf; *k; k++)
		*k = (char)toupper((unsigned char)*k);
	return buf;
}

int settings_load_env(struct hoistd_settings *s, const char **bad)
{
	static char envname[SET__COUNT][2][64];
	for (int i = 0; i < SET__COUNT; i++) {
		int old = 0;
		const char *v = getenv(settings_env_name(i, 0, envname[i][0], sizeof(envname[i][0])));
		if (!v) {
			old = 1;
			v = getenv(settings_env_name(i, 1, envname[i][1], sizeof(envname[i][1])));
		}
		if (!v)
			continue;
		int rc = settings_set(s, table[i].name, v, SRC_ENV);
		if (rc) {
			if (bad)
				*bad = envname[i][old];
			return rc;
		}
		s->env_deprecated[i] = (unsigned char)old;
	}
	return 0;
}

int settings_env_deprecated(const struct hoistd_settings *s, int id)
{
	return s->source[id] == SRC_ENV && s->env_deprecated[id];
}

int settings_check(const struct hoistd_settings *s, const char **why)
{
	if ((s->sq_entries & (s->sq_entries - 1)) != 0) {
		*why = "sq_entries must be a power of two";
		return -EINVAL;
	}
	if ((s->cq_entries & (s->cq_entries - 1)) != 0) {
		*why = "cq_entries must be a power of two";
		return -EINVAL;
	}
	if (s->cq_entries < s->sq_entries) {
		*why = "cq_entries must be at least sq_entries";
		return -EINVAL;
	}
	if (strcmp(s->transport, "auto") && strcmp(s->transport, "verbs") &&
	    strcmp(s->transport, "tcp")) {
		*why = "transport must be auto, verbs or tcp";
		return -EINVAL;
	}
	if (strcmp(s->frame_integrity, "off") && strcmp(s->frame_integrity, "mac") &&
	    strcmp(s->frame_integrity, "encrypt")) {
		*why = "frame_integrity must be off, mac or encrypt";
		return -EINVAL;
	}
	if (strcmp(s->rdma_gid_index, "auto")) {
		char *end;
		unsigned long g = strtoul(s->rdma_gid_index, &end, 10);
		if (!s->rdma_gid_index[0] || *end || g > 65535) {
			*why = "rdma_gid_index must be auto or a number";
			return -EINVAL;
		}
	}
	return 0;
}

const char *settings_format(const struct hoistd_settings *s, int id, char *buf, size_t len)
{
	const struct setting_desc *d = &table[id];
	const char *field = (const char *)s + d->offset;
	uint64_t v;
	if (d->type == T_STR) {
		snprintf(buf, len, "%s", field);
		return buf;
	}
	memcpy(&v, field, sizeof(v));
	if (d->type == T_LEVEL)
		snprintf(buf, len, "%s", level_names[v & 3]);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

const char *settings_name(int id) { return table[id].name; }
const char *settings_help(int id) { return table[id].help; }

const char *settings_source_name(enum settings_source src)
{
	static const char *const n[] = {"default", "file", "env", "flag"};
	return n[src];
}

void settings_print(const struct hoistd_settings *s, FILE *out)
{
	char buf[300];
	for (int i = 0; i < SET__COUNT; i++)
		fprintf(out, "%-16s = %-24s # %s; %s\n", table[i].name, settings_format(s, i, buf, sizeof(buf)),
			settings_source_name(s->source[i]), table[i].help);
}

uint64_t settings_memlock_budget(uint64_t memlock_bytes, uint64_t rlim_cur, uint64_t phys_bytes,
				 const char **why)
{
	if (memlock_bytes) {
		*why = "memlock_bytes";
		return memlock_bytes;
	}
	if (rlim_cur != SETTINGS_MEMLOCK_UNLIMITED) {
		*why = "RLIMIT_MEMLOCK";
		return rlim_cur;
	}
	/* Unlimited (LimitMEMLOCK=infinity, root): the budget would be no
	 * budget, and one job could pin the whole node. Half the memory
	 * leaves the rest to the programs that own the pinned heaps. */
	*why = "half of the node's memory (RLIMIT_MEMLOCK is unlimited, memlock_bytes 0)";
	return phys_bytes / 2 ? phys_bytes / 2 : 1;
}

/* ---- deploy/hoistd.conf.example (hoistd --config-example) ----------------
 * Per setting, after its help: what an administrator also needs to know
 * (optional), and the heading of a group that starts with it. */
static const char *const example_section[SET__COUNT] = {
	[SET_nodes] = "several nodes",
	[SET_max_outstanding_puts] = "automatic overlap (clients with HOIST_AUTO=1, the default)",
	[SET_coll_ring_bytes] = "collectives and packed operations",
	[SET_frame_integrity] = "between daemons",
};

static const char *const example_detail[SET__COUNT] = {
	[SET_runtime_dir] = "It holds hoistd.sock and stats.sock. Per-user: $XDG_RUNTIME_DIR/hoist, "
			    "else /tmp/hoist-<uid>.",
	[SET_log_level] = "The log goes to stderr (the journal under systemd).",
	[SET_spin_us] = "Higher: lower latency, more CPU. In the window the idle thread yields: "
			"every 64th pass, every pass once a yield ran another thread (a PE "
			"sharing its CPU).",
	[SET_yield_long_us] = "With more runnable threads than CPUs a yield can hand the CPU to a "
			      "thread that keeps it for a whole slice (a CPU hog); sleeping then "
			      "brings the thread back sooner (a doorbell's wake-up preempts such a "
			      "thread). hoistctl stats: prog_yields, prog_long_yields. Clients: "
			      "HOIST_YIELD_LONG_US, the same for their waits.",
	[SET_cpu_handoff] = "The thread tells clients its CPU (control page prog_cpu) and a "
			    "waiting client tells it its own (wait_cpu). On one CPU the two "
			    "take turns: the client yields at once instead of spinning, the "
			    "thread yields right after the pass that served it. hoistctl "
			    "stats: prog_handoffs. Clients: HOIST_CPU_HANDOFF=0 turns their "
			    "half off.",
	[SET_staging_bytes] = "It holds small put payloads and get bounce buffers. Its pages (and the "
			      "ring's) are allocated and mapped when a client attaches, in the daemon and "
			      "in the client: clients go through it page by page.",
	[SET_max_heap_bytes] = "Clients ask with HOIST_HEAP_SIZE (default 64m).",
	[SET_batch] = "Fairness versus batching.",
	[SET_job_timeout_ms] = "The error is -ETIMEDOUT.",
	[SET_max_pending_colls] = "Each costs 64 bytes per rank of the job until it finishes "
				  "(hoistctl stats: colls_capped).",
	[SET_max_clients_per_user] = "Other users still attach, so one user cannot lock everyone out "
				     "with half-assembled jobs.",
	[SET_request_timeout_ms] = "hoistctl stats: halfopen_timeouts. Idle connections never block "
				   "the daemon: they only cost a descriptor until then.",
	[SET_max_halfopen] = "hoistctl stats: halfopen_evicted.",
	[SET_nodes] = "A hostfile holds one host:port per line. Every daemon gets the same list.",
	[SET_node_id] = "Unset, one hoistd.conf serves every node; hoistd refuses to start when no "
			"entry or several entries are addresses of this host (several daemons on one "
			"host, e.g. on loopback): then set it. Uncommented, 0 means the first entry.",
	[SET_cluster_key_file] = "Mode 0600. A daemon without it cannot join or touch anyone's memory.",
	[SET_peer_timeout_ms] = "The barriers of its jobs fail too (-ECONNRESET).",
	[SET_coll_ring_bytes] = "The ring is reduce-scatter + allgather (bandwidth-optimal); smaller "
				"ones use recursive doubling (fewer steps). 0: always the ring.",
	[SET_coalesce] = "0: each travels alone.",
	[SET_frame_integrity] =
		"  off      plain frames (an on-path host of the cluster network can alter\n"
		"           or inject them, i.e. write into any heap)\n"
		"  mac      every record of frames carries an AEAD tag under a per-connection\n"
		"           session key and sequence number: altered, injected, replayed or\n"
		"           reordered data is refused (the connection is dropped, counted in\n"
		"           the peer counter integrity_failures) before any of it is used\n"
		"  encrypt  mac, and the frames are encrypted too (confidentiality)\n"
		"A mismatch between daemons is refused and logged. verbs: RDMA WRITE/READ are "
		"placed by the NIC; a warning at start says so. Cost: README \"Security\" and "
		"bench/run-frames.sh.",
	[SET_transport] = "verbs: libibverbs + librdmacm, RDMA WRITE/READ between the registered "
			  "client segments. The choice is logged at start and shown by `hoistctl "
			  "stats` (transport_verbs). Every daemon of a cluster must use the same "
			  "transport.",
	[SET_rdma_gid_index] = "A device, port or GID index that disagrees with what rdma_cm routes "
			       "this node's IP through is an error at start.",
	[SET_memlock_bytes] = "Client segments are heap, staging and prefetch arena of every "
			      "attached client (the verbs transport registers them; hoistctl stats "
			      "shows the budget as pinned_limit with every transport). The daemon "
			      "logs the budget and where it came from at start. An attach beyond it "
			      "is refused with -ENOMEM and a message naming the limit to raise.",
};

/* Text as '#' comment lines of at most 78 columns; '\n' breaks a line, and
 * a line that must wrap continues at its own indentation. */
static void example_comment(FILE *out, const char *text)
{
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);
		size_t indent = 0;
		while (indent < len && text[indent] == ' ')
			indent++;
		const char *p = text;
		size_t left = len;
		int first = 1;
		while (left) {
			size_t room = 76 - (first ? 0 : indent), take = left;
			if (take > room) {
				take = room;
				while (take > 0 && p[take] != ' ')
					take--;
				if (take == 0) /* one long word */
					for (take = room; take < left && p[take] != ' '; take++)
						;
			}
			fprintf(out, "# %*s%.*s\n", first ? 0 : (int)indent, "", (int)take, p);
			p += take;
			left -= take;
			while (left && *p == ' ') {
				p++;
				left--;
			}
			first = 0;
		}
		text += len + (nl ? 1 : 0);
	}
}

void settings_print_example(FILE *out)
{
	fputs("# /etc/hoist/hoistd.conf - settings of hoistd, the hoist node daemon.\n"
	      "#\n"
	      "# hoistd reads /etc/hoist/hoistd.conf when it exists (or the file given with\n"
	      "# --config FILE). One \"name = value\" per line; '#' starts a comment.\n"
	      "# Every setting can also be given as an environment variable HOISTD_<NAME>\n"
	      "# (HOISTD_SPIN_US=100) or a flag --name-with-dashes (--spin-us 100).\n"
	      "# Precedence, lowest first: built-in default, this file, environment, flag.\n"
	      "# HOIST_<NAME> is still read when HOISTD_<NAME> is not set, but deprecated\n"
	      "# (the daemon logs a warning): libhoist reads HOIST_SPIN_US and\n"
	      "# HOIST_RUNTIME_DIR with a meaning of its own.\n"
	      "# `hoistd --print-config` shows the effective values and where each came from.\n"
	      "#\n"
	      "# Sizes take a suffix k, m, g, t (powers of 1024), e.g. 64m.\n"
	      "# Every line below is commented out and shows the built-in default.\n"
	      "#\n"
	      "# This file is generated from hoistd's settings table (daemon/settings.h,\n"
	      "# daemon/settings.c) by `hoistd --config-example`; in the sources,\n"
	      "#   build/daemon/hoistd --config-example > deploy/hoistd.conf.example\n"
	      "# regenerates it (the test conf_example fails until it is).\n",
	      out);
	for (int i = 0; i < SET__COUNT; i++) {
		const struct setting_desc *t = &table[i];
		char buf[1024], lo[32], hi[32];
		if (example_section[i])
			fprintf(out, "\n# ---- %s %.*s\n", example_section[i],
				(int)(70 - strlen(example_section[i])),
				"-------------------------------------------------------------------"
				"------");
		fputc('\n', out);
		char range[80] = "";
		if (t->type == T_UINT)
			snprintf(range, sizeof(range), " (%llu..%llu)", (unsigned long long)t->min,
				 (unsigned long long)t->max);
		else if (t->type == T_SIZE) {
			size_words(t->min, lo, sizeof(lo));
			size_words(t->max, hi, sizeof(hi));
			snprintf(range, sizeof(range), " (%s..%s)", lo, hi);
		}
		const char *more = example_detail[i];
		int inline_more = more && !strchr(more, '\n');
		snprintf(buf, sizeof(buf), "%s%s.%s%s", t->help, range, inline_more ? " " : "",
			 inline_more ? more : "");
		example_comment(out, buf);
		if (more && !inline_more)
			example_comment(out, more);
		fprintf(out, "#%s =%s%s\n", t->name, t->def[0] ? " " : "", t->def);
	}
}
