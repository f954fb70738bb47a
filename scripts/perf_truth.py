#!/usr/bin/env python3
"""Independent counts of the perf variants in traces/ (traces/PUBLIC.md, perf section): per
event name, CPUs, events without a CPU, first and last time, lost events. Written as
FILE.truth.json next to FILE, for tests/perf_variants.rs.

    scripts/perf_truth.py [--source S] [--licence L] [--made-with M] [--refused LINE:TEXT] FILE

Readers, by what the file is:
  * perf.data that the installed perf reads: `perf script --ns --show-lost-events` (default
    fields), its lines counted by the regular expression below; a COMPRESSED2 (83) file is
    first turned back into COMPRESSED (81) records by scripts/compressed2.py --back (perf
    before 6.16 does not read 83). Which events are tracepoints comes from `perf evlist -v`.
  * perf.data that it does not read (an attr ABI newer than the installed perf): a walk of
    the records in Python, compressed records decompressed by the zstd command.
  * perf script text: its lines counted by the same regular expression; a --deltatime text
    (first time 0, times going back and forth) has its deltas added up; a text without the
    time column (no line has one) is counted by the same expression less the time, its times
    those cidscope gives (1 us apart in printed order, from 1000 ns).

Event names: a tracepoint counts under its name without its system (`sched:sched_switch` is
`sched_switch`, as every text format prints it); any other event under perf's full name
(`cycles:Pu`, `cpu-clock`).
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODIFIERS = set('ukhIGHpPSDWebRX')

# COMM [PID/]TID [CPU] TIME: [PERIOD] EVENT: ...
SAMPLE = re.compile(
    r'^\s*(?P<comm>.*?)\s+(?P<id>-?\d+(?:/-?\d+)?)\s+(?:\[(?P<cpu>\d+)\]\s+)?'
    r'(?P<ts>\d+\.\d+):\s+(?:(?P<period>\d+)\s+)?(?P<ev>[^\s:][^\s]*):(?:\s|$)')

# the same printed without its time (-F without time): COMM [PID/]TID [CPU] [PERIOD] EVENT: ...
UNTIMED = re.compile(
    r'^\s*(?P<comm>.*?)\s+(?P<id>-?\d+(?:/-?\d+)?)\s+(?:\[(?P<cpu>\d+)\]\s+)?'
    r'(?:(?P<period>\d+)\s+)?(?P<ev>[A-Za-z][^\s:]*(?::[^\s:]+)*):(?:\s|$)')


def count_name(ev, tracepoints=None):
    """The name an event is counted under."""
    if tracepoints is not None:
        return ev.split(':')[1] if ':'.join(ev.split(':')[:2]) in tracepoints else ev
    parts = ev.split(':')
    if len(parts) >= 2 and parts[1] and not set(parts[1]) <= MODIFIERS and '/' not in ev:
        return parts[1]
    return ev


def ns(ts):
    s, f = ts.split('.')
    return int(s) * 10**9 + int(f.ljust(9, '0'))


def count_text(lines, tracepoints=None):
    counts, cpus, unknown, times, lost, comms = {}, set(), 0, [], 0, {}
    # no line with a time: the text was printed without the time column; cidscope places its
    # samples 1 us apart in printed order, so the times are 1000, 2000, ... ns
    untimed = not any(SAMPLE.match(l) for l in lines if not l.lstrip().startswith('#'))
    pattern = UNTIMED if untimed else SAMPLE
    for line in lines:
        if line.lstrip().startswith('#') or line.startswith('\t'):
            continue
        if ' PERF_RECORD_LOST ' in line:
            m = re.search(r'PERF_RECORD_LOST lost (\d+)', line)
            lost += int(m.group(1)) if m else 0
            continue
        m = pattern.match(line)
        if not m or m.group('ev').startswith('PERF_RECORD_'):
            continue
        name = count_name(m.group('ev'), tracepoints)
        counts[name] = counts.get(name, 0) + 1
        tid = m.group('id').split('/')[-1]
        seen = comms.setdefault(tid, [])
        if m.group('comm') not in seen:
            seen.append(m.group('comm'))
        if m.group('cpu') is None:
            unknown += 1
        else:
            cpus.add(int(m.group('cpu')))
        times.append(len(times) * 1000 + 1000 if untimed else ns(m.group('ts')))
    delta = not untimed and len(times) > 4 and times[0] == 0 and \
        sum(b < a for a, b in zip(times, times[1:])) * 5 >= len(times) - 1
    if delta:
        acc, s = [], 0
        for t in times:
            s += t
            acc.append(s)
        times = acc
    return {
        'events_total': sum(counts.values()),
        'event_counts': dict(sorted(counts.items())),
        'cpus': sorted(cpus),
        'events_cpu_unknown': unknown,
        'min_ts_ns': min(times) if times else None,
        'max_ts_ns': max(times) if times else None,
        'lost_events_reported': lost,
        'delta_times': delta,
        'untimed': untimed,
        # tasks perf names by more than one comm (an exec, a rename), in the order shown
        'comms_per_tid': {t: c for t, c in sorted(comms.items(), key=lambda x: int(x[0]))
                          if len(c) > 1 and t != '-1'},
    }


def perf_reads(path):
    r = subprocess.run(['perf', 'script', '-i', path, '-F', 'event'], capture_output=True, text=True)
    return r.returncode == 0 and 'failed to process' not in r.stderr and 'incompatible' not in r.stderr


def tracepoints_of(path):
    out = subprocess.run(['perf', 'evlist', '-v', '-i', path], capture_output=True, text=True).stdout
    if 'unknown tracepoint' in out:
        return None  # pipe mode: perf evlist has no names; the names' shape tells
    return {l.split(':')[0] + ':' + l.split(':')[1] for l in out.splitlines()
            if re.search(r'\btype: 2\b', l)}


def by_perf(path):
    out = subprocess.run(['perf', 'script', '-i', path, '--ns', '--show-lost-events'],
                         capture_output=True, text=True).stdout
    t = count_text(out.splitlines(), tracepoints_of(path))
    t['reader'] = 'perf script --ns --show-lost-events (perf %s), lines counted by scripts/perf_truth.py' % \
        subprocess.run(['perf', '--version'], capture_output=True, text=True).stdout.split()[-1]
    return t


def has_type(path, rtype):
    d = open(path, 'rb').read()
    e = '<' if d[:8] == b'PERFILE2' else '>'
    for _, t, _, _ in walk(d, e)[1]:
        if t == rtype:
            return True
    return False


def walk(d, e):
    """(attrs, records): attrs as (attr bytes, ids); records as (offset, type, misc, bytes)."""
    hsize = struct.unpack_from(e + 'Q', d, 8)[0]
    recs, attrs = [], []

    def records(start, end):
        p = start
        while p + 8 <= end:
            t, m, s = struct.unpack_from(e + 'IHH', d, p)
            if s < 8 or p + s > end:
                break
            extra = struct.unpack_from(e + 'I', d, p + 8)[0] if t == 66 else 0
            recs.append((p, t, m, d[p:p + s]))
            p += s + extra

    if hsize == 16:
        records(16, len(d))
        for _, t, _, r in recs:
            if t == 64:
                asize = struct.unpack_from(e + 'I', r, 12)[0]
                ids = [struct.unpack_from(e + 'Q', r, q)[0] for q in range(8 + asize, len(r) - 7, 8)]
                attrs.append((r[8:8 + asize], ids))
    else:
        attr_size, aoff, asz, doff, dsz = struct.unpack_from(e + 'QQQQQ', d, 16)
        for k in range(asz // attr_size):
            a = d[aoff + k * attr_size:aoff + (k + 1) * attr_size]
            ioff, isz = struct.unpack_from(e + 'QQ', a, attr_size - 16)
            ids = [struct.unpack_from(e + 'Q', d, ioff + 8 * i)[0] for i in range(isz // 8)]
            attrs.append((a[:attr_size - 16], ids))
        records(doff, doff + dsz)
    return attrs, recs


def event_desc(d, e):
    """Names by id from HEADER_EVENT_DESC (feature 12), file or pipe mode."""
    hsize = struct.unpack_from(e + 'Q', d, 8)[0]
    body = None
    if hsize == 16:
        for _, t, _, r in walk(d, e)[1]:
            if t == 80 and struct.unpack_from(e + 'Q', r, 8)[0] == 12:
                body = r[16:]
    else:
        doff, dsz = struct.unpack_from(e + 'QQ', d, 40)
        bits = struct.unpack_from(e + '4Q', d, 72)
        k = 0
        for b in range(256):
            if bits[b // 64] >> (b % 64) & 1:
                off, size = struct.unpack_from(e + 'QQ', d, doff + dsz + 16 * k)
                if b == 12:
                    body = d[off:off + size]
                k += 1
    names = {}
    if body is None:
        return names
    nr, asize = struct.unpack_from(e + 'II', body, 0)
    p = 8
    for _ in range(nr):
        p += asize
        nids, slen = struct.unpack_from(e + 'II', body, p)
        p += 8
        name = body[p:p + slen].split(b'\0')[0].decode()
        p += slen
        for i in range(nids):
            names[struct.unpack_from(e + 'Q', body, p + 8 * i)[0]] = name
        p += 8 * nids
    return names


def by_walk(path):
    d = open(path, 'rb').read()
    e = '<' if d[:8] == b'PERFILE2' else '>'
    attrs, recs = walk(d, e)
    names = event_desc(d, e)
    comp = b''.join(r[8:] if t == 81 else r[16:16 + struct.unpack_from(e + 'Q', r, 8)[0]]
                    for _, t, _, r in recs if t in (81, 83))
    if comp:
        out = subprocess.run(['zstd', '-dc'], input=comp + b'\x01\x00\x00', capture_output=True).stdout
        p = 0
        while p + 8 <= len(out):
            t, m, s = struct.unpack_from(e + 'IHH', out, p)
            if s < 8:
                break
            recs.append((None, t, m, out[p:p + s]))
            p += s
    bits = lambda a: struct.unpack_from(e + 'Q', a, 24)[0]
    types = lambda a: struct.unpack_from(e + 'I', a, 0)[0]
    by_id = {i: k for k, (_, ids) in enumerate(attrs) for i in ids}
    counts, cpus, unknown, times = {}, set(), 0, []
    for _, t, _, r in recs:
        if t != 9:
            continue
        body = r[8:]
        st0 = bits(attrs[0][0])
        # the id: PERF_SAMPLE_IDENTIFIER first, else PERF_SAMPLE_ID after ip, tid, time, addr
        if st0 & (1 << 16):
            sid = struct.unpack_from(e + 'Q', body, 0)[0]
        elif st0 & (1 << 6):
            q = 8 * sum(bool(st0 & b) for b in (1, 2, 4, 8))
            sid = struct.unpack_from(e + 'Q', body, q)[0]
        else:
            sid = None
        k = by_id.get(sid, 0)
        a = attrs[k][0]
        st = bits(a)
        assert not st & (1 << 4), 'PERF_SAMPLE_READ: not walked here'
        q = 8 * sum(bool(st & b) for b in (1 << 16, 1))  # identifier, ip
        if st & 2:
            q += 8
        ts = None
        if st & 4:
            ts = struct.unpack_from(e + 'Q', body, q)[0]
            q += 8
        q += 8 * sum(bool(st & b) for b in (8, 64, 512))  # addr, id, stream_id
        cpu = struct.unpack_from(e + 'I', body, q)[0] if st & 128 else None
        name = names.get(sid) or names.get(attrs[k][1][0] if attrs[k][1] else None, 'unnamed')
        name = name.split(':')[1] if types(a) == 2 else name
        counts[name] = counts.get(name, 0) + 1
        if cpu is None:
            unknown += 1
        else:
            cpus.add(cpu)
        if ts is not None:
            times.append(ts)
    return {
        'events_total': sum(counts.values()),
        'event_counts': dict(sorted(counts.items())),
        'cpus': sorted(cpus),
        'events_cpu_unknown': unknown,
        'min_ts_ns': min(times) if times else None,
        'max_ts_ns': max(times) if times else None,
        'lost_events_reported': 0,
        'delta_times': False,
        'reader': 'the records walked in Python by scripts/perf_truth.py (the installed perf does not read this file), compressed records decompressed with the zstd command',
    }


def truth(path):
    head = open(path, 'rb').read(8)
    if head in (b'PERFILE2', b'2ELIFREP'):
        if perf_reads(path):
            return by_perf(path)
        if has_type(path, 83):
            with tempfile.TemporaryDirectory() as tmp:
                back = os.path.join(tmp, 'back.data')
                subprocess.run([sys.executable, os.path.join(HERE, 'compressed2.py'), path, back, '--back'],
                               check=True)
                if perf_reads(back):
                    t = by_perf(back)
                    t['reader'] += '; COMPRESSED2 turned into COMPRESSED first by scripts/compressed2.py --back'
                    return t
        return by_walk(path)
    t = count_text(open(path, errors='replace').read().splitlines())
    t['reader'] = 'the lines of the text counted by scripts/perf_truth.py'
    return t


def main(argv):
    meta, files = {}, []
    it = iter(argv)
    for a in it:
        if a in ('--source', '--licence', '--made-with'):
            meta[a[2:].replace('-', '_')] = next(it)
        elif a == '--refused':
            line, why = next(it).split(':', 1)
            meta['outcome'] = 'refused'
            meta['refused_at_line'] = int(line)
            meta['refused_because'] = why
        else:
            files.append(a)
    for f in files:
        t = {'file': os.path.basename(f), 'corpus': 'perf', **meta}
        t.setdefault('outcome', 'loads')
        if t['outcome'] == 'loads':
            t.update(truth(f))
        with open(f + '.truth.json', 'w') as o:
            json.dump(t, o, indent=1)
            o.write('\n')
        print(f, t.get('events_total'), t.get('event_counts'))


if __name__ == '__main__':
    main(sys.argv[1:])
