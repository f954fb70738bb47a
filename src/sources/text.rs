//! Line-oriented text captures: the driver shared by the ftrace family and perf script.
//!
//! The input is split at line boundaries into one chunk per core; each chunk is parsed on its
//! own (local string table, local line numbers) and the results are stitched in order, so the
//! parallel parse yields exactly the events of a serial one.

use super::{LoadOptions, Location, SourceError};
use crate::events::{
    Event, EventKind, Format, StrId, Strings, TaskMeta, Tid, Trace, TraceDelta, Warning,
};
use rustc_hash::FxHashMap;
use std::sync::atomic::Ordering;

/// What one chunk of lines produced.
pub struct Chunk {
    pub events: Vec<Event>,
    pub strings: Strings,
    pub tasks: FxHashMap<Tid, TaskMeta>,
    pub warnings: Vec<Warning>,
    pub ncpus_hint: Option<u32>,
    /// Lines of a `#` header were seen (tracefs `trace`, not `trace_pipe`).
    pub saw_header: bool,
    /// Skipped bad lines (with `skip_bad_lines`): count, first (local line, message).
    pub bad_lines: u64,
    pub first_bad: Option<(u64, String)>,
    /// First error (local line number, message) when not skipping.
    pub error: Option<(u64, String)>,
    /// Lines in this chunk.
    pub lines: u64,
    /// Last task noted per CPU (mod 64): most lines repeat their CPU's previous task, so the
    /// task map is consulted only when the task changes.
    recent: [Tid; 64],
    /// Byte position of the `[CPU]` column in the previous line (a parser's hint).
    pub cpu_hint: usize,
    pub warned_late_header: bool,
}

impl Chunk {
    fn new() -> Chunk {
        Chunk {
            events: Vec::new(),
            strings: Strings::new(),
            tasks: FxHashMap::default(),
            warnings: Vec::new(),
            ncpus_hint: None,
            saw_header: false,
            bad_lines: 0,
            first_bad: None,
            error: None,
            lines: 0,
            recent: [Tid::MAX; 64],
            cpu_hint: 0,
            warned_late_header: false,
        }
    }

    /// Records the task's comm and tgid the first time a line shows them.
    pub fn note_task(&mut self, cpu: u16, tid: Tid, comm: &[u8], tgid: Option<Tid>) {
        let slot = &mut self.recent[cpu as usize & 63];
        if *slot == tid && tgid.is_none() {
            return;
        }
        *slot = tid;
        if let Some(m) = self.tasks.get_mut(&tid) {
            if m.tgid.is_none() {
                m.tgid = tgid;
            }
            return;
        }
        let comm = self.strings.intern(comm);
        self.tasks.insert(tid, TaskMeta { tgid, comm });
    }

    /// A lost-event marker: placed at the time of the last event before it (fixed up across
    /// chunks), so the stream stays in time order.
    pub fn push_lost(&mut self, cpu: u16, count: Option<u32>) {
        let ts = self.events.last().map_or(u64::MAX, |e| e.ts);
        self.events.push(Event {
            ts,
            tid: 0,
            cpu,
            kind: EventKind::Lost { count },
        });
    }
}

/// Parses one line into `out`. Returns what was expected when the line is malformed.
pub trait LineParser: Send + Sync {
    fn line(&self, line: &[u8], out: &mut Chunk) -> Result<(), String>;
}

/// Parses a whole text capture.
pub fn parse_text(
    path: &str,
    data: &[u8],
    format: Format,
    parser: &dyn LineParser,
    opts: &LoadOptions,
) -> Result<Trace, SourceError> {
    let mut trace = Trace::new(path, format);
    stream_text(path, data, format, parser, opts, &mut |d| {
        trace.apply(d);
        true
    })?;
    trace.ensure_sorted();
    trace.events.shrink_to_fit();
    Ok(trace)
}

/// Bytes parsed per delta of a streaming load (each piece is split across the cores).
pub const SEGMENT_BYTES: usize = 32 << 20;

/// The state carried from one segment of a streaming parse to the next.
struct Stitch {
    strings: Strings,
    /// Strings already handed out in deltas.
    sent_strings: usize,
    tasks: FxHashMap<Tid, TaskMeta>,
    line_base: u64,
    last_ts: Option<u64>,
    saw_header: bool,
    bad: u64,
    first_bad: Option<(u64, String)>,
    ncpus_sent: bool,
}

/// Parses a text capture segment by segment, handing each segment's events to `sink` as a
/// [`TraceDelta`] (in file order); `sink` returns false to stop. Applying every delta to an
/// empty trace gives what [`parse_text`] gives before its final sort. On a malformed line the
/// deltas before it have been delivered and the error names the line.
pub fn stream_text(
    path: &str,
    data: &[u8],
    format: Format,
    parser: &dyn LineParser,
    opts: &LoadOptions,
    sink: &mut dyn FnMut(TraceDelta) -> bool,
) -> Result<(), SourceError> {
    // An unterminated last line is a record cut short: reported, never counted.
    let (body, partial) = match data.iter().rposition(|&b| b == b'\n') {
        Some(p) if p + 1 < data.len() => (&data[..=p], Some(&data[p + 1..])),
        Some(_) => (data, None),
        None => (&data[..0], Some(data)),
    };
    let n_threads = match opts.threads {
        _ if opts.serial => 1,
        Some(n) => n.max(1),
        None if body.len() >= 8 << 20 => {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
        }
        None => 1,
    };
    let segment = opts.segment_bytes.unwrap_or(SEGMENT_BYTES).max(1);
    let mut st = Stitch {
        strings: Strings::new(),
        sent_strings: 1,
        tasks: FxHashMap::default(),
        line_base: 0,
        last_ts: None,
        saw_header: false,
        bad: 0,
        first_bad: None,
        ncpus_sent: false,
    };
    for (a, b) in split_at_lines_every(body, segment) {
        let piece = &body[a..b];
        let ranges = split_at_lines(piece, n_threads);
        let chunks: Vec<Chunk> = if ranges.len() == 1 {
            vec![parse_chunk(piece, parser, opts)]
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = ranges
                    .iter()
                    .map(|&(a, b)| s.spawn(move || parse_chunk(&piece[a..b], parser, opts)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Chunk::new()))
                    .collect()
            })
        };
        if opts.cancelled() {
            return Err(SourceError::file(path, "load cancelled"));
        }
        let mut delta = TraceDelta::default();
        let mut failed = None;
        for mut chunk in chunks {
            if let Some((l, msg)) = chunk.error.take() {
                failed = Some(SourceError::new(
                    path,
                    Location::Line(st.line_base + l),
                    msg,
                ));
                // keep what this chunk parsed before the bad line
                merge_chunk(&mut st, &mut delta, chunk);
                break;
            }
            merge_chunk(&mut st, &mut delta, chunk);
        }
        let new_strings = st.strings.len();
        delta.new_strings = (st.sent_strings..new_strings)
            .map(|i| st.strings.get(crate::events::StrId(i as u32)).into())
            .collect();
        st.sent_strings = new_strings;
        if let Some(e) = failed {
            sink(delta);
            return Err(e);
        }
        if !sink(delta) {
            return Ok(());
        }
    }
    let mut last = TraceDelta::default();
    let last_line = st.line_base + 1;
    if let Some(p) = partial.filter(|p| !p.iter().all(|b| b.is_ascii_whitespace())) {
        last.warnings.push(Warning {
            code: "truncated-line",
            message: format!(
                "{path}:{last_line}: the last line has no newline (file cut mid-line?); its partial record was not loaded: \"{}\"",
                super::error::excerpt(p, 80)
            ),
        });
    }
    if st.bad > 0 {
        let (l, m) = st.first_bad.take().unwrap_or((0, String::new()));
        last.warnings.push(Warning {
            code: "bad-lines-skipped",
            message: format!(
                "{path}: {} lines could not be parsed and were skipped (first at line {l}: {m})",
                st.bad
            ),
        });
    }
    if format == Format::Ftrace && !st.saw_header {
        last.format = Some(Format::TracePipe);
    }
    sink(last);
    Ok(())
}

/// Splits `data` into pieces of about `size` bytes that end at newlines.
fn split_at_lines_every(data: &[u8], size: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < data.len() {
        let target = start + size;
        let end = if target >= data.len() {
            data.len()
        } else {
            match memchr::memchr(b'\n', &data[target..]) {
                Some(p) => target + p + 1,
                None => data.len(),
            }
        };
        out.push((start, end));
        start = end;
    }
    if out.is_empty() {
        out.push((0, 0));
    }
    out
}

/// Splits `data` into about `n` pieces that each end at a newline.
pub fn split_at_lines(data: &[u8], n: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for k in 1..n {
        let target = data.len() * k / n;
        if target <= start {
            continue;
        }
        match memchr::memchr(b'\n', &data[target..]) {
            Some(p) => {
                let end = target + p + 1;
                out.push((start, end));
                start = end;
            }
            None => break,
        }
    }
    out.push((start, data.len()));
    out
}

fn parse_chunk(data: &[u8], parser: &dyn LineParser, opts: &LoadOptions) -> Chunk {
    let mut out = Chunk::new();
    out.events.reserve(data.len() / 90);
    let mut start = 0usize;
    let mut since_progress = 0usize;
    for nl in memchr::memchr_iter(b'\n', data) {
        let mut line = &data[start..nl];
        if line.last() == Some(&b'\r') {
            line = &line[..line.len() - 1];
        }
        out.lines += 1;
        if let Err(msg) = parser.line(line, &mut out) {
            let msg = format!("{msg}; line is \"{}\"", super::error::excerpt(line, 120));
            if opts.skip_bad_lines {
                out.bad_lines += 1;
                if out.first_bad.is_none() {
                    out.first_bad = Some((out.lines, msg));
                }
            } else {
                out.error = Some((out.lines, msg));
                return out;
            }
        }
        since_progress += nl + 1 - start;
        start = nl + 1;
        if since_progress >= 1 << 22 {
            if let Some(p) = &opts.progress {
                p.done.fetch_add(since_progress as u64, Ordering::Relaxed);
                if p.cancel.load(Ordering::Relaxed) {
                    return out;
                }
            }
            since_progress = 0;
        }
    }
    if let Some(p) = &opts.progress {
        p.done.fetch_add(since_progress as u64, Ordering::Relaxed);
    }
    out
}

/// Adds a parsed chunk to the delta of its segment: string ids made global, lost-marker times
/// filled in, task facts recorded once.
fn merge_chunk(st: &mut Stitch, delta: &mut TraceDelta, mut chunk: Chunk) {
    if !st.ncpus_sent && chunk.ncpus_hint.is_some() {
        delta.ncpus_hint = chunk.ncpus_hint;
        st.ncpus_sent = true;
    }
    st.saw_header |= chunk.saw_header;
    st.bad += chunk.bad_lines;
    if st.first_bad.is_none() {
        st.first_bad = chunk.first_bad.take().map(|(l, m)| (st.line_base + l, m));
    }
    st.line_base += chunk.lines;
    delta.warnings.append(&mut chunk.warnings);
    // Local string ids → global ids.
    let remap: Vec<StrId> = (0..chunk.strings.len() as u32)
        .map(|i| st.strings.intern(chunk.strings.get(StrId(i))))
        .collect();
    let re = |id: StrId| remap.get(id.0 as usize).copied().unwrap_or_default();
    let first_real = chunk.events.iter().find(|e| e.ts != u64::MAX).map(|e| e.ts);
    let fix = |e: &mut Event, last_ts: &mut Option<u64>| {
        match &mut e.kind {
            EventKind::SchedSwitch { next_comm, .. } => *next_comm = re(*next_comm),
            EventKind::Other { name } => *name = re(*name),
            _ => {}
        }
        // Lost markers noted before any event of their chunk take the time of the event before
        // them in the whole stream (or the first event, at the start of the file).
        if e.ts == u64::MAX {
            e.ts = last_ts.or(first_real).unwrap_or(0);
        }
        *last_ts = Some(e.ts);
    };
    if delta.events.is_empty() {
        // the segment's first chunk: fix it in place instead of copying it
        let mut evs = std::mem::take(&mut chunk.events);
        for e in evs.iter_mut() {
            fix(e, &mut st.last_ts);
        }
        delta.events = evs;
    } else {
        delta.events.reserve(chunk.events.len());
        for mut e in chunk.events.drain(..) {
            fix(&mut e, &mut st.last_ts);
            delta.events.push(e);
        }
    }
    for (tid, m) in chunk.tasks {
        let m = TaskMeta {
            tgid: m.tgid,
            comm: re(m.comm),
        };
        match st.tasks.get_mut(&tid) {
            Some(old) => {
                if old.tgid.is_none() && m.tgid.is_some() {
                    old.tgid = m.tgid;
                    delta.tasks.push((tid, *old));
                }
            }
            None => {
                st.tasks.insert(tid, m);
                delta.tasks.push((tid, m));
            }
        }
    }
}

/// `1623.480444` / `1622.415298712` / `12345` (a raw counter clock) → ns.
pub fn parse_ts(s: &[u8]) -> Option<u64> {
    let (sec, frac) = match memchr::memchr(b'.', s) {
        Some(d) => (&s[..d], &s[d + 1..]),
        None => (s, &b""[..]),
    };
    if sec.is_empty() || sec.len() > 10 || frac.len() > 9 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in sec {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (b - b'0') as u64;
    }
    let mut f: u64 = 0;
    for &b in frac {
        if !b.is_ascii_digit() {
            return None;
        }
        f = f * 10 + (b - b'0') as u64;
    }
    f *= 10u64.pow(9 - frac.len() as u32);
    Some(v * 1_000_000_000 + f)
}

pub fn trim_start(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    &s[n..]
}

pub fn trim_end(s: &[u8]) -> &[u8] {
    let mut e = s.len();
    while e > 0 && matches!(s[e - 1], b' ' | b'\t') {
        e -= 1;
    }
    &s[..e]
}

/// Index of the first non-space byte at or after `i`.
pub fn skip_spaces(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && s[i] == b' ' {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(parse_ts(b"1623.480444"), Some(1_623_480_444_000));
        assert_eq!(parse_ts(b"1622.415298712"), Some(1_622_415_298_712));
        assert_eq!(parse_ts(b"0.5"), Some(500_000_000));
        assert_eq!(parse_ts(b"77"), Some(77_000_000_000));
        assert_eq!(parse_ts(b"1.2.3"), None);
        assert_eq!(parse_ts(b""), None);
        assert_eq!(parse_ts(b"99999999999.1"), None);
    }

    #[test]
    fn split_keeps_lines_whole() {
        let data = b"aaa\nbb\ncccc\nd\neeeee\n";
        for n in 1..8 {
            let r = split_at_lines(data, n);
            assert_eq!(r.first().unwrap().0, 0);
            assert_eq!(r.last().unwrap().1, data.len());
            for w in r.windows(2) {
                assert_eq!(w[0].1, w[1].0);
            }
            for &(a, b) in &r {
                assert!(b == a || data[b - 1] == b'\n');
            }
        }
    }
}
