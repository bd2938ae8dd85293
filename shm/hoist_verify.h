/*
 * hoist_verify: is the daemon listening in a runtime directory one this
 * process may talk to? libhoist (attach socket) and hoistctl (stats socket)
 * both connect through hoist_verify_connect, so they refuse the same
 * impostors with the same words. libc only; never prints.
 *
 * Trusted means: the directory is owned by root or the caller (effective
 * uid) and not writable by group or others; the socket file is owned by
 * root or the caller; and the process that listens on it (SO_PEERCRED of
 * the connected socket, set by the listener's listen()) runs as root or as
 * the caller. The last check is the one that cannot be raced: the first
 * two give the clearer message when a stranger set up the directory.
 */
#ifndef HOIST_VERIFY_H
#define HOIST_VERIFY_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Check dir, then connect to dir/name (SOCK_SEQPACKET) and check the
 * listener, before a byte is sent. connect and every later send on the fd
 * give up after timeout_ms (SO_SNDTIMEO). Returns the fd (close-on-exec),
 * or -errno with why[] saying what was wrong and what to do:
 *   -ENOENT     no such directory or socket, or nobody listens on it
 *   -EPERM      the directory, the socket file or the listener is not
 *               root's or the caller's (not trusted; nothing was sent)
 *   -EACCES     the caller may not connect to the socket (permissions)
 *   -ETIMEDOUT  the listener did not take the connection in timeout_ms
 *   -ENAMETOOLONG, ... */
int hoist_verify_connect(const char *dir, const char *name, int timeout_ms, char *why,
			 size_t why_len);

/* recvmsg that waits at most timeout_ms for a datagram (poll; EINTR is
 * retried against the same deadline). Bytes received, 0 on hang-up, or
 * -errno (-ETIMEDOUT when nothing came). */
ssize_t hoist_recvmsg_deadline(int fd, struct msghdr *mh, int flags, int timeout_ms);

#endif
