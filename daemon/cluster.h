/*
 * The cluster: the node list, this node's place in it, the cluster key,
 * the peers (what every network transport shares of one: node, address,
 * the peer layer's link state and counters, the open pack; peer.h,
 * pack.h) and the remote-address cache. Set up by cluster.c from the
 * settings; the running network transport (transport/) keeps its own
 * wire state behind the opaque pointers here.
 */
#ifndef HOISTD_CLUSTER_H
#define HOISTD_CLUSTER_H

#include <netinet/in.h>
#include <stdint.h>

#include "addr_cache.h"
#include "hoist_shm.h"
#include "peer.h"
#include "transport.h"
#include "wire.h"

struct daemon;
struct client;
struct job;
struct loop;
struct lane;    /* tcp (transport/tcp/tcp.h) */
struct netconn; /* tcp */

/* One element of a pack: what its result completes. */
struct pack_slot {
	struct xp_cookie ck;   /* ck.client NULL once the client is gone */
	char *dst;             /* get: where its data lands */
	uint32_t len;
	uint8_t is_get;
	int32_t res;           /* from the reply */
};

/* The pack being filled for a peer (sent at the end of the progress pass,
 * when full, before any other request to the peer, or - aggregation
 * regions - when the region ends). */
struct pack_open {
	char *buf;             /* request payload, WIRE_AM_MAX_PAYLOAD */
	uint32_t plen;         /* request payload bytes so far */
	uint32_t rlen;         /* reply payload bytes at most */
	uint32_t nelem, cap;
	uint32_t namo;         /* of them atomics */
	uint64_t job;
	struct pack_slot *slots;
	int hold;              /* only aggregation-region ops in it */
	int mixed;             /* ops of several clients */
	int grew;              /* ops added in this progress pass */
	struct client *first;  /* the client of its first op (cookie) */
};

/* A peer node: what every transport shares (node, address, the peer
 * layer's link state and counters: peer.h), then tcp's wire. */
struct peer {
	int32_t node;
	char name[128];         /* host:port as configured */
	struct sockaddr_in addr;
	struct peer_link link;  /* state, retries, heartbeat (peer.c) */
	struct peer_stats st;
	/* tcp (tcp.c) */
	struct lane *lanes;     /* tcp: our outgoing connections [nlanes] */
	uint32_t nlanes;
	uint32_t next_lane;     /* where the search for the least busy starts */
	uint32_t pack_lane;     /* the lane the open pack reserved a slot on */
	uint32_t window;        /* requests in flight per lane at most */
	uint64_t next_tag;      /* unique over the peer's lanes */
	struct pack_open pack;  /* the open pack (tcp and verbs) */
};

struct net {
	int enabled;          /* more than one node configured */
	int32_t self;
	int32_t nnodes;
	struct peer *peers;   /* [nnodes]; peers[self] unused */
	int listen_fd;
	struct loop *loop;    /* the progress loop's epoll (d->loop) */
	struct netconn *incoming;
	struct netconn *graveyard; /* closed while an event is handled */
	int in_batch;
	uint8_t key[32];      /* cluster key digest */
	int frames_mode;      /* enum frames_mode (setting frame_integrity, frames.h) */
	int frames_aes;       /* this CPU runs AES-256-GCM */
	uint8_t job_id_key[32]; /* keys cluster_job_id: from the cluster key, or random on one node */
	struct addr_cache cache;
	uint64_t next_ping_check_ns;
	uint64_t accept_paused_until; /* 0: the listening socket is watched */
	uint64_t next_flood_log_ns;   /* rate limit of the refusal log lines */
	uint64_t flood_unlogged;      /* refusals since the last such line */
	uint64_t busy_until_ns;       /* tcp: poll for replies until then (tcp_busy_poll_us), 0: not */
	uint32_t rx_held;             /* tcp: connections whose read stopped at tcp_rx_batch frames */
};

/* cluster.c (main thread, before the threads start) */
int cluster_configure(struct daemon *d, char *err, size_t errlen);
/* The index of the one node list entry whose IPv4 address is one of
 * local[0..nlocal) (this host's interface addresses): how a daemon without
 * node_id finds itself. -ENOENT when none is; -EEXIST when several are
 * (*first and *second get the first two). */
int cluster_self_index(const struct net *n, const struct in_addr *local, int nlocal, int *first,
		       int *second);

/* A job's id on every node of the cluster: a keyed hash (BLAKE2b under a
 * key derived from the cluster key) of the owner's uid and the job key.
 * Jobs of different owners with one key are different jobs; nobody without
 * the cluster key can compute an id, let alone find two that collide. Never
 * 0. Any thread (job_id_key is immutable once the threads run). */
uint64_t cluster_job_id(const struct net *n, uint32_t uid, const char *key);

#endif
