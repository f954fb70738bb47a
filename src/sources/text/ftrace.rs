//! The ftrace text family: tracefs `trace` (with or without its `#` header, irq-flags column and
//! the `(TGID)` column of `options/record-tgid`), `trace_pipe`, and `trace-cmd report`.
//!
//! A line is `COMM-PID [(TGID)] [CPU] [FLAGS] SECONDS.FRACTION: EVENT: PAYLOAD`. Comms may hold
//! spaces, dashes, digits and even `[001]`, so the line is anchored on the first `[CPU]` that is
//! preceded by `-PID` and followed by a timestamp, not split on whitespace.

use crate::events::{Event, EventKind, Tid};
use crate::sources::file_format::Sample;
use crate::sources::text::chunk::{Chunk, Expected, LineParser};
pub use crate::sources::text::columns::{Cols, Head};
use crate::sources::text::scan::{
    cpu_column, digits_ending, find2, has_byte, name_end, parse_ts_fraction, rfind_byte,
    skip_spaces, trim_end, trim_start,
};
use crate::sources::text::{payload, shapes};

/// Parser for every ftrace-family text format.
pub struct FtraceText;

/// Splits an event line into its columns, trying first the `[CPU]` position `hint` where the
/// previous line had it (tracefs pads its columns, so it rarely moves).
pub fn split_head_hinted<'a>(line: &'a [u8], hint: &mut usize) -> Option<Head<'a>> {
    if line.get(*hint) == Some(&b'[')
        && let Some(h) = head_at(line, *hint)
    {
        return Some(h);
    }
    let limit = line.len().min(200);
    for i in memchr::memchr_iter(b'[', &line[..limit]) {
        if let Some(h) = head_at(line, i) {
            *hint = i;
            return Some(h);
        }
    }
    None
}

/// Splits an event line into its columns, or `None` if it is not one.
pub fn split_head(line: &[u8]) -> Option<Head<'_>> {
    // The [CPU] column sits within the first ~60 bytes (16-byte comm, pid, TGID column).
    let limit = line.len().min(200);
    for i in memchr::memchr_iter(b'[', &line[..limit]) {
        if let Some(h) = head_at(line, i) {
            return Some(h);
        }
    }
    None
}

fn head_at(line: &[u8], i: usize) -> Option<Head<'_>> {
    let (c, after) = cols_at(line, i)?;
    // EVENT: PAYLOAD (after `trace-cmd report --ts-diff`'s `(+DELTA)`, if there is one)
    let n0 = skip_ts_diff(line, skip_spaces(line, after));
    // the name ends at its colon; a space first means this is no event line
    // (no event's name holds '(': that is a syscall's "sys_foo(arg: 1, ...)")
    let colon = name_end(line, n0)?;
    let name = &line[n0..colon];
    if name.is_empty() || line[colon] != b':' {
        return None;
    }
    let rest = &line[skip_spaces(line, colon + 1)..];
    Some(Head {
        comm: c.comm,
        tid: c.tid,
        tgid: c.tgid,
        cpu: c.cpu,
        flags: c.flags,
        ts: c.ts,
        name,
        rest,
    })
}

/// Past `(+123)`, the time since the previous event that `trace-cmd report --ts-diff` prints
/// after the timestamp.
#[inline]
fn skip_ts_diff(line: &[u8], at: usize) -> usize {
    if line.get(at) != Some(&b'(') || line.get(at + 1) != Some(&b'+') {
        return at;
    }
    let digits = line[at + 2..]
        .iter()
        .take_while(|b| b.is_ascii_digit() || **b == b'.')
        .count();
    match line.get(at + 2 + digits) {
        Some(b')') if digits > 0 => skip_spaces(line, at + 3 + digits),
        _ => at,
    }
}

/// The columns of a line whose `[CPU]` is at `i`, and where the text after the timestamp's
/// colon starts.
#[inline(always)]
fn cols_at(line: &[u8], i: usize) -> Option<(Cols<'_>, usize)> {
    let (cpu, j) = cpu_column(line, i)?;
    // COMM-PID [(TGID)]
    let mut pre = trim_end(&line[..i]);
    let mut tgid = None;
    if pre.last() == Some(&b')') {
        let lp = rfind_byte(pre, b'(')?;
        let inner = trim_start(trim_end(&pre[lp + 1..pre.len() - 1]));
        tgid = if !inner.is_empty() && inner.iter().all(|&b| b == b'-') {
            Some(None)
        } else {
            Some(Some(payload::parse_u64(inner)? as Tid))
        };
        pre = trim_end(&pre[..lp]);
    }
    let dash = rfind_byte(pre, b'-')?;
    let tid = digits_ending(pre, dash + 1)?;
    let tid = Tid::try_from(tid).ok()?;
    let comm = trim_start(&pre[..dash]);
    // [FLAGS] TIMESTAMP:
    let mut k = j + 1;
    if line.get(k) != Some(&b' ') {
        return None;
    }
    k = skip_spaces(line, k);
    let tok_end = find2(line, k, b' ', b' ')?;
    let tok = &line[k..tok_end];
    let (flags, ts_tok, after) = if tok.last() == Some(&b':') && tok.len() > 1 {
        (None, &tok[..tok.len() - 1], tok_end)
    } else {
        if !(3..=6).contains(&tok.len()) {
            return None;
        }
        let k2 = skip_spaces(line, tok_end);
        let e2 = find2(line, k2, b' ', b' ')?;
        let t2 = &line[k2..e2];
        if t2.last() != Some(&b':') {
            return None;
        }
        (Some(tok), &t2[..t2.len() - 1], e2)
    };
    // a whole number is a clock's raw ticks, no time (refused by `other_line`)
    let ts = parse_ts_fraction(ts_tok)?;
    Some((
        Cols {
            comm,
            tid,
            tgid,
            cpu,
            flags,
            ts,
        },
        after,
    ))
}

/// The columns of a line up to its timestamp, and the text after it, when the text is not
/// `EVENT: PAYLOAD` (the slow path: stack-trace, syscall and function tracer lines).
pub fn split_cols(line: &[u8]) -> Option<(Cols<'_>, &[u8])> {
    let limit = line.len().min(200);
    for i in memchr::memchr_iter(b'[', &line[..limit]) {
        if let Some((c, after)) = cols_at(line, i) {
            return Some((c, &line[skip_spaces(line, after)..]));
        }
    }
    None
}

/// The three ftrace text formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// tracefs `trace`: a `#` header.
    Trace,
    /// `trace_pipe`: event lines only.
    Pipe,
    /// `trace-cmd report`: a `cpus=` / `version = ` preamble, or trace-cmd's plugin forms.
    Report,
}

/// Where the sample first shows ftrace text (its first event line, or the header or preamble line
/// that decides before one), and which of the three formats it is. A `# tracer:` header or a
/// trace-cmd preamble line decides at once; otherwise up to 20 event lines are looked at.
pub fn sniff_family(sample: &Sample) -> Option<(usize, Family)> {
    let mut first = None;
    let mut saw_hash_header = false;
    let mut ftrace_lines = 0;
    let mut plugin_form = false;
    for (i, line) in sample.lines().enumerate() {
        if line.starts_with(b"# tracer:") || line.starts_with(b"# entries-in-buffer") {
            return Some((first.unwrap_or(i), Family::Trace));
        }
        if line.starts_with(b"#") {
            saw_hash_header = true;
            continue;
        }
        if line.starts_with(b"cpus=") || line.starts_with(b"version = ") {
            return Some((first.unwrap_or(i), Family::Report));
        }
        let other_shape = || {
            shapes::graph(line).is_some()
                || shapes::latency(line).is_some()
                || split_cols(line).is_some_and(|(_, rest)| {
                    shapes::after_ts(rest, &mut crate::events::Strings::new()).is_some()
                })
        };
        if split_head(line).is_none() && other_shape() {
            // function_graph, latency-format, function tracer lines
            first.get_or_insert(i);
            ftrace_lines += 1;
            if ftrace_lines >= 20 {
                break;
            }
            continue;
        }
        if let Some(h) = split_head(line) {
            first.get_or_insert(i);
            ftrace_lines += 1;
            // trace-cmd prints sched_switch and hrtimer through plugins.
            if (h.name == b"sched_switch" && !h.rest.starts_with(b"prev_comm="))
                || (h.name == b"hrtimer_expire_entry"
                    && memchr::memmem::find(h.rest, b"/0x").is_some())
            {
                plugin_form = true;
            }
            if ftrace_lines >= 20 {
                break;
            }
        }
    }
    let family = if plugin_form {
        Family::Report
    } else if saw_hash_header {
        Family::Trace
    } else {
        Family::Pipe
    };
    first.map(|i| (i, family))
}

/// `CPU:N [LOST M EVENTS]`, `CPU:N [LOST EVENTS]` (tracefs) and `CPU:N [M EVENTS DROPPED]`
/// (trace-cmd) → (cpu, count).
pub fn lost_marker(line: &[u8]) -> Option<(u16, Option<u32>)> {
    let rest = line.strip_prefix(b"CPU:")?;
    let sp = rest.iter().position(|&b| b == b' ')?;
    let cpu = payload::parse_cpu(&rest[..sp])?;
    let tail = trim_end(&rest[sp + 1..]);
    let inner = tail.strip_prefix(b"[")?.strip_suffix(b"]")?;
    if let Some(x) = inner.strip_prefix(b"LOST ") {
        if x == b"EVENTS" {
            return Some((cpu, None));
        }
        let n = x.strip_suffix(b" EVENTS")?;
        return Some((
            cpu,
            Some(payload::parse_u64(n)?.min(u32::MAX as u64) as u32),
        ));
    }
    if inner == b"EVENTS DROPPED" {
        return Some((cpu, None));
    }
    let n = inner.strip_suffix(b" EVENTS DROPPED")?;
    Some((
        cpu,
        Some(payload::parse_u64(n)?.min(u32::MAX as u64) as u32),
    ))
}

impl LineParser for FtraceText {
    fn line(&self, line: &[u8], out: &mut Chunk) -> Result<(), Expected> {
        // (event lines run together are taken one by one in this loop, not by recursion: a
        // line of thousands of heads must not overflow the stack)
        let mut line = line;
        while let Some(at) = one_line(line, out)? {
            merged_first(self, &line[..at], out);
            line = &line[at..];
        }
        Ok(())
    }
}

/// One line, or where a second event line starts inside it (two lines run together) before
/// anything of it is read.
#[inline(always)]
fn one_line(line: &[u8], out: &mut Chunk) -> Result<Option<usize>, Expected> {
    let Some(&first) = line.first() else {
        return Ok(None);
    };
    if first == b'#' {
        return super::header::header_line(line, out).map(|()| None);
    }
    if let Some(h) = split_head_hinted(line, &mut out.cpu_hint) {
        // the exact layouts are read to their end: no second line can hide in them
        if let Some(kind) =
            payload::parse_exact(h.name, h.rest, &mut out.strings, &mut out.hrtimer_name)
        {
            // (as [`event_line`] leaves it: free text may follow only an unmodelled event)
            out.cont_ok = Some(matches!(kind, EventKind::Other { .. }));
            return modelled_event(h, kind, out).map(|()| None);
        }
        if has_byte(h.rest, b']')
            && let Some(at) = shapes::second_head(line)
        {
            return Ok(Some(at));
        }
        return event_line(h, out).map(|()| None);
    }
    other_line(line, out).map(|()| None)
}

/// The first of two event lines run together (the second starts where it ends): read if its
/// fields are whole, else counted as cut.
#[cold]
fn merged_first(p: &FtraceText, first: &[u8], out: &mut Chunk) {
    out.skipped.merged_lines += 1;
    let events = out.events.len();
    if p.line(trim_end(first), out).is_err() || out.events.len() == events {
        out.events.truncate(events);
        out.skipped.merged_cut += 1;
    }
}

/// An event line: its payload parsed, its task noted.
#[inline(always)]
fn event_line(h: Head, out: &mut Chunk) -> Result<(), Expected> {
    let mut kind = payload::parse(h.name, h.rest, &mut out.strings)?;
    // an rq lock taken in an interrupt is no walk's visit: marked (docs/models.md §5.6)
    if let EventKind::Probe { probe, ptr, .. } = &mut kind
        && probe.is_lock()
        && h.flags
            .and_then(|f| f.get(2))
            .is_some_and(|c| b"hsHzZ".contains(c))
    {
        *ptr = 1;
    }
    let kind = match kind {
        EventKind::Other { .. } | EventKind::SchedProcessExec { .. } => {
            match unmodelled_event(&h, kind, out)? {
                Some(k) => k,
                None => return Ok(()),
            }
        }
        k => {
            out.cont_ok = Some(false);
            k
        }
    };
    modelled_event(h, kind, out)
}

/// An event line whose payload was read: its task noted, its event kept.
#[inline(always)]
fn modelled_event(h: Head, kind: EventKind, out: &mut Chunk) -> Result<(), Expected> {
    out.skipped.unknown_tid += u64::from(h.tid == crate::events::TID_UNKNOWN);
    // (the first irq-flags column: `d` interrupts off, `D` interrupts and bottom halves off)
    if let EventKind::RseqUpdate { .. } = kind
        && h.flags
            .and_then(|f| f.first())
            .is_some_and(|c| b"dD".contains(c))
    {
        out.rseq_irqs_off += 1;
    }
    if kind == EventKind::Tick
        && let Some(now) = payload::hrtimer_now(h.rest)
    {
        let off =
            (h.ts.min(i64::MAX as u64) as i64).saturating_sub(now.min(i64::MAX as u64) as i64);
        crate::events::keep_least(&mut out.mono_offset, off);
    }
    let comm = strip_buffer_prefix(h.comm);
    out.note_task(h.cpu, h.tid, comm, h.tgid.flatten());
    out.events.push(Event {
        ts: h.ts,
        tid: h.tid,
        cpu: h.cpu,
        kind,
    });
    Ok(())
}

/// The events cidscope keeps only by name, and exec: the names their payloads give, the
/// tracer's own records (`None`: skipped). Out of line: the hot path is the modelled events.
#[inline(never)]
fn unmodelled_event(
    h: &Head,
    kind: EventKind,
    out: &mut Chunk,
) -> Result<Option<EventKind>, Expected> {
    let kind = match kind {
        EventKind::Other { name } => {
            let n = out.strings.get(name);
            if n.starts_with(b"funcgraph_") || n == b"function" || n.ends_with(b"_stack") {
                match special_event(h, out)? {
                    Some(k) => k,
                    None => return Ok(None),
                }
            } else {
                names_in_payload(h.name, h.rest, out);
                kind
            }
        }
        EventKind::SchedProcessExec { tid, .. } => {
            exec_name(tid, h.rest, out);
            kind
        }
        k => k,
    };
    out.cont_ok = Some(matches!(kind, EventKind::Other { .. }));
    Ok(Some(kind))
}

/// trace-cmd's function tracer, function_graph and stack records: `function: func <-- parent`,
/// `funcgraph_entry: 0.123 us | func();`, `kernel_stack: <stack trace >` (`None`: skipped).
#[cold]
fn special_event(h: &Head, out: &mut Chunk) -> Result<Option<EventKind>, Expected> {
    let n = h.name;
    if n == b"kernel_stack" || n == b"user_stack" {
        out.skipped.stack_traces += 1;
        out.cont_ok = Some(false);
        return Ok(None);
    }
    if n == b"function" {
        let func = h.rest.split(|&b| b == b' ').next().unwrap_or(b"");
        let func = func.split(|&b| b == b'+').next().unwrap_or(func);
        if !func.is_empty() {
            return Ok(Some(EventKind::Function {
                name: out.strings.intern(func),
                duration_ns: u32::MAX,
            }));
        }
    }
    if (n == b"funcgraph_entry" || n == b"funcgraph_exit")
        && let Some(body) = shapes::graph_payload(h.rest)
    {
        return shapes::graph_event(&body, &mut out.strings);
    }
    Ok(Some(EventKind::Other {
        name: out.strings.intern(n),
    }))
}

/// trace-cmd report of several buffers prefixes each line with the buffer's name:
/// `xtextcmd:            sleep-5339  [001] ...` — the comm is what follows it.
#[inline]
fn strip_buffer_prefix(comm: &[u8]) -> &[u8] {
    // (most comms hold no ':' at all: one word test, then the search)
    if !has_byte(comm, b':') {
        return comm;
    }
    buffer_prefix_cut(comm)
}

#[cold]
fn buffer_prefix_cut(comm: &[u8]) -> &[u8] {
    // the first ":  " before any space
    let mut from = 0;
    while let Some(c) = find2(comm, from, b':', b' ') {
        if comm[c] == b' ' {
            return comm;
        }
        if c > 0 && comm[c + 1..].starts_with(b"  ") {
            return trim_start(&comm[c + 1..]);
        }
        from = c + 1;
    }
    comm
}

/// Task names in payloads of events cidscope does not model (wakeups, forks, migrations):
/// kept to name a task the task column shows as `<...>`.
#[inline]
fn names_in_payload(name: &[u8], rest: &[u8], out: &mut Chunk) {
    let (ckey, pkey): (&[u8], &[u8]) = match name {
        b"sched_wakeup"
        | b"sched_waking"
        | b"sched_migrate_task"
        | b"sched_process_exit"
        | b"sched_process_free"
        | b"sched_process_wait"
        | b"sched_stat_runtime" => (b"comm=", b"pid="),
        b"sched_process_fork" => (b"child_comm=", b"child_pid="),
        _ => return,
    };
    let Some(pid) = payload::field(rest, pkey, rest.len()).and_then(payload::parse_u64) else {
        return;
    };
    let Some(comm) = payload::field(rest, ckey, rest.len()) else {
        return;
    };
    let id = out.strings.intern(comm);
    out.names.push((pid as Tid, id));
}

/// sched_process_exec `filename=/usr/bin/foo`: the comm the task gets is its base name.
fn exec_name(tid: Tid, rest: &[u8], out: &mut Chunk) {
    let limit = memchr::memmem::find(rest, b" pid=").unwrap_or(rest.len());
    let Some(f) = rest.get(..limit).and_then(|r| r.strip_prefix(b"filename=")) else {
        return;
    };
    let base = f.rsplit(|&b| b == b'/').next().unwrap_or(f);
    let base = &base[..base.len().min(15)];
    if !base.is_empty() {
        let id = out.strings.intern(base);
        out.names.push((tid, id));
    }
}

/// Every line that is not `COMM-PID [CPU] TIME: EVENT: PAYLOAD` (the slow path).
#[cold]
fn other_line(line: &[u8], out: &mut Chunk) -> Result<(), Expected> {
    if shapes::ticks_timestamp(line) {
        return Err(Expected(TICKS_CLOCK));
    }
    if shapes::is_stack_frame(line) {
        out.skipped.stack_frames += 1;
        return Ok(());
    }
    if let Some((cpu, count)) = lost_marker(line) {
        out.push_lost(cpu, count);
        out.cont_ok = Some(false);
        return Ok(());
    }
    if let Some(n) = line.strip_prefix(b"cpus=") {
        out.ncpus_hint = payload::parse_u64(trim_end(n)).map(|n| n as u32);
        return Ok(());
    }
    // trace-cmd report preamble lines.
    if line.starts_with(b"version = ")
        || (line.starts_with(b"CPU ") && line.ends_with(b" is empty"))
        || line.iter().all(|b| b.is_ascii_whitespace())
    {
        return Ok(());
    }
    // the columns parse, the text after the timestamp is no `EVENT:`
    if let Some((c, rest)) = split_cols(line)
        && let Some(a) = shapes::after_ts(rest, &mut out.strings)
    {
        return after_ts_line(c, a, out);
    }
    if let Some(h) = shapes::latency(line) {
        return event_line(h, out);
    }
    // latency-format with the function tracer or a stack trace: "0us+: func <-parent"
    if let Some((c, after)) = shapes::latency_cols(line)
        && let Some(a) = shapes::after_ts(&line[skip_spaces(line, after)..], &mut out.strings)
    {
        return after_ts_line(c, a, out);
    }
    if shapes::is_graph_rule(line) {
        out.skipped.graph_marks += 1;
        return Ok(());
    }
    if let Some((cpu, comm, tid)) = shapes::graph_switch(line) {
        out.skipped.graph_marks += 1;
        out.graph_task.insert(cpu, tid);
        out.note_task(cpu, tid, comm, None);
        return Ok(());
    }
    if let Some(g) = shapes::graph(line) {
        return graph_line(g, out);
    }
    if let Some(g) = shapes::glued_graph_line(line) {
        // the decoration is lost (counted); the graph line glued to it is read
        out.skipped.graph_marks += 1;
        return graph_line(g, out);
    }
    // free text under an event cidscope does not model: the rest of its message
    match out.cont_ok {
        Some(true) => {
            out.skipped.continuation += 1;
            Ok(())
        }
        None => {
            // the chunk's first line: the previous chunk's last event decides (at the stitch)
            out.leading_cont_n += 1;
            if out.leading_cont.is_none() {
                out.leading_cont = Some((
                    out.lines,
                    crate::sources::text::chunk::BadLine::Unparsed {
                        expected: Expected(EXPECTED_LINE),
                        found: None,
                        excerpt: crate::sources::error::excerpt(line, 120),
                    },
                ));
            }
            Ok(())
        }
        Some(false) => Err(Expected(EXPECTED_LINE)),
    }
}

/// A line whose columns parsed and whose text after the time is no `EVENT:` (see
/// [`shapes::after_ts`]).
fn after_ts_line(c: Cols, a: shapes::AfterTs, out: &mut Chunk) -> Result<(), Expected> {
    match a {
        shapes::AfterTs::Stack => {
            out.skipped.stack_traces += 1;
            out.cont_ok = Some(false);
        }
        shapes::AfterTs::Event(kind) => {
            out.cont_ok = Some(true);
            out.skipped.unknown_tid += u64::from(c.tid == crate::events::TID_UNKNOWN);
            out.note_task(c.cpu, c.tid, strip_buffer_prefix(c.comm), c.tgid.flatten());
            out.events.push(Event {
                ts: c.ts,
                tid: c.tid,
                cpu: c.cpu,
                kind,
            });
        }
    }
    Ok(())
}

/// A whole-number TIMESTAMP column: the trace clock counts ticks.
pub const TICKS_CLOCK: &str = "a TIMESTAMP in seconds (SECONDS.FRACTION), but the column is a whole number: the trace clock counts ticks (trace_clock counter, x86-tsc or uptime), no time; record with the local clock instead: `echo local > /sys/kernel/tracing/trace_clock` (`trace-cmd record -C local`)";

pub const EXPECTED_LINE: &str = "an ftrace event line \"COMM-PID [CPU] TIMESTAMP: EVENT: FIELDS\"";

/// A function_graph line of tracefs text.
fn graph_line(g: shapes::GraphLine, out: &mut Chunk) -> Result<(), Expected> {
    if g.body == shapes::GraphBody::IrqMark {
        out.skipped.graph_marks += 1;
        return Ok(());
    }
    let Some(ts) = g.ts else {
        out.skipped.graph_untimed += 1;
        return Ok(());
    };
    let Some(kind) = shapes::graph_event(&g.body, &mut out.strings)? else {
        return Ok(());
    };
    let tid = match g.task {
        Some((comm, tid)) => {
            out.note_task(g.cpu, tid, comm, None);
            tid
        }
        None => match out.graph_task.get(&g.cpu) {
            Some(&t) => t,
            None => {
                // the task of this CPU is the one a previous chunk's `=>` line named
                out.graph_unknown.push(out.events.len() as u32);
                crate::events::TID_UNKNOWN
            }
        },
    };
    out.cont_ok = Some(matches!(kind, EventKind::Other { .. }));
    out.events.push(Event {
        ts,
        tid,
        cpu: g.cpu,
        kind,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::prop;

    #[test]
    fn head_plain_flags_tgid() {
        let h = split_head(b"            bash-1385    [000] .....  1623.480444: rseq_update: cpu_id=0 node_id=0 mm_cid=0").unwrap();
        assert_eq!(
            (h.comm, h.tid, h.cpu, h.ts),
            (&b"bash"[..], 1385, 0, 1_623_480_444_000)
        );
        assert_eq!(h.flags, Some(&b"....."[..]));
        assert_eq!(h.name, b"rseq_update");
        assert_eq!(h.rest, b"cpu_id=0 node_id=0 mm_cid=0");
        assert_eq!(h.tgid, None);

        let h = split_head(b"          <idle>-0       (-------) [000] d.h1.  1639.196281: hrtimer_expire_entry: x=1").unwrap();
        assert_eq!((h.comm, h.tid, h.tgid), (&b"<idle>"[..], 0, Some(None)));
        let h = split_head(
            b"            bash-1385    (   1385) [001] .....  1639.196015: rseq_update: cpu_id=1",
        )
        .unwrap();
        assert_eq!(h.tgid, Some(Some(1385)));
    }

    #[test]
    fn head_trace_cmd_report_and_odd_comms() {
        let h = split_head(b"       trace-cmd-1472  [000]  1622.415299: sched_switch:         trace-cmd:1472 [120] S ==> trace-cmd:1479 [120]").unwrap();
        assert_eq!((h.comm, h.tid, h.flags), (&b"trace-cmd"[..], 1472, None));
        assert_eq!(h.rest, b"trace-cmd:1472 [120] S ==> trace-cmd:1479 [120]");
        let h = split_head(b"      [001] fake-3061    [001] .....  1637.128447: rseq_update: cpu_id=1 node_id=0 mm_cid=0").unwrap();
        assert_eq!((h.comm, h.tid, h.cpu), (&b"[001] fake"[..], 3061, 1));
        let h =
            split_head(b"  pid=7 cpu_id=9-3062    [001] .....  1637.128578: rseq_update: cpu_id=1")
                .unwrap();
        assert_eq!((h.comm, h.tid), (&b"pid=7 cpu_id=9"[..], 3062));
        let h = split_head(b"   my worker-1-1234 [000] .....  1.000001: x: y").unwrap();
        assert_eq!((h.comm, h.tid), (&b"my worker-1"[..], 1234));
        let h = split_head(b"bash-14432   [000] d..2.  1.5: sched_switch: a").unwrap();
        assert_eq!(h.tid, 14432);
        assert!(split_head(b"hello world").is_none());
        assert!(split_head(b"x-1 [0] ....").is_none());
    }

    proptest::proptest! {
        #[test]
        fn strip_buffer_prefix_is_the_first_colon_pair_before_a_space(s in proptest::collection::vec(prop::sample::select(vec![b' ', b':', b'a']), 0..24)) {
            let want: &[u8] = match memchr::memmem::find(&s, b":  ") {
                Some(c) if c > 0 && !s[..c].contains(&b' ') => trim_start(&s[c + 1..]),
                _ => &s,
            };
            proptest::prop_assert_eq!(strip_buffer_prefix(&s), want);
        }
    }

    /// What a load of `text` holds: (name, tid, ts, duration) per event.
    fn events_of(text: &str) -> Vec<(String, Tid, u64, Option<u32>)> {
        let t = crate::sources::load_bytes("t", text.as_bytes(), &Default::default())
            .unwrap_or_else(|e| panic!("{e}"));
        t.events
            .iter()
            .map(|e| {
                let d = match e.kind {
                    EventKind::Function { duration_ns, .. } if duration_ns != u32::MAX => {
                        Some(duration_ns)
                    }
                    _ => None,
                };
                (e.kind.name(&t.strings).to_string(), e.tid, e.ts, d)
            })
            .collect()
    }

    // Lines written from the kernel's print format (trace_functions_graph.c, with
    // funcgraph-abstime and funcgraph-proc) and trace-cmd's function_graph plugin: no function
    // tracer on the box the corpus was made on.
    #[test]
    fn function_graph_calls_and_the_events_in_its_comments() {
        let ev = events_of(concat!(
            "# tracer: function_graph\n",
            "#\n",
            "#     TIME        CPU  TASK/PID         DURATION                  FUNCTION CALLS\n",
            "#      |          |     |    |           |   |                     |   |   |   |\n",
            "  100.000010 |   1)  kworker-55    |               |  task_mm_cid_work() {\n",
            "  100.000011 |   1)  kworker-55    |   0.350 us    |    mm_cid_get();\n",
            "  100.000015 |   1)  kworker-55    |   5.012 us    |  } /* task_mm_cid_work */\n",
            " ------------------------------------------\n",
            "   1)  kworker-55    =>   worker-77   \n",
            " ------------------------------------------\n",
            "\n",
            "  100.000020 |   1)   worker-77    |               |  /* rseq_update: cpu_id=1 node_id=0 mm_cid=0 */\n",
            "  100.000030 |   1)   worker-77    |   ==========> |\n",
            "  100.000031 |   1)   worker-77    | + 12.500 us   |  task_mm_cid_work();\n",
        ));
        assert_eq!(
            ev,
            vec![
                ("task_mm_cid_work".into(), 55, 100_000_010_000, None),
                ("mm_cid_get".into(), 55, 100_000_011_000, Some(350)),
                ("funcgraph_exit".into(), 55, 100_000_015_000, Some(5_012)),
                ("rseq_update".into(), 77, 100_000_020_000, None),
                ("task_mm_cid_work".into(), 77, 100_000_031_000, Some(12_500)),
            ]
        );
        // without the task column: the `=>` blocks name the CPU's task, across chunks too
        let text = concat!(
            " 100.000001 |   0)               |  schedule() {\n",
            " ------------------------------------------\n",
            " 0)  bash-10  =>  hog-11  \n",
            " ------------------------------------------\n",
            " 100.000002 |   0)               |  /* rseq_update: cpu_id=0 node_id=0 mm_cid=1 */\n",
            " 100.000003 |   0)   1.000 us    |  }\n",
        );
        let ev = events_of(text);
        let tids: Vec<Tid> = ev.iter().map(|e| e.1).collect();
        assert_eq!(tids, vec![crate::events::TID_UNKNOWN, 11, 11]);
        for seg in 1..text.len() {
            let opts = crate::sources::LoadOptions {
                segment_bytes: Some(seg),
                threads: Some(2),
                ..Default::default()
            };
            let t = crate::sources::load_bytes("t", text.as_bytes(), &opts).unwrap();
            let got: Vec<Tid> = t.events.iter().map(|e| e.tid).collect();
            assert_eq!(got, tids, "segments of {seg} bytes");
        }
        // trace-cmd report
        let ev = events_of(concat!(
            "cpus=2\n",
            "  kworker/1:2-123   [001]  1234.567890: funcgraph_entry:                   |  task_mm_cid_work() {\n",
            "  kworker/1:2-123   [001]  1234.567891: funcgraph_entry:        0.350 us   |    mm_cid_get();\n",
            "  kworker/1:2-123   [001]  1234.567895: funcgraph_exit:         5.012 us   |  }\n",
            "  kworker/1:2-123   [001]  1234.567896: function:             task_mm_cid_work <-- process_one_work\n",
            "  kworker/1:2-123   [001]  1234.567897: kernel_stack:         <stack trace >\n",
            "=> __schedule (ffffffff81a0c8d0)\n",
        ));
        let names: Vec<&str> = ev.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "task_mm_cid_work",
                "mm_cid_get",
                "funcgraph_exit",
                "task_mm_cid_work"
            ]
        );
        assert_eq!(ev[1].3, Some(350));
        assert_eq!(ev[2].3, Some(5_012));
    }

    #[test]
    fn continuation_lines_follow_only_free_text_events() {
        let ok = concat!(
            "  a-1 [000] ..... 1.000001: tracing_mark_write: first line\n",
            "second line\n",
            "  a-1 [000] ..... 1.000002: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n",
        );
        assert_eq!(events_of(ok).len(), 2);
        // at every chunk boundary
        for seg in 1..ok.len() {
            let opts = crate::sources::LoadOptions {
                segment_bytes: Some(seg),
                threads: Some(2),
                ..Default::default()
            };
            let t = crate::sources::load_bytes("t", ok.as_bytes(), &opts).unwrap();
            assert_eq!(t.events.len(), 2, "segments of {seg} bytes");
        }
        let bad = concat!(
            "  a-1 [000] ..... 1.000002: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n",
            "not a line\n",
        );
        for seg in [1, 5, 80, 1000] {
            let opts = crate::sources::LoadOptions {
                segment_bytes: Some(seg),
                threads: Some(2),
                ..Default::default()
            };
            let e = crate::sources::load_bytes("t", bad.as_bytes(), &opts).unwrap_err();
            assert_eq!(e.location, crate::sources::Location::Line(2), "{seg}: {e}");
        }
    }

    #[test]
    fn unknown_names_take_the_name_the_file_gives_elsewhere() {
        let t = crate::sources::load_bytes(
            "t",
            concat!(
                "           <...>-77    [001] ..... 1.000001: rseq_update: cpu_id=1 node_id=0 mm_cid=0\n",
                "            bash-10    [001] d..2. 1.000002: sched_switch: prev_comm=bash prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=worker next_pid=77 next_prio=120\n",
                "           <...>-88    [000] ..... 1.000003: rseq_update: cpu_id=0 node_id=0 mm_cid=1\n",
                "           <...>-88    [000] ..... 1.000004: sched_process_exec: filename=/usr/bin/hog pid=88 old_pid=88\n",
            )
            .as_bytes(),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(t.comm_of(77), "worker");
        assert_eq!(t.comm_of(88), "hog");
    }

    #[test]
    fn lost_markers() {
        assert_eq!(
            lost_marker(b"CPU:1 [LOST 477 EVENTS]"),
            Some((1, Some(477)))
        );
        assert_eq!(lost_marker(b"CPU:0 [LOST EVENTS]"), Some((0, None)));
        assert_eq!(
            lost_marker(b"CPU:3 [12 EVENTS DROPPED]"),
            Some((3, Some(12)))
        );
        assert_eq!(lost_marker(b"CPU:3 [EVENTS DROPPED]"), Some((3, None)));
        assert_eq!(lost_marker(b"CPU:x [LOST 1 EVENTS]"), None);
    }

    /// `rseq_update` lines whose irq-flags column says interrupts were off are counted
    /// (6.19+'s fast path: `Trace::rseq_irqs_off`), in the tracefs layout and after the
    /// fast paths of the exact payloads alike; other events with interrupts off, and lines
    /// without the column, are not.
    #[test]
    fn rseq_updates_with_interrupts_off_are_counted() {
        let lines = [
            "            init-1     [000] d....     1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0",
            "            init-1     [000] D....     1.000001: rseq_update: cpu_id=0 node_id=0 mm_cid=1",
            "            init-1     [000] .....     1.000002: rseq_update: cpu_id=0 node_id=0 mm_cid=0",
            "            init-1     [000] d..2.     1.000003: sched_switch: prev_comm=init prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120",
            "            init-1     [000]     1.000004: rseq_update: cpu_id=0 node_id=0 mm_cid=0",
            "            init-1     [000] dN...     1.000005: rseq_update: cpu_id=0 node_id=0 mm_cid=0",
        ];
        let text = format!("# tracer: nop\n#\n{}\n", lines.join("\n"));
        let t = crate::sources::load_bytes("t.txt", text.as_bytes(), &Default::default())
            .expect("the lines load");
        assert_eq!(t.rseq_irqs_off, 3);
        assert_eq!(
            crate::model::kernel::family_shown(&t).map(|f| f.family),
            Some("6.19+")
        );
        let on = text.replace("] d", "] .").replace("] D", "] .");
        let t = crate::sources::load_bytes("t.txt", on.as_bytes(), &Default::default())
            .expect("the lines load");
        assert_eq!(t.rseq_irqs_off, 0);
        assert_eq!(crate::model::kernel::family_shown(&t), None);
    }

    /// A `cidscope vm --record` capture names its kernel; the trace carries it for the model
    /// choice.
    #[test]
    fn the_vm_record_header_names_the_kernel() {
        let text = "# cidscope-vm: kernel_version=6.18.15+deb13-cloud-amd64 hz=250 cpus=4 workload=workers mode=tracefs accel=tcg hz_source=guest%20/proc/config.gz\n# tracer: nop\n#\n            init-1     [000] .....     1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n";
        let t = crate::sources::load_bytes("vm.txt", text.as_bytes(), &Default::default())
            .expect("a vm record");
        assert_eq!(
            t.kernel_release.as_deref(),
            Some("6.18.15+deb13-cloud-amd64")
        );
        assert_eq!(t.kernel_hz, Some(250));
        assert_eq!(t.kernel_scan_batch, None, "a stock kernel");
        // the seed-000 kernel's header names its batch size
        let seed = text.replace("hz=250 ", "hz=250 scan_batch=8 ");
        let t = crate::sources::load_bytes("seed.txt", seed.as_bytes(), &Default::default())
            .expect("a vm record of the seed kernel");
        assert_eq!((t.kernel_hz, t.kernel_scan_batch), (Some(250), Some(8)));
        assert_eq!(
            super::super::header::percent_decoded("a%2Bb"),
            Some("a+b".into())
        );
        assert_eq!(super::super::header::percent_decoded("a%2"), None);
        let t = crate::sources::load_bytes("plain.txt", b"# tracer: nop\n", &Default::default())
            .expect("a header");
        assert_eq!((t.kernel_release, t.kernel_hz), (None, None));
    }

    /// The ticks' `now=` (CLOCK_MONOTONIC) against their record times: the least difference,
    /// in the tracefs and trace-cmd layouts alike; other hrtimers do not count.
    #[test]
    fn the_ticks_give_the_monotonic_clocks_offset() {
        let text = "\
          <idle>-0     [001] d.h1.    42.438480: hrtimer_expire_entry: hrtimer=000000008973019c function=tick_nohz_handler now=33501711214
          <idle>-0     [002] d.h1.    42.438500: hrtimer_expire_entry: hrtimer=0xffff888627d1c6f8 now=33501751000 function=tick_nohz_handler/0x0
          <idle>-0     [003] d.h1.    42.438600: hrtimer_expire_entry: hrtimer=00000000e79cddfd function=hrtimer_wakeup now=40000000000
";
        let t = crate::sources::load_bytes("ticks.txt", text.as_bytes(), &Default::default())
            .expect("ticks");
        // the trace-cmd line's difference (8.936749 s) is below the first line's (8.936769)
        assert_eq!(t.mono_offset, Some(42_438_500_000 - 33_501_751_000));
        let t = crate::sources::load_bytes("none.txt", b"# tracer: nop\n", &Default::default())
            .expect("a header");
        assert_eq!(t.mono_offset, None);
    }
}
