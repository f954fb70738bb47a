#!/usr/bin/env python3
"""The rows of traces/kernels/README.md for the captures of a folder, from `cidscope stats --json`.

    scripts/kernel-corpus-table.py DIR [MADE]

One row per *.ftrace.txt[.zst] of DIR, sorted by kernel, vCPUs and workload:
| file | kernel | CONFIG_HZ | vCPUs | workload | made | policy variant | agreement | dup |
`agreement` is the model's agreed/checked of the processes begun in the capture (the workload's);
`dup` the alarms `cidscope stats` raises (a duplicate CID among running threads, a CID at or above
the CPU count). CIDSCOPE names the binary (default target/release/cidscope).
"""
import json
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
binary = os.environ.get("CIDSCOPE", os.path.join(here, "..", "target", "release", "cidscope"))


def key(name):
    m = re.match(r"k(.+?)-c(\d+)-(.+?)\.ftrace\.txt", name)
    return (m.group(1), int(m.group(2)), m.group(3)) if m else (name, 0, "")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    made = sys.argv[2] if len(sys.argv) > 2 else "cidscope vm, thread=single, probes"
    names = sorted(
        (n for n in os.listdir(d) if re.search(r"\.ftrace\.txt(\.zst)?$", n)), key=key
    )
    for n in names:
        kernel, cpus, workload = key(n)
        out = subprocess.run(
            [binary, "stats", "--json", os.path.join(d, n)], capture_output=True, text=True
        )
        if out.returncode != 0:
            print(f"{n}: {out.stderr.strip()}", file=sys.stderr)
            continue
        s = json.loads(out.stdout)
        m = s.get("model_agreement") or {}
        fresh = m.get("fresh", {})
        variant = m.get("variant") or "-"
        if m.get("scan_batch"):
            variant += f" B={m['scan_batch']}"
        print(
            f"| `{n}` | {kernel} | {m.get('hz', '?')} | {cpus} | {workload} | {made} | "
            f"{m.get('policy', '?')} {variant} | {fresh.get('agreed', 0)}/{fresh.get('checked', 0)} "
            f"| {s.get('alarms', 0)} |"
        )


if __name__ == "__main__":
    main()
