#!/usr/bin/env python3
"""Rewrites the PERF_RECORD_COMPRESSED (81) records of a `perf record -z` file as
PERF_RECORD_COMPRESSED2 (83), the layout perf 6.16+ writes: `u64 data_size` after the header,
then the same zstd bytes, padded to 8 bytes. Everything else is copied; in file mode the
data section's size and the feature sections' offsets after it are moved by what the records
grew. With --back, turns 83 into 81 (so that an older perf can read a COMPRESSED2 file).

    scripts/compressed2.py IN OUT [--back]
"""
import struct
import sys


def records(d, start, end, e, tail):
    """The records of d[start:end]; what follows the last whole one goes to `tail`."""
    p = start
    while p + 8 <= end:
        t, m, s = struct.unpack_from(e + 'IHH', d, p)
        extra = 0
        if t == 66 and s >= 12:  # HEADER_TRACING_DATA: its data follows
            extra = struct.unpack_from(e + 'I', d, p + 8)[0]
        if s < 8 or p + s + extra > end:
            break
        yield p, t, m, d[p:p + s + extra]
        p += s + extra
    tail.append(d[p:end])


def convert(rec, t, m, e, back):
    if not back and t == 81:
        data = rec[8:]
        size = 16 + len(data)
        pad = (-size) % 8
        if size + pad > 0xffff:
            raise SystemExit('record too large for COMPRESSED2')
        return struct.pack(e + 'IHHQ', 83, m, size + pad, len(data)) + data + b'\0' * pad
    if back and t == 83:
        n = struct.unpack_from(e + 'Q', rec, 8)[0]
        data = rec[16:16 + n]
        return struct.pack(e + 'IHH', 81, m, 8 + len(data)) + data
    return rec


def main(src, dst, back=False):
    d = open(src, 'rb').read()
    e = '<' if d[:8] == b'PERFILE2' else '>'
    hsize = struct.unpack_from(e + 'Q', d, 8)[0]
    if hsize == 16:  # pipe mode
        out, tail = bytearray(d[:16]), []
        for _, t, m, rec in records(d, 16, len(d), e, tail):
            out += convert(rec, t, m, e, back)
        # what is no record (a cut record, text appended to the stream) is copied as it is
        open(dst, 'wb').write(out + tail[0])
        return
    data_off, data_size = struct.unpack_from(e + 'QQ', d, 40)
    end = data_off + data_size
    body, tail = bytearray(), []
    for _, t, m, rec in records(d, data_off, end, e, tail):
        body += convert(rec, t, m, e, back)
    if tail[0]:
        raise SystemExit(f'the data section ends inside a record at {end - len(tail[0])}')
    delta = len(body) - data_size
    out = bytearray(d[:data_off]) + body
    struct.pack_into(e + 'Q', out, 48, len(body))
    # the feature-section table follows the data: (offset, size) per set feature bit
    bits = struct.unpack_from(e + '4Q', d, 72)
    n = sum(bin(b).count('1') for b in bits)
    table = bytearray(d[end:end + 16 * n])
    for k in range(n):
        off, size = struct.unpack_from(e + 'QQ', table, 16 * k)
        struct.pack_into(e + 'QQ', table, 16 * k, off + delta, size)
    out += table + d[end + 16 * n:]
    open(dst, 'wb').write(out)


if __name__ == '__main__':
    args = [a for a in sys.argv[1:] if a != '--back']
    if len(args) != 2:
        raise SystemExit(__doc__)
    main(args[0], args[1], '--back' in sys.argv)
