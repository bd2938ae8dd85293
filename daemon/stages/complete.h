/* Completion posting (complete.c): a descriptor's result reaches the
 * client's completion queue. The public entry points for transports and
 * the other stages (progress_cqe, progress_cqe_partial, progress_complete,
 * client_wake) are declared in daemon.h; these two are the engine's. */
#ifndef HOISTD_COMPLETE_H
#define HOISTD_COMPLETE_H

#include <stdint.h>

struct client;

/* One completion into the CQ; the drain reserved its slot. Not yet
 * visible to the client: cq_flush publishes (and wakes). */
void cq_post(struct client *c, uint64_t user_data, int32_t res, uint8_t opcode);
/* The successful completion of a GET with HOIST_SQE_F_INLINE: its len
 * (<= HOIST_CQE_DATA_MAX) bytes of result in the CQE's data[]. */
void cq_post_data(struct client *c, uint64_t user_data, uint8_t opcode, const void *data, uint64_t len);
/* Publish the completions posted since the last flush. */
void cq_flush(struct client *c);

#endif
