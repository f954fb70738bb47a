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

/// `read_format` bits (`enum perf_event_read_format`).
pub const FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
pub const FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
pub const FORMAT_ID: u64 = 1 << 2;
pub const FORMAT_GROUP: u64 = 1 << 3;
pub const FORMAT_LOST: u64 = 1 << 4;

/// The fields of a sample that cidscope uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SampleFields<'a> {
    pub pid: Option<i32>,
    pub tid: Option<i32>,
    pub timestamp: Option<u64>,
    pub cpu: Option<u32>,
    /// `PERF_SAMPLE_READ`: the counter values (one, or a group's).
    pub read: Option<ReadValues<'a>>,
    pub raw: Option<std::borrow::Cow<'a, [u8]>>,
    /// Bytes of the body after its last field, when nothing follows the raw data: none in what
    /// the kernel writes (the raw data is padded to 8 bytes inside its own size), so a damaged
    /// size that swallowed what follows.
    pub extra: usize,
}

#[cfg(test)]
impl<'a> From<linux_perf_event_reader::SampleRecord<'a>> for SampleFields<'a> {
    fn from(s: linux_perf_event_reader::SampleRecord<'a>) -> SampleFields<'a> {
        SampleFields {
            pid: s.pid,
            tid: s.tid,
            timestamp: s.timestamp,
            cpu: s.cpu,
            read: None,
            raw: s.raw.map(|r| r.as_slice()),
            extra: 0,
        }
    }
}

/// The values of a `PERF_SAMPLE_READ`, every `read_format` layout: one counter
/// (`value [enabled] [running] [id] [lost]`) or a group (`nr [enabled] [running]` then
/// `value [id] [lost]` per counter, the leader first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadValues<'a> {
    /// The counters' entries, `stride` bytes each.
    entries: &'a [u8],
    stride: usize,
    /// Where an entry holds its id (`PERF_FORMAT_ID`).
    id_at: Option<usize>,
    big: bool,
}

impl<'a> ReadValues<'a> {
    /// Counters in the sample.
    pub fn len(&self) -> usize {
        self.entries.len() / self.stride
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// (value, id) of each counter, the group leader first.
    pub fn iter(&self) -> impl Iterator<Item = (u64, Option<u64>)> + 'a {
        let (id_at, big) = (self.id_at, self.big);
        self.entries
            .chunks_exact(self.stride)
            .map(move |e| (read_u64(e, big), id_at.map(|o| read_u64(&e[o..], big))))
    }
}

impl<'a> SampleFields<'a> {
    /// The sample fields up to the raw data, in the kernel's order (perf_output_sample).
    const UP_TO_RAW: SampleFormat = SampleFormat::IDENTIFIER
        .union(SampleFormat::IP)
        .union(SampleFormat::TID)
        .union(SampleFormat::TIME)
        .union(SampleFormat::ADDR)
        .union(SampleFormat::ID)
        .union(SampleFormat::STREAM_ID)
        .union(SampleFormat::CPU)
        .union(SampleFormat::PERIOD)
        .union(SampleFormat::READ)
        .union(SampleFormat::CALLCHAIN)
        .union(SampleFormat::RAW);

    /// Reads a sample body up to its raw data (what follows it is not used), or says which
    /// field the body ends before. `read_format` is the attr's raw bits (the crate's parse of
    /// the attr drops `PERF_FORMAT_LOST`).
    #[inline]
    pub fn read(
        body: &'a [u8],
        format: SampleFormat,
        read_format: u64,
        big: bool,
    ) -> Result<SampleFields<'a>, &'static str> {
        let mut at = 0usize;
        let mut take = |n: usize, what: &'static str| -> Result<&'a [u8], &'static str> {
            let b = at
                .checked_add(n)
                .and_then(|e| body.get(at..e))
                .ok_or(what)?;
            at += n;
            Ok(b)
        };
        let has = |f: SampleFormat| format.contains(f);
        let mut out = SampleFields::default();
        if has(SampleFormat::IDENTIFIER) {
            take(8, "PERF_SAMPLE_IDENTIFIER")?;
        }
        if has(SampleFormat::IP) {
            take(8, "PERF_SAMPLE_IP")?;
        }
        if has(SampleFormat::TID) {
            let b = take(8, "PERF_SAMPLE_TID")?;
            out.pid = Some(read_u32(b, big) as i32);
            out.tid = Some(read_u32(&b[4..], big) as i32);
        }
        if has(SampleFormat::TIME) {
            out.timestamp = Some(read_u64(take(8, "PERF_SAMPLE_TIME")?, big));
        }
        if has(SampleFormat::ADDR) {
            take(8, "PERF_SAMPLE_ADDR")?;
        }
        if has(SampleFormat::ID) {
            take(8, "PERF_SAMPLE_ID")?;
        }
        if has(SampleFormat::STREAM_ID) {
            take(8, "PERF_SAMPLE_STREAM_ID")?;
        }
        if has(SampleFormat::CPU) {
            out.cpu = Some(read_u32(take(8, "PERF_SAMPLE_CPU")?, big));
        }
        if has(SampleFormat::PERIOD) {
            take(8, "PERF_SAMPLE_PERIOD")?;
        }
        if has(SampleFormat::READ) {
            let times = (read_format & FORMAT_TOTAL_TIME_ENABLED != 0) as usize
                + (read_format & FORMAT_TOTAL_TIME_RUNNING != 0) as usize;
            let id = read_format & FORMAT_ID != 0;
            let lost = read_format & FORMAT_LOST != 0;
            const WHAT: &str = "PERF_SAMPLE_READ values";
            out.read = Some(if read_format & FORMAT_GROUP != 0 {
                let nr = read_u64(take(8, "PERF_SAMPLE_READ counter count")?, big);
                take(8 * times, WHAT)?;
                let stride = 8 * (1 + id as usize + lost as usize);
                let n = usize::try_from(nr)
                    .ok()
                    .and_then(|n| n.checked_mul(stride))
                    .ok_or(WHAT)?;
                ReadValues {
                    entries: take(n, WHAT)?,
                    stride,
                    id_at: id.then_some(8),
                    big,
                }
            } else {
                let stride = 8 * (1 + times + id as usize + lost as usize);
                ReadValues {
                    entries: take(stride, WHAT)?,
                    stride,
                    id_at: id.then_some(8 * (1 + times)),
                    big,
                }
            });
        }
        if has(SampleFormat::CALLCHAIN) {
            let n = usize::try_from(read_u64(take(8, "PERF_SAMPLE_CALLCHAIN length")?, big))
                .ok()
                .and_then(|n| n.checked_mul(8))
                .ok_or("PERF_SAMPLE_CALLCHAIN entries")?;
            take(n, "PERF_SAMPLE_CALLCHAIN entries")?;
        }
        if has(SampleFormat::RAW) {
            let n = read_u32(take(4, "PERF_SAMPLE_RAW size")?, big) as usize;
            out.raw = Some(std::borrow::Cow::Borrowed(take(n, "PERF_SAMPLE_RAW data")?));
        }
        if Self::UP_TO_RAW.contains(format) {
            out.extra = body.len() - at;
        }
        Ok(out)
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
    /// `PERF_RECORD_COMPRESSED2` records whose u16 size had wrapped (a perf bug), read by
    /// their data size.
    pub overflowed: u64,
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
            overflowed: 0,
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
        let mut size = read_u16(&h[6..8], self.big) as usize;
        if rtype == RECORD_COMPRESSED2
            && let Some(d) = self.data.get(at + 8..at + 16)
        {
            // perf 6.16+ writes `header.size = ALIGN(16 + data_size, 8)` into a u16: past 64 KB
            // it wraps (to 0, or to a small size when perf packed several records into one
            // push), and the padding is not written. The record then ends after its data.
            let need = 16usize
                .saturating_add(usize::try_from(read_u64(d, self.big)).unwrap_or(usize::MAX));
            if need > size && need <= (1 << 20) {
                self.overflowed += 1;
                size = need;
            }
        }
        if size < 8 {
            self.stop = Some(Stop::Corrupt { offset: at, size });
            return None;
        }
        if at.saturating_add(size) > avail {
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
