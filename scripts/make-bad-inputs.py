#!/usr/bin/env python3
"""make-bad-inputs.py -- build the bad inputs of issue 26 from the captures in traces/.

    scripts/make-bad-inputs.py OUTDIR [--big]

Every file is made from the repository's own captures by a fixed recipe (no randomness), so a
run on any machine gives the same bytes. Each name says what is wrong with it; the bad-input
catalogue (tests/bad_input_catalogue.rs, tests/hostile.rs, tests/issue26_inputs.rs) holds the
outcome cidscope must give for each. `--big` adds the inputs of gigabytes (a sparse file, one
huge line) that the tests build only in small versions.
"""
import gzip
import lzma
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACES = os.path.join(ROOT, 'traces')


def read(name):
    with open(os.path.join(TRACES, name), 'rb') as f:
        return f.read()


HEADER = (b'# tracer: nop\n#\n# entries-in-buffer/entries-written: %d/%d   #P:2\n#\n'
          b'#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION\n'
          b'#              | |           |       |   |||||     |         |\n')


def line(comm, tid, tgid, cpu, ts_us, event, payload):
    return b'%16s-%-7d (%7d) [%03d] ..... %6d.%06d: %s: %s\n' % (
        comm, tid, tgid, cpu, ts_us // 1000000, ts_us % 1000000, event, payload)


def switch(cpu, ts, prev, nxt, tgid_of):
    (pc, pt), (nc, nt) = prev, nxt
    return line(pc, pt, tgid_of.get(pt, pt), cpu, ts, b'sched_switch',
                b'prev_comm=%s prev_pid=%d prev_prio=120 prev_state=S ==> next_comm=%s next_pid=%d next_prio=120'
                % (pc, pt, nc, nt))


def rseq(comm, tid, tgid, cpu, ts, cid):
    return line(comm, tid, tgid, cpu, ts, b'rseq_update',
                b'cpu_id=%d node_id=0 mm_cid=%d' % (cpu, cid))


def two_cpu_capture(extra):
    """A 2-CPU capture of one process (tgid 100) with threads 100 and 101 that take turns on
    CPUs 0 and 1, CIDs 0 and 1; `extra(lines)` adds the damage. Returns the file's bytes."""
    tg = {100: 100, 101: 100}
    idle0, idle1 = (b'<idle>', 0), (b'<idle>', 0)
    out = []
    ts = 1_000_000_000
    for i in range(200):
        a, b = (100, 101) if i % 2 == 0 else (101, 100)
        out.append(switch(0, ts, idle0, (b'worker', a), tg))
        out.append(rseq(b'worker', a, 100, 0, ts + 2, i % 2))
        out.append(switch(1, ts + 5, idle1, (b'worker', b), tg))
        out.append(rseq(b'worker', b, 100, 1, ts + 7, 1 - i % 2))
        out.append(switch(0, ts + 50, (b'worker', a), idle0, tg))
        out.append(switch(1, ts + 55, (b'worker', b), idle1, tg))
        ts += 100
    extra(out)
    return HEADER % (len(out), len(out)) + b''.join(out)


def stray_cpu_127(out):
    # one stray line on CPU 127 of a #P:2 capture (a task of its own, in time order), and a
    # real finding: CID 5 on a 2-CPU box
    tg = {100: 100, 101: 100}
    at = next(i for i, l in enumerate(out) if b' 1000.010100: ' in l)
    out.insert(at, line(b'stray', 999, 999, 127, 1_000_010_099, b'rseq_update',
                        b'cpu_id=127 node_id=0 mm_cid=0'))
    ts = 1_000_020_001
    out.append(switch(0, ts, (b'<idle>', 0), (b'worker', 100), tg))
    out.append(rseq(b'worker', 100, 100, 0, ts + 2, 5))
    out.append(switch(0, ts + 50, (b'worker', 100), (b'<idle>', 0), tg))


def same_tid_two_cpus(out):
    # thread 101 is switched in on CPU 1 while it still runs on CPU 0 (no switch away), and
    # reports a CID on both for 5 ms: longer than any clock skew between two CPUs
    tg = {100: 100, 101: 100}
    ts = 1_000_030_001
    out.append(switch(0, ts, (b'<idle>', 0), (b'worker', 101), tg))
    out.append(rseq(b'worker', 101, 100, 0, ts + 2, 0))
    out.append(switch(1, ts + 10, (b'<idle>', 0), (b'worker', 101), tg))
    for k in range(10):
        out.append(rseq(b'worker', 101, 100, 1, ts + 12 + 500 * k, 1))
        out.append(rseq(b'worker', 101, 100, 0, ts + 262 + 500 * k, 0))
    out.append(switch(0, ts + 5050, (b'worker', 101), (b'<idle>', 0), tg))
    out.append(switch(1, ts + 5055, (b'worker', 101), (b'<idle>', 0), tg))


def xz(data, **kw):
    return lzma.compress(data, format=lzma.FORMAT_XZ, **kw)


def perf_cpu_128(data):
    """cyclictest.perf.data with the CPU of one rseq_update sample (in the middle) set to 128.
    The sample layout is read from the file's attrs; rseq_update's id from its tracing data."""
    magic, hsize, attr_size = data[:8], *struct.unpack_from('<QQ', data, 8)
    assert magic == b'PERFILE2'
    attrs_off, attrs_size, data_off, data_size = struct.unpack_from('<QQQQ', data, 24)
    sample_type = struct.unpack_from('<Q', data, attrs_off + 24)[0]
    tp = data.find(b'name: rseq_update\nID: ')
    rseq_id = int(data[tp + 22:data.index(b'\n', tp + 22)])
    # the fields before PERF_SAMPLE_CPU: IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID
    before_cpu = sum(8 for bit in (1 << 16, 1, 2, 4, 8, 64, 512) if sample_type & bit)
    before_raw = before_cpu + 8 + sum(8 for bit in (256,) if sample_type & bit)  # CPU, PERIOD
    assert sample_type & 128 and sample_type & 1024, hex(sample_type)  # CPU, RAW
    assert not sample_type & (16 | 32), hex(sample_type)  # no READ, CALLCHAIN
    at, end, rseq_at = data_off, data_off + data_size, []
    while at + 8 <= end:
        rtype, misc, size = struct.unpack_from('<IHH', data, at)
        if size == 0:
            break
        if rtype == 9:
            raw = at + 8 + before_raw + 4
            if struct.unpack_from('<H', data, raw)[0] == rseq_id:
                rseq_at.append(at)
        at += size
    d = bytearray(data)
    hit = rseq_at[len(rseq_at) // 2]
    d[hit + 8 + before_cpu] = 128
    return bytes(d), hit


def with_instance(dat, name=b'inst26'):
    """A version-6 trace.dat with an instance buffer added (what `trace-cmd record -B NAME`
    writes): a BUFFER option (id 3: u64 offset, name) at the head of the options, padded to a
    page so the ring-buffer data keeps its alignment, and at the end the instance's own
    `flyrecord\0` table, whose CPU 0 is a copy of the top-level buffer's CPU 0 data."""
    assert dat[3:10] == b'tracing' and dat[10:12] == b'6\0', 'a version-6 trace.dat'
    page = struct.unpack_from('<I', dat, 14)[0]
    opts = dat.index(b'options  \0')
    at = opts + 10
    while True:  # the options up to OPT_DONE (id 0), then "flyrecord\0"
        oid = struct.unpack_from('<H', dat, at)[0]
        if oid == 0:
            at += 2
            break
        at += 6 + struct.unpack_from('<I', dat, at + 2)[0]
    assert dat[at:at + 10] == b'flyrecord\0', dat[at:at + 10]
    ncpus = struct.unpack_from('<I', dat, opts - 4)[0]
    table = at + 10
    cpus = [struct.unpack_from('<QQ', dat, table + 16 * c) for c in range(ncpus)]
    grow = page  # bytes inserted before the data: one page
    end = len(dat) + grow
    data_at = (end + page - 1) // page * page
    off0, size0 = cpus[0]
    inst_table = data_at + size0
    buf_opt = struct.pack('<HI', 3, 8 + len(name) + 1) + struct.pack('<Q', inst_table) + name + b'\0'
    pad = grow - len(buf_opt) - 6
    pad_opt = struct.pack('<HI', 0x7fff, pad) + b'\0' * pad  # an option id no reader knows
    out = bytearray(dat[:opts + 10] + buf_opt + pad_opt + dat[opts + 10:])
    for c, (off, size) in enumerate(cpus):  # the top-level data moved by a page
        struct.pack_into('<QQ', out, table + grow + 16 * c, off + grow if size else off, size)
    out += b'\0' * (data_at - len(out))
    out += dat[off0:off0 + size0]
    out += b'flyrecord\0'
    out += struct.pack('<QQ', data_at, size0)
    for _ in range(1, ncpus):
        out += struct.pack('<QQ', 0, 0)
    return bytes(out)


def with_stacks(dat, every=25):
    """A version-6 trace.dat whose every `every`-th sched_switch record (by position in its
    ring-buffer pages) is made a kernel_stack record (ftrace's own event 4, what
    options/stacktrace writes after an event): what `trace-cmd record -O stacktrace` gives, in
    a file of a fixed size. The stack's callers are the switch's bytes: garbage addresses."""
    page = struct.unpack_from('<I', dat, 14)[0]
    sw = dat.find(b'name: sched_switch\nID: ')
    sw_id = int(dat[sw + 23:dat.index(b'\n', sw + 23)])
    opts = dat.index(b'options  \0')
    at = opts + 10
    while struct.unpack_from('<H', dat, at)[0] != 0:
        at += 6 + struct.unpack_from('<I', dat, at + 2)[0]
    ncpus = struct.unpack_from('<I', dat, opts - 4)[0]
    table = at + 12
    d = bytearray(dat)
    seen = 0
    for c in range(ncpus):
        off, size = struct.unpack_from('<QQ', dat, table + 16 * c)
        for p in range(off, off + size, page):
            commit = struct.unpack_from('<Q', dat, p + 8)[0] & 0xfffff
            i, end = p + 16, p + 16 + commit
            while i + 4 <= end:
                h = struct.unpack_from('<I', dat, i)[0]
                tl = h & 31
                if tl == 29:  # padding: its length follows
                    i += 4 + struct.unpack_from('<I', dat, i + 4)[0]
                    continue
                if tl in (30, 31):  # time extend, absolute stamp
                    i += 8
                    continue
                if tl == 0:
                    n, body = struct.unpack_from('<I', dat, i + 4)[0] - 4, i + 8
                else:
                    n, body = tl * 4, i + 4
                if struct.unpack_from('<H', dat, body)[0] == sw_id:
                    seen += 1
                    if seen % every == 0:
                        struct.pack_into('<H', d, body, 4)
                i = body + n
    return bytes(d)


def cases(big):
    ftrace = read('cyclictest.ftrace.txt')
    lines = ftrace.splitlines(keepends=True)
    body_at = next(i for i, l in enumerate(lines) if not l.startswith(b'#'))
    yield 'two-streams.ftrace.txt.xz', xz(b''.join(lines[:7000])) + xz(b''.join(lines[7000:]))
    yield 'two-streams-padded.ftrace.txt.xz', (xz(b''.join(lines[:7000])) + b'\0' * 8
                                               + xz(b''.join(lines[7000:])))
    yield 'cut-at-line-boundary.ftrace.txt', b''.join(lines[:body_at + 3740])
    yield 'header-claims-99999.ftrace.txt', ftrace.replace(b'14277/14277', b'99999/99999', 1)
    yield 'stray-cpu-127.ftrace.txt', two_cpu_capture(stray_cpu_127)
    yield 'same-tid-two-cpus.ftrace.txt', two_cpu_capture(same_tid_two_cpus)
    d, _ = perf_cpu_128(read('cyclictest.perf.data'))
    yield 'cpu-128.perf.data', d
    yield 'nul-tail.ftrace.txt', ftrace + b'\0' * (1 << 20)
    yield 'one-long-line.txt', b'x' * (8 << 20) + b'\n'
    gz = gzip.compress(ftrace, mtime=0)
    yield 'cut.ftrace.txt.gz', gz[:len(gz) // 2]
    x = xz(ftrace)
    yield 'cut.ftrace.txt.xz', x[:len(x) // 2]
    dat = gzip.compress(read('cyclictest.trace.dat'), mtime=0)
    yield 'cut-late.trace.dat.gz', dat[:len(dat) * 9 // 10]
    yield 'two-buffers.trace.dat', with_instance(read('cyclictest.trace.dat'))
    yield 'stacks.trace.dat', with_stacks(read('cyclictest.trace.dat'))
    if big:
        yield 'sparse-4g.bin', None
        yield 'one-line-1g.txt', None


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip())
        sys.exit(2)
    out = sys.argv[1]
    big = '--big' in sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    for name, data in cases(big):
        p = os.path.join(out, name)
        if name == 'sparse-4g.bin':
            with open(p, 'wb') as f:
                f.truncate(4 << 30)
        elif name == 'one-line-1g.txt':
            with open(p, 'wb') as f:
                chunk = b'x' * (1 << 20)
                for _ in range(1 << 10):
                    f.write(chunk)
                f.write(b'\n')
        else:
            with open(p, 'wb') as f:
                f.write(data)
        print(p)


if __name__ == '__main__':
    main()
