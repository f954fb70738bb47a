#!/bin/bash
# capture-text-variants.sh OUTDIR -- the ftrace text variants of traces/ made on this box
# (issue 14): options/stacktrace, syscall events (their unlabeled sys_foo(...) / sys_foo -> 0x0
# lines), options/latency-format, a trace_marker message with embedded newlines (the
# continuation-line shape of trace_printk), and trace-cmd report -R of the same kind of run.
# Run as root. Uses a private tracefs instance (instances/xtext) so the global buffer and
# other users' instances are left alone; trace-cmd records into its own instance (-B).
set -eu
OUT=${1:?usage: capture-text-variants.sh OUTDIR}
T=/sys/kernel/tracing
[ -e $T/available_events ] || mount -t tracefs nodev $T
I=$T/instances/xtext
mkdir -p "$OUT"
EVENTS="rseq/rseq_update sched/sched_switch sched/sched_process_fork sched/sched_process_exec sched/sched_process_exit sched/sched_migrate_task sched/sched_wakeup_new task/task_newtask"
# a small workload: a shell that forks two short-lived threads' worth of processes
work() { for i in 1 2 3; do /bin/true; done; sleep 0.05; }

start() { # OPTIONS...
	rmdir $I 2>/dev/null || true
	mkdir $I
	echo 0 > $I/tracing_on
	echo 256 > $I/buffer_size_kb
	echo 1 > $I/options/record-tgid
	for e in $EVENTS; do echo 1 > $I/events/$e/enable; done
	for o in "$@"; do echo "${o#*=}" > "$I/${o%%=*}"; done
	echo 1 > $I/tracing_on
}
stop() { # FILE
	echo 0 > $I/tracing_on
	cat $I/trace > "$OUT/$1"
	echo 0 > $I/options/stacktrace 2>/dev/null || true
	rmdir $I
}

# 1. a kernel stack under every event
start options/stacktrace=1
work
stop stacktrace.ftrace.txt

# 2. syscall events beside rseq_update: sys_enter_* print as "sys_foo(args)", sys_exit_* as
#    "sys_foo -> 0xN", with no event label
start events/syscalls/sys_enter_write/enable=1 events/syscalls/sys_exit_write/enable=1 \
	events/syscalls/sys_enter_openat/enable=1 events/syscalls/sys_exit_openat/enable=1
work; echo hello > /dev/null; cat /etc/hostname > /dev/null
stop syscalls.ftrace.txt

# 3. latency-format
start options/latency-format=1
work
stop latency.ftrace.txt

# 4. a trace_marker message with newlines inside (continuation lines, as trace_printk makes)
start
work
# one write(2) each: a message holding newlines is one event printed over several lines
python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_WRONLY); os.write(fd, b"batch 1 begins\nline two of the message\n  and three\n"); os.close(fd)' $I/trace_marker
work
python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_WRONLY); os.write(fd, b"one-line message\n"); os.close(fd)' $I/trace_marker
stop multiline-marker.ftrace.txt

# 5. trace-cmd report -R (raw fields): recorded into its own instance
if command -v trace-cmd >/dev/null; then
	TMP=$(mktemp -d)
	PRE=""
	# trace-cmd 3.1.6 segfaults where the function-tracer files fail with EPERM: the shim of
	# /work/shared/traces/capture.sh hides them (TC_PRELOAD=path/noftrace.so)
	if ! cat $T/set_ftrace_pid >/dev/null 2>&1 && [ -n "${TC_PRELOAD:-}" ]; then PRE="$TC_PRELOAD"; fi
	(cd "$TMP" && LD_PRELOAD=$PRE trace-cmd record -B xtextcmd -e rseq:rseq_update -e sched:sched_switch \
		-e sched:sched_process_fork -e sched:sched_process_exit -e sched:sched_wakeup_new \
		-e sched:sched_migrate_task -o raw.dat bash -c 'for i in 1 2 3; do /bin/true; done; sleep 0.05' >/dev/null 2>&1) || true
	if [ -s "$TMP/raw.dat" ]; then
		trace-cmd report -R -i "$TMP/raw.dat" > "$OUT/raw.trace-cmd-report.txt" 2>/dev/null
	fi
	rm -rf "$TMP"
	rmdir $T/instances/xtextcmd 2>/dev/null || true
fi
ls -la "$OUT"
