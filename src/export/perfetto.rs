//! Chrome JSON trace events, which ui.perfetto.dev (and chrome://tracing) open:
//!
//! * process "CPUs": a thread track per CPU with a slice per stretch of one task holding one
//!   CID ("CID 1", args: tid, comm, process, confirmed);
//! * a process per mm (pid = its TGID where known): a thread track per task with its CID slices,
//!   and a counter track "cidmask weight";
//! * instants for lost-event gaps (on the CPU's track) and alarms, and for model triggers when a
//!   caller adds them;
//! * process and thread names as metadata events.

use crate::events::Trace;
use crate::model::MmId;
use crate::timeline::{Segment, Timeline};
use serde_json::{Value, json};
use std::io::{self, Write};

/// pid of the "CPUs" pseudo-process (real TGIDs never are 0).
pub const CPUS_PID: u64 = 0;

/// An extra instant to put on a CPU track (e.g. a model's compaction trigger).
pub struct Instant {
    pub ts: u64,
    pub cpu: u16,
    pub name: String,
    pub args: Value,
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// pid used for an mm in the export: its TGID where known, else a stable number past pid_max.
pub fn mm_pid(tl: &Timeline, mm: MmId) -> u64 {
    match tl.mm_info(mm).and_then(|i| i.tgid) {
        Some(t) => t as u64,
        None => 10_000_000 + mm.0 as u64,
    }
}

/// Writes the trace events one by one as they are made (nothing but the output buffer is held:
/// memory stays that of the loaded capture and its index, whatever the number of slices).
struct Events<'w, W: Write> {
    out: &'w mut W,
    first: bool,
}

impl<W: Write> Events<'_, W> {
    fn push(&mut self, v: Value) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        serde_json::to_writer(&mut *self.out, &v).map_err(io::Error::other)
    }
}

/// Writes the Chrome JSON document (`{"traceEvents": [...], "displayTimeUnit": "ns",
/// "otherData": {...}}`) to `out` as it goes.
pub fn write(
    trace: &Trace,
    tl: &Timeline,
    extra: &[Instant],
    out: &mut impl Write,
) -> io::Result<()> {
    out.write_all(b"{\"traceEvents\": [\n")?;
    let mut ev = Events { out, first: true };
    ev.push(json!({"ph": "M", "name": "process_name", "pid": CPUS_PID,
        "args": {"name": format!("CPUs ({} possible): observed CIDs", tl.ncpus)}}))?;
    ev.push(json!({"ph": "M", "name": "process_sort_index", "pid": CPUS_PID, "args": {"sort_index": -1}}))?;
    for cpu in 0..tl.lanes.len() {
        ev.push(
            json!({"ph": "M", "name": "thread_name", "pid": CPUS_PID, "tid": cpu,
            "args": {"name": format!("CPU {cpu}")}}),
        )?;
        ev.push(
            json!({"ph": "M", "name": "thread_sort_index", "pid": CPUS_PID, "tid": cpu,
            "args": {"sort_index": cpu}}),
        )?;
    }
    // (pid, tid) of the task tracks named so far: one entry per task, not per slice
    let mut named_tasks = rustc_hash::FxHashSet::default();
    for (k, info) in tl.mms.iter().enumerate() {
        let mm = MmId(k as u32);
        let pid = mm_pid(tl, mm);
        ev.push(json!({"ph": "M", "name": "process_name", "pid": pid,
            "args": {"name": format!("{} {}", info.label(), trace.comm_of(info.leader))}}))?;
    }
    for (cpu, lane) in tl.lanes.iter().enumerate() {
        for (i, s) in lane.iter().enumerate() {
            let end = lane.get(i + 1).map_or(tl.last_ts, |n| n.start);
            if s.tid == 0 || end <= s.start {
                continue;
            }
            let comm = trace.comm_of(s.tid);
            let name = match s.cid() {
                Some(c) => format!("CID {c}"),
                None => "no CID".to_string(),
            };
            let args = json!({"tid": s.tid, "comm": comm, "cid": s.cid(),
                "confirmed": s.flags.contains(Segment::CONFIRMED),
                "process": if s.mm.is_real() { tl.mm_info(s.mm).map(|i| i.label()) } else { None }});
            ev.push(json!({"ph": "X", "name": name, "pid": CPUS_PID, "tid": cpu,
                "ts": us(s.start), "dur": us(end - s.start), "args": args}))?;
            if s.mm.is_real() {
                let pid = mm_pid(tl, s.mm);
                if named_tasks.insert((pid, s.tid)) {
                    ev.push(
                        json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": s.tid,
                        "args": {"name": format!("{comm}-{}", s.tid)}}),
                    )?;
                }
                ev.push(json!({"ph": "X", "name": name, "pid": pid, "tid": s.tid,
                    "ts": us(s.start), "dur": us(end - s.start),
                    "args": {"cpu": cpu, "cid": s.cid(), "confirmed": s.flags.contains(Segment::CONFIRMED)}}))?;
            }
        }
    }
    drop(named_tasks);
    // every process's weight counter, in time order, straight from the sweep over the lanes
    let mut failed = Ok(());
    tl.for_each_weight_change(None, |mm, ts, w| {
        if failed.is_ok() {
            failed = ev.push(
                json!({"ph": "C", "name": "cidmask weight", "pid": mm_pid(tl, mm), "ts": us(ts),
                "args": {"weight": w}}),
            );
        }
    });
    failed?;
    for &i in &tl.lost_at {
        if let Some(e) = trace.events.get(i) {
            let count = match e.kind {
                crate::events::EventKind::Lost { count } => count,
                _ => None,
            };
            let name = match count {
                Some(n) => format!("lost {n} events"),
                None => "lost events".to_string(),
            };
            ev.push(
                json!({"ph": "i", "s": "t", "name": name, "pid": CPUS_PID, "tid": e.cpu,
                "ts": us(e.ts), "args": {"count": count}}),
            )?;
        }
    }
    for a in &tl.alarms {
        ev.push(
            json!({"ph": "i", "s": "t", "name": format!("alarm: {}", a.describe()),
            "pid": CPUS_PID, "tid": a.cpu, "ts": us(a.ts), "args": {"kind": "alarm"}}),
        )?;
    }
    for x in extra {
        ev.push(
            json!({"ph": "i", "s": "t", "name": x.name, "pid": CPUS_PID, "tid": x.cpu,
            "ts": us(x.ts), "args": x.args}),
        )?;
    }
    out.write_all(b"\n],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": ")?;
    serde_json::to_writer(
        &mut *out,
        &json!({"source": trace.path, "format": trace.origin.id(),
            "generator": concat!("cidscope ", env!("CARGO_PKG_VERSION"))}),
    )
    .map_err(io::Error::other)?;
    out.write_all(b"}\n")
}

/// A model's compaction attempts that scanned, its complete-scan starts and its mode changes,
/// as instants on the CPU tracks (the model's name in each).
pub fn model_instants(runs: &[crate::model::policies::PolicyRun]) -> Vec<Instant> {
    let mut out = Vec::new();
    for r in runs {
        let policy = r.policy.id();
        for c in r.compactions.iter().filter(|c| c.scanned) {
            let trigger = match c.trigger {
                crate::model::policies::Trigger::Tick => "tick",
                crate::model::policies::Trigger::Resume => "resume",
            };
            let batch = c
                .batch
                .map(|(k, n)| format!(" batch {k}/{n}"))
                .unwrap_or_default();
            out.push(Instant {
                ts: c.ts,
                cpu: c.cpu,
                name: format!("{policy}: compaction ({trigger}){batch}"),
                args: json!({"policy": policy, "trigger": trigger, "mm": c.mm.0, "tid": c.tid,
                    "batch": c.batch, "cpus_scanned": c.cpus_scanned, "freed": c.freed,
                    "lazied": c.lazied, "weight_after": c.weight_after}),
            });
        }
        for s in &r.scans {
            out.push(Instant {
                ts: s.start_ts,
                cpu: 0,
                name: format!("{policy}: complete scan starts"),
                args: json!({"policy": policy, "mm": s.mm.0, "batches": s.batches}),
            });
        }
        for m in &r.modes {
            let mode = match (m.percpu, m.transit) {
                (_, true) => "transit",
                (true, false) => "per-CPU",
                (false, false) => "per-task",
            };
            out.push(Instant {
                ts: m.ts,
                cpu: 0,
                name: format!("{policy}: mode {mode}"),
                args: json!({"policy": policy, "mm": m.mm.0, "users": m.users,
                    "max_cids": m.max_cids, "pcpu_thrs": m.pcpu_thrs}),
            });
        }
    }
    out.sort_by_key(|i| i.ts);
    out
}
