#!/usr/bin/env python3
"""A/B of `cidscope stats FILE` between builds: interleaved runs, median and best wall time and
the child's CPU (user + sys). `pin` runs each under `taskset -c 0` (one CPU).

    scripts/ab-stats.py /tmp/big200.txt 11 nopin OLD/cidscope NEW/cidscope
"""
import resource
import statistics
import subprocess
import sys
import time

f, n, pin, bins = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "pin", sys.argv[4:]
wall = {b: [] for b in bins}
cpu = {b: [] for b in bins}
for i in range(n):
    # alternate the order so neither build always runs on a warmer cache
    for b in bins if i % 2 == 0 else bins[::-1]:
        cmd = (["taskset", "-c", "0"] if pin else []) + [b, "stats", f]
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        w = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall[b].append(w)
        cpu[b].append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
for b in bins:
    print(
        f"{b}: wall median {statistics.median(wall[b]):.3f} min {min(wall[b]):.3f}  "
        f"cpu median {statistics.median(cpu[b]):.3f} min {min(cpu[b]):.3f}"
    )
