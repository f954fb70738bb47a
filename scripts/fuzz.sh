#!/usr/bin/env bash
# Fuzz every target for SECONDS (default 600) each, then minimize its corpus into
# fuzz/corpus/TARGET (committed; the test suite replays it: tests/fuzz_corpus.rs).
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# Needs cargo-fuzz (cargo install cargo-fuzz). The stable toolchain is used with
# RUSTC_BOOTSTRAP=1 because libFuzzer needs -Z sanitizer flags. Debug assertions are on (-a):
# an arithmetic overflow on odd input is a finding too.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo fuzz list)
export RUSTC_BOOTSTRAP=1
for t in "${targets[@]}"; do
	cargo fuzz build -O -a "$t"
	mkdir -p "corpus/$t" "artifacts/$t"
	log="artifacts/$t/fuzz.log"
	echo "== $t: fuzzing ${secs}s (log: fuzz/$log)"
	# binary captures need room: a real trace.dat embeds kallsyms
	case "$t" in perf_data|trace_dat) maxlen=2097152 ;; *) maxlen=65536 ;; esac
	cargo fuzz run -O -a "$t" "corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=2048 \
		-timeout=10 -max_len="$maxlen" -print_final_stats=1 >"$log" 2>&1 || {
		echo "!! $t found a crash: see fuzz/$log and fuzz/artifacts/$t"; tail -30 "$log"; }
	grep -E '^stat::number_of_executed_units|^Done|^#[0-9]+.*DONE' "$log" | tail -2 || true
	cargo fuzz cmin -O -a "$t" "corpus/$t" >/dev/null 2>&1 || true
	echo "   corpus: $(ls "corpus/$t" | wc -l) files"
done
