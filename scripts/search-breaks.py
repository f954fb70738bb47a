#!/usr/bin/env python3
"""The search's candidates that explained a disagreement and were dropped for breaking one of the
model's invariants, over the boots of `scripts/fresh-sweep.sh` folders that the model does not
fully agree with. Such a drop is either a placement the kernel could not have made, or a state
the kernel does reach that the invariants (or the model's step) do not allow yet: stop 53 found
two of the second kind this way (a held remote clear owning its bit without a slot; an
owner-mode walk visiting a task before a switch pending on its CPU), docs/models.md §5.6, §5.3 T3.

    scripts/search-breaks.py DIR...

Each DIR holds a sweep.tsv (mcwork boots are replayed with their kernel's release and HZ, as the
sweep does). One block per boot with such drops: the file, agreed/checked of the processes begun
in the capture, each kind of break with its count, and the first few candidates with their break
(`CIDSCOPE_SEARCH_TRACE=1`'s `step at I: STEP misses M target T` followed by `its state breaks
...`). CIDSCOPE names the binary (default target/release/cidscope).
"""
import collections
import concurrent.futures as cf
import csv
import json
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
binary = os.environ.get("CIDSCOPE", os.path.join(here, "..", "target", "release", "cidscope"))
RELEASE = {
    "6.12.117": "6.12.117+deb13-cloud-amd64",
    "6.18.15": "6.18.15+deb13-cloud-amd64",
    "7.3.4": "7.3.4+deb13-cloud-amd64",
}
STEP = re.compile(r"step at (\d+): (.*) misses (\d+) target (\d+)")


def boots(dirs):
    for d in dirs:
        table = os.path.join(d, "sweep.tsv")
        if not os.path.exists(table):
            print(f"{d}: no sweep.tsv", file=sys.stderr)
            continue
        with open(table) as f:
            for row in csv.DictReader(f, delimiter="\t"):
                args = []
                if row["source"] == "mcwork" and row["kernel"] in RELEASE:
                    args = ["--kernel-version", RELEASE[row["kernel"]], "--hz", row["hz"]]
                yield os.path.join(d, row["file"]), args


def drops(job):
    path, args = job
    env = dict(os.environ, CIDSCOPE_SEARCH_TRACE="1")
    p = subprocess.run(
        [binary, "stats", "--json", *args, path], capture_output=True, text=True, env=env
    )
    if p.returncode != 0:
        return path, None, f"stats failed: {p.stderr.strip().splitlines()[-1:]}"
    fresh = json.loads(p.stdout)["model_agreement"]["fresh"]
    if fresh["agreed"] == fresh["checked"]:
        return path, fresh, None
    lines = p.stderr.splitlines()
    kinds, first = collections.Counter(), []
    for k, line in enumerate(lines[:-1]):
        m = STEP.match(line)
        nxt = lines[k + 1].strip()
        if m and int(m.group(3)) < int(m.group(4)) and nxt.startswith("its state breaks"):
            kinds[re.sub(r"(?<![A-Z])\d+", "N", nxt)[:100]] += 1
            if len(first) < 3:
                first.append(f"{line} || {nxt}")
    return path, fresh, (kinds, first) if kinds else None


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    with cf.ThreadPoolExecutor(2) as ex:
        for path, fresh, found in ex.map(drops, boots(sys.argv[1:])):
            if isinstance(found, str):
                print(f"{path}: {found}")
            elif found:
                kinds, first = found
                print(f"{path}: {fresh['agreed']}/{fresh['checked']}")
                for kind, n in kinds.most_common():
                    print(f"    {n} x {kind}")
                for line in first:
                    print(f"      {line[:300]}")


if __name__ == "__main__":
    main()
