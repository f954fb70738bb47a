#!/usr/bin/env python3
"""What the search's budget buys: `cidscope stats --json` of every corpus capture under each
policy family, with the budget the environment sets (`CIDSCOPE_SEARCH_BUDGET_BASE`,
`CIDSCOPE_SEARCH_BUDGET_PER`: src/model/policies/replay/search.rs), summed over all rows and
over each capture's own family (6.4-6.18: lazy-compact; the seed-000 kernel: resume-batch;
7.x: owner-mode). Pair it with `scripts/infer-cost.py`, which takes the same variables, for
what that budget costs.

    scripts/infer-budget.py [--rows FILE] BASE PER DIR...

BASE and PER `-` for the default. One summary line: checked, predicted, agreed and steps, all
rows and own family. --rows writes one line per capture and policy. A folder's README rows give
CONFIG_HZ for captures without a header (as infer-cost.py). CIDSCOPE names the binary (default
target/release/cidscope).
"""
import argparse
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from corpus_readme import readme_hz

here = os.path.dirname(os.path.abspath(__file__))
binary = os.environ.get("CIDSCOPE", os.path.join(here, "..", "target", "release", "cidscope"))
POLICIES = ["lazy-compact", "resume-batch", "owner-mode"]


def own_policy(name):
    if "seed000" in name:
        return "resume-batch"
    return "owner-mode" if name.startswith("k7") else "lazy-compact"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows")
    ap.add_argument("base")
    ap.add_argument("per")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    env = dict(os.environ)
    for var, v in (("CIDSCOPE_SEARCH_BUDGET_BASE", a.base), ("CIDSCOPE_SEARCH_BUDGET_PER", a.per)):
        env.pop(var, None)
        if v != "-":
            env[var] = v
    jobs = []
    for d in a.dirs:
        hz = readme_hz(d)
        for n in sorted(x for x in os.listdir(d) if re.search(r"\.ftrace\.txt(\.zst)?$", x)):
            extra = ["--hz", hz[n]] if n in hz else []
            for p in POLICIES:
                jobs.append((n, p, ["stats", "--json", "--policy", p] + extra + [os.path.join(d, n)]))

    def run(job):
        n, p, args = job
        r = subprocess.run([binary] + args, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            sys.exit(f"{' '.join(args)}: {r.stderr.strip()}")
        m = json.loads(r.stdout)["model_agreement"]
        return (n, p, m["checked"], m["predicted"], m["agreed"], len(m["inferred_steps"]))

    with ThreadPoolExecutor(os.cpu_count() or 1) as ex:
        rows = list(ex.map(run, jobs))
    if a.rows:
        with open(a.rows, "w") as f:
            for r in rows:
                f.write("\t".join(map(str, r)) + "\n")
    own = [r for r in rows if r[1] == own_policy(r[0])]
    s = lambda rs, k: sum(r[k] for r in rs)
    print(
        f"base {a.base} per {a.per}: {len(rows)} rows checked {s(rows, 2)} predicted {s(rows, 3)} "
        f"agreed {s(rows, 4)} steps {s(rows, 5)}; own family {len(own)} rows checked {s(own, 2)} "
        f"predicted {s(own, 3)} agreed {s(own, 4)} steps {s(own, 5)}"
    )


if __name__ == "__main__":
    main()
