#!/usr/bin/env python3
"""A tcp proxy between two hoistd daemons that tampers with one stream
(for frames.sh).

  mn_tamper_proxy.py LISTEN_PORT TARGET_PORT ACTION LOG

Listens on 127.0.0.1:LISTEN_PORT and forwards every connection to
127.0.0.1:TARGET_PORT, both ways. In the connector -> acceptor direction
of the FIRST connection it reads the handshake (two plain frames: HELLO
and AUTH, 16-byte header <plen u32, type u8, flags u8, hlen u16, tag u64>
+ plen bytes), then, counting bytes after it, does ACTION once:

  flip:N    flip bit 0x04 of byte N after the handshake
  dup:K     record layer (frame_integrity mac/encrypt): send record K
            (records [u32 len][len bytes][16-byte tag], counted from 0
            after the handshake) twice - a replay
  pass      nothing

Later connections (a reconnect) pass untouched. LOG gets "listening",
"conn I" per connection and "tampered: ..." when ACTION was done.
Runs until killed.
"""
import socket
import struct
import sys
import threading

lock = threading.Lock()
state = {"conns": 0, "done": False}


def log(path, line):
    with lock:
        with open(path, "a") as f:
            f.write(line + "\n")


class Tamper:
    """Connector -> acceptor bytes of the first connection."""

    def __init__(self, action, logpath):
        self.logpath = logpath
        self.kind, _, arg = action.partition(":")
        self.arg = int(arg) if arg else 0
        self.hs = b""        # handshake bytes not yet complete
        self.hs_frames = 0
        self.after = 0       # bytes after the handshake seen so far
        self.rec = b""       # dup: the current record's bytes
        self.rec_no = 0
        self.active = self.kind != "pass"

    def feed(self, data):
        if not self.active:
            return data
        out = b""
        while self.hs_frames < 2 and data:
            self.hs += data
            data = b""
            if len(self.hs) < 16:
                return out
            plen = struct.unpack_from("<I", self.hs, 0)[0]
            if len(self.hs) < 16 + plen:
                return out
            out += self.hs[:16 + plen]
            data = self.hs[16 + plen:]
            self.hs = b""
            self.hs_frames += 1
        if not data:
            return out
        if self.kind == "flip":
            n = self.arg - self.after
            if 0 <= n < len(data):
                b = bytearray(data)
                b[n] ^= 0x04
                data = bytes(b)
                self.done("flipped bit 0x04 of byte %d after the handshake" % self.arg)
            self.after += len(data)
            return out + data
        if self.kind == "dup":
            self.rec += data
            while len(self.rec) >= 4:
                blen = struct.unpack_from("<I", self.rec, 0)[0]
                total = 4 + blen + 16
                if len(self.rec) < total:
                    break
                one = self.rec[:total]
                self.rec = self.rec[total:]
                out += one
                if self.rec_no == self.arg:
                    out += one
                    self.done("record %d (%d body bytes) sent twice" % (self.rec_no, blen))
                    out += self.rec
                    self.rec = b""
                    return out
                self.rec_no += 1
            return out
        return out + data

    def done(self, what):
        self.active = False
        state["done"] = True
        log(self.logpath, "tampered: " + what)


def pump(src, dst, tamper):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if tamper:
                data = tamper.feed(data)
            if data:
                dst.sendall(data)
    except OSError:
        pass
    for s in (dst, src):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    lport, tport, action, logpath = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", lport))
    ls.listen(16)
    log(logpath, "listening")
    while True:
        c, _ = ls.accept()
        state["conns"] += 1
        log(logpath, "conn %d" % state["conns"])
        try:
            t = socket.create_connection(("127.0.0.1", tport))
        except OSError as e:
            log(logpath, "cannot reach the target: %s" % e)
            c.close()
            continue
        for s in (c, t):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        tamper = Tamper(action, logpath) if state["conns"] == 1 else None
        threading.Thread(target=pump, args=(c, t, tamper), daemon=True).start()
        threading.Thread(target=pump, args=(t, c, None), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
