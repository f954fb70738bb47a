#!/bin/bash
# make-big.sh -- synthesize a LARGE ftrace-text trace for throughput benchmarks
#
#   ./make-big.sh SIZE_MB NCPUS NTASKS [SOURCE] [OUTPUT]
#
#   SIZE_MB  target size of the output in MB (10^6 bytes; stops at the first
#            event line that reaches it)
#   NCPUS    number of CPUs in the output ([000] .. [NCPUS-1])
#   NTASKS   wanted number of distinct tasks (a lower bound: the result is a
#            multiple of the tasks in one source copy, printed at the end)
#   SOURCE   a real tracefs text capture (default: cyclictest.ftrace.txt next
#            to this script)
#   OUTPUT   default: ./big-<SIZE_MB>MB-<NCPUS>cpu.ftrace.txt
#
# How: the events of SOURCE are replicated.  Each replication round is shifted
# in time past the previous one (timestamps never decrease).  To get NCPUS
# CPUs, each round holds several "lanes", copies of the source placed on
# disjoint CPU ranges at the same times.  Each lane/round variant gets its own
# pid range (pid + k*STRIDE), so a copy never shares a task with another copy;
# tids in event fields (prev_pid, next_pid, pid, child_pid) are remapped the
# same way, cpu fields (cpu_id, orig_cpu, dest_cpu, target_cpu, swapper/N)
# follow the CPU remap, hrtimer now= is shifted with the timestamps, mm_cid
# values are kept (each copy is a different set of processes).  Event lines
# are written in the tracefs text format; the header is regenerated with the
# right entries count.  Lost-event markers of the source are dropped.
#
# A summary (events per type, tasks, CPUs, first/last timestamp) is written to
# OUTPUT.summary.json; it is computed while generating, independent of any
# reader.  Do not commit the output: it is large by design.
set -eu
if [ $# -lt 3 ]; then
	sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
fi
SIZE_MB=$1 NCPUS=$2 NTASKS=$3
HERE=$(cd "$(dirname "$0")" && pwd)
SOURCE=${4:-$HERE/../traces/cyclictest.ftrace.txt}
OUTPUT=${5:-$PWD/big-${SIZE_MB}MB-${NCPUS}cpu.ftrace.txt}
exec python3 - "$SIZE_MB" "$NCPUS" "$NTASKS" "$SOURCE" "$OUTPUT" <<'EOF'
import json, os, re, sys, time

size_mb, ncpus, ntasks = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
source, output = sys.argv[4], sys.argv[5]
t_start = time.time()

LINE = re.compile(r'^(?P<comm>.*?)-(?P<pid>\d+)\s+(?:\(\s*(?P<tgid>-+|\d+)\)\s+)?'
                  r'\[(?P<cpu>\d+)\]\s+(?:(?P<flags>\S{4,6})\s+)?(?P<sec>\d+)\.(?P<usec>\d{6}):\s+'
                  r'(?P<event>\w+):\s?(?P<rest>.*)$')
PIDF = re.compile(r'\b(prev_pid|next_pid|pid|child_pid)=(\d+)')
CPUF = re.compile(r'\b(cpu_id|orig_cpu|dest_cpu)=(\d+)')
TCPU = re.compile(r'\btarget_cpu=(\d+)')
SWAP = re.compile(r'swapper/\d+')
NOW = re.compile(r'\bnow=(\d+)')

events = []
header = []
with open(source, encoding='utf-8', errors='surrogateescape') as f:
    for line in f:
        line = line.rstrip('\n')
        if line.startswith('#'):
            header.append(line)
            continue
        m = LINE.match(line)
        if not m:
            continue          # lost-event markers, partial lines
        events.append(m)
if not events:
    sys.exit(f'make-big: no events in {source}')

src_cpus = max(int(m['cpu']) for m in events) + 1
src_pids = sorted({int(m['pid']) for m in events if int(m['pid']) != 0})
lanes = (ncpus + src_cpus - 1) // src_cpus
per_copy = max(1, len(src_pids))
variants = max(1, -(-ntasks // (lanes * per_copy)))
maxpid = max(src_pids + [1])
stride = 10 ** len(str(maxpid))
t0 = int(events[0]['sec']) * 1_000_000 + int(events[0]['usec'])
t1 = int(events[-1]['sec']) * 1_000_000 + int(events[-1]['usec'])
span = t1 - t0 + 1000                # one round + 1 ms gap, in microseconds
has_tgid = any(m['tgid'] for m in events)

# Pre-split every source event into a template: fields that change per copy
# become format slots.
tmpl = []
for m in events:
    rest = m['rest']
    pid_slots = []

    def pid_sub(mm):
        pid_slots.append(int(mm.group(2)))
        return mm.group(1) + '={P%d}' % (len(pid_slots) - 1)
    rest = PIDF.sub(pid_sub, rest.replace('{', '{{').replace('}', '}}'))
    rest = CPUF.sub(lambda mm: mm.group(1) + '={C%d}' % int(mm.group(2)), rest)
    rest = TCPU.sub(lambda mm: 'target_cpu={T%d}' % int(mm.group(1)), rest)
    rest = SWAP.sub('swapper/{S}', rest)
    now = None
    mnow = NOW.search(rest)
    if mnow:
        now = int(mnow.group(1))
        rest = rest[:mnow.start()] + 'now={N}' + rest[mnow.end():]
    # named slots C<n>/T<n> -> positional values filled below
    cpu_refs = sorted({int(x) for x in re.findall(r'\{C(\d+)\}', rest)})
    t_refs = sorted({int(x) for x in re.findall(r'\{T(\d+)\}', rest)})
    ts = int(m['sec']) * 1_000_000 + int(m['usec']) - t0
    tg = m['tgid']
    tmpl.append((m['comm'].lstrip(), int(m['pid']), (int(tg) if tg and tg.isdigit() else None),
                 int(m['cpu']), m['flags'], ts, m['event'], rest, pid_slots, cpu_refs, t_refs, now))

counts = {}
cpus_seen = set()
tasks_seen = set()
target = size_mb * 1_000_000
written = 0
n_events = 0
first_ts = last_ts = None
body = output + '.body.tmp'
base_us = t0
with open(body, 'w', encoding='utf-8', errors='surrogateescape') as out:
    rnd = 0
    done = False
    while not done:
        variant = rnd % variants
        off_us = rnd * span
        chunk = []
        chunk_bytes = 0
        for (comm, pid, tgid, cpu, flags, ts, event, rest, pid_slots, cpu_refs, t_refs, now) in tmpl:
            if written + chunk_bytes >= target:
                done = True
                break
            t = base_us + ts + off_us
            sec, usec = divmod(t, 1_000_000)
            for lane in range(lanes):
                ocpu = lane * src_cpus + cpu
                if ocpu >= ncpus:
                    continue
                k = (lane * variants + variant) * stride
                npid = pid + k if pid else 0
                kw = {'S': ocpu}
                for i, p in enumerate(pid_slots):
                    kw['P%d' % i] = p + k if p else 0
                for c in cpu_refs:
                    kw['C%d' % c] = lane * src_cpus + c
                for c in t_refs:
                    kw['T%d' % c] = '%03d' % (lane * src_cpus + c)
                if now is not None:
                    kw['N'] = now + off_us * 1000
                r = rest.format(**kw) if (pid_slots or cpu_refs or t_refs or now is not None or '{' in rest) else rest
                if has_tgid:
                    tg = '(%7d)' % (tgid + k if tgid else 0) if tgid is not None else '(-------)'
                    head = '%16s-%-7d %s [%03d] ' % (comm, npid, tg, ocpu)
                else:
                    head = '%16s-%-7d [%03d] ' % (comm, npid, ocpu)
                line = '%s%s %5d.%06d: %s: %s\n' % (head, flags or '.....', sec, usec, event, r)
                chunk.append(line)
                chunk_bytes += len(line)
                counts[event] = counts.get(event, 0) + 1
                cpus_seen.add(ocpu)
                if npid:
                    tasks_seen.add(npid)
                if first_ts is None:
                    first_ts = '%d.%06d' % (sec, usec)
                last_ts = '%d.%06d' % (sec, usec)
        data = ''.join(chunk)
        out.write(data)
        written += chunk_bytes
        n_events += len(chunk)
        rnd += 1

hdr = ['# tracer: nop', '#',
       '# entries-in-buffer/entries-written: %d/%d   #P:%d' % (n_events, n_events, ncpus)]
hdr += [h for h in header[3:]] if len(header) > 3 else ['#']
with open(output, 'wb') as out:
    out.write(('\n'.join(hdr) + '\n').encode())
    with open(body, 'rb') as b:
        while True:
            blk = b.read(1 << 24)
            if not blk:
                break
            out.write(blk)
os.unlink(body)
elapsed = time.time() - t_start
summary = {
    'file': os.path.basename(output),
    'source': os.path.basename(source),
    'size_bytes': os.path.getsize(output),
    'events_total': n_events,
    'event_counts': dict(sorted(counts.items())),
    'cpus': len(cpus_seen),
    'tasks': len(tasks_seen),
    'rounds_started': rnd, 'lanes': lanes, 'pid_variants': variants, 'pid_stride': stride,
    'first_ts': first_ts, 'last_ts': last_ts,
    'generation_seconds': round(elapsed, 2),
}
with open(output + '.summary.json', 'w') as f:
    json.dump(summary, f, indent=1)
print(json.dumps(summary, indent=1))
EOF
