/*
 * shmemx.h - hoist's extensions to OpenSHMEM (libhoist-shmem).
 */
#ifndef HOIST_SHMEMX_H
#define HOIST_SHMEMX_H

#include <shmem.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The OpenSHMEM routines return void where the specification has no error
 * result and the library never prints: the first libhoist error (a
 * negative errno, hoist.h lists them: -EFAULT for a non-symmetric address,
 * -EINVAL for a PE outside the job or a bad argument, -ENOSYS for a part
 * libhoist-shmem does not implement, -ECONNRESET for a dead PE, ...) is
 * kept. shmemx_last_error() returns it (0: none since the last call) and
 * clears it; shmemx_strerror() explains a code. */
int shmemx_last_error(void);
const char *shmemx_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* HOIST_SHMEMX_H */
