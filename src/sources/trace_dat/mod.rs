//! trace-cmd `trace.dat`, file versions 6 and 7, read natively from the mapped bytes.
//!
//! * [`layout`]: the file structure (v6 header, v7 option sections, compressed sections);
//! * [`ring`]: the per-CPU ring-buffer pages (time extends, absolute stamps, padding, missed
//!   events, truncated pages);
//! * [`compress`]: zstd/zlib sections.
//!
//! Shared with perf.data: the metadata blocks (`tracefs::tracing_data`), the raw-record decoder
//! (`tracefs::decode`), the bounds-checked cursor, the merge of CPUs in time order as
//! `trace-cmd report` does it, and the tick inference (`binary`).
//!
//! Tasks: comms come from the saved cmdlines (what `trace-cmd report` prints). trace-cmd 3.x
//! stores no tgids (no saved_tgids section exists in the format), so `TaskMeta::tgid` stays
//! unknown for trace.dat.

pub mod compress;
pub mod instances;
mod joined;
pub mod layout;
pub mod ring;
mod schedule;
mod units;

use crate::events::{EventKind, EventStore, Format, Strings, TaskMeta, Trace};
use crate::sources::binary::cursor::BinError;
use crate::sources::binary::merge::{self, Blocks, Whole};
use crate::sources::binary::tick;
use crate::sources::error::SourceError;
use crate::sources::options::LoadOptions;
use crate::sources::tracefs::decode::Decoder;
use joined::{CpuSums, Joined};
use layout::Layout;
use ring::Walk;
use schedule::Schedule;
use units::CpuData;

/// What this reads (the `format` of `stats --json`).
pub const TRACE_DAT: Format = Format::new("trace.dat", "trace-cmd trace.dat");

/// Loads a trace.dat held in memory.
pub fn load(name: &str, data: &[u8], opts: &LoadOptions) -> Result<Trace, SourceError> {
    let (mut trace, ()) = read(name, data, opts, |_, src, cap| {
        (merge::merge_store_from(src, cap), ())
    })?;
    trace.ensure_sorted();
    Ok(trace)
}

/// [`load`] with `beside` run over the events as they are merged (see
/// [`crate::sources::file_format::FileFormat::load_beside`]).
pub fn load_beside(
    name: &str,
    data: &[u8],
    opts: &LoadOptions,
    beside: &crate::sources::file_format::BesidePass<'_>,
) -> Result<(Trace, bool), SourceError> {
    let (mut trace, ()) = read(name, data, opts, |meta, src, cap| {
        merge::merge_store_beside(src, cap, |chunks| beside(meta, chunks))
    })?;
    let sorted = trace.ensure_sorted();
    Ok((trace, !sorted))
}

/// Reads a trace.dat held in memory: its metadata, then its CPUs' events, decoded unit by unit
/// on worker threads and merged in time order by `merge` into the trace's store (`merge` is
/// given the trace's metadata as known before the events: no tasks, strings or warnings yet).
fn read<R>(
    name: &str,
    data: &[u8],
    opts: &LoadOptions,
    merge: impl FnOnce(&Trace, &mut dyn Blocks, usize) -> (EventStore, R),
) -> Result<(Trace, R), SourceError> {
    let err =
        |e: BinError| SourceError::at_offset(name, e.offset, format!("trace.dat: {}", e.message));
    let mut layout = layout::read(data).map_err(err)?;
    // (every page's data starts there: past the page, no page could hold an event)
    if layout.page.data_offset >= layout.buffer.page_size as usize {
        return Err(SourceError::file(
            name,
            format!(
                "trace.dat: header_page puts a page's data at byte {}, not inside a {}-byte page (expected the offset of its `data` field below the page size)",
                layout.page.data_offset, layout.buffer.page_size
            ),
        ));
    }
    if let Some(name) = &opts.instance {
        instances::select(data, &mut layout, name).map_err(err)?;
    }
    let mut trace = Trace::new(name, TRACE_DAT);
    trace.ncpus_hint = layout.ncpus;
    trace.kernel_release = layout.kernel_release.clone();
    let decoder = Decoder::new(
        &layout.formats,
        layout.initial.big_endian,
        layout.tick_functions.clone(),
        &mut trace.strings,
    );
    let walk = Walk {
        decoder: &decoder,
        page_size: layout.buffer.page_size as usize,
        header: layout.page,
        big_endian: layout.initial.big_endian,
        ts_offset: layout.ts_offset,
    };
    let others = std::mem::take(&mut layout.others);
    let cpus: Vec<CpuData> = (layout.buffer.cpus.iter())
        .map(|cref| CpuData::of(data, &layout, &layout.buffer, cref))
        .collect();
    let lanes = cpus.len();
    let base = std::mem::take(&mut trace.strings);
    let known = base.len() as u32;
    // (a guess at the events, from the bytes the CPUs take: what is reserved and not filled
    // is not touched)
    let capacity = (cpus.iter())
        .map(CpuData::events_guess)
        .fold(0usize, usize::saturating_add)
        .min(1 << 26);
    let sched = Schedule::new(cpus, &walk, known, opts);
    let threads = if opts.serial {
        1
    } else {
        opts.threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .min(sched.slots())
            .max(1)
    };
    let inline = threads == 1;
    let (mut joined, tables, r, tick_note, others) = std::thread::scope(|sc| {
        // (however the merge ends, the workers stop: none waits for room that never comes)
        let _stop = sched.stopper();
        // (the buffers not read are counted beside the read)
        let counted = (!others.is_empty())
            .then(|| sc.spawn(|| count_others(data, &layout, others, &walk, opts)));
        let workers: Vec<_> = (0..if inline { 0 } else { threads })
            .map(|w| {
                let (sched, base) = (&sched, &base);
                sc.spawn(move || sched.work(w, base))
            })
            .collect();
        let mut joined = Joined::new(&sched, base.clone(), known, lanes, inline);
        // The tick without kallsyms: inferred from every CPU's expiries, so the CPUs are
        // joined whole first (the expiries taken as ticks are events before the merge).
        let (r, tick_note) = if decoder.tick_known() {
            (merge(&trace, &mut joined, capacity), None)
        } else {
            let (mut whole, ticks) = joined.whole(lanes);
            let note = (!ticks.is_empty()).then(|| {
                let inferred = ticks.infer();
                if let Some(inf) = &inferred {
                    ticks.apply_with(inf.function, |lane, i| {
                        (whole.get_mut(lane as usize))
                            .and_then(|v| v.get_mut(i))
                            .map(|e| e.kind = EventKind::Tick)
                            .is_some()
                    });
                }
                tick::warning(inferred.as_ref(), name, "the file has")
            });
            (merge(&trace, &mut Whole(whole), capacity), note)
        };
        sched.stop();
        // (a worker's panic goes on here: its CPUs are not dropped unsaid)
        let tables: Vec<Strings> = (workers.into_iter())
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect();
        let others = (counted.map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))))
            .unwrap_or_default();
        (joined, tables, r, tick_note, others)
    });
    if opts.cancelled() {
        return Err(SourceError::file(name, "load cancelled"));
    }
    let (store, result) = r;
    trace.events = store;
    // (the merge was handed the metadata known before the events: the tasks, strings and
    // warnings follow)
    let tids = std::mem::take(&mut joined.tids);
    let sums = std::mem::take(&mut joined.sums);
    trace.strings = joined.finish(tables);
    for w in others {
        trace.warn("instance-buffer-skipped", format!("{name}: {w}"));
    }
    for (code, msg) in &layout.notes {
        trace.warn(code, format!("{name}: {msg}"));
    }
    for d in &decoder.degraded {
        trace.warn(
            "format-lacks-fields",
            format!("{name}: the format of {d} lacks a field cidscope decodes; its events are counted as other events"),
        );
    }
    if let Some((code, msg)) = tick_note {
        trace.warn(code, msg);
    }
    warn_sums(&mut trace, name, sums);
    note_tasks(&mut trace, &layout, tids);
    Ok((trace, result))
}

/// The warnings of what the CPUs' units found, CPU by CPU.
fn warn_sums(trace: &mut Trace, name: &str, sums: Vec<CpuSums>) {
    // (summed over CPUs in u64: each CPU's own counts saturate at u32)
    let stacks: u64 = sums.iter().map(|o| u64::from(o.found.stack_traces)).sum();
    trace.rseq_irqs_off = sums.iter().map(|o| u64::from(o.found.rseq_irqs_off)).sum();
    let mut all = ring::Found::default();
    for mut o in sums {
        all.add(&mut o.found);
    }
    if stacks > 0 {
        trace.warn(
            "stack-traces-skipped",
            format!(
                "{name}: {stacks} stack traces (kernel_stack/user_stack records) skipped: each belongs to the event above it, which is kept"
            ),
        );
    }
    for (code, msg) in all.warnings {
        trace.warn(code, format!("{name}: {msg}"));
    }
    let (bad, first_bad, skipped, past) =
        (all.bad_records, all.first_bad, all.skipped, all.past_commit);
    if past.0 > 0 {
        trace.warn(
            "data-past-commit",
            format!(
                "{name}: {} ring-buffer pages hold data past their committed size (a damaged page header): the data past it was not read, its events lost (first: {})",
                past.0,
                past.1.unwrap_or_default()
            ),
        );
    }
    if skipped.0 > 0 {
        trace.warn(
            "undecodable-page-data",
            format!(
                "{name}: {} committed bytes in {} ring-buffer pages could not be walked (a corrupt entry header) and were skipped, their events lost (first: {})",
                skipped.1,
                skipped.0,
                skipped.2.unwrap_or_default()
            ),
        );
    }
    if bad > 0 {
        trace.warn(
            "bad-records-skipped",
            format!(
                "{name}: {bad} records could not be decoded and were skipped (first: {})",
                first_bad.unwrap_or_default()
            ),
        );
    }
}

/// The buffers not read (`others`, of `layout`), each walked to count its events: what the
/// warnings say was left out.
fn count_others(
    data: &[u8],
    layout: &Layout,
    others: Vec<layout::Buffer>,
    walk: &Walk,
    opts: &LoadOptions,
) -> Vec<String> {
    let mut out = Vec::new();
    for b in others {
        let what = instances::shown(&b);
        let b = match instances::prepare(data, layout, b) {
            Ok(b) => b,
            Err(e) => {
                out.push(format!(
                    "{what} could not be located ({}), so its events were not loaded",
                    e.message
                ));
                continue;
            }
        };
        let name = b.name.clone();
        let walk = Walk {
            page_size: b.page_size as usize,
            ..*walk
        };
        // (unit by unit, one at a time: only the count is kept)
        let mut scratch = Strings::new();
        let mut buf = Vec::new();
        let mut n = 0usize;
        for cref in &b.cpus {
            let cpu = CpuData::of(data, layout, &b, cref);
            for unit in cpu.units(walk.page_size) {
                if opts.cancelled() {
                    break;
                }
                let mut o = ring::CpuOut::default();
                let last = cpu.decode(&walk, &unit, &mut scratch, &mut o, &mut buf);
                n += (o.events.iter()).filter(|e| !e.kind.is_lost()).count();
                if last {
                    break;
                }
            }
        }
        if n > 0 {
            out.push(format!(
                "{what} holds {n} events that were not loaded (cidscope reads one buffer as the capture: load it with --instance {name:?})"
            ));
        }
    }
    out
}

/// One `TaskMeta` per task that recorded an event: comm from the saved cmdlines, as
/// `trace-cmd report` prints it (`<idle>` for 0, `<...>` when unknown).
fn note_tasks(trace: &mut Trace, layout: &Layout, mut seen: Vec<crate::events::Tid>) {
    seen.sort_unstable();
    seen.dedup();
    for tid in seen {
        let comm: &[u8] = match layout.cmdlines.get(&tid) {
            Some(c) => c,
            None if tid == 0 => b"<idle>",
            None => b"<...>",
        };
        let comm = trace.strings.intern(comm);
        trace.tasks.insert(tid, TaskMeta { tgid: None, comm });
    }
}
/// The recording kernel's release from the UNAME option (the metadata is read, not the events).
pub fn kernel_release(data: &[u8]) -> Option<String> {
    layout::read(data).ok()?.kernel_release
}
