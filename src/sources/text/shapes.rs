//! The ftrace text lines that are not `COMM-PID [CPU] TIME: EVENT: PAYLOAD`, read on the slow
//! path once that shape failed: what follows the timestamp on stack-trace, syscall and
//! function tracer lines; `options/latency-format` lines; function_graph tracer lines (the
//! tracefs columns and trace-cmd's `funcgraph_entry` / `funcgraph_exit` payloads).

use crate::events::{EventKind, Strings, Tid};
use crate::sources::text::columns::{Cols, Head};
use crate::sources::text::payload;
use crate::sources::text::scan::{skip_spaces, trim_end, trim_start};

/// What the text after a line's timestamp is, when it is not `EVENT: PAYLOAD`.
#[derive(Debug, PartialEq, Eq)]
pub enum AfterTs {
    /// `<stack trace>` / `<user stack trace>` (`options/stacktrace`, `userstacktrace`).
    Stack,
    /// An event without a label: `sys_foo(args)` (syscalls:sys_enter_foo), `sys_foo -> 0x0`
    /// (sys_exit_foo), `func <-parent` (the function tracer).
    Event(EventKind),
}

/// Reads the text after the timestamp of a line whose head parsed.
pub fn after_ts(rest: &[u8], strings: &mut Strings) -> Option<AfterTs> {
    let rest = trim_end(rest);
    if rest == b"<stack trace>" || rest == b"<user stack trace>" {
        return Some(AfterTs::Stack);
    }
    let word_end = rest
        .iter()
        .position(|&b| b == b' ' || b == b'(')
        .unwrap_or(rest.len());
    let word = &rest[..word_end];
    if word.is_empty() || !word.iter().all(|&b| is_symbol_byte(b) || b == b'.') {
        return None;
    }
    if let Some(sys) = word.strip_prefix(b"sys_") {
        // sys_enter_*: "sys_write(fd: 1, buf: 0x.., count: 5)"
        if rest.get(word_end) == Some(&b'(') && rest.last() == Some(&b')') {
            return Some(AfterTs::Event(EventKind::Other {
                name: intern_joined(strings, b"sys_enter_", sys),
            }));
        }
        // sys_exit_*: "sys_write -> 0x5"
        if let Some(ret) = rest[word_end..].strip_prefix(b" -> ")
            && (payload::parse_hex(ret).is_some() || payload::parse_i64(ret).is_some())
        {
            return Some(AfterTs::Event(EventKind::Other {
                name: intern_joined(strings, b"sys_exit_", sys),
            }));
        }
    }
    // the function tracer: "do_sys_open <-do_syscall_64", with options/sym-offset
    // "do_sys_open+0x0/0x200 <-...", with sym-addr "do_sys_open <ffffffff81234567> <-..."
    let after = trim_start(&rest[word_end..]);
    let after = match after.strip_prefix(b"<") {
        Some(a) if !a.starts_with(b"-") => trim_start(&a[a.iter().position(|&b| b == b'>')? + 1..]),
        _ => after,
    };
    if after.starts_with(b"<-") {
        let func = word.split(|&b| b == b'+').next().unwrap_or(word);
        return Some(AfterTs::Event(function(strings, func, None)));
    }
    None
}

fn is_symbol_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'+' || b == b'/' || b == b'$'
}

fn intern_joined(strings: &mut Strings, a: &[u8], b: &[u8]) -> crate::events::StrId {
    let mut buf = [0u8; 96];
    let n = (a.len() + b.len()).min(buf.len());
    let (x, y) = buf.split_at_mut(a.len().min(n));
    x.copy_from_slice(&a[..x.len()]);
    let m = n - x.len();
    y[..m].copy_from_slice(&b[..m]);
    strings.intern(&buf[..n])
}

/// A call of `func`, with its duration in µs as printed (`0.123`) when known.
fn function(strings: &mut Strings, func: &[u8], us: Option<u64>) -> EventKind {
    EventKind::Function {
        name: strings.intern(func),
        duration_ns: us.map_or(u32::MAX, |ns| ns.min(u32::MAX as u64 - 1) as u32),
    }
}

/// ` => function` (tracefs) or `=> function (ffffffff81234567)` (trace-cmd): a frame of the
/// stack printed under an event.
pub fn is_stack_frame(line: &[u8]) -> bool {
    trim_start(line).starts_with(b"=> ") || trim_start(line) == b"=>"
}

/// An `options/latency-format` line:
/// `    bash-4859      0d..2. 9920909729us+: sched_switch: prev_comm=...` — the comm in 8
/// columns, `-`, the pid, the CPU glued to the irq-flags, the time in µs with a delay mark
/// (or in seconds, `1622.415299:`, as `trace-cmd report -l` prints it);
/// what follows the time's colon is an event (`name: payload`), or a function tracer's or
/// stack trace's text (see [`after_ts`]).
pub fn latency(line: &[u8]) -> Option<Head<'_>> {
    let (c, after) = latency_cols(line)?;
    let n0 = skip_spaces(line, after);
    let colon = n0 + line[n0..].iter().position(|&b| b == b':' || b == b' ')?;
    if line[colon] != b':' || colon == n0 {
        return None;
    }
    Some(Head {
        comm: c.comm,
        tid: c.tid,
        tgid: None,
        cpu: c.cpu,
        flags: c.flags,
        ts: c.ts,
        name: &line[n0..colon],
        rest: &line[skip_spaces(line, colon + 1)..],
    })
}

/// The columns of a latency-format line, and where the text after the time's colon starts.
pub fn latency_cols(line: &[u8]) -> Option<(Cols<'_>, usize)> {
    if line.get(8) != Some(&b'-') {
        return None;
    }
    let comm = trim_start(&line[..8]);
    let mut i = 9;
    let p0 = i;
    while line.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let tid = Tid::try_from(payload::parse_u64(&line[p0..i])?).ok()?;
    i = skip_spaces(line, i);
    let c0 = i;
    while line.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let cpu = payload::parse_cpu(&line[c0..i])?;
    let f0 = i;
    while line.get(i).is_some_and(|&b| b != b' ') {
        i += 1;
    }
    let flags = &line[f0..i];
    if !(3..=6).contains(&flags.len()) {
        return None;
    }
    i = skip_spaces(line, i);
    let t0 = i;
    while line.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let (ts, colon) = if line.get(i) == Some(&b'.') {
        // `trace-cmd report -l`: the same columns, the time in seconds
        let colon = i + line[i..].iter().position(|&b| b == b':')?;
        let ts = crate::sources::text::scan::parse_ts_fraction(&line[t0..colon])?;
        (ts, colon)
    } else {
        let us = payload::parse_u64(&line[t0..i])?;
        if line[i..].starts_with(b"us") {
            i += 2;
            // the delay mark: ' ', '+', '!', '#', '*', '@', '$'
            if line.get(i).is_some_and(|&b| b" +!#*@$".contains(&b)) {
                i += 1;
            }
        }
        if line.get(i) != Some(&b':') {
            return None;
        }
        (us.checked_mul(1000)?, i)
    };
    Some((
        Cols {
            comm,
            tid,
            tgid: None,
            cpu,
            flags: Some(flags),
            ts,
        },
        colon + 1,
    ))
}

/// What a function_graph line's function column holds.
#[derive(Debug, PartialEq, Eq)]
pub enum GraphBody<'a> {
    /// `func() {` (its duration comes on its `}`) or the leaf `func();` with its duration.
    Entry { func: &'a [u8], us_ns: Option<u64> },
    /// `}` or `} /* func */`, with the duration of the call it closes.
    Exit { us_ns: Option<u64> },
    /// `/* rseq_update: cpu_id=0 ... */`: an event (or a trace_printk message) in the graph.
    Comment(&'a [u8]),
    /// `==========>` / `<==========`: entering or leaving an interrupt.
    IrqMark,
}

/// A tracefs function_graph line.
#[derive(Debug, PartialEq, Eq)]
pub struct GraphLine<'a> {
    /// With `options/funcgraph-abstime`.
    pub ts: Option<u64>,
    pub cpu: u16,
    /// With `options/funcgraph-proc`: comm and pid.
    pub task: Option<(&'a [u8], Tid)>,
    pub body: GraphBody<'a>,
}

/// ` 0)  platfor-3210  =>  vmstat-2854  `: the CPU's task changed (a decoration the tracer
/// prints between the calls of two tasks) → (cpu, comm, pid of the new task).
pub fn graph_switch(line: &[u8]) -> Option<(u16, &[u8], Tid)> {
    let (cpu, rest) = graph_cpu(line)?;
    let arrow = memchr::memmem::find(rest, b" => ")?;
    let (comm, tid) = comm_pid(trim_start(trim_end(&rest[arrow + 4..])))?;
    comm_pid(trim_start(trim_end(&rest[..arrow])))?;
    Some((cpu, comm, tid))
}

/// ` 8)  cw-peri-153   =>   12.475324 |  4) ... |  /* ... */`: a switch decoration cut after its
/// arrow (trace_pipe lost the new task's name between two reads) with the next graph line glued
/// on: → that graph line.
pub fn glued_graph_line(line: &[u8]) -> Option<GraphLine<'_>> {
    let (_, rest) = graph_cpu(line)?;
    let arrow = memchr::memmem::find(rest, b" => ")?;
    comm_pid(trim_start(trim_end(&rest[..arrow])))?;
    graph(&rest[arrow + 4..])
}

/// ` ------------------------------------------`: the rule around a task switch block.
pub fn is_graph_rule(line: &[u8]) -> bool {
    let t = trim_start(trim_end(line));
    t.len() >= 20 && t.iter().all(|&b| b == b'-')
}

/// `  N) rest` (after an optional `ABSTIME |`) → (cpu, rest).
fn graph_cpu(line: &[u8]) -> Option<(u16, &[u8])> {
    let t = trim_start(line);
    let close = t.iter().take(8).position(|&b| b == b')')?;
    let cpu = payload::parse_cpu(trim_start(&t[..close]))?;
    Some((cpu, &t[close + 1..]))
}

/// `comm-pid` → (comm, pid).
fn comm_pid(s: &[u8]) -> Option<(&[u8], Tid)> {
    let dash = s.iter().rposition(|&b| b == b'-')?;
    let tid = Tid::try_from(payload::parse_u64(&s[dash + 1..])?).ok()?;
    Some((&s[..dash], tid))
}

/// Reads a function_graph line of tracefs `trace`:
/// `[ 1234.567890 |]   0)  [bash-1234    |]  [+ ]0.123 us    |  func();`
pub fn graph(line: &[u8]) -> Option<GraphLine<'_>> {
    let mut rest = line;
    let mut ts = None;
    let t = trim_start(line);
    if t.first().is_some_and(u8::is_ascii_digit) {
        let bar = t.iter().position(|&b| b == b'|')?;
        let tok = trim_end(&t[..bar]);
        // an ABSTIME column (or the REL TIME `12 us` of latency-format), not the CPU's "0)"
        if !tok.contains(&b')') {
            ts = Some(match tok.strip_suffix(b" us") {
                Some(us) => payload::parse_u64(trim_end(us))?.checked_mul(1000)?,
                None => crate::sources::text::scan::parse_ts(tok)?,
            });
            rest = &t[bar + 1..];
        }
    }
    let (cpu, mut rest) = graph_cpu(rest)?;
    // [COMM-PID |] [FLAGS |] DURATION | BODY
    let mut task = None;
    let mut bar = rest.iter().position(|&b| b == b'|')?;
    let seg = trim_start(trim_end(&rest[..bar]));
    if let Some(cp) = comm_pid(seg).filter(|_| !looks_like_duration(seg)) {
        task = Some(cp);
        rest = &rest[bar + 1..];
        bar = rest.iter().position(|&b| b == b'|')?;
    }
    let mut dur = trim_start(trim_end(&rest[..bar]));
    // funcgraph with the irq-flags column (latency-format): "d..1" before the duration
    if dur.len() <= 6
        && !dur.is_empty()
        && dur
            .iter()
            .all(|&b| b".dDnNhHsSbBzZX0123456789".contains(&b))
        && !dur.contains(&b' ')
        && !dur.iter().all(u8::is_ascii_digit)
    {
        rest = &rest[bar + 1..];
        bar = rest.iter().position(|&b| b == b'|')?;
        dur = trim_start(trim_end(&rest[..bar]));
    }
    if dur == b"==========>" || dur == b"<==========" {
        return Some(GraphLine {
            ts,
            cpu,
            task,
            body: GraphBody::IrqMark,
        });
    }
    let us_ns = duration(dur)?;
    let body = graph_body(&rest[bar + 1..], us_ns)?;
    Some(GraphLine {
        ts,
        cpu,
        task,
        body,
    })
}

fn looks_like_duration(s: &[u8]) -> bool {
    s.ends_with(b" us") || s.ends_with(b"us")
}

/// `` (none), `0.123 us`, `+ 12.345 us`, `! 123.456 us`, `# 1234.567 us`, `* ...`, `@ ...`,
/// `$ ...` → ns; `Some(None)` when the column is blank; `None` when it is not a duration.
fn duration(s: &[u8]) -> Option<Option<u64>> {
    let s = trim_start(s);
    if s.is_empty() {
        return Some(None);
    }
    let s = match s.first() {
        Some(b'+' | b'!' | b'#' | b'*' | b'@' | b'$') => trim_start(&s[1..]),
        _ => s,
    };
    let num = trim_end(s.strip_suffix(b"us")?);
    // (a unit without its number: a line the tracer printed torn, seen at 4 vCPUs under TCG
    // with `funcgraph-abstime` and `funcgraph-proc`; the call's duration is not known)
    if num.is_empty() {
        return Some(None);
    }
    let ns = crate::sources::text::scan::parse_ts(num)?;
    // parse_ts reads seconds: µs are a thousandth of that
    Some(Some(ns / 1_000_000))
}

/// The function column: `func() {`, `func(args) {`, `func();`, `}`, `} /* func */`, `/* text */`.
fn graph_body(s: &[u8], us_ns: Option<u64>) -> Option<GraphBody<'_>> {
    let s = trim_start(trim_end(s));
    if s == b"}" || s.starts_with(b"} /*") || s.starts_with(b"} ;") {
        return Some(GraphBody::Exit { us_ns });
    }
    if let Some(c) = s.strip_prefix(b"/*") {
        let c = c.strip_suffix(b"*/").unwrap_or(c);
        return Some(GraphBody::Comment(trim_start(trim_end(c))));
    }
    let paren = s.iter().position(|&b| b == b'(')?;
    let func = &s[..paren];
    if func.is_empty() || !func.iter().all(|&b| is_symbol_byte(b) || b == b'.') {
        return None;
    }
    if s.ends_with(b"{") {
        return Some(GraphBody::Entry { func, us_ns: None });
    }
    // a leaf, with funcgraph-retval "func(); /* = 0x0 */"
    if s.ends_with(b";") || memchr::memmem::find(s, b"); /*").is_some() {
        return Some(GraphBody::Entry { func, us_ns });
    }
    None
}

/// trace-cmd report's `funcgraph_entry:` / `funcgraph_exit:` payload: `[mark] DURATION |  BODY`.
pub fn graph_payload(rest: &[u8]) -> Option<GraphBody<'_>> {
    let bar = rest.iter().position(|&b| b == b'|')?;
    let us_ns = duration(trim_end(&rest[..bar]))?;
    graph_body(&rest[bar + 1..], us_ns)
}

/// The event a function_graph line stands for (a comment is an event of its own: parsed by
/// its name), or `None` for an exit.
pub fn graph_event(
    body: &GraphBody,
    strings: &mut Strings,
) -> Result<Option<EventKind>, crate::sources::text::chunk::Expected> {
    Ok(match *body {
        GraphBody::Entry { func, us_ns } => Some(function(strings, func, us_ns)),
        // a `Function` named `funcgraph_exit`: counted by that name, with the duration of the
        // call it closes (the `func() {` entry had none)
        GraphBody::Exit { us_ns } => Some(function(strings, b"funcgraph_exit", us_ns)),
        GraphBody::Comment(c) => {
            // "rseq_update: cpu_id=0 node_id=0 mm_cid=0", or a trace_printk message
            let name_end = c.iter().position(|&b| b == b':' || b == b' ');
            match name_end {
                Some(e) if c[e] == b':' && e > 0 => {
                    Some(payload::parse(&c[..e], trim_start(&c[e + 1..]), strings)?)
                }
                _ => Some(EventKind::Other {
                    name: strings.intern(b"funcgraph_comment"),
                }),
            }
        }
        GraphBody::IrqMark => None,
    })
}

/// An event line whose TIMESTAMP column is a whole number (`bash-1 [000] ..... 123456789:`):
/// ftrace prints a clock that is no time (counter, x86-tsc, uptime) as its raw ticks, so the
/// line's time cannot be read. The column comes after `[CPU]` and the optional flags.
pub fn ticks_timestamp(line: &[u8]) -> bool {
    let Some(cpu_end) = line.iter().position(|&b| b == b']') else {
        return false;
    };
    line[cpu_end + 1..]
        .split(|&b| b == b' ')
        .filter(|t| !t.is_empty())
        .take(2)
        .any(|t| {
            t.len() > 1 && t.ends_with(b":") && t[..t.len() - 1].iter().all(u8::is_ascii_digit)
        })
}

/// Where a second event line starts inside `line` (two lines run together: the first one's
/// end and newline lost), by its `[CPU] [FLAGS] SECONDS.FRACTION:` columns after the first's;
/// the start is its `COMM-PID` token (and `(TGID)` column) before the `[`.
pub fn second_head(line: &[u8]) -> Option<usize> {
    let mut heads = memchr::memchr_iter(b']', line).filter(|&close| head_after(line, close + 1));
    let _first = heads.next()?;
    let close = heads.next()?;
    let open = line[..close].iter().rposition(|&b| b == b'[')?;
    let mut k = open;
    while k > 0 && line[k - 1] == b' ' {
        k -= 1;
    }
    if k > 0 && line[k - 1] == b')' {
        k = line[..k].iter().rposition(|&b| b == b'(')?;
        while k > 0 && line[k - 1] == b' ' {
            k -= 1;
        }
    }
    let start = line[..k]
        .iter()
        .rposition(|&b| b == b' ')
        .map_or(0, |p| p + 1);
    // COMM-PID: a dash and digits, and something before it
    let tok = &line[start..k];
    let dash = tok.iter().rposition(|&b| b == b'-')?;
    (start > 0 && dash + 1 < tok.len() && tok[dash + 1..].iter().all(u8::is_ascii_digit))
        .then_some(start)
}

/// After a `]` at `at`: optional flags, then a `SECONDS.FRACTION:` token.
fn head_after(line: &[u8], at: usize) -> bool {
    let time = |t: &[u8]| {
        t.len() > 2
            && t.ends_with(b":")
            && t.contains(&b'.')
            && t[..t.len() - 1]
                .iter()
                .all(|&c| c.is_ascii_digit() || c == b'.')
    };
    let mut toks = line[at..].split(|&b| b == b' ').filter(|t| !t.is_empty());
    match toks.next() {
        Some(t) if time(t) => true,
        Some(t) if (3..=6).contains(&t.len()) => toks.next().is_some_and(time),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(k: &AfterTs, s: &Strings) -> String {
        match k {
            AfterTs::Event(e) => e.name(s).to_string(),
            AfterTs::Stack => "<stack>".into(),
        }
    }

    #[test]
    fn unlabeled_lines_after_the_timestamp() {
        let mut s = Strings::new();
        for (text, want) in [
            ("<stack trace>", "<stack>"),
            ("<user stack trace>", "<stack>"),
            (
                "sys_openat(dfd: 0xffffff9c, filename: 0x7fc7a367b0b1, flags: 0x80000, mode: 0)",
                "sys_enter_openat",
            ),
            ("sys_openat -> 0x3", "sys_exit_openat"),
            ("sys_write -> 0xfffffffffffffff2", "sys_exit_write"),
            ("do_sys_open <-do_syscall_64", "do_sys_open"),
            (
                "do_sys_open+0x0/0x200 <-do_syscall_64+0x5b/0x1a0",
                "do_sys_open",
            ),
            (
                "vfs_read <ffffffff8123> <-ksys_read <ffffffff8124>",
                "vfs_read",
            ),
        ] {
            let k = after_ts(text.as_bytes(), &mut s).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(name(&k, &s), want, "{text}");
        }
        assert!(after_ts(b"hello world", &mut s).is_none());
        assert!(after_ts(b"sys_write(fd: 1", &mut s).is_none());
        assert!(is_stack_frame(b" => __schedule"));
        assert!(is_stack_frame(b"=> schedule (ffffffff81a0c8d0)"));
    }

    #[test]
    fn latency_format_lines() {
        let h = latency(b"    bash-4859      0d..2. 9920909830us : sched_wakeup_new: comm=bash pid=4953 prio=120 target_cpu=001").unwrap();
        assert_eq!(
            (h.comm, h.tid, h.cpu, h.ts),
            (&b"bash"[..], 4859, 0, 9_920_909_830_000)
        );
        assert_eq!(h.name, b"sched_wakeup_new");
        let h = latency(
            b"opt dd7d-4947      1..... 9920910058us#: rseq_update: cpu_id=1 node_id=0 mm_cid=1",
        )
        .unwrap();
        assert_eq!((h.comm, h.tid, h.cpu), (&b"opt dd7d"[..], 4947, 1));
        assert!(latency(b"  <idle>-0         1d..2.    0: sched_switch: x=1").is_some());
        assert!(latency(b"hello").is_none());
    }

    #[test]
    fn function_graph_lines() {
        let g = graph(b" 0)               |  do_nanosleep() {").unwrap();
        assert_eq!((g.ts, g.cpu, g.task), (None, 0, None));
        assert_eq!(
            g.body,
            GraphBody::Entry {
                func: b"do_nanosleep",
                us_ns: None
            }
        );
        let g = graph(b" 0)   0.198 us    |          _raw_spin_lock_irqsave();").unwrap();
        assert_eq!(
            g.body,
            GraphBody::Entry {
                func: b"_raw_spin_lock_irqsave",
                us_ns: Some(198)
            }
        );
        let g = graph(
            b"7238523.638037 |   0)   10.113 us   |                                          }",
        )
        .unwrap();
        assert_eq!(
            (g.ts, g.body),
            (
                Some(7_238_523_638_037_000),
                GraphBody::Exit {
                    us_ns: Some(10_113)
                }
            )
        );
        let g =
            graph(b" 1234.567890 |   1)   kworker-77    | + 12.500 us   |  task_mm_cid_work();")
                .unwrap();
        assert_eq!(g.task, Some((&b"kworker"[..], 77)));
        assert_eq!(
            g.body,
            GraphBody::Entry {
                func: b"task_mm_cid_work",
                us_ns: Some(12_500)
            }
        );
        let g =
            graph(b" 1)               |  /* rseq_update: cpu_id=1 node_id=0 mm_cid=0 */").unwrap();
        assert_eq!(
            g.body,
            GraphBody::Comment(b"rseq_update: cpu_id=1 node_id=0 mm_cid=0")
        );
        let glued = glued_graph_line(
            b"  8)  cw-peri-153   =>   12.475324 |    4)    <idle>-0    |               |  /* tick_stop: success=1 dependency=NONE */",
        )
        .unwrap();
        assert_eq!((glued.ts, glued.cpu), (Some(12_475_324_000), 4));
        assert!(glued_graph_line(b" 0)  platfor-3210  =>  vmstat-2854  ").is_none());
        let g = graph(b"   12.137763 |   3)     init-1     |              us |                }")
            .unwrap();
        assert_eq!(
            (g.ts, g.task, g.body),
            (
                Some(12_137_763_000),
                Some((&b"init"[..], 1)),
                GraphBody::Exit { us_ns: None }
            )
        );
        let g = graph(b" 0)   ==========> |").unwrap();
        assert_eq!(g.body, GraphBody::IrqMark);
        let g = graph(b" 0)   1.583 us    |          } /* load_TLS_descriptor */").unwrap();
        assert_eq!(g.body, GraphBody::Exit { us_ns: Some(1_583) });
        assert_eq!(
            graph_switch(b" 0)  platfor-3210  =>  vmstat-2854  "),
            Some((0, &b"vmstat"[..], 2854))
        );
        assert!(is_graph_rule(
            b" ------------------------------------------"
        ));
        assert!(graph(b"hello | world").is_none());
        assert_eq!(
            graph_payload(b"       0.123 us   |  foo();"),
            Some(GraphBody::Entry {
                func: b"foo",
                us_ns: Some(123)
            })
        );
        assert_eq!(
            graph_payload(b"                  |  task_mm_cid_work() {"),
            Some(GraphBody::Entry {
                func: b"task_mm_cid_work",
                us_ns: None
            })
        );
    }

    #[test]
    fn whole_number_timestamps_are_ticks() {
        assert!(ticks_timestamp(
            b"  bash-1  [000] .....  123456789: rseq_update: cpu_id=0"
        ));
        assert!(ticks_timestamp(
            b"  bash-1  [000] 12345678901234: sched_switch: x"
        ));
        assert!(!ticks_timestamp(
            b"  bash-1  [000] .....  1.000001: rseq_update: cpu_id=0"
        ));
        assert!(!ticks_timestamp(b"free text: 12: [x]"));
    }

    #[test]
    fn a_second_event_inside_a_line_is_found() {
        let l = b"  bash-1  [000] .....  1.000001: rseq_update: cpu_id=0 mm_c  cat-22  [001] d.h1.  1.000002: rseq_update: cpu_id=1 mm_cid=0";
        let at = second_head(l).unwrap();
        assert!(l[at..].starts_with(b"cat-22  [001]"));
        let t = b"  bash-1  (    1) [000] 1.5: x: y a-b  kw-9  (    9) [001] 1.6: x: y";
        assert!(t[second_head(t).unwrap()..].starts_with(b"kw-9  ("));
        // trace-cmd's sched_switch brackets are no second line
        assert_eq!(
            second_head(b"  a-1 [000] 1.5: sched_switch: a:1 [120] S ==> b:2 [120]"),
            None
        );
        assert_eq!(second_head(b"  a-1 [000] 1.5: x: y"), None);
    }
}
