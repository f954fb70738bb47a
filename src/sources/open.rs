//! Opening a capture: the file mapped or the stream started (`input`), its format detected (or
//! named by `--format`), its size checked against the memory available; then read whole or as
//! a stream through its format.

use crate::events::{Format, Trace, TraceDelta};
use crate::sources::error::{SourceError, excerpt};
use crate::sources::file_format::FileFormat;
use crate::sources::formats;
use crate::sources::input::{self, budget::Budget};
use crate::sources::memory;
use crate::sources::options::LoadOptions;
use crate::sources::sys::mmap::Map;
use crate::sources::text::driver;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::Ordering;

/// The bytes of an opened capture: a private read-only map of a file, or data built into the
/// binary (the demo).
pub enum Bytes {
    Map(Map),
    Static(&'static [u8]),
}

impl Bytes {
    /// Where the mapped file shrank while it was read, if it did: the first page a read
    /// faulted on (see `sys::sigbus`), or the file's new end when that lies in the mapping (the
    /// rest of its last page reads as zeros without a fault).
    fn shrunk_at(&self) -> Option<u64> {
        match self {
            Bytes::Map(m) => {
                let now = m.current_len().filter(|&n| n < m.len() as u64);
                match (m.shrunk_at(), now) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            }
            Bytes::Static(_) => None,
        }
    }

    /// The error for a file that shrank while it was read: its name, the first offset that
    /// could not be read, and its size now.
    fn shrunk_error(&self, name: &str) -> Option<SourceError> {
        let at = self.shrunk_at()?;
        let now = match self {
            Bytes::Map(m) => m.current_len(),
            Bytes::Static(_) => None,
        };
        let now = now.map_or(String::new(), |n| format!(", {n} now"));
        Some(SourceError::at_offset(
            name,
            at,
            format!(
                "the file shrank while it was read (truncated or rewritten by another program: \
                 {} bytes when opened{now}); bytes from this offset could not be read, so the load stopped",
                self.len()
            ),
        ))
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Map(m) => m,
            Bytes::Static(s) => s,
        }
    }
}

/// What the start of a text capture says of its kernel ([`Opened::kernel_facts`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeadFacts {
    /// The release a `# cidscope-vm:` header names.
    pub release: Option<String>,
    /// Its CONFIG_HZ.
    pub hz: Option<u32>,
    /// `rseq_update` lines with interrupts off among the first (`Trace::rseq_irqs_off`).
    pub rseq_irqs_off: u64,
}

/// A capture that passed every check that needs no parsing: it exists, is not empty, fits in
/// memory (as far as its size is known), and its format is known. Parsing may still find a
/// bad record.
pub struct Opened {
    pub name: String,
    pub format: Format,
    /// What it is read from: a file, standard input, a pipe, `trace_pipe`, ...
    pub kind: input::Kind,
    /// The compression it was read through, if any.
    pub codec: Option<input::decompress::Codec>,
    body: Body,
    reader: &'static dyn FileFormat,
    /// A mapped file's memory check that goes on as tasks appear (`None`: no check; a stream
    /// has its own, on the bytes as they arrive).
    budget: Option<memory::Budget>,
}

enum Body {
    Bytes(Bytes),
    /// Read once, as it arrives (taken by the first read).
    Stream(Mutex<Option<input::Stream>>),
}

/// Guesses the format from the content.
pub fn detect(data: &[u8]) -> Option<Format> {
    formats::detect(data).map(|f| f.format())
}

/// Opens a capture (`-`: standard input) and detects its format: a regular file is mapped;
/// pipes, FIFOs, devices, procfs/tracefs files and compressed input are read as streams.
pub fn open(path: &Path, opts: &LoadOptions) -> Result<Opened, SourceError> {
    let name = if path.as_os_str() == "-" {
        input::STDIN_NAME.to_string()
    } else {
        path.display().to_string()
    };
    let input = input::open(path, &name)?;
    opened(name, input, opts)
}

/// Opens a capture read from `r` as a stream (decompressed by content, like a pipe).
pub fn open_reader(
    name: &str,
    r: impl std::io::Read + Send + 'static,
    opts: &LoadOptions,
) -> Result<Opened, SourceError> {
    opened(name.to_string(), input::from_reader(name, r)?, opts)
}

fn opened(name: String, input: input::Input, opts: &LoadOptions) -> Result<Opened, SourceError> {
    match input {
        input::Input::Mapped(map) => {
            let reader = reader_of(&name, &map, opts)?;
            let budget = if opts.no_memory_check {
                None
            } else {
                memory::Budget::new(
                    map.len() as u64,
                    reader.memory_factor_of(&map),
                    reader.format().id(),
                )
                .map_err(|e| SourceError::file(&name, e.to_string()))?
            };
            Ok(Opened {
                name,
                format: reader.format(),
                kind: input::Kind::File,
                codec: None,
                body: Body::Bytes(Bytes::Map(map)),
                reader,
                budget,
            })
        }
        input::Input::Stream(s) => {
            if s.ended && s.head.is_empty() {
                return Err(SourceError::file(
                    &name,
                    match (s.codec, s.kind) {
                        _ if input::interrupt::requested() => {
                            "SIGINT ended the input before any byte arrived (0 bytes read): nothing to load".to_string()
                        }
                        (Some(c), _) => format!(
                            "{} data that decompresses to nothing: expected a capture",
                            c.name()
                        ),
                        (None, input::Kind::Special | input::Kind::File) => {
                            "empty file (0 bytes): expected a capture (ftrace text, trace-cmd report, perf script, perf.data or trace.dat)".to_string()
                        }
                        (None, _) => "empty input (0 bytes read): expected a capture (ftrace text, trace-cmd report, perf script, perf.data or trace.dat)".to_string(),
                    },
                ));
            }
            let reader = reader_of(&name, &s.head, opts)?;
            Ok(Opened {
                name,
                format: reader.format(),
                kind: s.kind,
                codec: s.codec,
                body: Body::Stream(Mutex::new(Some(s))),
                reader,
                budget: None,
            })
        }
    }
}

/// Opens a capture held in memory for the whole run (the bundled demo).
pub fn open_static(
    name: &str,
    data: &'static [u8],
    opts: &LoadOptions,
) -> Result<Opened, SourceError> {
    if data.is_empty() {
        return Err(SourceError::file(name, "empty input: expected a capture"));
    }
    let reader = reader_of(name, data, opts)?;
    Ok(Opened {
        name: name.to_string(),
        format: reader.format(),
        kind: input::Kind::File,
        codec: None,
        reader,
        body: Body::Bytes(Bytes::Static(data)),
        budget: None,
    })
}

/// The reader of the format `--format` names, or of the one detected from the content.
fn reader_of(
    name: &str,
    data: &[u8],
    opts: &LoadOptions,
) -> Result<&'static dyn FileFormat, SourceError> {
    if let Some(f) = opts.format {
        return formats::of(f)
            .ok_or_else(|| SourceError::file(name, format!("{f} is not a format cidscope reads")));
    }
    if let Some(r) = formats::detect(data) {
        return Ok(r);
    }
    // the first line that is not blank (an all-blank input names its first line), looked for
    // in the head detection read: a sparse file or one huge line is refused as fast as a
    // short one
    let head = &data[..data
        .len()
        .min(crate::sources::file_format::Sample::HEAD_BYTES)];
    let (line, first) = head
        .split(|&b| b == b'\n')
        .enumerate()
        .find(|(_, l)| !l.iter().all(|b| b.is_ascii_whitespace()))
        .map_or((1, &b""[..]), |(i, l)| (i as u64 + 1, l));
    // ftrace text of a clock that counts ticks (no `#` header to tell the format by)
    if crate::sources::text::shapes::ticks_timestamp(first) && comm_pid_before_cpu(first) {
        return Err(SourceError::at_line(
            name,
            line,
            format!(
                "expected {}; line is \"{}\"",
                crate::sources::text::ftrace::TICKS_CLOCK,
                excerpt(first, 120)
            ),
        ));
    }
    const EXPECTED: &str = "not a capture cidscope reads: expected ftrace text, trace-cmd report, perf script text, perf.data or trace.dat";
    // binary data is named, not printed as escaped bytes
    let head = &data[..data.len().min(512)];
    let invalid = std::str::from_utf8(head).is_err_and(|e| e.error_len().is_some());
    if head.contains(&0) || invalid {
        let what = if data.starts_with(b"\x7fELF") {
            "an ELF file (a program or library)"
        } else {
            "binary data of no format cidscope knows"
        };
        return Err(SourceError::file(name, format!("{EXPECTED}; found {what}")));
    }
    Err(SourceError::at_line(
        name,
        line,
        format!("{EXPECTED}; found \"{}\"", excerpt(first, 60)),
    ))
}

/// `COMM-PID` (and maybe `(TGID)`) before the line's first `[`: an ftrace event line's start.
fn comm_pid_before_cpu(line: &[u8]) -> bool {
    let Some(open) = line.iter().position(|&b| b == b'[') else {
        return false;
    };
    let mut pre = line[..open].trim_ascii_end();
    if pre.ends_with(b")")
        && let Some(lp) = pre.iter().rposition(|&b| b == b'(')
    {
        pre = pre[..lp].trim_ascii_end();
    }
    let digits = pre.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && pre.len() > digits && pre[pre.len() - digits - 1] == b'-'
}

impl Opened {
    /// Whether the capture can be read again (a file; a stream is read once).
    pub fn rereadable(&self) -> bool {
        matches!(self.body, Body::Bytes(_))
    }

    /// Whether it is line-oriented text (read as it arrives); binary captures are decoded
    /// whole.
    pub fn is_text(&self) -> bool {
        self.reader.text(&[]).is_some()
    }

    /// The capture's bytes, when it is held whole (a file).
    pub fn bytes(&self) -> Option<&[u8]> {
        match &self.body {
            Body::Bytes(b) => Some(b),
            Body::Stream(_) => None,
        }
    }

    /// Takes the stream out (it is read once).
    fn take_stream(&self) -> Result<input::Stream, SourceError> {
        let Body::Stream(m) = &self.body else {
            return Err(SourceError::file(
                &self.name,
                "internal error: not a stream",
            ));
        };
        m.lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| {
                SourceError::file(&self.name, "a stream is read once and it was read already")
            })
    }

    /// The memory check of a stream whose first bytes are `head`.
    fn budget(&self, head: &[u8], opts: &LoadOptions) -> Budget {
        Budget::new(
            self.reader.memory_factor_of(head),
            self.reader.format().id(),
            opts.no_memory_check,
        )
    }

    /// Parses the capture, handing its events to `sink` in deltas as they are read (text
    /// formats stream by segment, from a file or as a stream arrives; binary formats are read
    /// whole, then handed over in chunks). `sink` returns false to stop early. Progress and
    /// cancellation go through `opts.progress` (a stream has no total).
    pub fn stream(
        &self,
        opts: &LoadOptions,
        sink: &mut dyn FnMut(&mut TraceDelta) -> bool,
    ) -> Result<(), SourceError> {
        let data = match &self.body {
            Body::Bytes(b) => b,
            Body::Stream(_) => {
                let s = self.take_stream()?;
                return match self.reader.text(&s.head) {
                    Some(t) => {
                        let segment = driver::segment_for(None, 1, opts);
                        let budget = self.budget(&s.head, opts);
                        let mut lines = s.lines(&self.name, segment, budget, opts);
                        driver::stream_pieces(
                            &self.name,
                            &mut lines,
                            t.parser,
                            t.headerless,
                            opts,
                            sink,
                        )
                    }
                    None => {
                        let budget = self.budget(&s.head, opts);
                        let (data, cut) = s.read_all(&self.name, budget, opts)?;
                        let mut go = true;
                        self.reader
                            .stream(&self.name, &data, opts, &mut |d| {
                                go = sink(d);
                                go
                            })
                            .map_err(|e| with_cut(e, cut.as_ref()))?;
                        if let Some(w) = cut.filter(|_| go) {
                            sink(&mut TraceDelta {
                                warnings: vec![w],
                                ..Default::default()
                            });
                        }
                        Ok(())
                    }
                };
            }
        };
        if let Some(p) = &opts.progress {
            p.total.store(data.len() as u64, Ordering::Relaxed);
        }
        // A file that shrinks reads as zeros past its new end (no events come of them: text has
        // no lines there, binary records are empty or fail to decode), and the load ends with
        // the error below: the events before the cut are what the sink got.
        // Each task and process costs memory of its own in every later stage: counted as they
        // arrive, they stop the load once the estimate no longer fits.
        let mut count = TaskCount::default();
        let mut too_large = None;
        // the pages a text load has parsed go back to the kernel as it goes (a mapped file
        // would otherwise stay resident whole: its size again on top of the events)
        let consumed = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let opts = &LoadOptions {
            consumed: Some(std::sync::Arc::clone(&consumed)),
            ..opts.clone()
        };
        let mut released = 0u64;
        let r = self.reader.stream(&self.name, data, opts, &mut |d| {
            if let Some(b) = &self.budget
                && let Err(e) = count.add(d).check(b)
            {
                too_large = Some(e);
                return false;
            }
            let at = consumed.load(Ordering::Relaxed);
            if let Bytes::Map(m) = data
                && at >= released + crate::sources::text::driver::SEGMENT_BYTES as u64
            {
                m.release_before(at as usize);
                released = at;
            }
            sink(d)
        });
        if let Some(p) = &opts.progress {
            p.done.store(data.len() as u64, Ordering::Relaxed);
        }
        if let Some(e) = data.shrunk_error(&self.name) {
            return Err(e);
        }
        match too_large {
            Some(e) => Err(SourceError::file(&self.name, e.to_string())),
            None => r,
        }
    }

    /// What the capture says of its kernel (`Trace::kernel_release`, `Trace::kernel_hz`,
    /// `Trace::rseq_irqs_off`), read from its first delta only, where the reader streams by
    /// segment: a text capture's header (`cidscope vm --record`) and its first lines. Binary
    /// captures say nothing here: they are decoded whole, and their trace carries the release
    /// their header names.
    pub fn kernel_facts(&self, opts: &LoadOptions) -> HeadFacts {
        // a text format hands its first segment over before reading the rest
        if !self.is_text() {
            return HeadFacts::default();
        }
        let mut meta = Trace::new(&self.name, self.format);
        // one small piece, read on this thread: the header is at the start (workers would parse
        // megabytes ahead only to have them thrown away)
        let first = LoadOptions {
            progress: None,
            serial: true,
            segment_bytes: Some(64 << 10),
            ..opts.clone()
        };
        // a stream is read once, by the load: its header is in the bytes sniffed already
        let head;
        let data: &[u8] = match &self.body {
            // (the header's lines are at the start: the rest is not even split into pieces)
            Body::Bytes(b) => &b[..b.len().min(1 << 20)],
            Body::Stream(m) => {
                head = m
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .as_ref()
                    .map(|s| s.head.clone())
                    .unwrap_or_default();
                &head
            }
        };
        let _ = self.reader.stream(&self.name, data, &first, &mut |d| {
            meta.apply(d);
            false
        });
        HeadFacts {
            release: meta.kernel_release,
            hz: meta.kernel_hz,
            rseq_irqs_off: meta.rseq_irqs_off,
        }
    }

    /// Parses the whole capture into a trace.
    pub fn load(&self, opts: &LoadOptions) -> Result<Trace, SourceError> {
        let opts = LoadOptions {
            format: Some(self.format),
            ..opts.clone()
        };
        match &self.body {
            // a large mapped text file: read as a stream, whose parsed pages go back to the
            // kernel as it goes (read whole, the file stays resident whole beside its events)
            Body::Bytes(b @ Bytes::Map(_))
                if b.len() >= 4 * driver::SEGMENT_BYTES && self.reader.text(b).is_some() =>
            {
                Trace::from_deltas(&self.name, self.format, |sink| self.stream(&opts, sink))
            }
            Body::Bytes(b) => self.checked(b, load_bytes(&self.name, b, &opts)),
            Body::Stream(_) if self.reader.text(&[]).is_some() => {
                Trace::from_deltas(&self.name, self.format, |sink| self.stream(&opts, sink))
            }
            Body::Stream(_) => {
                let s = self.take_stream()?;
                let budget = self.budget(&s.head, &opts);
                let (data, cut) = s.read_all(&self.name, budget, &opts)?;
                let mut trace = self
                    .reader
                    .load(&self.name, &data, &opts)
                    .map_err(|e| with_cut(e, cut.as_ref()))?;
                trace.warnings.extend(cut);
                Ok(trace)
            }
        }
    }

    /// [`Opened::load`], with `beside` run on another thread over the events in time order as
    /// the load packs them, where the format can (a binary capture in memory: see
    /// [`crate::sources::file_format::FileFormat::load_beside`]). Its result when it ran over
    /// the trace's events in the trace's order; else `None`, and the caller runs its pass on
    /// the trace.
    pub fn load_beside<R: Send>(
        &self,
        opts: &LoadOptions,
        beside: impl Fn(&Trace, &mut dyn crate::events::EventChunks) -> R + Sync,
    ) -> Result<(Trace, Option<R>), SourceError> {
        let text = |b: &Bytes| self.reader.text(b).is_some();
        let Body::Bytes(b) = &self.body else {
            return Ok((self.load(opts)?, None));
        };
        if text(b) {
            return Ok((self.load(opts)?, None));
        }
        let opts = LoadOptions {
            format: Some(self.format),
            ..opts.clone()
        };
        let out = std::sync::Mutex::new(None);
        let pass = |t: &Trace, c: &mut dyn crate::events::EventChunks| {
            let r = beside(t, c);
            *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        };
        let r = load_bytes_with(&self.name, b, &opts, |reader, name, data, opts| {
            reader.load_beside(name, data, opts, &pass)
        });
        let (trace, in_order) = match r {
            Ok((t, in_order)) => (Ok(t), in_order),
            Err(e) => (Err(e), false),
        };
        let trace = self.checked(b, trace)?;
        let r = out.into_inner().unwrap_or_else(|e| e.into_inner());
        Ok((trace, r.filter(|_| in_order)))
    }

    /// A load of the bytes `b` held whole, checked: the file shrinking under the map, and the
    /// memory budget's tasks (binary readers hand over their tasks at the end: checked before
    /// any index).
    fn checked(&self, b: &Bytes, r: Result<Trace, SourceError>) -> Result<Trace, SourceError> {
        if let Some(e) = b.shrunk_error(&self.name) {
            return Err(e);
        }
        let trace = r?;
        if let Some(budget) = &self.budget {
            let processes = trace
                .tasks
                .iter()
                .filter(|(t, m)| m.tgid == Some(**t))
                .count();
            budget
                .check(trace.tasks.len() as u64, processes as u64)
                .map_err(|e| SourceError::file(&self.name, e.to_string()))?;
        }
        Ok(trace)
    }
}

/// A reader's error on data a damaged compressed stream cut short, with why it ended there.
fn with_cut(mut e: SourceError, cut: Option<&crate::events::Warning>) -> SourceError {
    if let Some(w) = cut {
        let why = w
            .message
            .split_once(": ")
            .map_or(&w.message[..], |(_, m)| m);
        e.message = format!("{} [{why}]", e.message);
    }
    e
}

/// Tasks and processes (tasks that lead their thread group) a stream has shown so far.
#[derive(Default)]
struct TaskCount {
    tasks: u64,
    processes: u64,
}

impl TaskCount {
    fn add(&mut self, d: &TraceDelta) -> &Self {
        // a task whose tgid became known comes again: counted twice, on the safe side
        self.tasks += d.tasks.len() as u64;
        self.processes += d.tasks.iter().filter(|(t, m)| m.tgid == Some(*t)).count() as u64;
        self
    }

    fn check(&self, b: &memory::Budget) -> Result<(), memory::TooLarge> {
        b.check(self.tasks, self.processes)
    }
}

/// Loads a capture file.
pub fn load(path: &Path, opts: &LoadOptions) -> Result<Trace, SourceError> {
    open(path, opts)?.load(opts)
}

/// Loads a capture held in memory (`name` is used in messages).
pub fn load_bytes(name: &str, data: &[u8], opts: &LoadOptions) -> Result<Trace, SourceError> {
    load_bytes_with(name, data, opts, |reader, name, data, opts| {
        reader.load(name, data, opts)
    })
}

/// [`load_bytes`] with the reader's call given.
fn load_bytes_with<T>(
    name: &str,
    data: &[u8],
    opts: &LoadOptions,
    read: impl FnOnce(&dyn FileFormat, &str, &[u8], &LoadOptions) -> Result<T, SourceError>,
) -> Result<T, SourceError> {
    if let Some(p) = &opts.progress {
        p.total.store(data.len() as u64, Ordering::Relaxed);
    }
    if data.is_empty() {
        return Err(SourceError::file(name, "empty input: expected a capture"));
    }
    let r = read(reader_of(name, data, opts)?, name, data, opts)?;
    if let Some(p) = &opts.progress {
        p.done.store(data.len() as u64, Ordering::Relaxed);
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::error::Location;

    #[test]
    fn empty_and_garbage_are_errors_with_location() {
        let o = LoadOptions::default();
        let e = load_bytes("x.txt", b"", &o).unwrap_err();
        assert_eq!(e.location, Location::File);
        let e = load_bytes("x.txt", b"\n\nhello world\n", &o).unwrap_err();
        assert_eq!(e.location, Location::Line(3));
        assert!(e.to_string().starts_with("x.txt:3: not a capture"), "{e}");
    }
}
