//! Where the text driver takes its input from: runs of whole lines, from a mapped file cut at
//! newlines or from a stream as it arrives.

use crate::events::Warning;
use crate::sources::error::SourceError;
use std::sync::atomic::AtomicBool;

/// A run of whole lines of the input: borrowed from a mapped file, or read from a stream.
pub enum Piece<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Piece<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Piece::Borrowed(b) => b,
            Piece::Owned(v) => v,
        }
    }
}

/// Where the driver takes its pieces from, in input order.
pub trait Pieces<'a>: Send {
    /// The next run of whole lines (each ending in a newline), or `None` at the end; a stream
    /// waiting for data gives up (as at its end) once `stop` is set.
    fn next_piece(&mut self, stop: &AtomicBool) -> Result<Option<Piece<'a>>, SourceError>;
    /// What followed the last newline, once the input has ended (a line cut short).
    fn partial(&self) -> Option<&[u8]>;
    /// The input's size when known up front (a mapped file), for the choice of threads.
    fn size_hint(&self) -> Option<usize>;
    /// What the input layer left out (a NUL tail, overlong lines, a cut compressed stream).
    fn warnings(&self, _path: &str) -> Vec<Warning> {
        Vec::new()
    }
}

/// The pieces of a capture held whole in memory: about `size` bytes each, cut at newlines.
pub struct SlicePieces<'a> {
    body: &'a [u8],
    partial: Option<&'a [u8]>,
    /// A tail of NUL bytes: (count, byte offset).
    nul_tail: Option<(u64, u64)>,
    ranges: std::vec::IntoIter<(usize, usize)>,
}

impl<'a> SlicePieces<'a> {
    pub fn new(data: &'a [u8], size: usize) -> SlicePieces<'a> {
        // An unterminated last line is a record cut short: reported, never counted.
        let (body, partial) = match data.iter().rposition(|&b| b == b'\n') {
            Some(p) if p + 1 < data.len() => (&data[..=p], Some(&data[p + 1..])),
            Some(_) => (data, None),
            None => (&data[..0], Some(data)),
        };
        // a tail of NUL bytes is padding, not a line cut short
        let nul_tail = partial
            .filter(|p| p.iter().all(|&b| b == 0))
            .map(|p| (p.len() as u64, body.len() as u64));
        SlicePieces {
            body,
            partial: partial.filter(|_| nul_tail.is_none()),
            nul_tail,
            ranges: split_at_lines_every(body, size.max(1)).into_iter(),
        }
    }
}

impl<'a> Pieces<'a> for SlicePieces<'a> {
    fn next_piece(&mut self, _stop: &AtomicBool) -> Result<Option<Piece<'a>>, SourceError> {
        Ok(self
            .ranges
            .next()
            .map(|(a, b)| Piece::Borrowed(&self.body[a..b])))
    }
    fn partial(&self) -> Option<&[u8]> {
        self.partial
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.body.len())
    }
    fn warnings(&self, path: &str) -> Vec<Warning> {
        self.nul_tail
            .map(|(n, at)| nul_tail(path, n, at))
            .into_iter()
            .collect()
    }
}

/// The warning of an input that ends in NUL bytes.
pub fn nul_tail(path: &str, n: u64, at: u64) -> Warning {
    Warning {
        code: "nul-tail",
        message: format!(
            "{path}: the input ends in {n} NUL bytes from byte offset {at} (a file padded with zeros, or /dev/zero appended): no events, not loaded"
        ),
    }
}

/// The first piece of a large capture: small, so that its first events reach a reader (the
/// TUI's first frame) within a few milliseconds; the pieces after it double up to their size.
const FIRST_PIECE: usize = 128 << 10;

/// Splits `data` into pieces of about `size` bytes that end at newlines (a large capture's
/// first pieces smaller, growing to `size`).
fn split_at_lines_every(data: &[u8], size: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut step = if data.len() > 16 * size {
        FIRST_PIECE.min(size)
    } else {
        size
    };
    while start < data.len() {
        let target = start + step;
        step = (step * 2).min(size);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_lines_whole() {
        let data = b"aaa\nbb\ncccc\nd\neeeee\n";
        for size in 1..12 {
            let r = split_at_lines_every(data, size);
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
