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
Frame: 16-byte header <plen u32, type u8, flags u8, hlen u16, tag u64>,
little endian; hello payload is protobuf PeerHello (proto/hoist.proto).
"""
import os
import socket
import struct
import sys

W_HELLO, W_AUTH, W_PING, W_PONG = 1, 2, 12, 13


# daemon/wire.h WIRE_VERSION
WIRE_VERSION = 2


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def hello(node, nnodes, nonce=None, mac=None):
    p = b"\x08" + varint(WIRE_VERSION) + b"\x10" + varint(node)  # proto_version, node_id
    if nonce is not None:
        p += b"\x1a" + varint(len(nonce)) + nonce
    if mac is not None:
        p += b"\x22" + varint(len(mac)) + mac
    p += b"\x28" + varint(nnodes)  # cluster_nodes
    p += b"\x30" + varint(1)  # frame_integrity mac (the daemons' default): get as far as the mac check
    return p


def frame(ftype, payload=b"", tag=0):
    return struct.pack("<IBBHQ", len(payload), ftype, 0, 0, tag) + payload


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    host, port, node, nnodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(frame(W_HELLO, hello(node, nnodes, nonce=os.urandom(32))))
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
        s.sendall(frame(W_AUTH, hello(node, nnodes, mac=os.urandom(32))))
        s.sendall(frame(W_PING, tag=77))
    except OSError:
        pass  # already closed: fine
    try:
        hdr = recv_exact(s, 16)
    except socket.timeout:
        print("mn_rogue: the acceptor kept the connection open 5 s after a wrong mac", file=sys.stderr)
        return 1
    except ConnectionResetError:
        hdr = None
    if hdr is not None:
        ftype = struct.unpack("<IBBHQ", hdr)[1]
        print("mn_rogue: the acceptor sent frame type %d after a wrong mac%s" %
              (ftype, " (a PONG: it accepted us!)" if ftype == W_PONG else ""), file=sys.stderr)
        return 1
    print("mn_rogue: refused after the wrong mac, as it should be", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
