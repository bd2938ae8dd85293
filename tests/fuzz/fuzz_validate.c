/*
 * fuzz_validate: descriptor validation as the daemon runs it on what a
 * client wrote into its submission ring (daemon/stages/validate.c).
 *
 * Input: a struct hoist_sqe (64 bytes), then optionally the geometry
 * (job size byte, heap and staging size shifts). Every accepted
 * descriptor is checked against the property the progress engine relies
 * on: every byte it names (remote elements, local buffer, vector list) is
 * inside its segment, also when it moves nothing (issue 14 defect 4).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "hoist_amo.h"
#include "hoist_shm.h"
#include "validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hoist_sqe s;
	if (size < sizeof(s))
		return 0;
	memcpy(&s, data, sizeof(s));
	struct validate_geom g = {.job_size = 4, .heap_bytes = 1ull << 20, .staging_bytes = 1ull << 16};
	if (size >= sizeof(s) + 3) {
		g.job_size = 1 + data[64] % 8; /* 1..8 (attach refuses size 0) */
		g.heap_bytes = (1ull << (data[65] % 48)) + (data[65] >> 6);
		g.staging_bytes = (1ull << (data[66] % 48)) + (data[66] >> 6);
	}
	int rc = validate_sqe(&s, &g);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -EFAULT);
	uint64_t lim = (s.flags & HOIST_SQE_F_LOCAL_HEAP) ? g.heap_bytes : g.staging_bytes;
	if (rc == 0 && s.opcode == HOIST_OP_COLL) {
		rc = validate_coll(&s, &g);
		FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -EFAULT);
		if (rc == 0) {
			FUZZ_CHECK(hoist_range_ok(s.remote_off, s.len, g.heap_bytes));
			FUZZ_CHECK(hoist_range_ok(s.local_off, s.len, g.heap_bytes));
		}
		return 0;
	}
	if (rc)
		return 0;
	if (s.opcode == HOIST_OP_AMO) { /* reserved0 holds the op and type */
		FUZZ_CHECK(!(s.flags & ~(HOIST_SQE_F_CQE | HOIST_SQE_F_LOCAL_HEAP | HOIST_SQE_F_SIGNAL |
					 HOIST_SQE_F_AGG)) &&
			   s.reserved1 == 0);
		if (s.flags & HOIST_SQE_F_AGG) /* aggregated: non-fetching, no signal */
			FUZZ_CHECK(!(s.flags & HOIST_SQE_F_SIGNAL) && !hoist_amo_fetching(s.amo_op));
		if (s.flags & HOIST_SQE_F_SIGNAL) /* put-with-signal: SET or ADD on a uint64 */
			FUZZ_CHECK((s.amo_op == HOIST_AMO_OP_SET || s.amo_op == HOIST_AMO_OP_ADD) &&
				   s.amo_type == HOIST_AMO_T_UINT64);
		FUZZ_CHECK(hoist_amo_valid(s.amo_op, s.amo_type) == 0 &&
			   s.len == hoist_amo_size(s.amo_type));
		FUZZ_CHECK(s.pe >= 0 && s.pe < g.job_size && s.seg == HOIST_SEG_HEAP);
		FUZZ_CHECK(hoist_range_ok(s.remote_off, s.len, g.heap_bytes) && s.remote_off % s.len == 0);
		if (hoist_amo_fetching(s.amo_op))
			FUZZ_CHECK(hoist_range_ok(s.local_off, s.len, lim));
		return 0;
	}
	FUZZ_CHECK((s.flags & ~HOIST_SQE_F__ALL) == 0 && s.reserved0 == 0 && s.reserved1 == 0);
	switch (s.opcode) {
	case HOIST_OP_PUT:
	case HOIST_OP_GET:
		FUZZ_CHECK(s.pe >= 0 && s.pe < g.job_size && s.seg == HOIST_SEG_HEAP);
		FUZZ_CHECK(hoist_range_ok(s.remote_off, s.len, g.heap_bytes));
		if (s.flags & HOIST_SQE_F_INLINE && s.opcode == HOIST_OP_PUT)
			FUZZ_CHECK(s.len <= HOIST_INLINE_MAX);
		else if (s.flags & HOIST_SQE_F_INLINE) /* a get's result in its CQE */
			FUZZ_CHECK(s.len >= 1 && s.len <= HOIST_CQE_DATA_MAX && (s.flags & HOIST_SQE_F_CQE) &&
				   !(s.flags & (HOIST_SQE_F_LOCAL_HEAP | HOIST_SQE_F_AGG)) && !s.local_off);
		else
			FUZZ_CHECK(hoist_range_ok(s.local_off, s.len, lim));
		break;
	case HOIST_OP_PUT_STRIDED:
	case HOIST_OP_GET_STRIDED: {
		int64_t stride;
		uint64_t count;
		memcpy(&stride, s.inline_data, 8);
		memcpy(&count, s.inline_data + 8, 8);
		FUZZ_CHECK(s.pe >= 0 && s.pe < g.job_size);
		unsigned __int128 total = (unsigned __int128)count * s.len;
		FUZZ_CHECK(s.local_off <= lim && total <= lim - s.local_off);
		FUZZ_CHECK(hoist_range_ok(s.remote_off, s.len, g.heap_bytes));
		if (count) {
			__int128 last = (__int128)s.remote_off + (__int128)stride * (__int128)(count - 1);
			FUZZ_CHECK(last >= 0 && last <= (__int128)g.heap_bytes &&
				   (uint64_t)last + s.len <= g.heap_bytes);
		}
		break;
	}
	case HOIST_OP_PUT_VEC:
	case HOIST_OP_GET_VEC: {
		uint64_t nvec, list;
		memcpy(&nvec, s.inline_data, 8);
		memcpy(&list, s.inline_data + 8, 8);
		FUZZ_CHECK(s.pe >= 0 && s.pe < g.job_size && nvec <= HOIST_VEC_MAX);
		FUZZ_CHECK(hoist_range_ok(list, nvec * sizeof(struct hoist_vec_elem), g.staging_bytes));
		FUZZ_CHECK(hoist_range_ok(s.local_off, s.len, lim));
		FUZZ_CHECK(s.remote_off <= g.heap_bytes);
		FUZZ_CHECK(nvec || !s.len);
		break;
	}
	case HOIST_OP_FENCE:
	case HOIST_OP_QUIET:
	case HOIST_OP_BARRIER_NOTIFY:
	case HOIST_OP_PHASE:
	case HOIST_OP_NOP:
		FUZZ_CHECK(!(s.flags & (HOIST_SQE_F_INLINE | HOIST_SQE_F_LOCAL_HEAP | HOIST_SQE_F_AGG)));
		break;
	default:
		FUZZ_CHECK(!"an unknown opcode was accepted");
	}
	return 0;
}
