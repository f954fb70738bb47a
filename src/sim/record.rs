//! Records a simulated schedule as tracefs `trace` text (through `export::ftrace`, the one
//! ftrace writer), the form `cidscope` reads back with `sources::load`.

use super::SimConfig;
use crate::events::{EventKind, Tid, Trace};
use crate::export::ftrace::{Header, Legend, Line, write_lines};
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::io::{self, Write};
use std::path::Path;

/// Writes `trace` as ftrace text. `note` goes into a header comment line.
///
/// A schedule records no irq flags, prios or comms per event: the flags are those the kernel
/// shows for each kind, a task's prio is the one its last switch-in showed, its comm follows
/// forks and execs as the schedule goes.
pub fn write(out: &mut impl Write, trace: &Trace, note: &str) -> io::Result<()> {
    let header = Header {
        entries: trace.events.len(),
        ncpus: trace.ncpus_hint.unwrap_or_else(|| trace.cpu_count()),
        note: Some(note),
        legend: Legend::Sim,
    };
    // comm of each task as the trace goes (exec renames)
    let mut comm: FxHashMap<Tid, String> = FxHashMap::default();
    // priority of each task as its last switch-in showed it
    let mut prio: FxHashMap<Tid, i16> = FxHashMap::default();
    let comm_of = |comm: &FxHashMap<Tid, String>, tid: Tid| -> String {
        if tid == 0 {
            return String::new();
        }
        comm.get(&tid)
            .cloned()
            .unwrap_or_else(|| trace.comm_of(tid))
    };
    write_lines(out, &header, trace, &mut |_, e| {
        let c = if e.tid == 0 {
            "<idle>".to_string()
        } else {
            comm_of(&comm, e.tid)
        };
        let flags = match e.kind {
            EventKind::SchedSwitch { .. } | EventKind::SchedWakeupNew { .. } => *b"d..2.",
            EventKind::SchedMigrateTask { .. } => *b"d..4.",
            EventKind::Tick => *b"d.h1.",
            EventKind::TickStop { .. } => *b"d..1.",
            _ => *b".....",
        };
        let mut line = Line {
            comm: Cow::Owned(c.into_bytes()),
            tid: e.tid,
            tgid: trace
                .tasks
                .get(&e.tid)
                .and_then(|m| m.tgid)
                .filter(|_| e.tid != 0),
            flags,
            ..Line::default()
        };
        let text = |s: String| Cow::Owned(s.into_bytes());
        match e.kind {
            EventKind::RseqUpdate { .. } => {}
            EventKind::SchedSwitch {
                prev_tid,
                next_tid,
                next_comm,
                next_prio,
                ..
            } => {
                line.text = text(if prev_tid == 0 {
                    format!("swapper/{}", e.cpu)
                } else {
                    comm_of(&comm, prev_tid)
                });
                line.text2 = text(if next_tid == 0 {
                    format!("swapper/{}", e.cpu)
                } else {
                    trace.strings.get_lossy(next_comm).into_owned()
                });
                line.prio = prio.get(&prev_tid).copied().unwrap_or(120);
                prio.insert(next_tid, next_prio);
            }
            EventKind::SchedMigrateTask { tid, .. } => {
                line.text = text(comm_of(&comm, tid));
                line.prio = 120;
            }
            EventKind::SchedProcessFork { parent, child } => {
                let pc = comm_of(&comm, parent);
                line.text = text(pc.clone());
                line.text2 = text(pc.clone());
                comm.insert(child, pc);
            }
            EventKind::TaskNewtask { .. } => line.text = text(comm_of(&comm, e.tid)),
            EventKind::SchedProcessExec { tid, .. } => {
                let name = trace.comm_of(tid);
                line.text = text(format!("/usr/bin/{name}"));
                comm.insert(tid, name);
            }
            EventKind::SchedProcessExit { tid } => {
                line.text = text(comm_of(&comm, tid));
                line.prio = 120;
                line.group_dead = trace.tasks.get(&tid).and_then(|m| m.tgid) == Some(tid);
            }
            EventKind::SchedWakeupNew { tid, .. } => line.text = text(comm_of(&comm, tid)),
            EventKind::Tick => {
                line.text = Cow::Borrowed(b"tick_nohz_handler");
                line.hrtimer = 0xffff_8880_0000_0000u64 + e.cpu as u64 * 0x40;
            }
            EventKind::TickStop { .. } => line.text = Cow::Borrowed(b"NONE"),
            EventKind::Lost { .. }
            | EventKind::RseqIpFixup
            | EventKind::Other { .. }
            | EventKind::Function { .. }
            | EventKind::Probe { .. } => {
                return None;
            }
        }
        Some(line)
    })
}

/// Writes the simulated schedule of `cfg` to `path`.
pub fn write_file(path: &Path, trace: &Trace, cfg: &SimConfig) -> io::Result<()> {
    let f = std::fs::File::create(path)?;
    let mut w = io::BufWriter::new(f);
    let note = format!(
        "cidscope sim: workload={} policy={} cpus={} hz={} batch={} seed={} (replay with --policy {} --hz {} --jiffies boundaries)",
        cfg.workload.id(),
        cfg.policy.id(),
        cfg.params.cpus,
        cfg.params.hz,
        cfg.params.batch,
        cfg.seed,
        cfg.policy.id(),
        cfg.params.hz
    );
    write(&mut w, trace, &note)?;
    w.flush()
}
