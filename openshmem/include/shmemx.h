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
/* What was wrong, in words, for the error kept last (the one
 * shmemx_last_error() returns now, else the one it returned last; "" when
 * none was kept yet): the routine and the bad argument, e.g.
 *   "shmem_ctx_long_p: PE 7 outside SHMEM_TEAM_WORLD (4 PEs)"
 *   "shmem_putmem: 0x7ffd... (PE 1's side) is not symmetric: ..."
 *   "shmem_broadcast: nelems differs: 8 bytes at team PE 0, 16 at team PE 1"
 * The string belongs to the calling thread, valid until its next call. */
const char *shmemx_last_error_string(void);

#ifdef __cplusplus
}
#endif

#endif /* HOIST_SHMEMX_H */
