"""What a corpus folder's README.md says of its captures (shared by scripts/infer-cost.py and
scripts/infer-budget.py)."""
import os


def readme_hz(d):
    """CONFIG_HZ per capture, from the README rows (| `file` | kernel | HZ | ...), for captures
    without a header that says it."""
    hz = {}
    try:
        for line in open(os.path.join(d, "README.md")):
            if line.startswith("| `k"):
                c = [x.strip() for x in line.split("|")]
                hz[c[1].strip("`")] = c[3]
    except OSError:
        pass
    return hz
