#!/usr/bin/env python3
"""Two cidscope builds on every capture: the same `stats --json` facts (events, counts per
event, CPUs, lost events, warning codes, model agreement), or the differences printed.

    scripts/compare-builds.py OLD/cidscope NEW/cidscope [DIR...]

DIRs default to traces/ (recursively). Files over 60 MB and sidecar files (.json, .md, scripts)
are skipped.
"""
import glob
import json
import os
import subprocess
import sys

old, new = sys.argv[1], sys.argv[2]
dirs = sys.argv[3:] or [os.path.join(os.path.dirname(__file__), "..", "traces")]
files = sorted(
    f
    for d in dirs
    for f in glob.glob(os.path.join(d, "**", "*"), recursive=True)
    if os.path.isfile(f)
    and not f.endswith((".json", ".md", ".sh", ".py", ".config", ".patch"))
    and os.path.getsize(f) < 60_000_000
)


def facts(binary, f):
    r = subprocess.run([binary, "stats", "--json", f], capture_output=True, timeout=300)
    if r.returncode != 0:
        # the message without the path (it is the same file for both)
        return ("error", r.returncode, r.stderr.decode(errors="replace").replace(f, "F")[:300])
    d = json.loads(r.stdout)
    m = d.get("model_agreement") or {}
    return (
        d.get("events"),
        d.get("event_counts"),
        d.get("ncpus"),
        d.get("lost_events"),
        sorted(w.split(":")[0] for w in d.get("warnings", [])),
        m.get("checked"),
        m.get("agreed"),
    )


same = differ = 0
for f in files:
    a, b = facts(old, f), facts(new, f)
    if a == b:
        same += 1
    else:
        differ += 1
        print(f"DIFF {f}\n   old {str(a)[:400]}\n   new {str(b)[:400]}")
print(f"same {same} differ {differ}")
