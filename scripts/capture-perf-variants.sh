#!/usr/bin/env bash
# Records the perf variants that traces/PUBLIC.md lists as "made here" (perf section): perf
# record -z (file and pipe mode), group reads, callchains, samples without a CPU, an exec, and
# perf script renderings without cpu or time, with --header, --deltatime, --reltime, the
# period column and side-band records. Root, perf and hackbench needed.
#   scripts/capture-perf-variants.sh OUTDIR
# Then scripts/perf_truth.py writes each file's truth (see its header), and
# scripts/compressed2.py makes the COMPRESSED2 copies of the -z recordings.
set -euo pipefail
out=${1:?usage: capture-perf-variants.sh OUTDIR}
mkdir -p "$out"
cd "$out"
# a small workload with threads, forks, an exec and rseq users (hackbench's threads)
work='hackbench -T -p -g 2 -f 3 -l 150 >/dev/null; sh -c "exec true"'
tp=(-e rseq:rseq_update -e sched:sched_switch -e sched:sched_process_fork
	-e sched:sched_process_exec -e sched:sched_process_exit -e task:task_newtask)
rec() { perf record -q "$@" 2>/dev/null; }

# perf record -z: PERF_RECORD_COMPRESSED, file and pipe mode
rec -z -a "${tp[@]}" -o z-file.perf.data -- sh -c "$work"
rec -z -a "${tp[@]}" -o - -- sh -c "$work" >z-pipe.perf.data

# group reads (read_format TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID|GROUP|LOST), a
# tracepoint leading a group (ID|GROUP|LOST with raw data), one counter read (ID|LOST)
rec -a --running-time -e '{cpu-clock,page-faults}:S' -o group-read.perf.data -- sh -c "$work"
rec -a -e '{sched:sched_switch,cpu-clock}:S' -e rseq:rseq_update -o group-tp.perf.data -- sh -c "$work"
rec -e 'cpu-clock:S' -o read-one.perf.data -- sh -c "$work"

# callchains (-g) on tracepoints, and their perf script text (stacks under each sample)
rec -a -g -e rseq:rseq_update -e sched:sched_switch -o callchain.perf.data -- sh -c "$work"
perf script -i callchain.perf.data >callchain.perf-script.txt 2>/dev/null

# per-thread recording (no -a): samples without PERF_SAMPLE_CPU; its text has no cpu column
rec -e cpu-clock -e page-faults -e sched:sched_switch -o nocpu.perf.data -- sh -c "$work"
perf script -i nocpu.perf.data >nocpu.perf-script.txt 2>/dev/null

# an exec: the task samples before (as sh) and after (as sleep)
rec -a -e sched:sched_switch -e rseq:rseq_update -o exec-comm.perf.data -- \
	sh -c 'sleep 0.01; exec sleep 0.01'

# system-wide cpu-clock: perf script's default fields for an event that is no tracepoint
# (period column, ip and symbol after the event)
rec -a -e cpu-clock -o cpu-clock.perf.data -- sh -c "$work"
perf script -i cpu-clock.perf.data >cpu-clock.perf-script.txt 2>/dev/null

# renderings of one tracepoint recording
rec -a "${tp[@]}" -o base.perf.data -- sh -c "$work"
ps() { perf script -i base.perf.data "$@" 2>/dev/null; }
ps -F comm,tid,time,event,trace >F-nocpu.perf-script.txt
ps -F comm,tid,cpu,event,trace >F-notime.perf-script.txt
ps --header >header.perf-script.txt
ps --deltatime >deltatime.perf-script.txt
ps --ns --deltatime >deltatime-ns.perf-script.txt
ps --reltime >reltime.perf-script.txt
ps -F +period >period.perf-script.txt
ps --show-task-events >task-events.perf-script.txt
ls -l
