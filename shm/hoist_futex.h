/*
 * Process-shared futex on a 32-bit word of a MAP_SHARED mapping (no
 * FUTEX_PRIVATE_FLAG: the two sides are different processes).
 */
#ifndef HOIST_FUTEX_H
#define HOIST_FUTEX_H

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleep while *word == expected, at most timeout_ns (0 = forever).
 * 0 on wake, -ETIMEDOUT, -EAGAIN (value already changed), -EINTR. */
static inline int hoist_futex_wait(uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
	struct timespec ts, *tp = NULL;
	if (timeout_ns) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000u);
		ts.tv_nsec = (long)(timeout_ns % 1000000000u);
		tp = &ts;
	}
	long rc = syscall(SYS_futex, word, FUTEX_WAIT, expected, tp, NULL, 0);
	return rc == 0 ? 0 : -errno;
}

static inline int hoist_futex_wake(uint32_t *word)
{
	long rc = syscall(SYS_futex, word, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
	return rc >= 0 ? (int)rc : -errno;
}

#endif
