//! perf.data, file mode and pipe mode (`perf record -o -`), read natively from the mapped bytes.
//!
//! * [`header`]: file/pipe header, feature-section table;
//! * [`attrs`]: event attributes and sample ids (parsed with linux-perf-event-reader, which also
//!   decodes each record's body: sample layout from `sample_type`, `sample_id_all` trailers);
//! * [`records`]: the record stream, with the user records that carry trailing data;
//! * [`order`]: perf's finished-round ordering; [`tasks`]: COMM/FORK thread names and processes.
//!
//! Not read: `perf record -z` files (zstd-compressed records) are refused with the offset of
//! the first compressed record.
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
pub mod header;
pub mod order;
pub mod records;
pub mod tasks;

use crate::events::{Event, EventKind, Format, StrId, TID_UNKNOWN, TaskMeta, Tid, Trace};
use crate::sources::binary::cursor::{BinError, BinResult, Cursor, read_u32, read_u64};
use crate::sources::binary::tick::{self, TickInfer};
use crate::sources::error::SourceError;
use crate::sources::options::LoadOptions;
use crate::sources::tracefs::decode::Decoder;
use crate::sources::tracefs::tracing_data as meta;
use attrs::{Attr, Attrs};
use header::{HEADER_EVENT_DESC, HEADER_NRCPUS, HEADER_TRACING_DATA, Mode};
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
    trace.events = events.into();
    trace.ensure_sorted();
    Ok(trace)
}

/// Reads a perf.data held in memory into its metadata (strings, tasks, warnings; no events)
/// and its events in perf's delivery order (time order unless records came late).
pub fn decode(
    name: &str,
    data: &[u8],
    opts: &LoadOptions,
) -> Result<(Trace, Vec<Event>), SourceError> {
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
        events: Vec::new(),
        threads: tasks::Threads::default(),
        tgids: Default::default(),
        no_cpu: 0,
        ticks: TickInfer::default(),
        bad: 0,
        first_bad: None,
        other_names: FxHashMap::default(),
        non_tracepoint: Default::default(),
        lost_records: 0,
        oversized: (0, 0, 0),
        lost_samples: Vec::new(),
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
    events: Vec<Event>,
    threads: tasks::Threads,
    /// Tids whose pid changed (reused by another process).
    tgids: crate::events::TgidTrack,
    /// Samples without PERF_SAMPLE_CPU (put on CPU 0).
    no_cpu: u64,
    ticks: TickInfer,
    bad: u64,
    first_bad: Option<String>,
    other_names: FxHashMap<usize, StrId>,
    /// Samples of attributes that are not tracepoints, per attribute index.
    non_tracepoint: std::collections::BTreeMap<usize, u64>,
    lost_records: u64,
    /// Samples longer than their fields (a damaged size that swallowed the records after
    /// it): count, bytes past the fields, first offset.
    oversized: (u64, u64, u64),
    /// LOST_SAMPLES records: (time, cpu, count).
    lost_samples: Vec<(Option<u64>, Option<u32>, u64)>,
}

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
                _ => {}
            }
        }
        let mut a =
            Attrs::new(list, self.big).map_err(|e| BinError::new(h.attrs.offset, e.to_string()))?;
        a.name_events(&self.desc);
        self.set_attrs(Some(Arc::new(a)));
        let start = h.data.offset as usize;
        let end = h.data.offset.saturating_add(h.data.size) as usize;
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
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Item>>(16);
        let (walked, order) = std::thread::scope(|s| {
            let walker = s.spawn(move || {
                let mut recs = Records::new(data, start, end, big);
                let mut batch = Vec::with_capacity(WALK_BATCH);
                let mut n = 0u32;
                let r = (|| {
                    while let Some(rec) = recs.next() {
                        order.record(rec, &mut batch)?;
                        if batch.len() >= WALK_BATCH && tx.send(std::mem::take(&mut batch)).is_err()
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
                    let _ = tx.send(batch);
                }
                (r, order)
            });
            for batch in rx {
                for it in batch {
                    self.process(it.src, it.attr as usize);
                }
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
        let mut recs = Records::new(self.data, 16, self.data.len(), self.big);
        self.events.reserve(self.data.len() / 112);
        let mut n = 0u32;
        for rec in recs.by_ref() {
            match rec.rtype {
                RECORD_HEADER_ATTR => match attrs::parse_header_attr(rec.body, self.big) {
                    Ok(a) => {
                        self.pending_attrs.push(a);
                        self.set_attrs(None);
                    }
                    Err(e) => return Err(BinError::new(rec.offset as u64, e.to_string())),
                },
                RECORD_HEADER_FEATURE if rec.body.len() >= 8 => {
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
                        _ => {}
                    }
                }
                RECORD_HEADER_TRACING_DATA => {
                    let start = rec.offset + 8 + rec.body.len();
                    let c =
                        Cursor::new(&self.data[..start + rec.trailing.len()], self.big).at(start);
                    self.tracing_data(c)?;
                }
                _ => {
                    if self.attrs.is_none() && !self.pending_attrs.is_empty() {
                        let mut a = Attrs::new(self.pending_attrs.clone(), self.big)
                            .map_err(|e| BinError::new(rec.offset as u64, e.to_string()))?;
                        a.name_events(&self.desc);
                        self.set_attrs(Some(Arc::new(a)));
                    }
                    self.record(rec)?;
                }
            }
            n = n.wrapping_add(1);
            if n.is_multiple_of(65536) && opts.cancelled() {
                return Ok(None);
            }
        }
        if self.pending_attrs.is_empty() {
            return Err(BinError::new(
                16,
                "expected PERF_RECORD_HEADER_ATTR records describing the events, found none",
            ));
        }
        Ok(recs.stop)
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

    /// A record from the stream (pipe mode): ordered, and what is released applied.
    fn record(&mut self, rec: Rec) -> BinResult<()> {
        let mut out = std::mem::take(&mut self.deliver);
        let r = self.order.record(rec, &mut out);
        for it in out.drain(..) {
            self.process(it.src, it.attr as usize);
        }
        self.deliver = out;
        r
    }

    /// Applies the record at byte offset `src` (of attribute `idx`), in time order.
    fn process(&mut self, src: u64, idx: usize) {
        let data = self.data;
        if let Some(rec) = Records::new(data, src as usize, data.len(), self.big).next() {
            self.apply(rec, idx);
        }
    }

    fn apply(&mut self, rec: Rec, idx: usize) {
        let Some(a) = &self.attrs else { return };
        let Some(attr) = a.list.get(idx) else { return };
        // The common sample layouts are read directly; the others (and any sample the direct
        // read rejects, for the crate's error message) go through linux-perf-event-reader.
        if rec.rtype == RECORD_SAMPLE
            && attr.fast_sample
            && let Some(f) =
                records::SampleFields::read(rec.body, attr.attr.sample_format, self.big)
        {
            self.sample(idx, f, rec.offset as u64);
            return;
        }
        let raw = RawEventRecord::new(
            RecordType(rec.rtype),
            rec.misc,
            RawData::Single(rec.body),
            attr.parse,
        );
        let where_ = || format!("byte offset {}", rec.offset);
        let parsed = match raw.parse() {
            Ok(p) => p,
            Err(e) => {
                let msg = format!(
                    "{}: record type {} does not parse: {e}",
                    where_(),
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
            }
            EventRecord::Fork(f) => self.threads.fork(f.pid, f.tid, f.ptid),
            EventRecord::Lost(l) => {
                let cd = common();
                self.lost_records += 1;
                self.lost(cd.timestamp, cd.cpu, l.count);
            }
            EventRecord::Sample(s) => self.sample(idx, s.into(), rec.offset as u64),
            EventRecord::Raw(_) if rec.rtype == RECORD_LOST_SAMPLES => {
                let count = rec.body.get(..8).map_or(0, |b| read_u64(b, self.big));
                let cd = common();
                self.lost_samples.push((cd.timestamp, cd.cpu, count));
            }
            _ => {}
        }
    }

    fn lost(&mut self, ts: Option<u64>, cpu: Option<u32>, count: u64) {
        let ts = ts
            .filter(|&t| t <= crate::events::MAX_TS)
            .unwrap_or_else(|| self.events.last().map_or(0, |e| e.ts));
        self.events.push(Event {
            ts,
            tid: 0,
            cpu: cpu.filter(|&c| c < Trace::MAX_CPUS).unwrap_or(0) as u16,
            kind: EventKind::Lost {
                count: Some(count.min(u32::MAX as u64) as u32),
            },
        });
    }

    fn sample(&mut self, idx: usize, s: records::SampleFields, offset: u64) {
        // formatted only when a sample is bad: this runs for every sample
        let where_ = || format!("byte offset {offset}");
        if s.extra > 0 {
            let o = &mut self.oversized;
            if o.0 == 0 {
                o.2 = offset;
            }
            o.0 += 1;
            o.1 += s.extra as u64;
        }
        let Some(a) = &self.attrs else { return };
        let attr = &a.list[idx];
        let ts = s.timestamp.unwrap_or(0);
        if ts > crate::events::MAX_TS {
            self.bad(format!(
                "{}: timestamp {ts} ns (expected below 2^63)",
                where_()
            ));
            return;
        }
        if s.cpu.is_none() {
            self.no_cpu += 1;
        }
        let cpu = s.cpu.unwrap_or(0);
        if cpu >= Trace::MAX_CPUS {
            self.bad(format!("{}: CPU {cpu} (expected below 8192)", where_()));
            return;
        }
        let cpu = cpu as u16;
        let strings = &mut self.trace.strings;
        let (kind, hr) = match (attr.tracepoint_id(), &self.decoder, &s.raw) {
            (Some(id), Some(d), Some(raw)) => match d.decode(id, raw, strings) {
                Ok(k) => k,
                Err(e) => {
                    self.bad(format!("{}: sample of tracepoint {id}: {e}", where_()));
                    return;
                }
            },
            _ => {
                let not_tp = attr.tracepoint_id().is_none();
                if not_tp {
                    *self.non_tracepoint.entry(idx).or_default() += 1;
                }
                let name = *self.other_names.entry(idx).or_insert_with(|| {
                    let n = attr
                        .name
                        .clone()
                        .unwrap_or_else(|| match attr.tracepoint_id() {
                            Some(id) => format!("tracepoint-{id}"),
                            None => "sample".into(),
                        });
                    let n = n.split(':').nth(1).map(str::to_string).unwrap_or(n);
                    // a sample that is not a tracepoint is not that event, whatever its name
                    let n = if not_tp {
                        format!("{n} (not a tracepoint: {:?})", attr.attr.type_)
                    } else {
                        n
                    };
                    strings.intern(n.as_bytes())
                });
                (EventKind::Other { name }, None)
            }
        };
        let known = s.tid.filter(|&t| t >= 0).map(|t| t as Tid);
        let tid = match (known, kind) {
            (Some(t), _) => t,
            // The kernel reports -1 for a task already unhashed (its last switch): the switch
            // still names it, as `perf script`'s text does.
            (None, EventKind::SchedSwitch { prev_tid, .. }) => prev_tid,
            (None, _) => TID_UNKNOWN,
        };
        if let Some(t) = known {
            let tgid = s.pid.filter(|&p| p >= 0).map(|p| p as Tid);
            match self.trace.tasks.get_mut(&t) {
                Some(m) => {
                    if let Some(c) = self.tgids.observe(m, t, tgid, ts) {
                        self.trace.tgid_changes.push(c);
                    }
                }
                None => {
                    let comm = self.threads.comm_of(t, &mut self.trace.strings);
                    self.trace.tasks.insert(t, TaskMeta { tgid, comm });
                }
            }
        }
        if let Some(h) = hr {
            self.ticks.push(self.events.len(), cpu, h);
        }
        self.events.push(Event { ts, tid, cpu, kind });
    }

    fn bad(&mut self, msg: String) {
        self.bad += 1;
        if self.first_bad.is_none() {
            self.first_bad = Some(msg);
        }
    }

    fn finish(mut self, stop: Option<Stop>) -> (Trace, Vec<Event>) {
        let mut out = std::mem::take(&mut self.deliver);
        self.order.finish(&mut out);
        for it in out.drain(..) {
            self.process(it.src, it.attr as usize);
        }
        let name = self.name;
        // perf record ≥ 6.x ends the file with one LOST_SAMPLES per event, repeating as counts
        // per event what the LOST records already reported for the ring buffer: counted only
        // when there are no LOST records (and then they are the kernel's own, e.g. AUX drops).
        let ls = std::mem::take(&mut self.lost_samples);
        if self.lost_records == 0 {
            for (ts, cpu, n) in ls {
                self.lost(ts, cpu, n);
            }
        } else if !ls.is_empty() {
            let n: u64 = ls.iter().map(|x| x.2).sum();
            self.trace.warn(
                "lost-samples-repeated",
                format!("{name}: {} LOST_SAMPLES records ({n} samples) repeat per event the loss the {} LOST records report; counted once", ls.len(), self.lost_records),
            );
        }
        match stop {
            Some(Stop::Truncated { offset, need, have }) => self.trace.warn(
                "truncated-record",
                format!(
                    "{name}: the file ends at byte offset {} inside the record at byte offset {offset} ({need} bytes expected, {have} present): the file is truncated; the records before it were loaded, the rest is lost",
                    offset + have
                ),
            ),
            Some(Stop::Corrupt { offset, size }) => self.trace.warn(
                "corrupt-record",
                format!(
                    "{name}: the record at byte offset {offset} declares a size of {size} bytes (below its 8-byte header): the records before it were loaded, the rest of the data was not read"
                ),
            ),
            None => {}
        }
        if self.no_cpu > 0 {
            self.trace.warn(
                crate::events::Warning::CPU_UNKNOWN,
                format!("{name}: {} samples carry no CPU (recorded without PERF_SAMPLE_CPU): they were put on CPU 0, so CPUs, the CID bound and who runs at once are not known", self.no_cpu),
            );
        }
        if self.decoder.is_none() {
            self.trace.warn(
                "no-tracing-data",
                format!("{name}: the file has no tracing data (tracepoint formats); samples are counted by event name only"),
            );
        }
        for (&idx, &n) in &self.non_tracepoint {
            let Some(a) = self.attrs.as_ref().and_then(|a| a.list.get(idx)) else {
                continue;
            };
            self.trace.warn(
                "non-tracepoint-attribute",
                format!(
                    "{name}: attribute {idx} ({}) has type {:?}, not a tracepoint: its {n} samples are kept as events without fields",
                    a.name.as_deref().unwrap_or("unnamed"),
                    a.attr.type_
                ),
            );
        }
        let (n, at, t) = self.order.unknown_types;
        if n > 0 {
            self.trace.warn(
                "unknown-record-type",
                format!("{name}: {n} records have a type no kernel or perf defines, or one no attribute of the file produces (first: type {t} at byte offset {at}): damage; they were skipped"),
            );
        }
        let (n, at) = self.order.unknown;
        if n > 0 {
            self.trace.warn(
                "unknown-event-id",
                format!("{name}: {n} records name an event id that no attribute lists (first at byte offset {at}); they were skipped"),
            );
        }
        let (n, extra, at) = self.oversized;
        if n > 0 {
            self.trace.warn(
                "oversized-record",
                format!("{name}: {n} samples are {extra} bytes longer than their fields (first at byte offset {at}): a damaged record size, and any records inside those bytes are lost"),
            );
        }
        if self.bad > 0 {
            self.trace.warn(
                "bad-records-skipped",
                format!(
                    "{name}: {} records could not be decoded and were skipped (first: {})",
                    self.bad,
                    self.first_bad.take().unwrap_or_default()
                ),
            );
        }
        if self.order.queue.late > 0 {
            self.trace.warn(
                "records-out-of-round",
                format!(
                    "{name}: {} records are older than records of an earlier finished round (perf reports them as out of order)",
                    self.order.queue.late
                ),
            );
        }
        if self.decoder.as_ref().is_some_and(|d| !d.tick_known()) && !self.ticks.is_empty() {
            let inferred = self.ticks.infer();
            if let Some(inf) = &inferred {
                self.ticks.apply(&mut self.events, inf.function);
            }
            let (code, msg) = tick::warning(inferred.as_ref(), name, "perf.data carries");
            self.trace.warn(code, msg);
        }
        let mentioned: Vec<Tid> = self
            .events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::SchedSwitch { next_tid, .. } => Some(next_tid),
                EventKind::SchedProcessFork { child, .. } => Some(child),
                EventKind::SchedWakeupNew { tid, .. } | EventKind::TaskNewtask { tid, .. } => {
                    Some(tid)
                }
                _ => None,
            })
            .collect();
        self.threads
            .complete(&mut self.trace.tasks, mentioned.into_iter());
        (self.trace, self.events)
    }
}

fn feature_name(bit: u32) -> String {
    match bit {
        HEADER_TRACING_DATA => "HEADER_TRACING_DATA feature section".into(),
        HEADER_EVENT_DESC => "HEADER_EVENT_DESC feature section".into(),
        HEADER_NRCPUS => "HEADER_NRCPUS feature section".into(),
        b => format!("feature section {b}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct sample read gives what linux-perf-event-reader gives, on every sample of the
    /// file-mode captures in `traces/`.
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
            let (mut direct, mut samples) = (0, 0);
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
                if attr.fast_sample {
                    direct += 1;
                    let got = records::SampleFields::read(rec.body, attr.attr.sample_format, big);
                    assert_eq!(got.as_ref(), Some(&want), "{f}: sample at {}", rec.offset);
                    // and the queued time is the sample's time
                    let o = attr
                        .parse
                        .sample_record_time_offset_from_start
                        .expect("time");
                    assert_eq!(Some(read_u64(&rec.body[o as usize..], big)), s.timestamp);
                }
            }
            assert!(samples > 1000, "{f}: {samples} samples");
            assert_eq!(
                direct, samples,
                "{f}: every sample of a tracepoint recording is read directly"
            );
        }
    }

    /// A sample cut short is no direct read: the crate's parse reports it.
    #[test]
    fn a_short_sample_is_left_to_the_crate() {
        let fmt = SampleFormatAll::TID | SampleFormatAll::TIME | SampleFormatAll::RAW;
        let mut body = Vec::new();
        body.extend_from_slice(&7u32.to_le_bytes());
        body.extend_from_slice(&8u32.to_le_bytes());
        body.extend_from_slice(&99u64.to_le_bytes());
        body.extend_from_slice(&4u32.to_le_bytes());
        body.extend_from_slice(b"abcd");
        let f = records::SampleFields::read(&body, fmt, false).expect("whole sample");
        assert_eq!((f.pid, f.tid, f.timestamp), (Some(7), Some(8), Some(99)));
        assert_eq!(f.raw.as_deref(), Some(&b"abcd"[..]));
        for cut in 0..body.len() {
            assert!(records::SampleFields::read(&body[..cut], fmt, false).is_none());
        }
        assert!(!records::SampleFields::covers(fmt | SampleFormatAll::READ));
    }

    use linux_perf_event_reader::SampleFormat as SampleFormatAll;
}
