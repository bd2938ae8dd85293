/*
 * hoist.h - the public API of libhoist.
 *
 * A program links libhoist and talks to this node's hoistd through shared
 * memory. Every call returns 0 (or a non-negative value where documented)
 * on success and a negative errno on failure; errno is never touched and
 * the library never prints. hoist_strerror() explains a code.
 *
 * Error codes used:
 *   -ENOTCONN    hoist_init() has not succeeded (or hoist_finalize() ran)
 *   -EINVAL      bad argument (PE outside the job, NULL buffer, ...)
 *   -EFAULT      a symmetric address (put dst, get src) or range is not
 *                inside the caller's symmetric heap (or, with
 *                HOIST_INIT_SYMMETRIC_DATA, inside its data segment)
 *   -ENOMEM      out of memory (staging or heap)
 *   -ETIMEDOUT   the job did not assemble (not every rank attached) in time,
 *                or the daemon did not answer within its deadline
 *   -EACCES      permission denied: the caller may not use the daemon's
 *                socket, or the daemon serves another user only
 *   -EPERM       hoist_init() refused the daemon before sending anything:
 *                the runtime directory (owner, mode), its socket (owner) or
 *                the listening process (uid) is neither root's nor the
 *                caller's
 *   -EADDRINUSE  this rank of the job is already attached
 *   -ECONNRESET  the daemon went away, or a PE this operation needs died
 *   -EPROTO      daemon and library speak different ABI versions
 *   -ENOENT      no daemon is listening in the runtime directory
 *
 * Environment read by hoist_init():
 *   HOIST_RUNTIME_DIR  where hoistd's attach socket lives (default: /run/hoist
 *                      as root, $XDG_RUNTIME_DIR/hoist or /tmp/hoist-<uid>)
 *   HOIST_RANK/HOIST_SIZE, OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE,
 *   SLURM_PROCID/SLURM_NTASKS           rank and size, first found wins
 *   HOIST_JOB           job key; else derived from the launcher's job id
 *   HOIST_HEAP_SIZE     symmetric heap bytes (suffix k/m/g/t, as in
 *                      hoistd.conf), default 64m
 *   HOIST_SYMMETRIC_DATA  1: hoist_init() is hoist_init_with(
 *                       HOIST_INIT_SYMMETRIC_DATA); 0 (default): it is not
 *   HOIST_SPIN_US       how long a waiting call spins before it sleeps
 *   HOIST_YIELD_LONG_US a wait's yield back only after this long (default
 *                       200 us; 0: never) means a thread that keeps the CPU
 *                       shares it: the wait (and the next 64) sleep at once
 *   HOIST_CPU_HANDOFF   1 (default): a wait for the daemon that starts on
 *                       the CPU its progress thread last ran on yields at
 *                       once instead of spinning (they take turns); 0: off
 *   HOIST_AUTO          1 (default): puts complete lazily, gets of repeated
 *                       phases are prefetched; 0: every put completes
 *                       remotely before it returns, no prefetch (baseline)
 *   HOIST_DIRECT        1 (default): put/get and atomics to a PE of the same
 *                       node are done by the library (see hoist_ptr); 0: by
 *                       the daemon
 *   HOIST_WAIT_POLL_MS  bound (default 50) of one sleep of hoist_wait_until*:
 *                       it rechecks then (NIC-placed data wakes nobody)
 *   HOIST_ATTACH_TIMEOUT_MS  deadline (default 60000) for each immediate
 *                       answer of the daemon: the first answer to the attach
 *                       request and each peer heap request of hoist_ptr; the
 *                       final attach reply then gets the daemon's
 *                       job_timeout_ms + 5 s
 */
#ifndef HOIST_H
#define HOIST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HOIST_VERSION_MAJOR 0
#define HOIST_VERSION_MINOR 1

int hoist_init(void);     /* attach to this node's hoistd; 0 or -errno */

/* hoist_init with options (0: the same as hoist_init). 0 or -errno;
 * -EINVAL for an unknown flag, or for HOIST_INIT_SYMMETRIC_DATA when hoist
 * is initialised already without it (a second call otherwise returns 0). */
int hoist_init_with(unsigned flags);
/* Global and static variables of the program are symmetric: a put, get,
 * atomic, put-with-signal, collective buffer, wait or hoist_ptr on the
 * address of a global or `static` variable of the main executable works on
 * every PE's copy of that variable, as on hoist_malloc'ed memory, on every
 * path (direct, daemon, tcp, verbs), position-independent executables and
 * ASLR included. HOIST_SYMMETRIC_DATA=1 in the environment turns it on for
 * hoist_init() too. Where this header says "the symmetric heap", it then
 * means the heap and the executable's data segment (a range must lie wholly
 * in one of them).
 *
 * How: hoist_init_with finds the executable's writable data segment
 * (.data and .bss, whole pages, without what is read-only after
 * relocation), asks the daemon for a heap file that much (plus one page)
 * larger, copies the segment into the file after the heap proper and maps
 * that part of the file over the segment; it then waits in a barrier, so
 * that no PE returns (and puts to another's statics) before every PE has
 * moved its data. HOIST_HEAP_SIZE stays the
 * heap hoist_malloc hands out (rounded up to a page); the daemon's
 * max_heap_bytes applies to the sum.
 *
 * Conditions: every PE of the job runs the same executable and passes the
 * flag (a PE whose heap file size differs is refused by the daemon, and
 * hoist_error_detail() says why; a different executable with a data
 * segment of the same size is not detected). Only the main executable's
 * data is symmetric, not that of shared libraries. Call it while the
 * program has one thread (no other thread may store to globals while the
 * segment is copied). After fork() the child shares the segment with the
 * parent (MAP_SHARED) until it execs. hoist_finalize() makes the segment
 * private memory again, with the contents it has then. */
#define HOIST_INIT_SYMMETRIC_DATA 0x1u
int hoist_finalize(void); /* quiet, barrier, detach */
int hoist_rank(void);     /* this PE's rank, or -ENOTCONN */
int hoist_size(void);     /* number of PEs in the job, or -ENOTCONN */

/* Collective; symmetric: same offset on every PE; NULL on failure.
 * Returned memory is 64-byte aligned and never includes the heap's last
 * 64 bytes (its wake line, see hoist_wait_until); its contents are unspecified (heap
 * memory never allocated before reads as zero, memory hoist_free returned and
 * a later hoist_malloc hands out again is not cleared). */
void *hoist_malloc(size_t size);
void hoist_free(void *ptr); /* collective */

/* dst of a put and src of a get are symmetric addresses (inside the caller's
 * own symmetric heap; the same offset is used at pe). */
int hoist_put(int pe, void *dst, const void *src, size_t n);     /* src reusable on return; remote completion deferred */
int hoist_get(void *dst, int pe, const void *src, size_t n);     /* data in dst on return */
int hoist_put_nbi(int pe, void *dst, const void *src, size_t n); /* src untouched until hoist_quiet */
int hoist_get_nbi(void *dst, int pe, const void *src, size_t n); /* dst valid after hoist_quiet */
int hoist_fence(void);           /* orders puts to each PE */
int hoist_quiet(void);           /* all outstanding puts/gets complete */
int hoist_barrier(void);         /* = notify + wait */
int hoist_barrier_notify(void);  /* implies quiet */
int hoist_barrier_wait(void);
const char *hoist_strerror(int err);

/* Additions beyond the base API. */

/* Is [ptr, ptr+n) inside the caller's symmetric heap (or wholly inside its
 * data segment, with HOIST_INIT_SYMMETRIC_DATA)? 1 yes, 0 no. */
int hoist_is_symmetric(const void *ptr, size_t n);

/* Start a new program phase named id, for programs that synchronise by
 * other means than hoist_barrier (whose call site names the phase after
 * it). The daemon records each phase's gets and, when the phase runs
 * again, prefetches them (HOIST_AUTO=1, the default). Returns at once; the
 * daemon starts the new phase once the caller's earlier puts and gets
 * completed (as for a barrier), so later operations queue behind it.
 * 0 or -errno. */
int hoist_phase(uint64_t id);

/* Node-local direct access. If pe runs on the same node as the caller
 * (attached to the same hoistd), returns the address at which the caller
 * can load and store pe's copy of the symmetric object sym_addr directly
 * (plain loads/stores, memcpy, atomics of the compiler); NULL otherwise:
 * pe on another node, pe outside [0, hoist_size()), sym_addr not inside
 * the caller's symmetric heap, a peer that had left, or before hoist_init /
 * after hoist_finalize. For the caller's own pe it returns sym_addr.
 *
 * The daemon hands over the peer's heap (a sealed memfd) the first time the
 * program asks for that pe (one request to the daemon, then no more); the
 * mapping stays until hoist_finalize(), which unmaps it: pointers obtained
 * here are invalid afterwards. Accesses through the pointer are ordinary
 * memory accesses of this process: they are not ordered with hoist_put /
 * hoist_get still in flight, and other PEs see them after a barrier (or
 * another synchronisation of the program's own). If the peer dies, the
 * mapping stays valid memory (no SIGBUS): stores land in a heap nobody
 * reads any more.
 *
 * hoist_put/hoist_get (and the nbi forms) to a PE of this node use the same
 * mappings themselves when the result is the same as the daemon's: when
 * the daemon has consumed everything this PE posted (then every earlier put
 * to a node-local PE has landed), no nbi get awaits its copy-out, the
 * caller is not inside an aggregation region and the job has no error. HOIST_DIRECT=0 in the environment turns that off (every
 * operation goes through the daemon; hoist_ptr still works). */
void *hoist_ptr(const void *sym_addr, int pe);

/* ---- strided and vector operations --------------------------------------
 * One call, one descriptor per staging chunk (not a loop of puts/gets):
 * the daemon packs the elements into as few network messages as fit
 * (60 KiB each) and the target daemon unpacks them. Blocking semantics as
 * hoist_put / hoist_get: the put's source is reusable on return (remote
 * completion deferred, as hoist_put; with HOIST_AUTO=0 it is complete),
 * the get's data is in dst on return.
 *
 * Strided: element i (0 <= i < count) of elem_size bytes is at
 * dst + i*dst_stride / src + i*src_stride; strides are in bytes and may be
 * negative, zero or smaller than elem_size. Elements are applied in index
 * order, so where elements overlap the highest index wins (a put with
 * stride 0 leaves the last element; a get with dst_stride 0 leaves the
 * last element in dst). count == 0 or elem_size == 0 is a no-op success.
 * -EFAULT if any remote element is outside the symmetric heap (nothing is
 * transferred), -EINVAL for a NULL local buffer or elem_size*count
 * overflowing. */
int hoist_put_strided(int pe, void *dst, ptrdiff_t dst_stride, const void *src,
		      ptrdiff_t src_stride, size_t elem_size, size_t count);
int hoist_get_strided(void *dst, ptrdiff_t dst_stride, int pe, const void *src,
		      ptrdiff_t src_stride, size_t elem_size, size_t count);

/* Vector (indexed): element k is [base + vec[k].off, +vec[k].len) at the
 * remote PE, base symmetric; the local data is packed contiguously, in
 * list order (sum of the lengths). Offsets may repeat or overlap (applied
 * in list order, the later wins); zero lengths are skipped; nvec == 0 is a
 * no-op. -EFAULT if an element is outside the symmetric heap (nothing is
 * transferred), -EINVAL for NULL buffers or a list whose total overflows. */
typedef struct {
	size_t off; /* bytes from the symmetric base */
	size_t len;
} hoist_vec_t;
int hoist_put_vec(int pe, void *dst_base, const hoist_vec_t *vec, size_t nvec, const void *src);
int hoist_get_vec(void *dst, int pe, const void *src_base, const hoist_vec_t *vec, size_t nvec);

/* ---- aggregation regions (seed 000, section 3.3) -------------------------
 * Between begin and end, puts and gets (plain, nbi, strided, vector) and
 * non-fetching atomics (hoist_atomic, _nbi; not signals) are held by the
 * daemon and sent at the end as one packed message per
 * destination node (several if over 60 KiB). Gets inside a region return
 * at once and complete at hoist_aggregate_end: do not read their dst (nor
 * put from it) before. A conflict ends aggregation early and the rest of
 * the region is issued normally: a get of a remote range an aggregated put
 * of the region writes (bounding box per PE), or a put from the dst of an
 * aggregated get. A fence, quiet or barrier inside the region sends (and,
 * quiet/barrier, completes) what was aggregated so far. Results are the
 * same as without the region. Regions nest (the outermost end sends). end returns the first
 * error of the region's operations. 0 or -errno (-EINVAL: end without
 * begin). */
int hoist_aggregate_begin(void);
int hoist_aggregate_end(void);

/* Why the last hoist_init() failed (the daemon's reason, or what was wrong
 * with the runtime directory or the daemon, and what to do), or "". */
const char *hoist_error_detail(void);

/* ---- collectives ----------------------------------------------------------
 * Over all PEs of the job. dst and src are symmetric (inside the caller's
 * heap); every PE calls the collectives in the same order with the same
 * kind, size, type, op and root. In a job whose PEs are all on one node
 * (HOIST_DIRECT=1 on every PE) they run among the PEs through shared
 * memory, without the daemon, from the job's second barrier on. In a job
 * over several nodes the PEs of a node holding 2+ of them (HOIST_DIRECT=1)
 * meet through shared memory the same way and ONE of them posts one
 * descriptor for the node: the daemon combines the node's data, exchanges
 * it with the other nodes' daemons, writes every local dst and tells the
 * node's PEs through shared memory. Otherwise (one PE on the node, or
 * HOIST_DIRECT=0) each call posts one descriptor and the daemon does the
 * same per PE. In place (dst == src) works.
 *
 * Ordering: the daemon reads src after this PE's earlier puts and gets
 * have completed (the collective waits for them, like a quiet); src must
 * not change and dst must not be read until the collective completed
 * (hoist_wait, or hoist_wait_from for one block). Completion is local: other
 * PEs may not have their results yet. Collectives are not barriers and do
 * not start phases; hoist_quiet does not wait for split-phase collectives.
 *
 * Errors: -EINVAL for a bad kind/type/op/root, bitwise operations (AND,
 * OR, XOR) on HOIST_FLOAT/HOIST_DOUBLE, a count whose bytes overflow, or
 * PEs that disagree on the parameters; -EFAULT when dst or src (with its
 * size) is not inside the heap; -ECONNRESET when a PE or node of the job
 * died (or a PE finalized without joining). An invalid call still takes
 * its place in the sequence: the collective fails on EVERY PE with the
 * error, nobody is left waiting. (A non-root PE of a reduce may complete
 * before a mismatch elsewhere is noticed: its dst is not written. On the
 * node path (above) the root of a broadcast of at most 1 KiB returns as
 * soon as its data is safe, before the others' parameters are known: the
 * others compare them and leave their verdict for it, and a mismatch is
 * returned to it by its next collective that waits for the others.) */
/* HOIST_UINT32 is for atomics and point-to-point waits (below): collectives refuse it, -EINVAL */
typedef enum {
	HOIST_INT32,
	HOIST_INT64,
	HOIST_UINT64,
	HOIST_FLOAT,
	HOIST_DOUBLE,
	HOIST_UINT32
} hoist_type_t;
typedef enum { HOIST_SUM, HOIST_PROD, HOIST_MIN, HOIST_MAX, HOIST_AND, HOIST_OR, HOIST_XOR } hoist_op_t;
typedef struct hoist_req hoist_req_t; /* opaque */

/* nbytes from root's src into every PE's dst */
int hoist_broadcast(void *dst, const void *src, size_t nbytes, int root);
/* element-wise op over every PE's src into root's dst (other dsts untouched);
 * integer SUM/PROD wrap around */
int hoist_reduce(void *dst, const void *src, size_t count, hoist_type_t type, hoist_op_t op, int root);
/* the same into every PE's dst; every PE gets bit-identical results */
int hoist_allreduce(void *dst, const void *src, size_t count, hoist_type_t type, hoist_op_t op);
int hoist_allgather(void *dst, const void *src, size_t nbytes);   /* dst holds size * nbytes */
int hoist_alltoall(void *dst, const void *src, size_t nbytes);    /* nbytes per pair of PEs */

/* Split-phase forms: post and return a request (several may be in flight,
 * interleaved with puts/gets); hoist_wait completes it. A NULL req is
 * -EINVAL (the collective still runs and is waited for). Requests and nbi
 * gets share the library's operation slots (half the daemon's CQ entries):
 * with every slot held by a request not yet waited for, a start returns
 * -EBUSY and posts nothing (every PE should see the same; a blocking
 * collective on the node path holds no slot and runs). An error of an
 * earlier operation (reported as by hoist_quiet) is returned after the
 * collective was posted and waited for: it still takes its place. */
int hoist_broadcast_start(void *dst, const void *src, size_t nbytes, int root, hoist_req_t **req);
int hoist_reduce_start(void *dst, const void *src, size_t count, hoist_type_t type, hoist_op_t op,
		       int root, hoist_req_t **req);
int hoist_allreduce_start(void *dst, const void *src, size_t count, hoist_type_t type, hoist_op_t op,
			  hoist_req_t **req);
int hoist_allgather_start(void *dst, const void *src, size_t nbytes, hoist_req_t **req);
int hoist_alltoall_start(void *dst, const void *src, size_t nbytes, hoist_req_t **req);
/* allgather/alltoall requests: returns 0 once the block from pe has landed
 * in dst (blocks are delivered as they arrive, in any order), or the
 * collective's error. -EINVAL for other kinds or pe outside the job.
 * On the node path (one node or several) the collective delivers every
 * block at once. On one node that is when every PE has started it (their
 * parameters must agree before anyone reads another's src) and this PE
 * has copied them; it returns then, before the other PEs have read this
 * PE's src (which must not change until hoist_wait), except when dst
 * overlaps src (in place: dst is written at the end). Over several nodes
 * it is when the daemon's result for the node arrived. */
int hoist_wait_from(hoist_req_t *req, int pe);
int hoist_wait(hoist_req_t *req);  /* completes and frees req; its result */
int hoist_test(hoist_req_t *req);  /* 1 complete (still hoist_wait it), 0 not yet, or -errno */

/* ---- point-to-point synchronisation ---------------------------------------
 * Waiting for variables of the caller's OWN symmetric heap that other PEs
 * (or the daemon, for remote PEs) write: puts, atomics and signals from any
 * PE, same node or not. ivar/ivars are symmetric addresses of the caller
 * (inside its heap, aligned to the type's size); ivars is an array of
 * nelems elements of the type. value's bits are read as the type (32-bit
 * types use its low 32 bits: pass the int32_t or uint32_t itself);
 * values (vector forms) is an array of nelems elements of the type, one per
 * variable. type is one of the four integer types of hoist_type_t
 * (HOIST_INT32, HOIST_UINT32, HOIST_INT64, HOIST_UINT64; a float type is
 * -EINVAL). OpenSHMEM's point-to-point types map onto them:
 * int, long, long long, int32_t, int64_t, ptrdiff_t onto the signed ones,
 * unsigned ..., uint32_t, uint64_t, size_t onto the unsigned ones (by size).
 *
 * status (may be NULL: every element takes part) is an array of nelems
 * ints: a nonzero entry leaves that element out, as in OpenSHMEM 1.5.
 *   all:  until every element taking part compares true (0 at once if none
 *         takes part);
 *   any:  until one does; *index names it (SIZE_MAX and 0 at once if none
 *         takes part);
 *   some: until at least one does; indices[] (nelems entries of room) get
 *         the indices of all that compare true then, in ascending order;
 *         returns how many (0 at once if none takes part).
 * The test forms do not wait: 1 (condition true; any/some fill index(es)
 * as above) or 0 (not now; test_some returns 0).
 *
 * A wait spins for HOIST_SPIN_US, then sleeps on a futex every writer of the
 * heap wakes (shm/hoist_shm.h, heap wake line), so a long wait burns no
 * core. Data a NIC places by RDMA (verbs) wakes nobody, nor do a
 * program's own stores through a hoist_ptr pointer: a sleeping wait
 * rechecks every HOIST_WAIT_POLL_MS (default 50) milliseconds, which is
 * also how often it checks that the daemon lives. When a wait returns, the
 * stores that made the condition true are visible, and so are stores the
 * writer ordered before them (hoist_fence / hoist_quiet between a data put
 * and a flag put).
 *
 * Errors: -EINVAL for an unknown type or comparison, a misaligned address,
 * NULL ivars (nelems > 0), values, index or indices, or nelems * size
 * overflowing; -EFAULT when the variables are not inside the caller's
 * symmetric heap (another PE's hoist_ptr address included); -ENOTCONN
 * before hoist_init; -ECONNRESET when the daemon went away during a wait;
 * the job's error when a PE of the job died during it. */
typedef enum {
	HOIST_CMP_EQ = 1, /* == */
	HOIST_CMP_NE,     /* != */
	HOIST_CMP_GT,     /* >  */
	HOIST_CMP_GE,     /* >= */
	HOIST_CMP_LT,     /* <  */
	HOIST_CMP_LE      /* <= */
} hoist_cmp_t;

int hoist_wait_until(void *ivar, hoist_type_t type, hoist_cmp_t cmp, uint64_t value);
int hoist_test_until(void *ivar, hoist_type_t type, hoist_cmp_t cmp, uint64_t value);

int hoist_wait_until_all(void *ivars, size_t nelems, const int *status, hoist_type_t type,
			 hoist_cmp_t cmp, uint64_t value);
int hoist_wait_until_any(void *ivars, size_t nelems, const int *status, hoist_type_t type,
			 hoist_cmp_t cmp, uint64_t value, size_t *index);
int64_t hoist_wait_until_some(void *ivars, size_t nelems, size_t *indices, const int *status,
			      hoist_type_t type, hoist_cmp_t cmp, uint64_t value);
int hoist_test_until_all(void *ivars, size_t nelems, const int *status, hoist_type_t type,
			 hoist_cmp_t cmp, uint64_t value);
int hoist_test_until_any(void *ivars, size_t nelems, const int *status, hoist_type_t type,
			 hoist_cmp_t cmp, uint64_t value, size_t *index);
int64_t hoist_test_until_some(void *ivars, size_t nelems, size_t *indices, const int *status,
			      hoist_type_t type, hoist_cmp_t cmp, uint64_t value);

/* vector forms: element i compares with values[i] */
int hoist_wait_until_all_vector(void *ivars, size_t nelems, const int *status,
				hoist_type_t type, hoist_cmp_t cmp, const void *values);
int hoist_wait_until_any_vector(void *ivars, size_t nelems, const int *status,
				hoist_type_t type, hoist_cmp_t cmp, const void *values,
				size_t *index);
int64_t hoist_wait_until_some_vector(void *ivars, size_t nelems, size_t *indices,
				     const int *status, hoist_type_t type, hoist_cmp_t cmp,
				     const void *values);
int hoist_test_until_all_vector(void *ivars, size_t nelems, const int *status,
				hoist_type_t type, hoist_cmp_t cmp, const void *values);
int hoist_test_until_any_vector(void *ivars, size_t nelems, const int *status,
				hoist_type_t type, hoist_cmp_t cmp, const void *values,
				size_t *index);
int64_t hoist_test_until_some_vector(void *ivars, size_t nelems, size_t *indices,
				     const int *status, hoist_type_t type, hoist_cmp_t cmp,
				     const void *values);
/* ---- remote atomics ----------------------------------------------------------
 * One operation on the naturally aligned word of a symmetric address dst
 * (inside the caller's heap; the same offset is used at pe) of any PE,
 * this one included. Types: HOIST_INT32, HOIST_UINT32, HOIST_INT64,
 * HOIST_UINT64 (every op; arithmetic wraps around) and HOIST_FLOAT,
 * HOIST_DOUBLE (FETCH, SET and SWAP only). value, cmp and fetched point at
 * one object of that type:
 *   FETCH      *fetched = *dst
 *   SET        *dst = *value
 *   SWAP       *fetched = *dst, *dst = *value
 *   CSWAP      *fetched = *dst, and if it equalled *cmp, *dst = *value
 *   ADD/INC    *dst += *value / 1; FETCH_ADD/FETCH_INC also *fetched = old
 *   AND/OR/XOR *dst op= *value; FETCH_AND/OR/XOR also *fetched = old
 * Unused pointers (cmp except CSWAP, value of FETCH/INC/FETCH_INC, fetched
 * of non-fetching ops) may be NULL.
 *
 * All atomics on one word are atomic with respect to each other, whichever
 * way they go: a PE of the same node does it itself on its mapping of pe's
 * heap (as hoist_ptr; HOIST_DIRECT=1, under the same conditions as direct
 * puts), otherwise this node's daemon does it (same node), or the daemon
 * of pe's node for it (tcp, verbs): always a CPU atomic on the target
 * node's memory. They are not atomic with plain puts or stores to the word.
 * Ordering with this PE's own puts and gets to the same remote range: as a
 * put that also reads (the daemon's conflict stage, HOIST_AUTO=1; with
 * HOIST_AUTO=0 hoist_fence/hoist_quiet order them).
 *
 * hoist_atomic: a fetching op has its result in *fetched on return; a
 * non-fetching one completes like hoist_put (remote completion deferred to
 * hoist_quiet, and to a PE of another node it may travel packed with other
 * small operations for that node; with HOIST_AUTO=0 complete on return).
 * hoist_atomic_nbi: returns at once; a fetching op writes *fetched at
 * hoist_quiet (do not read it before), errors are reported by hoist_quiet.
 * A fetching nbi atomic holds one of the library's operation slots (shared
 * with nbi gets and collective requests) until hoist_quiet.
 *
 * 0 or -errno: -EINVAL for pe outside the job, an unknown op or type, an
 * arithmetic or bitwise op on HOIST_FLOAT/HOIST_DOUBLE, dst not aligned to
 * the type's size, or a needed pointer that is NULL; -EFAULT when dst is
 * not inside the symmetric heap; -ECONNRESET when pe died. Nothing changes
 * at pe on an error. */
typedef enum {
	HOIST_AMO_FETCH,
	HOIST_AMO_SET,
	HOIST_AMO_SWAP,
	HOIST_AMO_CSWAP,
	HOIST_AMO_ADD,
	HOIST_AMO_FETCH_ADD,
	HOIST_AMO_INC,
	HOIST_AMO_FETCH_INC,
	HOIST_AMO_AND,
	HOIST_AMO_OR,
	HOIST_AMO_XOR,
	HOIST_AMO_FETCH_AND,
	HOIST_AMO_FETCH_OR,
	HOIST_AMO_FETCH_XOR
} hoist_amo_t;
int hoist_atomic(int pe, void *dst, hoist_amo_t op, hoist_type_t type, const void *value,
		 const void *cmp, void *fetched);
int hoist_atomic_nbi(int pe, void *dst, hoist_amo_t op, hoist_type_t type, const void *value,
		     const void *cmp, void *fetched);

/* ---- put-with-signal (OpenSHMEM 1.5 shmem_put_signal) ---------------------
 * hoist_put_signal(pe, dst, src, n, sig_addr, signal, sig_op) is
 * shmem_put_signal(dst, src, n, sig_addr, signal, sig_op, pe): put n bytes
 * from src to dst at pe, then update the 64-bit signal word sig_addr (a
 * symmetric address, 8-byte aligned) at pe with SET (the word becomes
 * signal) or ADD (signal is added, wrapping around). The signal update is a
 * remote atomic (hoist_atomic on HOIST_UINT64: atomic with every other
 * atomic on that word, whichever path) and becomes visible at pe only after
 * all n bytes are: a PE that reads the signal with hoist_signal_fetch and
 * sees the update sees the data. n == 0 updates the signal only.
 *
 * How: a put the library does itself (direct path, same node) is followed
 * by a release fence and the atomic; behind a put through the daemon
 * (another node, HOIST_DIRECT=0) the library posts the atomic at once and
 * the daemon holds it until every earlier operation of the caller has
 * completed, i.e. was placed at its target (every stripe and tcp lane
 * acknowledged): the caller waits for no round trip. Completion:
 * hoist_put_signal is blocking as hoist_put (src reusable on return; the
 * signal completes as a hoist_atomic, with HOIST_AUTO=0 on return, the put
 * with it, else by hoist_quiet); hoist_put_signal_nbi leaves both to
 * hoist_quiet (as hoist_put_nbi, a symmetric src may be read until then).
 *
 * 0 or -errno: -EINVAL for pe outside the job, an unknown sig_op or
 * sig_addr not 8-byte aligned; -EFAULT when dst..dst+n or sig_addr is not
 * inside the symmetric heap; errors of the put (then no signal is sent;
 * one found by the daemon or the target is reported by the next
 * hoist_quiet, and no signal follows an operation of the caller that
 * failed without a completion since its last quiet or barrier). */
typedef enum {
	HOIST_SIGNAL_SET = HOIST_AMO_SET, /* SHMEM_SIGNAL_SET */
	HOIST_SIGNAL_ADD = HOIST_AMO_ADD  /* SHMEM_SIGNAL_ADD */
} hoist_signal_op_t;
int hoist_put_signal(int pe, void *dst, const void *src, size_t n, uint64_t *sig_addr,
		     uint64_t signal, hoist_signal_op_t sig_op);
int hoist_put_signal_nbi(int pe, void *dst, const void *src, size_t n, uint64_t *sig_addr,
			 uint64_t signal, hoist_signal_op_t sig_op);
/* The caller's own signal word, read with an atomic acquire load (as
 * shmem_signal_fetch): after seeing a signal, the data put before it is
 * visible to this PE. */
uint64_t hoist_signal_fetch(const uint64_t *sig_addr);
/* Wait until the caller's own signal word compares true with value (as
 * shmem_signal_wait_until): hoist_wait_until on a HOIST_UINT64, the same
 * spin-then-sleep and the same errors; on 0 *observed (may be NULL) holds
 * the value that satisfied the comparison. */
int hoist_signal_wait_until(uint64_t *sig_addr, hoist_cmp_t cmp, uint64_t value,
			    uint64_t *observed);

/* libhoist is not thread-safe: call it from one thread of the process. */

#ifdef __cplusplus
}
#endif

#endif /* HOIST_H */
