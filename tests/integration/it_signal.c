/*
 * it_signal: put-with-signal (hoist_put_signal, hoist_put_signal_nbi,
 * hoist_signal_fetch) on real daemons.
 *
 * The PEs form a ring: every round each PE puts a block (sizes from 1 byte
 * to 1 MiB, which is striped over several tcp lanes) to the next PE with a
 * signal (ADD 1 on even rounds, SET to round+1 on odd ones, so the word
 * counts rounds either way; the blocking form, every third round the nbi
 * one; from a private and, every fourth round, a symmetric source), then
 * consumes the previous PE's block: it spins on hoist_signal_fetch (with
 * sched_yield), or every other time sleeps in hoist_signal_wait_until, until
 * the signal shows, checks that it is exactly round+1
 * and then every byte of the block, and acknowledges with a data-less
 * signal (SET) on the producer's ack word, which the producer awaits
 * before it overwrites the block. A signal that overtook its data shows as
 * a block with the previous round's bytes.
 *
 * Then bursts: BURST hoist_put_signal_nbi of different sizes into the
 * slots of the block, all ADD 1 on one word, no quiet in between: the
 * library posts no quiet for them (its quiets_posted does not move; the
 * daemon, not the library, holds each signal until everything before it
 * completed), and as each signal leaves only after every earlier put
 * landed, a consumer that sees the count k sees slots 0..k-1 whole. The
 * daemon counts the signals that waited (signal_waits; signal_stats.sh).
 *
 * Then errors: unknown sig_op, misaligned or outside-the-heap signal word,
 * unknown PE are refused before anything is put; the daemon refuses raw
 * descriptors with the signal flag that are not a SET/ADD on a uint64, and
 * does not send a signal behind a put that failed without a completion
 * (-EIO; the quiet then reports the put's error; the next signal goes).
 *
 * IT_SIG_DIRECT=none|some: the library's direct put-with-signal must be
 * none / some (a one-node job with HOIST_DIRECT=0 / 1).
 */
#include <sched.h>

#include "hoist_amo.h"
#include "internal.h"
#include "it_common.h"

#define BIG (1u << 20)
#define ROUNDS 60

static const size_t sizes[] = {BIG, 64u << 10, 1, 100, 4096, (64u << 10) + 3, BIG - 5};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

#define BURST 8
#define BURSTS 6
#define SLOT (BIG / BURST)

/* slot i of burst b: 1 byte .. a whole slot (striped with tcp lanes) */
static size_t burst_len(int b, int i)
{
	return i == (b % BURST) ? SLOT : 1 + (size_t)((b * 7919 + i * 40009) % SLOT);
}

static uint64_t key_of(int from, int round)
{
	return it_hash(0x5167u, (uint64_t)from, (uint64_t)round, 0, 0);
}

/* Until the word reaches want: every other call spins on
 * hoist_signal_fetch, the others sleep in hoist_signal_wait_until (whose
 * observed value must satisfy the comparison); the watchdog fires if it
 * never does. */
static uint64_t await(const uint64_t *w, uint64_t want)
{
	static unsigned calls;
	uint64_t v;
	if (calls++ % 2) {
		IT_OK(hoist_signal_wait_until((uint64_t *)w, HOIST_CMP_GE, want, &v));
		if (v < want)
			IT_FAIL("signal_wait_until observed %" PRIu64 " < %" PRIu64, v, want);
		return v;
	}
	while ((v = hoist_signal_fetch(w)) < want)
		sched_yield();
	return v;
}

/* The daemon's checks of the signal flag: raw descriptors the library
 * never posts are refused (a signal is a SET or ADD on a uint64; puts
 * carry no signal flag); a proper one is accepted (it adds 0). */
static void raw_checks(struct hoist_ctx *c, int peer, unsigned char *block, uint64_t *word)
{
	uint64_t roff = (uint64_t)((char *)word - c->heap_base);
	struct hoist_sqe ok = {.opcode = HOIST_OP_AMO, .flags = HOIST_SQE_F_CQE | HOIST_SQE_F_SIGNAL,
			       .pe = peer, .seg = HOIST_SEG_HEAP, .remote_off = roff, .len = 8};
	ok.amo_op = HOIST_AMO_OP_ADD;
	ok.amo_type = HOIST_AMO_T_UINT64;
	struct hoist_sqe fetching = ok, narrow = ok, swap = ok;
	fetching.amo_op = HOIST_AMO_OP_FETCH_ADD;
	narrow.amo_type = HOIST_AMO_T_UINT32;
	narrow.len = 4;
	swap.amo_op = HOIST_AMO_OP_SWAP;
	struct hoist_sqe put = {.opcode = HOIST_OP_PUT,
				.flags = HOIST_SQE_F_CQE | HOIST_SQE_F_INLINE | HOIST_SQE_F_SIGNAL,
				.pe = peer, .seg = HOIST_SEG_HEAP,
				.remote_off = (uint64_t)((char *)block - c->heap_base), .len = 1};
	put.inline_data[0] = 0x11;
	struct {
		const char *what;
		struct hoist_sqe *s;
		int want;
	} t[] = {{"signal ADD", &ok, 0},
		 {"signal FETCH_ADD", &fetching, -EINVAL},
		 {"signal on uint32", &narrow, -EINVAL},
		 {"signal SWAP", &swap, -EINVAL},
		 {"signal flag on a put", &put, -EINVAL}};
	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		IT_WHERE("raw %s", t[k].what);
		struct hoist_op *op;
		struct hoist_sqe *slot;
		if (IT_OK(hoist__op_alloc(c, &op), "%s", t[k].what))
			continue;
		if (IT_OK(hoist__sqe_get(c, &slot), "%s", t[k].what)) {
			hoist__op_free(c, op);
			continue;
		}
		*slot = *t[k].s;
		slot->user_data = hoist__op_udata(c, op);
		hoist__sqe_submit(c);
		IT_EXPECT(hoist__wait_op(c, op), t[k].want, "raw descriptor: %s", t[k].what);
		hoist__op_free(c, op);
	}

	/* A put that fails in the daemon and asked for no completion (here:
	 * refused by validation), then a signal ADD 1: the signal is not sent
	 * (-EIO, *word stays 0), and the quiet reports the put's error. */
	IT_WHERE("raw failed put, then its signal");
	struct hoist_sqe silent = put, sig1 = ok;
	silent.flags = HOIST_SQE_F_INLINE | HOIST_SQE_F_SIGNAL; /* refused, no completion */
	uint64_t one = 1;
	memcpy(sig1.inline_data, &one, 8);
	struct hoist_op *op;
	struct hoist_sqe *slot;
	if (IT_OK(hoist__op_alloc(c, &op), "failed put"))
		return;
	if (!IT_OK(hoist__sqe_get(c, &slot), "failed put")) {
		*slot = silent;
		hoist__sqe_submit(c);
	}
	if (!IT_OK(hoist__sqe_get(c, &slot), "its signal")) {
		*slot = sig1;
		slot->user_data = hoist__op_udata(c, op);
		hoist__sqe_submit(c);
		IT_EXPECT(hoist__wait_op(c, op), -EIO, "a signal behind a failed put");
	}
	hoist__op_free(c, op);
	IT_EXPECT(hoist_quiet(), -EINVAL, "the failed put, reported at quiet");
	/* then signals are sent again */
	if (IT_OK(hoist__op_alloc(c, &op), "next signal"))
		return;
	if (!IT_OK(hoist__sqe_get(c, &slot), "next signal")) {
		*slot = ok;
		slot->user_data = hoist__op_udata(c, op);
		hoist__sqe_submit(c);
		IT_EXPECT(hoist__wait_op(c, op), 0, "a signal after the quiet");
	}
	hoist__op_free(c, op);
}

int main(void)
{
	int me, n;
	it_init("it_signal", &me, &n);
	it_watchdog(50);
	unsigned char *block = it_malloc(BIG);
	unsigned char *ssrc = it_malloc(BIG); /* symmetric source */
	uint64_t *words = it_malloc(64); /* [0] signal, [1] ack, [2] error probe, [3] bursts */
	unsigned char *psrc = it_xmalloc(BIG); /* private source */
	memset(block, 0, BIG);
	__atomic_store_n(&words[0], 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&words[1], 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&words[2], 0, __ATOMIC_SEQ_CST);
	IT_OK(hoist_barrier(), "start");
	int next = (me + 1) % n, prev = (me + n - 1) % n;

	for (int r = 0; r < ROUNDS; r++) {
		size_t len = sizes[(size_t)r % NSIZES];
		unsigned char *src = r % 4 == 3 ? ssrc : psrc;
		it_fill(src, len, key_of(me, r));
		hoist_signal_op_t op = r % 2 ? HOIST_SIGNAL_SET : HOIST_SIGNAL_ADD;
		uint64_t sig = r % 2 ? (uint64_t)r + 1 : 1;
		IT_WHERE("round %d: put %zu bytes with signal to %d", r, len, next);
		if (r % 3 == 2)
			IT_OK(hoist_put_signal_nbi(next, block, src, len, &words[0], sig, op), "round %d", r);
		else
			IT_OK(hoist_put_signal(next, block, src, len, &words[0], sig, op), "round %d", r);

		IT_WHERE("round %d: await the signal from %d", r, prev);
		uint64_t v = await(&words[0], (uint64_t)r + 1);
		if (v != (uint64_t)r + 1)
			IT_FAIL("round %d: signal %" PRIu64 ", want %d", r, v, r + 1);
		size_t bad = it_check_fill(block, len, key_of(prev, r));
		if (bad != len)
			IT_FAIL("round %d: %zu-byte block from %d: byte %zu wrong after the signal", r,
				len, prev, bad);
		IT_OK(hoist_put_signal(prev, block, NULL, 0, &words[1], (uint64_t)r + 1,
				       HOIST_SIGNAL_SET),
		      "ack round %d", r);

		IT_WHERE("round %d: await the ack from %d", r, next);
		await(&words[1], (uint64_t)r + 1);
		if (r % 3 == 2)
			IT_OK(hoist_quiet(), "round %d", r);
	}
	IT_OK(hoist_barrier(), "after the rounds");
	if (hoist_signal_fetch(&words[0]) != ROUNDS || hoist_signal_fetch(&words[1]) != ROUNDS)
		IT_FAIL("final signal %" PRIu64 " ack %" PRIu64, hoist_signal_fetch(&words[0]),
			hoist_signal_fetch(&words[1]));

	/* bursts of nbi puts with signal: no quiet by the library */
	struct hoist_ctx *c0 = hoist__ctx();
	__atomic_store_n(&words[3], 0, __ATOMIC_SEQ_CST);
	IT_OK(hoist_barrier(), "bursts");
	for (int b = 0; b < BURSTS; b++) {
		unsigned char *src = b % 2 ? ssrc : psrc; /* in place / staged */
		uint64_t q0 = c0->quiets_posted;
		for (int i = 0; i < BURST; i++) {
			size_t len = burst_len(b, i);
			it_fill(src + (size_t)i * SLOT, len, key_of(me, 1000 + b * BURST + i));
			IT_WHERE("burst %d: put %zu bytes with signal to %d", b, len, next);
			IT_OK(hoist_put_signal_nbi(next, block + (size_t)i * SLOT,
						   src + (size_t)i * SLOT, len, &words[3], 1,
						   HOIST_SIGNAL_ADD),
			      "burst %d slot %d", b, i);
		}
		if (c0->quiets_posted != q0)
			IT_FAIL("burst %d: %" PRIu64 " quiets posted by %d nbi puts with signal", b,
				c0->quiets_posted - q0, BURST);
		uint64_t seen = (uint64_t)b * BURST, end = seen + BURST;
		IT_WHERE("burst %d: consume from %d", b, prev);
		while (seen < end) {
			uint64_t v = b % 2 ? hoist_signal_fetch(&words[3])
					   : await(&words[3], seen + 1);
			if (v > end)
				IT_FAIL("burst %d: signal %" PRIu64 " > %" PRIu64, b, v, end);
			if (v == seen) {
				sched_yield();
				continue;
			}
			for (; seen < v; seen++) {
				int i = (int)(seen - (uint64_t)b * BURST);
				size_t len = burst_len(b, i);
				size_t bad = it_check_fill(block + (size_t)i * SLOT, len,
							   key_of(prev, 1000 + b * BURST + i));
				if (bad != len)
					IT_FAIL("burst %d: signal %" PRIu64 " seen, slot %d (%zu bytes) "
						"byte %zu wrong",
						b, v, i, len, bad);
			}
		}
		IT_OK(hoist_quiet(), "burst %d", b);
		IT_OK(hoist_barrier(), "burst %d", b); /* then the block is overwritten */
	}

	/* errors: nothing is put, the word does not change */
	block[0] = 0xa5;
	IT_OK(hoist_barrier(), "errors");
	unsigned char one = 0x11;
	IT_EXPECT(hoist_put_signal(next, block, &one, 1, &words[2], 1, (hoist_signal_op_t)2),
		  -EINVAL, "unknown op");
	IT_EXPECT(hoist_put_signal(next, block, &one, 1, (uint64_t *)((char *)&words[2] + 4), 1,
				   HOIST_SIGNAL_ADD),
		  -EINVAL, "misaligned signal");
	uint64_t priv = 0;
	IT_EXPECT(hoist_put_signal(next, block, &one, 1, &priv, 1, HOIST_SIGNAL_ADD), -EFAULT,
		  "signal outside the heap");
	IT_EXPECT(hoist_put_signal_nbi(n, block, &one, 1, &words[2], 1, HOIST_SIGNAL_ADD), -EINVAL,
		  "unknown PE");
	IT_OK(hoist_quiet(), "errors");
	raw_checks(c0, next, block, &words[2]);
	IT_OK(hoist_barrier(), "after errors");
	if (block[0] != 0xa5 || hoist_signal_fetch(&words[2]) != 0)
		IT_FAIL("a refused put-with-signal changed something: %#x %" PRIu64, block[0],
			hoist_signal_fetch(&words[2]));

	struct hoist_ctx *c = hoist__ctx();
	const char *want = getenv("IT_SIG_DIRECT");
	if (want && !strcmp(want, "none") && c->direct_signals)
		IT_FAIL("%" PRIu64 " puts with signal took the direct path with HOIST_DIRECT=0",
			c->direct_signals);
	if (want && !strcmp(want, "some") && !c->direct_signals)
		IT_FAIL("no put with signal took the direct path (HOIST_DIRECT=1, one node)");
	it_log("%" PRIu64 " puts with signal, %" PRIu64 " direct", c->put_signals,
	       c->direct_signals);
	free(psrc);
	IT_OK(hoist_barrier(), "end");
	return it_finish();
}
