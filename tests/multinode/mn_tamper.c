/*
 * mn_tamper: the victim workload of frames.sh (frame_integrity). 2 PEs,
 * rank 0 on daemon 0, rank 1 on daemon 1; a proxy between the daemons
 * tampers with the daemon 0 -> daemon 1 stream.
 *
 * Both fill a symmetric area of NCHUNK x 1 MiB with UNTOUCHED (0x01),
 * barrier. Rank 0 puts NCHUNK chunks of 1 MiB into rank 1's area (each
 * byte a function of chunk and offset with the high bit set, so neither
 * UNTOUCHED, nor zeros, nor a byte with one low bit flipped pass for it),
 * then quiet, barrier. Rank 1 waits in the barrier (it completes, or
 * fails when the job does) and scans its area: every byte must be
 * UNTOUCHED (the put failed or did not get there) or exactly the pattern
 * (written). Anything else (zeros included) is corrupt data in the heap.
 *
 * Each rank writes one line "key=value ..." to $MN_TAMPER_OUT/rank<R>:
 *   rank 0: puts_ok, first_error (0 or -errno of the first failed put,
 *           quiet or barrier)
 *   rank 1: barrier (its return), landed (correct bytes), corrupt (bytes
 *           that are neither UNTOUCHED nor the pattern), first_corrupt
 *           (offset, or -1)
 * Operations may fail (-ECONNRESET when the connection is dropped): that
 * is for the script to judge. Exit 1 only for what is wrong in any mode
 * (no attach, an error other than -ECONNRESET, an unwritable result).
 */
#include "it_common.h"

#define CHUNK (1u << 20)
#define NCHUNK 8u
#define UNTOUCHED 0x01

static unsigned char pat(unsigned chunk, size_t off)
{
	return (unsigned char)(0x80 | ((off * 131 + chunk * 7 + (off >> 11)) & 0x7f));
}

static int result(int me, const char *line)
{
	const char *dir = getenv("MN_TAMPER_OUT");
	char path[512];
	snprintf(path, sizeof(path), "%s/rank%d", dir ? dir : ".", me);
	FILE *f = fopen(path, "w");
	if (!f || fprintf(f, "%s\n", line) < 0 || fclose(f)) {
		IT_FAIL("cannot write %s", path);
		return 1;
	}
	it_log("%s", line);
	return 0;
}

static int acceptable(int rc)
{
	return rc == 0 || rc == -ECONNRESET;
}

int main(void)
{
	int me, n;
	it_init("mn_tamper", &me, &n);
	it_watchdog(100);
	if (n != 2) {
		IT_FAIL("wants 2 PEs, not %d", n);
		return it_finish();
	}
	unsigned char *area = it_malloc((size_t)NCHUNK * CHUNK);
	memset(area, UNTOUCHED, (size_t)NCHUNK * CHUNK);
	IT_OK(hoist_barrier(), "start");
	if (it_failures)
		return it_finish();
	char line[256];
	if (me == 0) {
		unsigned char *src = it_xmalloc(CHUNK);
		int err = 0;
		unsigned ok = 0;
		for (unsigned c = 0; c < NCHUNK && !err; c++) {
			IT_WHERE("put chunk %u", c);
			for (size_t i = 0; i < CHUNK; i++)
				src[i] = pat(c, i);
			err = hoist_put(1, area + (size_t)c * CHUNK, src, CHUNK);
			if (!err)
				ok++;
		}
		IT_WHERE("quiet");
		int q = hoist_quiet();
		if (!err)
			err = q;
		IT_WHERE("barrier");
		int b = hoist_barrier();
		if (!err)
			err = b;
		if (!acceptable(err))
			IT_FAIL("unexpected error %s", it_errname(err));
		snprintf(line, sizeof(line), "puts_ok=%u first_error=%d", ok, err);
		if (result(me, line))
			return 1;
		free(src);
	} else {
		IT_WHERE("barrier");
		int b = hoist_barrier();
		if (!acceptable(b))
			IT_FAIL("barrier: unexpected error %s", it_errname(b));
		size_t landed = 0, corrupt = 0;
		long long first = -1;
		for (unsigned c = 0; c < NCHUNK; c++)
			for (size_t i = 0; i < CHUNK; i++) {
				unsigned char v = area[(size_t)c * CHUNK + i];
				if (v == pat(c, i)) {
					landed++;
				} else if (v != UNTOUCHED) {
					if (!corrupt)
						first = (long long)((size_t)c * CHUNK + i);
					corrupt++;
				}
			}
		snprintf(line, sizeof(line), "barrier=%d landed=%zu corrupt=%zu first_corrupt=%lld", b,
			 landed, corrupt, first);
		if (result(me, line))
			return 1;
	}
	/* after a failed job finalize says so; that is no failure here */
	int f = hoist_finalize();
	if (!acceptable(f))
		IT_FAIL("finalize: %s", it_errname(f));
	return it_failures ? 1 : 0;
}
