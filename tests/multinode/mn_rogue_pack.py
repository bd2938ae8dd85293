#!/usr/bin/env python3
"""A peer that holds the cluster key and sends malformed packs (W_PACK).

  mn_rogue_pack.py HOST PORT NODE_ID NNODES KEYFILE

For each case it connects to the hoistd at HOST:PORT as NODE_ID of NNODES,
completes the keyed handshake (BLAKE2b-256 of the key file, HMAC-SHA256
macs as in daemon/transport/tcp/tcp.c), then sends one pack:
  - well formed, for a job that does not exist: the daemon must answer
    with a W_PACK_REPLY whose every element says -ECONNRESET, and answer a
    PING after it (the connection stays up);
  - malformed content in an intact frame (element count larger than the
    payload holds, unknown element op, put data running past the payload,
    reserved bits set, a header extension of the wrong size, a reply that
    could not travel in 60 KiB, trailing bytes, zero elements): the pack
    rule (daemon/stages/pack.h) - refused whole: the daemon answers a W_PACK_REPLY
    with status -EPROTO and no element results, and the connection stays
    up (a PING after it is answered). All of them go on one connection;
  - a pack frame larger than any pack (payload over 60 KiB): not a pack
    at all, a framing error: the daemon closes the connection without any
    reply.
Exit 0 if every case behaved; 1 otherwise (printing which).
"""
import hashlib
import hmac
import os
import socket
import struct
import sys

from mn_wire import (W_AUTH, W_HELLO, W_PACK, W_PACK_REPLY, W_PING, W_PONG,
                     closed_without_reply, frame, hello, pb_bytes_field, recv_exact)

AM_MAX = 60 << 10
PUT, GET = 1, 2


def connect(host, port, node, nnodes, key):
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(frame(W_HELLO, hello(node, nnodes, nonce=os.urandom(32))))
    hdr = recv_exact(s, 16)
    if hdr is None:
        raise RuntimeError("no hello from the acceptor")
    plen, ftype, _, hlen, _ = struct.unpack("<IBBHQ", hdr)
    body = recv_exact(s, plen)
    nonce = pb_bytes_field(body, 3)
    if ftype != W_HELLO or nonce is None:
        raise RuntimeError("unexpected hello answer")
    mac = hmac.new(key, b"connector" + nonce + struct.pack("<ii", 0 if node else 1, node),
                   hashlib.sha256).digest()
    s.sendall(frame(W_AUTH, hello(node, nnodes, mac=mac)))
    # prove the handshake worked: a ping is answered
    s.sendall(frame(W_PING, tag=5))
    hdr = recv_exact(s, 16)
    if hdr is None or struct.unpack("<IBBHQ", hdr)[1] != W_PONG:
        raise RuntimeError("handshake with the key failed (no PONG)")
    return s


def elem(op, pe, off, length, seg=0, r0=0, r1=0):
    return struct.pack("<BBHiIIQ", op, r0, r1, pe, seg, length, off)


def pad8(b):
    return b + b"\0" * ((8 - len(b) % 8) % 8)


def pack(nelem, payload, job=12345, reserved=0):
    return struct.pack("<QII", job, nelem, reserved), payload


EPROTO = 71


def refused_and_alive(s, tag, nelem):
    """None if s got the -EPROTO answer to pack `tag` and answers a PING."""
    try:
        hdr = recv_exact(s, 16)
    except (socket.timeout, ConnectionResetError) as e:
        return "no answer (%s)" % type(e).__name__
    if hdr is None:
        return "closed the connection"
    plen, ftype, _, hlen, rtag = struct.unpack("<IBBHQ", hdr)
    rest = recv_exact(s, hlen + plen)
    if ftype != W_PACK_REPLY or rtag != tag or hlen != 8 or plen != 0 or rest is None:
        return "answered type %d tag %d hlen %d plen %d" % (ftype, rtag, hlen, plen)
    n, status = struct.unpack("<Ii", rest[:8])
    if status != -EPROTO or n != nelem:
        return "answered nelem %d status %d (want %d, -EPROTO)" % (n, status, nelem)
    s.sendall(frame(W_PING, tag=tag + 1000))
    hdr = recv_exact(s, 16)
    if hdr is None or struct.unpack("<IBBHQ", hdr)[1] != W_PONG:
        return "answered, but then no PONG"
    return None


def main():
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    host, port, node, nnodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    raw = open(sys.argv[5], "rb").read().rstrip(b"\r\n")
    key = hashlib.blake2b(raw, digest_size=32).digest()
    bad = 0

    # well formed, unknown job: per-element -ECONNRESET, connection stays up
    s = connect(host, port, node, nnodes, key)
    body = elem(PUT, 0, 0, 5) + pad8(b"hello") + elem(GET, 0, 64, 16)
    ext, payload = pack(2, body)
    s.sendall(frame(W_PACK, payload, tag=9, ext=ext))
    hdr = recv_exact(s, 16)
    plen, ftype, _, hlen, tag = struct.unpack("<IBBHQ", hdr)
    rest = recv_exact(s, hlen + plen)
    if ftype != W_PACK_REPLY or tag != 9 or hlen != 8:
        print("mn_rogue_pack: well-formed pack: answer type %d tag %d hlen %d" % (ftype, tag, hlen),
              file=sys.stderr)
        bad = 1
    else:
        n, status = struct.unpack("<Ii", rest[:8])
        res = [struct.unpack("<iI", rest[8 + 8 * k:16 + 8 * k]) for k in range(2)]
        if n != 2 or status != 0 or res != [(-104, 0), (-104, 0)] or plen != 16:
            print("mn_rogue_pack: well-formed pack for no job: reply %r %r" % ((n, status), res),
                  file=sys.stderr)
            bad = 1
    s.sendall(frame(W_PING, tag=6))
    hdr = recv_exact(s, 16)
    if hdr is None or struct.unpack("<IBBHQ", hdr)[1] != W_PONG:
        print("mn_rogue_pack: no PONG after a well-formed pack", file=sys.stderr)
        bad = 1
    s.close()

    gets = b"".join(elem(GET, 0, 0, 8000) for _ in range(8))  # replies > 60 KiB
    cases = [
        ("element count larger than the payload", pack(3, elem(GET, 0, 0, 8))),
        ("unknown element op", pack(1, elem(7, 0, 0, 8))),
        ("put data past the payload", pack(1, elem(PUT, 0, 0, 64) + b"\0" * 8)),
        ("reserved element bits", pack(1, elem(GET, 0, 0, 8, r0=1))),
        ("reserved header bits", pack(1, elem(GET, 0, 0, 8), reserved=1)),
        ("reply over 60 KiB", pack(8, gets)),
        ("trailing bytes", pack(1, elem(GET, 0, 0, 8) + b"\0" * 8)),
        ("zero elements", pack(0, b"")),
        ("header extension of the wrong size",
         (struct.pack("<QIIQ", 12345, 1, 0, 0), elem(GET, 0, 0, 8))),
    ]
    s = connect(host, port, node, nnodes, key)
    for k, (what, (ext, payload)) in enumerate(cases):
        tag = 100 + k
        s.sendall(frame(W_PACK, payload, tag=tag, ext=ext))
        nelem = struct.unpack("<I", ext[8:12])[0] if len(ext) == 16 else 0
        why = refused_and_alive(s, tag, nelem)
        if why:
            print("mn_rogue_pack: %s: the daemon %s" % (what, why), file=sys.stderr)
            bad = 1
            break
    s.close()

    # not a pack at all: the connection drops
    s = connect(host, port, node, nnodes, key)
    ext, payload = pack(1, elem(PUT, 0, 0, AM_MAX) + b"\0" * AM_MAX)
    try:
        s.sendall(frame(W_PACK, payload, tag=1, ext=ext))
    except OSError:
        pass
    why = closed_without_reply(s)
    if why:
        print("mn_rogue_pack: payload over 60 KiB: the daemon %s" % why, file=sys.stderr)
        bad = 1
    s.close()
    if not bad:
        print("mn_rogue_pack: %d malformed packs refused (-EPROTO, connection kept), the oversized "
              "frame dropped, the well-formed one answered" % len(cases), file=sys.stderr)
    return bad


if __name__ == "__main__":
    sys.exit(main())
