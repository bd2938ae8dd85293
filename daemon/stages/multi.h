/* The strided/vector engine (multi.c): a strided or vector descriptor
 * issued element by element, to the self copy or the node's transport;
 * its last element's completion (complete.c) posts its CQE. */
#ifndef HOISTD_MULTI_H
#define HOISTD_MULTI_H

#include <stdint.h>
#include <stdlib.h>

#include "hoist_shm.h"
#include "rma.h"

struct daemon;
struct client;

/* A strided or vector descriptor in progress: issued element by element
 * through the transport (which packs them), completed by its last
 * element. It outlives its client if that leaves with elements in flight. */
struct xp_multi {
	uint64_t user_data;
	uint8_t opcode;
	uint8_t want_cqe;
	int issuing;        /* elements still to issue: the descriptor is at sq_head */
	int32_t pe;
	int32_t res;        /* the first element error */
	uint64_t seq;       /* overlap: the bounding box's put sequence, 0 none */
	uint64_t gseq;      /* overlap: the bounding box's get sequence, 0 none */
	uint64_t pending;   /* elements issued, not complete */
	uint64_t next;      /* next element to issue */
	uint64_t count;
	uint64_t local_pos; /* local offset of element next */
	int local;          /* the target is a PE of this node: copies, no transport */
	enum xp_kind kind;  /* of every element */
	struct hoist_vec_elem *vec; /* private copy of a VEC list */
	struct hoist_sqe sqe;       /* the descriptor as validated and started */
};

/* Free a descriptor's state (its VEC copy too). */
static inline void multi_free(struct xp_multi *m)
{
	free(m->vec);
	free(m);
}
/* A strided or vector descriptor (validated), new or resumed (c->multi). */
enum exec_result multi_exec(struct daemon *d, struct client *c, const struct hoist_sqe *sqe,
			    int *res);

#endif
