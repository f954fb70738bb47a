#!/usr/bin/env python3
"""What inference costs: `cidscope stats --json` with --infer-steps auto against off, per capture and
policy, run alternately on the same file: the CPU time (user + system) of each, the least of
REPEAT runs (on a shared machine wall time says more about the others' load than about the
work).

    scripts/infer-cost.py [--repeat N] [--policies lazy-compact,resume-batch,owner-mode] DIR...

One line per capture and policy: events, the two CPU times, their ratio, predicted and agreed (and
the inferred steps), then the two wall times and their ratio (the search and the final replay
run beside the plain replay where the capture is small enough, so wall time shows what a user
waits; the limit is on CPU time). A folder's README rows give CONFIG_HZ for captures without a header; a capture
that names its kernel is replayed as it says, under each --policy. CIDSCOPE names the binary
(default target/release/cidscope). Exit status 1 when a ratio exceeds --limit (default 1.5).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

from corpus_readme import readme_hz

here = os.path.dirname(os.path.abspath(__file__))
binary = os.environ.get("CIDSCOPE", os.path.join(here, "..", "target", "release", "cidscope"))


def run(args):
    # CPU time (user + system) of the child, from its own rusage: the shared machine's load
    # changes wall time far more than the work done
    t0 = time.monotonic()
    p = subprocess.Popen([binary] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.stdout.read(), p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)}: {err.strip()}")
    return ru.ru_utime + ru.ru_stime, out, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--policies", default="lazy-compact,resume-batch,owner-mode")
    ap.add_argument("--limit", type=float, default=1.5)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    worst = 0.0
    print(
        "file\tpolicy\tevents\toff_ms\tauto_ms\tratio\tchecked\tpredicted\tagreed\tsteps"
        "\toff_wall_ms\tauto_wall_ms\twall_ratio"
    )
    for d in a.dirs:
        hz = readme_hz(d)
        names = sorted(n for n in os.listdir(d) if re.search(r"\.ftrace\.txt(\.zst)?$", n))
        for n in names:
            f = os.path.join(d, n)
            extra = ["--hz", hz[n]] if n in hz else []
            for p in a.policies.split(","):
                base = ["stats", "--json", "--policy", p] + extra + [f]
                off, on, off_wall, on_wall = [], [], [], []
                for _ in range(a.repeat):
                    dt, _, w = run(base + ["--infer-steps", "off"])
                    off.append(dt)
                    off_wall.append(w)
                    dt, js, w = run(base + ["--infer-steps", "auto"])
                    on.append(dt)
                    on_wall.append(w)
                s = json.loads(js)
                m = s["model_agreement"]
                ratio = min(on) / min(off)
                wall_ratio = min(on_wall) / min(off_wall)
                worst = max(worst, ratio)
                print(
                    f"{n}\t{p}\t{s['events']}\t{1e3 * min(off):.1f}\t{1e3 * min(on):.1f}\t{ratio:.2f}\t"
                    f"{m['checked']}\t{m['predicted']}\t{m['agreed']}\t{len(m['inferred_steps'])}\t"
                    f"{1e3 * min(off_wall):.1f}\t{1e3 * min(on_wall):.1f}\t{wall_ratio:.2f}",
                    flush=True,
                )
    print(f"worst ratio {worst:.2f} (limit {a.limit})", file=sys.stderr)
    sys.exit(1 if worst > a.limit else 0)


if __name__ == "__main__":
    main()
