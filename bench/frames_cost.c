/*
 * hoist-frames-cost: the CPU cost of the record layer of frame_integrity
 * (daemon/frames.c, linked directly), one thread, no sockets: what sealing
 * (sender) and opening (receiver, including the copy of the verified body
 * to its destination that plain frames do not pay) cost per record and
 * per byte, next to a plain memcpy of the same bytes. Robust on a shared
 * machine where the end-to-end numbers of run-frames.sh wander: each row
 * is the best of --reps repetitions.
 *
 *   hoist-frames-cost [--reps N] [--tsv]
 *
 * Rows: for record bodies of 72 B (one small frame: an 8 B get request)
 * and 64 KiB (the largest record, bulk data), mac and encrypt with
 * AES-256-GCM (when this CPU has it) and ChaCha20-Poly1305: seal ns/record,
 * open+copy ns/record, and GB/s of seal + open together (the CPU time both
 * daemons spend per byte, one after the other).
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frames.h"

#define BATCH 16

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int reps = 7, tsv = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--tsv"))
			tsv = 1;
		else {
			fprintf(stderr, "usage: %s [--reps N] [--tsv]\n", argv[0]);
			return 2;
		}
	}
	if (sodium_init() < 0 || reps < 1)
		return 1;
	uint8_t key[32], nc[32], na[32];
	randombytes_buf(key, sizeof(key));
	randombytes_buf(nc, sizeof(nc));
	randombytes_buf(na, sizeof(na));
	size_t fsz = (sizeof(struct frames) + 63) & ~(size_t)63;
	struct frames *tx = aligned_alloc(64, fsz), *rx = aligned_alloc(64, fsz);
	/* dst 1088 B into its block: src and dst must not alias modulo 4 KiB
	 * (that alone halves memcpy here) */
	uint8_t *src = malloc(FRAMES_REC_MAX), *dblk = malloc(FRAMES_REC_MAX + 4096);
	uint8_t *dst = dblk ? dblk + 1088 : NULL;
	const size_t stride = FRAMES_REC_MAX + FRAMES_OVERHEAD;
	uint8_t *rec = malloc(BATCH * stride);
	if (!tx || !rx || !src || !dst || !rec)
		return 1;
	memset(src, 0x5a, FRAMES_REC_MAX);
	static const uint32_t lens[] = {72, FRAMES_REC_MAX};
	if (!tsv)
		printf("%-10s %-8s %-18s %12s %12s %14s\n", "record", "mode", "aead", "seal ns", "open+cpy ns",
		       "seal+open GB/s");
	for (unsigned li = 0; li < 2; li++) {
		uint32_t len = lens[li];
		long iters = len < 1024 ? 200000 : 3000;
		/* reference: the one memcpy a plain frame's payload costs */
		double best_cpy = 1e30;
		for (int r = 0; r < reps; r++) {
			double t = now();
			for (long i = 0; i < iters; i++) {
				src[0] = (uint8_t)i;
				memcpy(dst, src, len);
			}
			t = (now() - t) / (double)iters;
			if (t < best_cpy)
				best_cpy = t;
		}
		if (tsv)
			printf("row\tmemcpy %u B\tns\t%.1f\n", len, best_cpy * 1e9);
		else
			printf("%-10u %-8s %-18s %12.1f %12s %14.2f\n", len, "memcpy", "-", best_cpy * 1e9, "-",
			       len / best_cpy / 1e9);
		for (int mode = FRAMES_MAC; mode <= FRAMES_ENCRYPT; mode++)
			for (int aes = 1; aes >= 0; aes--) {
				if (aes && !frames_aes_available())
					continue;
				double best_s = 1e30, best_o = 1e30;
				for (int r = 0; r < reps; r++) {
					frames_init(tx, mode, aes, key, 1, nc, na, 0, 1);
					frames_init(rx, mode, aes, key, 0, nc, na, 0, 1);
					double ts = 0, to = 0;
					/* batches of BATCH records: the clock is read per batch */
					for (long i = 0; i < iters; i += BATCH) {
						src[0] = (uint8_t)i;
						double t0 = now();
						for (int k = 0; k < BATCH; k++)
							if (frames_seal(tx, src, len, rec + (size_t)k * stride))
								return 1;
						double t1 = now();
						for (int k = 0; k < BATCH; k++) {
							uint8_t *rk = rec + (size_t)k * stride;
							if (frames_open(rx, rk, len))
								return 1;
							memcpy(dst, rk + FRAMES_HDR, len);
						}
						double t2 = now();
						ts += t1 - t0;
						to += t2 - t1;
					}
					ts /= (double)iters;
					to /= (double)iters;
					if (ts < best_s)
						best_s = ts;
					if (to < best_o)
						best_o = to;
				}
				const char *an = frames_aead_name(aes), *mn = frames_mode_name(mode);
				if (tsv) {
					printf("row\tseal %u B %s %s\tns\t%.1f\n", len, mn, an, best_s * 1e9);
					printf("row\topen+copy %u B %s %s\tns\t%.1f\n", len, mn, an, best_o * 1e9);
				} else {
					printf("%-10u %-8s %-18s %12.1f %12.1f %14.2f\n", len, mn, an, best_s * 1e9,
					       best_o * 1e9, len / (best_s + best_o) / 1e9);
				}
			}
	}
	return 0;
}
