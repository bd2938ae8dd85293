/*
 * hoist_combine.h - the element-wise operations of reductions: dst = dst op
 * src over bytes / element size elements. Shared by the daemon (its
 * hierarchical collectives, daemon/stages/coll.c) and libhoist (the node
 * collectives of a one-node job, client/nodecoll.c), so both paths give
 * bit-identical results. type and op are validated by the caller
 * (hoist_type_t / hoist_op_t numbering, no bitwise op on float types).
 */
#ifndef HOIST_COMBINE_H
#define HOIST_COMBINE_H

#include <stdint.h>
#include <string.h>

#include "hoist_shm.h"

/* Integers wrap (computed unsigned); min/max compare in the real type.
 * Min/max must be commutative to the bit: two nodes of a recursive
 * doubling step compute x op y and y op x, and every PE gets bit-identical
 * results. Where neither operand is smaller (equal, -0.0 vs +0.0, NaNs) a
 * NaN wins over a number, else the bits decide: min takes -0.0, max +0.0
 * (IEEE 754-2019 minimum/maximum). B: an unsigned type of T's width. */
#define TIE(B, x, y, is_min)                                                                       \
	((x) != (x) && (y) == (y)   ? (x)                                                          \
	 : (y) != (y) && (x) == (x) ? (y)                                                          \
	 : (((B)bits_of_x > (B)bits_of_y) == (is_min)) ? (x) : (y))
#define COMBINE(T, U, B)                                                                           \
	do {                                                                                       \
		for (uint64_t i = 0; i < n; i++) {                                                 \
			T x, y, z;                                                                 \
			B bits_of_x, bits_of_y;                                                    \
			memcpy(&x, (char *)dst + i * sizeof(T), sizeof(T));                      \
			memcpy(&y, (const char *)src + i * sizeof(T), sizeof(T));                \
			memcpy(&bits_of_x, &x, sizeof(T));                                         \
			memcpy(&bits_of_y, &y, sizeof(T));                                         \
			switch (op) {                                                              \
			case 0: z = (T)((U)x + (U)y); break;                                       \
			case 1: z = (T)((U)x * (U)y); break;                                       \
			case 2: z = y < x ? y : x < y ? x : TIE(B, x, y, 1); break;                \
			case 3: z = y > x ? y : x > y ? x : TIE(B, x, y, 0); break;                \
			default: z = BITWISE(T, U); break;                                         \
			}                                                                          \
			memcpy((char *)dst + i * sizeof(T), &z, sizeof(T));                      \
		}                                                                                  \
	} while (0)

static inline uint64_t hoist_coll_bitwise_(uint8_t op, uint64_t x, uint64_t y)
{
	return op == 4 ? (x & y) : op == 5 ? (x | y) : (x ^ y);
}

static inline void hoist_coll_combine(uint8_t type, uint8_t op, void *dst, const void *src, uint64_t bytes)
{
	uint64_t n = bytes / hoist_coll_type_size(type);
	switch (type) {
	case 0:
#define BITWISE(T, U) (T)(U)hoist_coll_bitwise_(op, (uint64_t)(U)x, (uint64_t)(U)y)
		COMBINE(int32_t, uint32_t, uint32_t);
		break;
	case 1:
		COMBINE(int64_t, uint64_t, uint64_t);
		break;
	case 2:
		COMBINE(uint64_t, uint64_t, uint64_t);
		break;
#undef BITWISE
#define BITWISE(T, U) x /* rejected by validate_coll */
	case 3:
		COMBINE(float, float, uint32_t);
		break;
	case 4:
		COMBINE(double, double, uint64_t);
		break;
#undef BITWISE
	}
}

#undef TIE
#undef COMBINE

#endif
