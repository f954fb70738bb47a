#!/usr/bin/env bash
# Captures the README's screens from the real binary in a real terminal (tmux):
#   scripts/screens.sh [BIN]     writes docs/screens/*.txt
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/cidscope}
out=docs/screens
mkdir -p "$out"
shot() { # NAME COLS ROWS WAIT KEYS... -- COMMAND
	local name=$1 cols=$2 rows=$3 wait=$4; shift 4
	local keys=() sock=cidscope-screens-$$-$name
	while [ "$1" != "--" ]; do keys+=("$1"); shift; done
	shift
	tmux -L $sock -f /dev/null new-session -d -s s -x "$cols" -y "$rows" "$*; sleep 30"
	sleep "$wait"
	for k in "${keys[@]}"; do tmux -L $sock send-keys -t s "$k"; sleep 0.15; done
	sleep 0.8
	tmux -L $sock capture-pane -p -t s | sed 's/[[:space:]]*$//' > "$out/$name.txt"
	tmux -L $sock kill-server
	echo "$out/$name.txt"
}
shot main 120 36 1.5 + + + l l l l l l l l l l -- "$bin" traces/hackbench-pipe.ftrace.txt
shot compare 120 40 2 c c c c c c + + + + + + -- "$bin" traces/v5-workers.ftrace.txt --compare observed,lazy-compact,owner-mode
shot scan-batch 120 40 2 s l l l l l l l l + + + + + + -- "$bin" sim --cpus 128 --policy resume-batch --batch 8 --workload cyclictest --threads 64 --duration 300ms
shot demo 120 40 2 "]" "]" -- "$bin" demo workers
shot picker 120 36 1.5 P m c w -- "$bin" traces/v5-workers.ftrace.txt
shot threads 120 40 1.5 v c c c c c c + + + + + + + + + + -- "$bin" traces/v5-workers.ftrace.txt
shot accounting 120 36 1.5 p -- "$bin" traces/hackbench-pipe.ftrace.txt
shot help 120 40 1.5 "?" -- "$bin" traces/hackbench-pipe.ftrace.txt
shot legend 120 40 2 c c c c c c + + + + + + L -- "$bin" traces/v5-workers.ftrace.txt --compare observed,lazy-compact,owner-mode
shot small 80 24 2 -- "$bin" demo workers
shot live 120 36 3 -- "$bin" live --attach --workload hog:3,migrate:1:20ms --duration 10
shot live-workload-only 120 36 3 -- "$bin" live --workload hog:3,migrate:1:20ms --duration 10
