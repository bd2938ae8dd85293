/*
 * Collectives, progress-thread side (coll.c). Every local PE posts one
 * HOIST_OP_COLL descriptor per collective; the daemon gathers the local
 * contributions from the PEs' heaps, runs one algorithm among the job's
 * daemons over active messages (W_COLL chunks), and writes the results
 * into each local PE's dst before its completion.
 */
#ifndef HOISTD_COLL_H
#define HOISTD_COLL_H

#include <stdint.h>

#include "wire.h"

struct daemon;
struct job;
struct client;
struct hoist_sqe;

/* Client c's collective descriptor (validated here, not by validate_sqe):
 * 0 (its CQE follows, maybe already posted) or -errno to complete it now. */
int coll_post(struct daemon *d, struct client *c, const struct hoist_sqe *sqe);
/* A chunk from node `from` (am_payload_ok checked the sizes). */
void coll_recv(struct daemon *d, struct job *j, int32_t from, const struct wire_coll *h,
	       const void *data, uint64_t plen);
/* Node `from` failed collective seq with err. */
void coll_abort_recv(struct daemon *d, struct job *j, uint32_t seq, int32_t err);
/* The job failed: every collective in flight fails with err (job_fail). */
void coll_job_fail(struct job *j, int err);
/* Local PE pe finalized: collectives it never joined fail everywhere. */
void coll_pe_depart(struct daemon *d, struct job *j, int32_t pe);
/* The job leaves the progress thread: free its collective state. */
void coll_job_free(struct job *j);

/* Element-wise dst = dst op src over bytes (a multiple of the element
 * size); type and op were validated. Unaligned buffers are fine. */
void coll_combine(uint8_t type, uint8_t op, void *dst, const void *src, uint64_t bytes);

#endif
