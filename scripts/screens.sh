#!/usr/bin/env bash
# Captures the screens of the README and docs/guide.md from the real binary in a real terminal (tmux):
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
c64=traces/kernels/k6.18.15-c64-workers.ftrace.txt.zst
shot main 120 36 1.5 + + + l l l l l l l l l l -- "$bin" traces/hackbench-pipe.ftrace.txt
shot compare 120 40 2 r -- "$bin" traces/v5-workers.ftrace.txt --compare observed,lazy-compact,resume-batch,owner-mode
shot weight64 120 40 3 / t i d : 6 2 7 Enter + + + + + + + + + + -- "$bin" $c64
shot overview64 120 40 3 w -- "$bin" $c64
shot cidmask 120 40 3 M / t i d : 6 2 7 Enter + + + + + + + + + + -- "$bin" $c64
shot steps 120 40 2 c c c c c c + + + + + + e e -- "$bin" traces/v5-workers.ftrace.txt --compare observed,lazy-compact,resume-batch
shot goto 120 40 2 : + 5 7 . 3 9 m s Enter -- "$bin" traces/v5-workers.ftrace.txt
shot present 80 24 2 "]" "]" -- "$bin" demo workers --present
shot small-why 80 24 3 / t i d : 6 2 7 Enter -- "$bin" $c64
shot scan-batch 120 40 2 s l l l l l l l l + + + + + + -- "$bin" sim --cpus 128 --policy resume-batch --batch 8 --workload cyclictest --threads 64 --duration 300ms
shot demo 120 40 2 "]" "]" -- "$bin" demo workers
shot picker 120 36 1.5 P m c w -- "$bin" traces/v5-workers.ftrace.txt
shot threads 120 40 1.5 v c c c c c c + + + + + + + + + + -- "$bin" traces/v5-workers.ftrace.txt
shot accounting 120 36 1.5 p -- "$bin" traces/hackbench-pipe.ftrace.txt
shot help 120 40 1.5 "?" -- "$bin" traces/hackbench-pipe.ftrace.txt
shot legend 120 40 2 c c c c c c + + + + + + L -- "$bin" traces/v5-workers.ftrace.txt --compare observed,lazy-compact,owner-mode
shot small 80 24 2 -- "$bin" demo workers
if [ "$(id -u)" = 0 ]; then
	shot live 120 36 3 -- "$bin" live --attach --workload hog:3,migrate:1:20ms --duration 10
fi
shot live-workload-only 120 36 3 -- "$bin" live --workload hog:3,migrate:1:20ms --duration 10
