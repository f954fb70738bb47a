//! The per-CPU ring-buffer pages of a trace.dat (the kernel's format, as libtraceevent's kbuffer
//! reads it):
//!
//! * page header: `u64` timestamp, `long` commit (bytes of data; bit 31: events were missed
//!   before this page, bit 30: their count is stored after the data), then the data;
//! * each entry: a `u32` of `type_len:5, time_delta:27`; `type_len` 29 = padding (`array[0]`
//!   bytes follow), 30 = time extend (`array[0] << 27` added), 31 = absolute timestamp, 0 = data
//!   whose length is in `array[0]`, 1..=28 = data of `type_len * 4` bytes.
//!
//! Missed events become `Lost` markers; a page cut by the end of the file keeps the entries that
//! are whole and becomes a `Lost` marker plus a warning naming its offset, and so do pages that
//! are missing altogether.

use crate::events::{Event, EventKind, Strings};
use crate::sources::binary::cursor::{read_u32, uint_at};
use crate::sources::binary::tick::TickInfer;
use crate::sources::tracefs::decode::Decoder;
use crate::sources::tracefs::tracing_data::PageHeader;

const MISSING_EVENTS: u64 = 1 << 31;
const MISSING_STORED: u64 = 1 << 30;
const COMMIT_MASK: u64 = (1 << 27) - 1;
const TS_MSB: u64 = 0xf8 << 56;

/// Where the bytes being walked come from, to turn positions into file offsets for messages.
#[derive(Clone, Copy, Debug)]
pub enum Locate {
    /// Uncompressed: position p is at file offset `base + p`.
    File { base: u64 },
    /// A decompressed chunk whose compressed bytes start at this file offset.
    Chunk { offset: u64 },
}

impl Locate {
    pub fn describe(&self, pos: usize) -> String {
        match self {
            Locate::File { base } => format!("byte offset {}", base + pos as u64),
            Locate::Chunk { offset } => format!(
                "byte offset {offset} (a compressed chunk; byte {pos} of its decompressed pages)"
            ),
        }
    }
}

/// What a CPU's pages found beside their events: problems, and records counted, not kept.
#[derive(Default)]
pub struct Found {
    /// Problems found (already phrased with offsets).
    pub warnings: Vec<(&'static str, String)>,
    pub bad_records: u64,
    pub first_bad: Option<String>,
    /// Committed page bytes the walk could not get through (a corrupt entry header): pages,
    /// bytes, and the first place.
    pub skipped: (u64, u64, Option<String>),
    /// Pages with data past their committed size (the kernel zeroes the rest of a page it
    /// hands out, so a damaged commit that cut the page short): pages, and the first place.
    pub past_commit: (u64, Option<String>),
    /// `kernel_stack` / `user_stack` records, counted and not kept.
    pub stack_traces: u32,
    /// `rseq_update` records traced with interrupts disabled
    /// ([`Trace::rseq_irqs_off`](crate::events::Trace::rseq_irqs_off)).
    ///
    /// (Both u32, saturating: a CPU's buffer of 4 G records is past any memory a load allows.
    /// A u64 more in this struct made `stats` on the bench trace.dat take 20 % more CPU time,
    /// with the same instructions: kept at its former size.)
    pub rseq_irqs_off: u32,
}

impl Found {
    /// Adds what `later` found (pages read after this one's): counts summed, warnings
    /// appended, the first place of each problem kept.
    pub fn add(&mut self, later: &mut Found) {
        self.warnings.append(&mut later.warnings);
        self.bad_records += later.bad_records;
        if self.first_bad.is_none() {
            self.first_bad = later.first_bad.take();
        }
        self.skipped.0 += later.skipped.0;
        self.skipped.1 += later.skipped.1;
        if self.skipped.2.is_none() {
            self.skipped.2 = later.skipped.2.take();
        }
        self.past_commit.0 += later.past_commit.0;
        if self.past_commit.1.is_none() {
            self.past_commit.1 = later.past_commit.1.take();
        }
        self.stack_traces = self.stack_traces.saturating_add(later.stack_traces);
        self.rseq_irqs_off = self.rseq_irqs_off.saturating_add(later.rseq_irqs_off);
    }
}

/// Everything a run of a CPU's pages produced.
#[derive(Default)]
pub struct CpuOut {
    pub events: Vec<Event>,
    pub ticks: TickInfer,
    pub found: Found,
    /// The tasks of its events (lost markers apart), each once, in the order they show.
    pub tids: Vec<crate::events::Tid>,
}

pub struct Walk<'d> {
    pub decoder: &'d Decoder,
    pub page_size: usize,
    pub header: PageHeader,
    pub big_endian: bool,
    /// Added to every timestamp (trace.dat OFFSET / DATE options).
    pub ts_offset: i64,
}

impl Walk<'_> {
    /// Walks the pages of one CPU (or of one decompressed chunk of it). `data` holds the bytes
    /// present; `expected` is how many the file says there are (more when the file was cut).
    pub fn pages(
        &self,
        cpu: u16,
        data: &[u8],
        expected: usize,
        locate: &Locate,
        strings: &mut Strings,
        out: &mut CpuOut,
    ) {
        self.pages_in(cpu, data, expected, 0..expected, locate, strings, out);
    }

    /// [`Self::pages`] for the pages that start in `range` alone (a page's header carries its
    /// absolute time, so a run of pages decodes apart from those before it); positions and
    /// what a cut file lacks are still counted over the whole of `data` and `expected`.
    #[allow(clippy::too_many_arguments)]
    pub fn pages_in(
        &self,
        cpu: u16,
        data: &[u8],
        expected: usize,
        range: std::ops::Range<usize>,
        locate: &Locate,
        strings: &mut Strings,
        out: &mut CpuOut,
    ) {
        let ps = self.page_size;
        let hdr = self.header.data_offset;
        let mut pos = range.start;
        while pos < expected.min(range.end) {
            if pos + hdr > data.len() {
                let missing = (expected - pos).div_ceil(ps);
                self.lost(out, cpu, None);
                out.found.warnings.push((
                    "missing-pages",
                    format!(
                        "CPU {cpu}: {missing} ring-buffer page(s) from {} are missing ({} bytes expected, {} present): the file is truncated; their events are lost",
                        locate.describe(pos),
                        expected,
                        data.len()
                    ),
                ));
                return;
            }
            let page = &data[pos..data.len().min(pos + ps)];
            self.page(cpu, page, pos, locate, strings, out);
            pos += ps;
        }
    }

    fn page(
        &self,
        cpu: u16,
        page: &[u8],
        page_pos: usize,
        locate: &Locate,
        strings: &mut Strings,
        out: &mut CpuOut,
    ) {
        let big = self.big_endian;
        let hdr = self.header.data_offset;
        let (Some(mut ts), Some(commit)) = (
            uint_at(page, 0, 8, big),
            uint_at(page, 8, self.header.commit_size, big),
        ) else {
            return;
        };
        let size = (commit & COMMIT_MASK) as usize;
        if size > self.page_size - hdr {
            self.lost(out, cpu, None);
            out.found.warnings.push((
                "corrupt-page",
                format!(
                    "CPU {cpu}: the page at {} says it holds {size} bytes, more than a {}-byte page can: page skipped, its events are lost",
                    locate.describe(page_pos),
                    self.page_size
                ),
            ));
            return;
        }
        // Events missed before this page: the marker takes the time of the page's first event.
        let mut pending_lost = None;
        if commit & MISSING_EVENTS != 0 {
            let count = if commit & MISSING_STORED != 0 {
                uint_at(page, hdr + size, self.header.commit_size, big)
                    .map(|n| n.min(u32::MAX as u64) as u32)
            } else {
                None
            };
            pending_lost = Some(out.events.len());
            out.events.push(Event {
                ts: self.stamp(ts),
                tid: 0,
                cpu,
                kind: EventKind::Lost { count },
            });
        }
        let end = hdr + size;
        let avail = end.min(page.len());
        let mut p = hdr;
        // where the walk lost its way, if it did: the committed bytes from there are skipped
        let mut stuck = None;
        while p + 4 <= avail {
            let word = read_u32(&page[p..p + 4], big);
            let type_len = word & 31;
            let delta = (word >> 5) as u64;
            let (data_at, len) = match type_len {
                29 => {
                    // padding: array[0] bytes follow; the rest of the page when delta is 0
                    ts = ts.wrapping_add(delta);
                    let Some(n) = uint_at(page, p + 4, 4, big) else {
                        stuck = Some(p);
                        break;
                    };
                    if delta == 0 && n == 0 {
                        break;
                    }
                    if p + 4 + n as usize > avail && avail == end {
                        // a padding past the committed data: no writer makes one
                        stuck = Some(p);
                        break;
                    }
                    p = p + 4 + n as usize;
                    continue;
                }
                30 | 31 => {
                    let Some(ext) = uint_at(page, p + 4, 4, big) else {
                        stuck = Some(p);
                        break;
                    };
                    let v = (ext << 27).wrapping_add(delta);
                    ts = if type_len == 31 {
                        v | (ts & TS_MSB)
                    } else {
                        ts.wrapping_add(v)
                    };
                    p += 8;
                    continue;
                }
                0 => {
                    let Some(n) = uint_at(page, p + 4, 4, big) else {
                        stuck = Some(p);
                        break;
                    };
                    let n = (n as usize).saturating_sub(4);
                    (p + 8, (n + 3) & !3)
                }
                t => (p + 4, t as usize * 4),
            };
            ts = ts.wrapping_add(delta);
            let Some(raw) = page
                .get(data_at..data_at + len)
                .filter(|_| data_at + len <= avail)
            else {
                stuck = Some(p);
                break;
            };
            p = data_at + len;
            let ets = self.stamp(ts);
            if let Some(i) = pending_lost.take() {
                out.events[i].ts = ets;
            }
            self.record(cpu, ets, raw, page_pos + data_at, locate, strings, out);
        }
        // a page cut by the end of the file is reported below; elsewhere, committed bytes the
        // walk could not reach are counted, and their events become a lost marker
        if let Some(at) = stuck.filter(|_| end <= page.len()) {
            self.lost(out, cpu, None);
            let s = &mut out.found.skipped;
            s.0 += 1;
            s.1 += (avail - at) as u64;
            s.2.get_or_insert_with(|| {
                format!(
                    "CPU {cpu}, {} bytes from {} in the page at {}",
                    avail - at,
                    locate.describe(page_pos + at),
                    locate.describe(page_pos)
                )
            });
        }
        // the missing-events count, when stored, sits right after the committed data
        let stored = if commit & MISSING_STORED != 0 {
            self.header.commit_size
        } else {
            0
        };
        if let Some(rest) = page.get(end + stored..)
            && let Some(i) = rest.iter().position(|&b| b != 0)
        {
            self.lost(out, cpu, None);
            let s = &mut out.found.past_commit;
            s.0 += 1;
            s.1.get_or_insert_with(|| {
                format!(
                    "CPU {cpu}, the page at {} commits {size} bytes but holds data at {}",
                    locate.describe(page_pos),
                    locate.describe(page_pos + end + stored + i)
                )
            });
        }
        if end > page.len() {
            self.lost(out, cpu, None);
            out.found.warnings.push((
                "truncated-page",
                format!(
                    "CPU {cpu}: the page at {} is cut by the end of the file after {} of its {} data bytes: the whole entries before the cut were kept, the rest are lost",
                    locate.describe(page_pos),
                    page.len().saturating_sub(hdr),
                    size
                ),
            ));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        cpu: u16,
        ts: u64,
        raw: &[u8],
        pos: usize,
        locate: &Locate,
        strings: &mut Strings,
        out: &mut CpuOut,
    ) {
        let d = self.decoder;
        let (Some(id), Some(pid)) = (d.event_id(raw), d.common_pid(raw)) else {
            self.bad(
                out,
                cpu,
                pos,
                locate,
                "record shorter than its common fields".into(),
            );
            return;
        };
        if ts > crate::events::MAX_TS {
            let e = format!("timestamp {ts} ns is past 2^63 ns (a corrupt time delta)");
            self.bad(out, cpu, pos, locate, e);
            return;
        }
        if d.is_stack(id) {
            out.found.stack_traces = out.found.stack_traces.saturating_add(1);
            return;
        }
        match d.decode(id, raw, strings) {
            Ok((kind, hr)) => {
                if let Some(s) = hr {
                    out.ticks.push(out.events.len(), cpu, s);
                }
                if let EventKind::RseqUpdate { .. } = kind {
                    out.found.rseq_irqs_off = out
                        .found
                        .rseq_irqs_off
                        .saturating_add(u32::from(d.irqs_off(raw)));
                }
                out.events.push(Event {
                    ts,
                    tid: pid as u32,
                    cpu,
                    kind,
                });
            }
            Err(e) => self.bad(out, cpu, pos, locate, e.to_string()),
        }
    }

    fn bad(&self, out: &mut CpuOut, cpu: u16, pos: usize, locate: &Locate, e: String) {
        out.found.bad_records += 1;
        if out.found.first_bad.is_none() {
            out.found.first_bad = Some(format!("CPU {cpu}, {}: {e}", locate.describe(pos)));
        }
    }

    fn stamp(&self, ts: u64) -> u64 {
        ts.saturating_add_signed(self.ts_offset)
    }

    /// A marker for data lost at the current end of this CPU's events.
    fn lost(&self, out: &mut CpuOut, cpu: u16, count: Option<u32>) {
        let ts = out.events.last().map_or(u64::MAX, |e| e.ts);
        out.events.push(Event {
            ts,
            tid: 0,
            cpu,
            kind: EventKind::Lost { count },
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::tracefs::format::parse;

    const FMT: &str = "name: rseq_update\nID: 5\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\tfield:int cpu_id;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:int node_id;\toffset:12;\tsize:4;\tsigned:1;\n\tfield:int mm_cid;\toffset:16;\tsize:4;\tsigned:1;\n";

    fn word(type_len: u32, delta: u32) -> [u8; 4] {
        (type_len | (delta << 5)).to_le_bytes()
    }

    fn record(pid: i32, cid: i32) -> Vec<u8> {
        let mut r = vec![5u8, 0, 0, 0];
        r.extend_from_slice(&pid.to_le_bytes());
        r.extend_from_slice(&1i32.to_le_bytes());
        r.extend_from_slice(&0i32.to_le_bytes());
        r.extend_from_slice(&cid.to_le_bytes());
        r
    }

    /// One 4 KiB page: header (timestamp, commit with flags), then `body`, then `tail` (stored
    /// missed count) after the committed bytes.
    fn page(ts: u64, flags: u64, body: &[u8], tail: Option<u64>) -> Vec<u8> {
        let mut p = ts.to_le_bytes().to_vec();
        p.extend_from_slice(&(body.len() as u64 | flags).to_le_bytes());
        p.extend_from_slice(body);
        if let Some(n) = tail {
            p.extend_from_slice(&n.to_le_bytes());
        }
        p.resize(4096, 0);
        p
    }

    fn walk(data: &[u8], expected: usize) -> CpuOut {
        let mut strings = Strings::new();
        let f = parse(FMT.as_bytes(), "rseq").unwrap();
        let d = Decoder::new(&[f], false, Some(vec![]), &mut strings);
        let w = Walk {
            decoder: &d,
            page_size: 4096,
            header: PageHeader::for_long(8),
            big_endian: false,
            ts_offset: 0,
        };
        let mut out = CpuOut::default();
        w.pages(
            3,
            data,
            expected,
            &Locate::File { base: 1 << 20 },
            &mut strings,
            &mut out,
        );
        out
    }

    #[test]
    fn every_entry_type() {
        let mut b = Vec::new();
        // data, 5 words (20 bytes), delta 10
        b.extend_from_slice(&word(5, 10));
        b.extend(record(100, 0));
        // time extend: +(2 << 27) + 3
        b.extend_from_slice(&word(30, 3));
        b.extend_from_slice(&2u32.to_le_bytes());
        // large data (type_len 0): array[0] = length + 4
        b.extend_from_slice(&word(0, 1));
        b.extend_from_slice(&24u32.to_le_bytes());
        b.extend(record(101, 1));
        // a discarded event (padding with delta): array[0] = its length after the header word
        // (itself included); skipped, its delta counts
        b.extend_from_slice(&word(29, 7));
        b.extend_from_slice(&12u32.to_le_bytes());
        b.extend_from_slice(&[0xee; 8]);
        // absolute timestamp
        b.extend_from_slice(&word(31, 5));
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&word(5, 0));
        b.extend(record(102, 0));
        let data = page(1000, 0, &b, None);
        let out = walk(&data, data.len());
        let got: Vec<(u64, u32)> = out.events.iter().map(|e| (e.ts, e.tid)).collect();
        let ext = (2u64 << 27) + 3;
        assert_eq!(
            got,
            vec![(1010, 100), (1010 + ext + 1, 101), ((1 << 27) + 5, 102)],
            "the absolute stamp replaces the time, the padding's delta is overridden by it"
        );
        assert!(out.found.warnings.is_empty(), "{:?}", out.found.warnings);
        assert_eq!(out.events[0].cpu, 3);
        assert_eq!(
            out.events[1].kind,
            EventKind::RseqUpdate {
                cpu_id: 1,
                node_id: 0,
                mm_cid: 1
            }
        );
    }

    #[test]
    fn missed_events_become_lost_markers() {
        let mut b = word(5, 4).to_vec();
        b.extend(record(7, 0));
        let mut data = page(50, MISSING_EVENTS | MISSING_STORED, &b, Some(321));
        data.extend(page(90, MISSING_EVENTS, &b, None));
        let out = walk(&data, data.len());
        let kinds: Vec<_> = out.events.iter().map(|e| (e.ts, e.kind)).collect();
        assert_eq!(kinds[0], (54, EventKind::Lost { count: Some(321) }));
        assert_eq!(kinds[2], (94, EventKind::Lost { count: None }));
        assert_eq!(out.events.len(), 4);
    }

    #[test]
    fn cut_and_missing_pages_are_lost_with_their_offset() {
        let mut b = Vec::new();
        for k in 0..10 {
            b.extend_from_slice(&word(5, 1));
            b.extend(record(k, 0));
        }
        let data = page(0, 0, &b, None);
        // cut after 3 whole entries and a half, and say 2 more pages existed
        let cut = 16 + 3 * 24 + 10;
        let out = walk(&data[..cut], 3 * 4096);
        assert_eq!(out.events.iter().filter(|e| !e.kind.is_lost()).count(), 3);
        assert_eq!(out.events.iter().filter(|e| e.kind.is_lost()).count(), 2);
        let w: Vec<_> = out.found.warnings.iter().map(|w| w.1.as_str()).collect();
        assert!(w[0].contains("page at byte offset 1048576 is cut"), "{w:?}");
        assert!(
            w[1].contains("2 ring-buffer page(s) from byte offset 1052672 are missing"),
            "{w:?}"
        );
        // a page claiming more data than a page holds
        let bad = page(0, 5000, &[], None);
        let out = walk(&bad, bad.len());
        assert_eq!(out.found.warnings[0].0, "corrupt-page");
    }
}
