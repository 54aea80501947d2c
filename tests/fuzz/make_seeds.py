#!/usr/bin/env python3
"""Writes the seed corpora in corpus/<target>/ (run from anywhere; the files
are checked in, rerun after a wire format change). One well-formed message
of each kind per mode byte, so the fuzzers start past the magic checks."""
import os, struct

HERE = os.path.dirname(os.path.abspath(__file__))
VER = 1

def put(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def hs_hello(channel, flags, frm, to):
    return struct.pack("<IHHHHiiI", 0x48524447, VER, 1, channel, flags, frm, to, 0) + bytes(range(32))

def hs_reply(rank, flags):
    return struct.pack("<IHHiHH", 0x48524447, VER, 2, rank, flags, 0) + bytes(32) + bytes(32)

def hs_finish():
    return struct.pack("<IHH", 0x48524447, VER, 3) + bytes(32)

def addr(port):
    return struct.pack("<HHI", 2, port, 0) + bytes([127, 0, 0, 1]) + bytes(12)

# handshake: 0 parsers, 1 acceptor (Socket, rank 2), 2 acceptor (BootRing), 3 initiator
put("handshake", "parse-hello", b"\x00" + hs_hello(3, 0, 1, 2))
put("handshake", "parse-reply", b"\x00" + hs_reply(2, 0))
put("handshake", "parse-finish", b"\x00" + hs_finish())
put("handshake", "acceptor-socket", b"\x01" + hs_hello(3, 0, 1, 2) + hs_finish())
put("handshake", "acceptor-ring-enc", b"\x02" + hs_hello(2, 1, 1, 2) + hs_finish())
put("handshake", "initiator", b"\x03" + hs_reply(2, 0))

# bootstrap: 0 hello, 1 table, 2 envelope header, 3/4 envelope, 5 seal/open oracle
put("bootstrap", "rv-hello", b"\x00" + struct.pack("<IHHii", 0x56524447, VER, 0, 1, 4) + addr(4242))
put("bootstrap", "table", b"\x01\x02" + addr(1) + addr(2) + addr(3))
put("bootstrap", "env-hdr", b"\x02" + struct.pack("<IHHQII", 0x4d524447, VER, 0, 0, 0, 0))
put("bootstrap", "env-plain", b"\x03" + struct.pack("<IHHQII", 0x4d524447, VER, 0, 0, 8, 0) + bytes(8) + bytes(32))
put("bootstrap", "env-enc", b"\x04" + struct.pack("<IHHQII", 0x4d524447, VER, 1, 0, 8, 0) + bytes(8) + bytes(16))
put("bootstrap", "oracle", b"\x05" + bytes(range(64)))

# frame: byte0 mode, byte1 receive (bit 0 reduce, size/512 in bits 1-7), byte2 extra size | record size
def frame(ftype, nbytes, payload=b""):
    sig = struct.pack("<BBBBiQQ", 0, 0, 0, 0, 0, 0, 0)
    return struct.pack("<IHH", 0x47445246, VER, ftype) + sig + struct.pack("<Q", nbytes) + payload

data = frame(1, 8192, bytes(range(256)) * 32)
put("frame", "plain-data", b"\x00\x20\x00" + data)
put("frame", "plain-reduce", b"\x00\x21\x00" + data)
put("frame", "plain-empty", b"\x00\x00\x00" + frame(1, 0))
put("frame", "plain-abort", b"\x00\x00\x00" + frame(2, 8, struct.pack("<i", 7) + b"boom"))
put("frame", "enc-raw", b"\x01\x20\x00" + struct.pack("<I", 64) + bytes(64 + 16))
put("frame", "enc-sealed", b"\x02\x20\x03" + data)
put("frame", "enc-sealed-abort", b"\x02\x00\x00" + frame(2, 8, struct.pack("<i", 7) + b"boom"))
put("frame", "peer-abort", b"\x03\x00\x00" + frame(2, 8, struct.pack("<i", 7) + b"boom"))
