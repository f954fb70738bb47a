#!/bin/bash
# mem-bench.sh -- peak memory per event of every path: stats, TUI load, export, sim
#
#   scripts/mem-bench.sh [BIN] [DIR]
#
#   BIN  the cidscope binary (default: target/release/cidscope; build it first)
#   DIR  where the inputs are generated (default: /tmp/cidscope-mem-bench; reused when there)
#
# Inputs (regenerated when missing, never committed): a 200 MB ftrace text capture of 2 CPUs
# and 50 tasks (scripts/make-big.sh 200 2 50) and one of 1 M tasks in 250 K processes, one
# rseq_update each (scripts/make-tasks.sh 1000000 4). For each path the peak resident memory
# (VmHWM: it includes the pages of the mapped capture, about the file's size for text) and the
# peak anonymous memory (RssAnon, sampled every 10 ms: the heap) are printed, in MB and in bytes
# per event. The TUI load runs in tmux (200x50) until its status bar leaves "loading" and the
# work after the load is done (the cursor pane's "computing…", a title's "replaying…"), then q.
# `sim` runs --json with the events of its schedule counted from a --record of the same run.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${1:-$HERE/../target/release/cidscope}
DIR=${2:-/tmp/cidscope-mem-bench}
mkdir -p "$DIR"
BIG=$DIR/big-200MB-2cpu.ftrace.txt
TASKS=$DIR/tasks-1M.ftrace.txt
[ -s "$BIG" ] || "$HERE/make-big.sh" 200 2 50 "$HERE/../traces/cyclictest.ftrace.txt" "$BIG" >/dev/null
[ -s "$TASKS" ] || "$HERE/make-tasks.sh" 1000000 4 1 8 "$TASKS" >/dev/null

# peak VmHWM and RssAnon (KB) of process $1 until it exits
sample() {
	local pid=$1 hwm=0 anon=0 a h
	while kill -0 "$pid" 2>/dev/null; do
		h=$(awk '/^VmHWM:/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
		a=$(awk '/^RssAnon:/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
		[ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
		[ -n "$a" ] && [ "$a" -gt "$anon" ] && anon=$a
		sleep 0.01
	done
	echo "$hwm $anon"
}

row() { # name file events hwm_kb anon_kb
	awk -v n="$1" -v f="$2" -v e="$3" -v h="$4" -v a="$5" 'BEGIN {
		printf "%-22s %-24s %9d %9.1f %8.1f %9.1f %8.1f\n", n, f, e, h/1024, h*1024/e, a/1024, a*1024/e }'
}

# runs BIN ARGS in the background, sampling it
measure() {
	"$BIN" "$@" >/dev/null 2>"$DIR/stderr" &
	local pid=$!
	local r
	r=$(sample $pid)
	wait $pid || { echo "failed: $BIN $*: $(cat "$DIR/stderr")" >&2; }
	echo "$r"
}

# the TUI on FILE until it has loaded, then q
measure_tui() {
	local sock=mem-bench-$$
	tmux -L $sock -f /dev/null new-session -d -s t -x 200 -y 50 "$BIN $1"
	local pid=""
	for _ in $(seq 1 500); do
		pid=$(tmux -L $sock display -p -t t '#{pane_pid}' 2>/dev/null || true)
		[ -n "$pid" ] && break
		sleep 0.01
	done
	local out
	out=$(mktemp)
	sample "$pid" >"$out" &
	local sampler=$!
	for _ in $(seq 1 6000); do
		local s
		s=$(tmux -L $sock capture-pane -p -t t 2>/dev/null || true)
		# loaded, and the work it does after the load (the CID metrics, a model's replay) done
		if [ -n "$s" ] && ! grep -qE "loading|computing|replaying" <<<"$s" && grep -q "events" <<<"$s"; then
			break
		fi
		sleep 0.05
	done
	sleep 0.5
	tmux -L $sock send-keys -t t q 2>/dev/null || true
	wait $sampler
	tmux -L $sock kill-server 2>/dev/null || true
	cat "$out"
	rm -f "$out"
}

events_of() { "$BIN" stats --json "$1" | awk -F: '/^  "events"/{gsub(/[ ,]/,"",$2); print $2; exit}'; }

printf "%-22s %-24s %9s %9s %8s %9s %8s\n" path input events "peak MB" "B/event" "anon MB" "B/event"
for f in "$BIG" "$TASKS"; do
	n=$(events_of "$f")
	name=$(basename "$f")
	# shellcheck disable=SC2046
	row "stats" "$name" "$n" $(measure stats "$f")
	row "stats --json" "$name" "$n" $(measure stats --json "$f")
	row "TUI load" "$name" "$n" $(measure_tui "$f")
	row "export --perfetto" "$name" "$n" $(measure export "$f" --perfetto "$DIR/out.json")
	row "export --csv" "$name" "$n" $(measure export "$f" --csv "$DIR/out.csv")
	row "export --svg" "$name" "$n" $(measure export "$f" --svg "$DIR/out.svg")
	rm -f "$DIR/out.json" "$DIR/out.csv" "$DIR/out.svg"
done
for spec in "--policy lazy-compact --cpus 8 --duration 10s --workload hackbench" "--policy lazy-compact --cpus 128 --duration 2s --workload churn" "--policy lazy-compact --cpus 1024 --duration 500ms --workload hogs"; do
	# shellcheck disable=SC2086
	"$BIN" sim $spec --record "$DIR/sim.txt" >/dev/null
	n=$(grep -vc '^#' "$DIR/sim.txt")
	rm -f "$DIR/sim.txt"
	# shellcheck disable=SC2086,SC2046
	row "sim ${spec#--policy lazy-compact }" "-" "$n" $(measure sim $spec --json)
done
