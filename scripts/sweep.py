#!/usr/bin/env python3
"""sweep.py -- every capture format, cut short and with bytes flipped: no load may lose events
without saying so.

    scripts/sweep.py [--bin PATH] [--cuts N] [--flips N] [--timeout S] [--keep DIR]

For each capture below (one per format the readers know, and the text one compressed with
gzip, xz and zstd), the full file is loaded once with `cidscope stats --json`; then N copies cut
at evenly spaced offsets and N copies with one byte flipped (XOR 0xff, at spaced offsets: the
first in the header) are loaded the same way. Each run is judged:

  refused   exit 2 with one line naming the file (fine: the user is told)
  warned    exit 0 with fewer events than the full file and a warning the full load lacks
  whole     exit 0 with every event of the full file (or more: a flipped byte can make one)
  silent    exit 0 with fewer events and no new warning: a FAILURE
  crash     any other exit, a panic, or no answer in --timeout seconds: a FAILURE

A cut at a line boundary of a text format that states no count (trace_pipe, trace-cmd report,
perf script) leaves a file no reader can tell from a whole one: it is listed as `unknowable`,
not failed. The defaults (64 cuts, 64 flips) are the full sweep; CI runs a bounded one
(tests/sweep.rs: --cuts 8 --flips 8). Exits 1 on any failure, printing each; --keep saves the
failing inputs.
"""
import argparse
import gzip
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACES = os.path.join(ROOT, 'traces')

# (name in traces/, how to prepare the bytes, whether a cut at a line boundary is detectable)
CAPTURES = [
    ('cyclictest.ftrace.txt', None, True),          # tracefs trace: entries-in-buffer header
    ('cyclictest.trace_pipe.txt', None, False),
    ('cyclictest.trace-cmd-report.txt', None, False),
    ('cyclictest.perf-script.txt', None, False),
    ('catapult-trivial.systrace.html', None, False),
    ('cyclictest.perf.data', None, True),
    ('cyclictest.trace.dat', None, True),
    ('cyclictest-v7.trace.dat', None, True),
    ('cyclictest.ftrace.txt', 'gz', True),
    ('cyclictest.ftrace.txt', 'xz', True),
    ('cyclictest.ftrace.txt', 'zst', True),
]


def compress(data, how):
    if how == 'gz':
        return gzip.compress(data, mtime=0)
    if how == 'xz':
        return lzma.compress(data, format=lzma.FORMAT_XZ)
    if how == 'zst':
        zstd = shutil.which('zstd')
        if not zstd:
            return None
        return subprocess.run([zstd, '-q', '-c'], input=data, stdout=subprocess.PIPE,
                              check=True).stdout
    return data


def run(binary, path, timeout):
    try:
        p = subprocess.run([binary, 'stats', '--json', path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return ('crash', f'no answer in {timeout} s', None)
    err = p.stderr.decode('utf-8', 'replace')
    if 'panicked' in err or p.returncode not in (0, 2):
        return ('crash', f'exit {p.returncode}: {err.strip()[:300]}', None)
    if p.returncode == 2:
        lines = [l for l in err.splitlines() if l.strip()]
        if len(lines) != 1 or os.path.basename(path) not in lines[0]:
            return ('crash', f'exit 2 without a one-line message naming the file: {err[:300]}',
                    None)
        return ('refused', lines[0], None)
    try:
        return ('ok', '', json.loads(p.stdout))
    except ValueError as e:
        return ('crash', f'exit 0 but no JSON: {e}', None)


def codes(stats):
    return {w.split(':', 1)[0] for w in stats.get('warnings', [])}


def judge(full, got, at_line_boundary, detectable):
    kind, msg, stats = got
    if kind != 'ok':
        return kind, msg
    if stats['events'] >= full['events']:
        return 'whole', ''
    new = codes(stats) - codes(full)
    if new:
        return 'warned', ','.join(sorted(new))
    if at_line_boundary and not detectable:
        return 'unknowable', f"{stats['events']} of {full['events']} events"
    return 'silent', f"{stats['events']} of {full['events']} events and no new warning"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--bin', default=os.path.join(ROOT, 'target', 'release', 'cidscope'))
    ap.add_argument('--cuts', type=int, default=64)
    ap.add_argument('--flips', type=int, default=64)
    ap.add_argument('--timeout', type=float, default=60)
    ap.add_argument('--keep')
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix='cidscope-sweep-')
    tally, failures = {}, []
    try:
        for name, how, detectable in CAPTURES:
            src = os.path.join(TRACES, name)
            if not os.path.exists(src):
                continue
            with open(src, 'rb') as f:
                data = compress(f.read(), how)
            if data is None:
                continue
            label = name + (f'.{how}' if how else '')
            whole = os.path.join(tmp, label)
            with open(whole, 'wb') as f:
                f.write(data)
            kind, msg, full = run(a.bin, whole, a.timeout)
            if kind != 'ok':
                failures.append((label, 'whole file', kind, msg))
                continue
            plain = data if how is None else None
            variants = []
            for k in range(1, a.cuts + 1):
                at = len(data) * k // (a.cuts + 1)
                boundary = plain is not None and at > 0 and plain[at - 1:at] == b'\n'
                variants.append((f'cut at {at}', data[:at], boundary))
            for k in range(a.flips):
                at = 17 if k == 0 else len(data) * k // a.flips
                d = bytearray(data)
                d[at] ^= 0xff
                variants.append((f'byte {at} flipped', bytes(d), False))
            for what, bytes_, boundary in variants:
                path = os.path.join(tmp, 'v-' + label)
                with open(path, 'wb') as f:
                    f.write(bytes_)
                verdict, msg = judge(full, run(a.bin, path, a.timeout), boundary, detectable)
                tally[verdict] = tally.get(verdict, 0) + 1
                if verdict in ('silent', 'crash'):
                    failures.append((label, what, verdict, msg))
                    if a.keep:
                        os.makedirs(a.keep, exist_ok=True)
                        shutil.copy(path, os.path.join(a.keep, f'{label}.{what.replace(" ", "-")}'))
            print(f'{label}: {full["events"]} events, {len(variants)} variants', flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('verdicts:', json.dumps(tally, sort_keys=True))
    for f in failures:
        print('FAIL', *f, sep=' | ')
    print(f'{sum(tally.values()) - len(failures)} passed, {len(failures)} failed')
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
