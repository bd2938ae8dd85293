/*
 * Stage 1 of the progress engine: is this descriptor well formed?
 * Pure function of the SQE copy and the client's geometry, so it is unit
 * tested without a daemon. Checks that need the target's state (is the
 * PE alive?) happen at routing time.
 */
#ifndef HOISTD_VALIDATE_H
#define HOISTD_VALIDATE_H

#include <stdint.h>

#include "hoist_shm.h"

struct validate_geom {
	int32_t job_size;       /* PEs in the job */
	uint64_t heap_bytes;    /* every PE's symmetric heap (same in a job) */
	uint64_t staging_bytes; /* the submitting client's staging arena */
};

/* 0, or -EINVAL (opcode, flags, reserved fields, PE, segment, inline
 * length), -EFAULT (remote or local range outside its segment). */
int validate_sqe(const struct hoist_sqe *sqe, const struct validate_geom *g);
/* A collective descriptor (validate_sqe accepts every HOIST_OP_COLL so
 * that an invalid one still takes its place in the job's sequence): 0,
 * -EINVAL (flags, reserved fields, kind, type/op, root, len not a multiple
 * of the element) or -EFAULT (dst or src range outside the heap). */
int validate_coll(const struct hoist_sqe *sqe, const struct validate_geom *g);

#endif
