//! Line-oriented text captures: the driver shared by the ftrace family and perf script.
//!
//! The input is split at line boundaries into one chunk per core; each chunk is parsed on its
//! own (local string table, local line numbers) and the results are stitched in order, so the
//! parallel parse yields exactly the events of a serial one.

use crate::events::{Event, EventKind, Format, StrId, Strings, TaskMeta, Tid, TraceDelta, Warning};
use crate::sources::error::{Location, SourceError};
use crate::sources::options::LoadOptions;
use crate::sources::text::bom::SkipBom;
use crate::sources::text::chunk::{BadLine, Chunk, LineParser, Skipped, UNKNOWN_COMM};
use crate::sources::text::parse::parse_piece;
use crate::sources::text::pieces::{Pieces, SlicePieces};
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// Bytes per chunk: the unit of parallel work and of a streamed delta. Small enough that the
/// first delta of a large file arrives within milliseconds and the chunks in flight stay a few
/// MB; large enough that per-chunk costs (string tables, task maps) are noise.
pub const SEGMENT_BYTES: usize = 4 << 20;

/// The state carried from one chunk of a streaming parse to the next.
struct Stitch {
    strings: Strings,
    /// Strings already handed out in deltas.
    sent_strings: usize,
    tasks: crate::events::TaskTable,
    line_base: u64,
    last_ts: Option<u64>,
    saw_header: bool,
    bad: u64,
    first_bad: Option<(u64, BadLine)>,
    ncpus_sent: bool,
    /// Latest TGIDs of tids whose TGID changed (a tid reused by another process).
    tgids: crate::events::TgidTrack,
    perf: crate::sources::text::perf_tally::Tally,
    /// Deltas are added up into times (perf script --deltatime): the sum so far.
    cumulative: Option<u64>,
    skipped: Skipped,
    /// The last line so far may be continued by free text (see [`Chunk::cont_ok`]).
    cont_ok: bool,
    /// function_graph: each CPU's task as the last `=>` line named it.
    graph_task: FxHashMap<u16, Tid>,
    /// Tasks the task column showed only as `<...>`, and names payloads gave for tasks.
    anon: rustc_hash::FxHashSet<Tid>,
    names: FxHashMap<Tid, StrId>,
    /// A chunked recording: its marks so far, events before its last chunk line, all events.
    record: crate::sources::text::chunk::RecordMarks,
    events_at_chunk: usize,
    events: usize,
    /// A copy of the capture after a second `# tracer:` header, counted once.
    dups: crate::sources::text::dups::Dups,
    /// The header's `entries-in-buffer` (summed), whether every `# tracer:` was `nop`, and the
    /// lost-event markers among `events`.
    header_entries: Option<u64>,
    event_tracer: Option<bool>,
    lost_markers: usize,
    /// Input bytes of the chunks stitched so far.
    bytes: u64,
}

/// The chunks between the parsing workers and the consumer that stitches them in file order.
struct Pipeline {
    ready: FxHashMap<usize, Result<Chunk, SourceError>>,
    /// Pieces taken from the input so far, and their number once the input has ended.
    pulled: usize,
    total: Option<usize>,
    /// Chunks handed to the sink so far; workers stay within a window ahead of it, so memory is
    /// bounded however slow the sink is.
    consumed: usize,
    /// Event buffers handed back by the sink, reused so that their pages stay faulted in.
    pool: Vec<Vec<Event>>,
    stop: bool,
}

struct Shared {
    state: Mutex<Pipeline>,
    changed: Condvar,
    /// Set when the consumer leaves: a worker waiting on a stream's input gives up.
    abandon: AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Pipeline> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn wait<'a>(&self, g: MutexGuard<'a, Pipeline>) -> MutexGuard<'a, Pipeline> {
        self.changed.wait(g).unwrap_or_else(|e| e.into_inner())
    }
    fn stop(&self) {
        self.abandon.store(true, Ordering::Relaxed);
        self.lock().stop = true;
        self.changed.notify_all();
    }
}

/// Stops the workers however the consumer leaves (error, early stop, a panicking sink), so the
/// scope that joins them never waits forever.
struct StopOnDrop<'a>(&'a Shared);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Threads for a parse of `size` bytes (unknown: a stream, which may be large).
fn threads_for(size: Option<usize>, opts: &LoadOptions) -> usize {
    let cores = || std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    match opts.threads {
        _ if opts.serial => 1,
        Some(n) => n.max(1),
        None if size.is_none_or(|s| s >= 8 << 20) => cores(),
        None => 1,
    }
}

/// Bytes per piece of a capture of `size` bytes parsed on `n_threads` (several pieces per
/// worker even for a mid-sized file, so both cores stay busy to the end).
pub fn segment_for(size: Option<usize>, n_threads: usize, opts: &LoadOptions) -> usize {
    opts.segment_bytes
        .unwrap_or_else(|| match (n_threads, size) {
            (1, _) | (_, None) => SEGMENT_BYTES,
            (n, Some(s)) => (s / (4 * n)).clamp(64 << 10, SEGMENT_BYTES),
        })
        .max(1)
}

/// Parses a text capture chunk by chunk, handing each chunk's events to `sink` as a
/// [`TraceDelta`] (in file order); `sink` returns false to stop and may take what it keeps
/// (what it leaves in `events` is cleared and the buffer reused). On a malformed line the
/// deltas before it have been delivered and the error names the line. When no `#` header line
/// was seen and `headerless` is set, the last delta says the capture is that format.
///
/// With more than one thread, workers parse chunks ahead (each a whole number of lines, with
/// its own string table and line numbers) while this thread stitches them in order, so the
/// parallel parse yields exactly the events of a serial one.
pub fn stream_text(
    path: &str,
    data: &[u8],
    parser: &dyn LineParser,
    headerless: Option<Format>,
    opts: &LoadOptions,
    sink: &mut dyn FnMut(&mut TraceDelta) -> bool,
) -> Result<(), SourceError> {
    let size = Some(data.len());
    let segment = segment_for(size, threads_for(size, opts), opts);
    let mut pieces = SlicePieces::new(data, segment);
    stream_pieces(path, &mut pieces, parser, headerless, opts, sink)
}

/// [`stream_text`] over any source of pieces (a mapped file, or a stream as it arrives).
pub fn stream_pieces<'a>(
    path: &str,
    pieces: &mut dyn Pieces<'a>,
    parser: &dyn LineParser,
    headerless: Option<Format>,
    opts: &LoadOptions,
    sink: &mut dyn FnMut(&mut TraceDelta) -> bool,
) -> Result<(), SourceError> {
    let mut pieces = SkipBom::new(pieces);
    let pieces = &mut pieces;
    let n_threads = threads_for(pieces.size_hint(), opts);
    let mut st = Stitch {
        strings: Strings::new(),
        sent_strings: 1,
        tasks: Default::default(),
        line_base: 0,
        last_ts: None,
        saw_header: false,
        bad: 0,
        first_bad: None,
        ncpus_sent: false,
        tgids: Default::default(),
        perf: Default::default(),
        cumulative: parser.cumulative_times().then_some(0),
        skipped: Skipped::default(),
        cont_ok: false,
        graph_task: FxHashMap::default(),
        anon: Default::default(),
        names: FxHashMap::default(),
        record: Default::default(),
        events_at_chunk: 0,
        events: 0,
        dups: Default::default(),
        header_entries: None,
        event_tracer: None,
        lost_markers: 0,
        bytes: 0,
    };
    let mut delta = TraceDelta::default();
    // Hands one parsed chunk to the sink; returns its event buffer for reuse and whether to go on.
    let mut consume = |chunk: Chunk| -> Result<(Vec<Event>, bool), SourceError> {
        let mut chunk = chunk;
        let mut failed = chunk.error.take().map(|(l, bad)| {
            SourceError::new(path, Location::Line(st.line_base + l), bad.to_string())
        });
        // free text at the chunk's start: a continuation if the previous chunk ended on an
        // event that allows one, else a bad line
        if let Some((l, bad)) = chunk.leading_cont.take() {
            if st.cont_ok {
                st.skipped.continuation += chunk.leading_cont_n;
            } else if opts.skip_bad_lines {
                st.bad += chunk.leading_cont_n;
                if st.first_bad.is_none() {
                    st.first_bad = Some((st.line_base + l, bad));
                }
            } else {
                chunk.events.clear();
                failed = Some(SourceError::new(
                    path,
                    Location::Line(st.line_base + l),
                    bad.to_string(),
                ));
            }
        }
        // (a failed chunk keeps what it parsed before the bad line)
        st.bytes += chunk.bytes;
        merge_chunk(&mut st, &mut delta, chunk);
        let new_strings = st.strings.len();
        delta.new_strings = (st.sent_strings..new_strings)
            .map(|i| st.strings.get(crate::events::StrId(i as u32)).into())
            .collect();
        st.sent_strings = new_strings;
        if let Some(c) = &opts.consumed {
            c.store(st.bytes, Ordering::Relaxed);
        }
        let go = sink(&mut delta);
        let mut buf = std::mem::take(&mut delta.events);
        buf.clear();
        delta = TraceDelta::default();
        if let Some(e) = failed {
            return Err(e);
        }
        if opts.cancelled() {
            return Err(SourceError::file(path, "load cancelled"));
        }
        Ok((buf, go))
    };
    if n_threads == 1 {
        let mut buf = Vec::new();
        let never = AtomicBool::new(false);
        let mut i = 0;
        while let Some(piece) = pieces.next_piece(&never)? {
            let chunk = parse_piece(i, &piece, parser, opts, buf);
            i += 1;
            let (back, go) = consume(chunk)?;
            if !go {
                return Ok(());
            }
            buf = back;
        }
    } else {
        let shared = Shared {
            state: Mutex::new(Pipeline {
                ready: FxHashMap::default(),
                pulled: 0,
                total: None,
                consumed: 0,
                pool: Vec::new(),
                stop: false,
            }),
            changed: Condvar::new(),
            abandon: AtomicBool::new(false),
        };
        // One worker at a time takes the next piece (reading a stream is sequential anyway);
        // the pipeline's own lock is never held while the input is read.
        let source = Mutex::new(&mut *pieces);
        let window = 2 * n_threads;
        let go = std::thread::scope(|s| {
            let _stop = StopOnDrop(&shared);
            for _ in 0..n_threads {
                let (shared, source) = (&shared, &source);
                s.spawn(move || {
                    loop {
                        let mut src = source.lock().unwrap_or_else(|e| e.into_inner());
                        let (i, buf) = {
                            let mut g = shared.lock();
                            while !g.stop && g.total.is_none() && g.pulled >= g.consumed + window {
                                g = shared.wait(g);
                            }
                            if g.stop || g.total.is_some() {
                                return;
                            }
                            (g.pulled, g.pool.pop().unwrap_or_default())
                        };
                        let piece = match src.next_piece(&shared.abandon) {
                            Ok(Some(p)) => p,
                            Ok(None) => {
                                let mut g = shared.lock();
                                g.total = Some(i);
                                drop(g);
                                shared.changed.notify_all();
                                return;
                            }
                            Err(e) => {
                                let mut g = shared.lock();
                                g.ready.insert(i, Err(e));
                                g.total = Some(i + 1);
                                drop(g);
                                shared.changed.notify_all();
                                return;
                            }
                        };
                        shared.lock().pulled = i + 1;
                        drop(src);
                        let chunk = parse_piece(i, &piece, parser, opts, buf);
                        drop(piece);
                        shared.lock().ready.insert(i, Ok(chunk));
                        shared.changed.notify_all();
                    }
                });
            }
            let mut i = 0;
            loop {
                let chunk = {
                    let mut g = shared.lock();
                    loop {
                        if let Some(c) = g.ready.remove(&i) {
                            break Some(c);
                        }
                        if g.total.is_some_and(|t| i >= t) {
                            break None;
                        }
                        g = shared.wait(g);
                    }
                };
                let Some(chunk) = chunk else {
                    break;
                };
                let (buf, go) = consume(chunk?)?;
                if !go {
                    return Ok(false);
                }
                i += 1;
                let mut g = shared.lock();
                g.consumed = i;
                g.pool.push(buf);
                drop(g);
                shared.changed.notify_all();
            }
            Ok(true)
        })?;
        if !go {
            return Ok(());
        }
    }
    let mut last = TraceDelta::default();
    let last_line = st.line_base + 1;
    if let Some(p) = pieces
        .partial()
        // (the padding that starts a line is a cut too: only a stray CR is nothing)
        .filter(|p| !p.iter().all(|&b| b == b'\r'))
    {
        last.warnings.push(Warning {
            code: "truncated-line",
            message: format!(
                "{path}:{last_line}: the last line has no newline (file cut mid-line?); its partial record was not loaded: \"{}\"",
                crate::sources::error::excerpt(p, 80)
            ),
        });
    }
    if st.bad > 0 {
        let (l, m) = st
            .first_bad
            .take()
            .map_or((0, String::new()), |(l, b)| (l, b.to_string()));
        last.warnings.push(Warning {
            code: "bad-lines-skipped",
            message: format!(
                "{path}: {} lines could not be parsed and were skipped (first at line {l}: {m})",
                st.bad
            ),
        });
    }
    let times = parser.times();
    let cut_line = last.warnings.iter().any(|w| w.code == "truncated-line");
    last.warnings.extend(fewer_than_header(path, &st, cut_line));
    last.warnings.extend(pieces.warnings(path));
    last.warnings.extend(st.perf.warnings(path, times));
    last.warnings.extend(st.skipped.warnings(path));
    if let Some(w) = st.dups.finish(path, &mut last.events) {
        last.warnings.push(w);
    }
    if st.record.chunked && !st.record.ended {
        last.warnings.push(recording_cut(path, &st));
    }
    if !st.saw_header {
        last.format = headerless;
    }
    sink(&mut last);
    Ok(())
}

/// The warning of a tracefs `trace` file that holds fewer entries than its header counts (cut
/// at a line boundary, lines removed): each event, stack trace, bad line and the line cut short
/// is one entry of the ring buffer.
fn fewer_than_header(path: &str, st: &Stitch, cut_line: bool) -> Option<Warning> {
    let header = st.header_entries?;
    if st.event_tracer != Some(true) {
        return None;
    }
    let events = (st.events - st.lost_markers) as u64;
    let read =
        events + st.skipped.stack_traces + st.bad + st.skipped.merged_cut + u64::from(cut_line);
    if read >= header {
        return None;
    }
    let mut parts = vec![format!("{events} events")];
    for (n, what) in [
        (st.skipped.stack_traces, "stack traces"),
        (st.bad, "bad lines"),
        (
            st.skipped.merged_cut + u64::from(cut_line),
            "lines cut short",
        ),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    Some(Warning {
        code: "fewer-than-header",
        message: format!(
            "{path}: the header says entries-in-buffer {header}, but the file holds {read} ({}): {} entries are missing (the file was cut at a line boundary, or lines were taken out)",
            parts.join(", "),
            header - read
        ),
    })
}

/// The warning of a chunked recording without its end line: written by a recorder that was
/// killed, crashed or ran out of disk before it finished.
fn recording_cut(path: &str, st: &Stitch) -> Warning {
    let chunks = match st.record.last_chunk {
        Some((n, _)) => format!(
            "its last complete chunk is #{n} ({} events)",
            st.events_at_chunk
        ),
        None => "no chunk of it is complete".into(),
    };
    let after = st.events - st.events_at_chunk;
    let after = if after > 0 {
        format!(", and the {after} whole event lines after it were loaded too")
    } else {
        String::new()
    };
    Warning {
        code: "recording-cut",
        message: format!(
            "{path}: the recording was cut: it has no \"# cidscope-record: end\" line (the recorder was killed, crashed or could not write); {chunks}{after}"
        ),
    }
}

/// Turns a parsed chunk into its delta: string ids made global, lost-marker times
/// filled in, task facts recorded once.
fn merge_chunk(st: &mut Stitch, delta: &mut TraceDelta, mut chunk: Chunk) {
    if !st.ncpus_sent && chunk.ncpus_hint.is_some() {
        delta.ncpus_hint = chunk.ncpus_hint;
        st.ncpus_sent = true;
    }
    if chunk.kernel_release.is_some() {
        delta.kernel_release = chunk.kernel_release.take();
        delta.kernel_hz = chunk.kernel_hz;
        delta.kernel_scan_batch = chunk.kernel_scan_batch;
    }
    if let Some(o) = chunk.mono_offset {
        crate::events::keep_least(&mut delta.mono_offset, o);
    }
    delta.rseq_irqs_off += chunk.rseq_irqs_off;
    st.saw_header |= chunk.saw_header;
    st.perf.add(&chunk.perf);
    st.skipped.add(&chunk.skipped);
    if let Some(c) = chunk.cont_ok {
        st.cont_ok = c;
    }
    let r = chunk.record;
    st.record.chunked |= r.chunked;
    st.record.ended |= r.ended;
    if let Some((n, at)) = r.last_chunk {
        st.record.last_chunk = Some((n, at));
        st.events_at_chunk = st.events + at;
    }
    st.events += chunk.events.len();
    st.lost_markers += (chunk.events.iter())
        .filter(|e| matches!(e.kind, EventKind::Lost { .. }))
        .count();
    if let Some(n) = chunk.header_entries {
        st.header_entries = Some(st.header_entries.unwrap_or(0).saturating_add(n));
    }
    if let Some(t) = chunk.event_tracer {
        st.event_tracer = Some(st.event_tracer.unwrap_or(true) && t);
    }
    st.bad += chunk.bad_lines;
    if st.first_bad.is_none() {
        st.first_bad = chunk.first_bad.take().map(|(l, m)| (st.line_base + l, m));
    }
    let headers: Vec<(usize, u64)> = (chunk.tracer_headers.iter())
        .map(|&(i, l)| (i, st.line_base + l))
        .collect();
    st.line_base += chunk.lines;
    delta.warnings.append(&mut chunk.warnings);
    // Local string ids → global ids.
    let remap: Vec<StrId> = (0..chunk.strings.len() as u32)
        .map(|i| st.strings.intern(chunk.strings.get(StrId(i))))
        .collect();
    let re = |id: StrId| remap.get(id.0 as usize).copied().unwrap_or_default();
    let first_real = chunk.events.iter().find(|e| e.ts != u64::MAX).map(|e| e.ts);
    let mut sum = st.cumulative;
    let mut fix = |e: &mut Event, last_ts: &mut Option<u64>| {
        if let Some(s) = &mut sum
            && e.ts != u64::MAX
        {
            *s = s.saturating_add(e.ts).min(crate::events::MAX_TS);
            e.ts = *s;
        }
        if let Some(id) = e.kind.string_mut() {
            *id = re(*id);
        }
        // Lost markers noted before any event of their chunk take the time of the event before
        // them in the whole stream (or the first event, at the start of the file).
        if e.ts == u64::MAX {
            e.ts = last_ts.or(first_real).unwrap_or(0);
        }
        *last_ts = Some(e.ts);
    };
    // A delta is one chunk: fix its events in place and hand the buffer over.
    let mut evs = std::mem::take(&mut chunk.events);
    let mut span = (u64::MAX, 0);
    for e in evs.iter_mut() {
        fix(e, &mut st.last_ts);
        span = (span.0.min(e.ts), span.1.max(e.ts));
    }
    st.dups.filter(&mut evs, &headers, span);
    st.cumulative = sum;
    // function_graph without a task column: the task of a CPU before the chunk's first `=>`
    for &i in &chunk.graph_unknown {
        if let Some(e) = evs.get_mut(i as usize)
            && let Some(&t) = st.graph_task.get(&e.cpu)
        {
            e.tid = t;
        }
    }
    st.graph_task.extend(chunk.graph_task.drain());
    for &(tid, name) in &chunk.names {
        st.names.entry(tid).or_insert(re(name));
    }
    delta.events = evs;
    // (looked up, not interned: most captures never show it)
    let anon_id = st.strings.find(UNKNOWN_COMM);
    for (tid, m) in chunk.tasks {
        let m = TaskMeta {
            tgid: m.tgid,
            comm: re(m.comm),
        };
        match st.tasks.get_mut(&tid) {
            Some(old) => {
                let mut changed = false;
                if anon_id.is_some_and(|a| old.comm == a && m.comm != a) {
                    old.comm = m.comm;
                    st.anon.remove(&tid);
                    changed = true;
                }
                if old.tgid.is_none() && m.tgid.is_some() {
                    old.tgid = m.tgid;
                    changed = true;
                }
                if changed {
                    delta.tasks.push((tid, *old));
                }
            }
            None => {
                if Some(m.comm) == anon_id {
                    st.anon.insert(tid);
                }
                st.tasks.insert(tid, m);
                delta.tasks.push((tid, m));
            }
        }
    }
    // A tid whose TGID column changes is another process's task from that record on.
    for (at, tid, g) in std::mem::take(&mut chunk.tgid_notes) {
        let ts = delta
            .events
            .get(at as usize)
            .or(delta.events.last())
            .map_or(0, |e| e.ts);
        if let Some(m) = st.tasks.get_mut(&tid)
            && let Some(c) = st.tgids.observe(m, tid, Some(g), ts)
        {
            delta.tgid_changes.push(c);
        }
    }
    // `<...>` tasks get the name another line of the file gives them
    if !st.anon.is_empty() {
        for e in &delta.events {
            if let EventKind::SchedSwitch {
                next_tid,
                next_comm,
                ..
            } = e.kind
                && Some(next_comm) != anon_id
                && st.anon.contains(&next_tid)
            {
                st.names.entry(next_tid).or_insert(next_comm);
            }
        }
        let named: Vec<(Tid, StrId)> = st
            .anon
            .iter()
            .filter_map(|t| st.names.get(t).map(|&n| (*t, n)))
            .filter(|&(_, n)| Some(n) != anon_id)
            .collect();
        for (tid, name) in named {
            st.anon.remove(&tid);
            if let Some(m) = st.tasks.get_mut(&tid) {
                m.comm = name;
                delta.tasks.push((tid, *m));
            }
        }
    }
}
