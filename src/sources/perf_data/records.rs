//! Walking the records of the data section (file mode) or of the whole stream (pipe mode):
//! `struct perf_event_header { u32 type; u16 misc; u16 size; }` then the body. Two user records
//! carry data after their `size`: `HEADER_TRACING_DATA` (`u32 size` of tracing data) and
//! `AUXTRACE` (`u64 size` of AUX data).

use crate::sources::binary::cursor::{read_u16, read_u32, read_u64};
use linux_perf_event_reader::SampleFormat;

pub const RECORD_LOST: u32 = 2;
pub const RECORD_COMM: u32 = 3;
pub const RECORD_EXIT: u32 = 4;
pub const RECORD_FORK: u32 = 7;
pub const RECORD_READ: u32 = 8;
pub const RECORD_SAMPLE: u32 = 9;
pub const RECORD_LOST_SAMPLES: u32 = 13;
pub const RECORD_HEADER_ATTR: u32 = 64;
pub const RECORD_HEADER_TRACING_DATA: u32 = 66;
pub const RECORD_FINISHED_ROUND: u32 = 68;
pub const RECORD_AUXTRACE: u32 = 71;
pub const RECORD_HEADER_FEATURE: u32 = 80;
pub const RECORD_COMPRESSED: u32 = 81;
pub const RECORD_COMPRESSED2: u32 = 83;

/// One record.
#[derive(Clone, Copy, Debug)]
pub struct Rec<'a> {
    /// Where the record starts (a file offset, or an offset in decompressed data).
    pub offset: usize,
    pub rtype: u32,
    pub misc: u16,
    /// The record after its 8-byte header.
    pub body: &'a [u8],
    /// Data that follows the record (tracing data, AUX data).
    pub trailing: &'a [u8],
}

/// The fields of a sample that cidscope uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SampleFields<'a> {
    pub pid: Option<i32>,
    pub tid: Option<i32>,
    pub timestamp: Option<u64>,
    pub cpu: Option<u32>,
    pub raw: Option<std::borrow::Cow<'a, [u8]>>,
    /// Bytes of the body after its last field: none in what the kernel writes (the raw data
    /// is padded to 8 bytes inside its own size), so a damaged size that swallowed what
    /// follows.
    pub extra: usize,
}

impl<'a> From<linux_perf_event_reader::SampleRecord<'a>> for SampleFields<'a> {
    fn from(s: linux_perf_event_reader::SampleRecord<'a>) -> SampleFields<'a> {
        SampleFields {
            pid: s.pid,
            tid: s.tid,
            timestamp: s.timestamp,
            cpu: s.cpu,
            raw: s.raw.map(|r| r.as_slice()),
            extra: 0,
        }
    }
}

impl<'a> SampleFields<'a> {
    /// The sample fields that can precede the raw data, in the kernel's order (perf_output_sample).
    const LEADING: SampleFormat = SampleFormat::IDENTIFIER
        .union(SampleFormat::IP)
        .union(SampleFormat::TID)
        .union(SampleFormat::TIME)
        .union(SampleFormat::ADDR)
        .union(SampleFormat::ID)
        .union(SampleFormat::STREAM_ID)
        .union(SampleFormat::CPU)
        .union(SampleFormat::PERIOD)
        .union(SampleFormat::CALLCHAIN)
        .union(SampleFormat::RAW);

    /// Whether [`SampleFields::read`] reads samples of this format: nothing after the raw data
    /// and no read values (tracepoint recordings, with or without -g).
    pub fn covers(format: SampleFormat) -> bool {
        Self::LEADING.contains(format)
    }

    /// Reads a sample body directly, or `None` if it is too short for its format (the caller
    /// then lets linux-perf-event-reader say what is wrong). Only for formats it [`covers`].
    ///
    /// [`covers`]: SampleFields::covers
    pub fn read(body: &'a [u8], format: SampleFormat, big: bool) -> Option<SampleFields<'a>> {
        let mut at = 0usize;
        let mut take = |n: usize| -> Option<&'a [u8]> {
            let b = body.get(at..at.checked_add(n)?)?;
            at += n;
            Some(b)
        };
        let has = |f: SampleFormat| format.contains(f);
        let mut out = SampleFields::default();
        for f in [SampleFormat::IDENTIFIER, SampleFormat::IP] {
            if has(f) {
                take(8)?;
            }
        }
        if has(SampleFormat::TID) {
            out.pid = Some(read_u32(take(4)?, big) as i32);
            out.tid = Some(read_u32(take(4)?, big) as i32);
        }
        if has(SampleFormat::TIME) {
            out.timestamp = Some(read_u64(take(8)?, big));
        }
        for f in [
            SampleFormat::ADDR,
            SampleFormat::ID,
            SampleFormat::STREAM_ID,
        ] {
            if has(f) {
                take(8)?;
            }
        }
        if has(SampleFormat::CPU) {
            out.cpu = Some(read_u32(take(8)?, big));
        }
        if has(SampleFormat::PERIOD) {
            take(8)?;
        }
        if has(SampleFormat::CALLCHAIN) {
            let n = usize::try_from(read_u64(take(8)?, big)).ok()?;
            take(n.checked_mul(8)?)?;
        }
        if has(SampleFormat::RAW) {
            let n = read_u32(take(4)?, big) as usize;
            out.raw = Some(std::borrow::Cow::Borrowed(take(n)?));
        }
        out.extra = body.len() - at;
        Some(out)
    }
}

/// Why the walk stopped before the end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The data ends inside the record at `offset`, which needs `need` bytes.
    Truncated {
        offset: usize,
        need: usize,
        have: usize,
    },
    /// The record at `offset` declares a size below its own header.
    Corrupt { offset: usize, size: usize },
}

pub struct Records<'a> {
    data: &'a [u8],
    pos: usize,
    end: usize,
    big: bool,
    pub stop: Option<Stop>,
}

impl<'a> Records<'a> {
    /// Records in `data[start..end]` (`end` may lie past the data when the file was cut).
    pub fn new(data: &'a [u8], start: usize, end: usize, big: bool) -> Records<'a> {
        Records {
            data,
            pos: start,
            end,
            big,
            stop: None,
        }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Rec<'a>;

    fn next(&mut self) -> Option<Rec<'a>> {
        if self.stop.is_some() || self.pos >= self.end {
            return None;
        }
        let at = self.pos;
        let avail = self.data.len().min(self.end);
        let truncated = |need: usize| Stop::Truncated {
            offset: at,
            need,
            have: avail.saturating_sub(at),
        };
        if at + 8 > avail {
            self.stop = Some(truncated(8));
            return None;
        }
        let h = &self.data[at..at + 8];
        let rtype = read_u32(&h[0..4], self.big);
        let misc = read_u16(&h[4..6], self.big);
        let size = read_u16(&h[6..8], self.big) as usize;
        if size < 8 {
            self.stop = Some(Stop::Corrupt { offset: at, size });
            return None;
        }
        if at + size > avail {
            self.stop = Some(truncated(size));
            return None;
        }
        let body = &self.data[at + 8..at + size];
        let extra = match rtype {
            RECORD_HEADER_TRACING_DATA if body.len() >= 4 => {
                read_u32(&body[0..4], self.big) as usize
            }
            RECORD_AUXTRACE if body.len() >= 8 => {
                usize::try_from(read_u64(&body[0..8], self.big)).unwrap_or(usize::MAX)
            }
            _ => 0,
        };
        let total = size.saturating_add(extra);
        if at.saturating_add(total) > avail {
            self.stop = Some(truncated(total));
            return None;
        }
        self.pos = at + total;
        Some(Rec {
            offset: at,
            rtype,
            misc,
            body,
            trailing: &self.data[at + size..at + total],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t: u32, body: &[u8]) -> Vec<u8> {
        let mut v = t.to_le_bytes().to_vec();
        v.extend_from_slice(&0u16.to_le_bytes());
        v.extend_from_slice(&((8 + body.len()) as u16).to_le_bytes());
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn walks_and_stops_with_the_offset() {
        let mut d = rec(RECORD_SAMPLE, &[1; 8]);
        let mut td = 4u32.to_le_bytes().to_vec();
        td.extend_from_slice(&[0; 4]);
        d.extend(rec(RECORD_HEADER_TRACING_DATA, &td));
        d.extend_from_slice(b"abcd");
        d.extend(rec(RECORD_COMM, &[2; 16]));
        let full = d.len();
        let mut r = Records::new(&d, 0, full, false);
        let v: Vec<_> = r.by_ref().collect();
        assert_eq!(v.len(), 3);
        assert_eq!(v[1].trailing, b"abcd");
        assert_eq!(v[2].offset, 16 + 16 + 4);
        assert_eq!(r.stop, None);
        let mut r = Records::new(&d[..full - 3], 0, full, false);
        assert_eq!(r.by_ref().count(), 2);
        assert_eq!(
            r.stop,
            Some(Stop::Truncated {
                offset: 36,
                need: 24,
                have: 21
            })
        );
        let mut bad = rec(RECORD_SAMPLE, &[]);
        bad[6] = 3;
        let mut r = Records::new(&bad, 0, bad.len(), false);
        assert_eq!(r.next().map(|x| x.offset), None);
        assert_eq!(r.stop, Some(Stop::Corrupt { offset: 0, size: 3 }));
    }
}
