//! Sources: everything that turns a capture into canonical events. Nothing here knows the UI.
//!
//! Formats are detected from content (magic numbers, headers, the shape of the first lines),
//! never from the file name; `--format` overrides detection.

pub mod error;
pub mod ftrace_text;
pub mod live;
pub mod memory;
pub mod payload;
pub mod perf_data;
pub mod perf_script;
pub mod text;
pub mod trace_dat;

pub use error::{Location, SourceError};

use crate::events::{Format, Trace, TraceDelta};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Progress of a load, shared with whoever shows it; `cancel` stops the load early.
#[derive(Debug, Default)]
pub struct Progress {
    pub done: AtomicU64,
    pub total: AtomicU64,
    pub cancel: AtomicBool,
}

impl Progress {
    pub fn fraction(&self) -> f64 {
        let t = self.total.load(Ordering::Relaxed);
        if t == 0 {
            return 0.0;
        }
        (self.done.load(Ordering::Relaxed) as f64 / t as f64).min(1.0)
    }
}

#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Skip detection and read the input as this format.
    pub format: Option<Format>,
    /// Skip malformed lines (counted in a warning) instead of stopping at the first one.
    pub skip_bad_lines: bool,
    /// Parse on one thread (tests compare this with the parallel parse).
    pub serial: bool,
    /// Load even when the estimate says the capture will not fit in memory.
    pub no_memory_check: bool,
    /// Threads for the parse (default: one per core for inputs of 8 MB and more).
    pub threads: Option<usize>,
    /// Bytes per delta of a streaming load (default `text::SEGMENT_BYTES`; tests use small ones).
    pub segment_bytes: Option<usize>,
    pub progress: Option<Arc<Progress>>,
}

impl LoadOptions {
    pub fn cancelled(&self) -> bool {
        self.progress
            .as_ref()
            .is_some_and(|p| p.cancel.load(Ordering::Relaxed))
    }
}

const TRACE_DAT_MAGIC: &[u8] = b"\x17\x08\x44tracing";
const PERF_MAGIC: &[u8] = b"PERFILE2";

/// Guesses the format from the first bytes of the input.
pub fn detect(data: &[u8]) -> Option<Format> {
    if data.starts_with(TRACE_DAT_MAGIC) {
        return Some(Format::TraceDat);
    }
    if data.starts_with(PERF_MAGIC) {
        return Some(Format::PerfData);
    }
    let head = &data[..data.len().min(256 << 10)];
    let mut saw_hash_header = false;
    let mut ftrace_lines = 0;
    let mut plugin_form = false;
    for line in head.split(|&b| b == b'\n').take(400) {
        if line.starts_with(b"# tracer:") || line.starts_with(b"# entries-in-buffer") {
            return Some(Format::Ftrace);
        }
        if line.starts_with(b"#") {
            saw_hash_header = true;
            continue;
        }
        if line.starts_with(b"cpus=") || line.starts_with(b"version = ") {
            return Some(Format::TraceCmdReport);
        }
        if let Some(h) = ftrace_text::split_head(line) {
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
            continue;
        }
        if ftrace_lines == 0 && perf_script::split_head(line).is_some() {
            return Some(Format::PerfScript);
        }
    }
    if ftrace_lines > 0 {
        return Some(if plugin_form {
            Format::TraceCmdReport
        } else if saw_hash_header {
            Format::Ftrace
        } else {
            Format::TracePipe
        });
    }
    None
}

/// The bytes of an opened capture: a private read-only map of a file, or data built into the
/// binary (the demo).
pub enum Bytes {
    Map(memmap2::Mmap),
    Static(&'static [u8]),
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

/// A capture that passed every check that needs no parsing: it exists, is not empty, fits in
/// memory, and its format is known. Parsing may still find a bad record.
pub struct Opened {
    pub name: String,
    pub data: Bytes,
    pub format: Format,
}

/// Opens a capture file and detects its format.
pub fn open(path: &Path, opts: &LoadOptions) -> Result<Opened, SourceError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path)
        .map_err(|e| SourceError::file(&name, format!("cannot open: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| SourceError::file(&name, format!("cannot stat: {e}")))?;
    if meta.is_dir() {
        return Err(SourceError::file(
            &name,
            "is a directory; expected a capture file (ftrace text, trace-cmd report, perf script, perf.data or trace.dat)",
        ));
    }
    if meta.len() == 0 {
        return Err(SourceError::file(
            &name,
            "empty file (0 bytes): expected a capture (ftrace text, trace-cmd report, perf script, perf.data or trace.dat)",
        ));
    }
    // SAFETY: the map is read-only and private; a file truncated underneath us while we read is
    // the one case mmap cannot guard against, as with every mmap-based reader.
    let map = unsafe { memmap2::Mmap::map(&file) }
        .map_err(|e| SourceError::file(&name, format!("cannot map: {e}")))?;
    let format = format_of(&name, &map, opts)?;
    if !opts.no_memory_check {
        memory::check(meta.len(), format).map_err(|m| SourceError::file(&name, m))?;
    }
    Ok(Opened {
        name,
        data: Bytes::Map(map),
        format,
    })
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
    Ok(Opened {
        name: name.to_string(),
        format: format_of(name, data, opts)?,
        data: Bytes::Static(data),
    })
}

/// The format `--format` names, or the one detected from the content.
fn format_of(name: &str, data: &[u8], opts: &LoadOptions) -> Result<Format, SourceError> {
    if let Some(f) = opts.format.or_else(|| detect(data)) {
        return Ok(f);
    }
    // the first line that is not blank (an all-blank input names its first line)
    let (line, first) = data
        .split(|&b| b == b'\n')
        .enumerate()
        .find(|(_, l)| !l.iter().all(|b| b.is_ascii_whitespace()))
        .map_or((1, &b""[..]), |(i, l)| (i as u64 + 1, l));
    Err(SourceError::at_line(
        name,
        line,
        format!(
            "not a capture cidscope reads: expected ftrace text, trace-cmd report, perf script text, perf.data or trace.dat; found \"{}\"",
            error::excerpt(first, 60)
        ),
    ))
}

impl Opened {
    /// Parses the capture, handing its events to `sink` in deltas as they are read (text
    /// formats stream by segment; binary formats are read whole, then handed over in chunks). `sink` returns false to
    /// stop early. Progress and cancellation go through `opts.progress`.
    pub fn stream(
        &self,
        opts: &LoadOptions,
        sink: &mut dyn FnMut(&mut TraceDelta) -> bool,
    ) -> Result<(), SourceError> {
        if let Some(p) = &opts.progress {
            p.total.store(self.data.len() as u64, Ordering::Relaxed);
        }
        let r = match self.format {
            Format::Ftrace | Format::TracePipe | Format::TraceCmdReport => text::stream_text(
                &self.name,
                &self.data,
                self.format,
                &ftrace_text::FtraceText,
                opts,
                sink,
            ),
            Format::PerfScript => text::stream_text(
                &self.name,
                &self.data,
                self.format,
                &perf_script::PerfScript,
                opts,
                sink,
            ),
            // Binary captures are decoded whole (records must be put in time order first),
            // then handed over in pieces straight from the merge: no store is built here
            // for the consumer to take apart again.
            Format::TraceDat => trace_dat::decode(&self.name, &self.data, opts).map(|(t, cpus)| {
                stream_merged(t, cpus, sink);
            }),
            Format::PerfData => perf_data::decode(&self.name, &self.data, opts).map(|(t, evs)| {
                stream_merged(t, vec![evs], sink);
            }),
            Format::Live | Format::Sim => load_bytes(
                &self.name,
                &self.data,
                &LoadOptions {
                    format: Some(self.format),
                    ..opts.clone()
                },
            )
            .map(|t| {
                let evs = t.events.iter().collect();
                stream_merged(t, vec![evs], sink)
            }),
        };
        if let Some(p) = &opts.progress {
            p.done.store(self.data.len() as u64, Ordering::Relaxed);
        }
        r
    }

    /// What the capture says of its kernel (`Trace::kernel_release`, `Trace::kernel_hz`),
    /// read from its first slice only: a text capture's header (`cidscope vm --record`).
    /// Binary captures say nothing here yet (their uname / HEADER_OSRELEASE are read whole).
    pub fn kernel_facts(&self, opts: &LoadOptions) -> (Option<String>, Option<u32>) {
        if !matches!(
            self.format,
            Format::Ftrace | Format::TracePipe | Format::TraceCmdReport
        ) {
            return (None, None);
        }
        let mut meta = Trace::new(&self.name, self.format);
        let first = LoadOptions {
            progress: None,
            ..opts.clone()
        };
        let _ = self.stream(&first, &mut |d| {
            meta.apply(d);
            false
        });
        (meta.kernel_release, meta.kernel_hz)
    }

    /// Parses the whole capture into a trace.
    pub fn load(&self, opts: &LoadOptions) -> Result<Trace, SourceError> {
        load_bytes(
            &self.name,
            &self.data,
            &LoadOptions {
                format: Some(self.format),
                ..opts.clone()
            },
        )
    }
}

/// Events per delta of a binary capture.
const BINARY_DELTA_EVENTS: usize = 1 << 16;

/// Hands a decoded binary capture to `sink`: the first delta carries the metadata, every delta
/// a piece of the merged events (one buffer, reused while the sink leaves it).
fn stream_merged(
    t: Trace,
    cpus: Vec<Vec<crate::events::Event>>,
    sink: &mut dyn FnMut(&mut TraceDelta) -> bool,
) {
    let mut d = TraceDelta::metadata(t);
    let mut sent = false;
    trace_dat::merge::merge_chunks(cpus, BINARY_DELTA_EVENTS, &mut |buf| {
        std::mem::swap(&mut d.events, buf);
        let go = sink(&mut d);
        std::mem::swap(&mut d.events, buf);
        sent = true;
        d.new_strings.clear();
        d.tasks.clear();
        d.warnings.clear();
        go
    });
    if !sent {
        // no events: the metadata still goes over
        sink(&mut d);
    }
}

/// Loads a capture file.
pub fn load(path: &Path, opts: &LoadOptions) -> Result<Trace, SourceError> {
    open(path, opts)?.load(opts)
}

/// Loads a capture held in memory (`name` is used in messages).
pub fn load_bytes(name: &str, data: &[u8], opts: &LoadOptions) -> Result<Trace, SourceError> {
    if let Some(p) = &opts.progress {
        p.total.store(data.len() as u64, Ordering::Relaxed);
    }
    if data.is_empty() {
        return Err(SourceError::file(name, "empty input: expected a capture"));
    }
    let format = format_of(name, data, opts)?;
    let trace = match format {
        Format::Ftrace | Format::TracePipe | Format::TraceCmdReport => {
            text::parse_text(name, data, format, &ftrace_text::FtraceText, opts)?
        }
        Format::PerfScript => text::parse_text(name, data, format, &perf_script::PerfScript, opts)?,
        Format::PerfData => perf_data::load(name, data, opts)?,
        Format::TraceDat => trace_dat::load(name, data, opts)?,
        Format::Live | Format::Sim => {
            return Err(SourceError::file(
                name,
                format!("{} is not a file format", format.describe()),
            ));
        }
    };
    if let Some(p) = &opts.progress {
        p.done.store(data.len() as u64, Ordering::Relaxed);
    }
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_content() {
        assert_eq!(detect(b"\x17\x08\x44tracing6\0"), Some(Format::TraceDat));
        assert_eq!(detect(b"PERFILE2xxxxxxxx"), Some(Format::PerfData));
        assert_eq!(detect(b"# tracer: nop\n#\n"), Some(Format::Ftrace));
        assert_eq!(detect(b"cpus=2\n"), Some(Format::TraceCmdReport));
        assert_eq!(
            detect(b"  bash-1 [000] .....  1.000001: rseq_update: cpu_id=0\n"),
            Some(Format::TracePipe)
        );
        assert_eq!(
            detect(b"  perf  1484 [000]  1.1:  sched:sched_switch: prev_comm=x\n"),
            Some(Format::PerfScript)
        );
        assert_eq!(detect(b"hello\nworld\n"), None);
    }

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
