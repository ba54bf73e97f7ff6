#!/usr/bin/env python3
"""ring-seeds.py DIR - seed inputs for fuzz-ring (format: fuzz-ring.c):
ring files with samples, stacks, markers and module events, and ones a
process scribbles on between two reads."""
import os, struct, sys

HEAD = 112  # offsetof(struct ring_file, cmdline)

def header(pid=4242, hz=1000, head=0, lost=0, modgen=1, modlog_len=0):
    # magic..start_ns, then head tail lost modlog_len modgen done
    h = b"PRFRING1" + struct.pack("<II", 1, 4096)
    h += struct.pack("<QQQQ", 4096, 4096, 8192, 4096)
    h += struct.pack("<IIIIq", pid, 1, hz, 0, 1700000000 * 10**9)
    h += struct.pack("<QQQQII", head, 0, lost, modlog_len, modgen, 0)
    assert len(h) == HEAD, len(h)
    return h + b"prog\0arg1\0".ljust(40, b"\0") + b"prog".ljust(16, b"\0")

def sample(tid, weight, gen, pcs):
    words = 2 + len(pcs)
    return struct.pack("<IIII", (1 << 24) | words, tid, weight, gen) + \
        b"".join(struct.pack("<Q", p) for p in pcs)

def forked(pid, state, gen, pcs=()):
    words = 2 + len(pcs)
    return struct.pack("<IIII", (5 << 24) | words, pid, state, gen) + \
        b"".join(struct.pack("<Q", p) for p in pcs)

def repeat(tid, weight):
    return struct.pack("<IIII", (6 << 24) | 2, tid, weight, 0)

def reaped(pid, cpu_ns):
    return struct.pack("<IIQ", (4 << 24) | 2, pid, cpu_ns)

def skip(words):
    return struct.pack("<I", (2 << 24) | words) + b"\0" * (words * 8 - 4)

def module(event, gen, base, start, end, path):
    p = path.encode()
    size = (88 + len(p) + 1 + 7) & ~7
    rec = struct.pack("<IHHII", size, event, 20, gen, len(p))
    rec += struct.pack("<QQQQq", base, start, end, 0x1000, 0) + bytes(range(20)).ljust(32, b"\0")
    return (rec + p).ljust(size, b"\0")

def seed(layout, data, modlog, patches=b"", **kw):
    return bytes([layout]) + header(**kw) + struct.pack("<H", len(data)) + data + \
        struct.pack("<H", len(modlog)) + modlog + patches

def patch(off, data):
    return struct.pack("<HB", off // 8, len(data)) + data

mods = module(1, 1, 0x400000, 0x401000, 0x402000, "/usr/bin/prog") + \
    module(1, 2, 0x7f0000000000, 0x7f0000001000, 0x7f0000009000, "/lib/libc.so.6") + \
    module(2, 3, 0x7f0000000000, 0x7f0000001000, 0x7f0000009000, "/lib/libc.so.6")
recs = sample(4242, 1, 1, [0x401010]) + \
    sample(4243, 3, 2, [0x7f0000001234, 0x401020, 0x401030]) + \
    sample(4242, 1, 3, [0x7f0000001234, 0xfffffffffffffffe]) + \
    sample(4242, 2, 1, [0x401010, 0xffffffffffffffff]) + skip(4) + \
    sample(4242, 1, 1, [0x12345678])
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
seeds = {
    "plain": seed(0x04, recs, mods),
    "nomods": seed(0x00, recs, b""),
    "bigdata": seed(0x05 | 0x20, recs, mods),
    "raw-header": seed(0x10 | 0x04, recs, mods),
    # the process changes the layout after the reader checked it
    "grow-data": seed(0x04, recs, mods, patch(24, struct.pack("<Q", 1 << 30))),
    "move-modlog": seed(0x04, recs, mods, patch(32, struct.pack("<QQ", 1 << 20, 1 << 30))),
    # records and modules that arrive between the two reads
    "grow": seed(0x24, recs, mods, patch(72, struct.pack("<Q", len(recs))) +
                 patch(96, struct.pack("<Q", len(mods))), head=24, modlog_len=96),
    # a module record rewritten after its size was checked
    "path-len": seed(0x04, recs, mods, patch(4096 + 4096 + 8, struct.pack("<HHI", 1, 0xffff, 0xffffffff))),
    "head-back": seed(0x04, recs, mods, patch(72, struct.pack("<QQ", 8, 1 << 62))),
    "huge-record": seed(0x04, struct.pack("<IIII", (1 << 24) | 0xffffff, 1, 1, 1), mods),
    # forked children's words, one with the fork's callers, and their reaps
    "forked": seed(0x04, recs + forked(5000, 1, 2, [0x401020, 0x7f0000001235, 0xfffffffffffffffe]) +
                   forked(5001, 1, 1) + forked(5001, 2, 1) + forked(5001, 1, 3, [0x401031]) +
                   reaped(5000, 3000000) + reaped(5001, 2000000), mods),
    # threads' last weights: one after a sample of its own, one with none
    "repeat": seed(0x04, recs + repeat(4243, 2) + repeat(4242, 1) + repeat(4999, 3), mods),
}
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
