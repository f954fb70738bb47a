//! A stream cut into runs of whole lines for the text driver, as the bytes arrive: a run is
//! handed over when it reaches the segment size, or when the stream pauses (a live
//! `trace_pipe`, a slow FIFO) with whole lines waiting. Memory stays a few segments whatever
//! the stream's length.

use super::budget::Budget;
use super::feed::{Feed, Fill};
use crate::sources::error::SourceError;
use crate::sources::options::LoadOptions;
use crate::sources::text::pieces::{Piece, Pieces};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long a stream may pause before the whole lines it gave are handed over.
pub const PAUSE: Duration = Duration::from_millis(100);
/// Bytes asked of the feed per read.
const READ: usize = 1 << 16;

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
            self.buf.resize(len + want, 0);
            let r = self.feed.fill(&mut self.buf[len..], PAUSE);
            let got = match &r {
                Ok(Fill::Data(n)) => *n,
                _ => 0,
            };
            self.buf.truncate(len + got);
            match r {
                Ok(Fill::Data(n)) => {
                    if let Some(p) = memchr::memrchr(b'\n', &self.buf[len..]) {
                        self.last_nl = Some(len + p);
                    }
                    self.read += n as u64;
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
                Err(e) => {
                    return Err(SourceError::file(
                        &self.name,
                        format!("read failed after {} bytes: {e}", self.read),
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
