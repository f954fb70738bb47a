//! Recordings written as the capture arrives, so that a recorder killed at any moment (SIGKILL,
//! the OOM killer, a panic, a hangup) or stopped by a full disk leaves a file that replays.
//!
//! The file is ftrace text: the tracefs header (its entries count reserved, filled in at the
//! end), a `# cidscope-record: chunked ...` line that says how the file is written, then the
//! event lines in chunks. Each chunk is written with one `write` and ends with a
//! `# cidscope-chunk: N events=E` line (E: events written so far); chunks are flushed about
//! every second. A finished recording ends with `# cidscope-record: end events=E chunks=N`.
//! The ftrace reader keeps every whole line of a cut file (a last line cut mid-way is dropped
//! with its `truncated-line` warning) and, with the chunked line and no end line, warns
//! `recording-cut`, naming the last complete chunk.

use super::ftrace::{Header, write_header_counts};
use std::io::{self, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The header line of a chunked recording.
pub const CHUNKED: &str = "# cidscope-record: chunked";
/// The line ending each chunk.
pub const CHUNK: &str = "# cidscope-chunk:";
/// The last line of a finished recording.
pub const END: &str = "# cidscope-record: end";
/// How often a recorder flushes what it has.
pub const FLUSH_EVERY: Duration = Duration::from_secs(1);
/// Width reserved for `N/N` in the entries line (two 20-digit counts and the slash).
const COUNTS_WIDTH: usize = 41;

/// Why a recording stopped (each names the file).
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error(
        "--record {}: cannot create: {source}",
        crate::sources::shown_path(path)
    )]
    Create { path: PathBuf, source: io::Error },
    #[error(
        "--record {}: write failed: {source}; the recording stopped",
        crate::sources::shown_path(path)
    )]
    Write { path: PathBuf, source: io::Error },
    #[error(
        "--record {}: cannot start the recorder's thread: {source}",
        crate::sources::shown_path(path)
    )]
    Thread { path: PathBuf, source: io::Error },
    #[error(
        "--record {}: the recorder's thread panicked; the recording stopped",
        crate::sources::shown_path(path)
    )]
    Panicked { path: PathBuf },
}

/// A recording being written.
pub struct RecordFile {
    file: std::fs::File,
    path: PathBuf,
    /// Where the reserved entries count starts, when the header has one.
    counts_at: Option<u64>,
    buf: Vec<u8>,
    /// Events in `buf`, and written before it.
    pending: u64,
    events: u64,
    chunks: u64,
    last_flush: Instant,
}

impl RecordFile {
    /// Creates `path` and writes, flushed: `preamble` (comment lines, e.g. a VM's facts), the
    /// tracefs header of `header` when given (`None`: `trace_pipe` text without one), and the
    /// chunked line.
    pub fn create(path: &Path, preamble: &str, header: Option<&Header>) -> io::Result<RecordFile> {
        let mut file = std::fs::File::create(path)?;
        let mut head = preamble.as_bytes().to_vec();
        let mut counts_at = None;
        if let Some(h) = header {
            let start = head.len();
            write_header_counts(&mut head, h, &format!("{:<COUNTS_WIDTH$}", "0/0"))?;
            let key = b"# entries-in-buffer/entries-written: ";
            counts_at =
                memchr::memmem::find(&head[start..], key).map(|p| (start + p + key.len()) as u64);
        }
        // (after the header: the legend stays where tracefs prints it)
        writeln!(
            head,
            "{CHUNKED}: written as the capture arrived, in chunks each ending with a \"{CHUNK}\" line; \"{END}\" ends a complete recording"
        )?;
        file.write_all(&head)?;
        Ok(RecordFile {
            file,
            path: path.to_path_buf(),
            counts_at,
            buf: Vec::with_capacity(1 << 16),
            pending: 0,
            events: 0,
            chunks: 0,
            last_flush: Instant::now(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The buffer of the chunk being made: append whole lines.
    pub fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Counts `n` events appended to [`RecordFile::buffer`].
    pub fn add_events(&mut self, n: u64) {
        self.pending += n;
    }

    /// Events written so far (flushed or not).
    pub fn events(&self) -> u64 {
        self.events + self.pending
    }

    /// Writes the chunk if [`FLUSH_EVERY`] has passed since the last one.
    pub fn maybe_flush(&mut self) -> io::Result<()> {
        if self.last_flush.elapsed() >= FLUSH_EVERY {
            self.flush_chunk()?;
        }
        Ok(())
    }

    /// Writes what the buffer holds as one chunk, with its closing line, in one write.
    pub fn flush_chunk(&mut self) -> io::Result<()> {
        self.last_flush = Instant::now();
        if self.buf.is_empty() {
            return Ok(());
        }
        let events = self.events + self.pending;
        writeln!(self.buf, "{CHUNK} {} events={events}", self.chunks + 1)?;
        self.file.write_all(&self.buf)?;
        self.buf.clear();
        self.chunks += 1;
        self.events = events;
        self.pending = 0;
        Ok(())
    }

    /// Writes the last chunk and the end line, fills in the entries count and syncs the file.
    /// Returns the events written.
    pub fn finish(mut self) -> io::Result<u64> {
        self.flush_chunk()?;
        writeln!(
            self.file,
            "{END} events={} chunks={}",
            self.events, self.chunks
        )?;
        if let Some(at) = self.counts_at {
            let counts = format!("{0}/{0}", self.events);
            self.file.seek(io::SeekFrom::Start(at))?;
            self.file
                .write_all(format!("{counts:<COUNTS_WIDTH$}").as_bytes())?;
        }
        self.file.sync_data()?;
        Ok(self.events)
    }
}

/// How a recording goes, for whoever shows it (the TUI's status bar, a headless wait loop).
#[derive(Debug, Default)]
pub struct RecordStatus {
    pub path: String,
    /// Events written (flushed or buffered).
    pub events: AtomicU64,
    /// Set once writing failed: the recording stopped.
    pub failed: AtomicBool,
    pub error: Mutex<Option<String>>,
}

impl RecordStatus {
    pub fn new(path: &Path) -> RecordStatus {
        RecordStatus {
            path: path.display().to_string(),
            ..Default::default()
        }
    }

    /// The error that stopped the recording, if one did.
    pub fn error(&self) -> Option<String> {
        if !self.failed.load(Ordering::Acquire) {
            return None;
        }
        self.error.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn fail(&self, e: String) {
        let mut g = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if g.is_none() {
            *g = Some(e);
        }
        drop(g);
        self.failed.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::ftrace::Legend;

    #[test]
    fn chunks_end_at_lines_and_the_end_fills_in_the_count() {
        let dir = std::env::temp_dir().join(format!("cidscope-record-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("r.txt");
        let h = Header {
            entries: 0,
            ncpus: 2,
            note: None,
            legend: Legend::Tracefs,
        };
        let mut r = RecordFile::create(&p, "# pre\n", Some(&h)).unwrap();
        r.buffer().extend_from_slice(b"a\nb\n");
        r.add_events(2);
        r.flush_chunk().unwrap();
        r.flush_chunk().unwrap(); // nothing new: no empty chunk
        let cut = std::fs::read_to_string(&p).unwrap();
        assert!(cut.starts_with("# pre\n# tracer: nop\n"), "{cut}");
        assert!(cut.contains(&format!("{CHUNKED}: ")));
        assert!(
            cut.ends_with("a\nb\n# cidscope-chunk: 1 events=2\n"),
            "{cut}"
        );
        assert!(cut.contains("entries-in-buffer/entries-written: 0/0 "));
        r.buffer().extend_from_slice(b"c\n");
        r.add_events(1);
        assert_eq!(r.finish().unwrap(), 3);
        let done = std::fs::read_to_string(&p).unwrap();
        assert!(
            done.contains("entries-in-buffer/entries-written: 3/3 "),
            "{done}"
        );
        assert!(
            done.ends_with(
                "c\n# cidscope-chunk: 2 events=3\n# cidscope-record: end events=3 chunks=2\n"
            ),
            "{done}"
        );
        assert_eq!(
            done.len(),
            cut.len()
                + "c\n# cidscope-chunk: 2 events=3\n# cidscope-record: end events=3 chunks=2\n"
                    .len()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
