#!/usr/bin/env bash
# The performance figures of cidscope in one run, beside the tools that wrote the files:
#   * ftrace text: `cidscope stats` vs `wc -l` on synthesized large traces (make-big.sh);
#   * trace.dat: `cidscope stats` vs `trace-cmd report > /dev/null`;
#   * perf.data: `cidscope stats` vs `perf script > /dev/null`;
#   * seek percentiles, frame times per zoom, resident memory per event (10 M events) and the
#     first frame of the largest text trace (examples/scale.rs).
# Times are the best of 3 runs with the files in the page cache; ratios are tool / cidscope.
#
#   scripts/bench.sh [SIZE_MB...]        default sizes: 200 1000
#   BENCH_DIR=/tmp/cidbench              where inputs are made and kept (never committed)
# The binary comparisons need trace-cmd and perf and the captures of
# `scripts/capture-binary.sh $BENCH_DIR bench` (run as root; 40 s of hackbench); they are
# skipped with a note when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/cidbench}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(200 1000)
mkdir -p "$BENCH_DIR"
cargo build --release --quiet --bin cidscope --example scale
bin=target/release/cidscope

# best of 3 wall-clock seconds of a command (stdout to /dev/null)
best() {
	python3 - "$@" <<'PY'
import subprocess, sys, time
best = None
for _ in range(3):
    t = time.perf_counter()
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    d = time.perf_counter() - t
    best = d if best is None else min(best, d)
print(f"{best:.3f}")
PY
}
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
events_of() { $bin stats --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])'; }

echo "== machine: $(nproc) CPUs, $(uname -r), $(date -u +%FT%TZ)"
echo
echo "== ftrace text: cidscope stats vs wc -l"
printf '%-26s %10s %10s %9s %12s %12s %14s\n' file MB "wc -l s" "cidscope s" "cidscope/wc" "MB/s" "events/s"
last_text=""
for mb in "${sizes[@]}"; do
	f=$BENCH_DIR/big-${mb}MB.ftrace.txt
	[ -s "$f" ] || scripts/make-big.sh "$mb" 8 400 traces/cyclictest.ftrace.txt "$f" > /dev/null
	cat "$f" > /dev/null
	w=$(best wc -l "$f")
	c=$(best $bin stats --json "$f")
	n=$(events_of "$f")
	size=$(stat -c %s "$f")
	printf '%-26s %10.0f %10s %9s %12s %12.0f %14.0f\n' "$(basename "$f")" "$(python3 -c "print($size/1e6)")" \
		"$w" "$c" "$(ratio "$c" "$w")x" "$(python3 -c "print($size/1e6/$c)")" "$(python3 -c "print($n/$c)")"
	last_text=$f
done

echo
echo "== binary captures: cidscope stats vs the tools that wrote them"
shim=""
[ -f "$BENCH_DIR/.noftrace.so" ] && shim=$BENCH_DIR/.noftrace.so
td=$BENCH_DIR/bench.trace.dat
pd=$BENCH_DIR/bench.perf.data
if [ -s "$td" ] && command -v trace-cmd > /dev/null; then
	cat "$td" > /dev/null
	t=$(LD_PRELOAD=$shim best trace-cmd report -i "$td")
	c=$(best $bin stats --json "$td")
	echo "trace.dat $(du -h "$td" | cut -f1), $(events_of "$td") events: trace-cmd report ${t}s, cidscope ${c}s -> $(ratio "$t" "$c")x faster"
else
	echo "trace.dat: skipped (make $td with scripts/capture-binary.sh $BENCH_DIR bench; needs trace-cmd)"
fi
if [ -s "$pd" ] && command -v perf > /dev/null; then
	cat "$pd" > /dev/null
	p=$(best perf script -i "$pd")
	c=$(best $bin stats --json "$pd")
	echo "perf.data $(du -h "$pd" | cut -f1), $(events_of "$pd") events: perf script ${p}s, cidscope ${c}s -> $(ratio "$p" "$c")x faster"
else
	echo "perf.data: skipped (make $pd with scripts/capture-binary.sh $BENCH_DIR bench; needs perf)"
fi

echo
echo "== scale: 10 M synthetic events (seek, frames at 240x60, memory)"
target/release/examples/scale
if [ -n "$last_text" ]; then
	echo
	echo "== first frame and memory of $(basename "$last_text")"
	target/release/examples/scale "$last_text"
fi
