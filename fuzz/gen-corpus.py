#!/usr/bin/env python3
# Writes the seed corpora (fuzz/corpus/ring, fuzz/corpus/args): a handful
# of hand-made inputs per target, so a short CI run starts from the
# interesting shapes instead of from nothing.  Re-run to regenerate.
import os
import struct

top = os.path.dirname(os.path.abspath(__file__))
MAGIC = 0xa10a10a1


def ring(name, head, tail, nr_cached, maxev, magic=MAGIC, incompat=0,
         hlen=32, nr_word=None, flags=0, slots=b""):
    hdr = struct.pack("<8I", 0, nr_word if nr_word is not None else nr_cached,
                      head, tail, magic, 1, incompat, hlen)
    body = hdr + struct.pack("<Hi", nr_cached - 1, maxev) + bytes([flags])
    if not slots:
        slots = b"".join(struct.pack("<QQqq", 0x1000 + i, 0x2000 + i, i, 0)
                         for i in range(8))
    write("ring", name, body + slots)


def rec(op, ctx_kind, p1, p2, a, b, x=0, y=0):
    return struct.pack("<BBBBiiQI", op, ctx_kind, p1, p2, a, b, x, y)


def write(kind, name, data):
    d = os.path.join(top, "corpus", kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


ring("empty", 5, 5, 127, 16)
ring("three-ready", 0, 3, 127, 16)
ring("wrap", 125, 2, 127, 16)
ring("wrap-partial", 120, 10, 127, 4)
ring("full", 1, 0, 127, 200)
ring("max-zero", 0, 5, 127, 0)
ring("max-negative", 0, 5, 127, -7)
ring("head-out", 127, 3, 127, 16)
ring("tail-huge", 0, 0xffffffff, 127, 16)
ring("bad-magic", 0, 3, 127, 16, magic=0)
ring("incompat", 0, 3, 127, 16, incompat=1)
ring("hdrlen-64", 0, 3, 127, 16, hlen=64)
ring("nr-word-lies", 0, 100, 8, 16, nr_word=100000)
ring("nr-one", 0, 0, 1, 1)
ring("big", 8000, 100, 8319, 512, flags=4)
ring("forced", 7, 3, 255, 300, magic=0, incompat=9, flags=7)

# args: sequences of 24-byte call records (see fuzz-args.c).
write("args", "getevents-live", rec(0, 0, 0, 0, 0, 8) + rec(0, 0, 0, 0, 9, 8))
write("args", "getevents-garbage", rec(0, 6, 0, 2, 1, 8) + rec(0, 7, 2, 0, 0, 4)
      + rec(0, 8, 3, 4, -1, 4) + rec(0, 9, 0, 0, 1, 1, x=0xdeadbeef000))
write("args", "pgetevents", rec(1, 0, 0, 0, 0, 4) + rec(1, 5, 40, 0, 1, 4)
      + rec(1, 3, 16, 2, 1, 1))
write("args", "reap", rec(2, 0, 0, 0, 0, 4) + rec(2, 0, 2, 0, 0, -1)
      + rec(2, 6, 0, 0, 0, 4))
write("args", "submit-live", rec(3, 0, 0, 4, 0, 4) + rec(0, 0, 0, 0, 0, 16))
write("args", "submit-garbage", rec(3, 6, 0, 4, 0, 4) + rec(4, 7, 2, 4, 0, 4)
      + rec(3, 0, 4, 4, 0, -3))
write("args", "cancel", rec(5, 0, 0, 0, 0, 0) + rec(5, 6, 2, 8, 0, 0))
write("args", "queue", rec(10, 0, 0, 0, 0, 0) + rec(8, 0, 0, 0, 0, 0)
      + rec(9, 4, 0, 5, 0, 0) + rec(11, 0, 0, 0, 16, 0)
      + rec(11, 0, 2, 0, 16, 0) + rec(12, 0, 0, 0, -1, 0))
write("args", "destroy", rec(13, 0, 0, 0, 0, 0) + rec(13, 3, 0, 0, 0, 0)
      + rec(13, 6, 0, 0, 0, 0) + rec(14, 3, 0, 0, 0, 0))
write("args", "old-versions", rec(6, 0, 0, 0, 0, 4) + rec(7, 6, 0, 0, 0, 0)
      + rec(9, 0, 0, 0, 0, 0))
