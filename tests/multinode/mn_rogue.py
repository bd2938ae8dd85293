#!/usr/bin/env python3
"""A connector that does not hold the cluster key (for bad_peer.sh).

  mn_rogue.py HOST PORT NODE_ID NNODES

Connects to the hoistd listening at HOST:PORT, sends a well-formed hello
claiming to be node NODE_ID of NNODES, reads the acceptor's hello (with its
mac over our nonce), answers with an AUTH frame carrying a wrong mac (it
cannot compute the right one), then sends a PING. The acceptor must close
the connection without answering the PING.

Exit 0 if the acceptor answered the hello and then closed the connection
(no PONG) within 5 s; 1 otherwise (printing why).
The wire (frames, PeerHello) is mn_wire.py's. The hello asks for
frame_integrity mac (the daemons' default), to get as far as the mac check.
"""
import os
import socket
import struct
import sys

from mn_wire import (W_AUTH, W_HELLO, W_PING, closed_without_reply, frame, hello,
                     recv_exact)


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    host, port, node, nnodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(frame(W_HELLO, hello(node, nnodes, nonce=os.urandom(32), integrity=1)))
    hdr = recv_exact(s, 16)
    if hdr is None:
        print("mn_rogue: the acceptor closed the connection instead of answering the hello", file=sys.stderr)
        return 1
    plen, ftype, _, hlen, _ = struct.unpack("<IBBHQ", hdr)
    if ftype != W_HELLO or hlen != 0 or plen > 512 or recv_exact(s, plen) is None:
        print("mn_rogue: unexpected answer to the hello: type %d plen %d hlen %d" % (ftype, plen, hlen),
              file=sys.stderr)
        return 1
    try:
        s.sendall(frame(W_AUTH, hello(node, nnodes, mac=os.urandom(32), integrity=1)))
        s.sendall(frame(W_PING, tag=77))
    except OSError:
        pass  # already closed: fine
    why = closed_without_reply(s)
    if why:
        print("mn_rogue: after a wrong mac the acceptor %s" % why, file=sys.stderr)
        return 1
    print("mn_rogue: refused after the wrong mac, as it should be", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
