//! perf.data, file mode and pipe mode (`perf record -o -`), read natively from the mapped bytes.
//!
//! * [`header`]: file/pipe header, feature-section table;
//! * [`attrs`]: event attributes (parsed with linux-perf-event-reader, which also decodes the
//!   bodies of records other than samples: `sample_id_all` trailers), their sample ids, and the
//!   names perf gives them (`cycles:Pu`);
//! * [`records`]: the record stream, with the user records that carry trailing data, and the
//!   direct read of a sample body (every `sample_type` and `read_format` layout, up to the raw
//!   data);
//! * [`compressed`]: `perf record -z` (COMPRESSED, COMPRESSED2): the zstd stream across records;
//! * [`order`]: perf's finished-round ordering; [`tasks`]: COMM/FORK thread names and processes.
//! * `samples`: samples made into events; `finish`: the end of a read and its warnings.
//!
//! A sample with `PERF_SAMPLE_READ` is delivered as perf delivers it: one sample per counter
//! whose value changed since its last sample. A sample without `PERF_SAMPLE_CPU` is on
//! [`CPU_UNKNOWN`]. A COMM record of an exec renames the task.
//!
//! Tracepoint samples (`PERF_SAMPLE_RAW`) are decoded through the format files of the file's
//! tracing data (`HEADER_TRACING_DATA` feature section, or the `HEADER_TRACING_DATA` record in
//! pipe mode), which has the trace.dat v6 layout: `tracefs::tracing_data`, `tracefs::decode`.
//!
//! Why not the linux-perf-data container crate (0.13): its pipe-mode reader does not skip the
//! tracing data that follows a `HEADER_TRACING_DATA` record, so a tracepoint recording in pipe
//! mode yields nothing (0 of the 18806 samples of `traces/cyclictest-pipe.perf.data`); it copies
//! each record through `Read`; and a cut file fails as a whole (`UnexpectedEof`, no offset).
//! The container is small; the record bodies are where a maintained crate pays off.

pub mod attrs;
pub mod compressed;
mod finish;
pub mod header;
pub mod order;
pub mod records;
mod samples;
pub mod tasks;

use crate::events::{EventStore, Format, StrId, Trace};
use crate::sources::binary::cursor::{BinError, BinResult, Cursor, read_u16, read_u32, read_u64};
use crate::sources::binary::tick::TickInfer;
use crate::sources::error::SourceError;
use crate::sources::options::LoadOptions;
use crate::sources::tracefs::decode::Decoder;
use crate::sources::tracefs::tracing_data as meta;
use attrs::{Attr, Attrs};
use header::{
    HEADER_COMPRESSED, HEADER_EVENT_DESC, HEADER_NRCPUS, HEADER_OSRELEASE, HEADER_TRACING_DATA,
    Mode,
};
use linux_perf_event_reader::{EventRecord, RawData, RawEventRecord, RecordType};
use order::{Item, Orderer};
use records::*;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// What this reads (the `format` of `stats --json`).
pub const PERF_DATA: Format = Format::new("perf.data", "perf.data");

/// Records per batch handed from the walk to the decoding stage.
const WALK_BATCH: usize = 4096;

/// Loads a perf.data held in memory.
pub fn load(name: &str, data: &[u8], opts: &LoadOptions) -> Result<Trace, SourceError> {
    let (mut trace, events) = decode(name, data, opts)?;
    trace.events = events;
    trace.ensure_sorted();
    Ok(trace)
}

/// Reads a perf.data held in memory into its metadata (strings, tasks, warnings; no events)
/// and its events in perf's delivery order (time order unless records came late), packed as
/// they are decoded: a list of whole events packed after cost the bench load a third of its
/// time in fresh pages and a second pass.
pub fn decode(
    name: &str,
    data: &[u8],
    opts: &LoadOptions,
) -> Result<(Trace, EventStore), SourceError> {
    let err =
        |e: BinError| SourceError::at_offset(name, e.offset, format!("perf.data: {}", e.message));
    let (mode, big) = header::read(data).map_err(err)?;
    let mut r = Reader {
        name,
        data,
        big,
        attrs: None,
        order: Orderer::default(),
        deliver: Vec::new(),
        pending_attrs: Vec::new(),
        desc: Vec::new(),
        decoder: None,
        trace: Trace::new(name, PERF_DATA),
        events: EventStore::new(),
        threads: tasks::Threads::default(),
        ticks: TickInfer::default(),
        bad: 0,
        first_bad: None,
        other_names: FxHashMap::default(),
        non_tracepoint: Default::default(),
        lost_records: 0,
        lost_samples: Vec::new(),
        tgids: Default::default(),
        oversized: (0, 0, 0),
        cpu_unknown: 0,
        mentioned: Vec::new(),
        last_task: (crate::events::Tid::MAX, None),
        read_last: FxHashMap::default(),
        read_unchanged: 0,
        read_unknown: 0,
        execs: 0,
        inflate: None,
        round_marks: Default::default(),
        rec_buf: Vec::new(),
        overflowed: 0,
    };
    let stop = match mode {
        Mode::File(h) => r.file(&h, opts).map_err(err)?,
        Mode::Pipe => r.pipe(opts).map_err(err)?,
    };
    if opts.cancelled() {
        return Err(SourceError::file(name, "load cancelled"));
    }
    Ok(r.finish(stop))
}

struct Reader<'a> {
    name: &'a str,
    data: &'a [u8],
    big: bool,
    /// Shared with `order` (the walk of file mode runs on its own thread).
    attrs: Option<Arc<Attrs>>,
    /// Puts records in perf's delivery order.
    order: Orderer,
    /// Records `order` released, to apply (pipe mode).
    deliver: Vec<Item>,
    /// Pipe mode: attrs seen so far (the `Attrs` index is rebuilt when one arrives).
    pending_attrs: Vec<Attr>,
    desc: Vec<(String, Vec<u64>)>,
    decoder: Option<Decoder>,
    trace: Trace,
    /// The samples as decoded, before the tick is inferred and they go into the trace's store.
    events: EventStore,
    threads: tasks::Threads,
    ticks: TickInfer,
    bad: u64,
    first_bad: Option<String>,
    other_names: FxHashMap<usize, StrId>,
    /// Samples of attributes that are not tracepoints, per attribute index.
    non_tracepoint: std::collections::BTreeMap<usize, u64>,
    lost_records: u64,
    /// LOST_SAMPLES records: (time, cpu, count).
    lost_samples: Vec<(Option<u64>, Option<u32>, u64)>,
    /// Tids whose pid changed (reused by another process).
    tgids: crate::events::TgidTrack,
    /// Samples longer than their fields (a damaged size that swallowed the records after
    /// it): count, bytes past the fields, first offset.
    oversized: (u64, u64, u64),
    /// Events whose sample carries no CPU (no `PERF_SAMPLE_CPU`).
    cpu_unknown: u64,
    /// Tids that events name (switched in, forked, woken) before any sample of theirs gave
    /// them a task entry: completed from COMM/FORK records at the end.
    mentioned: Vec<crate::events::Tid>,
    /// The tid and pid of the last sample whose task was noted.
    last_task: (crate::events::Tid, Option<i32>),
    /// `PERF_SAMPLE_READ`: each counter's last value, by id.
    read_last: FxHashMap<u64, u64>,
    /// Counter values perf drops: unchanged since the counter's last sample, or of no event.
    read_unchanged: u64,
    read_unknown: u64,
    /// COMM records of an exec.
    execs: u64,
    /// `perf record -z`: the decompressed record stream.
    inflate: Option<compressed::Inflater>,
    /// Where the FINISHED_ROUNDs read since fall in the decompressed records (stream offsets).
    round_marks: std::collections::VecDeque<u64>,
    /// A decompressed record, copied out of the stream while it is applied.
    rec_buf: Vec<u8>,
    /// COMPRESSED2 records whose size field had wrapped (perf 6.16+).
    overflowed: u64,
}

/// The flag of an item's source that says it is in the decompressed stream, not the file.
const INFLATED: u64 = 1 << 63;
/// Decompressed bytes held before the consumed ones are dropped.
const INFLATE_KEEP: usize = 4 << 20;

impl<'a> Reader<'a> {
    fn file(&mut self, h: &header::FileHeader, opts: &LoadOptions) -> BinResult<Option<Stop>> {
        let list = attrs::read_file_attrs(self.data, h, self.big)?;
        for (feat, sec) in h.feature_sections(self.data, self.big)? {
            let bytes = header::section_bytes(self.data, sec, &feature_name(feat))?;
            let start = sec.offset as usize;
            match feat {
                HEADER_TRACING_DATA => {
                    let c = Cursor::new(&self.data[..start + bytes.len()], self.big).at(start);
                    self.tracing_data(c)?;
                }
                HEADER_EVENT_DESC => self.desc = attrs::event_desc(bytes, self.big),
                HEADER_NRCPUS => self.nrcpus(bytes),
                HEADER_OSRELEASE => self.trace.kernel_release = osrelease(bytes, self.big),
                _ => {}
            }
        }
        let mut a =
            Attrs::new(list, self.big).map_err(|e| BinError::new(h.attrs.offset, e.to_string()))?;
        a.name_events(&self.desc);
        self.set_attrs(Some(Arc::new(a)));
        let start = h.data.offset as usize;
        let end = h.data.offset.saturating_add(h.data.size) as usize;
        if h.has_feature(HEADER_COMPRESSED) {
            // perf record -z: one thread decompresses, orders and decodes
            self.events.reserve(self.data.len() / 16);
            return self.serial(start, end, false, opts);
        }
        // Tracepoint samples are ~100 bytes: reserve instead of growing (and copying) the list.
        self.events
            .reserve((h.data.size as usize).min(self.data.len()) / 112);
        if let Some(p) = &opts.progress {
            p.total
                .store(h.data.size, std::sync::atomic::Ordering::Relaxed);
        }
        // Two stages on two cores: a thread walks the records and puts them in delivery order,
        // this one decodes what it releases. (Pipe mode stays on one thread: its attributes
        // may change between records.)
        let (data, big) = (self.data, self.big);
        let mut order = std::mem::take(&mut self.order);
        // (batches applied come back to be filled again: a fresh one per batch cost the load a
        // page fault per 128 items, 18 K of them on the 3 M-record bench file)
        let (tx, rx) = crate::events::recycling_channel::<Item>(16);
        let (walked, order) = std::thread::scope(|s| {
            let walker = s.spawn(move || {
                let mut recs = Records::new(data, start, end, big);
                let mut batch = Vec::with_capacity(WALK_BATCH);
                let mut n = 0u32;
                let r = (|| {
                    while let Some(rec) = recs.next() {
                        order.record(rec, 0, &mut batch)?;
                        if batch.len() >= WALK_BATCH
                            && !tx.send(std::mem::replace(&mut batch, tx.buffer(WALK_BATCH)))
                        {
                            return Ok(None);
                        }
                        n = n.wrapping_add(1);
                        if n.is_multiple_of(65536) {
                            if let Some(p) = &opts.progress {
                                p.done.store(
                                    (recs.pos() - start) as u64,
                                    std::sync::atomic::Ordering::Relaxed,
                                );
                            }
                            if opts.cancelled() {
                                return Ok(None);
                            }
                        }
                    }
                    order.finish(&mut batch);
                    Ok(recs.stop.clone())
                })();
                if r.is_ok() && !batch.is_empty() {
                    tx.send(batch);
                }
                (r, order)
            });
            while let Some(mut batch) = rx.recv() {
                for it in batch.drain(..) {
                    self.process(it.src, it.attr as usize);
                }
                rx.give_back(batch);
            }
            walker.join().unwrap_or_else(|_| {
                (
                    Err(BinError::new(
                        start as u64,
                        "internal error: the record walk failed",
                    )),
                    Orderer::default(),
                )
            })
        });
        self.order = order;
        walked
    }

    /// The attributes records are matched against, for both stages.
    fn set_attrs(&mut self, a: Option<Arc<Attrs>>) {
        self.order.attrs = a.clone();
        self.attrs = a;
    }

    fn pipe(&mut self, opts: &LoadOptions) -> BinResult<Option<Stop>> {
        self.events.reserve(self.data.len() / 112);
        let stop = self.serial(16, self.data.len(), true, opts)?;
        if self.pending_attrs.is_empty() {
            return Err(BinError::new(
                16,
                "expected PERF_RECORD_HEADER_ATTR records describing the events, found none",
            ));
        }
        Ok(stop)
    }

    /// The records of `data[start..end]` on this thread: pipe mode (whose attributes may
    /// change between records) and compressed files.
    fn serial(
        &mut self,
        start: usize,
        end: usize,
        pipe: bool,
        opts: &LoadOptions,
    ) -> BinResult<Option<Stop>> {
        let mut recs = Records::new(self.data, start, end, self.big);
        let mut n = 0u32;
        while let Some(rec) = recs.next() {
            match rec.rtype {
                RECORD_HEADER_ATTR if pipe => match attrs::parse_header_attr(rec.body, self.big) {
                    Ok(a) => {
                        self.pending_attrs.push(a);
                        self.set_attrs(None);
                    }
                    Err(e) => return Err(BinError::new(rec.offset as u64, e.to_string())),
                },
                RECORD_HEADER_FEATURE if pipe && rec.body.len() >= 8 => {
                    let feat = read_u64(&rec.body[..8], self.big);
                    let body = &rec.body[8..];
                    match feat {
                        f if f == HEADER_EVENT_DESC as u64 => {
                            self.desc = attrs::event_desc(body, self.big);
                            if let Some(mut a) = self.attrs.take() {
                                Arc::make_mut(&mut a).name_events(&self.desc);
                                self.set_attrs(Some(a));
                            }
                        }
                        f if f == HEADER_NRCPUS as u64 => self.nrcpus(body),
                        f if f == HEADER_OSRELEASE as u64 => {
                            self.trace.kernel_release = osrelease(body, self.big)
                        }
                        _ => {}
                    }
                }
                RECORD_HEADER_TRACING_DATA if pipe => {
                    let start = rec.offset + 8 + rec.body.len();
                    let c =
                        Cursor::new(&self.data[..start + rec.trailing.len()], self.big).at(start);
                    self.tracing_data(c)?;
                }
                RECORD_COMPRESSED | RECORD_COMPRESSED2 => {
                    self.index_attrs(rec.offset)?;
                    self.compressed(rec)?;
                }
                RECORD_FINISHED_ROUND if self.inflate.is_some() => {
                    // the round ends where its compressed records' data ends
                    if let Some(m) = self.inflate.as_ref().and_then(|i| i.round_mark()) {
                        self.round_marks.push_back(m);
                    }
                }
                _ => {
                    self.index_attrs(rec.offset)?;
                    self.record(rec, 0)?;
                }
            }
            n = n.wrapping_add(1);
            if n.is_multiple_of(4096) {
                if let Some(p) = &opts.progress {
                    p.done.store(
                        (recs.pos() - start) as u64,
                        std::sync::atomic::Ordering::Relaxed,
                    );
                }
                if opts.cancelled() {
                    return Ok(None);
                }
            }
        }
        self.overflowed += recs.overflowed;
        if let Some(inf) = &mut self.inflate {
            let at = recs.pos() as u64;
            inf.finish()
                .map_err(|e| BinError::new(at, format!("the compressed records end badly: {e}")))?;
            self.walk_inflated()?;
        }
        Ok(recs.stop)
    }

    /// Pipe mode: the attributes index, rebuilt once the attributes read so far are complete.
    fn index_attrs(&mut self, offset: usize) -> BinResult<()> {
        if self.attrs.is_none() && !self.pending_attrs.is_empty() {
            let mut a = Attrs::new(self.pending_attrs.clone(), self.big)
                .map_err(|e| BinError::new(offset as u64, e.to_string()))?;
            a.name_events(&self.desc);
            self.set_attrs(Some(Arc::new(a)));
        }
        Ok(())
    }

    /// A compressed record: its data decompressed, and the records it completes ordered.
    fn compressed(&mut self, rec: Rec) -> BinResult<()> {
        let at = rec.offset as u64;
        let data =
            compressed::payload(rec.rtype, rec.body, self.big).map_err(|m| BinError::new(at, m))?;
        let inf = self.inflate.get_or_insert_default();
        for part in compressed::parts(rec.rtype, data, self.big) {
            inf.feed(part, at).map_err(|e| {
                BinError::new(
                    at,
                    format!("the PERF_RECORD_COMPRESSED here (perf record -z): {e}"),
                )
            })?;
        }
        self.walk_inflated()
    }

    /// Orders the whole records decompressed so far; drops the bytes no queued record needs.
    fn walk_inflated(&mut self) -> BinResult<()> {
        let mut buf = std::mem::take(&mut self.rec_buf);
        while let Some(inf) = &mut self.inflate {
            let p = inf.walked;
            let Some(b) = inf.bytes_at(p).filter(|b| b.len() >= 8) else {
                break;
            };
            let size = read_u16(&b[6..8], self.big) as usize;
            if size < 8 {
                self.rec_buf = buf;
                return Err(BinError::new(
                    inf.source_of(p).unwrap_or(0),
                    format!(
                        "the record at byte offset {p} of the records decompressed from the PERF_RECORD_COMPRESSED here declares a size of {size} bytes (below its 8-byte header): the compressed data is damaged"
                    ),
                ));
            }
            if b.len() < size {
                break;
            }
            buf.clear();
            buf.extend_from_slice(&b[..size]);
            inf.walked += size as u64;
            while self.round_marks.front().is_some_and(|&m| m <= p) {
                self.round_marks.pop_front();
                self.round();
            }
            let rec = Rec {
                offset: p as usize,
                rtype: read_u32(&buf[0..4], self.big),
                misc: read_u16(&buf[4..6], self.big),
                body: &buf[8..],
                trailing: &[],
            };
            if let Err(e) = self.record(rec, INFLATED) {
                self.rec_buf = buf;
                return Err(e);
            }
        }
        self.rec_buf = buf;
        if let Some(inf) = &mut self.inflate
            && inf.out.len() > INFLATE_KEEP
        {
            let keep = self
                .order
                .min_src_with(INFLATED)
                .map_or(inf.walked, |m| m.min(inf.walked));
            inf.release_before(keep);
        }
        Ok(())
    }

    /// A FINISHED_ROUND: the records it completes applied.
    fn round(&mut self) {
        let mut out = std::mem::take(&mut self.deliver);
        self.order.queue.round(&mut out);
        for it in out.drain(..) {
            self.process(it.src, it.attr as usize);
        }
        self.deliver = out;
    }

    fn nrcpus(&mut self, body: &[u8]) {
        if body.len() >= 4 {
            self.trace.ncpus_hint = Some(read_u32(&body[..4], self.big));
        }
    }

    /// The tracing data: the tracepoint formats (and, from old perf versions, kallsyms).
    fn tracing_data(&mut self, mut c: Cursor) -> BinResult<()> {
        let init = meta::read_initial(&mut c)?;
        meta::read_header_info(&mut c, init.long_size)?;
        let mut formats = meta::read_ftrace_formats(&mut c)?;
        formats.extend(meta::read_event_formats(&mut c)?);
        let ticks = meta::tick_functions(meta::read_kallsyms(&mut c)?);
        let ticks = (!ticks.is_empty()).then_some(ticks);
        let d = Decoder::new(&formats, init.big_endian, ticks, &mut self.trace.strings);
        for x in &d.degraded {
            self.trace.warn(
                "format-lacks-fields",
                format!("{}: the format of {x} lacks a field cidscope decodes; its events are counted as other events", self.name),
            );
        }
        self.decoder = Some(d);
        Ok(())
    }

    /// A record from the stream (pipe mode, compressed files): ordered, and what is released
    /// applied. `flag` marks a decompressed record.
    fn record(&mut self, rec: Rec, flag: u64) -> BinResult<()> {
        let mut out = std::mem::take(&mut self.deliver);
        let r = self.order.record(rec, flag, &mut out);
        for it in out.drain(..) {
            self.process(it.src, it.attr as usize);
        }
        self.deliver = out;
        r
    }

    /// Applies the record at byte offset `src` (of attribute `idx`), in time order.
    fn process(&mut self, src: u64, idx: usize) {
        if src & INFLATED != 0 {
            let at = src & !INFLATED;
            let mut buf = std::mem::take(&mut self.rec_buf);
            buf.clear();
            if let Some(b) = self.inflate.as_ref().and_then(|i| i.bytes_at(at))
                && b.len() >= 8
            {
                let size = (read_u16(&b[6..8], self.big) as usize).min(b.len());
                buf.extend_from_slice(&b[..size]);
            }
            if let Some(mut rec) = Records::new(&buf, 0, buf.len(), self.big).next() {
                rec.offset = src as usize;
                self.apply(rec, idx);
            }
            self.rec_buf = buf;
            return;
        }
        let data = self.data;
        if let Some(rec) = Records::new(data, src as usize, data.len(), self.big).next() {
            self.apply(rec, idx);
        }
    }

    fn apply(&mut self, rec: Rec, idx: usize) {
        let Some(a) = &self.attrs else { return };
        let Some(attr) = a.list.get(idx) else { return };
        // Samples are read directly (every layout, up to the raw data); the other records
        // through linux-perf-event-reader.
        if rec.rtype == RECORD_SAMPLE {
            match records::SampleFields::read(
                rec.body,
                attr.attr.sample_format,
                attr.read_format,
                self.big,
            ) {
                Ok(f) => self.sample(idx, f, rec.offset as u64),
                Err(what) => {
                    let msg = format!(
                        "{}: the sample ({} bytes) ends before its {what} (expected by the event's sample_type)",
                        self.place(rec.offset as u64),
                        rec.body.len() + 8
                    );
                    self.bad(msg);
                }
            }
            return;
        }
        let raw = RawEventRecord::new(
            RecordType(rec.rtype),
            rec.misc,
            RawData::Single(rec.body),
            attr.parse,
        );
        let parsed = match raw.parse() {
            Ok(p) => p,
            Err(e) => {
                let msg = format!(
                    "{}: record type {} does not parse: {e}",
                    self.place(rec.offset as u64),
                    rec.rtype
                );
                self.bad(msg);
                return;
            }
        };
        let common = || raw.common_data().unwrap_or_default();
        match parsed {
            EventRecord::Comm(c) => {
                self.threads
                    .comm(c.pid, c.tid, &c.name.as_slice(), &mut self.trace.strings);
                if c.is_execve {
                    self.exec_comm(c.tid, common().timestamp);
                }
            }
            EventRecord::Fork(f) => self.threads.fork(f.pid, f.tid, f.ptid),
            EventRecord::Lost(l) => {
                let cd = common();
                self.lost_records += 1;
                self.lost(cd.timestamp, cd.cpu, l.count);
            }
            EventRecord::Raw(_) if rec.rtype == RECORD_LOST_SAMPLES => {
                let count = rec.body.get(..8).map_or(0, |b| read_u64(b, self.big));
                let cd = common();
                self.lost_samples.push((cd.timestamp, cd.cpu, count));
            }
            _ => {}
        }
    }

    /// Where byte offset `offset` of the records is, for messages: in the file, or in the data
    /// decompressed from a `PERF_RECORD_COMPRESSED`.
    fn place(&self, offset: u64) -> String {
        if offset & INFLATED == 0 {
            return format!("byte offset {offset}");
        }
        let at = offset & !INFLATED;
        match self.inflate.as_ref().and_then(|i| i.source_of(at)) {
            Some(f) => format!(
                "byte offset {at} of the records decompressed from the PERF_RECORD_COMPRESSED at byte offset {f} and before"
            ),
            None => format!("byte offset {at} of the decompressed records"),
        }
    }

    fn bad(&mut self, msg: String) {
        self.bad += 1;
        if self.first_bad.is_none() {
            self.first_bad = Some(msg);
        }
    }
}

/// The release of a HEADER_OSRELEASE section (a perf string), if it holds one.
fn osrelease(body: &[u8], big: bool) -> Option<String> {
    let n = read_u32(body.get(..4)?, big) as usize;
    let text = body.get(4..4 + n.min(body.len().saturating_sub(4)))?;
    let s = String::from_utf8_lossy(text);
    let s = s.trim_end_matches('\0').trim();
    (!s.is_empty()).then(|| s.to_string())
}

fn feature_name(bit: u32) -> String {
    match bit {
        HEADER_TRACING_DATA => "HEADER_TRACING_DATA feature section".into(),
        HEADER_EVENT_DESC => "HEADER_EVENT_DESC feature section".into(),
        HEADER_NRCPUS => "HEADER_NRCPUS feature section".into(),
        HEADER_OSRELEASE => "HEADER_OSRELEASE feature section".into(),
        b => format!("feature section {b}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct sample read gives what linux-perf-event-reader gives, on every sample of the
    /// file-mode captures in `traces/` (the crate reads no `PERF_SAMPLE_READ`: those files
    /// have none).
    #[test]
    fn direct_sample_read_matches_the_crate() {
        for f in [
            "traces/cyclictest.perf.data",
            "traces/stress-ng.perf.data",
            "traces/lost.perf.data",
        ] {
            let data = std::fs::read(f).expect("read capture");
            let (Mode::File(h), big) = header::read(&data).expect("header") else {
                panic!("{f}: expected file mode");
            };
            let list = attrs::read_file_attrs(&data, &h, big).expect("attrs");
            let a = Attrs::new(list, big).expect("attrs index");
            let end = (h.data.offset + h.data.size) as usize;
            let mut samples = 0;
            for rec in Records::new(&data, h.data.offset as usize, end, big) {
                if rec.rtype != RECORD_SAMPLE {
                    continue;
                }
                samples += 1;
                let idx = a.of_record(rec.rtype, rec.body).expect("attr of sample");
                let attr = &a.list[idx];
                let raw = RawEventRecord::new(
                    RecordType(rec.rtype),
                    rec.misc,
                    RawData::Single(rec.body),
                    attr.parse,
                );
                let Ok(EventRecord::Sample(s)) = raw.parse() else {
                    panic!("{f}: sample at {} does not parse", rec.offset);
                };
                let want = records::SampleFields::from(s.clone());
                let got = records::SampleFields::read(
                    rec.body,
                    attr.attr.sample_format,
                    attr.read_format,
                    big,
                );
                assert_eq!(got.as_ref(), Ok(&want), "{f}: sample at {}", rec.offset);
                // and the queued time is the sample's time
                let o = attr
                    .parse
                    .sample_record_time_offset_from_start
                    .expect("time");
                assert_eq!(Some(read_u64(&rec.body[o as usize..], big)), s.timestamp);
            }
            assert!(samples > 1000, "{f}: {samples} samples");
        }
    }

    /// A sample cut short names the field it ends before.
    #[test]
    fn a_short_sample_names_what_it_lacks() {
        let fmt = SampleFormatAll::TID | SampleFormatAll::TIME | SampleFormatAll::RAW;
        let mut body = Vec::new();
        body.extend_from_slice(&7u32.to_le_bytes());
        body.extend_from_slice(&8u32.to_le_bytes());
        body.extend_from_slice(&99u64.to_le_bytes());
        body.extend_from_slice(&4u32.to_le_bytes());
        body.extend_from_slice(b"abcd");
        let f = records::SampleFields::read(&body, fmt, 0, false).expect("whole sample");
        assert_eq!((f.pid, f.tid, f.timestamp), (Some(7), Some(8), Some(99)));
        assert_eq!(f.raw.as_deref(), Some(&b"abcd"[..]));
        for cut in 0..body.len() {
            let e = records::SampleFields::read(&body[..cut], fmt, 0, false).unwrap_err();
            let want = match cut {
                0..8 => "PERF_SAMPLE_TID",
                8..16 => "PERF_SAMPLE_TIME",
                16..20 => "PERF_SAMPLE_RAW size",
                _ => "PERF_SAMPLE_RAW data",
            };
            assert_eq!(e, want, "cut at {cut}");
        }
    }

    /// Every read_format layout: one counter or a group, with or without the times, ids and
    /// lost counts; the values and ids come back, and what follows (the raw data) is found.
    #[test]
    fn every_read_format_layout() {
        use records::*;
        let fmt = SampleFormatAll::TIME | SampleFormatAll::READ | SampleFormatAll::RAW;
        for rf in 0..32u64 {
            let words = |v: &[u64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
            let times = (rf & FORMAT_TOTAL_TIME_ENABLED != 0) as usize
                + (rf & FORMAT_TOTAL_TIME_RUNNING != 0) as usize;
            let (id, lost) = (rf & FORMAT_ID != 0, rf & FORMAT_LOST != 0);
            let counters: &[(u64, u64)] = if rf & FORMAT_GROUP != 0 {
                &[(10, 100), (20, 200), (30, 300)]
            } else {
                &[(10, 100)]
            };
            let mut r = vec![5u64]; // the time
            if rf & FORMAT_GROUP != 0 {
                r.push(counters.len() as u64);
                r.extend(std::iter::repeat_n(777, times));
                for &(v, i) in counters {
                    r.push(v);
                    if id {
                        r.push(i);
                    }
                    if lost {
                        r.push(9);
                    }
                }
            } else {
                r.push(counters[0].0);
                r.extend(std::iter::repeat_n(777, times));
                if id {
                    r.push(counters[0].1);
                }
                if lost {
                    r.push(9);
                }
            }
            let mut body = words(&r);
            body.extend_from_slice(&3u32.to_le_bytes());
            body.extend_from_slice(b"xyz");
            let f = SampleFields::read(&body, fmt, rf, false).expect("whole sample");
            let got: Vec<_> = f.read.expect("read values").iter().collect();
            let want: Vec<_> = counters
                .iter()
                .map(|&(v, i)| (v, id.then_some(i)))
                .collect();
            assert_eq!(got, want, "read_format {rf:#x}");
            assert_eq!(f.raw.as_deref(), Some(&b"xyz"[..]), "read_format {rf:#x}");
            assert!(SampleFields::read(&body[..body.len() - 8], fmt, rf, false).is_err());
        }
    }

    use linux_perf_event_reader::SampleFormat as SampleFormatAll;
}
