#!/usr/bin/env python3
"""How long 6.17+ kernels held the futex hash's `mm_users` reference (docs/models.md §2.3), from
the CID probes of `cidscope vm` captures: from the clone that took it (the `cid_fork` after which
the next fork of the mm reads two users more) to its `cid_mmput_async`.

    scripts/futex-holds.py CAPTURE...

One line per capture with its vCPUs and the holds in ms, then all holds' count, median, least
and most. Captures without `cid_mmput_async` (no probes, 6.12, 7.x) give none.
"""
import re
import statistics
import subprocess
import sys

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\(\s*[\d-]+\)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):(.*)$")


def lines(f):
    if f.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", f], capture_output=True, text=True).stdout.splitlines()
    return open(f).read().splitlines()


def holds(f):
    cpus, forks, puts = None, [], []
    for l in lines(f):
        if cpus is None and (m := re.search(r"cpus=(\d+)", l)):
            cpus = int(m.group(1))
        m = LINE.match(l)
        if not m:
            continue
        ts, ev, rest = float(m.group(4)), m.group(5), m.group(6)
        mm = re.search(r"mm=(0x[0-9a-f]+)", rest)
        users = re.search(r"users=(\d+)", rest)
        if ev == "cid_fork" and mm and users:
            forks.append((ts, mm.group(1), int(users.group(1))))
        elif ev == "cid_mmput_async" and mm:
            puts.append((ts, mm.group(1)))
    out = []
    for tp, mm in puts:
        fm = [x for x in forks if x[1] == mm and x[0] < tp]
        took = [a[0] for a, b in zip(fm, fm[1:]) if b[2] - a[2] >= 2]
        if took:
            out.append((tp - took[-1]) * 1e3)
    return cpus, out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    every = []
    for f in sys.argv[1:]:
        cpus, h = holds(f)
        if h:
            every += h
            print(f"{f.split('/')[-1]}\t{cpus} vCPUs\t" + " ".join(f"{x:.1f}" for x in h))
    if every:
        print(f"{len(every)} holds: median {statistics.median(every):.1f} ms, "
              f"least {min(every):.1f}, most {max(every):.1f}")


if __name__ == "__main__":
    main()
