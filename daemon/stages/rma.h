/* The put/get stage (rma.c): a validated put or get descriptor to the
 * self transport (same node) or, past the conflict stage, to the node's
 * transport; what the engine and the strided/vector engine share. Next:
 * the transport, then completion posting (complete.c). */
#ifndef HOISTD_RMA_H
#define HOISTD_RMA_H

#include <stdint.h>

#include "transport.h"

struct daemon;
struct client;
struct hoist_sqe;

/* DONE: *res is the result. STALL: retry on a later pass (waits for
 * something). ASYNC: completes later. YIELD: made progress but stops for
 * the other clients' sake; the next pass resumes it at once. */
enum exec_result { EXEC_DONE, EXEC_STALL, EXEC_ASYNC, EXEC_YIELD };

/* The transport kind of a validated put/get descriptor or of the elements
 * of a strided/vector one. 0, or -EINVAL for any other opcode (counted). */
int op_kind(struct daemon *d, uint8_t opcode, enum xp_kind *kind);
/* The outstanding-put cap was reached: release held packs, then STALL. */
enum exec_result cap_stall(struct daemon *d, struct client *c);
/* A put or get descriptor (validated). */
enum exec_result rma(struct daemon *d, struct client *c, const struct hoist_sqe *sqe, int *res);

#endif
