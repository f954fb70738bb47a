#!/bin/bash
# Captures the binary test files of the perf.data / trace.dat readers (run as root).
#
#   scripts/capture-binary.sh OUTDIR tests   the small captures committed in traces/
#   scripts/capture-binary.sh OUTDIR bench   the 40 s benchmark captures (kept out of git)
#
# Needs perf, trace-cmd, rt-tests (cyclictest, hackbench), gcc, python3.  trace-cmd 3.1.6
# segfaults on kernels whose function-tracer control files exist but cannot be opened; the
# LD_PRELOAD shim of /work/shared/traces/capture.sh (rebuilt here) hides them.
# Truth files: /work/shared/traces/truth.py --print FILE > FILE.truth.json
set -eu
OUT=${1:?usage: capture-binary.sh OUTDIR tests|bench}
WHAT=${2:-tests}
T=/sys/kernel/tracing
EVENTS="rseq:rseq_update sched:sched_switch sched:sched_migrate_task sched:sched_process_fork sched:sched_process_exit sched:sched_wakeup_new timer:hrtimer_expire_entry task:task_newtask sched:sched_process_exec"
mkdir -p "$OUT"
[ -e $T/available_events ] || mount -t tracefs nodev $T

SHIM=""
if ! cat $T/set_ftrace_pid > /dev/null 2>&1; then
	SHIM=$OUT/.noftrace.so
	sed -n '/^build_helpers()/,/^EOF$/p' /work/shared/traces/capture.sh | sed -n '3,200p' | sed '$d' > "$OUT/.noftrace.c"
	gcc -shared -fPIC -O2 -o "$SHIM" "$OUT/.noftrace.c" -ldl
fi

tc_args() { local e a=""; for e in $EVENTS; do a="$a -e $e"; done; echo "$a"; }

# run NAME TCOPTS PERFMODE(file|pipe|none) PERFOPTS STALL(0|1) -- COMMAND...
run() {
	local name=$1 tcopts=$2 perfmode=$3 perfopts=$4 stall=$5; shift 6
	local tcpid="" perfpid="" stallpid=""
	echo "[$(date +%T)] $name: $*" >&2
	if [ "$tcopts" != "-" ]; then
		rm -f "$OUT/$name.trace.dat"
		# shellcheck disable=SC2046,SC2086
		LD_PRELOAD=$SHIM trace-cmd record $tcopts $(tc_args) -o "$OUT/$name.trace.dat" > "$OUT/.$name.tc.log" 2>&1 &
		tcpid=$!
		sleep 1
	fi
	if [ "$perfmode" != none ]; then
		local pe="" e
		for e in $EVENTS; do pe="$pe -e $e"; done
		if [ "$perfmode" = pipe ]; then
			# shellcheck disable=SC2086
			perf record -a $pe $perfopts -o - > "$OUT/$name.perf.data" 2> "$OUT/.$name.perf.log" &
		else
			# shellcheck disable=SC2086
			perf record -a $pe $perfopts -o "$OUT/$name.perf.data" > "$OUT/.$name.perf.log" 2>&1 &
		fi
		perfpid=$!
		sleep 1
	fi
	if [ "$stall" = 1 ]; then
		local kids=""
		[ -n "$tcpid" ] && kids="$kids $(pgrep -P $tcpid | tr '\n' ' ')"
		[ -n "$perfpid" ] && kids="$kids $perfpid"
		# shellcheck disable=SC2086
		( while kill -STOP $kids 2> /dev/null; do sleep 0.3; kill -CONT $kids; sleep 0.1; done ) &
		stallpid=$!
	fi
	"$@" > "$OUT/.$name.workload.log" 2>&1 || true
	if [ -n "$stallpid" ]; then
		kill $stallpid; wait $stallpid 2> /dev/null || true
		# shellcheck disable=SC2086
		kill -CONT $kids 2> /dev/null || true
	fi
	sleep 0.2
	[ -n "$perfpid" ] && kill -INT $perfpid
	[ -n "$tcpid" ] && kill -INT $tcpid
	[ -n "$perfpid" ] && { wait $perfpid || true; }
	[ -n "$tcpid" ] && { wait $tcpid || true; }
	if [ -n "$tcpid" ]; then
		trace-cmd report -i "$OUT/$name.trace.dat" > "$OUT/$name.trace-cmd-report.txt" 2> "$OUT/.$name.report.err"
	fi
	if [ "$perfmode" != none ]; then
		perf script -i "$OUT/$name.perf.data" > "$OUT/$name.perf-script.txt" 2> "$OUT/.$name.script.err"
	fi
}

hackbench_loop() {  # SECONDS
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do hackbench -T -g 2 -f 5 -l 5000 > /dev/null; done
}

case $WHAT in
tests)
	# v7 zstd (trace-cmd's default) with pipe-mode perf of the same run.
	run v7zstd "-b 20000" pipe "" 0 -- cyclictest -q -t 8 -i 1000 -D 1
	# v7 without compression (committed gzip'd: the embedded kallsyms is 5.4 MB).
	run v7none "--file-version 7 --compression none -b 20000" none "" 0 -- hackbench -T -p -g 2 -f 5 -l 1000
	# Lost data on purpose: recorders stopped 0.3 s of every 0.4 s, tiny buffers.
	run lost "-b 64" file "-m 2" 1 -- hackbench -T -p -g 2 -f 5 -l 20000
	;;
bench)
	export -f hackbench_loop
	run bench "-b 20000" file "-m 1024" 0 -- bash -c "hackbench_loop 40"
	;;
*) echo "unknown set $WHAT" >&2; exit 2 ;;
esac
ls -la "$OUT"
