"""The daemons' tcp wire as the multinode test scripts that play a peer
speak it (mn_rogue.py, mn_rogue_pack.py; imported from their folder).

Frame: 16-byte header <plen u32, type u8, flags u8, hlen u16, tag u64>,
little endian, then hlen bytes of header extension, then the payload; the
hello and auth payloads are protobuf PeerHello (proto/hoist.proto).
"""
import os
import re
import socket
import struct


def _wire_version():
    """WIRE_VERSION as daemon/wire.h defines it (read, so it never drifts)."""
    h = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "daemon", "wire.h")
    with open(h) as f:
        m = re.search(r"#define WIRE_VERSION (\d+)u", f.read())
    if not m:
        raise RuntimeError("no WIRE_VERSION in " + h)
    return int(m.group(1))


# daemon/wire.h
WIRE_VERSION = _wire_version()
W_HELLO, W_AUTH, W_PING, W_PONG, W_PACK, W_PACK_REPLY = 1, 2, 12, 13, 20, 21
HDR = "<IBBHQ"


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


def read_varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def pb_bytes_field(buf, want):
    """Value of length-delimited field `want` in a protobuf message."""
    i = 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        field, wt = key >> 3, key & 7
        if wt == 0:
            _, i = read_varint(buf, i)
        elif wt == 2:
            n, i = read_varint(buf, i)
            if field == want:
                return buf[i:i + n]
            i += n
        else:
            return None
    return None


def hello(node, nnodes, nonce=None, mac=None, integrity=None):
    """PeerHello: proto_version, node_id, nonce, mac, cluster_nodes and, if
    given, frame_integrity (1: mac, the daemons' default)."""
    p = b"\x08" + varint(WIRE_VERSION) + b"\x10" + varint(node)
    if nonce is not None:
        p += b"\x1a" + varint(len(nonce)) + nonce
    if mac is not None:
        p += b"\x22" + varint(len(mac)) + mac
    p += b"\x28" + varint(nnodes)
    if integrity is not None:
        p += b"\x30" + varint(integrity)
    return p


def frame(ftype, payload=b"", tag=0, ext=b""):
    return struct.pack(HDR, len(payload), ftype, 0, len(ext), tag) + ext + payload


def recv_exact(s, n):
    """n bytes from s, None if it closed first."""
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def closed_without_reply(s):
    """None if the daemon closed s without sending anything more, else what
    it did instead."""
    try:
        hdr = recv_exact(s, 16)
    except socket.timeout:
        return "kept the connection open 5 s"
    except ConnectionResetError:
        return None
    if hdr is None:
        return None
    ftype = struct.unpack(HDR, hdr)[1]
    return "answered with frame type %d%s" % (ftype, " (a PONG: it accepted us!)" if ftype == W_PONG else "")
