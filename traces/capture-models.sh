#!/bin/bash
# Makes the CID-model captures of traces/CAPTURES.md (run as root on a test box).
#   traces/capture-models.sh [OUTDIR]        (default: the directory of this script)
# Each capture: a private tracefs instance with record-tgid, the events below, the workload
# started by fork+exec from this shell (so its mm begins inside the capture), then the
# instance's `trace` text. Other processes of the box are recorded too (they are real).
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$DIR}
T=/sys/kernel/tracing
[ -e $T/instances ] || mount -t tracefs nodev $T || exit 1
WORK=$(mktemp -d)
gcc -O2 -pthread -Wall -o $WORK/mcwork "$DIR/mcwork.c" || exit 1
EVENTS="rseq:rseq_update sched:sched_switch sched:sched_migrate_task sched:sched_process_fork
 sched:sched_process_exec sched:sched_process_exit task:task_newtask sched:sched_wakeup_new
 timer:hrtimer_expire_entry timer:tick_stop sched:sched_wake_idle_without_ipi"

capture() {   # NAME SECONDS_AFTER -- COMMAND...
	local name=$1 after=$2; shift 3
	local I=$T/instances/cidmodels e
	[ -d $I ] && rmdir $I
	mkdir $I || return 1
	echo 0 > $I/tracing_on
	echo 20000 > $I/buffer_size_kb
	echo 1 > $I/options/record-tgid
	for e in $EVENTS; do echo $e >> $I/set_event; done
	# only the tick's hrtimer (the others are nanosleep wakeups: noise)
	echo 'function.function == tick_nohz_handler' > $I/events/timer/hrtimer_expire_entry/filter 2>/dev/null ||
		echo "note: hrtimer filter not supported, keeping every hrtimer expiry" >&2
	echo 1 > $I/tracing_on
	sleep 0.05
	"$@"
	sleep "$after"
	echo 0 > $I/tracing_on
	cat $I/trace > "$OUT/$name.ftrace.txt"
	echo > $I/set_event
	rmdir $I
	printf '%s: %s bytes, %s\n' "$name" "$(stat -c %s "$OUT/$name.ftrace.txt")" "$*" >&2
}

NAMES=${NAMES:-"v3-spinner v3-spinner-rt v5-workers v5-workers-rt hogs churn migrate forks"}
# (v5-workers-quiet: the same as v5-workers, taken when the box was nearly idle)
for n in $NAMES; do
	case $n in
	v3-spinner) capture v3-spinner 0.05 -- $WORK/mcwork spin1 2 ;;
	# SCHED_FIFO keeps the spinner unpreempted on a busy box (RT throttling still takes
	# 50 ms of every second away from it)
	v3-spinner-rt) capture v3-spinner-rt 0.05 -- chrt -f 10 $WORK/mcwork spin1 2 ;;
	v5-workers) capture v5-workers 0.05 -- $WORK/mcwork workers 4 300 200 1.0 ;;
	v5-workers-quiet) capture v5-workers-quiet 0.05 -- $WORK/mcwork workers 4 300 200 1.0 ;;
	v5-workers-rt) capture v5-workers-rt 0.05 -- chrt -f 10 $WORK/mcwork workers 4 300 200 1.0 ;;
	hogs) capture hogs-6threads 0.05 -- $WORK/mcwork hogs 1.5 6 ;;
	churn) capture churn-batches6 0.05 -- $WORK/mcwork churn 1.0 6 ;;
	migrate) capture migrate-affinity-flip 0.05 -- $WORK/mcwork migrate 1.5 ;;
	forks) capture forks-3procs 0.05 -- $WORK/mcwork forks 1.0 3 ;;
	esac
done
rm -rf $WORK
