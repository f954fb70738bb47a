//! A stream cut into runs of whole lines for the text driver, as the bytes arrive: a run is
//! handed over when it reaches the segment size, or when the stream pauses (a live
//! `trace_pipe`, a slow FIFO) with whole lines waiting. Memory stays a few segments whatever
//! the stream's length: a run of NUL bytes where a line starts (a file padded with zeros,
//! `/dev/zero` appended) is counted and not kept, and a line longer than [`MAX_LINE`] keeps only
//! its first [`KEEP`] bytes (all that any message quotes of it), the rest counted.

use super::budget::Budget;
use super::feed::{Feed, Fill};
use crate::events::Warning;
use crate::sources::error::SourceError;
use crate::sources::options::LoadOptions;
use crate::sources::text::pieces::{Piece, Pieces, nul_tail};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long a stream may pause before the whole lines it gave are handed over.
pub const PAUSE: Duration = Duration::from_millis(100);
/// Bytes asked of the feed per read.
const READ: usize = 1 << 16;
/// The longest line a stream keeps whole: no capture writes one near it (an ftrace line is
/// under 4 KiB, a trace_marker message at most 4 KiB), so a longer one is damage.
pub const MAX_LINE: usize = 1 << 20;
/// What is kept of a longer line: its start, which the parser reads and messages quote.
pub const KEEP: usize = 4096;

pub struct StreamLines<'o> {
    name: String,
    feed: Box<dyn Feed>,
    /// Bytes read and not yet handed over (the start of a line at [0]).
    buf: Vec<u8>,
    /// Position of the last newline in `buf`.
    last_nl: Option<usize>,
    target: usize,
    ended: bool,
    read: u64,
    budget: Budget,
    opts: &'o LoadOptions,
    /// Bytes read from the feed (`read` counts those kept).
    consumed: u64,
    /// NUL bytes at a line start not kept yet: (their count, the byte offset of the first).
    nul_run: Option<(u64, u64)>,
    /// The line being read is over [`MAX_LINE`]: its bytes are counted until its newline.
    discarding: bool,
    /// Lines cut to [`KEEP`] bytes, the bytes not kept, the byte offset of the first.
    overlong: (u64, u64, u64),
    /// The read error that ended a decompressed stream early (a file cut or damaged), and the
    /// byte offset of the decompressed data where it came.
    stopped: Option<(u64, String)>,
    /// A scratch buffer for reads.
    scratch: Vec<u8>,
    /// The byte offset where the line being read starts.
    line_at: u64,
}

impl<'o> StreamLines<'o> {
    /// `head`: bytes already read from `feed` (for detection).
    pub fn new(
        name: &str,
        head: Vec<u8>,
        feed: Box<dyn Feed>,
        target: usize,
        budget: Budget,
        opts: &'o LoadOptions,
    ) -> StreamLines<'o> {
        let last_nl = memchr::memrchr(b'\n', &head);
        let read = head.len() as u64;
        StreamLines {
            name: name.to_string(),
            feed,
            buf: head,
            last_nl,
            target: target.max(1),
            ended: false,
            read,
            budget,
            opts,
            consumed: read,
            nul_run: None,
            discarding: false,
            overlong: (0, 0, 0),
            stopped: None,
            scratch: Vec::new(),
            line_at: 0,
        }
    }

    /// Appends `new` (bytes just read) to `buf`: a NUL run at a line start is counted, not
    /// kept (until a byte that is not NUL shows it was no tail: then it is kept, up to a line's
    /// worth), and a line past [`MAX_LINE`] is cut to its first [`KEEP`] bytes.
    fn take(&mut self, mut new: &[u8]) {
        self.consumed += new.len() as u64;
        while !new.is_empty() {
            let here = self.consumed - new.len() as u64;
            if self.discarding {
                match memchr::memchr(b'\n', new) {
                    None => {
                        self.overlong.1 += new.len() as u64;
                        return;
                    }
                    Some(p) => {
                        self.overlong.1 += p as u64;
                        self.discarding = false;
                        new = &new[p..];
                        continue;
                    }
                }
            }
            let line_start = self.buf.last().is_none_or(|&b| b == b'\n');
            if line_start && new[0] == 0 {
                let k = new.iter().take_while(|&&b| b == 0).count();
                let run = self.nul_run.get_or_insert((0, here));
                run.0 += k as u64;
                new = &new[k..];
                continue;
            }
            if let Some((n, _)) = self.nul_run.take() {
                // not a tail: the NULs start a line, as in the file
                let keep = n.min(MAX_LINE as u64 + 1) as usize;
                self.buf.resize(self.buf.len() + keep, 0);
            }
            let end = memchr::memchr(b'\n', new).map_or(new.len(), |p| p + 1);
            self.buf.extend_from_slice(&new[..end]);
            if new[end - 1] == b'\n' {
                self.last_nl = Some(self.buf.len() - 1);
                self.line_at = here + end as u64;
            }
            new = &new[end..];
            let line_from = self.last_nl.map_or(0, |p| p + 1);
            if self.buf.len() - line_from > MAX_LINE {
                let cut = line_from + KEEP;
                if self.overlong.0 == 0 {
                    self.overlong.2 = self.line_at;
                }
                self.overlong.0 += 1;
                self.overlong.1 += (self.buf.len() - cut) as u64;
                self.buf.truncate(cut);
                self.discarding = true;
            }
        }
    }

    /// Hands over `buf` up to its last newline, keeping the rest.
    fn cut(&mut self) -> Option<Piece<'static>> {
        let nl = self.last_nl.take()?;
        let rest = self.buf.split_off(nl + 1);
        let mut next = Vec::with_capacity(self.target.min(READ * 4) + rest.len());
        next.extend_from_slice(&rest);
        Some(Piece::Owned(std::mem::replace(&mut self.buf, next)))
    }
}

impl Pieces<'static> for StreamLines<'_> {
    fn next_piece(&mut self, stop: &AtomicBool) -> Result<Option<Piece<'static>>, SourceError> {
        loop {
            if self.ended {
                return Ok(self.cut());
            }
            if self.buf.len() >= self.target && self.last_nl.is_some() {
                return Ok(self.cut());
            }
            let len = self.buf.len();
            // no more than the segment still has room for: pieces stay near their size
            let want = READ.min(self.target.saturating_sub(len).max(1024));
            let mut scratch = std::mem::take(&mut self.scratch);
            scratch.resize(want, 0);
            let r = self.feed.fill(&mut scratch, PAUSE);
            if let Ok(Fill::Data(n)) = r {
                self.take(&scratch[..n]);
            }
            self.scratch = scratch;
            match r {
                Ok(Fill::Data(_)) => {
                    // (a line cut to its start may leave less than before the read)
                    self.read += self.buf.len().saturating_sub(len) as u64;
                    self.budget
                        .check(self.read)
                        .map_err(|e| SourceError::file(&self.name, e.to_string()))?;
                }
                Ok(Fill::End) => self.ended = true,
                Ok(Fill::Idle) => {
                    if stop.load(Ordering::Relaxed) || self.opts.cancelled() {
                        self.ended = true;
                    } else if self.last_nl.is_some() {
                        // the stream paused: what has arrived is shown now
                        return Ok(self.cut());
                    }
                }
                Err(e) if ends_early(&e) && self.consumed > 0 => {
                    // a compressed file cut or damaged: what came before loads, with a word
                    self.stopped = Some((self.consumed, e.to_string()));
                    self.ended = true;
                }
                Err(e) => {
                    return Err(SourceError::file(
                        &self.name,
                        format!("read failed after {} bytes: {e}", self.consumed),
                    ));
                }
            }
        }
    }

    fn partial(&self) -> Option<&[u8]> {
        (self.ended && !self.buf.is_empty()).then_some(&self.buf[..])
    }

    fn size_hint(&self) -> Option<usize> {
        None
    }

    fn warnings(&self, path: &str) -> Vec<Warning> {
        let mut w = Vec::new();
        if let Some((n, at)) = self.nul_run.filter(|_| self.ended) {
            w.push(nul_tail(path, n, at));
        }
        let (lines, bytes, at) = self.overlong;
        if lines > 0 {
            w.push(Warning {
                code: "overlong-lines",
                message: format!(
                    "{path}: {lines} lines are longer than {} MiB (no capture writes one; the first at byte offset {at}): only their first {KEEP} bytes were read, {bytes} bytes of them were not",
                    MAX_LINE >> 20
                ),
            });
        }
        if let Some((at, e)) = &self.stopped {
            w.push(Warning {
                code: "input-cut",
                message: format!(
                    "{path}: the input could not be read past byte {at} of its decompressed data ({e}); the whole lines before it were loaded, nothing after it"
                ),
            });
        }
        w
    }
}

/// A read error that means the input ends early (a decompressor at a cut or damaged place),
/// not that reading failed.
pub fn ends_early(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::InvalidData
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A feed giving its bytes in the pieces listed, a pause between each.
    struct Scripted(std::collections::VecDeque<Option<Vec<u8>>>);

    impl Feed for Scripted {
        fn fill(&mut self, buf: &mut [u8], _: Duration) -> std::io::Result<Fill> {
            match self.0.pop_front() {
                None => Ok(Fill::End),
                Some(None) => Ok(Fill::Idle),
                Some(Some(mut v)) => {
                    let n = v.len().min(buf.len());
                    buf[..n].copy_from_slice(&v[..n]);
                    if n < v.len() {
                        self.0.push_front(Some(v.split_off(n)));
                    }
                    Ok(Fill::Data(n))
                }
            }
        }
    }

    #[test]
    fn pieces_are_whole_lines_and_pauses_hand_over() {
        let opts = LoadOptions::default();
        let script = vec![
            Some(b"a\nb".to_vec()),
            None,
            Some(b"c\nd\n".to_vec()),
            Some(b"tail".to_vec()),
        ];
        let mut s = StreamLines::new(
            "x",
            b"0\n".to_vec(),
            Box::new(Scripted(script.into())),
            1 << 20,
            Budget::unlimited(),
            &opts,
        );
        let stop = AtomicBool::new(false);
        let mut got = Vec::new();
        while let Some(p) = s.next_piece(&stop).unwrap() {
            got.push(p.to_vec());
        }
        assert_eq!(got, vec![b"0\na\n".to_vec(), b"bc\nd\n".to_vec()]);
        assert_eq!(s.partial(), Some(&b"tail"[..]));
    }

    #[test]
    fn a_nul_tail_and_an_endless_line_are_counted_not_held() {
        let opts = LoadOptions::default();
        let mut script = vec![Some(b"a\nb\n".to_vec())];
        script.extend((0..64).map(|_| Some(vec![0u8; 1 << 20])));
        let mut s = StreamLines::new(
            "x",
            Vec::new(),
            Box::new(Scripted(script.into())),
            1 << 16,
            Budget::unlimited(),
            &opts,
        );
        let stop = AtomicBool::new(false);
        let mut got = Vec::new();
        while let Some(p) = s.next_piece(&stop).unwrap() {
            got.extend_from_slice(&p);
            assert!(s.buf.capacity() < 1 << 20, "{}", s.buf.capacity());
        }
        assert_eq!(got, b"a\nb\n");
        assert_eq!(s.partial(), None);
        let w = s.warnings("x");
        assert!(
            w[0].message
                .contains("ends in 67108864 NUL bytes from byte offset 4"),
            "{w:?}"
        );
        // a line that never ends keeps its start only
        let mut script = vec![Some(b"a\n".to_vec())];
        script.extend((0..8).map(|_| Some(vec![b'y'; 1 << 20])));
        script.push(Some(b"\nz\n".to_vec()));
        let mut s = StreamLines::new(
            "x",
            Vec::new(),
            Box::new(Scripted(script.into())),
            1 << 16,
            Budget::unlimited(),
            &opts,
        );
        let mut lines = 0;
        while let Some(p) = s.next_piece(&stop).unwrap() {
            assert!(p.len() <= MAX_LINE + KEEP + (1 << 16), "{}", p.len());
            lines += p.iter().filter(|&&b| b == b'\n').count();
        }
        assert_eq!(lines, 3);
        let w = s.warnings("x");
        assert!(
            w[0].message.contains("1 lines are longer than 1 MiB"),
            "{w:?}"
        );
        assert!(w[0].message.contains("first at byte offset 2"), "{w:?}");
    }

    #[test]
    fn a_large_stream_comes_in_segments() {
        let opts = LoadOptions::default();
        let data: Vec<u8> = (0..10_000)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let mut s = StreamLines::new(
            "x",
            Vec::new(),
            Box::new(Scripted(vec![Some(data.clone())].into())),
            4096,
            Budget::unlimited(),
            &opts,
        );
        let stop = AtomicBool::new(false);
        let mut all = Vec::new();
        let mut n = 0;
        while let Some(p) = s.next_piece(&stop).unwrap() {
            assert_eq!(p.last(), Some(&b'\n'));
            assert!(p.len() < 4096 + 1024 + 20, "{}", p.len());
            all.extend_from_slice(&p);
            n += 1;
        }
        assert_eq!(all, data);
        assert!(n > 10);
        assert_eq!(s.partial(), None);
    }
}
