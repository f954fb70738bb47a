#!/usr/bin/env bash
# Attaching under load, beside perf: for each hackbench size, `cidscope attach --all` and
# `perf record -a -e` on the same tracepoints run at the same time for the same seconds, and
# the script prints each one's events, losses and CPU time (user + sys, from /usr/bin/time).
#   scripts/live-bench.sh [SECONDS] [GROUPS...]     default: 5 s; hackbench -T -p -g 1 2 4
# Needs root, hackbench (apt-get install rt-tests) and perf.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
shift || true
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(1 2 4)
for t in hackbench perf; do
	command -v "$t" > /dev/null || { echo "live-bench: $t is not installed" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "live-bench: attaching needs root" >&2; exit 2; }
cargo build --release --quiet --bin cidscope
bin=$PWD/target/release/cidscope
# the tracepoints cidscope attaches to (EVENTS in src/sources/live/attach.rs)
ev=rseq:rseq_update,sched:sched_switch,sched:sched_migrate_task,sched:sched_process_fork
ev=$ev,sched:sched_process_exec,sched:sched_process_exit,task:task_newtask
ev=$ev,timer:hrtimer_expire_entry,timer:tick_stop
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
json() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$@"; }
cpu_s() { awk '{printf "%.2f", $1 + $2}' "$1"; }

echo "== machine: $(nproc) CPUs, $(uname -r), $(date -u +%FT%TZ); ${secs} s per row"
printf '%-16s | %10s %10s %8s %8s %9s | %10s %8s %8s %9s\n' load "cidscope ev" "ev/s" lost "CPU s" "us/event" \
	"perf ev" lost "CPU s" "us/event"
for g in "${groups[@]}"; do
	hackbench -T -p -g "$g" -l 1000000000 > /dev/null 2>&1 &
	hb=$!
	sleep 1
	/usr/bin/time -f '%U %S' -o "$tmp/perf.time" \
		perf record -q -a -e "$ev" -o "$tmp/perf.data" -- sleep "$secs" > /dev/null 2>&1 &
	pr=$!
	/usr/bin/time -f '%U %S' -o "$tmp/cid.time" \
		"$bin" attach --all --duration "$secs" --json > "$tmp/cid.json"
	wait "$pr" || true
	kill "$hb" 2> /dev/null || true
	wait "$hb" 2> /dev/null || true
	"$bin" stats --json "$tmp/perf.data" > "$tmp/perf.json" 2> /dev/null || echo '{"events": 0, "lost_events": 0}' > "$tmp/perf.json"
	cn=$(json "$tmp/cid.json" events)
	pn=$(json "$tmp/perf.json" events)
	cc=$(cpu_s "$tmp/cid.time")
	pc=$(cpu_s "$tmp/perf.time")
	printf '%-16s | %10s %10.0f %8s %8s %9.2f | %10s %8s %8s %9.2f\n' "hackbench -g $g" \
		"$cn" "$(json "$tmp/cid.json" event_rate)" "$(json "$tmp/cid.json" lost_events)" "$cc" \
		"$(python3 -c "print($cc * 1e6 / max($cn, 1))")" \
		"$pn" "$(json "$tmp/perf.json" lost_events)" "$pc" "$(python3 -c "print($pc * 1e6 / max($pn, 1))")"
done
