//! A UTF-8 byte order mark at the start of a text capture (some editors and Windows tools write
//! one) is no part of its first line: detection and every parse of the text formats skip it.

use crate::sources::error::SourceError;
use crate::sources::text::pieces::{Piece, Pieces};
use std::sync::atomic::AtomicBool;

/// The UTF-8 byte order mark, U+FEFF encoded.
pub const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// `data` without a leading [`UTF8_BOM`].
pub fn strip_bom(data: &[u8]) -> &[u8] {
    data.strip_prefix(UTF8_BOM).unwrap_or(data)
}

/// The pieces of `inner` with a byte order mark at offset 0 left out (only there: one later in
/// the file is data, and the parser says so).
pub struct SkipBom<'a, 'p> {
    inner: &'p mut dyn Pieces<'a>,
    first: bool,
}

impl<'a, 'p> SkipBom<'a, 'p> {
    pub fn new(inner: &'p mut dyn Pieces<'a>) -> SkipBom<'a, 'p> {
        SkipBom { inner, first: true }
    }
}

impl<'a> Pieces<'a> for SkipBom<'a, '_> {
    fn next_piece(&mut self, stop: &AtomicBool) -> Result<Option<Piece<'a>>, SourceError> {
        let piece = self.inner.next_piece(stop)?;
        // an empty piece (a capture without a newline) leaves the mark to `partial`
        if !self.first || piece.as_ref().is_none_or(|p| p.is_empty()) {
            return Ok(piece);
        }
        self.first = false;
        Ok(piece.map(|p| match p {
            Piece::Borrowed(b) => Piece::Borrowed(strip_bom(b)),
            Piece::Owned(mut v) => {
                if v.starts_with(UTF8_BOM) {
                    v.drain(..UTF8_BOM.len());
                }
                Piece::Owned(v)
            }
        }))
    }
    fn partial(&self) -> Option<&[u8]> {
        // a capture of one unterminated line: no piece came, the mark is still in front
        let p = self.inner.partial()?;
        Some(if self.first { strip_bom(p) } else { p })
    }
    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
    fn warnings(&self, path: &str) -> Vec<crate::events::Warning> {
        self.inner.warnings(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::text::pieces::SlicePieces;

    fn pieces(data: &[u8], size: usize) -> (Vec<Vec<u8>>, Option<Vec<u8>>) {
        let mut inner = SlicePieces::new(data, size);
        let mut s = SkipBom::new(&mut inner);
        let never = AtomicBool::new(false);
        let mut out = Vec::new();
        while let Some(p) = s.next_piece(&never).unwrap() {
            out.push(p.to_vec());
        }
        (out, s.partial().map(<[u8]>::to_vec))
    }

    #[test]
    fn only_the_mark_at_offset_0_goes() {
        let (p, rest) = pieces(b"\xef\xbb\xbf# tracer: nop\n\xef\xbb\xbfx\n", 4);
        assert_eq!(
            p,
            vec![b"# tracer: nop\n".to_vec(), b"\xef\xbb\xbfx\n".to_vec()]
        );
        assert_eq!(rest, None);
        let (p, rest) = pieces(b"\xef\xbb\xbfcut", 4);
        assert!(p.iter().all(Vec::is_empty), "{p:?}");
        assert_eq!(rest.as_deref(), Some(&b"cut"[..]));
        assert_eq!(strip_bom(b"\xef\xbbx"), b"\xef\xbbx");
    }
}
