/*
 * Remote atomics: the operations, their validity, and THE code that
 * executes one. Shared by libhoist (the direct path: a PE of the same node
 * on its mapping of the target heap) and hoistd (same node through the
 * daemon: the self transport; another node: the target daemon serving a
 * W_AMO active message), so every path runs the same CPU atomic on the
 * target node's memory.
 *
 * Why CPU atomics at the target and not NIC atomics (IBV_WR_ATOMIC_*): an
 * HCA's atomics are not atomic with the CPU's on most hardware, are 64-bit
 * only, and many have no swap/and/or/xor. All atomics on one location must
 * be atomic with respect to each other whichever path they take (direct,
 * self, tcp, verbs): one atomicity domain means the target node's CPU.
 *
 * The numbering of enum hoist_amo_op is hoist_amo_t's (hoist.h) and the
 * wire's (W_AMO); types are hoist_type_t's, with HOIST_UINT32 (5) for
 * atomics only. Integer arithmetic wraps around (two's complement); float
 * and double support fetch, set and swap on their bit patterns. This
 * header depends on nothing but libc.
 */
#ifndef HOIST_AMO_H
#define HOIST_AMO_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

enum hoist_amo_op {
	HOIST_AMO_OP_FETCH = 0,
	HOIST_AMO_OP_SET,
	HOIST_AMO_OP_SWAP,
	HOIST_AMO_OP_CSWAP,
	HOIST_AMO_OP_ADD,
	HOIST_AMO_OP_FETCH_ADD,
	HOIST_AMO_OP_INC,
	HOIST_AMO_OP_FETCH_INC,
	HOIST_AMO_OP_AND,
	HOIST_AMO_OP_OR,
	HOIST_AMO_OP_XOR,
	HOIST_AMO_OP_FETCH_AND,
	HOIST_AMO_OP_FETCH_OR,
	HOIST_AMO_OP_FETCH_XOR,
	HOIST_AMO_OP__COUNT
};

/* hoist_type_t numbering (hoist.h) */
#define HOIST_AMO_T_INT32 0u
#define HOIST_AMO_T_INT64 1u
#define HOIST_AMO_T_UINT64 2u
#define HOIST_AMO_T_FLOAT 3u
#define HOIST_AMO_T_DOUBLE 4u
#define HOIST_AMO_T_UINT32 5u
#define HOIST_AMO_T__COUNT 6u

/* Operand bytes of a type: 4 or 8, 0 for no type at all. */
static inline uint32_t hoist_amo_size(uint32_t type)
{
	switch (type) {
	case HOIST_AMO_T_INT32:
	case HOIST_AMO_T_UINT32:
	case HOIST_AMO_T_FLOAT:
		return 4;
	case HOIST_AMO_T_INT64:
	case HOIST_AMO_T_UINT64:
	case HOIST_AMO_T_DOUBLE:
		return 8;
	default:
		return 0;
	}
}

/* Does op return the old value? */
static inline int hoist_amo_fetching(uint32_t op)
{
	switch (op) {
	case HOIST_AMO_OP_FETCH:
	case HOIST_AMO_OP_SWAP:
	case HOIST_AMO_OP_CSWAP:
	case HOIST_AMO_OP_FETCH_ADD:
	case HOIST_AMO_OP_FETCH_INC:
	case HOIST_AMO_OP_FETCH_AND:
	case HOIST_AMO_OP_FETCH_OR:
	case HOIST_AMO_OP_FETCH_XOR:
		return 1;
	default:
		return 0;
	}
}

/* 0 when (op, type) is an atomic there is, else -EINVAL (an unknown op or
 * type, or arithmetic/bitwise on float or double). */
static inline int hoist_amo_valid(uint32_t op, uint32_t type)
{
	if (op >= HOIST_AMO_OP__COUNT || !hoist_amo_size(type))
		return -EINVAL;
	if ((type == HOIST_AMO_T_FLOAT || type == HOIST_AMO_T_DOUBLE) && op != HOIST_AMO_OP_FETCH &&
	    op != HOIST_AMO_OP_SET && op != HOIST_AMO_OP_SWAP)
		return -EINVAL;
	return 0;
}

#define HOIST_AMO_APPLY(T, p, op, v, c, old)                                                       \
	do {                                                                                       \
		T *p_ = (T *)(p), v_ = (T)(v), c_ = (T)(c);                                         \
		switch (op) {                                                                      \
		case HOIST_AMO_OP_FETCH:                                                           \
			*(old) = __atomic_load_n(p_, __ATOMIC_SEQ_CST);                            \
			break;                                                                     \
		case HOIST_AMO_OP_SET:                                                             \
			__atomic_store_n(p_, v_, __ATOMIC_SEQ_CST);                                \
			break;                                                                     \
		case HOIST_AMO_OP_SWAP:                                                            \
			*(old) = __atomic_exchange_n(p_, v_, __ATOMIC_SEQ_CST);                    \
			break;                                                                     \
		case HOIST_AMO_OP_CSWAP:                                                           \
			__atomic_compare_exchange_n(p_, &c_, v_, 0, __ATOMIC_SEQ_CST,             \
						    __ATOMIC_SEQ_CST);                             \
			*(old) = c_; /* the value found, equal to cmp or not */                    \
			break;                                                                     \
		case HOIST_AMO_OP_ADD:                                                             \
		case HOIST_AMO_OP_FETCH_ADD:                                                       \
			*(old) = __atomic_fetch_add(p_, v_, __ATOMIC_SEQ_CST);                     \
			break;                                                                     \
		case HOIST_AMO_OP_INC:                                                             \
		case HOIST_AMO_OP_FETCH_INC:                                                       \
			*(old) = __atomic_fetch_add(p_, (T)1, __ATOMIC_SEQ_CST);                   \
			break;                                                                     \
		case HOIST_AMO_OP_AND:                                                             \
		case HOIST_AMO_OP_FETCH_AND:                                                       \
			*(old) = __atomic_fetch_and(p_, v_, __ATOMIC_SEQ_CST);                     \
			break;                                                                     \
		case HOIST_AMO_OP_OR:                                                              \
		case HOIST_AMO_OP_FETCH_OR:                                                        \
			*(old) = __atomic_fetch_or(p_, v_, __ATOMIC_SEQ_CST);                      \
			break;                                                                     \
		case HOIST_AMO_OP_XOR:                                                             \
		case HOIST_AMO_OP_FETCH_XOR:                                                       \
			*(old) = __atomic_fetch_xor(p_, v_, __ATOMIC_SEQ_CST);                     \
			break;                                                                     \
		}                                                                                  \
	} while (0)

/* Execute a validated atomic (hoist_amo_valid) on the naturally aligned
 * word at addr: its old value (zero-extended for 4 bytes; for a
 * non-fetching op whatever the word held) in *old. Values travel as
 * integers: a 4-byte operand is the low 32 bits of value/cmp. Integer
 * arithmetic is unsigned (wraps around), which is also the two's-complement
 * result for signed types; floats are moved as bit patterns. */
static inline void hoist_amo_apply(void *addr, uint32_t op, uint32_t size, uint64_t value,
				   uint64_t cmp, uint64_t *old)
{
	if (size == 4) {
		uint32_t o = 0;
		HOIST_AMO_APPLY(uint32_t, addr, op, value, cmp, &o);
		*old = o;
	} else {
		uint64_t o = 0;
		HOIST_AMO_APPLY(uint64_t, addr, op, value, cmp, &o);
		*old = o;
	}
}

#endif /* HOIST_AMO_H */
