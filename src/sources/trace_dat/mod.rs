//! trace-cmd `trace.dat`, file versions 6 and 7, read natively from the mapped bytes.
//!
//! * [`layout`]: the file structure (v6 header, v7 option sections, compressed sections);
//! * [`meta`]: the metadata blocks (header page, event formats, kallsyms, cmdlines), shared with
//!   perf.data's tracing-data section, which has the same layout;
//! * [`format`]: tracepoint format files; [`decode`]: raw records → canonical events through
//!   the field offsets in those files;
//! * [`ring`]: the per-CPU ring-buffer pages (time extends, absolute stamps, padding, missed
//!   events, truncated pages); [`merge`]: CPUs merged in time order as `trace-cmd report` does;
//! * [`tick`]: telling the tick's hrtimer apart when no kallsyms names it;
//! * [`bytes`], [`compress`]: bounds-checked reads, zstd/zlib.
//!
//! Tasks: comms come from the saved cmdlines (what `trace-cmd report` prints). trace-cmd 3.x
//! stores no tgids (no saved_tgids section exists in the format), so `TaskMeta::tgid` stays
//! unknown for trace.dat.

pub mod bytes;
pub mod compress;
pub mod decode;
pub mod format;
pub mod layout;
pub mod merge;
pub mod meta;
pub mod ring;
pub mod tick;

use super::{LoadOptions, SourceError};
use crate::events::{Format, TaskMeta, Trace};
use bytes::{BinError, Cursor};
use compress::Codec;
use decode::Decoder;
use layout::{CpuRef, Layout};
use ring::{CpuOut, Locate, Walk};
use std::borrow::Cow;

/// Loads a trace.dat held in memory.
pub fn load(name: &str, data: &[u8], opts: &LoadOptions) -> Result<Trace, SourceError> {
    let err =
        |e: BinError| SourceError::at_offset(name, e.offset, format!("trace.dat: {}", e.message));
    let layout = layout::read(data).map_err(err)?;
    let mut trace = Trace::new(name, Format::TraceDat);
    trace.ncpus_hint = layout.ncpus;
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
    let mut outs = Vec::with_capacity(layout.buffer.cpus.len());
    for cref in &layout.buffer.cpus {
        if opts.cancelled() {
            return Err(SourceError::file(name, "load cancelled"));
        }
        let mut out = CpuOut::default();
        read_cpu(data, &layout, cref, &walk, &mut trace.strings, &mut out);
        if let Some(p) = &opts.progress {
            p.done
                .fetch_add(cref.size, std::sync::atomic::Ordering::Relaxed);
        }
        outs.push((cref.cpu, out));
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
            match ticks.infer() {
                Some(inf) => {
                    ticks.apply_with(inf.function, |cpu, i| {
                        outs.iter_mut()
                            .find(|(c, _)| *c == cpu)
                            .and_then(|(_, o)| o.events.get_mut(i))
                            .map(|e| e.kind = crate::events::EventKind::Tick)
                            .is_some()
                    });
                    trace.warn(
                        "tick-inferred",
                        format!("{name}: the file has no kallsyms to name hrtimer callbacks; {}", inf.describe()),
                    );
                }
                None => trace.warn(
                    "tick-unknown",
                    format!("{name}: the file has no kallsyms to name hrtimer callbacks, and no callback looks like the scheduler tick; hrtimer_expire_entry events are counted as other events"),
                ),
            }
        }
    }
    let mut bad = 0;
    let mut first_bad = None;
    for (_, o) in &mut outs {
        for (code, msg) in o.warnings.drain(..) {
            trace.warn(code, format!("{name}: {msg}"));
        }
        bad += o.bad_records;
        if first_bad.is_none() {
            first_bad = o.first_bad.take();
        }
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
    trace.events = merge::merge(outs.into_iter().map(|(_, o)| o.events).collect());
    note_tasks(&mut trace, &layout);
    trace.ensure_sorted();
    Ok(trace)
}

/// Reads one CPU's pages (decompressing when needed) into `out`.
fn read_cpu(
    data: &[u8],
    layout: &Layout,
    cref: &CpuRef,
    walk: &Walk,
    strings: &mut crate::events::Strings,
    out: &mut CpuOut,
) {
    let cpu = cref.cpu;
    let start = usize::try_from(cref.offset).unwrap_or(usize::MAX);
    let size = usize::try_from(cref.size).unwrap_or(usize::MAX);
    if cref.size == 0 {
        return;
    }
    if !layout.buffer.compressed {
        let avail = data
            .get(start..)
            .map_or(&[][..], |d| &d[..d.len().min(size)]);
        walk.cpu(
            cpu,
            avail,
            size,
            &Locate::File { base: cref.offset },
            strings,
            out,
        );
        return;
    }
    let (bytes, chunks, problem) =
        decompress_cpu(data, layout.codec, layout.initial.big_endian, start);
    let expected = if problem.is_some() {
        // Pages past the cut cannot be counted; mark the loss at the end.
        bytes.len()
    } else {
        bytes.len()
    };
    walk.cpu(
        cpu,
        &bytes,
        expected,
        &Locate::Chunks(&chunks),
        strings,
        out,
    );
    if let Some(p) = problem {
        let ts = out.events.last().map_or(u64::MAX, |e| e.ts);
        out.events.push(crate::events::Event {
            ts,
            tid: 0,
            cpu,
            kind: crate::events::EventKind::Lost { count: None },
        });
        out.warnings
            .push(("missing-pages", format!("CPU {cpu}: {p}")));
    }
}

/// Decompresses the chunks of one CPU. Returns the bytes, (logical start, file offset) of each
/// chunk, and what stopped the decompression early (with its offset).
fn decompress_cpu(
    data: &[u8],
    codec: Codec,
    big: bool,
    start: usize,
) -> (Cow<'static, [u8]>, Vec<(usize, u64)>, Option<String>) {
    let mut out = Vec::new();
    let mut chunks = Vec::new();
    let mut c = Cursor::new(data, big);
    if start > data.len() {
        return (
            Cow::Owned(out),
            chunks,
            Some(format!(
                "the compressed data at byte offset {start} lies beyond the end of the file ({} bytes); its events are lost",
                data.len()
            )),
        );
    }
    c.set_pos(start);
    let count = match c.u32("the compressed chunk count") {
        Ok(n) => n,
        Err(e) => return (Cow::Owned(out), chunks, Some(e.to_string())),
    };
    for k in 0..count {
        let at = c.pos();
        let r = (|| -> Result<Vec<u8>, BinError> {
            let z = c.u32("a compressed chunk size")? as usize;
            let n = c.u32("a chunk's decompressed size")? as usize;
            let body = c.bytes(z, "a compressed chunk")?;
            compress::decompress(codec, body, n).map_err(|e| BinError::new(at as u64, e))
        })();
        match r {
            Ok(b) => {
                chunks.push((out.len(), at as u64));
                out.extend_from_slice(&b);
            }
            Err(e) => {
                return (
                    Cow::Owned(out),
                    chunks,
                    Some(format!(
                        "compressed chunk {} of {count} at byte offset {at} cannot be read ({}): its pages and those after it are lost",
                        k + 1,
                        e.message
                    )),
                );
            }
        }
    }
    (Cow::Owned(out), chunks, None)
}

/// One `TaskMeta` per task that recorded an event: comm from the saved cmdlines, as
/// `trace-cmd report` prints it (`<idle>` for 0, `<...>` when unknown).
fn note_tasks(trace: &mut Trace, layout: &Layout) {
    let mut seen = rustc_hash::FxHashSet::default();
    for e in &trace.events {
        if !e.kind.is_lost() {
            seen.insert(e.tid);
        }
    }
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
