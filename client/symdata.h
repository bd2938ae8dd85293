/* Symmetric global and static data: the main executable's writable data
 * segment, moved into the heap file (symdata.c). */
#ifndef HOIST_CLIENT_SYMDATA_H
#define HOIST_CLIENT_SYMDATA_H

#include <stddef.h>
#include <stdint.h>

/* The main program's writable data segment after relocation, whole pages:
 * [*lo, *lo + *len). 0, -ENOENT (none), -ENOTSUP (more than one writable
 * PT_LOAD). */
int symdata_find(uintptr_t *lo, size_t *len);

/* Copies the segment's contents to [off, off + len) of the file fd and
 * maps that part of the file MAP_SHARED over the segment. 0 or -errno (then
 * the segment is as it was). The caller must be the only thread. */
int symdata_move(uintptr_t lo, size_t len, int fd, uint64_t off);

/* The reverse: the segment becomes private anonymous memory again, with
 * the contents it has now. 0 or -errno (then it stays in the file). */
int symdata_restore(uintptr_t lo, size_t len);

#endif
