/*
 * hoist shared-memory ABI: the layout both libhoist and hoistd map.
 *
 * One "ring region" memfd per client holds, in this order:
 *   [0, HOIST_CTRL_BYTES)        struct hoist_ctrl (control page)
 *   [sq_off, sq_off + 64*sq_n)   submission ring: struct hoist_sqe[sq_n]
 *   [cq_off, cq_off + 32*cq_n)   completion ring: struct hoist_cqe[cq_n]
 * Two more memfds: the staging arena (put payloads, get results) and the
 * symmetric heap. All sizes are chosen by the daemon and sent in the
 * AttachReply; the control page repeats them so either side can check.
 * The last cache line of the heap, [heap_bytes - 64, heap_bytes), is the
 * heap's wake line (struct hoist_heap_wake below), not handed out by
 * hoist_malloc: it is the one place that the owner, its daemon and every
 * PE of the node that maps this heap directly all map.
 *
 * Rings are single-producer/single-consumer with free-running 32-bit
 * head/tail counters, indexed with (counter & (entries - 1)). Each counter
 * lives on its own cache line. The daemon finds new descriptors by the SQ
 * slots themselves, not by sq_tail, and the client new completions by
 * the CQ slots, not by cq_tail (the phase bits, "SQE publication" and
 * "CQE publication" below). This header depends on nothing but libc.
 */
#ifndef HOIST_SHM_H
#define HOIST_SHM_H

#include <stddef.h>
#include <stdint.h>

#define HOIST_SHM_MAGIC   0x314d53545349484fULL /* "OHISTSM1" little endian */
#define HOIST_ABI_VERSION 11u /* 3: AttachReply.accepted (two-stage attach reply);
				* 4: HOIST_OP_AMO, sqe.amo_op/amo_type;
				* 5: sq_flags' sleep generation (a client of 5
				* rings once per generation: with a daemon that
				* does not bump it, it would ring once at all),
				* ctrl wait_yields/wait_long_yields/wait_sleeps;
				* 6: HOIST_COLL_F_NODE (one descriptor per node
				* for a collective: a daemon of 5 would fail it),
				* hoist_nc_args.fin/res written by the daemon,
				* the heap wake line's wait_lo/wait_hi (a
				* writer of 5 would wake whatever the range: safe),
				* ctrl heap_wakes_direct*, wait_handoffs,
				* prog_cpu/wait_cpu (the CPU hand-off),
				* HOIST_SQE_F_LAZY (an older daemon rejects it);
				* 7: struct hoist_cqe grew to 32 bytes: data[],
				* HOIST_CQE_F_DATA, a small get's result in its
				* completion, HOIST_SQE_F_INLINE on a GET (the CQ
				* of a client of 6 would be read at the wrong
				* stride, so the attach fails with the version
				* mismatch error as for any other version);
				* HOIST_SQE_F_PHASE: the daemon takes an SQE by
				* its phase bit, not by sq_tail (a client of 6
				* never sets it: nothing would be taken);
				* HOIST_CQE_F_PHASE: the client takes a CQE by
				* its phase bit, cq_tail is its futex word only;
				* also 7: hoist_nc_hdr.early, hoist_nc_args.verdict
				* and inl,
				* a slot's seq is its arrival word in a one-node
				* job (the PEs of a node must run one libhoist;
				* the daemon only checks seq of a node
				* descriptor's slots, as in 6);
				* 8: a lazy BARRIER_NOTIFY's len counts the node
				* barriers it stands for (a daemon of 7 would
				* count one: hoist_finalize would wait forever);
				* 9: a node descriptor of an eager broadcast whose
				* root is on the node: the daemon writes no local
				* dst (every local PE copied the root's slot and
				* may have returned; a daemon of 8 would write
				* them late, a client of 8 would wait for it);
				* 10: ctrl.cq_wake_ud, the completion a sleeping
				* client waits for (a daemon of 9 would wake it
				* for every one, a client of 9 leaves it 0: any);
				* 11: the node-collective block's inbox (struct
				* hoist_nc_inbox): an eager broadcast whose root
				* is on another node goes there, no local dst is
				* written (a daemon of 10 would write the dsts
				* and leave the inbox empty: a client of 11
				* would wait for it; HOIST_NC_BYTES grew) */
#define HOIST_NOTIFY_MAX  (1u << 20) /* the most barriers one notify counts */
#define HOIST_CACHELINE   64
#define HOIST_CTRL_BYTES  4096u

/* ---- descriptor (SQE) ------------------------------------------------ */

enum hoist_opcode {
	HOIST_OP_INVALID = 0,        /* zeroed memory is never a valid op */
	HOIST_OP_PUT = 1,            /* local buffer -> (pe, seg, remote_off) */
	HOIST_OP_GET = 2,            /* (pe, seg, remote_off) -> local buffer */
	HOIST_OP_QUIET = 3,          /* CQE once every earlier op completed */
	HOIST_OP_FENCE = 4,          /* later puts to a PE after earlier ones */
	HOIST_OP_BARRIER_NOTIFY = 5, /* implies quiet; counts client in;
				      * remote_off names the next phase */
	HOIST_OP_NOP = 6,            /* completes at once (tests, wakeups) */
	HOIST_OP_PHASE = 7,          /* a phase boundary named remote_off (no barrier) */
	/* Multi-element operations: one descriptor, many remote elements; the
	 * local side is always contiguous at local_off (staging, or own heap
	 * with HOIST_SQE_F_LOCAL_HEAP), elements back to back in index order.
	 * STRIDED: element i is [remote_off + i*stride, +len) at pe, where
	 *   inline_data = { int64_t stride; uint64_t count; } (any stride: <0,
	 *   0 and < len allowed; puts are applied in index order, so where
	 *   elements overlap the highest index wins). Local bytes: len*count.
	 * VEC: inline_data = { uint64_t nvec; uint64_t list_off; }: nvec
	 *   struct hoist_vec_elem at list_off in the staging arena; element k
	 *   is [remote_off + off_k, +len_k); len is the sum of len_k (the
	 *   local bytes). */
	HOIST_OP_PUT_STRIDED = 8,
	HOIST_OP_GET_STRIDED = 9,
	HOIST_OP_PUT_VEC = 10,
	HOIST_OP_GET_VEC = 11,
	HOIST_OP_COLL = 12,          /* collective: see struct hoist_coll_args */
	/* Remote atomic on the aligned word (len = 4 or 8 bytes) at
	 * (pe, seg, remote_off): sqe.amo_op (enum hoist_amo_op), sqe.amo_type
	 * (hoist_type_t numbering), inline_data = { uint64_t value; uint64_t
	 * cmp; } (a 4-byte operand in the low bytes). A fetching op writes
	 * the old value (len bytes) at local_off (staging, or own heap with
	 * HOIST_SQE_F_LOCAL_HEAP) before its CQE; a non-fetching one ignores
	 * local_off. Flags: CQE, LOCAL_HEAP and SIGNAL only. See hoist_amo.h. */
	HOIST_OP_AMO = 13,
	/* 14..15: reserved (collectives) */
	HOIST_OP__COUNT = 16
};

/* sqe.flags */
/* PUT: the payload is in sqe.inline_data (len <= HOIST_INLINE_MAX).
 * GET (len 1..HOIST_CQE_DATA_MAX, with HOIST_SQE_F_CQE, without
 * LOCAL_HEAP/AGG, local_off 0): the result comes back in the completion's
 * data[] (HOIST_CQE_F_DATA), no staging buffer; only for a target PE on
 * the daemon's own node (another one completes with -EINVAL): one cache
 * line less on a small get's path (the client reads the CQE line anyway) */
#define HOIST_SQE_F_INLINE     0x01u
#define HOIST_SQE_F_LOCAL_HEAP 0x02u /* local_off is in own heap, else staging */
#define HOIST_SQE_F_CQE        0x04u /* post a CQE on success too */
/* Inside an aggregation region (hoist_aggregate_begin): the daemon holds
 * the put/get back in a per-node pack until the client's next descriptor
 * without this flag (or the region's closing QUIET) */
#define HOIST_SQE_F_AGG        0x08u
#define HOIST_SQE_F_RSVD_10    0x10u /* reserved (issue 6), must be 0 */
/* HOIST_OP_AMO only, SET or ADD on HOIST_UINT64: the signal of a
 * put-with-signal (the library posts it after the put completed); the
 * daemon executes it as any atomic and counts it as a signal too */
#define HOIST_SQE_F_SIGNAL     0x20u
/* BARRIER_NOTIFY only: posted without a doorbell and waited for by
 * nobody (a one-node job's node barriers, client/sync.c): the daemon takes
 * it when it looks, and does not stay awake polling for more of them. Its
 * len (1..HOIST_NOTIFY_MAX; 0 means 1) is how many barriers of one phase
 * it stands for: the client tells a run of them at once */
#define HOIST_SQE_F_LAZY       0x40u
#define HOIST_SQE_F__ALL       0x6fu
/* Not a request: the slot's lap parity, which publishes the descriptor
 * (hoist_sqe_publish below). The client's library sets it, whatever the
 * caller put there; the daemon takes it out of its copy before it
 * validates the descriptor. */
#define HOIST_SQE_F_PHASE      0x80u

#define HOIST_INLINE_MAX 16u

/* One element of a VEC descriptor's list (in staging). */
struct hoist_vec_elem {
	uint64_t off; /* relative to the descriptor's remote_off */
	uint64_t len;
};

/* Elements one multi-element descriptor may name at most (daemon limit). */
#define HOIST_VEC_MAX (1u << 20)

/* Segment ids of a PE. Only the symmetric heap exists today. */
#define HOIST_SEG_HEAP 0u

/* Node-local direct access (hoist_ptr): a PeersRequest names at most this
 * many ranks, because the reply carries their heap fds in one SCM_RIGHTS
 * message and the kernel passes at most 253 (SCM_MAX_FD) per message. */
#define HOIST_PEERS_MAX 253u

struct hoist_sqe {
	union {
		struct {
			uint8_t opcode; /* enum hoist_opcode */
			uint8_t flags;  /* HOIST_SQE_F_* */
			union {
				uint16_t reserved0; /* must be 0, but for HOIST_OP_AMO: */
				struct {
					uint8_t amo_op;   /* enum hoist_amo_op */
					uint8_t amo_type; /* hoist_type_t */
				};
			};
		};
		/* the three as one word: stored last, with release, it
		 * publishes the descriptor (hoist_sqe_publish) */
		uint32_t head;
	};
	int32_t pe;         /* target PE (job rank) */
	uint64_t user_data; /* echoed in the CQE */
	uint32_t seg;       /* target segment id */
	uint32_t reserved1; /* must be 0 */
	uint64_t remote_off; /* offset in the target segment */
	uint64_t len;        /* bytes */
	uint64_t local_off;  /* staging or own-heap offset (unless INLINE) */
	uint8_t inline_data[HOIST_INLINE_MAX];
};

/* ---- SQE publication -------------------------------------------------
 * The daemon polls the SQ slot at its sq_head, not sq_tail: a descriptor
 * is there once the slot's HOIST_SQE_F_PHASE bit equals the phase of its
 * index (set on even laps of the ring, clear on odd ones; a zeroed ring
 * holds none). The client writes bytes 4..63 of the slot, then word 0
 * (opcode, flags with the phase, reserved0) with one release store; the
 * daemon loads word 0 with acquire and, when the phase matches, copies
 * the slot. So the daemon's poll and the descriptor are one cache line
 * (with sq_tail they were two transfers from the client's core, one after
 * the other: a get 8 B through the daemon, issue 16). The client still
 * stores sq_tail (its own line, which the daemon no longer polls): for
 * hoistctl and diagnostics only. 2^32 is a multiple of every ring size,
 * so the parity runs on across the counter's wrap. */
static inline uint8_t hoist_sqe_phase(uint32_t idx, uint32_t entries)
{
	return (idx & entries) ? 0u : (uint8_t)HOIST_SQE_F_PHASE;
}

/* Client: copy *src (its phase bit set here) into slot (index idx of a
 * ring of entries) and publish it. */
static inline void hoist_sqe_publish(struct hoist_sqe *slot, struct hoist_sqe *src, uint32_t idx,
				     uint32_t entries)
{
	src->flags = (uint8_t)((src->flags & ~HOIST_SQE_F_PHASE) | hoist_sqe_phase(idx, entries));
	__builtin_memcpy((char *)slot + sizeof(src->head), (const char *)src + sizeof(src->head),
			 sizeof(*src) - sizeof(src->head));
	/* pairs with the acquire in hoist_sqe_ready */
	__atomic_store_n(&slot->head, src->head, __ATOMIC_RELEASE);
}

/* Daemon: 1 when slot (index idx) holds a descriptor published for idx;
 * then everything the client wrote to it before is visible. */
static inline int hoist_sqe_ready(const struct hoist_sqe *slot, uint32_t idx, uint32_t entries)
{
	/* pairs with the release in hoist_sqe_publish */
	uint32_t w = __atomic_load_n(&slot->head, __ATOMIC_ACQUIRE);
	struct hoist_sqe h;
	h.head = w;
	return (h.flags & HOIST_SQE_F_PHASE) == hoist_sqe_phase(idx, entries);
}

/* ---- collective descriptor (HOIST_OP_COLL) ----------------------------
 * Every PE of the job posts one per collective, in the same order; the
 * daemon keeps a per-client count of them that names the collective.
 *   pe          root (broadcast, reduce), else 0
 *   seg         HOIST_SEG_HEAP
 *   remote_off  dst: offset in the caller's own heap
 *   local_off   src: offset in the caller's own heap
 *   len         bytes per block: broadcast nbytes; reduce/allreduce
 *               count * element size; allgather/alltoall nbytes per PE
 *               (dst of both and src of alltoall hold size * len)
 *   inline_data struct hoist_coll_args
 * The daemon validates every field when it executes the descriptor; an
 * invalid one still counts as that PE's part of the collective, which then
 * fails with the error on every PE (nobody is left waiting). The CQE
 * (always posted) completes it; with HOIST_COLL_F_PARTIAL the daemon also
 * posts a HOIST_CQE_F_PARTIAL completion per source PE whose block landed
 * in dst (allgather, alltoall), res = that PE, while the CQ has room. */
enum hoist_coll_kind {
	HOIST_COLL_BROADCAST = 1,
	HOIST_COLL_REDUCE = 2,
	HOIST_COLL_ALLREDUCE = 3,
	HOIST_COLL_ALLGATHER = 4,
	HOIST_COLL_ALLTOALL = 5,
	HOIST_COLL__COUNT
};

/* element types and operations: the numbering of hoist_type_t / hoist_op_t */
#define HOIST_COLL_TYPES 5u /* int32, int64, uint64, float, double */
#define HOIST_COLL_OPS 7u   /* sum, prod, min, max, and, or, xor */
#define HOIST_COLL_TYPE_FLOAT 3u
#define HOIST_COLL_OP_AND 4u

#define HOIST_COLL_F_PARTIAL 0x1u /* post a partial CQE per arrived source block */
/* HOIST_COLL_F_NODE: ONE descriptor stands for every PE of this node in
 * the job's collective number reserved0 (the PEs' count of collectives
 * called before it, the daemon's numbering of their HOIST_OP_COLL
 * descriptors); the daemon reads each local PE's parameters from slot
 * local_off % HOIST_NC_SLOTS (local_off = the node collective's number m)
 * of its node-collective block at heap offset remote_off (struct
 * hoist_nc_hdr, client/nodecoll.c), its contribution from the slot's data
 * when the slot says eager, else from its src. No CQE: the daemon stores
 * the result in slot m of PE sqe.pe (the node's lowest rank, "anchor"):
 * res, then fin = m (release), and wakes nc_seq in the anchor's heap wake
 * line. kind/type/op/len of the descriptor are ignored; reserved1 is 0,
 * or an errno (1..4095) from a PE of the node that cannot take part
 * (it could not map a peer's heap, client/nodecoll.c): the daemon then
 * fails collective reserved0 on every node and the job on this one. */
#define HOIST_COLL_F_NODE 0x2u

struct hoist_coll_args {
	uint8_t kind;  /* enum hoist_coll_kind */
	uint8_t type;  /* reductions: hoist_type_t */
	uint8_t op;    /* reductions: hoist_op_t */
	uint8_t flags; /* HOIST_COLL_F_* */
	uint32_t reserved0; /* must be 0 */
	uint64_t reserved1; /* must be 0 */
};
_Static_assert(sizeof(struct hoist_coll_args) == HOIST_INLINE_MAX, "coll args fit inline_data");

static inline uint32_t hoist_coll_type_size(uint8_t type)
{
	return type == 0 || type == 3 ? 4u : 8u;
}

/* ---- completion (CQE) ------------------------------------------------ */

/* cqe.flags */
#define HOIST_CQE_F_PARTIAL 0x1u /* HOIST_OP_COLL: the block of PE res arrived; not the end */
#define HOIST_CQE_F_DATA    0x2u /* GET with HOIST_SQE_F_INLINE, res 0: data[0, len) is its result */
/* The slot's lap parity: the daemon's publication of the CQE, as
 * HOIST_SQE_F_PHASE is the client's of an SQE (see hoist_cqe_ready) */
#define HOIST_CQE_F_PHASE   0x8000u

/* A get's result that fits here travels in its completion (HOIST_SQE_F_INLINE) */
#define HOIST_CQE_DATA_MAX 16u

/* 32 bytes, two per cache line: the data share the line the client must
 * read anyway for user_data and res. */
struct hoist_cqe {
	uint64_t user_data; /* from the SQE */
	union {
		struct {
			int32_t res;     /* 0 or -errno */
			uint16_t opcode; /* the SQE's opcode, for diagnostics */
			uint16_t flags;  /* HOIST_CQE_F_*, else 0 */
		};
		uint64_t word; /* the three as one: stored last, with release */
	};
	uint8_t data[HOIST_CQE_DATA_MAX]; /* HOIST_CQE_F_DATA only, else undefined */
};

/* ---- control page ---------------------------------------------------- */

/* ctrl.sq_flags (written by the daemon) */
#define HOIST_SQ_NEED_WAKEUP 0x1u /* daemon sleeps: ring the doorbell */
/* Added to sq_flags each time the daemon sets HOIST_SQ_NEED_WAKEUP (bits
 * 8-31 count its sleeps): a client rings once per sleep, not once per
 * descriptor posted while the daemon has not woken yet (client/ring.h). */
#define HOIST_SQ_SLEEP_GEN   0x100u
/* ctrl.cq_flags (written by the client) */
#define HOIST_CQ_WAITING    0x1u /* client sleeps on the cq_tail futex */
#define HOIST_EPOCH_WAITING 0x2u /* client sleeps on the barrier_epoch futex */
#define HOIST_CQ_DETACHED   0x4u /* client finalized: its hang-up is not a death */

#define HOIST_ALIGNED_LINE _Alignas(HOIST_CACHELINE)

struct hoist_ctrl {
	/* line 0: immutable after attach (written by the daemon before the fds
	 * are sent, so the SCM_RIGHTS handoff orders them). */
	uint64_t magic;
	uint32_t abi_version;
	uint32_t sq_entries;  /* power of two */
	uint32_t cq_entries;  /* power of two */
	uint32_t sq_off;      /* byte offset of the SQ in the ring region */
	uint32_t cq_off;      /* byte offset of the CQ in the ring region */
	int32_t rank;
	int32_t size;
	uint32_t reserved0;
	uint64_t staging_bytes;
	uint64_t heap_bytes;
	uint64_t ring_bytes;  /* total size of the ring region */

	HOIST_ALIGNED_LINE uint32_t sq_head; /* daemon: consumed SQEs */
	HOIST_ALIGNED_LINE uint32_t sq_tail; /* client: published SQEs */
	HOIST_ALIGNED_LINE uint32_t sq_flags; /* daemon: HOIST_SQ_* */
	HOIST_ALIGNED_LINE uint32_t cq_head; /* client: consumed CQEs */
	HOIST_ALIGNED_LINE uint32_t cq_tail; /* daemon: posted CQEs (futex word) */
	HOIST_ALIGNED_LINE uint32_t cq_flags; /* client: HOIST_CQ_* */
	/* client, stored before it sets HOIST_CQ_WAITING (the same fence
	 * orders both): the user_data of the completion its sleep waits for,
	 * 0 for any. The daemon wakes it only for that completion, or once
	 * the completions published since it slept fill half the CQ (it must
	 * reap them): a quiet behind 64 staged gets sleeps once, where every
	 * landing woke it (daemon/stages/complete.c cq_flush). */
	uint64_t cq_wake_ud;
	/* daemon: completed barriers of this job (futex word), and a sticky
	 * job-wide error (-errno) once the job can no longer synchronise,
	 * e.g. because one of its PEs died. */
	HOIST_ALIGNED_LINE uint32_t barrier_epoch;
	int32_t job_error;
	/* client: point-to-point waits (hoist_wait_until*): calls that had to
	 * wait, sleeps on the heap wake line, and sleeps ended by a writer
	 * (woken, or the sequence moved before the sleep began) rather than
	 * by the timeout. The daemon reports them in its client rows. */
	HOIST_ALIGNED_LINE uint64_t p2p_waits;
	uint64_t p2p_sleeps;
	uint64_t p2p_wakeups;
	/* client: waits for the daemon (completions, barrier epochs) and
	 * node barriers (client/wait.c): sched_yield calls of their spin phase, those that
	 * came back only after HOIST_YIELD_LONG_US (another thread had the
	 * CPU that long: the spin ended and the wait slept at once), and
	 * futex sleeps. The daemon reports them in its client rows. */
	uint64_t wait_yields;
	uint64_t wait_long_yields;
	uint64_t wait_sleeps;
	/* client, as a writer into same-node heaps (direct puts and atomics):
	 * FUTEX_WAKEs it sent to a PE sleeping in hoist_wait_until*, and the
	 * wakes it skipped because that PE waits on words the write did not
	 * touch (hoist_heap_touched_range). Reported like the above. */
	uint64_t heap_wakes_direct;
	uint64_t heap_wakes_direct_skipped;
	uint64_t wait_handoffs; /* waits begun on the progress thread's CPU (below) */
	/* Who runs where, for waits on a shared CPU (client/wait.c,
	 * daemon/progress.c): sched_getcpu() + 1, 0 when not known. prog_cpu
	 * (daemon): the CPU its progress thread last ran on, stored only
	 * when it changed. wait_cpu (client): the CPU it waits for a
	 * completion on, stored at the start of such a wait, 0 after it.
	 * When the two match, spinning only delays the other: the client
	 * yields at once instead of spinning first, and the progress thread
	 * yields right after a pass that did work. */
	HOIST_ALIGNED_LINE uint32_t prog_cpu;
	HOIST_ALIGNED_LINE uint32_t wait_cpu;
};

_Static_assert(sizeof(struct hoist_sqe) == 64, "SQE must be one cache line");
_Static_assert(offsetof(struct hoist_sqe, inline_data) == 48, "SQE layout");
_Static_assert(sizeof(struct hoist_cqe) == 32, "CQE is 32 bytes");

/* ---- CQE publication -------------------------------------------------
 * The same for completions, daemon to client: HOIST_CQE_F_PHASE in flags
 * is the slot's lap parity. The daemon composes its completions aside and
 * publishes them (cq_flush, after its release of sq_head) each in one
 * go: data, user_data, then the word holding res, opcode and flags with
 * the slot's phase, with release; then cq_tail (release: the futex word a
 * sleeping client waits on, woken as before). A waiting client polls the
 * CQE at its cq_head (acquire of that word) instead of cq_tail and reads
 * the rest from the line it just fetched: one line instead of two in a
 * row (issue 16). cq_tail is stored after the phases, so with every
 * published CQE reaped cq_tail == cq_head, the value a sleep expects (a
 * client may reap by phase before cq_tail moved: its futex wait then
 * returns at once and it looks again). */
static inline uint16_t hoist_cqe_phase(uint32_t idx, uint32_t entries)
{
	return (idx & entries) ? 0u : (uint16_t)HOIST_CQE_F_PHASE;
}

static inline int hoist_cqe_ready(const struct hoist_cqe *e, uint32_t idx, uint32_t entries)
{
	/* pairs with the daemon's release store of the word (cq_flush) */
	struct hoist_cqe h;
	h.word = __atomic_load_n(&e->word, __ATOMIC_ACQUIRE);
	return (h.flags & HOIST_CQE_F_PHASE) == hoist_cqe_phase(idx, entries);
}
_Static_assert(offsetof(struct hoist_cqe, data) == 16, "CQE layout");
_Static_assert(offsetof(struct hoist_ctrl, sq_head) == 64, "ctrl layout");
_Static_assert(offsetof(struct hoist_ctrl, sq_tail) == 128, "ctrl layout");
_Static_assert(offsetof(struct hoist_ctrl, cq_tail) == 320, "ctrl layout");
_Static_assert(offsetof(struct hoist_ctrl, barrier_epoch) == 448, "ctrl layout");
_Static_assert(sizeof(struct hoist_ctrl) <= HOIST_CTRL_BYTES, "ctrl fits a page");

/* ---- heap wake line -------------------------------------------------------
 * Waking a PE that waits for a variable of its own heap (hoist_wait_until).
 * Every writer of a PE's heap -- its daemon (same-node copies, tcp puts and
 * pack elements, collectives' results) and same-node PEs storing directly
 * through their mapping of it -- calls hoist_heap_touched() after the data
 * is stored. The waiter, after its spin budget: stores waiting = 1, full
 * fence, reads seq, rechecks its variable, then FUTEX_WAITs on seq. The
 * writer: data stored, full fence, loads waiting; only when it is set does
 * it bump seq and FUTEX_WAKE (Dekker as with HOIST_CQ_WAITING: either the
 * waiter's recheck sees the data or the writer sees the flag). Cheap when
 * nobody sleeps: a fence and one load.
 *
 * Only writes that cover what the waiter waits on wake it: before it sets
 * waiting, the waiter stores the heap-file range [wait_lo, wait_hi) of
 * its variables (a superset: every variable of a vector wait, parted or
 * not). A writer that knows the range [off, off + len) it wrote
 * (hoist_heap_touched_range) reads the range after the flag and skips the
 * wake (no seq bump, no FUTEX_WAKE) when the two do not overlap. Both
 * range words are stored before the waiter's fence and read after the
 * writer's, so a writer whose fence follows the waiter's sees this wait's
 * range (or a later wait's, stored after this wait ended); a writer whose
 * fence comes first is seen by the waiter's recheck instead. A writer that
 * does not know its range (a collective's result, a batch of strided
 * elements) calls hoist_heap_touched: a wake whatever the range.
 *
 * Data the NIC places (verbs RDMA WRITE) runs no CPU on this node, so no
 * bump: the waiter's futex sleep is bounded (HOIST_WAIT_POLL_MS, default
 * 50 ms, the client's liveness slice too) and rechecks then. */
#define HOIST_HEAP_WAKE_BYTES HOIST_CACHELINE

struct hoist_heap_wake {
	uint32_t seq;     /* writers: bumped when waiting is set (futex word) */
	uint32_t waiting; /* owner: 1 while it sleeps on seq */
	/* The node barrier of a one-node job (libhoist, client/sync.c),
	 * written by the PEs alone, never by the daemon. nb_in, in every PE's
	 * own line: the node barriers it arrived at (a release store); barrier
	 * k is complete for a PE once every PE's nb_in reached k (one line
	 * from each PE, no shared counter: a 2-PE barrier is one line each
	 * way, both at once). The rest in the lowest rank's line only: a
	 * waiter announces itself in nb_sleepers (full fence), reads nb_gen,
	 * rechecks the nb_in words and FUTEX_WAITs on nb_gen; an arriving PE,
	 * after its store and a full fence, bumps nb_gen and FUTEX_WAKEs it
	 * when nb_sleepers is not 0 (Dekker, as above). The last PE to arrive
	 * that finds the daemon gone stores -ECONNRESET in nb_error instead
	 * of arriving (sticky), bumps nb_gen and wakes the others. */
	uint32_t nb_in;
	uint32_t nb_gen;
	uint32_t nb_sleepers;
	int32_t nb_error;
	/* The node collectives of such a job (client/nodecoll.c), in the
	 * lowest rank's line too: a PE that waits for the others' progress
	 * words (struct hoist_nc_hdr) announces itself in nc_sleepers (full
	 * fence), reads nc_seq, rechecks and FUTEX_WAITs on nc_seq; a PE
	 * that stored its progress word, after a full fence, bumps nc_seq and
	 * FUTEX_WAKEs it when nc_sleepers is not 0. nc_error: a PE that could
	 * not take part (it could not map a peer's heap) stores its -errno
	 * (sticky): every node collective fails with it, nobody waits. */
	uint32_t nc_seq;
	uint32_t nc_sleepers;
	int32_t nc_error;
	/* in every PE's own line: its HOIST_DIRECT, stored at attach (before
	 * the job's first barrier). The node collectives run only when every
	 * PE's is 1, so every PE takes the same path. */
	uint32_t direct;
	/* the owner, while waiting is set: the heap-file range it waits on
	 * (see above); written before waiting, read by writers after it */
	uint64_t wait_lo, wait_hi;
};
_Static_assert(sizeof(struct hoist_heap_wake) <= HOIST_HEAP_WAKE_BYTES, "wake line fits");

/* ---- node collectives -------------------------------------------------------
 * A one-node job (every PE on this node, HOIST_DIRECT=1) runs its
 * collectives among its PEs through shared memory (client/nodecoll.c); in
 * a job over several nodes the PEs of each node with 2+ of them meet the
 * same way and one posts a HOIST_COLL_F_NODE descriptor for the node (the
 * daemon reads the slots and answers in the anchor's: fin, res).
 * Each PE owns a block of its own heap at the same offset on every PE
 * (allocated after the job's first barrier), which the other PEs read
 * through their mappings of the heap: a header, then HOIST_NC_SLOTS slots,
 * then (read over several nodes, the anchor's only) HOIST_NC_SLOTS inbox
 * entries (struct hoist_nc_inbox below).
 * Collective m (the PE's m-th, from 1) uses slot m % HOIST_NC_SLOTS: its
 * parameters and, when every PE's contribution fits HOIST_NC_EAGER bytes,
 * a copy of it (eager: the PE's src is free once it arrived); bigger
 * ones are read from the PEs' src in place. The slot's seq = m says
 * that the slot holds collective m. In a one-node job it is stored last
 * (release) and is what the others poll (one line for the flag, the
 * parameters and a small contribution's start); arrived = m too, which
 * they do not read. Over several nodes seq is stored relaxed and
 * arrived = m (release) is the flag the node's PEs poll; the daemon
 * checks seq = m in every local slot of a node descriptor (-EPROTO if
 * not). done = m once this PE has read everything
 * it reads of collectives <= m (then their slots may be reused and, for
 * the ones read in place, their src changed). The words only grow. */
#define HOIST_NC_SLOTS 32u
#define HOIST_NC_EAGER 1024u

struct hoist_nc_hdr {
	uint32_t arrived;
	uint32_t done;
	/* bit m % 64: collective m is an eager broadcast of which this PE is
	 * the root (it returned at once and reads nothing of it); written at
	 * its start, before the slot's seq. Valid for m until the PE starts
	 * m + 64, which cannot happen before every PE completed m */
	uint64_t early;
	uint8_t pad0[HOIST_CACHELINE - 16];
	/* unused, 0 (reserved; an eager broadcast root's verdict travels in
	 * its slot: hoist_nc_args.verdict) */
	uint32_t err_seq;
	int32_t err;
	uint8_t pad1[HOIST_CACHELINE - 8];
};

struct hoist_nc_args {
	uint32_t seq;     /* the collective's number m */
	uint8_t kind, type, op, eager;
	int32_t root;
	int32_t bad;      /* 0, or this PE's -errno for its own parameters */
	uint64_t len;     /* as in the descriptor (sqe.len) */
	uint64_t src_off, dst_off; /* heap-file offsets */
	/* a job over several nodes (HOIST_COLL_F_NODE), the anchor's slot only:
	 * written by the daemon, res first, then fin = seq (release) */
	uint32_t fin;
	int32_t res;
	uint32_t claim;   /* anchor's slot: 0, then 1 by the PE that posts */
	/* one node, the slot of an eager broadcast's root (which checks
	 * nothing itself): 0, or the -errno another PE found when it compared
	 * every PE's parameters, stored before that PE's done reaches seq */
	int32_t verdict;
	/* one node: a contribution of at most HOIST_NC_INLINE bytes is here,
	 * not in data (the readers take flag, parameters and data from one
	 * line); over several nodes it is in data, where the daemon reads it */
	uint8_t inl[8];
};
#define HOIST_NC_INLINE 8u

struct hoist_nc_slot {
	struct hoist_nc_args a;
	char data[HOIST_NC_EAGER];
};

/* A job over several nodes, an eager broadcast whose root is on another
 * node (ABI 11): the daemon copies the data into the node's inbox, entry
 * m % HOIST_NC_SLOTS of the anchor's block (after the slots), as soon as
 * it arrives from the root's node -- before this node's PEs are all there
 * when every local PE's done reached m - HOIST_NC_SLOTS by then (nobody
 * reads the entry's last use any more), else when the node's descriptor
 * comes (every local PE arrived at m: the same holds). It writes every
 * field, then seq = m (release), then wakes the node's sleepers as for
 * fin. The node's PEs take the data from here (and compare their
 * parameters with the root's here), not from their dst: the daemon writes
 * no local dst of such a broadcast, and the verdict of the other nodes'
 * parameters comes later with fin, as on the root's node. */
struct hoist_nc_inbox {
	uint32_t seq;  /* the node collective's number m, stored last */
	uint32_t dseq; /* the job's number of it (coll_calls) */
	int32_t root;
	uint8_t kind, pad0[3];
	uint64_t len;
	uint8_t pad1[HOIST_CACHELINE - 24];
	char data[HOIST_NC_EAGER];
};

#define HOIST_NC_INBOX_OFF (sizeof(struct hoist_nc_hdr) + HOIST_NC_SLOTS * sizeof(struct hoist_nc_slot))
#define HOIST_NC_BYTES     (HOIST_NC_INBOX_OFF + HOIST_NC_SLOTS * sizeof(struct hoist_nc_inbox))
_Static_assert(sizeof(struct hoist_nc_inbox) == HOIST_CACHELINE + HOIST_NC_EAGER, "nc inbox entry");

static inline struct hoist_nc_inbox *hoist_nc_inbox_at(char *block, uint32_t m)
{
	return (struct hoist_nc_inbox *)(block + HOIST_NC_INBOX_OFF) + m % HOIST_NC_SLOTS;
}
_Static_assert(sizeof(struct hoist_nc_hdr) == 2 * HOIST_CACHELINE, "nc header lines");
_Static_assert(sizeof(struct hoist_nc_args) == HOIST_CACHELINE, "nc args line");

static inline struct hoist_heap_wake *hoist_heap_wake_of(void *heap_base, uint64_t heap_bytes)
{
	return (struct hoist_heap_wake *)((char *)heap_base + heap_bytes - HOIST_HEAP_WAKE_BYTES);
}

/* A writer changed [off, off + len) of the heap whose wake line is w: 1
 * when the owner sleeps on a range that overlaps it and the caller must
 * FUTEX_WAKE &w->seq (seq already bumped); -1 when the owner sleeps on a
 * range the write does not touch (no wake needed: count it as skipped);
 * 0 when nobody sleeps. */
static inline int hoist_heap_touched_range(struct hoist_heap_wake *w, uint64_t off, uint64_t len)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* pairs with the waiter's fence */
	if (!__atomic_load_n(&w->waiting, __ATOMIC_RELAXED))
		return 0;
	uint64_t lo = __atomic_load_n(&w->wait_lo, __ATOMIC_RELAXED);
	uint64_t hi = __atomic_load_n(&w->wait_hi, __ATOMIC_RELAXED);
	if (off >= hi || (off < lo && lo - off >= len)) /* no overlap (no overflow) */
		return -1;
	__atomic_fetch_add(&w->seq, 1, __ATOMIC_SEQ_CST);
	return 1;
}

/* The same for a write whose range the caller does not know: 1 (wake) or
 * 0, as above. */
static inline int hoist_heap_touched(struct hoist_heap_wake *w)
{
	return hoist_heap_touched_range(w, 0, UINT64_MAX);
}

/* ---- prefetch table ------------------------------------------------------
 * With automatic overlap a fourth region holds the daemon's prefetches of
 * the current phase: nslots slots, then (page aligned) the arena with the
 * data. The daemon fills a slot when its prefetch has landed; the client
 * may then serve a matching get itself, without a round trip to the
 * daemon, but only while the daemon has consumed every descriptor the
 * client posted (sq_head == sq_tail: an own put that invalidated the slot
 * has been seen). */
#define HOIST_PF_EMPTY 0u
#define HOIST_PF_READY 1u /* daemon: the data of (pe, off, len) is at arena_off */
#define HOIST_PF_TAKEN 2u /* client: served from here */

struct hoist_pf_slot {
	uint32_t state; /* HOIST_PF_* */
	uint32_t gen;   /* phase run it belongs to (both sides count phases) */
	int32_t pe;
	uint32_t len;
	uint64_t off;
	uint64_t arena_off;
};
_Static_assert(sizeof(struct hoist_pf_slot) == 32, "prefetch slot is 32 bytes");

/* ---- memory ordering helpers -----------------------------------------
 * Every acquire names the release it pairs with on the other side. */

/* Producer publishes entries up to *p (SQ tail by client, CQ tail by the
 * daemon). Pairs with hoist_load_acquire() of the same word by the consumer. */
static inline void hoist_store_release(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Consumer reads the producer's tail (or the producer reads the consumer's
 * head) before touching entries. Pairs with hoist_store_release(). */
static inline uint32_t hoist_load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline uint32_t hoist_load_relaxed(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void hoist_store_relaxed(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* Sleep/wake handshake (Dekker): the sleeper stores its flag, full fence,
 * rechecks the ring; the waker stores the ring index, full fence, loads the
 * flag. One of the two always sees the other's store. */
static inline void hoist_smp_mb(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static inline void hoist_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/* ---- ring geometry ---------------------------------------------------- */

static inline int hoist_is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* Entries a producer may still publish given its tail and the consumer's
 * head (both free-running). */
static inline uint32_t hoist_ring_space(uint32_t head, uint32_t tail, uint32_t entries)
{
	return entries - (tail - head);
}

static inline uint64_t hoist_pf_arena_off(uint32_t nslots)
{
	return ((uint64_t)nslots * sizeof(struct hoist_pf_slot) + 4095) & ~(uint64_t)4095;
}

static inline uint64_t hoist_ring_sq_off(void)
{
	return HOIST_CTRL_BYTES;
}

static inline uint64_t hoist_ring_cq_off(uint32_t sq_entries)
{
	return HOIST_CTRL_BYTES + (uint64_t)sq_entries * sizeof(struct hoist_sqe);
}

static inline uint64_t hoist_ring_bytes(uint32_t sq_entries, uint32_t cq_entries)
{
	uint64_t b = hoist_ring_cq_off(sq_entries) + (uint64_t)cq_entries * sizeof(struct hoist_cqe);
	return (b + 4095) & ~(uint64_t)4095;
}

static inline struct hoist_sqe *hoist_ctrl_sq(struct hoist_ctrl *c)
{
	return (struct hoist_sqe *)((char *)c + c->sq_off);
}

static inline struct hoist_cqe *hoist_ctrl_cq(struct hoist_ctrl *c)
{
	return (struct hoist_cqe *)((char *)c + c->cq_off);
}

/* Overflow-safe "off + len <= size". */
static inline int hoist_range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

#endif /* HOIST_SHM_H */
