/*
 * hoist_size.h - the one size grammar of hoist, for the daemon's settings
 * (hoistd.conf, HOIST_* variables, flags) and the library's HOIST_HEAP_SIZE
 * alike: digits, then optionally k, m, g or t (powers of 1024, either
 * case), then optionally b or B. "64m", "4G", "1tb", "4096".
 */
#ifndef HOIST_SIZE_H
#define HOIST_SIZE_H

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* 0, -EINVAL (not a size) or -ERANGE (does not fit 64 bits). */
static inline int hoist_parse_size(const char *text, uint64_t *out)
{
	char *end;
	/* strtoull would skip blanks and accept a sign: demand a digit */
	if (!text || !isdigit((unsigned char)*text))
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	unsigned shift = 0;
	switch (tolower((unsigned char)*end)) {
	case 0: break;
	case 'k': shift = 10; end++; break;
	case 'm': shift = 20; end++; break;
	case 'g': shift = 30; end++; break;
	case 't': shift = 40; end++; break;
	default: return -EINVAL;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	if (shift && v > (~0ull >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

#endif
