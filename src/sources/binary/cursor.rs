//! Bounds-checked reads from a byte buffer, for the binary readers (trace.dat and perf.data).
//!
//! A [`Cursor`] walks a slice that is either the mapped file itself or a decompressed section of
//! it; every read names what it expected, and a failure becomes a [`BinError`] with the byte
//! offset in the *file* (for a decompressed section: the offset of the section, plus where in its
//! decompressed bytes the read failed).

/// A read past the end of the data, or a value that makes no sense.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("at byte offset {offset}: {message}")]
pub struct BinError {
    /// Byte offset in the file.
    pub offset: u64,
    pub message: String,
}

impl BinError {
    pub fn new(offset: u64, message: impl Into<String>) -> BinError {
        BinError {
            offset,
            message: message.into(),
        }
    }
}

pub type BinResult<T> = Result<T, BinError>;

/// Where the bytes of a cursor come from, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The cursor reads the file; position = file offset.
    File,
    /// The cursor reads a decompressed section that starts at this file offset.
    Decompressed { section_offset: u64 },
}

#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    pub big_endian: bool,
    origin: Origin,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8], big_endian: bool) -> Cursor<'a> {
        Cursor {
            data,
            pos: 0,
            big_endian,
            origin: Origin::File,
        }
    }

    /// A cursor over decompressed bytes of the section at `section_offset` in the file.
    pub fn decompressed(data: &'a [u8], big_endian: bool, section_offset: u64) -> Cursor<'a> {
        Cursor {
            data,
            pos: 0,
            big_endian,
            origin: Origin::Decompressed { section_offset },
        }
    }

    pub fn at(mut self, pos: usize) -> Cursor<'a> {
        self.pos = pos;
        self
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    pub fn set_pos(&mut self, pos: usize) {
        self.pos = pos;
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    /// The file offset of the current position (for a decompressed section, of the section).
    pub fn file_offset(&self) -> u64 {
        match self.origin {
            Origin::File => self.pos as u64,
            Origin::Decompressed { section_offset } => section_offset,
        }
    }

    /// An error at the current position.
    pub fn error(&self, message: impl Into<String>) -> BinError {
        let message = message.into();
        match self.origin {
            Origin::File => BinError::new(self.pos as u64, message),
            Origin::Decompressed { section_offset } => BinError::new(
                section_offset,
                format!(
                    "in the compressed section starting here, at byte {} of its {} decompressed bytes: {message}",
                    self.pos,
                    self.data.len()
                ),
            ),
        }
    }

    fn short(&self, n: usize, what: &str) -> BinError {
        let found = if self.pos >= self.data.len() {
            "the end of the data".to_string()
        } else {
            format!("only {} bytes before the end", self.data.len() - self.pos)
        };
        let end = match self.origin {
            Origin::File => format!(" (the file is {} bytes: truncated?)", self.data.len()),
            Origin::Decompressed { .. } => String::new(),
        };
        self.error(format!("expected {what} ({n} bytes), found {found}{end}"))
    }

    pub fn bytes(&mut self, n: usize, what: &str) -> BinResult<&'a [u8]> {
        match self.pos.checked_add(n) {
            Some(end) if end <= self.data.len() => {
                let s = &self.data[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            _ => Err(self.short(n, what)),
        }
    }

    pub fn skip(&mut self, n: usize, what: &str) -> BinResult<()> {
        self.bytes(n, what).map(|_| ())
    }

    pub fn u8(&mut self, what: &str) -> BinResult<u8> {
        Ok(self.bytes(1, what)?[0])
    }

    pub fn u16(&mut self, what: &str) -> BinResult<u16> {
        let b = self.bytes(2, what)?;
        Ok(read_u16(b, self.big_endian))
    }

    pub fn u32(&mut self, what: &str) -> BinResult<u32> {
        let b = self.bytes(4, what)?;
        Ok(read_u32(b, self.big_endian))
    }

    pub fn u64(&mut self, what: &str) -> BinResult<u64> {
        let b = self.bytes(8, what)?;
        Ok(read_u64(b, self.big_endian))
    }

    /// A NUL-terminated string (without its NUL).
    pub fn cstr(&mut self, what: &str) -> BinResult<&'a [u8]> {
        let rest = self.data.get(self.pos..).unwrap_or(&[]);
        match memchr::memchr(0, rest) {
            Some(n) => {
                let s = &rest[..n];
                self.pos += n + 1;
                Ok(s)
            }
            None => Err(self.error(format!(
                "expected {what} (a NUL-terminated string), found no NUL before the end of the data"
            ))),
        }
    }

    /// Expects exactly `tag` here.
    pub fn tag(&mut self, tag: &[u8], what: &str) -> BinResult<()> {
        let at = self.pos;
        let b = self.bytes(tag.len(), what)?;
        if b != tag {
            self.pos = at;
            return Err(self.error(format!(
                "expected {what} {:?}, found {:?}",
                String::from_utf8_lossy(tag),
                String::from_utf8_lossy(b)
            )));
        }
        Ok(())
    }

    /// A length read from the file, checked against what is left (with a message naming it).
    pub fn len_checked(&self, n: u64, what: &str) -> BinResult<usize> {
        match usize::try_from(n) {
            Ok(n) if n <= self.remaining() => Ok(n),
            _ => Err(self.error(format!(
                "{what} says {n} bytes follow, but only {} bytes are left (truncated or corrupt file)",
                self.remaining()
            ))),
        }
    }
}

#[inline(always)]
pub fn read_u16(b: &[u8], big: bool) -> u16 {
    let a = [b[0], b[1]];
    if big {
        u16::from_be_bytes(a)
    } else {
        u16::from_le_bytes(a)
    }
}

#[inline(always)]
pub fn read_u32(b: &[u8], big: bool) -> u32 {
    let a = [b[0], b[1], b[2], b[3]];
    if big {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    }
}

#[inline(always)]
pub fn read_u64(b: &[u8], big: bool) -> u64 {
    let a = [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
    if big {
        u64::from_be_bytes(a)
    } else {
        u64::from_le_bytes(a)
    }
}

/// Reads an unsigned integer of 1, 2, 4 or 8 bytes at `off` in `b`; `None` when out of bounds.
#[inline(always)]
pub fn uint_at(b: &[u8], off: usize, size: usize, big: bool) -> Option<u64> {
    let s = b.get(off..off.checked_add(size)?)?;
    Some(match size {
        1 => s[0] as u64,
        2 => read_u16(s, big) as u64,
        4 => read_u32(s, big) as u64,
        8 => read_u64(s, big),
        _ => return None,
    })
}

/// Like [`uint_at`], sign-extended when `signed`.
#[inline(always)]
pub fn int_at(b: &[u8], off: usize, size: usize, signed: bool, big: bool) -> Option<i64> {
    let v = uint_at(b, off, size, big)?;
    Some(if signed && size < 8 {
        let shift = 64 - 8 * size as u32;
        ((v << shift) as i64) >> shift
    } else {
        v as i64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_bounds_checked_and_name_what_was_expected() {
        let data = [1u8, 0, 0, 0, b'a', b'b', 0, 9];
        let mut c = Cursor::new(&data, false);
        assert_eq!(c.u32("count").unwrap(), 1);
        assert_eq!(c.cstr("name").unwrap(), b"ab");
        let e = c.u64("size").unwrap_err();
        assert_eq!(e.offset, 7);
        assert!(
            e.message
                .contains("expected size (8 bytes), found only 1 bytes"),
            "{e}"
        );
        let mut c = Cursor::new(&data, true);
        assert_eq!(c.u16("x").unwrap(), 0x0100);
        assert!(c.tag(b"zz", "tag").is_err());
        assert_eq!(c.pos(), 2);
    }

    #[test]
    fn decompressed_errors_name_the_section() {
        let c = Cursor::decompressed(&[0u8; 4], false, 4096).at(4);
        let e = c.clone().u32("x").unwrap_err();
        assert_eq!(e.offset, 4096);
        assert!(e.message.contains("decompressed"), "{e}");
    }

    #[test]
    fn ints() {
        let b = [0xff, 0xff, 0xff, 0xff, 2, 0];
        assert_eq!(int_at(&b, 0, 4, true, false), Some(-1));
        assert_eq!(int_at(&b, 0, 4, false, false), Some(0xffff_ffff));
        assert_eq!(int_at(&b, 4, 2, true, false), Some(2));
        assert_eq!(int_at(&b, 4, 4, true, false), None);
        assert_eq!(int_at(&b, usize::MAX, 4, true, false), None);
        assert_eq!(uint_at(&b, 0, 3, false), None);
    }
}
