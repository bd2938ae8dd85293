/*
 * hoistd's core objects and who owns what.
 *
 * Two threads. The control thread (control.c, libevent) creates and frees
 * clients and jobs, and does all socket I/O. The progress thread
 * (progress.c, the loop) executes descriptors: its commands (jobs.c), then
 * each client's ring through the stages, in the order a descriptor meets
 * them: engine.c (drain, validate.c, dispatch by opcode), rma.c (put/get)
 * or multi.c (strided/vector), overlap.c (conflict, put deferral, phase
 * prefetch), the transport (self.c, tcp.c, verbs/; peer.c what the
 * network ones share about a peer), barrier.c, coll.c,
 * complete.c (completion posting). They talk only through two command
 * queues (cmdq.c); an object changes hands with the command that carries it:
 *
 *   control -> progress  CMD_CLIENT_ADD   a client attached (it can be
 *                                         addressed by peers from now on)
 *   control -> progress  CMD_JOB_READY    every rank of the job is known;
 *                                         job->node_of[] is final
 *   control -> progress  CMD_ANNOUNCE     tell peers which ranks we host
 *   control -> progress  CMD_CLIENT_GONE  a client hung up
 *   progress -> control  CMD_CLIENT_FREE  progress thread forgot it: free it
 *   progress -> control  CMD_MEMBER       a peer announced ranks of a job
 *
 * A client's job may span nodes (cluster.h). The control thread learns which
 * node hosts each rank from the announcements and answers the attach
 * requests once every rank of the job is known.
 *
 * Fields are grouped by the thread that writes them. Counters are written
 * by one thread and read by the other with relaxed atomics (stats.h).
 *
 * File dependencies: a file depends on another when it uses a symbol the
 * other defines (nm over hoistd_core; unit.daemon_layers). No file may be
 * in an import cycle except these, which still are (issue 15); the list
 * may only shrink, and the test fails while it names a file that no
 * longer is in a cycle. Known import cycle:
 *   attach.c control.c barrier.c coll.c complete.c overlap.c
 *
 */
#ifndef HOISTD_DAEMON_H
#define HOISTD_DAEMON_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "cmdq.h"
#include "hoist_shm.h"
#include "loop.h"
#include "cluster.h"
#include "reg.h"
#include "region.h"
#include "settings.h"
#include "stats.h"
#include "transport.h"

struct job;
struct conn;

struct client {
	/* immutable once created (control thread) */
	uint64_t id;
	struct job *job;
	int32_t rank;
	pid_t pid;
	uid_t uid;
	struct region ring, staging, heap;
	struct region pf;        /* prefetch table + arena (automatic overlap) */
	uint32_t pf_slots;
	struct hoist_ctrl *ctrl;
	struct hoist_sqe *sq;
	struct hoist_cqe *cq;
	/* [cq_entries], indexed like cq: completions are written here and
	 * copied into the ring whole when published (complete.c), so the
	 * line a waiting client polls changes once. NULL: written in the
	 * ring (unit tests' clients) */
	struct hoist_cqe *cq_shadow;
	uint32_t sq_mask, cq_mask, sq_entries, cq_entries;

	/* control thread */
	struct conn *conn;
	struct client *ctl_next; /* daemon's list of all clients */
	int handed_over;         /* progress thread knows it */
	int replied;             /* attach reply sent */
	int clean_detach;

	/* progress thread */
	struct client *prog_next; /* progress thread's active list */
	uint32_t sq_head;         /* local copy of what we consumed */
	uint32_t cq_tail;         /* local copy of what we posted */
	uint32_t cq_published;
	uint32_t cq_head_seen; /* ctrl->cq_head as drain() last read it (engine.c) */
	uint32_t cq_unwoken;   /* CQEs published while it slept for another (cq_flush) */
	uint32_t handoff_cq;   /* cq_published at the last hand-off check (progress.c) */
	uint64_t outstanding;     /* operations issued, not yet complete */
	uint32_t barrier_epoch_notified; /* epoch this client last notified for (a
					  * lazy notify of n barriers: the last of them) */
	int broken;               /* broke the ring protocol: stop serving it */
	uint32_t pin_slot;        /* pinned-table entry of its heap */
	uint64_t nonce;           /* random per attach: this incarnation of its rank */
	int blocking;             /* HOIST_AUTO=0: no overlap stage */
	struct overlap *ov;       /* automatic overlap state, NULL if blocking */
	uint32_t coll_seq;        /* collective descriptors executed (coll.c) */
	int coll_capped;          /* the descriptor at sq_head waits for max_pending_colls */
	struct xp_multi *multi;   /* strided/vector descriptor being issued */
	int agg_held;             /* ops of an aggregation region may be held */
	uint32_t sig_waiting;     /* sq_head + 1 of a signal counted in signal_waits */
	uint64_t failed_silent;   /* failed operations that asked no completion (complete.c) */
	uint64_t failed_seen;     /* failed_silent at the last quiet, barrier or signal */
	/* the result of the GET with HOIST_SQE_F_INLINE being executed: the
	 * engine copies it into that descriptor's CQE (stages/rma.c, engine.c) */
	uint8_t get_inline[HOIST_CQE_DATA_MAX];

	struct client_stats st;   /* written by the progress thread */
	struct phase_stats_row phase_st[PHASE_STATS_MAX]; /* likewise */

	/* the transport's handles of heap, staging, prefetch region (verbs:
	 * struct ibv_mr *), made by reg_register on the control thread at
	 * attach, released by client_free (reg_retire); read-only for the
	 * progress thread in between */
	void *mr[REG_NHANDLES];
	uint64_t pinned;          /* bytes they pin (memlock budget, reg.c) */
};

struct job {
	/* immutable once created */
	uint64_t id;        /* wire_job_id(key): the same on every node */
	char key[256];
	uid_t uid;
	int32_t size;
	uint64_t heap_bytes;
	struct daemon *d;

	/* control thread */
	struct job *ctl_next;
	int32_t attached;   /* local ranks attached so far */
	int32_t live;       /* local clients not yet freed */
	int32_t hung_up;    /* local clients whose connection closed */
	int32_t known;      /* ranks whose node is known */
	int ready;          /* every rank known; JOB_READY sent */
	int error_sent;     /* assembling failed; waiting ranks were refused */
	int32_t *announced; /* [nnodes]: local ranks we told that node about */
	struct event *timer;

	/* node_of[] and rank_nonce[] are written by the control thread until
	 * JOB_READY and read by the progress thread only after it. -1: not
	 * known yet. A rank's nonce names its incarnation: a departure notice
	 * of an earlier job under the same key does not match it. */
	int32_t *node_of;
	uint64_t *rank_nonce;

	/* progress thread */
	struct client **pe; /* local clients by rank, NULL if remote or gone */
	struct job *prog_next;
	int32_t local;      /* local clients the progress thread serves */
	int32_t nlocal;     /* local ranks of the job (after JOB_READY) */
	int prog_ready;
	int32_t *nodes;     /* sorted nodes hosting the job */
	int32_t nnodes, my_idx;
	uint8_t *pe_gone;   /* [size]: rank left (remote or local) */
	int32_t arrived;          /* local notifies for the current barrier */
	uint32_t barrier_epoch;   /* barriers completed */
	int bar_active;           /* inter-node rounds running */
	uint32_t bar_round;
	uint32_t bar_recv[2];     /* rounds received, by epoch parity */
	int32_t departed;         /* PEs gone since start */
	struct gone_notice *early; /* departures heard before JOB_READY */
	int32_t error;            /* sticky job error */
	/* collectives (coll.c) */
	struct coll *colls;       /* in flight or waiting, by number */
	uint32_t coll_base;       /* every collective numbered below is finished */
	int32_t *coll_idx;        /* [size]: node index of each rank */
	int32_t *coll_ranks;      /* ranks grouped by node index */
	int32_t *coll_start;      /* [nnodes + 1]: node k's ranks in coll_ranks */
	/* this node's node descriptors (coll.c), from the first one on: where
	 * an eager broadcast from another node goes before the next comes */
	int nc_known;             /* 1: set below; -1: they disagreed, never again */
	int32_t nc_anchor;        /* the node's lowest rank: its block has the inbox */
	uint64_t nc_off;          /* the node-collective blocks' heap offset */
	uint32_t nc_dseq_off;     /* a collective's number minus its node number m */
};

/* Ranks of a job hosted by one node (CMD_ANNOUNCE / CMD_MEMBER). */
struct announce {
	int32_t to_node;   /* CMD_ANNOUNCE: target, -1 = every peer */
	int32_t from_node; /* CMD_MEMBER: who said it */
	uint64_t job;
	char key[256];
	int32_t size;
	uint32_t uid;
	uint64_t heap_bytes;
	uint32_t flags;    /* MEMBER_WANT_REPLY */
	uint32_t nranks;
	struct wire_rank ranks[]; /* rank and its attach nonce */
};

struct daemon {
	struct hoistd_settings cfg;
	char runtime_dir[256];
	char attach_path[300], stats_path[300];
	uint64_t start_ns;
	uid_t uid;

	/* control thread */
	struct event_base *base;
	struct client *clients;
	struct job *jobs;
	struct job *ended_jobs; /* all local ranks hung up; freed with the last */
	struct conn *conns;
	/* connections that have not sent their request, oldest first
	 * (request_timeout_ms, max_halfopen; control.c) */
	struct conn *ho_head, *ho_tail;
	uint32_t nhalfopen;
	uint32_t nstreams;           /* stats replies being sent */
	struct event *ho_timer;
	uint64_t ho_log_ns;          /* last "dropped half-open" log line */
	uint64_t ho_unlogged;        /* drops since then */
	uint64_t next_id;
	int nclients;
	struct control_stats cst;
	uint64_t pinned_bytes;   /* registered bytes (budget; reg.c, atomic) */
	uint64_t pinned_limit;
	struct reg reg;          /* registration: grace list, pinned table */
	struct client_stats retired; /* sums of freed clients */

	/* progress thread */
	pthread_t progress_tid;
	int doorbell_fd;         /* eventfd clients ring when we sleep */
	struct cmdq to_progress; /* its eventfd wakes the progress thread */
	struct cmdq to_control;  /* its eventfd is watched by libevent */
	struct loop loop;        /* the progress loop's epoll (loop.h) */
	struct client *active;   /* progress thread's clients */
	struct job *pjobs;       /* progress thread's jobs */
	struct net net;          /* cluster, peers, tcp transport */
	const struct transport_ops *xport; /* to other nodes (self: one node) */
	struct progress_stats pst;
	struct verbs_stats vst;  /* verbs transport (and the pinned budget, reg.c) */
	const struct transport_ops *local; /* the same-node path (transport "self") */
	void *xp_priv;           /* the running transport's own state (verbs), or NULL */
	struct xp_amo_table *amo; /* atomics sent to other nodes, awaiting
				   * their reply (transport/amo.c), or NULL */
	uint64_t heartbeat;      /* bumped by the progress thread (watchdog) */
	int cpu_unpublished;     /* a client joined d->active since the progress
				  * thread last published prog_cpu (progress.c) */
	int more_pending;        /* this pass left descriptors for the next
				  * one: open packs may wait to fill up */
};

/* progress.c: the progress loop */
int progress_start(struct daemon *d);
void progress_stop(struct daemon *d);


/* barrier.c (progress thread) */
/* A notify of n barriers (n > 1: a lazy notify of a one-node job's
 * node barriers, a run of one phase; else 1). runs: such a notify (the
 * engine does not hold it while the client is ahead, barrier.c). */
int barrier_notify(struct daemon *d, struct client *c, uint32_t n, int runs);
/* 1: c's notify is for the barrier after the one still being counted */
int barrier_notify_early(const struct client *c);
void barrier_recv(struct daemon *d, struct job *j, uint32_t epoch, uint32_t round);
void barrier_depart(struct daemon *d, struct job *j, struct client *c, int clean);
void job_fail(struct job *j, int err);
void job_pe_gone(struct daemon *d, struct job *j, int32_t pe, int clean, uint32_t epoch,
		 uint64_t nonce);
/* JOB_READY: apply the departures that arrived before it (progress). */
void job_gone_early_apply(struct daemon *d, struct job *j);
void job_gone_early_free(struct job *j);

/* The progress thread's job of that id, or NULL (jobs.c keeps the list;
 * inline so that looking a job up depends on no file). */
static inline struct job *progress_job_find(struct daemon *d, uint64_t id)
{
	for (struct job *j = d->pjobs; j; j = j->prog_next)
		if (j->id == id)
			return j;
	return NULL;
}

/* complete.c (progress thread) */
/* Wake the client if it sleeps on *word waiting for flag (after a store
 * to *word it must see). */
void client_wake(struct client *c, uint32_t *word, uint32_t flag);
/* The daemon changed c's symmetric heap (a same-node copy, a tcp put or
 * pack element, a collective's result, an atomic): wake c if it sleeps in
 * hoist_wait_until* (heap wake line, hoist_shm.h). Call after the data is
 * stored, from the progress thread; c may be NULL (no-op). Cheap when c
 * does not sleep: a fence and one load. */
void client_heap_touched(struct daemon *d, struct client *c);
/* The same for a write of [off, off + len) of c's heap (heap-file
 * offsets): c sleeping in hoist_wait_until* on other words is not woken
 * (hoist_heap_touched_range; counted in heap_wakes_skipped). */
void client_heap_touched_range(struct daemon *d, struct client *c, uint64_t off, uint64_t len);
/* An operation a transport started (XP_STARTED) finished with res (0 or
 * -errno): the transport hands back its request's cookie, once. The
 * engine counts it out of c->outstanding and completes it: CQE as the
 * descriptor asked, conflict retirement, a strided/vector element, or a
 * prefetch landing (ck->op). */
void progress_complete(struct daemon *d, const struct xp_cookie *ck, int32_t res);
/* Post one completion to a client (and publish it). */
void progress_cqe(struct client *c, uint64_t user_data, int32_t res, uint8_t opcode);
/* A collective's partial completion (the block of PE pe landed), only while
 * the CQ keeps room for every completion the client's op slots can await. */
void progress_cqe_partial(struct client *c, uint64_t user_data, int32_t pe);

/* The descriptor's local buffer: in the client's own heap or its staging
 * arena (validate_sqe checked the range). Not for inline payloads. */
static inline char *client_buf(const struct client *c, const struct hoist_sqe *sqe)
{
	if (sqe->flags & HOIST_SQE_F_LOCAL_HEAP)
		return (char *)c->heap.base + sqe->local_off;
	return (char *)c->staging.base + sqe->local_off;
}

/* attach.c (control thread) */
int attach_handle(struct daemon *d, struct conn *cn, const void *msg, size_t len);
void attach_conn_closed(struct daemon *d, struct conn *cn);
void attach_member(struct daemon *d, struct announce *a);
/* A PeersRequest on an attached client's connection (hoist_ptr). */
int peers_handle(struct daemon *d, struct conn *cn, const void *msg, size_t len);
void client_free(struct daemon *d, struct client *c);
void client_free_regions(struct client *c); /* and the client: no job, no registrations */
void jobs_free_all(struct daemon *d);

/* stats.c (control thread) */
/* The stats socket (stats.c). A request read from fd starts a reply
 * stream (0 or -errno); stats_pump sends what the socket takes: 0 when the
 * whole reply is sent, 1 when the socket is full (call again once it is
 * writable), or -errno. */
struct stats_stream;
int stats_request(struct daemon *d, int fd, const void *msg, size_t len, struct stats_stream **out);
int stats_pump(struct daemon *d, int fd, struct stats_stream *ss);
void stats_stream_free(struct stats_stream *ss);
void stats_sum_client(struct client_stats *acc, const struct client_stats *c);
/* Copy the counters the client keeps in its control page into c->st. */
void stats_client_pull(struct client *c);

/* clock.c: CLOCK_MONOTONIC in nanoseconds */
uint64_t now_ns(void);

#endif
