//! Writes a trace as tracefs `trace` text (header, TGID column, 6.18 print formats), the
//! form `cidscope` reads back with `sources::load`.

use super::SimConfig;
use crate::events::{EventKind, Tid, Trace};
use rustc_hash::FxHashMap;
use std::io::{self, Write};
use std::path::Path;

/// The header of a tracefs `trace` file with `options/record-tgid` on.
fn header(out: &mut impl Write, entries: usize, ncpus: u32, note: &str) -> io::Result<()> {
    writeln!(out, "# tracer: nop")?;
    writeln!(out, "#")?;
    writeln!(
        out,
        "# entries-in-buffer/entries-written: {entries}/{entries}   #P:{ncpus}"
    )?;
    writeln!(out, "# {note}")?;
    writeln!(out, "#")?;
    writeln!(
        out,
        "#                                _-----=> irqs-off/BH-disabled"
    )?;
    writeln!(
        out,
        "#                               / _----=> need-resched"
    )?;
    writeln!(
        out,
        "#                              | / _---=> hardirq/softirq"
    )?;
    writeln!(
        out,
        "#                              || / _--=> preempt-depth"
    )?;
    writeln!(
        out,
        "#                              ||| / _-=> migrate-disable"
    )?;
    writeln!(out, "#                              |||| /     delay")?;
    writeln!(
        out,
        "#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION"
    )?;
    writeln!(
        out,
        "#              | |           |       |   |||||     |         |"
    )?;
    Ok(())
}

/// Writes `trace` as ftrace text. `note` goes into a header comment line.
pub fn write(out: &mut impl Write, trace: &Trace, note: &str) -> io::Result<()> {
    let ncpus = trace.ncpus_hint.unwrap_or_else(|| trace.cpu_count());
    header(out, trace.events.len(), ncpus, note)?;
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
    let mut line = String::with_capacity(200);
    for e in &trace.events {
        use std::fmt::Write as _;
        line.clear();
        let c = if e.tid == 0 {
            "<idle>".to_string()
        } else {
            comm_of(&comm, e.tid)
        };
        let tgid = match trace.tasks.get(&e.tid).and_then(|m| m.tgid) {
            Some(g) if e.tid != 0 => format!("{g:>7}"),
            _ => "-------".to_string(),
        };
        let flags = match e.kind {
            EventKind::SchedSwitch { .. } | EventKind::SchedWakeupNew { .. } => "d..2.",
            EventKind::SchedMigrateTask { .. } => "d..4.",
            EventKind::Tick => "d.h1.",
            EventKind::TickStop { .. } => "d..1.",
            _ => ".....",
        };
        let _ = write!(
            line,
            "{:>16}-{:<7} ({}) [{:03}] {} {:>5}.{:06}: ",
            c,
            e.tid,
            tgid,
            e.cpu,
            flags,
            e.ts / 1_000_000_000,
            (e.ts % 1_000_000_000) / 1000
        );
        match e.kind {
            EventKind::RseqUpdate {
                cpu_id,
                node_id,
                mm_cid,
            } => {
                let _ = write!(
                    line,
                    "rseq_update: cpu_id={cpu_id} node_id={node_id} mm_cid={mm_cid}"
                );
            }
            EventKind::SchedSwitch {
                prev_tid,
                next_tid,
                next_comm,
                next_prio,
                prev_state,
            } => {
                let pc = if prev_tid == 0 {
                    format!("swapper/{}", e.cpu)
                } else {
                    comm_of(&comm, prev_tid)
                };
                let nc = if next_tid == 0 {
                    format!("swapper/{}", e.cpu)
                } else {
                    trace.strings.get_lossy(next_comm).into_owned()
                };
                let pp = prio.get(&prev_tid).copied().unwrap_or(120);
                prio.insert(next_tid, next_prio);
                let _ = write!(
                    line,
                    "sched_switch: prev_comm={pc} prev_pid={prev_tid} prev_prio={pp} prev_state={} ==> next_comm={nc} next_pid={next_tid} next_prio={next_prio}",
                    prev_state.text()
                );
            }
            EventKind::SchedMigrateTask {
                tid,
                orig_cpu,
                dest_cpu,
            } => {
                let _ = write!(
                    line,
                    "sched_migrate_task: comm={} pid={tid} prio=120 orig_cpu={orig_cpu} dest_cpu={dest_cpu}",
                    comm_of(&comm, tid)
                );
            }
            EventKind::SchedProcessFork { parent, child } => {
                let _ = write!(
                    line,
                    "sched_process_fork: comm={} pid={parent} child_comm={} child_pid={child}",
                    comm_of(&comm, parent),
                    comm_of(&comm, parent)
                );
                let pc = comm_of(&comm, parent);
                comm.insert(child, pc);
            }
            EventKind::TaskNewtask { tid, clone_flags } => {
                let _ = write!(
                    line,
                    "task_newtask: pid={tid} comm={} clone_flags={clone_flags:x} oom_score_adj=0",
                    comm_of(&comm, e.tid)
                );
            }
            EventKind::SchedProcessExec { tid, old_tid } => {
                let name = trace.comm_of(tid);
                let _ = write!(
                    line,
                    "sched_process_exec: filename=/usr/bin/{name} pid={tid} old_pid={old_tid}"
                );
                comm.insert(tid, name);
            }
            EventKind::SchedProcessExit { tid } => {
                let leader = trace.tasks.get(&tid).and_then(|m| m.tgid) == Some(tid);
                let _ = write!(
                    line,
                    "sched_process_exit: comm={} pid={tid} prio=120 group_dead={leader}",
                    comm_of(&comm, tid)
                );
            }
            EventKind::SchedWakeupNew { tid, target_cpu } => {
                let _ = write!(
                    line,
                    "sched_wakeup_new: comm={} pid={tid} prio=120 target_cpu={target_cpu:03}",
                    comm_of(&comm, tid)
                );
            }
            EventKind::Tick => {
                let _ = write!(
                    line,
                    "hrtimer_expire_entry: hrtimer={:016x} function=tick_nohz_handler now={}",
                    0xffff_8880_0000_0000u64 + e.cpu as u64 * 0x40,
                    e.ts
                );
            }
            EventKind::TickStop { success } => {
                let _ = write!(line, "tick_stop: success={} dependency=NONE", success as u8);
            }
            EventKind::Lost { .. } | EventKind::RseqIpFixup | EventKind::Other { .. } => continue,
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// Writes the simulated schedule of `cfg` to `path`.
pub fn write_file(path: &Path, trace: &Trace, cfg: &SimConfig) -> io::Result<()> {
    let f = std::fs::File::create(path)?;
    let mut w = io::BufWriter::new(f);
    let note = format!(
        "cidscope sim: workload={} policy={} cpus={} hz={} batch={} seed={} (replay with --policy {} --hz {})",
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
