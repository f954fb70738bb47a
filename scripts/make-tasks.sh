#!/bin/bash
# make-tasks.sh -- synthesize an ftrace-text trace with MANY tasks, for memory benchmarks
#
#   ./make-tasks.sh NTASKS THREADS [LINES] [NCPUS] [OUTPUT]
#
#   NTASKS   distinct tasks (tids 1000 .. 1000+NTASKS-1)
#   THREADS  threads per process (tgid = the first tid of each group of THREADS)
#   LINES    lines per task: 1 = one rseq_update each (the most tasks per byte: ~100 bytes
#            per task), 2 = a sched_switch onto it and its rseq_update (default 1)
#   NCPUS    CPUs the tasks are spread over round-robin (default 8)
#   OUTPUT   default: ./tasks-<NTASKS>.ftrace.txt
#
# The lines have the TGID column, so every task is grouped with its process. CIDs are
# 0..THREADS-1 within a process, below the bound. Do not commit the output: it is large by
# design.
set -eu
if [ $# -lt 2 ]; then
	sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
fi
NTASKS=$1 THREADS=$2 LINES=${3:-1} NCPUS=${4:-8}
OUTPUT=${5:-$PWD/tasks-$NTASKS.ftrace.txt}
exec python3 - "$NTASKS" "$THREADS" "$LINES" "$NCPUS" "$OUTPUT" <<'EOF'
import sys

ntasks, threads, lines, ncpus, output = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                                         int(sys.argv[4]), sys.argv[5])
events = ntasks * lines
with open(output, 'w') as out:
    out.write('# tracer: nop\n#\n'
              '# entries-in-buffer/entries-written: %d/%d   #P:%d\n#\n'
              '#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION\n'
              '#              | |           |       |   |||||     |         |\n'
              % (events, events, ncpus))
    prev = [(0, 'swapper/%d' % c) for c in range(ncpus)]
    buf = []
    us = 1_000_000_000      # 1000 s, in microseconds
    for i in range(ntasks):
        tid = 1000 + i
        tgid = 1000 + (i // threads) * threads
        cid = (i % threads) % min(threads, ncpus)
        cpu = i % ncpus
        comm = 'w%d' % (i // threads)
        if lines >= 2:
            ptid, pcomm = prev[cpu]
            sec, usec = divmod(us, 1_000_000)
            buf.append('%16s-%-7d (%7d) [%03d] d..2. %5d.%06d: sched_switch: prev_comm=%s '
                       'prev_pid=%d prev_prio=120 prev_state=S ==> next_comm=%s next_pid=%d '
                       'next_prio=120\n' % (pcomm[:16], ptid, 0, cpu, sec, usec, pcomm, ptid,
                                            comm, tid))
            prev[cpu] = (tid, comm)
            us += 1
        sec, usec = divmod(us, 1_000_000)
        buf.append('%16s-%-7d (%7d) [%03d] ..... %5d.%06d: rseq_update: cpu_id=%d node_id=0 '
                   'mm_cid=%d\n' % (comm, tid, tgid, cpu, sec, usec, cpu, cid))
        us += 1
        if len(buf) >= 65536:
            out.write(''.join(buf))
            buf = []
    out.write(''.join(buf))
print('%s: %d tasks, %d processes, %d events' % (output, ntasks, -(-ntasks // threads), events))
EOF
