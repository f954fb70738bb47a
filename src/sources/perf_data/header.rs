//! The perf.data file header (file mode) and pipe header, and the feature-section table.
//!
//! File mode: `PERFILE2` (`2ELIFREP` when big-endian), `u64 size` (104), `u64 attr_size`,
//! sections `attrs`, `data`, `event_types` (`u64 offset, u64 size` each), and a 256-bit feature
//! bitmap; the table of feature sections (`offset, size` per set bit, in bit order) follows the
//! data section. Pipe mode (`perf record -o -`): magic and `u64 size` = 16, then records only.

use crate::sources::binary::cursor::{BinError, BinResult, Cursor, read_u64};

pub const HEADER_TRACING_DATA: u32 = 1;
/// The header of a version-1 file written before the feature bitmap.
const V1_SIZE: u64 = 72;
/// `uname -r` of the recording kernel (a perf string: u32 length, then the NUL-padded text).
pub const HEADER_OSRELEASE: u32 = 4;
pub const HEADER_NRCPUS: u32 = 7;
pub const HEADER_EVENT_DESC: u32 = 12;
pub const HEADER_COMPRESSED: u32 = 27;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    pub offset: u64,
    pub size: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileHeader {
    pub attr_size: u64,
    pub attrs: Section,
    pub data: Section,
    pub features: [u64; 4],
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    File(FileHeader),
    Pipe,
}

/// Reads the header; returns the mode and whether the file is big-endian.
pub fn read(data: &[u8]) -> BinResult<(Mode, bool)> {
    let mut c = Cursor::new(data, false);
    let magic = c.bytes(8, "the perf.data magic \"PERFILE2\"")?;
    let big = match magic {
        b"PERFILE2" => false,
        b"2ELIFREP" => true,
        // version 1 (perf before 2.6.39): the same header, its magic the same bytes in either
        // byte order, which perf tells by the header size (72 without the feature bitmap, 104
        // with it) as it reads it
        b"PERFFILE" | b"ELIFFREP" => {
            let at = data.get(8..16).unwrap_or(&[]);
            let le = at.try_into().map(u64::from_le_bytes).unwrap_or(0);
            !matches!(le, V1_SIZE | 104)
        }
        _ => {
            return Err(BinError::new(
                0,
                format!(
                    "expected the perf.data magic \"PERFILE2\", found the bytes {}",
                    hex(magic)
                ),
            ));
        }
    };
    c.big_endian = big;
    let size = c.u64("the header size")?;
    if size == 16 {
        return Ok((Mode::Pipe, big));
    }
    let v1 = magic == b"PERFFILE" || magic == b"ELIFFREP";
    if size < 104 && !(v1 && size == V1_SIZE) {
        return Err(BinError::new(
            8,
            format!("expected a header size of 104 (file mode) or 16 (pipe mode), found {size}"),
        ));
    }
    let attr_size = c.u64("the attr entry size")?;
    let mut sec = |what: &str| -> BinResult<Section> {
        Ok(Section {
            offset: c.u64(what)?,
            size: c.u64(what)?,
        })
    };
    let attrs = sec("the attrs section")?;
    let data_sec = sec("the data section")?;
    let _event_types = sec("the event-types section")?;
    // A section inside the header is a damaged field: say which, where it sits, what it holds
    // (reading on from there would name offsets that mean nothing).
    for (field_at, name, s) in [(24, "attrs", attrs), (40, "data", data_sec)] {
        if s.offset < size {
            return Err(BinError::new(
                field_at,
                format!(
                    "expected the header's {name} section offset (the u64 at byte offset {field_at}) to point past the {size}-byte header, found {}: the header is damaged",
                    s.offset
                ),
            ));
        }
    }
    let mut features = [0u64; 4];
    if size >= 104 {
        for f in &mut features {
            *f = c.u64("the feature bitmap")?;
        }
    }
    Ok((
        Mode::File(FileHeader {
            attr_size,
            attrs,
            data: data_sec,
            features,
        }),
        big,
    ))
}

/// Records a pipe-mode perf.data is read for before [`compressed`] says it is not.
const COMPRESSED_LOOK: usize = 256;

/// Whether the records of the perf.data whose first bytes (or all) are `head` are compressed
/// (`perf record -z`): file mode says so in its header's features; pipe mode by its feature
/// record of the same bit (perf writes them first) or a compressed record before the first
/// sample. What a load's memory check needs before anything is decoded.
pub fn compressed(head: &[u8]) -> bool {
    match read(head) {
        Ok((Mode::File(h), _)) => h.has_feature(HEADER_COMPRESSED),
        Ok((Mode::Pipe, big)) => {
            let recs = super::records::Records::new(head, 16, head.len(), big);
            for r in recs.take(COMPRESSED_LOOK) {
                match r.rtype {
                    super::records::RECORD_COMPRESSED | super::records::RECORD_COMPRESSED2 => {
                        return true;
                    }
                    super::records::RECORD_HEADER_FEATURE
                        if r.body.len() >= 8
                            && read_u64(&r.body[..8], big) == HEADER_COMPRESSED as u64 =>
                    {
                        return true;
                    }
                    super::records::RECORD_SAMPLE => return false,
                    _ => {}
                }
            }
            false
        }
        Err(_) => false,
    }
}

impl FileHeader {
    pub fn has_feature(&self, bit: u32) -> bool {
        bit < 256 && self.features[(bit / 64) as usize] & (1 << (bit % 64)) != 0
    }

    /// The feature sections: (feature bit, section). The table sits right after the data.
    pub fn feature_sections(&self, data: &[u8], big: bool) -> BinResult<Vec<(u32, Section)>> {
        let table = self.data.offset.saturating_add(self.data.size);
        let bits: Vec<u32> = (0..256).filter(|&b| self.has_feature(b)).collect();
        let start = usize::try_from(table).unwrap_or(usize::MAX);
        if start > data.len() || (start + 16 * bits.len()) > data.len() {
            return Err(BinError::new(
                table.min(data.len() as u64),
                format!(
                    "expected the table of {} feature sections at byte offset {table}, right after the data section, but the file ends at byte {}: the file is truncated (perf keeps the tracepoint formats in the feature sections, so its samples cannot be decoded)",
                    bits.len(),
                    data.len()
                ),
            ));
        }
        let mut c = Cursor::new(data, big).at(start);
        let mut out = Vec::with_capacity(bits.len());
        for b in bits {
            let offset = c.u64("a feature section offset")?;
            let size = c.u64("a feature section size")?;
            out.push((b, Section { offset, size }));
        }
        Ok(out)
    }
}

/// `50 45 52 46`: bytes in a message, never printed raw.
pub fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The bytes of a section, or an error naming where it was expected.
pub fn section_bytes<'a>(data: &'a [u8], s: Section, what: &str) -> BinResult<&'a [u8]> {
    let start = usize::try_from(s.offset).ok();
    let end = start.and_then(|a| a.checked_add(usize::try_from(s.size).ok()?));
    match (start, end) {
        (Some(a), Some(e)) if e <= data.len() => Ok(&data[a..e]),
        _ => Err(BinError::new(
            s.offset,
            format!(
                "expected the {what} ({} bytes) here, but the file ends at byte {}: truncated?",
                s.size,
                data.len()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str) -> Vec<u8> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    /// `perf record -z` files say so in either mode (COMPRESSED and COMPRESSED2 records, ours
    /// and linux-perf-data's), from the whole file and from its first 64 KB (a stream's head holds 256 KB; pipe mode's
    /// feature records can lie past 4 KB); the others do not.
    #[test]
    fn compressed_records_are_told_from_the_first_bytes() {
        for (name, z) in [
            ("traces/pv-z-file.perf.data", true),
            ("traces/pv-z-pipe.perf.data", true),
            ("traces/pv-z2-file.perf.data", true),
            ("traces/pv-z2-pipe.perf.data", true),
            ("traces/lpd-sleep.compressed.perf.data", true),
            ("traces/lpd-sleep.compressed.pipe.perf.data", true),
            ("traces/lpd-fibo.compressed2.pipe.perf.data", true),
            ("traces/cyclictest.perf.data", false),
            ("traces/cyclictest-pipe.perf.data", false),
            ("traces/lpd-sleep.perf.data", false),
            ("traces/cut-header.perf.data", false),
            ("traces/empty.perf.data", false),
        ] {
            let d = file(name);
            assert_eq!(compressed(&d), z, "{name}");
            assert_eq!(
                compressed(&d[..d.len().min(64 << 10)]),
                z,
                "{name}: its first 64 KB"
            );
        }
    }

    #[test]
    fn modes_and_truncated_headers() {
        let mut pipe = b"PERFILE2".to_vec();
        pipe.extend_from_slice(&16u64.to_le_bytes());
        assert_eq!(read(&pipe).unwrap(), (Mode::Pipe, false));
        let e = read(&pipe[..12]).unwrap_err();
        assert_eq!(e.offset, 8);
        let e = read(b"PERFILE3xxxxxxxxxx").unwrap_err();
        assert!(e.message.contains("PERFILE2"));
        assert!(
            e.message.ends_with("50 45 52 46 49 4c 45 33"),
            "{}",
            e.message
        );
        // version 1: the version-2 layout under its old magic (its header cut short here)
        let e = read(b"PERFFILE\x68\0\0\0\0\0\0\0").unwrap_err();
        assert!(e.message.contains("attr entry size"), "{}", e.message);
        let mut file = b"PERFILE2".to_vec();
        file.extend_from_slice(&104u64.to_le_bytes());
        file.extend_from_slice(&[0u8; 40]);
        let e = read(&file).unwrap_err();
        assert_eq!(e.offset, 56);
    }
}
