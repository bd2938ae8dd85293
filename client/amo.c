/*
 * Remote atomics (hoist_atomic, hoist_atomic_nbi). Every atomic is a CPU
 * atomic on the target node's memory (shm/hoist_amo.h says why): to a PE
 * of this node the library does it itself on its mapping of the peer's
 * heap when a direct put could be done (rma.c: the daemon consumed
 * everything we posted, no nbi get waits, no aggregation region, no job
 * error; HOIST_DIRECT=1), else it posts one HOIST_OP_AMO descriptor and
 * the daemon executes it (same node: the self transport; another node: the
 * target daemon, W_AMO, or for a non-fetching one inside a pack with other
 * small operations for that node; HOIST_SQE_F_AGG in an aggregation
 * region). A fetching one gets a staging slot (its size) where
 * the daemon writes the old value before its completion; the blocking form
 * waits for it, the nbi form copies it out at hoist_quiet (as nbi gets).
 */
#include <errno.h>
#include <string.h>

#include "hoist_amo.h"
#include "internal.h"

_Static_assert((int)HOIST_AMO_FETCH_XOR + 1 == (int)HOIST_AMO_OP__COUNT &&
		       (int)HOIST_AMO_CSWAP == (int)HOIST_AMO_OP_CSWAP &&
		       (int)HOIST_AMO_FETCH_INC == (int)HOIST_AMO_OP_FETCH_INC,
	       "hoist_amo_t numbering is the descriptor's");
_Static_assert(HOIST_UINT32 == HOIST_AMO_T_UINT32 && HOIST_DOUBLE == HOIST_AMO_T_DOUBLE,
	       "hoist_type_t numbering is the descriptor's");

/* Does op read *value? */
static int amo_takes_value(hoist_amo_t op)
{
	return op != HOIST_AMO_FETCH && op != HOIST_AMO_INC && op != HOIST_AMO_FETCH_INC;
}

/* sflags: HOIST_SQE_F_SIGNAL for a put-with-signal's signal, else 0;
 * may_direct: 0 forces the descriptor (a signal behind a posted put) */
static int amo_common(int pe, void *dst, hoist_amo_t op, hoist_type_t type, const void *value,
		      const void *cmp, void *fetched, int nbi, uint8_t sflags, int may_direct)
{
	struct hoist_ctx *c = &hoist__g;
	if (!c->initialized)
		return -ENOTCONN;
	if (pe < 0 || pe >= c->size)
		return -EINVAL;
	if (hoist_amo_valid((uint32_t)op, (uint32_t)type))
		return -EINVAL;
	uint32_t size = hoist_amo_size((uint32_t)type);
	uint64_t roff;
	if (hoist__sym_off(c, dst, size, &roff))
		return -EFAULT;
	/* the heap base, the data segment and its place in the heap file are
	 * page aligned: the offset's alignment is dst's */
	if (roff % size)
		return -EINVAL;
	int fetching = hoist_amo_fetching((uint32_t)op);
	if ((amo_takes_value(op) && !value) || (op == HOIST_AMO_CSWAP && !cmp) ||
	    (fetching && !fetched))
		return -EINVAL;
	uint64_t v = 0, cv = 0; /* a 4-byte operand in the low bytes (little endian) */
	if (amo_takes_value(op))
		memcpy(&v, value, size);
	if (op == HOIST_AMO_CSWAP)
		memcpy(&cv, cmp, size);

	char *base = may_direct ? hoist__direct_base(c, pe) : NULL;
	if (base) {
		uint64_t old;
		hoist_amo_apply(base + roff, (uint32_t)op, size, v, cv, &old);
		hoist__heap_touched_at(c, base, roff, size); /* pe may wait for it (p2p.c) */
		if (fetching)
			memcpy(fetched, &old, size);
		c->direct_amos++;
		return 0;
	}

	struct hoist_sqe *sqe;
	int rc;
	if (!fetching) {
		/* in an aggregation region a signal-less one is held in the
		 * region's pack like a put (a later get of its word ends the
		 * region: hoist__agg_put records the range) */
		if (!sflags && hoist__agg_put(c, pe, roff, size, NULL))
			sflags = HOIST_SQE_F_AGG;
		if ((rc = hoist__sqe_get(c, &sqe)))
			return rc;
		*sqe = (struct hoist_sqe){.opcode = HOIST_OP_AMO, .flags = sflags, .pe = pe,
					  .seg = HOIST_SEG_HEAP, .remote_off = roff, .len = size};
		sqe->amo_op = (uint8_t)op;
		sqe->amo_type = (uint8_t)type;
		memcpy(sqe->inline_data, &v, 8);
		memcpy(sqe->inline_data + 8, &cv, 8);
		hoist__sqe_submit(c);
		/* HOIST_AUTO=0: complete on return, as hoist_put */
		if (!nbi && !c->auto_overlap)
			return hoist__quiet(c);
		return 0;
	}

	struct hoist_op *o;
	if ((rc = hoist__op_alloc(c, &o)))
		return rc;
	uint64_t soff;
	int64_t id = hoist__stage_alloc_wait(c, size, &soff);
	if (id < 0) {
		hoist__op_free(c, o);
		return (int)id;
	}
	o->stage_id = id;
	o->stage_off = soff;
	o->dst = fetched;
	o->len = size;
	o->copyout = 1;
	if ((rc = hoist__sqe_get(c, &sqe))) {
		hoist__op_free(c, o);
		return rc;
	}
	*sqe = (struct hoist_sqe){.opcode = HOIST_OP_AMO, .flags = HOIST_SQE_F_CQE, .pe = pe,
				  .user_data = hoist__op_udata(c, o), .seg = HOIST_SEG_HEAP,
				  .remote_off = roff, .len = size, .local_off = soff};
	sqe->amo_op = (uint8_t)op;
	sqe->amo_type = (uint8_t)type;
	memcpy(sqe->inline_data, &v, 8);
	memcpy(sqe->inline_data + 8, &cv, 8);
	hoist__sqe_submit(c);
	if (nbi) { /* the old value is copied out at quiet */
		hoist__nbi_append(c, o);
		return 0;
	}
	rc = hoist__wait_op(c, o);
	if (rc == 0)
		hoist__op_copyout(c, o);
	hoist__op_free(c, o);
	return rc;
}

HOIST_API int hoist_atomic(int pe, void *dst, hoist_amo_t op, hoist_type_t type, const void *value,
			   const void *cmp, void *fetched)
{
	return amo_common(pe, dst, op, type, value, cmp, fetched, 0, 0, 1);
}

HOIST_API int hoist_atomic_nbi(int pe, void *dst, hoist_amo_t op, hoist_type_t type,
			       const void *value, const void *cmp, void *fetched)
{
	return amo_common(pe, dst, op, type, value, cmp, fetched, 1, 0, 1);
}

/*
 * Put-with-signal. The signal word is updated by a non-fetching 64-bit
 * atomic (SET or ADD: amo_common, the atomics' domain) that becomes
 * visible only once the data is at the target:
 * - the put took the direct path (the library stored the data through its
 *   mapping): a release fence, then the atomic (it takes the direct path
 *   too, nothing was posted in between), so a PE that sees the signal with
 *   an acquire load (hoist_signal_fetch) sees the data;
 * - the put went to the daemon (HOIST_DIRECT=0, another node, any transport
 *   and tcp_lanes): the atomic is posted right behind it, flagged
 *   HOIST_SQE_F_SIGNAL, and never takes the direct path. The daemon's
 *   engine holds a flagged atomic until every earlier operation of this
 *   client completed (was acknowledged, i.e. placed at its target: every
 *   tcp lane and stripe, verbs), since the conflict stage does not order a
 *   put and an atomic to disjoint ranges and lanes are not ordered. The
 *   library waits for nothing: the nbi form returns once both are posted
 *   (the source is read until hoist_quiet when it is symmetric, as
 *   hoist_put_nbi), the blocking one once the source is reusable (copied
 *   to staging) and, with HOIST_AUTO=0, after one quiet (as hoist_put).
 *   If a piece of the put fails there, the daemon does not send the
 *   signal (it fails with -EIO; the quiet reports the put's error).
 * The signal arguments are checked before anything is put.
 */
static int put_signal_common(int pe, void *dst, const void *src, size_t n, uint64_t *sig_addr,
			     uint64_t signal, hoist_signal_op_t sig_op, int nbi)
{
	struct hoist_ctx *c = &hoist__g;
	if (!c->initialized)
		return -ENOTCONN;
	if (pe < 0 || pe >= c->size)
		return -EINVAL;
	if (sig_op != HOIST_SIGNAL_SET && sig_op != HOIST_SIGNAL_ADD)
		return -EINVAL;
	uint64_t soff;
	if (!sig_addr || hoist__sym_off(c, sig_addr, 8, &soff))
		return -EFAULT;
	if (soff % 8)
		return -EINVAL;
	int direct = 0, rc;
	if ((rc = hoist__put_common(pe, dst, src, n, nbi, &direct)))
		return rc;
	c->put_signals++;
	if (direct || n == 0) {
		__atomic_thread_fence(__ATOMIC_RELEASE);
		if (direct)
			c->direct_signals++;
		return amo_common(pe, sig_addr, (hoist_amo_t)sig_op, HOIST_UINT64, &signal, NULL,
				  NULL, nbi, HOIST_SQE_F_SIGNAL, 1);
	}
	/* behind the daemon's put: through the daemon too, which orders them */
	return amo_common(pe, sig_addr, (hoist_amo_t)sig_op, HOIST_UINT64, &signal, NULL, NULL, nbi,
			  HOIST_SQE_F_SIGNAL, 0);
}

HOIST_API int hoist_put_signal(int pe, void *dst, const void *src, size_t n, uint64_t *sig_addr,
			       uint64_t signal, hoist_signal_op_t sig_op)
{
	return put_signal_common(pe, dst, src, n, sig_addr, signal, sig_op, 0);
}

HOIST_API int hoist_put_signal_nbi(int pe, void *dst, const void *src, size_t n,
				   uint64_t *sig_addr, uint64_t signal, hoist_signal_op_t sig_op)
{
	return put_signal_common(pe, dst, src, n, sig_addr, signal, sig_op, 1);
}

HOIST_API uint64_t hoist_signal_fetch(const uint64_t *sig_addr)
{
	return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}
