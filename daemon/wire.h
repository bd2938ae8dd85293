/*
 * The daemon-to-daemon wire format of the tcp transport. Every frame is a
 * fixed 16-byte header, a type-specific extension header of `hlen` bytes,
 * and `plen` payload bytes. Fields are in the host order of x86-64 and
 * aarch64 (little endian); a peer of the other order fails the handshake.
 *
 * Record layer (frames.h, setting frame_integrity): a connection starts
 * with the plain handshake frames (W_HELLO, W_HELLO, W_AUTH; PeerHello
 * names each side's mode, which must agree). After it, with mac or
 * encrypt, each direction carries records [u32 len][body][16-byte AEAD
 * tag] instead of raw frames: the bodies, joined, are the frame stream
 * described here (a frame may span records, a record may hold many
 * frames). The receiver verifies (and with encrypt decrypts) a whole
 * record before it parses a byte of it; a record that fails (tampered,
 * replayed, reordered, dropped: the nonce is the record's sequence number
 * in its direction, never sent) drops the connection. With off the frames
 * follow the handshake as they are.
 *
 * Each daemon sends its requests on the connection it opened and receives
 * the replies on the same connection, so replies come back in request
 * order and the in-flight table is a ring. Requests for direct access
 * carry a remote key and address (what RDMA would use); requests that
 * missed the address cache name (job, PE, segment, offset) and are
 * resolved by the target daemon, whose reply piggybacks the cache entry.
 */
#ifndef HOISTD_WIRE_H
#define HOISTD_WIRE_H

#include <stdint.h>

/* 2: job ids are keyed hashes of (owner uid, job key), cluster_job_id();
 * 3: WIRE_COLL_F_CHECK (a daemon of 2 would wait for the check header that
 *    a daemon of 3 leaves out) */
#define WIRE_VERSION 3u
#define WIRE_MAX_PAYLOAD (64u << 20)
#define WIRE_MAX_EXT 512u
/* The largest active-message payload (am_send) that every transport carries
 * as one message: the verbs transport receives an AM into one pre-posted
 * buffer. Senders split larger data themselves. */
#define WIRE_AM_MAX_PAYLOAD (60u << 10)

enum wire_type {
	W_HELLO = 1,      /* payload: PeerHello (protobuf) */
	W_AUTH = 2,       /* payload: PeerHello with mac only */
	W_PUT_AM = 3,     /* ext: wire_target; payload: data */
	W_PUT_DIRECT = 4, /* ext: wire_direct; payload: data */
	W_GET_AM = 5,     /* ext: wire_target */
	W_GET_DIRECT = 6, /* ext: wire_direct */
	W_ACK = 7,        /* ext: wire_reply (put done) */
	W_GET_REPLY = 8,  /* ext: wire_reply; payload: data when status == 0 */
	W_BARRIER = 9,    /* ext: wire_barrier */
	W_MEMBER = 10,    /* ext: wire_member; payload: job key */
	W_PE_GONE = 11,   /* ext: wire_pe_gone */
	W_PING = 12,      /* ext: none; answered by W_PONG with the same tag */
	W_PONG = 13,
	W_VAUTH = 14,     /* verbs: reserved (the handshake rides in rdma_cm private data) */
	W_VRESOLVE = 15,  /* verbs: ext wire_target: where is (job, PE, segment)? */
	W_VRESOLVE_REPLY = 16, /* verbs: ext wire_vresolve: the entry, or status */
	W_AMO = 17,        /* ext: wire_amo (an atomic for the receiver to execute) */
	W_AMO_REPLY = 18,  /* ext: wire_amo_reply */
	W_PACK = 20,       /* ext: wire_pack; payload: elements (see below) */
	W_PACK_REPLY = 21, /* ext: wire_pack_reply; payload: results */
	/* 22, 23: reserved (packed operations) */
	W_COLL = 24,       /* ext: wire_coll; payload: one chunk of a collective */
	W_COLL_ABORT = 25, /* ext: wire_coll_abort */
	/* 26, 27: reserved (collectives) */
	W__COUNT = 28
};

struct wire_hdr {
	uint32_t plen;  /* payload bytes after the extension header */
	uint8_t type;   /* enum wire_type */
	uint8_t flags;
	uint16_t hlen;  /* extension header bytes */
	uint64_t tag;   /* request id, echoed by its reply */
};

/* A PE's segment by name: used on an address-cache miss. */
struct wire_target {
	uint64_t job;
	int32_t pe;
	uint32_t seg;
	uint64_t off;
	uint64_t len;
};

/* A segment by remote key: the direct path. The target's name rides
 * along so that a stale key (the PE left, a new one took its place) is
 * resolved by name instead of failing; the reply then carries the fresh
 * cache entry. */
struct wire_direct {
	uint32_t rkey;
	uint32_t gen;
	uint64_t addr;
	uint64_t len;
	struct wire_target name;
};

struct wire_entry {
	int32_t node;
	uint32_t rkey;
	uint64_t base;
	uint64_t len;
	uint32_t gen;
	uint32_t valid; /* 1: the reply carries an address-cache entry */
};

struct wire_reply {
	int32_t status; /* 0 or -errno */
	uint32_t reserved;
	struct wire_entry entry;
};

struct wire_barrier {
	uint64_t job;
	uint32_t epoch;
	uint32_t round;
};

/* A rank and the nonce of its attach (which incarnation of the rank). */
struct wire_rank {
	int32_t rank;
	uint32_t reserved;
	uint64_t nonce;
};

/* One node's view of a job: its local ranks (payload: key, then
 * struct wire_rank[nranks]). A job is (uid, key); job is its keyed id
 * (cluster_job_id), which the receiver recomputes and compares. Every other
 * message names a job by that id alone: only holders of the cluster key can
 * compute one, and two jobs with one id are refused (attach.c), so an id
 * never reaches another job. */
struct wire_member {
	uint64_t job;
	int32_t size;
	uint32_t uid;
	uint64_t heap_bytes;
	uint16_t keylen;
	uint16_t flags;    /* MEMBER_WANT_REPLY */
	uint32_t nranks;   /* struct wire_rank entries follow the key */
};

/* The sender asks for the receiver's own ranks of the job in return (it
 * may have missed them while it was not reachable). */
#define MEMBER_WANT_REPLY 0x1u

struct wire_pe_gone {
	uint64_t job;
	int32_t pe;
	uint32_t clean; /* 1: finalized; 0: died */
	uint32_t epoch; /* barriers its node had completed when it left */
	uint32_t reserved;
	uint64_t nonce; /* the incarnation that left (wire_rank.nonce) */
};

/* One chunk (at most WIRE_AM_MAX_PAYLOAD bytes) of the stream one node
 * sends another in one step of a collective. The collective's parameters
 * ride along: the receiver checks they are its own (a mismatch fails the
 * collective everywhere, W_COLL_ABORT). */
struct wire_coll {
	uint64_t job;
	uint32_t seq;   /* the job's collective number */
	uint8_t kind, type, op, flags; /* flags: WIRE_COLL_F_* */
	int32_t root;
	uint32_t round; /* step of the sender's algorithm (0 for exchanges) */
	uint64_t len;   /* the descriptor's len */
	uint64_t off;   /* of this chunk in the step's stream */
	uint64_t total; /* bytes of the step's stream */
};

/* wire_coll.flags: the chunk at off 0 of this stream stands for the
 * sender's check header too (a broadcast or reduce: its first step's stream
 * leaves at its start, as the header would, so the header to that node is
 * not sent) */
#define WIRE_COLL_F_CHECK 0x1u

struct wire_coll_abort {
	uint64_t job;
	uint32_t seq;
	int32_t err; /* -errno every PE gets */
};

_Static_assert(sizeof(struct wire_coll) == 48, "wire coll");
_Static_assert(sizeof(struct wire_coll_abort) == 16, "wire coll abort");

/* Packed operations (issue 6): several puts, gets and non-fetching
 * atomics for PEs of one node in one frame. Used for strided/vector
 * descriptors (the source daemon packs, the target unpacks: no
 * per-element message), for automatic coalescing of small operations
 * (GUPS-style streams of atomics included) and for aggregation regions.
 *
 * Request W_PACK: ext wire_pack; payload nelem times
 *   struct wire_pack_elem, then for a put its len data bytes, padded to 8,
 *   for an atomic (WIRE_PACK_AMO, len 4 or 8: the operand size) one
 *   struct wire_pack_amo. Only non-fetching atomics (set, add, inc, and,
 *   or, xor) travel in packs: their result is a status, like a put's; the
 *   target executes them with hoist_amo_apply (the atomics' one domain).
 * Reply W_PACK_REPLY (same tag): ext wire_pack_reply; payload nelem times
 *   struct wire_pack_res, each followed, for a get with status 0, by its
 *   len data bytes padded to 8. Elements are executed and answered in
 *   order (puts to one place: the later wins).
 * Both payloads are at most WIRE_AM_MAX_PAYLOAD, so a pack is also one
 * active message of any transport (verbs: SEND/RECV); a sender splits into
 * several packs. The receiver checks the structure (a malformed pack is
 * refused whole, over every transport: answered with
 * wire_pack_reply.status -EPROTO and no results, the connection stays;
 * pack.h) and every element's bounds
 * against its target (an element outside the heap fails alone, -EFAULT). */
#define WIRE_PACK_PUT 1u
#define WIRE_PACK_GET 2u
#define WIRE_PACK_AMO 3u

struct wire_pack {
	uint64_t job;
	uint32_t nelem;
	uint32_t reserved; /* 0 */
};

struct wire_pack_elem {
	uint8_t op;         /* WIRE_PACK_PUT / _GET / _AMO */
	uint8_t reserved0;
	uint16_t reserved1;
	int32_t pe;
	uint32_t seg;
	uint32_t len;
	uint64_t off;
};

/* The operands of a WIRE_PACK_AMO element (after its wire_pack_elem).
 * A malformed one (unknown op or type, a fetching op, len not the type's
 * size, reserved bytes set) makes the whole pack malformed. */
struct wire_pack_amo {
	uint8_t op;          /* enum hoist_amo_op, non-fetching */
	uint8_t type;        /* hoist_type_t numbering */
	uint8_t reserved[6]; /* 0 */
	uint64_t value;      /* a 4-byte operand in the low bytes */
};

struct wire_pack_reply {
	uint32_t nelem;    /* = the request's */
	int32_t status;    /* 0: every element has its own result */
};

struct wire_pack_res {
	int32_t status;    /* 0 or -errno */
	uint32_t len;      /* get data bytes that follow (0 for puts, atomics, errors) */
};

static inline uint64_t wire_pad8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

_Static_assert(sizeof(struct wire_pack) == 16, "wire pack");
_Static_assert(sizeof(struct wire_pack_elem) == 24, "wire pack elem");
_Static_assert(sizeof(struct wire_pack_amo) == 16, "wire pack amo");
_Static_assert(sizeof(struct wire_pack_reply) == 8, "wire pack reply");
_Static_assert(sizeof(struct wire_pack_res) == 8, "wire pack res");

/* Remote atomics (transport/amo.c), active messages of every network
 * transport (fetching ones, signals, and non-fetching ones that no pack
 * takes: coalescing off; the others travel as WIRE_PACK_AMO elements,
 * above): the requester names the word by (job, PE, segment, offset);
 * the target daemon checks them, executes the CPU atomic (hoist_amo.h)
 * and answers with the request's id, 0 or -errno, and the old value. */
struct wire_amo {
	uint64_t job;
	int32_t pe;
	uint32_t seg;
	uint64_t off;
	uint64_t value;  /* a 4-byte operand in the low bytes */
	uint64_t cmp;
	uint64_t id;     /* the requester's, echoed by the reply */
	uint8_t op;      /* enum hoist_amo_op */
	uint8_t type;    /* hoist_type_t numbering */
	uint8_t size;    /* 4 or 8: the type's */
	uint8_t reserved[5]; /* 0 */
};

struct wire_amo_reply {
	uint64_t id;
	int32_t status;  /* 0 or -errno */
	uint32_t reserved;
	uint64_t old;    /* the word's value before (fetching ops) */
};

_Static_assert(sizeof(struct wire_amo) == 56, "wire amo");
_Static_assert(sizeof(struct wire_amo_reply) == 24, "wire amo reply");

/* verbs: the answer to W_VRESOLVE (the question comes back with it). */
struct wire_vresolve {
	struct wire_target name;
	struct wire_reply r;
};

/* verbs: rdma_cm private data of a connect request (56 bytes at most on
 * RC) and of its accept. mac = HMAC-SHA256(cluster key, role, nonce,
 * acceptor id, connector id) as in the tcp handshake; nonce[0..7] is the
 * connector's CLOCK_REALTIME in ns, so a replayed request is too old or
 * already seen. */
struct wire_vconnect {
	uint16_t version;
	uint16_t nnodes;
	int32_t node;     /* the sender's node id */
	uint8_t nonce[16];
	uint8_t mac[32];
};

_Static_assert(sizeof(struct wire_vconnect) == 56, "fits RC connect private data");
_Static_assert(sizeof(struct wire_vresolve) == 72, "wire vresolve");
_Static_assert(sizeof(struct wire_hdr) == 16, "wire header");
_Static_assert(sizeof(struct wire_target) == 32, "wire target");
_Static_assert(sizeof(struct wire_direct) == 56, "wire direct");
_Static_assert(sizeof(struct wire_reply) == 40, "wire reply");
_Static_assert(sizeof(struct wire_member) == 32, "wire member");
_Static_assert(sizeof(struct wire_rank) == 16, "wire rank");
_Static_assert(sizeof(struct wire_pe_gone) == 32, "wire pe gone");

#endif
