/*
 * hoistd's core objects and who owns what.
 *
 * Two threads. The control thread (control.c, libevent) creates and frees
 * clients and jobs, and does all socket I/O. The progress thread
 * (progress.c) executes descriptors. They talk only through two command
 * queues (cmdq.c); an object changes hands with the command that carries it:
 *
 *   control -> progress  CMD_JOB_START    every client of the job
 *   control -> progress  CMD_CLIENT_GONE  a started client hung up
 *   progress -> control  CMD_CLIENT_FREE  progress thread forgot it: free it
 *
 * Fields are grouped by the thread that writes them. Counters are written
 * by one thread and read by the other with relaxed atomics (stats.h).
 */
#ifndef HOISTD_DAEMON_H
#define HOISTD_DAEMON_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "cmdq.h"
#include "hoist_shm.h"
#include "region.h"
#include "settings.h"
#include "stats.h"

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
	struct hoist_ctrl *ctrl;
	struct hoist_sqe *sq;
	struct hoist_cqe *cq;
	uint32_t sq_mask, cq_mask, sq_entries, cq_entries;

	/* control thread */
	struct conn *conn;
	struct client *ctl_next; /* daemon's list of all clients */
	int handed_over;         /* progress thread knows it */
	int clean_detach;

	/* progress thread */
	struct client *prog_next; /* progress thread's active list */
	uint32_t sq_head;         /* local copy of what we consumed */
	uint32_t cq_tail;         /* local copy of what we posted */
	uint32_t cq_published;
	uint64_t outstanding;     /* operations issued, not yet complete */
	uint32_t barrier_epoch_notified; /* epoch this client last notified for */
	int gone;                 /* hung up; drop at the next safe point */
	int broken;               /* broke the ring protocol: stop serving it */

	struct client_stats st;   /* written by the progress thread */
};

struct job {
	/* immutable once created */
	uint64_t id;
	char key[256];
	uid_t uid;
	int32_t size;
	uint64_t heap_bytes;
	struct daemon *d;

	/* control thread */
	struct job *ctl_next;
	int32_t attached;   /* ranks attached so far */
	int32_t live;       /* clients not yet freed */
	int started;        /* JOB_START sent: pe[] belongs to the progress thread */
	struct event *timer;

	/* pe[] is filled by the control thread before JOB_START and owned by
	 * the progress thread afterwards (NULL once a PE is gone). */
	struct client **pe;

	/* progress thread */
	int32_t arrived;          /* notifies for the current barrier */
	uint32_t barrier_epoch;   /* barriers completed */
	int32_t departed;         /* PEs gone since start */
	int32_t error;            /* sticky job error */
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
	struct conn *conns;
	uint64_t next_id;
	int nclients;
	struct control_stats cst;
	struct client_stats retired; /* sums of freed clients */

	/* progress thread */
	pthread_t progress_tid;
	int doorbell_fd;         /* eventfd clients ring when we sleep */
	struct cmdq to_progress; /* its eventfd wakes the progress thread */
	struct cmdq to_control;  /* its eventfd is watched by libevent */
	struct client *active;   /* progress thread's clients */
	struct progress_stats pst;
	uint64_t heartbeat;      /* bumped by the progress thread (watchdog) */
};

/* progress.c */
int progress_start(struct daemon *d);
void progress_stop(struct daemon *d);

/* local.c: the same-node transport (memcpy between mapped segments) */
int local_put(struct client *src, const struct hoist_sqe *sqe, struct client *dst);
int local_get(struct client *src, const struct hoist_sqe *sqe, struct client *dst);

/* barrier.c (progress thread) */
int barrier_notify(struct daemon *d, struct client *c);
void barrier_depart(struct daemon *d, struct job *j, struct client *c, int clean);
void client_wake(struct client *c, uint32_t *word, uint32_t flag);

/* attach.c (control thread) */
int attach_handle(struct daemon *d, struct conn *cn, const void *msg, size_t len);
void attach_conn_closed(struct daemon *d, struct conn *cn);
void client_free(struct daemon *d, struct client *c);

/* stats.c (control thread) */
void stats_serve(struct daemon *d, int fd);
void stats_sum_client(struct client_stats *acc, const struct client_stats *c);

uint64_t now_ns(void);

#endif
