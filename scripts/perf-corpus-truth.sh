#!/usr/bin/env bash
# Writes the truth of every file of traces/PUBLIC.md's perf section (FILE.truth.json, read by
# tests/perf_variants.rs) with scripts/perf_truth.py, and the source and licence of each.
# The .gz file is counted decompressed. Needs perf and zstd.
set -euo pipefail
cd "$(dirname "$0")/../traces"
t=../scripts/perf_truth.py
lpd='mstange/linux-perf-data tests/fixtures (commit da5bce4)'
fg='brendangregg/FlameGraph test/ (commit 41fee1f)'
inf='jonhoo/inferno tests/data/collapse-perf/ (commit 929be68)'
here='made here by scripts/capture-perf-variants.sh (perf 6.1, Linux 6.18, 2 CPUs)'
mine='the project'

for f in lpd-*.perf.data; do
	"$t" --source "$lpd" --licence 'MIT OR Apache-2.0' "$f"
done
for f in fg-*.perf-script.txt inferno-*.perf-script.txt; do
	case "$f" in fg-*) src=$fg ;; *) src=$inf ;; esac
	case "$f" in
	fg-funcab-pid-01.*) "$t" --source "$src" --licence CDDL-1.0 --refused '19:a time column' "$f" ;;
	fg-java-stacks-02.* | fg-js-stacks-01.*)
		"$t" --source "$src" --licence CDDL-1.0 --refused '1:a time column' "$f" ;;
	*) "$t" --source "$src" --licence CDDL-1.0 "$f" ;;
	esac
done
# the gzip'd example: counted decompressed, the truth named after the .gz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gz=fg-example-perf-stacks.perf-script.txt.gz
gzip -dc "$gz" >"$tmp/${gz%.gz}"
"$t" --source "brendangregg/FlameGraph example-perf-stacks.txt.gz (commit 41fee1f)" \
	--licence CDDL-1.0 "$tmp/${gz%.gz}"
sed 's/"file": "\([^"]*\)"/"file": "\1.gz"/' "$tmp/${gz%.gz}.truth.json" >"$gz.truth.json"
for f in pv-*.perf.data pv-*.perf-script.txt; do
	case "$f" in
	pv-F-notime.*) "$t" --source "$here" --licence "$mine" --refused '1:a time column' "$f" ;;
	pv-z2-*) "$t" --source "$here, then scripts/compressed2.py" --licence "$mine" "$f" ;;
	*) "$t" --source "$here" --licence "$mine" "$f" ;;
	esac
done
