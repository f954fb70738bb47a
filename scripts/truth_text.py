#!/usr/bin/env python3
"""Independent counts of the ftrace text variants in traces/ (issue 14), with regular
expressions written apart from cidscope's parser: tracefs `trace` / `trace_pipe` /
`trace-cmd report` lines (with and without irq flags, TGID column, buffer-name prefix),
`trace-cmd report -R` raw fields, options/stacktrace, syscall lines without a label, the
function tracer, function_graph (tracefs columns and trace-cmd's funcgraph_entry/exit),
latency-format, continuation lines of multi-line messages, and systrace HTML pages.

Usage: truth_text.py FILE > FILE.truth.json

Counted as events, by name: every record line; a function tracer or function_graph call by the
function's name, a function_graph exit as `funcgraph_exit`, a function_graph comment by the
event it holds; sys_enter_X / sys_exit_X for the unlabeled syscall lines. Not events (counted
under "skipped"): stack traces and their frames, continuation lines, untimed function_graph
lines, the graph's task-switch blocks and irq arrows. Where the file has the tracefs header
`entries-in-buffer/entries-written: N/M`, events + stack traces must equal N (asserted).
"""
import hashlib
import json
import os
import re
import sys
from collections import defaultdict

HEAD = re.compile(
    r'^(?:[A-Za-z0-9_.-]+:\s{2,})?'            # trace-cmd's buffer-name prefix
    r'\s*(?P<comm>.*?)-(?P<pid>\d+)\s+'
    r'(?:\(\s*(?P<tgid>[0-9-]+)\)\s+)?'
    r'\[(?P<cpu>\d+)\]\s+'
    r'(?:(?P<flags>[^\s:]{3,6})\s+)?'
    r'(?P<ts>\d+(?:\.\d+)?):\s(?P<rest>.*)$')
LAT = re.compile(
    r'^(?P<comm>.{8})-(?P<pid>\d+)\s+(?P<cpu>\d+)(?P<flags>\S{3,6})\s+'
    r'(?P<us>\d+)(?:us[ +!#*@$]?)?:\s(?P<rest>.*)$')
GRAPH = re.compile(
    r'^\s*(?:(?P<abs>\d+\.\d+|\d+ us)\s+\|\s+)?(?P<cpu>\d+)\)\s+'
    r'(?:(?P<task>[^|]*?-\d+)\s+\|\s+)?'
    r'(?:(?P<flags>[.dDnNhHsSbBzZX0-9]{3,6})\s+\|\s+)?'
    r'(?P<dur>[+!#*@$]?\s*[\d.]+ us)?\s*\|\s*(?P<body>.*?)\s*$')
GRAPH_SWITCH = re.compile(r'^\s*\d+\)\s+\S.*-\d+\s+=>\s+\S.*-\d+\s*$')
EVENT = re.compile(r'^\s*(?P<name>[A-Za-z0-9_.]+):\s?(?P<payload>.*)$')
SYS_ENTER = re.compile(r'^sys_(\w+)\(.*\)$')
SYS_EXIT = re.compile(r'^sys_(\w+) -> (0x[0-9a-fA-F]+|-?\d+)$')
FUNC = re.compile(r'^(?P<f>[\w.$/]+?)(?:\+0x[0-9a-f]+/0x[0-9a-f]+)?(?: <[0-9a-f]+>)? <-')
LOST = re.compile(r'^CPU:(\d+) \[(?:LOST (\d+) EVENTS|LOST EVENTS|(\d+) EVENTS DROPPED|EVENTS DROPPED)\]')
RSEQ = re.compile(r'cpu_id=(-?\d+).*mm_cid=(-?\d+)')
NEXT = re.compile(r'next_comm=(.*?) next_pid=(\d+)')
MODELLED = {'rseq_update', 'rseq_ip_fixup', 'sched_switch', 'sched_migrate_task',
            'sched_process_fork', 'task_newtask', 'sched_process_exec', 'sched_process_exit',
            'sched_wakeup_new', 'tick_stop'}


def html_text(data):
    m = None
    for blk in re.finditer(rb'<script[^>]*trace-data[^>]*>(.*?)</script>', data, re.S):
        body = blk.group(1).strip()
        if body and body[:1] not in (b'{', b'['):
            m = blk.group(1)
            break
    if m is not None:
        for a, b in ((b'&lt;', b'<'), (b'&gt;', b'>'), (b'&quot;', b'"'), (b'&#39;', b"'"), (b'&amp;', b'&')):
            m = m.replace(a, b)
        return m.decode('utf-8', 'replace')
    js = re.search(rb'linuxPerfData\s*=\s*"(.*?)(?<!\\)"', data, re.S)
    if js is None:
        raise SystemExit('no trace data in the page')
    s = js.group(1).decode('utf-8', 'replace')
    s = s.replace('\\\n', '')
    return re.sub(r'\\(.)', lambda x: {'n': '\n', 't': '\t'}.get(x.group(1), x.group(1)), s)


def graph_body(body, dur):
    if body.startswith('}'):
        return 'funcgraph_exit'
    c = re.match(r'^/\*\s*(.*?)\s*\*/$', body)
    if c:
        e = EVENT.match(c.group(1))
        return e.group('name') if e else 'funcgraph_comment'
    e = re.match(r'^([\w.$]+)\(.*\)\s*(\{|;.*)$', body)
    return e.group(1) if e else None


def main(path):
    raw = open(path, 'rb').read()
    if raw.lstrip()[:14].lower().startswith(b'<!doctype html') or raw.lstrip()[:5].lower() == b'<html':
        text = html_text(raw)
    else:
        text = raw.decode('utf-8', 'replace')
    counts = defaultdict(int)
    skipped = defaultdict(int)
    cpus = set()
    ts_all = []
    lost = 0
    per_tid = defaultdict(lambda: {'n': 0, 'cids': set(), 'comms': set(), 'tgid': None})
    names = defaultdict(set)
    tgid_in_file = False
    header_entries = None
    cont_ok = False
    lines = text.split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    for no, line in enumerate(lines, 1):
        line = line.rstrip('\r')
        if not line.strip():
            continue
        if line.startswith('#'):
            m = re.search(r'entries-in-buffer/entries-written: (\d+)/(\d+)', line)
            if m:
                header_entries = int(m.group(1))
            continue
        if line.startswith('cpus=') or line.startswith('version = '):
            continue
        m = LOST.match(line)
        if m:
            lost += int(m.group(2) or m.group(3) or 0)
            cont_ok = False
            continue
        if re.match(r'^\s*=>( |$)', line):
            skipped['stack_frames'] += 1
            continue
        name = None
        h = HEAD.match(line) or LAT.match(line)
        if h:
            rest = h.group('rest').rstrip()
            ts = int(round(float(h.group('ts')) * 1e9)) if 'ts' in h.groupdict() else int(h.group('us')) * 1000
            e = EVENT.match(rest)
            if rest in ('<stack trace>', '<user stack trace>'):
                skipped['stack_traces'] += 1
                cont_ok = False
                continue
            if SYS_ENTER.match(rest):
                name = 'sys_enter_' + SYS_ENTER.match(rest).group(1)
            elif SYS_EXIT.match(rest):
                name = 'sys_exit_' + SYS_EXIT.match(rest).group(1)
            elif e and '(' not in e.group('name'):
                name = e.group('name')
                payload = e.group('payload')
                if name in ('kernel_stack', 'user_stack'):
                    skipped['stack_traces'] += 1
                    cont_ok = False
                    continue
                if name == 'function':
                    name = re.split(r'[ +]', payload.strip())[0]
                elif name in ('funcgraph_entry', 'funcgraph_exit'):
                    g = re.match(r'^\s*([+!#*@$]?\s*[\d.]+ us)?\s*\|\s*(.*?)\s*$', payload)
                    name = graph_body(g.group(2), g.group(1)) if g else name
            elif FUNC.match(rest):
                name = FUNC.match(rest).group('f')
            if name is None:
                raise SystemExit(f'{path}:{no}: not understood: {line!r}')
            pid = int(h.group('pid'))
            cpu = int(h.group('cpu'))
            comm = h.group('comm').strip()
            tg = h.groupdict().get('tgid')
            if tg is not None and not tg.startswith('-'):
                tgid_in_file = True
                per_tid[pid]['tgid'] = int(tg)
            per_tid[pid]['comms'].add(comm)
            if name == 'rseq_update':
                r = RSEQ.search(e.group('payload'))
                per_tid[pid]['n'] += 1
                per_tid[pid]['cids'].add(int(r.group(2)))
            if name == 'sched_switch' and e:
                n = NEXT.search(e.group('payload'))
                if n:
                    names[int(n.group(2))].add(n.group(1))
        else:
            if GRAPH_SWITCH.match(line) or re.match(r'^\s*-{20,}\s*$', line):
                skipped['graph_marks'] += 1
                continue
            g = GRAPH.match(line)
            if g and ('==========>' in line or '<==========' in line):
                skipped['graph_marks'] += 1
                continue
            if g and graph_body(g.group('body'), g.group('dur')):
                if not g.group('abs'):
                    skipped['graph_untimed'] += 1
                    continue
                a = g.group('abs')
                ts = int(a[:-3]) * 1000 if a.endswith(' us') else int(round(float(a) * 1e9))
                name = graph_body(g.group('body'), g.group('dur'))
                cpu = int(g.group('cpu'))
                if g.group('task'):
                    t = g.group('task').strip()
                    pid = int(t.rsplit('-', 1)[1])
                    per_tid[pid]['comms'].add(t.rsplit('-', 1)[0])
            elif cont_ok:
                skipped['continuation'] += 1
                continue
            else:
                raise SystemExit(f'{path}:{no}: not understood: {line!r}')
        counts[name] += 1
        cpus.add(cpu)
        ts_all.append(ts)
        cont_ok = name not in MODELLED
    total = sum(counts.values())
    if header_entries is not None:
        assert total + skipped['stack_traces'] == header_entries, (total, skipped, header_entries)
    out = {
        'file': os.path.basename(path),
        'size_bytes': len(raw),
        'sha256': hashlib.sha256(raw).hexdigest(),
        'reader': 'python3 regular expressions (scripts/truth_text.py)',
        'events_total': total,
        'event_counts': dict(sorted(counts.items())),
        'cpus': sorted(cpus),
        'min_ts_ns': min(ts_all) if ts_all else None,
        'max_ts_ns': max(ts_all) if ts_all else None,
        'lost_events_reported': lost,
        'skipped': {k: v for k, v in sorted(skipped.items()) if v},
        'entries_in_buffer_header': header_entries,
        'tgid_in_file': tgid_in_file,
        'rseq': {'per_tid': {
            str(t): {
                'rseq_update_count': v['n'],
                'mm_cids': sorted(v['cids']),
                'comms': sorted(v['comms'] | names.get(t, set())),
                'tgid': v['tgid'],
            } for t, v in sorted(per_tid.items()) if v['n'] > 0}},
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main(sys.argv[1])
