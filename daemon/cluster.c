/*
 * The cluster as configured: the node list (nodes = host:port,... or
 * @hostfile with one host:port per line), this daemon's index in it, and
 * the cluster key that every daemon must hold to join.
 *
 * The index is node_id when it is set (file, environment or flag); else
 * the one entry of the list whose IPv4 address belongs to one of this
 * host's interfaces, so that every node can share one configuration.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon.h"
#include "frames.h"
#include "log.h"

static int parse_hostport(const char *text, struct sockaddr_in *sa)
{
	char host[128];
	const char *colon = strrchr(text, ':');
	if (!colon || colon == text || (size_t)(colon - text) >= sizeof(host))
		return -EINVAL;
	memcpy(host, text, (size_t)(colon - text));
	host[colon - text] = 0;
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535)
		return -EINVAL;
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return -EHOSTUNREACH;
	memset(sa, 0, sizeof(*sa));
	*sa = *(struct sockaddr_in *)res->ai_addr;
	sa->sin_port = htons((uint16_t)port);
	freeaddrinfo(res);
	return 0;
}

static int add_node(struct net *n, const char *item, char *err, size_t errlen)
{
	struct peer *p = realloc(n->peers, (size_t)(n->nnodes + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	n->peers = p;
	p = &n->peers[n->nnodes];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", item);
	int rc = parse_hostport(item, &p->addr);
	if (rc) {
		snprintf(err, errlen, "node '%s': expected host:port with a resolvable IPv4 host", item);
		return rc;
	}
	p->node = n->nnodes++;
	return 0;
}

static int load_key(struct net *n, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		snprintf(err, errlen, "cluster key %s: %s (several nodes need a shared key)", path,
			 strerror(errno));
		return -errno;
	}
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077))
		hlog_warn("cluster key %s is readable by others (mode %o)", path,
			  (unsigned)(st.st_mode & 0777));
	uint8_t buf[4096];
	size_t len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	if (len < 16) {
		snprintf(err, errlen, "cluster key %s: %zu bytes, need at least 16", path, len);
		return -EINVAL;
	}
	crypto_generichash(n->key, sizeof(n->key), buf, len, NULL, 0);
	sodium_memzero(buf, sizeof(buf));
	return 0;
}

int cluster_self_index(const struct net *n, const struct in_addr *local, int nlocal, int *first,
		       int *second)
{
	int found = -1;
	for (int i = 0; i < n->nnodes; i++) {
		for (int j = 0; j < nlocal; j++) {
			if (n->peers[i].addr.sin_addr.s_addr != local[j].s_addr)
				continue;
			if (found >= 0) {
				*first = found;
				*second = i;
				return -EEXIST;
			}
			found = i;
			break;
		}
	}
	return found >= 0 ? found : -ENOENT;
}

/* node_id not set: find this host in the node list by its addresses. */
static int derive_self(struct net *n, char *err, size_t errlen)
{
	struct ifaddrs *ifs;
	if (getifaddrs(&ifs) < 0) {
		snprintf(err, errlen, "node_id is not set and this host's addresses are unknown "
			 "(getifaddrs: %s); set node_id", strerror(errno));
		return -errno;
	}
	struct in_addr local[256];
	int nlocal = 0;
	for (struct ifaddrs *i = ifs; i && nlocal < (int)(sizeof(local) / sizeof(local[0]));
	     i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET)
			local[nlocal++] = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
	freeifaddrs(ifs);
	int first = -1, other = -1, rc = cluster_self_index(n, local, nlocal, &first, &other);
	if (rc == -ENOENT) {
		snprintf(err, errlen, "node_id is not set and no entry of the node list (%d entries, "
			 "first %s) has an address of this host's interfaces: set node_id "
			 "(--node-id N, HOISTD_NODE_ID or node_id = N in the config file)",
			 n->nnodes, n->peers[0].name);
		return -EINVAL;
	}
	if (rc == -EEXIST) {
		snprintf(err, errlen, "node_id is not set and several entries of the node list are "
			 "addresses of this host (%d: %s and %d: %s; several daemons on one host?): "
			 "set node_id (--node-id N, HOISTD_NODE_ID or node_id = N in the config file)",
			 first, n->peers[first].name, other, n->peers[other].name);
		return -EINVAL;
	}
	n->self = rc;
	hlog_info("node_id %d: node list entry %s is an address of this host", rc, n->peers[rc].name);
	return 0;
}

int cluster_configure(struct daemon *d, char *err, size_t errlen)
{
	struct net *n = &d->net;
	const char *spec = d->cfg.nodes;
	n->listen_fd = -1;
	n->self = 0;
	n->nnodes = 1;
	if (sodium_init() < 0) {
		snprintf(err, errlen, "libsodium failed to initialise");
		return -EIO;
	}
	/* job ids of a node of its own never leave it: any secret will do */
	randombytes_buf(n->job_id_key, sizeof(n->job_id_key));
	if (!spec[0])
		return 0; /* a node of its own */
	n->nnodes = 0;
	int rc = 0;
	if (spec[0] == '@') {
		FILE *f = fopen(spec + 1, "re");
		if (!f) {
			snprintf(err, errlen, "hostfile %s: %s", spec + 1, strerror(errno));
			return -errno;
		}
		char line[256];
		while (!rc && fgets(line, sizeof(line), f)) {
			char *h = strchr(line, '#');
			if (h)
				*h = 0;
			char *p = line + strspn(line, " \t");
			p[strcspn(p, " \t\r\n")] = 0;
			if (*p)
				rc = add_node(n, p, err, errlen);
		}
		fclose(f);
	} else {
		char *copy = strdup(spec), *save = NULL;
		if (!copy)
			return -ENOMEM;
		for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save))
			rc = add_node(n, tok, err, errlen);
		free(copy);
	}
	if (rc)
		return rc;
	if (n->nnodes == 0) {
		snprintf(err, errlen, "node list '%s' is empty", spec);
		return -EINVAL;
	}
	if (d->cfg.source[SET_node_id] != SRC_DEFAULT) {
		if (d->cfg.node_id >= (uint64_t)n->nnodes) {
			snprintf(err, errlen, "node_id %llu but the node list has %d entries",
				 (unsigned long long)d->cfg.node_id, n->nnodes);
			return -EINVAL;
		}
		n->self = (int32_t)d->cfg.node_id;
	} else if (n->nnodes > 1 && (rc = derive_self(n, err, errlen))) {
		return rc;
	}
	n->frames_mode = frames_mode_parse(d->cfg.frame_integrity);
	if (n->frames_mode < 0) {
		snprintf(err, errlen, "frame_integrity '%s': expected off, mac or encrypt",
			 d->cfg.frame_integrity);
		return -EINVAL;
	}
	n->frames_aes = frames_aes_available();
	n->enabled = n->nnodes > 1;
	if (n->enabled && (rc = load_key(n, d->cfg.cluster_key_file, err, errlen)))
		return rc;
	if (n->enabled) { /* every node must compute the same ids */
		static const char ctx[] = "hoist job id v2";
		crypto_generichash(n->job_id_key, sizeof(n->job_id_key), (const uint8_t *)ctx,
				   sizeof(ctx) - 1, n->key, sizeof(n->key));
	}
	return 0;
}

uint64_t cluster_job_id(const struct net *n, uint32_t uid, const char *key)
{
	uint8_t le[4] = {(uint8_t)uid, (uint8_t)(uid >> 8), (uint8_t)(uid >> 16), (uint8_t)(uid >> 24)};
	uint8_t h[crypto_generichash_BYTES_MIN];
	crypto_generichash_state st;
	crypto_generichash_init(&st, n->job_id_key, sizeof(n->job_id_key), sizeof(h));
	crypto_generichash_update(&st, le, sizeof(le));
	crypto_generichash_update(&st, (const uint8_t *)key, strlen(key));
	crypto_generichash_final(&st, h, sizeof(h));
	uint64_t id;
	memcpy(&id, h, sizeof(id));
	return id ? id : 1;
}
