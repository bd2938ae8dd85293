/*
 * it_getinline: small gets whose result comes back in the completion
 * (HOIST_SQE_F_INLINE, HOIST_CQE_F_DATA; client/rma.c get_inline).
 *
 * Every PE fills a block of its heap with its own pattern, then gets from
 * every PE (itself included) every length 1..HOIST_CQE_DATA_MAX + 3, from
 * source offsets of every alignment (0..8 and 61, a line crossing), into
 * private memory and into its own heap, at destination offsets 0, 1 and
 * 5, blocking and nbi (+ quiet). Each result is checked byte for byte,
 * and the bytes around the destination must be untouched (a guard of 16
 * on each side: the CQE carries 16 bytes, of which only len may land).
 *
 * The counter: a get from a PE of this node (hoist_ptr's peers) of at
 * most HOIST_CQE_DATA_MAX bytes must have taken the inline path
 * (c->gets_inline grows by exactly the number of such gets: blocking ones
 * into either destination, nbi ones into private memory); longer ones
 * and gets from other nodes' PEs must not. Run with HOIST_DIRECT=0 (else
 * the same node's gets are the library's own loads): one daemon (every
 * PE local) and across daemons (hoistrun --nodes: both kinds at once).
 */
#include <inttypes.h>

#include "internal.h"
#include "it_common.h"

#define SRC_BYTES 256
#define MAXLEN (HOIST_CQE_DATA_MAX + 3)
#define GUARD 16
#define SLOT (GUARD + 8 + MAXLEN + GUARD)
#define GUARD_BYTE 0xA5

static const size_t src_offs[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 61};
static const size_t dst_offs[] = {0, 1, 5};

static uint64_t key_of(int pe)
{
	return 0x6e7e000ull + (uint64_t)pe;
}

/* dst + GUARD + doff holds len bytes of pe's pattern from soff; the rest of
 * the slot the guard byte */
static void check(const unsigned char *slot, size_t doff, size_t len, int pe, size_t soff,
		  const char *what)
{
	for (size_t i = 0; i < SLOT; i++) {
		size_t at = GUARD + doff;
		unsigned char want = (i >= at && i < at + len) ? it_fill_byte(key_of(pe), soff + i - at)
							       : GUARD_BYTE;
		if (slot[i] != want) {
			IT_FAIL("%s from pe %d: len %zu src +%zu dst +%zu: byte %zd (of the slot, data at %zu) "
				"is %#x, want %#x",
				what, pe, len, soff, doff, (ssize_t)i, at, slot[i], want);
			return;
		}
	}
}

int main(void)
{
	int me, n;
	it_init("it_getinline", &me, &n);
	it_watchdog(60);
	struct hoist_ctx *c = hoist__ctx();
	if (c->direct)
		IT_FAIL("run me with HOIST_DIRECT=0 (the gets must go to the daemon)");
	if (it_failures)
		return it_finish();
	unsigned char *src = it_malloc(SRC_BYTES);
	unsigned char *hslot = it_malloc(SLOT); /* heap destination */
	unsigned char pslot[SLOT];              /* private destination */
	it_fill(src, SRC_BYTES, key_of(me));
	IT_OK(hoist_barrier(), "start");

	uint64_t want_inline = 0, gets = 0;
	uint64_t inl0 = c->gets_inline;
	for (int pe = 0; pe < n; pe++) {
		int local = hoist__peer_find(c, pe) != NULL;
		for (size_t len = 1; len <= MAXLEN; len++)
			for (size_t si = 0; si < sizeof(src_offs) / sizeof(src_offs[0]); si++)
				for (size_t di = 0; di < sizeof(dst_offs) / sizeof(dst_offs[0]); di++)
					for (int heap = 0; heap < 2; heap++)
						for (int nbi = 0; nbi < 2; nbi++) {
							size_t soff = src_offs[si], doff = dst_offs[di];
							unsigned char *slot = heap ? hslot : pslot;
							IT_WHERE("pe %d len %zu src +%zu dst +%zu heap %d nbi %d", pe,
								 len, soff, doff, heap, nbi);
							memset(slot, GUARD_BYTE, SLOT);
							void *dst = slot + GUARD + doff;
							if (nbi) {
								IT_OK(hoist_get_nbi(dst, pe, src + soff, len),
								      "(nbi get pe %d len %zu)", pe, len);
								IT_OK(hoist_quiet(), "(quiet after nbi get)");
							} else {
								IT_OK(hoist_get(dst, pe, src + soff, len),
								      "(get pe %d len %zu)", pe, len);
							}
							check(slot, doff, len, pe, soff,
							      nbi ? (heap ? "nbi get to the heap" : "nbi get to private memory")
								  : (heap ? "get to the heap" : "get to private memory"));
							gets++;
							if (local && len <= HOIST_CQE_DATA_MAX && !(nbi && heap))
								want_inline++;
						}
	}
	uint64_t got = c->gets_inline - inl0;
	if (got != want_inline)
		IT_FAIL("%" PRIu64 " gets took the inline path, want %" PRIu64 " (of %" PRIu64 ")", got,
			want_inline, gets);
	if (want_inline == 0) /* my own heap is on this node at least */
		IT_FAIL("no inline gets expected (%u PEs on this node)", c->npeers);
	it_log("%" PRIu64 " gets, %" PRIu64 " inline (%u PEs on this node)", gets, got, c->npeers);
	IT_OK(hoist_barrier(), "end");
	return it_finish();
}
