//! A CPU's ring-buffer data cut into units that decode apart: runs of pages (each page header
//! carries its absolute time) or the compressed chunks trace-cmd wrote (each holds whole
//! pages). Workers decode units a little ahead of the merge ([`super::schedule`]), so a load
//! holds a few blocks of each CPU's events, not every CPU's events whole.

use super::compress::{self, Codec};
use super::layout::{Buffer, CpuRef, Layout};
use super::ring::{CpuOut, Locate, Walk};
use crate::events::{Event, EventKind, Strings};
use crate::sources::binary::cursor::{BinError, Cursor};
use std::ops::Range;

/// Pages per unit of an uncompressed CPU (128 KB of 4 KB pages: a few thousand events).
const PAGES_PER_UNIT: usize = 32;

/// One unit of a CPU's data.
#[derive(Clone, Debug, PartialEq)]
pub enum Unit {
    /// The pages that start in this range of the CPU's data (the last unit runs to the size
    /// the file gives, past what a cut file holds: its walk reports the missing pages).
    Pages(Range<usize>),
    /// Compressed chunk `k` (from 0) of `count`, its header at file offset `at`, its
    /// compressed bytes at `body` and `size` bytes once decompressed.
    Chunk {
        k: u32,
        count: u32,
        at: usize,
        body: Range<usize>,
        size: usize,
    },
    /// The CPU's data cannot be read from here: a lost marker and this warning end it.
    Lost(String),
}

/// Where a CPU's data is and how it is stored.
#[derive(Clone, Copy)]
pub struct CpuData<'d> {
    pub data: &'d [u8],
    pub cref: &'d CpuRef,
    pub codec: Codec,
    pub compressed: bool,
    pub big_endian: bool,
}

impl<'d> CpuData<'d> {
    /// CPU `cref` of `buffer`, a ring buffer of the file `data` laid out as `layout` says.
    pub fn of(data: &'d [u8], layout: &Layout, buffer: &Buffer, cref: &'d CpuRef) -> CpuData<'d> {
        CpuData {
            data,
            cref,
            codec: layout.codec,
            compressed: buffer.compressed,
            big_endian: layout.initial.big_endian,
        }
    }

    fn start_size(&self) -> (usize, usize) {
        (
            usize::try_from(self.cref.offset).unwrap_or(usize::MAX),
            usize::try_from(self.cref.size).unwrap_or(usize::MAX),
        )
    }

    /// The bytes of an uncompressed CPU the file holds (fewer than its size when it was cut).
    fn present(&self) -> &[u8] {
        let (start, size) = self.start_size();
        (self.data.get(start..)).map_or(&[][..], |d| &d[..d.len().min(size)])
    }

    /// The CPU's units, in order.
    pub fn units(&self, page_size: usize) -> Vec<Unit> {
        let (start, size) = self.start_size();
        if size == 0 {
            return Vec::new();
        }
        if !self.compressed {
            let avail = self.present().len();
            let step = page_size.max(1).saturating_mul(PAGES_PER_UNIT);
            let mut out = Vec::new();
            let mut from = 0usize;
            loop {
                let to = from.saturating_add(step);
                if to <= avail && to < size {
                    out.push(Unit::Pages(from..to));
                    from = to;
                } else {
                    out.push(Unit::Pages(from..size));
                    return out;
                }
            }
        }
        if start >= self.data.len() {
            let why = format!(
                "the compressed data at byte offset {start} lies beyond the end of the file ({} bytes); its events are lost",
                self.data.len()
            );
            return vec![Unit::Lost(why)];
        }
        let mut c = Cursor::new(self.data, self.big_endian).at(start);
        let count = match c.u32("the compressed chunk count") {
            Ok(n) => n,
            Err(e) => return vec![Unit::Lost(format!("{e}; its events are lost"))],
        };
        let mut out = Vec::new();
        for k in 0..count {
            let at = c.pos();
            let r = (|| -> Result<(Range<usize>, usize), BinError> {
                let z = c.u32("a compressed chunk size")? as usize;
                let n = c.u32("a chunk's decompressed size")? as usize;
                let from = c.pos();
                c.bytes(z, "a compressed chunk")?;
                Ok((from..from + z, n))
            })();
            match r {
                Ok((body, size)) => {
                    out.push(Unit::Chunk {
                        k,
                        count,
                        at,
                        body,
                        size,
                    });
                }
                Err(e) => {
                    out.push(Unit::Lost(unreadable_chunk(k, count, at, &e.message)));
                    break;
                }
            }
        }
        out
    }

    /// About how many events the CPU's data holds (a scheduler record takes 24 to 60 bytes
    /// of a page; zstd packs a trace's pages about tenfold).
    pub fn events_guess(&self) -> usize {
        let (_, size) = self.start_size();
        let size = size.min(self.data.len());
        if self.compressed { size / 4 } else { size / 24 }
    }

    /// The bytes of the file `unit` covers (what a load's progress counts).
    pub fn file_bytes(&self, unit: &Unit) -> usize {
        match unit {
            Unit::Pages(r) => r.end.min(self.present().len()).saturating_sub(r.start),
            Unit::Chunk { body, .. } => body.len(),
            Unit::Lost(_) => 0,
        }
    }

    /// Decodes `unit` into `out` (`buf`: a reused buffer for decompressed pages); true when
    /// the CPU's data ends with it (nothing after it can be read).
    pub fn decode(
        &self,
        walk: &Walk,
        unit: &Unit,
        strings: &mut Strings,
        out: &mut CpuOut,
        buf: &mut Vec<u8>,
    ) -> bool {
        let cpu = self.cref.cpu;
        match unit {
            Unit::Pages(range) => {
                let (_, size) = self.start_size();
                let base = Locate::File {
                    base: self.cref.offset,
                };
                walk.pages_in(
                    cpu,
                    self.present(),
                    size,
                    range.clone(),
                    &base,
                    strings,
                    out,
                );
                false
            }
            Unit::Chunk {
                k,
                count,
                at,
                body,
                size,
            } => {
                let input = self.data.get(body.clone()).unwrap_or_default();
                match compress::decompress_into(self.codec, input, *size, buf) {
                    Ok(()) => {
                        let locate = Locate::Chunk { offset: *at as u64 };
                        walk.pages(cpu, buf, buf.len(), &locate, strings, out);
                        false
                    }
                    Err(e) => {
                        lost(out, cpu, unreadable_chunk(*k, *count, *at, &e.to_string()));
                        true
                    }
                }
            }
            Unit::Lost(why) => {
                lost(out, cpu, why.clone());
                true
            }
        }
    }
}

fn unreadable_chunk(k: u32, count: u32, at: usize, why: &str) -> String {
    format!(
        "compressed chunk {} of {count} at byte offset {at} cannot be read ({why}): its pages and those after it are lost",
        k + 1
    )
}

/// A marker for the data lost from here, with its warning. (Its time is that of the event
/// before it on the CPU: one in an earlier unit is filled in when the units are joined.)
fn lost(out: &mut CpuOut, cpu: u16, why: String) {
    let ts = out.events.last().map_or(u64::MAX, |e| e.ts);
    out.events.push(Event {
        ts,
        tid: 0,
        cpu,
        kind: EventKind::Lost { count: None },
    });
    out.found
        .warnings
        .push(("missing-pages", format!("CPU {cpu}: {why}")));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(data: &[u8], offset: u64, size: u64, compressed: bool) -> Vec<Unit> {
        let cref = CpuRef {
            cpu: 0,
            offset,
            size,
        };
        let d = CpuData {
            data,
            cref: &cref,
            codec: Codec::None,
            compressed,
            big_endian: false,
        };
        d.units(4096)
    }

    /// Runs of pages cover the CPU's data; the last runs to its size even where the file
    /// holds less (its walk reports the missing pages once, as a whole read would).
    #[test]
    fn page_units_cover_the_data_and_the_last_takes_what_is_missing() {
        let step = 4096 * PAGES_PER_UNIT;
        let data = vec![0u8; 100 + 2 * step + 4096];
        let whole = cpu(&data, 100, (2 * step + 4096) as u64, false);
        assert_eq!(
            whole,
            vec![
                Unit::Pages(0..step),
                Unit::Pages(step..2 * step),
                Unit::Pages(2 * step..2 * step + 4096)
            ]
        );
        let cut = cpu(&data, 100, (10 * step) as u64, false);
        assert_eq!(cut.last(), Some(&Unit::Pages(2 * step..10 * step)));
        assert_eq!(cut.len(), 3);
        assert!(cpu(&data, 100, 0, false).is_empty());
    }

    /// A compressed CPU's chunk list is read from its headers; one that cannot be read ends
    /// the list with what is lost.
    #[test]
    fn chunk_units_end_at_an_unreadable_header() {
        let mut data = 2u32.to_le_bytes().to_vec();
        data.extend_from_slice(&3u32.to_le_bytes());
        data.extend_from_slice(&7u32.to_le_bytes());
        data.extend_from_slice(b"abc");
        data.extend_from_slice(&50u32.to_le_bytes());
        let units = cpu(&data, 0, data.len() as u64, true);
        assert_eq!(
            units[0],
            Unit::Chunk {
                k: 0,
                count: 2,
                at: 4,
                body: 12..15,
                size: 7
            }
        );
        assert!(
            matches!(&units[1], Unit::Lost(w) if w.starts_with("compressed chunk 2 of 2 at byte offset 15 cannot be read")),
            "{units:?}"
        );
        let beyond = cpu(&data, 999, 10, true);
        assert!(matches!(&beyond[..], [Unit::Lost(w)] if w.contains("beyond the end")));
    }
}
