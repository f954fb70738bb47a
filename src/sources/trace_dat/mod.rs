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
pub mod layout;
pub mod ring;

use crate::events::{Event, EventKind, Format, StrId, Strings, TaskMeta, Trace};
use crate::sources::binary::cursor::{BinError, Cursor};
use crate::sources::binary::{merge, tick};
use crate::sources::error::SourceError;
use crate::sources::options::LoadOptions;
use crate::sources::tracefs::decode::Decoder;
use layout::{CpuRef, Layout};
use ring::{CpuOut, Locate, Walk};

/// What this reads (the `format` of `stats --json`).
pub const TRACE_DAT: Format = Format::new("trace.dat", "trace-cmd trace.dat");

/// Loads a trace.dat held in memory.
pub fn load(name: &str, data: &[u8], opts: &LoadOptions) -> Result<Trace, SourceError> {
    let (mut trace, cpus) = decode(name, data, opts)?;
    trace.events = merge::merge_store(cpus);
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
    Ok(merge::pack_beside(
        decode(name, data, opts)?,
        |meta, cpus| merge::merge_store_beside(cpus, |chunks| beside(meta, chunks)).0,
    ))
}

/// Reads a trace.dat held in memory into its metadata (strings, tasks, warnings; no events)
/// and each CPU's events in ring order, to be merged in time order by [`merge`].
pub fn decode(
    name: &str,
    data: &[u8],
    opts: &LoadOptions,
) -> Result<(Trace, Vec<Vec<Event>>), SourceError> {
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
    let mut outs = read_cpus(data, &layout, &walk, &mut trace.strings, opts);
    if opts.cancelled() {
        return Err(SourceError::file(name, "load cancelled"));
    }
    for w in count_others(data, &mut layout, &walk, opts) {
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
    // The tick without kallsyms.
    if !decoder.tick_known() {
        let mut ticks = tick::TickInfer::default();
        for (_, o) in outs.iter_mut() {
            ticks.extend(std::mem::take(&mut o.ticks));
        }
        if !ticks.is_empty() {
            let inferred = ticks.infer();
            if let Some(inf) = &inferred {
                ticks.apply_with(inf.function, |cpu, i| {
                    outs.iter_mut()
                        .find(|(c, _)| *c == cpu)
                        .and_then(|(_, o)| o.events.get_mut(i))
                        .map(|e| e.kind = EventKind::Tick)
                        .is_some()
                });
            }
            let (code, msg) = tick::warning(inferred.as_ref(), name, "the file has");
            trace.warn(code, msg);
        }
    }
    let mut bad = 0;
    let mut first_bad = None;
    let mut skipped = (0u64, 0u64, None);
    let mut past = (0u64, None);
    let stacks: u64 = outs.iter().map(|(_, o)| u64::from(o.stack_traces)).sum();
    trace.rseq_irqs_off = outs.iter().map(|(_, o)| u64::from(o.rseq_irqs_off)).sum();
    if stacks > 0 {
        trace.warn(
            "stack-traces-skipped",
            format!(
                "{name}: {stacks} stack traces (kernel_stack/user_stack records) skipped: each belongs to the event above it, which is kept"
            ),
        );
    }
    for (_, o) in &mut outs {
        for (code, msg) in o.warnings.drain(..) {
            trace.warn(code, format!("{name}: {msg}"));
        }
        bad += o.bad_records;
        if first_bad.is_none() {
            first_bad = o.first_bad.take();
        }
        skipped.0 += o.skipped.0;
        skipped.1 += o.skipped.1;
        if skipped.2.is_none() {
            skipped.2 = o.skipped.2.take();
        }
        past.0 += o.past_commit.0;
        if past.1.is_none() {
            past.1 = o.past_commit.1.take();
        }
    }
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
    note_tasks(&mut trace, &layout, &outs);
    let cpus: Vec<Vec<Event>> = outs.into_iter().map(|(_, o)| o.events).collect();
    Ok((trace, cpus))
}

/// The buffers not read, each walked to count its events: what the warnings say was left out.
fn count_others(data: &[u8], layout: &mut Layout, walk: &Walk, opts: &LoadOptions) -> Vec<String> {
    let others = std::mem::take(&mut layout.others);
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
        let read = std::mem::replace(&mut layout.buffer, b);
        let mut scratch = Strings::new();
        let n: usize = read_cpus(data, layout, &walk, &mut scratch, opts)
            .iter()
            .map(|(_, o)| {
                (o.events.iter())
                    .filter(|e| !matches!(e.kind, EventKind::Lost { .. }))
                    .count()
            })
            .sum();
        let b = std::mem::replace(&mut layout.buffer, read);
        if n > 0 {
            out.push(format!(
                "{what} holds {n} events that were not loaded (cidscope reads one buffer as the capture: load it with --instance {name:?})"
            ));
        }
        layout.others.push(b);
    }
    out
}

/// Reads every CPU, on up to as many threads as there are cores (each with its own copy of the
/// string table; the strings they add are numbered in the order the CPUs' events show them, so
/// the result does not depend on which thread read which CPU).
fn read_cpus(
    data: &[u8],
    layout: &Layout,
    walk: &Walk,
    strings: &mut Strings,
    opts: &LoadOptions,
) -> Vec<(u16, CpuOut)> {
    let cpus = &layout.buffer.cpus;
    let threads = if opts.serial {
        1
    } else {
        opts.threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .min(cpus.len())
            .max(1)
    };
    let base = strings.clone();
    let known = base.len() as u32;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut local = base.clone();
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(cref) = cpus.get(i) else { break };
            if opts.cancelled() {
                break;
            }
            crate::sources::sys::panics::inject("decoder", i);
            let mut out = CpuOut::default();
            read_cpu(data, layout, cref, walk, &mut local, &mut out);
            survey(&mut out, known, local.len());
            if let Some(p) = &opts.progress {
                p.done
                    .fetch_add(cref.size, std::sync::atomic::Ordering::Relaxed);
            }
            done.push((i, out));
        }
        (done, local)
    };
    let results: Vec<(Vec<(usize, CpuOut)>, Strings)> = if threads == 1 {
        vec![work()]
    } else {
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads).map(|_| s.spawn(work)).collect();
            // (a thread's panic goes on here: its CPUs are not dropped unsaid)
            hs.into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    };
    // Each CPU's events with the table of the thread that read it.
    let mut tables: Vec<Strings> = Vec::with_capacity(results.len());
    let mut slots: Vec<Option<(usize, CpuOut)>> = (0..cpus.len()).map(|_| None).collect();
    for (done, local) in results {
        for (i, out) in done {
            slots[i] = Some((tables.len(), out));
        }
        tables.push(local);
    }
    // Strings a thread added after the shared ones get ids in the trace's table in the order
    // the events show them, CPU by CPU: which thread read which CPU changes no id.
    let mut remaps: Vec<Vec<Option<StrId>>> = tables
        .iter()
        .map(|l| vec![None; (l.len() as u32).saturating_sub(known) as usize])
        .collect();
    for (t, out) in slots.iter().flatten() {
        for &id in &out.added {
            if let Some(slot) =
                (id.0.checked_sub(known)).and_then(|k| remaps[*t].get_mut(k as usize))
            {
                slot.get_or_insert_with(|| strings.intern(tables[*t].get(id)));
            }
        }
    }
    // Only a table whose ids moved is applied, its CPUs spread over the reading's threads.
    let moved: Vec<bool> = (remaps.iter())
        .map(|r| (r.iter().enumerate()).any(|(k, g)| g.is_some_and(|g| g.0 != known + k as u32)))
        .collect();
    let rewrite = |slot: &mut Option<(usize, CpuOut)>| {
        let Some((t, out)) = slot else { return };
        if !moved[*t] {
            return;
        }
        let remap = &remaps[*t];
        for id in out.events.iter_mut().filter_map(|e| e.kind.string_mut()) {
            if let Some(Some(g)) = (id.0.checked_sub(known)).and_then(|k| remap.get(k as usize)) {
                *id = *g;
            }
        }
    };
    if threads == 1 || !moved.contains(&true) {
        slots.iter_mut().for_each(rewrite);
    } else {
        let per = slots.len().div_ceil(threads);
        std::thread::scope(|s| {
            for part in slots.chunks_mut(per) {
                s.spawn(|| part.iter_mut().for_each(rewrite));
            }
        });
    }
    // (and those no event names, after them: the table holds what the threads read)
    for (local, remap) in tables.iter().zip(&remaps) {
        for (k, r) in remap.iter().enumerate() {
            if r.is_none() {
                strings.intern(local.get(StrId(known + k as u32)));
            }
        }
    }
    cpus.iter()
        .zip(slots)
        .map(|(c, o)| (c.cpu, o.map(|(_, out)| out).unwrap_or_default()))
        .collect()
}

/// What a CPU's events name, gathered on the thread that read it (no pass over every event on
/// the loading thread): its tasks, and the strings its thread's table holds past the first
/// `known` (the shared ones), each once in the order they show.
fn survey(out: &mut CpuOut, known: u32, table_len: usize) {
    let mut tids = crate::events::TidSet::default();
    let mut seen = vec![false; table_len.saturating_sub(known as usize)];
    for e in out.events.iter_mut() {
        if !e.kind.is_lost() && tids.insert(e.tid) {
            out.tids.push(e.tid);
        }
        let Some(&mut id) = e.kind.string_mut() else {
            continue;
        };
        if let Some(s) = (id.0.checked_sub(known)).and_then(|k| seen.get_mut(k as usize))
            && !*s
        {
            *s = true;
            out.added.push(id);
        }
    }
}

/// Reads one CPU's pages into `out`; compressed data is decompressed chunk by chunk (chunks
/// hold whole pages) into one reused buffer.
fn read_cpu(
    data: &[u8],
    layout: &Layout,
    cref: &CpuRef,
    walk: &Walk,
    strings: &mut Strings,
    out: &mut CpuOut,
) {
    let cpu = cref.cpu;
    if cref.size == 0 {
        return;
    }
    let start = usize::try_from(cref.offset).unwrap_or(usize::MAX);
    let size = usize::try_from(cref.size).unwrap_or(usize::MAX);
    out.events.reserve(
        (size.min(data.len()) / if layout.buffer.compressed { 4 } else { 40 }).min(1 << 26),
    );
    if !layout.buffer.compressed {
        let avail = data
            .get(start..)
            .map_or(&[][..], |d| &d[..d.len().min(size)]);
        walk.pages(
            cpu,
            avail,
            size,
            &Locate::File { base: cref.offset },
            strings,
            out,
        );
        return;
    }
    let lost = |out: &mut CpuOut, why: String| {
        let ts = out.events.last().map_or(u64::MAX, |e| e.ts);
        out.events.push(Event {
            ts,
            tid: 0,
            cpu,
            kind: EventKind::Lost { count: None },
        });
        out.warnings
            .push(("missing-pages", format!("CPU {cpu}: {why}")));
    };
    if start >= data.len() {
        lost(
            out,
            format!(
                "the compressed data at byte offset {start} lies beyond the end of the file ({} bytes); its events are lost",
                data.len()
            ),
        );
        return;
    }
    let mut c = Cursor::new(data, layout.initial.big_endian).at(start);
    let count = match c.u32("the compressed chunk count") {
        Ok(n) => n,
        Err(e) => return lost(out, format!("{e}; its events are lost")),
    };
    let mut buf = Vec::new();
    for k in 0..count {
        let at = c.pos();
        let r = (|| -> Result<(), BinError> {
            let z = c.u32("a compressed chunk size")? as usize;
            let n = c.u32("a chunk's decompressed size")? as usize;
            let body = c.bytes(z, "a compressed chunk")?;
            compress::decompress_into(layout.codec, body, n, &mut buf)
                .map_err(|e| BinError::new(at as u64, e.to_string()))
        })();
        if let Err(e) = r {
            return lost(
                out,
                format!(
                    "compressed chunk {} of {count} at byte offset {at} cannot be read ({}): its pages and those after it are lost",
                    k + 1,
                    e.message
                ),
            );
        }
        walk.pages(
            cpu,
            &buf,
            buf.len(),
            &Locate::Chunk { offset: at as u64 },
            strings,
            out,
        );
    }
}

/// One `TaskMeta` per task that recorded an event: comm from the saved cmdlines, as
/// `trace-cmd report` prints it (`<idle>` for 0, `<...>` when unknown).
fn note_tasks(trace: &mut Trace, layout: &Layout, outs: &[(u16, CpuOut)]) {
    let mut seen: Vec<crate::events::Tid> = (outs.iter())
        .flat_map(|(_, o)| o.tids.iter().copied())
        .collect();
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
