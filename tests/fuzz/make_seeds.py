#!/usr/bin/env python3
"""Write the seed corpora of tests/fuzz/corpus/<target>/ (small, valid
inputs of every kind each target parses). Run again after changing a
format; libFuzzer finds the rest from these.

    python3 tests/fuzz/make_seeds.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ABI = 2  # HOIST_ABI_VERSION


def out(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- protobuf by hand (varint, length-delimited) -------------------------
def varint(v):
    v &= (1 << 64) - 1
    b = bytearray()
    while True:
        x = v & 0x7F
        v >>= 7
        if v:
            b.append(x | 0x80)
        else:
            b.append(x)
            return bytes(b)


def pb_int(field, v):
    return varint(field << 3) + varint(v)


def pb_bytes(field, data):
    return varint(field << 3 | 2) + varint(len(data)) + data


# ---- descriptors ----------------------------------------------------------
PUT, GET, QUIET, FENCE, NOTIFY, NOP, PHASE = 1, 2, 3, 4, 5, 6, 7
PUT_S, GET_S, PUT_V, GET_V, COLL = 8, 9, 10, 11, 12
F_INLINE, F_LOCAL_HEAP, F_CQE, F_AGG = 1, 2, 4, 8


def sqe(op, flags=0, pe=0, remote=0, length=0, local=0, inline=b"", user=0):
    return struct.pack("<BBHiQIIQQQ16s", op, flags, 0, pe, user, 0, 0, remote, length, local,
                       inline.ljust(16, b"\0"))


def amo_sqe(amo_op, amo_type, flags=F_CQE, pe=0, remote=0, length=8, local=0, value=0, cmp=0):
    """HOIST_OP_AMO (13): reserved0 carries amo_op (low byte) and amo_type."""
    return struct.pack("<BBBBiQIIQQQQQ", 13, flags, amo_op, amo_type, pe, 0, 0, 0, remote, length,
                       local, value, cmp)


def strided_args(stride, count):
    return struct.pack("<qQ", stride, count)


def coll_args(kind, typ=0, op=0, flags=0):
    return struct.pack("<BBBBIQ", kind, typ, op, flags, 0, 0)


descs = {
    "put_inline": sqe(PUT, F_INLINE | F_CQE, 0, 64, 8, inline=b"ABCDEFGH"),
    "put_staging": sqe(PUT, 0, 0, 128, 256, 0),
    "get_staging": sqe(GET, F_CQE, 0, 128, 256, 512),
    "put_local_heap": sqe(PUT, F_LOCAL_HEAP, 0, 4096, 64, 0),
    "put_agg": sqe(PUT, F_INLINE | F_AGG, 0, 64, 8, inline=b"12345678"),
    "strided_put": sqe(PUT_S, 0, 0, 0, 16, 0, strided_args(64, 8)),
    "strided_get_back": sqe(GET_S, F_CQE, 0, 8192, 8, 0, strided_args(-32, 4)),
    "strided_zero": sqe(PUT_S, F_CQE, 0, 0, 8, 0, strided_args(8, 0)),
    "vec_get": sqe(GET_V, 0, 0, 0, 32, 1024, struct.pack("<QQ", 2, 0)),
    "vec_empty": sqe(PUT_V, F_CQE, 0, 0, 0, 0, struct.pack("<QQ", 0, 0)),
    "quiet": sqe(QUIET, F_CQE),
    "fence": sqe(FENCE),
    "nop": sqe(NOP, F_CQE),
    "phase": sqe(PHASE, 0, 0, 7),
    "coll_bcast": sqe(COLL, 0, 0, 0, 8, 64, coll_args(1)),
    "coll_allreduce": sqe(COLL, 0, 0, 0, 16, 64, coll_args(3, 1, 0)),
    "amo_fetch_add": amo_sqe(5, 1, remote=64, local=8, value=3),
    "amo_cswap32_heap": amo_sqe(3, 5, F_CQE | F_LOCAL_HEAP, remote=4, length=4, local=128, value=1, cmp=0),
    "amo_set_double": amo_sqe(1, 4, 0, remote=16, value=0x3ff0000000000000),
}
for name, d in descs.items():
    out("fuzz_validate", name, d + bytes([4, 20, 16]))
# the ring target: short programs of descriptors (a one-rank job: pe 0)
ring = [
    ("put_get", [descs["put_inline"], descs["put_staging"], descs["get_staging"]]),
    ("strided", [descs["strided_put"], descs["strided_get_back"], descs["strided_zero"]]),
    ("agg_then_nop", [descs["put_agg"], descs["put_agg"], descs["nop"]]),
    ("sync", [descs["fence"], descs["quiet"], descs["phase"], descs["nop"]]),
    ("coll", [descs["coll_bcast"], descs["coll_allreduce"]]),
    ("vec", [descs["vec_empty"], descs["vec_get"]]),
    ("local_heap", [descs["put_local_heap"]]),
    ("amo", [descs["amo_set_double"], descs["amo_fetch_add"], descs["amo_cswap32_heap"]]),
]
for name, ds in ring:
    out("fuzz_ring", name, b"".join(ds))

# ---- settings files -------------------------------------------------------
out("fuzz_settings", "basic", b"# hoistd.conf\nspin_us = 50\nsq_entries = 256\nlog_level = info\n")
out("fuzz_settings", "sizes", b"staging_bytes = 4m\nmax_heap_bytes=1g\ntcp-buffer-bytes = 64k\n")
out("fuzz_settings", "cluster",
    b"nodes = 127.0.0.1:7701,127.0.0.1:7702\nnode_id = 1\ncluster_key_file = /etc/hoist/cluster.key\n"
    b"transport = tcp\nheartbeat_ms = 100\n")
ex = os.path.join(HERE, "..", "..", "deploy", "hoistd.conf.example")
if os.path.exists(ex):
    with open(ex, "rb") as f:
        out("fuzz_settings", "example", f.read())
out("fuzz_settings", "bad_line", b"spin_us 5\n")

# ---- attach socket (byte 0: 0 attach, 1 peers) ----------------------------
def attach(key, rank, size, heap, abi=ABI, blocking=0):
    m = pb_int(1, abi) + pb_bytes(2, key) + pb_int(3, rank) + pb_int(4, size) + pb_int(5, 1234)
    m += pb_int(6, heap) + pb_int(7, blocking)
    return m


out("fuzz_attach", "attach_ok", b"\0" + attach(b"job", 0, 2, 65536))
out("fuzz_attach", "attach_blocking", b"\0" + attach(b"job-x", 1, 4, 1 << 20, blocking=1))
out("fuzz_attach", "attach_bad_abi", b"\0" + attach(b"job", 0, 1, 65536, abi=1))
out("fuzz_attach", "peers_all", b"\1" + pb_int(1, ABI) + pb_bytes(2, b"fuzzjob") +
    pb_bytes(3, b"".join(varint(r) for r in range(6))))
out("fuzz_attach", "peers_one", b"\1" + pb_int(1, ABI) + pb_bytes(2, b"fuzzjob") + pb_int(3, 3))
out("fuzz_attach", "peers_other_job", b"\1" + pb_int(1, ABI) + pb_bytes(2, b"other") + pb_int(3, 0))

# ---- stats socket -----------------------------------------------------------
out("fuzz_stats", "plain", pb_int(2, ABI))
out("fuzz_stats", "settings", pb_int(1, 1) + pb_int(2, ABI))

# ---- daemon-to-daemon frames ------------------------------------------------
W = dict(HELLO=1, AUTH=2, BARRIER=9, MEMBER=10, PE_GONE=11, AMO=17, AMO_REPLY=18, PACK=20,
         PACK_REPLY=21, COLL=24, COLL_ABORT=25)


def frame(typ, ext, payload=b"", tag=1):
    return struct.pack("<IBBHQ", len(payload), typ, 0, len(ext), tag) + ext + payload


def pack_elem(op, pe, off, data=b"", length=None):
    n = len(data) if length is None else length
    e = struct.pack("<BBHiIIQ", op, 0, 0, pe, 0, n, off)
    if op == 1:
        e += data + b"\0" * ((-len(data)) % 8)
    return e


def pack_amo(pe, off, amo_op, amo_type, value, length=8):
    """WIRE_PACK_AMO (3): the element, then struct wire_pack_amo."""
    return pack_elem(3, pe, off, length=length) + struct.pack("<BB6xQ", amo_op, amo_type, value)


pk = pack_elem(1, 0, 16, b"hello") + pack_elem(2, 1, 0, length=12) + pack_elem(2, 2, 0, length=8)
out("fuzz_wire", "pack", frame(W["PACK"], struct.pack("<QII", 43, 3, 0), pk))
out("fuzz_wire", "pack_here", frame(W["PACK"], struct.pack("<QII", 41, 2, 0),
                                      pack_elem(1, 1, 4000, b"x" * 96) + pack_elem(2, 0, 0, length=4096)))
# non-fetching atomics packed with a put and a get: XOR, ADD (int64), INC (uint32)
out("fuzz_wire", "pack_amo", frame(W["PACK"], struct.pack("<QII", 41, 4, 0),
                                     pack_amo(0, 64, 10, 2, 0xff00) + pack_elem(1, 1, 8, b"abcdefgh") +
                                     pack_amo(1, 8, 4, 1, 5) + pack_amo(0, 4, 6, 5, 0, length=4)))
out("fuzz_wire", "pack_reply", frame(W["PACK_REPLY"], struct.pack("<Ii", 1, 0), struct.pack("<iI", 0, 0)))
out("fuzz_wire", "barrier", frame(W["BARRIER"], struct.pack("<QII", 42, 3, 1)))
out("fuzz_wire", "pe_gone", frame(W["PE_GONE"], struct.pack("<QiIIIQ", 42, 1, 1, 3, 0, 99)))
out("fuzz_wire", "coll", frame(W["COLL"], struct.pack("<QIBBBBiIQQQ", 42, 1, 3, 1, 0, 0, 0, 0, 16, 0, 16),
                                 b"\1" * 16))
# an atomic for job 42 (odd first byte: fuzz_wire keeps this job), and a
# reply to an atomic nobody sent
out("fuzz_wire", "amo", frame(W["AMO"], struct.pack("<QiIQQQQBBB5x", 41, 1, 0, 64, 5, 0, 7, 5, 1, 8)))
out("fuzz_wire", "amo_reply", frame(W["AMO_REPLY"], struct.pack("<QiIQ", 7, 0, 0, 99)))
out("fuzz_wire", "coll_abort", frame(W["COLL_ABORT"], struct.pack("<QIi", 42, 1, -22)))
key = b"job-1"
ranks = struct.pack("<iIQ", 0, 0, 7) + struct.pack("<iIQ", 1, 0, 8)
out("fuzz_wire", "member", frame(W["MEMBER"], struct.pack("<QiIQHHI", 0, 4, 1000, 65536, len(key), 1, 2),
                                   key + ranks))
out("fuzz_wire", "hello", frame(W["HELLO"], b"", pb_int(1, 2) + pb_int(2, 1) + pb_bytes(3, b"n" * 16) +
                                  pb_bytes(4, b"m" * 32) + pb_int(5, 2)))
