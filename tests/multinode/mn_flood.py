#!/usr/bin/env python3
"""mn_flood.py HOST:PORT N TRICKLE_S HOLD_S: open N tcp connections to a
daemon's peer port as a stranger would (no handshake; one byte every
TRICKLE_S seconds on each, which kept a connection forever before), and
keep trickling until the daemon has closed every one of them or HOLD_S
passed without the daemon closing any (lack of progress, not a time limit).
Prints "opened=A refused=R closed_by_daemon=C still_open=S" and exits 0.
Connections the kernel refuses (backlog full, or the daemon out of
descriptors) count as refused; the flood goes on with the rest."""
import errno
import socket
import sys
import time


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    n, trickle, hold = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    socks, refused = [], 0
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect((host, int(port)))
        except BlockingIOError:
            pass
        except OSError:
            refused += 1
            s.close()
            continue
        socks.append(s)
    opened = len(socks)
    closed = 0
    last_progress = time.monotonic()
    while socks and time.monotonic() - last_progress < hold:
        alive = []
        for s in socks:
            try:
                s.send(b"\x01")
                data = s.recv(4096)
                if data == b"":
                    raise ConnectionResetError
                alive.append(s)
            except BlockingIOError:
                alive.append(s)  # still open, nothing to read
            except OSError as e:
                if e.errno in (errno.EINPROGRESS, errno.EALREADY, errno.ENOTCONN):
                    alive.append(s)
                    continue
                closed += 1
                s.close()
        if len(alive) < len(socks):
            last_progress = time.monotonic()
        socks = alive
        time.sleep(trickle)
    print("opened=%d refused=%d closed_by_daemon=%d still_open=%d" % (opened, refused, closed, len(socks)))
    for s in socks:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
