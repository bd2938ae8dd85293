/* daemon/stages/validate.c: descriptor validation (stage 1 of the progress engine). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hoist_amo.h"
#include "hoist_shm.h"
#include "unit_util.h"
#include "validate.h"

#define HEAP (1ull << 20)
#define STAGE (1ull << 16)

static const struct validate_geom geom = {.job_size = 4, .heap_bytes = HEAP, .staging_bytes = STAGE};

static struct hoist_sqe put(void)
{
	struct hoist_sqe e;
	memset(&e, 0, sizeof(e));
	e.opcode = HOIST_OP_PUT;
	e.pe = 1;
	e.user_data = 0xdeadbeef;
	e.seg = HOIST_SEG_HEAP;
	e.remote_off = 4096;
	e.len = 256;
	e.local_off = 128;
	return e;
}

static struct hoist_sqe get(void)
{
	struct hoist_sqe e = put();
	e.opcode = HOIST_OP_GET;
	return e;
}

static struct hoist_sqe inline_put(void)
{
	struct hoist_sqe e = put();
	e.flags = HOIST_SQE_F_INLINE;
	e.len = 8;
	e.local_off = 0xFFFFFFFFFFFFFFFFull; /* ignored for inline */
	memcpy(e.inline_data, "12345678", 8);
	return e;
}

static struct hoist_sqe simple(uint8_t op)
{
	struct hoist_sqe e;
	memset(&e, 0, sizeof(e));
	e.opcode = op;
	return e;
}

#define V(e) validate_sqe(&(e), &geom)

START_TEST(test_valid)
{
	struct hoist_sqe e = put();
	ck_assert_int_eq(V(e), 0);
	e.flags = HOIST_SQE_F_CQE;
	ck_assert_int_eq(V(e), 0);
	e = get();
	ck_assert_int_eq(V(e), 0);
	e = inline_put();
	ck_assert_int_eq(V(e), 0);
	e.len = HOIST_INLINE_MAX;
	ck_assert_int_eq(V(e), 0);
	e.flags |= HOIST_SQE_F_CQE;
	ck_assert_int_eq(V(e), 0);
	e = put();
	e.flags = HOIST_SQE_F_LOCAL_HEAP;
	e.local_off = HEAP - 256; /* heap is larger than staging */
	ck_assert_int_eq(V(e), 0);
	e = get();
	e.flags = HOIST_SQE_F_LOCAL_HEAP | HOIST_SQE_F_CQE;
	e.local_off = 65536 * 2;
	ck_assert_int_eq(V(e), 0);
	/* edges: first/last PE, ranges ending exactly at the end, length 0 */
	e = put();
	e.pe = 0;
	ck_assert_int_eq(V(e), 0);
	e.pe = 3;
	e.remote_off = HEAP - e.len;
	e.local_off = STAGE - e.len;
	ck_assert_int_eq(V(e), 0);
	e.len = 0;
	e.remote_off = HEAP;
	e.local_off = STAGE;
	ck_assert_int_eq(V(e), 0);
	e = put();
	e.len = HEAP;
	e.remote_off = 0;
	e.flags = HOIST_SQE_F_LOCAL_HEAP;
	e.local_off = 0;
	ck_assert_int_eq(V(e), 0);
	/* operand-less ops, with and without CQE flag; operands are ignored */
	uint8_t ops[] = {HOIST_OP_QUIET, HOIST_OP_FENCE, HOIST_OP_BARRIER_NOTIFY, HOIST_OP_NOP};
	for (size_t i = 0; i < sizeof(ops); i++) {
		e = simple(ops[i]);
		ck_assert_int_eq(V(e), 0);
		e.flags = HOIST_SQE_F_CQE;
		ck_assert_int_eq(V(e), 0);
	}
}
END_TEST

START_TEST(test_opcode)
{
	struct hoist_sqe e = put();
	e.opcode = HOIST_OP_INVALID;
	ck_assert_int_eq(V(e), -EINVAL);
	e.opcode = HOIST_OP__COUNT;
	ck_assert_int_eq(V(e), -EINVAL);
	e.opcode = 0xFF;
	ck_assert_int_eq(V(e), -EINVAL);
	struct hoist_sqe zero;
	memset(&zero, 0, sizeof(zero));
	ck_assert_int_eq(V(zero), -EINVAL); /* zeroed slot is never valid */
	for (unsigned op = HOIST_OP__COUNT; op < 256; op++) {
		e = simple((uint8_t)op);
		CHK_EQ(V(e), -EINVAL);
	}
}
END_TEST

START_TEST(test_flags)
{
	struct hoist_sqe e = put();
	for (unsigned bit = 0; bit < 8; bit++) {
		uint8_t f = (uint8_t)(1u << bit);
		if (f & HOIST_SQE_F__ALL)
			continue;
		e = put();
		e.flags = f;
		ck_assert_msg(V(e) == -EINVAL, "flag 0x%x accepted on PUT", f);
		e = simple(HOIST_OP_NOP);
		e.flags = f;
		ck_assert_msg(V(e) == -EINVAL, "flag 0x%x accepted on NOP", f);
	}
	e = put();
	e.flags = 0xFF;
	ck_assert_int_eq(V(e), -EINVAL);
	/* LAZY: barrier notifies only (a one-node job's node barrier) */
	e = simple(HOIST_OP_BARRIER_NOTIFY);
	e.flags = HOIST_SQE_F_LAZY;
	ck_assert_int_eq(V(e), 0);
	uint8_t others[] = {HOIST_OP_QUIET, HOIST_OP_FENCE, HOIST_OP_NOP, HOIST_OP_PHASE};
	for (size_t i = 0; i < sizeof(others); i++) {
		e = simple(others[i]);
		e.flags = HOIST_SQE_F_LAZY;
		ck_assert_msg(V(e) == -EINVAL, "LAZY accepted on op %u", others[i]);
	}
	e = put();
	e.flags = HOIST_SQE_F_LAZY;
	ck_assert_int_eq(V(e), -EINVAL);
	/* a lazy notify's len: the run of node barriers it stands for */
	e = simple(HOIST_OP_BARRIER_NOTIFY);
	e.flags = HOIST_SQE_F_LAZY;
	e.len = HOIST_NOTIFY_MAX;
	ck_assert_int_eq(V(e), 0);
	e.len = HOIST_NOTIFY_MAX + 1ull;
	ck_assert_int_eq(V(e), -EINVAL);
	e.len = 2;
	e.flags = 0; /* a run only lazy */
	ck_assert_int_eq(V(e), -EINVAL);
}
END_TEST

START_TEST(test_reserved)
{
	struct hoist_sqe e = put();
	e.reserved0 = 1;
	ck_assert_int_eq(V(e), -EINVAL);
	e = put();
	e.reserved0 = 0x8000;
	ck_assert_int_eq(V(e), -EINVAL);
	e = put();
	e.reserved1 = 0x80000000u;
	ck_assert_int_eq(V(e), -EINVAL);
	e = simple(HOIST_OP_QUIET);
	e.reserved1 = 1;
	ck_assert_int_eq(V(e), -EINVAL);
	e = simple(HOIST_OP_BARRIER_NOTIFY);
	e.reserved0 = 2;
	ck_assert_int_eq(V(e), -EINVAL);
}
END_TEST

START_TEST(test_pe)
{
	struct hoist_sqe e = put();
	e.pe = -1;
	ck_assert_int_eq(V(e), -EINVAL);
	e.pe = INT32_MIN;
	ck_assert_int_eq(V(e), -EINVAL);
	e.pe = 4; /* == job_size */
	ck_assert_int_eq(V(e), -EINVAL);
	e.pe = INT32_MAX;
	ck_assert_int_eq(V(e), -EINVAL);
	e = get();
	e.pe = 4;
	ck_assert_int_eq(V(e), -EINVAL);
	e = inline_put();
	e.pe = -2;
	ck_assert_int_eq(V(e), -EINVAL);
}
END_TEST

START_TEST(test_seg)
{
	struct hoist_sqe e = put();
	e.seg = 1;
	ck_assert_int_eq(V(e), -EINVAL);
	e.seg = UINT32_MAX;
	ck_assert_int_eq(V(e), -EINVAL);
	e = get();
	e.seg = 2;
	ck_assert_int_eq(V(e), -EINVAL);
}
END_TEST

START_TEST(test_remote_range)
{
	struct hoist_sqe e = put();
	e.remote_off = HEAP - e.len + 1;
	ck_assert_int_eq(V(e), -EFAULT);
	e.remote_off = HEAP + 1;
	e.len = 0;
	ck_assert_int_eq(V(e), -EFAULT);
	e = put();
	e.remote_off = 0;
	e.len = HEAP + 1;
	e.flags = HOIST_SQE_F_LOCAL_HEAP;
	e.local_off = 0;
	ck_assert_int_eq(V(e), -EFAULT);
	/* overflow: off + len wraps to a small number */
	e = put();
	e.remote_off = UINT64_MAX - 100;
	e.len = 256;
	ck_assert_int_eq(V(e), -EFAULT);
	e = put();
	e.remote_off = 64;
	e.len = UINT64_MAX - 32;
	ck_assert_int_eq(V(e), -EFAULT);
	e = get();
	e.remote_off = UINT64_MAX;
	e.len = 1;
	ck_assert_int_eq(V(e), -EFAULT);
	e = inline_put();
	e.remote_off = HEAP - 4;
	ck_assert_int_eq(V(e), -EFAULT);
}
END_TEST

START_TEST(test_inline)
{
	struct hoist_sqe e = inline_put();
	e.len = HOIST_INLINE_MAX + 1;
	ck_assert_int_eq(V(e), -EINVAL);
	e.len = UINT64_MAX;
	e.remote_off = 0;
	ck_assert_int_ne(V(e), 0);
	e = inline_put();
	e.len = 1000;
	ck_assert_int_eq(V(e), -EINVAL);
	/* a get with its result in the CQE: 1..HOIST_CQE_DATA_MAX bytes, a
	 * completion asked, no local place (local_off 0, not the own heap),
	 * not held in an aggregation pack */
	e = get();
	e.flags = HOIST_SQE_F_INLINE | HOIST_SQE_F_CQE;
	e.local_off = 0;
	for (e.len = 1; e.len <= HOIST_CQE_DATA_MAX; e.len++)
		ck_assert_int_eq(V(e), 0);
	e.len = HOIST_CQE_DATA_MAX + 1;
	ck_assert_int_eq(V(e), -EINVAL);
	e.len = 0;
	ck_assert_int_eq(V(e), -EINVAL);
	e.len = 8;
	e.flags = HOIST_SQE_F_INLINE; /* nowhere for the result to go */
	ck_assert_int_eq(V(e), -EINVAL);
	e.flags = HOIST_SQE_F_INLINE | HOIST_SQE_F_CQE | HOIST_SQE_F_AGG;
	ck_assert_int_eq(V(e), -EINVAL);
	e.flags = HOIST_SQE_F_INLINE | HOIST_SQE_F_CQE | HOIST_SQE_F_LOCAL_HEAP;
	ck_assert_int_eq(V(e), -EINVAL);
	e.flags = HOIST_SQE_F_INLINE | HOIST_SQE_F_CQE;
	e.local_off = 64;
	ck_assert_int_eq(V(e), -EINVAL);
	e = inline_put();
	e.flags |= HOIST_SQE_F_LOCAL_HEAP;
	ck_assert_int_eq(V(e), -EINVAL);
}
END_TEST

START_TEST(test_local_range)
{
	/* staging */
	struct hoist_sqe e = put();
	e.local_off = STAGE - e.len + 1;
	ck_assert_int_eq(V(e), -EFAULT);
	e.local_off = STAGE + 64;
	ck_assert_int_eq(V(e), -EFAULT);
	e.local_off = HEAP - 256; /* fine in the heap, not in staging */
	ck_assert_int_eq(V(e), -EFAULT);
	e.local_off = UINT64_MAX - 100;
	ck_assert_int_eq(V(e), -EFAULT);
	e = get();
	e.len = STAGE + 64; /* fits the remote heap, not the staging arena */
	e.local_off = 0;
	ck_assert_int_eq(V(e), -EFAULT);
	/* own heap */
	e = get();
	e.flags = HOIST_SQE_F_LOCAL_HEAP;
	e.local_off = HEAP - e.len + 64;
	ck_assert_int_eq(V(e), -EFAULT);
	e.local_off = UINT64_MAX - 100;
	ck_assert_int_eq(V(e), -EFAULT);
	e = put();
	e.flags = HOIST_SQE_F_LOCAL_HEAP;
	e.local_off = 64;
	e.len = UINT64_MAX - 32;
	e.remote_off = 0;
	ck_assert_int_eq(V(e), -EFAULT);
}
END_TEST

START_TEST(test_data_flags_on_sync_ops)
{
	uint8_t ops[] = {HOIST_OP_QUIET, HOIST_OP_FENCE, HOIST_OP_BARRIER_NOTIFY, HOIST_OP_NOP};
	uint8_t flags[] = {HOIST_SQE_F_INLINE, HOIST_SQE_F_LOCAL_HEAP,
			   HOIST_SQE_F_INLINE | HOIST_SQE_F_LOCAL_HEAP,
			   HOIST_SQE_F_INLINE | HOIST_SQE_F_CQE, HOIST_SQE_F_LOCAL_HEAP | HOIST_SQE_F_CQE};
	for (size_t i = 0; i < sizeof(ops); i++)
		for (size_t j = 0; j < sizeof(flags); j++) {
			struct hoist_sqe e = simple(ops[i]);
			e.flags = flags[j];
			ck_assert_msg(V(e) == -EINVAL, "op %u flags 0x%x accepted", ops[i], flags[j]);
		}
}
END_TEST

START_TEST(test_random_never_out_of_bounds)
{
	/* Whatever the bytes, an accepted PUT/GET addresses only memory inside
	 * the segments: the property the daemon's memcpy relies on. */
	uint64_t seed = 99;
	uint64_t accepted = 0;
	const struct validate_geom small = {.job_size = 3, .heap_bytes = 4096, .staging_bytes = 1024};
	for (int i = 0; i < 200000; i++) {
		struct hoist_sqe e;
		uint64_t w[8];
		for (int k = 0; k < 8; k++)
			w[k] = rng_next(&seed);
		memcpy(&e, w, sizeof(e));
		/* bias towards plausible descriptors so some are accepted */
		uint64_t r = rng_next(&seed);
		if (r & 1) {
			e.opcode = (uint8_t)(1 + (r >> 1) % (HOIST_OP__COUNT - 1));
			e.reserved0 = 0;
			e.reserved1 = 0;
			e.seg = (r >> 8) & 1 ? 0 : e.seg;
			e.flags &= (r >> 9) & 1 ? HOIST_SQE_F__ALL : 0xFF;
			e.pe = (int32_t)((r >> 10) % 5) - 1;
			if ((r >> 13) & 1) {
				e.remote_off = (r >> 14) % 5000;
				e.len = (r >> 27) % 5000;
				e.local_off = (r >> 40) % 5000;
			}
		}
		int rc = validate_sqe(&e, &small);
		CHK(rc == 0 || rc == -EINVAL || rc == -EFAULT);
		if (rc != 0)
			continue;
		accepted++;
		CHK(e.opcode > HOIST_OP_INVALID && e.opcode < HOIST_OP__COUNT);
		if (e.opcode == HOIST_OP_COLL)
			continue; /* validate_coll's job (test_coll) */
		CHK((e.flags & ~HOIST_SQE_F__ALL) == 0);
		if (e.opcode == HOIST_OP_AMO) { /* reserved0 holds op and type */
			CHK(hoist_amo_valid(e.amo_op, e.amo_type) == 0 && e.reserved1 == 0);
			CHK(e.len == hoist_amo_size(e.amo_type) && e.remote_off % e.len == 0);
			CHK(e.remote_off <= small.heap_bytes - e.len && e.pe >= 0 && e.pe < small.job_size);
			continue;
		}
		CHK(e.reserved0 == 0 && e.reserved1 == 0);
		if (e.opcode != HOIST_OP_PUT && e.opcode != HOIST_OP_GET)
			continue;
		CHK(e.pe >= 0 && e.pe < small.job_size);
		CHK(e.seg == HOIST_SEG_HEAP);
		CHK(e.remote_off <= small.heap_bytes && e.len <= small.heap_bytes - e.remote_off);
		if ((e.flags & HOIST_SQE_F_INLINE) && e.opcode == HOIST_OP_PUT) {
			CHK(e.len <= HOIST_INLINE_MAX);
		} else if (e.flags & HOIST_SQE_F_INLINE) { /* a get's result in its CQE */
			CHK(e.len >= 1 && e.len <= HOIST_CQE_DATA_MAX && (e.flags & HOIST_SQE_F_CQE));
			CHK(!(e.flags & (HOIST_SQE_F_LOCAL_HEAP | HOIST_SQE_F_AGG)) && e.local_off == 0);
		} else {
			uint64_t lim = (e.flags & HOIST_SQE_F_LOCAL_HEAP) ? small.heap_bytes : small.staging_bytes;
			CHK(e.local_off <= lim && e.len <= lim - e.local_off);
		}
	}
	ck_assert_uint_gt(accepted, 1000);
}
END_TEST

static struct hoist_sqe amo(uint8_t op, uint8_t type)
{
	struct hoist_sqe e = put();
	e.opcode = HOIST_OP_AMO;
	e.flags = HOIST_SQE_F_CQE;
	e.amo_op = op;
	e.amo_type = type;
	e.len = hoist_amo_size(type);
	e.local_off = 64;
	return e;
}

/* Atomics: every known (op, type) pair with its operand size; floats only
 * fetch/set/swap; the word aligned and inside the heap; a fetching op's
 * result place inside its segment (a non-fetching one's is ignored); only
 * the CQE and LOCAL_HEAP flags. */
START_TEST(test_amo)
{
	for (unsigned op = 0; op < 20; op++)
		for (unsigned t = 0; t < 8; t++) {
			struct hoist_sqe e = amo((uint8_t)op, (uint8_t)t);
			int known = op < HOIST_AMO_OP__COUNT && t < HOIST_AMO_T__COUNT;
			int flt = t == HOIST_AMO_T_FLOAT || t == HOIST_AMO_T_DOUBLE;
			int ok = known && (!flt || op == HOIST_AMO_OP_FETCH || op == HOIST_AMO_OP_SET ||
					   op == HOIST_AMO_OP_SWAP);
			if (!known)
				e.len = 8;
			CHK_EQ(V(e), ok ? 0 : -EINVAL);
		}
	struct hoist_sqe e = amo(HOIST_AMO_OP_FETCH_ADD, HOIST_AMO_T_INT64);
	ck_assert_int_eq(V(e), 0);
	e.len = 4; /* not the type's size */
	ck_assert_int_eq(V(e), -EINVAL);
	e = amo(HOIST_AMO_OP_FETCH_ADD, HOIST_AMO_T_INT64);
	e.remote_off += 4; /* misaligned */
	ck_assert_int_eq(V(e), -EINVAL);
	e = amo(HOIST_AMO_OP_FETCH_ADD, HOIST_AMO_T_UINT32);
	e.remote_off += 4; /* aligned for 4 bytes */
	ck_assert_int_eq(V(e), 0);
	e.remote_off = HEAP - 4;
	ck_assert_int_eq(V(e), 0);
	e.remote_off = HEAP;
	ck_assert_int_eq(V(e), -EFAULT);
	e = amo(HOIST_AMO_OP_FETCH_ADD, HOIST_AMO_T_INT64);
	e.remote_off = UINT64_MAX - 7; /* aligned, wraps */
	ck_assert_int_eq(V(e), -EFAULT);
	e = amo(HOIST_AMO_OP_FETCH_ADD, HOIST_AMO_T_INT64);
	e.local_off = STAGE - 4;
	ck_assert_int_eq(V(e), -EFAULT);
	e.flags |= HOIST_SQE_F_LOCAL_HEAP; /* the result into the own heap */
	ck_assert_int_eq(V(e), 0);
	e = amo(HOIST_AMO_OP_ADD, HOIST_AMO_T_INT64);
	e.local_off = UINT64_MAX; /* no result: ignored */
	ck_assert_int_eq(V(e), 0);
	e = amo(HOIST_AMO_OP_ADD, HOIST_AMO_T_INT64);
	e.flags = HOIST_SQE_F_INLINE;
	ck_assert_int_eq(V(e), -EINVAL);
	e.flags = HOIST_SQE_F_AGG; /* a non-fetching one joins aggregation regions */
	ck_assert_int_eq(V(e), 0);
	e.flags = HOIST_SQE_F_AGG | HOIST_SQE_F_SIGNAL; /* a signal does not */
	e.amo_type = HOIST_AMO_T_UINT64;
	ck_assert_int_eq(V(e), -EINVAL);
	e = amo(HOIST_AMO_OP_FETCH_ADD, HOIST_AMO_T_INT64); /* nor a fetching one */
	e.flags = HOIST_SQE_F_AGG | HOIST_SQE_F_CQE;
	ck_assert_int_eq(V(e), -EINVAL);
	e = amo(HOIST_AMO_OP_ADD, HOIST_AMO_T_INT64);
	e.reserved1 = 1;
	ck_assert_int_eq(V(e), -EINVAL);
	e = amo(HOIST_AMO_OP_ADD, HOIST_AMO_T_INT64);
	e.pe = 4;
	ck_assert_int_eq(V(e), -EINVAL);
	e.pe = -1;
	ck_assert_int_eq(V(e), -EINVAL);
	e = amo(HOIST_AMO_OP_ADD, HOIST_AMO_T_INT64);
	e.seg = 1;
	ck_assert_int_eq(V(e), -EINVAL);
}
END_TEST

static struct hoist_sqe strided(uint8_t op, uint64_t roff, uint64_t elem, int64_t stride, uint64_t count)
{
	struct hoist_sqe e = put();
	e.opcode = op;
	e.remote_off = roff;
	e.len = elem;
	e.local_off = 0;
	memcpy(e.inline_data, &stride, 8);
	memcpy(e.inline_data + 8, &count, 8);
	return e;
}

START_TEST(test_strided)
{
	struct hoist_sqe e = strided(HOIST_OP_GET_STRIDED, 0, 16, 850, 10);
	ck_assert_int_eq(V(e), 0);
	e = strided(HOIST_OP_PUT_STRIDED, HEAP - 16, 16, -1000, 100); /* backwards */
	ck_assert_int_eq(V(e), 0);
	e = strided(HOIST_OP_PUT_STRIDED, 0, 16, -1, 2); /* below 0 */
	ck_assert_int_eq(V(e), -EFAULT);
	e = strided(HOIST_OP_GET_STRIDED, 0, 16, 4, 10); /* overlapping: defined */
	ck_assert_int_eq(V(e), 0);
	e = strided(HOIST_OP_GET_STRIDED, 0, 16, INT64_MAX, 3);
	ck_assert_int_eq(V(e), -EFAULT);
	e = strided(HOIST_OP_GET_STRIDED, 0, 16, 0, UINT64_MAX);
	ck_assert_int_eq(V(e), -EINVAL);
	e = strided(HOIST_OP_GET_STRIDED, 0, 16, 0, STAGE / 16 + 1); /* local too big */
	ck_assert_int_eq(V(e), -EFAULT);
	e = strided(HOIST_OP_GET_STRIDED, 0, 16, 8, 0); /* no-op */
	ck_assert_int_eq(V(e), 0);
	e = strided(HOIST_OP_GET_STRIDED, 0, 16, 8, 4);
	e.flags = HOIST_SQE_F_INLINE;
	ck_assert_int_eq(V(e), -EINVAL);
	/* property: accepted => every element in the heap */
	uint64_t seed = 7, accepted = 0;
	for (int i = 0; i < 200000; i++) {
		uint64_t r = rng_next(&seed);
		int64_t stride = (int64_t)(rng_next(&seed) % 20000) - 10000;
		if (r & 1)
			stride = (int64_t)rng_next(&seed);
		e = strided(HOIST_OP_GET_STRIDED, rng_next(&seed) % (HEAP + 10), rng_next(&seed) % 300,
			    stride, rng_next(&seed) % 200);
		if (V(e))
			continue;
		accepted++;
		uint64_t count;
		memcpy(&count, e.inline_data + 8, 8);
		for (uint64_t k = 0; e.len && k < count; k++) {
			__int128 off = (__int128)e.remote_off + (__int128)stride * (__int128)k;
			CHK(off >= 0 && off + e.len <= (__int128)HEAP);
		}
	}
	ck_assert_uint_gt(accepted, 1000);
}
END_TEST

START_TEST(test_vec)
{
	struct hoist_sqe e = strided(HOIST_OP_GET_VEC, 0, 32, 4, 1024); /* nvec 4 at 1024 */
	ck_assert_int_eq(V(e), 0);
	e = strided(HOIST_OP_GET_VEC, 0, 32, HOIST_VEC_MAX + 1, 0);
	ck_assert_int_eq(V(e), -EINVAL);
	e = strided(HOIST_OP_GET_VEC, 0, 32, 4, (int64_t)STAGE - 32); /* list past staging */
	ck_assert_int_eq(V(e), -EFAULT);
	e = strided(HOIST_OP_GET_VEC, HEAP + 1, 32, 4, 1024);
	ck_assert_int_eq(V(e), -EFAULT);
	e = strided(HOIST_OP_GET_VEC, 0, 32, 0, 0); /* nvec 0 with data */
	ck_assert_int_eq(V(e), -EINVAL);
	e = strided(HOIST_OP_PUT_VEC, 0, 0, 0, 0);
	ck_assert_int_eq(V(e), 0);
}
END_TEST

/* Issue 14 defect 4: a descriptor that moves nothing (len 0, count 0,
 * element size 0, nvec 0) is checked like any other: every offset it
 * names must lie in its segment, then it is a no-op. Before the fix a
 * strided put with count 0 and local_off 2^63 was accepted and the daemon
 * computed staging + 2^63. */
START_TEST(test_zero_length)
{
	const uint64_t far = 1ull << 63;
	static const uint8_t data_ops[] = {HOIST_OP_PUT, HOIST_OP_GET, HOIST_OP_PUT_STRIDED, HOIST_OP_GET_STRIDED,
					   HOIST_OP_PUT_VEC, HOIST_OP_GET_VEC};
	for (size_t i = 0; i < sizeof(data_ops); i++) {
		uint8_t op = data_ops[i];
		int multi = op != HOIST_OP_PUT && op != HOIST_OP_GET;
		int vec = op == HOIST_OP_PUT_VEC || op == HOIST_OP_GET_VEC;
		/* the shapes that move nothing: (elem, count) */
		const uint64_t shapes[][2] = {{0, 0}, {0, 5}, {16, 0}};
		for (size_t k = 0; k < (multi && !vec ? 3u : 1u); k++) {
			struct hoist_sqe e = strided(op, 64, shapes[k][0], 8, shapes[k][1]);
			if (!multi)
				e.len = 0;
			if (vec) { /* nvec 0, list at 0 */
				e.len = 0;
				memset(e.inline_data, 0, sizeof(e.inline_data));
			}
			ck_assert_msg(V(e) == 0, "op %u shape %zu valid no-op: %d", op, k, V(e));
			for (int lh = 0; lh < 2; lh++) {
				struct hoist_sqe b = e;
				b.flags = lh ? HOIST_SQE_F_LOCAL_HEAP : 0;
				uint64_t lim = lh ? HEAP : STAGE;
				b.local_off = far;
				ck_assert_msg(V(b) == -EFAULT, "op %u shape %zu lh %d local_off 2^63: %d", op, k, lh, V(b));
				b.local_off = lim + 1;
				ck_assert_msg(V(b) == -EFAULT, "op %u shape %zu lh %d local_off size+1: %d", op, k, lh, V(b));
				b.local_off = lim; /* one past the end, zero bytes: in range */
				ck_assert_msg(V(b) == 0, "op %u shape %zu lh %d local_off == size: %d", op, k, lh, V(b));
			}
			struct hoist_sqe r = e;
			r.remote_off = far;
			ck_assert_msg(V(r) == -EFAULT, "op %u shape %zu remote_off 2^63: %d", op, k, V(r));
			r.remote_off = HEAP + 1;
			ck_assert_msg(V(r) == -EFAULT, "op %u shape %zu remote_off heap+1: %d", op, k, V(r));
			if (vec) {
				r = e;
				uint64_t list = far;
				memcpy(r.inline_data + 8, &list, 8);
				ck_assert_msg(V(r) == -EFAULT, "op %u list_off 2^63 with nvec 0: %d", op, V(r));
			}
		}
	}
	/* elements of size 0 still name offsets: the last must be in the heap */
	struct hoist_sqe e = strided(HOIST_OP_PUT_STRIDED, 0, 0, (int64_t)HEAP, 3);
	ck_assert_int_eq(V(e), -EFAULT);
	e = strided(HOIST_OP_GET_STRIDED, 64, 0, -128, 2);
	ck_assert_int_eq(V(e), -EFAULT);
	/* the exact report: strided put, count 0, local offset 2^63 */
	e = strided(HOIST_OP_PUT_STRIDED, 0, 8, 8, 0);
	e.local_off = far;
	ck_assert_int_eq(V(e), -EFAULT);
	/* a put/get of 0 bytes */
	e = put();
	e.len = 0;
	e.local_off = far;
	ck_assert_int_eq(V(e), -EFAULT);
	/* a collective of 0 bytes */
	struct hoist_coll_args a = {.kind = HOIST_COLL_BROADCAST};
	e = simple(HOIST_OP_COLL);
	memcpy(e.inline_data, &a, sizeof(a));
	ck_assert_int_eq(validate_coll(&e, &geom), 0);
	e.local_off = far;
	ck_assert_int_eq(validate_coll(&e, &geom), -EFAULT);
	e.local_off = 0;
	e.remote_off = HEAP + 1;
	ck_assert_int_eq(validate_coll(&e, &geom), -EFAULT);
	/* property: whatever moves nothing and is accepted names only offsets
	 * inside its segments */
	uint64_t seed = 11;
	for (int i = 0; i < 100000; i++) {
		uint8_t op = data_ops[rng_next(&seed) % sizeof(data_ops)];
		uint64_t pick[] = {0, 1, HEAP, HEAP + 1, STAGE, STAGE + 1, far, UINT64_MAX, rng_next(&seed)};
#define PICK pick[rng_next(&seed) % (sizeof(pick) / sizeof(pick[0]))]
		e = strided(op, PICK, 0, (int64_t)PICK, rng_next(&seed) % 4);
		if (op == HOIST_OP_PUT || op == HOIST_OP_GET || op == HOIST_OP_PUT_VEC || op == HOIST_OP_GET_VEC)
			memset(e.inline_data, 0, 8); /* nvec 0 */
		e.local_off = PICK;
		if (rng_next(&seed) & 1)
			e.flags = HOIST_SQE_F_LOCAL_HEAP;
#undef PICK
		if (V(e))
			continue;
		uint64_t lim = (e.flags & HOIST_SQE_F_LOCAL_HEAP) ? HEAP : STAGE;
		CHK(e.remote_off <= HEAP);
		CHK(e.local_off <= lim);
	}
}
END_TEST

static Suite *validate_suite(void)
{
	Suite *s = suite_create("validate");
	TCase *tc = tcase_create("validate");
	tcase_add_test(tc, test_valid);
	tcase_add_test(tc, test_opcode);
	tcase_add_test(tc, test_flags);
	tcase_add_test(tc, test_reserved);
	tcase_add_test(tc, test_pe);
	tcase_add_test(tc, test_seg);
	tcase_add_test(tc, test_remote_range);
	tcase_add_test(tc, test_inline);
	tcase_add_test(tc, test_local_range);
	tcase_add_test(tc, test_data_flags_on_sync_ops);
	tcase_add_test(tc, test_random_never_out_of_bounds);
	tcase_add_test(tc, test_strided);
	tcase_add_test(tc, test_vec);
	tcase_add_test(tc, test_zero_length);
	tcase_add_test(tc, test_amo);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(validate_suite());
}
