/*
 * hoistd settings: one table generates the struct, the defaults, the
 * command-line flags (--name-with-dashes), the environment (HOISTD_NAME;
 * the older HOIST_NAME is still read, deprecated), the config file keys
 * (name = value), --print-config and --config-example.
 * Precedence, lowest first: default, config file, environment, flag.
 */
#ifndef HOISTD_SETTINGS_H
#define HOISTD_SETTINGS_H

#include <stdint.h>
#include <stdio.h>

/* X(name, type, default, min, max, help) ; types: STR, UINT, SIZE, LEVEL */
#define HOISTD_SETTINGS(X)                                                                         \
	X(runtime_dir, STR, "", 0, 0,                                                              \
	  "directory of the attach and stats sockets (empty: /run/hoist as root, else per-user)")  \
	X(log_level, LEVEL, "info", 0, 3, "log verbosity: error | warn | info | debug")            \
	X(spin_us, UINT, "50", 0, 1000000,                                                         \
	  "microseconds the progress thread spins after its last work before it sleeps")          \
	X(yield_long_us, UINT, "200", 0, 1000000,                                                  \
	  "a yield of the idle progress thread that takes this long ends its spin: it sleeps (0: never)") \
	X(cpu_handoff, UINT, "1", 0, 1,                                                            \
	  "1: after work the progress thread yields at once if a client waits on its CPU (0: off)") \
	X(sq_entries, UINT, "1024", 8, 65536, "submission ring entries per client (power of two)") \
	X(cq_entries, UINT, "2048", 8, 131072, "completion ring entries per client (power of two)") \
	X(staging_bytes, SIZE, "4m", 4096, 1ull << 32, "staging arena bytes per client")           \
	X(max_heap_bytes, SIZE, "4g", 4096, 1ull << 40, "largest symmetric heap a client may ask")  \
	X(batch, UINT, "64", 1, 65536, "descriptors drained from one client before the next")       \
	X(job_timeout_ms, UINT, "30000", 1, 3600000,                                               \
	  "milliseconds for every rank of a job to attach before the attach fails")                \
	X(max_clients, UINT, "1024", 1, 65536, "attached clients at most")                         \
	X(max_pending_colls, UINT, "64", 1, 65536,                                                 \
	  "collectives a job's PE may have started that are not finished here; later ones wait")   \
	X(max_clients_per_user, UINT, "512", 1, 65536,                                             \
	  "clients one uid may have attached (or waiting for its job) at once; more get -EUSERS")  \
	X(request_timeout_ms, UINT, "2000", 1, 600000,                                             \
	  "milliseconds a new attach or stats connection has to send its request; then dropped")  \
	X(max_halfopen, UINT, "256", 1, 65536,                                                     \
	  "attach and stats connections without a request at most; beyond, the oldest is dropped") \
	X(nodes, STR, "", 0, 0,                                                                    \
	  "cluster node list host:port,host:port,... or @hostfile (empty: this node only)")       \
	X(node_id, UINT, "0", 0, 4095,                                                             \
	  "this daemon's index in the node list (unset: the entry with this host's address)")      \
	X(cluster_key_file, STR, "/etc/hoist/cluster.key", 0, 0,                                   \
	  "file holding the shared cluster key (>= 16 bytes); required with several nodes")        \
	X(peer_timeout_ms, UINT, "5000", 100, 3600000,                                             \
	  "a peer silent this long is declared lost; its operations fail")                         \
	X(heartbeat_ms, UINT, "1000", 10, 600000,                                                  \
	  "interval of keep-alive pings to busy peers (at most a quarter of peer_timeout_ms)")    \
	X(handshake_timeout_ms, UINT, "5000", 100, 600000,                                         \
	  "a peer connection that has not completed the keyed handshake by then is dropped")       \
	X(max_pending_peers, UINT, "256", 1, 65536,                                                \
	  "incoming peer connections still in their handshake at most; beyond, the oldest goes")   \
	X(addr_cache_entries, UINT, "1024", 0, 1048576,                                            \
	  "remote-address cache entries (LRU; seed 001): a hit sends a put/get to another node "  \
	  "by address (tcp: direct, verbs: RDMA), a miss has the target resolve it (tcp: sent by "  \
	  "name; verbs: a resolve round trip first). 0: off, every access resolved; fewer "      \
	  "entries than (PE, segment) pairs a node reaches: LRU evictions")                      \
	X(credit_window, UINT, "256", 1, 65536,                                                    \
	  "requests in flight per peer (tcp: per connection) at most")                             \
	X(tcp_buffer_bytes, SIZE, "8m", 65536, 1ull << 32,                                         \
	  "send buffer per tcp connection; draining a client pauses while it is full")            \
	X(tcp_lanes, UINT, "1", 1, 16,                                                             \
	  "tcp connections per peer; requests spread over them, puts/gets of 256 KiB or more "   \
	  "striped; more than 1: order per peer is not kept, the conflict stage orders")          \
	X(tcp_busy_poll_us, UINT, "0", 0, 10000,                                                   \
	  "after a request goes out and while its reply is awaited, the progress thread reads "  \
	  "the reply's connection directly, without epoll or yielding the CPU, for up to this "   \
	  "long (ended at once by client descriptors or commands); 0: off. Off by default: on a " \
	  "machine with more busy threads than CPUs not yielding made gets slower; try 10-20 "    \
	  "where each daemon has a CPU of its own")                                                \
	X(tcp_rx_batch, UINT, "8", 0, 65536,                                                       \
	  "frames read from one tcp connection in a row while a client's ring holds descriptors; " \
	  "then the rings are drained before the rest is read (a get posted while a prefetch "     \
	  "window lands is taken after at most this many landings, not after the whole window); " \
	  "0: read until the socket is empty")                                                     \
	X(max_outstanding_puts, UINT, "4096", 1, 1u << 24,                                         \
	  "deferred puts per client at most; reaching it waits for completions")                   \
	X(phase_max, UINT, "32", 1, 4096, "phases whose gets are remembered, per client (LRU)")    \
	X(phase_max_gets, UINT, "4096", 1, 65536,                                                  \
	  "gets remembered per phase (more are misses every run: pf_miss_full)")                 \
	X(phase_period_max, UINT, "3", 1, 3,                                                       \
	  "longest period of a phase's gets predicted (its last this many runs are kept; "      \
	  "1: the last run predicts the next)")                                                    \
	X(prefetch_chunk, UINT, "64", 1, 65536,                                                    \
	  "prefetches in flight per destination node (a window, filled again whenever half of it " \
	  "has landed)")                                                                           \
	X(prefetch_arena_bytes, SIZE, "8m", 4096, 1ull << 32,                                      \
	  "per-client prefetch buffer (two halves for alternate phases; what a phase's gets do "  \
	  "not fit in a half is not prefetched: pf_skip_room)")                                    \
	X(coll_ring_bytes, SIZE, "64k", 0, 1ull << 40,                                            \
	  "allreduces of at least this many bytes over 3 or more nodes use the ring")              \
	X(coalesce, UINT, "1", 0, 1,                                                               \
	  "1: small operations pending together for one node travel in one packed message")      \
	X(coalesce_max, SIZE, "4k", 0, 60u << 10,                                                  \
	  "largest put/get that coalescing packs (bigger ones go alone)")                          \
	X(frame_integrity, STR, "mac", 0, 0,                                                       \
	  "off | mac | encrypt: daemon-to-daemon tcp frames after the handshake are plain (off), " \
	  "authenticated against tampering and replay (mac) or also encrypted (encrypt); every "  \
	  "daemon of a cluster must use the same; verbs RDMA is not covered")                      \
	X(transport, STR, "auto", 0, 0,                                                            \
	  "auto | verbs | tcp: how daemons reach each other (auto: verbs when an RDMA device "    \
	  "owns this node's IP, else tcp)")                                                        \
	X(rdma_device, STR, "", 0, 0,                                                              \
	  "verbs: RDMA device to use (empty: the one owning this node's IP; must agree with it)") \
	X(rdma_port, UINT, "0", 0, 255, "verbs: device port (0: the one rdma_cm routes to)")      \
	X(rdma_gid_index, STR, "auto", 0, 0,                                                       \
	  "verbs: GID index (auto: the IPv4-mapped RoCE v2 GID of this node's IP)")                \
	X(memlock_bytes, SIZE, "0", 0, 1ull << 50,                                                 \
	  "bytes the daemon may pin for client segments, the node's budget (0: RLIMIT_MEMLOCK, "  \
	  "or half the node's memory when that is unlimited)")

enum settings_source { SRC_DEFAULT, SRC_FILE, SRC_ENV, SRC_FLAG };

enum settings_id {
#define X(name, type, def, min, max, help) SET_##name,
	HOISTD_SETTINGS(X)
#undef X
	SET__COUNT
};

#define SETTINGS_FIELD_STR(name) char name[256];
#define SETTINGS_FIELD_UINT(name) uint64_t name;
#define SETTINGS_FIELD_SIZE(name) uint64_t name;
#define SETTINGS_FIELD_LEVEL(name) uint64_t name;

struct hoistd_settings {
#define X(name, type, def, min, max, help) SETTINGS_FIELD_##type(name)
	HOISTD_SETTINGS(X)
#undef X
	enum settings_source source[SET__COUNT];
	/* set by settings_load_env: the value came from HOIST_NAME, the
	 * deprecated name (HOISTD_NAME was not set) */
	unsigned char env_deprecated[SET__COUNT];
};

void settings_defaults(struct hoistd_settings *s);
/* Set one value by table name ("spin_us"). 0, -ENOENT (unknown name),
 * -EINVAL (not a value of that type), -ERANGE (outside min..max). */
int settings_set(struct hoistd_settings *s, const char *name, const char *value,
		 enum settings_source src);
/* "name = value" lines, '#' comments. 0, -errno of open, or the first
 * error of settings_set; *line gets the failing line number. */
int settings_load_file(struct hoistd_settings *s, const char *path, int *line);
/* The same, and on failure err (if not NULL) says in words what was wrong
 * where: "FILE:LINE: spin_us: 'x' is not valid: a whole number from 0 to
 * 1000000", "FILE:3: unknown setting 'max_client'; did you mean
 * 'max_clients'?", "FILE: No such file or directory". */
int settings_load_config(struct hoistd_settings *s, const char *path, int *line, char *err,
			 size_t errlen);
/* Why settings_set(name, value) returned rc, naming the key and the values
 * it takes (and, for an unknown key, the closest known one). */
void settings_explain(const char *name, const char *value, int rc, char *buf, size_t len);
/* The known setting closest to a misspelt name, or NULL if none is close. */
const char *settings_closest(const char *name);
/* Every setting whose HOISTD_<NAME> is present in the environment; for a
 * setting without it, HOIST_<NAME> (the name the daemon shared with
 * libhoist's variables, deprecated for the daemon: see
 * settings_env_deprecated). 0 or the first error, *bad gets the failing
 * variable name. */
int settings_load_env(struct hoistd_settings *s, const char **bad);
/* The environment variable of setting id: HOISTD_SPIN_US, or with
 * deprecated set HOIST_SPIN_US; returns buf. */
const char *settings_env_name(int id, int deprecated, char *buf, size_t len);
/* 1 when setting id's value is the one of its deprecated HOIST_<NAME>
 * (read from there and not overridden by a flag since): hoistd logs that. */
int settings_env_deprecated(const struct hoistd_settings *s, int id);
/* Cross-field checks (powers of two, ...). 0 or -EINVAL with *why. */
int settings_check(const struct hoistd_settings *s, const char **why);
/* Value as text into buf; returns buf. */
const char *settings_format(const struct hoistd_settings *s, int id, char *buf, size_t len);
const char *settings_name(int id);
const char *settings_help(int id);
const char *settings_source_name(enum settings_source src);
void settings_print(const struct hoistd_settings *s, FILE *out);
/* deploy/hoistd.conf.example: every setting of the table, commented out
 * with its default, its help and range and (for some) more words. */
void settings_print_example(FILE *out);
/* Parse "12", "4k", "64m", "2g" (powers of 1024). 0 or -EINVAL/-ERANGE. */
int settings_parse_size(const char *text, uint64_t *out);

/* The node's pinned-memory budget: memlock_bytes when set, else the memlock
 * rlimit (rlim_cur, UINT64_MAX = unlimited), else half of phys_bytes, the
 * node's memory: never unlimited. *why names where it came from. */
#define SETTINGS_MEMLOCK_UNLIMITED UINT64_MAX
uint64_t settings_memlock_budget(uint64_t memlock_bytes, uint64_t rlim_cur, uint64_t phys_bytes,
				 const char **why);

#endif
