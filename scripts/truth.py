#!/usr/bin/env python3
"""Runs /work/shared/traces/truth.py on the captures made by capture-binary.sh.

truth.py's raw perf.data walker reads file-mode headers only; on a pipe-mode file
(`perf record -o -`, header size 16) it is skipped here and the truth comes from
`perf script` alone, as for every other perf.data.  Usage: truth.py --print FILE
"""
import os
import struct
import sys

sys.path.insert(0, os.environ.get('TRUTH_DIR', '/work/shared/traces'))
import truth  # noqa: E402

_raw = truth.perfdata_raw


def perfdata_raw(path):
    with open(path, 'rb') as f:
        head = f.read(16)
    if len(head) == 16 and struct.unpack_from('<Q', head, 8)[0] == 16:
        return None
    return _raw(path)


truth.perfdata_raw = perfdata_raw
truth.main(sys.argv[1:])
