//! Shared by the fuzz targets (fuzz/) and the test that replays their corpora
//! (tests/fuzz_corpus.rs): run a loaded trace through every later stage.

use crate::events::Trace;

/// Indexes, summarizes, checks, exports and renders a loaded trace. Panics only on a bug.
pub fn exercise(trace: &Trace) {
    std::hint::black_box(crate::stats::compute(trace));
    std::hint::black_box(crate::stats::check::run(trace));
    let tl = crate::timeline::Timeline::build_with_interval(trace, 64);
    if let Some(last) = trace.events.len().checked_sub(1) {
        std::hint::black_box(tl.state_after(trace, last / 2));
    }
    let mut csv = Vec::new();
    let _ = crate::export::csv::write(trace, &tl, &mut csv);
    let _ = crate::export::perfetto::write(trace, &tl, &[], &mut std::io::sink());
    let mut app = crate::ui::app::App::with_timeline(trace.clone(), tl);
    let backend = ratatui::backend::TestBackend::new(100, 30);
    let Ok(mut term) = ratatui::Terminal::new(backend);
    for action in [
        crate::ui::keys::Action::Last,
        crate::ui::keys::Action::ZoomIn,
        crate::ui::keys::Action::NextMm,
        crate::ui::keys::Action::NextCidChange,
        crate::ui::keys::Action::ToggleAccounting,
    ] {
        app.apply(action);
        let _ = term.draw(|f| crate::ui::view::draw(f, &app));
    }
}

/// A tracefs `trace` text of `ntasks` tasks, one rseq_update each, in processes of `threads`
/// threads, on 8 CPUs round-robin: the shape of `scripts/make-tasks.sh NTASKS THREADS` (the
/// most tasks per byte), for the per-task cost of `stats`.
pub fn synth_tasks(ntasks: u32, threads: u32) -> Vec<u8> {
    use std::io::Write;
    let threads = threads.max(1);
    let mut out = Vec::with_capacity(ntasks as usize * 104 + 512);
    let _ = write!(
        out,
        "# tracer: nop\n#\n# entries-in-buffer/entries-written: {ntasks}/{ntasks}   #P:8\n#\n\
         #           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION\n\
         #              | |           |       |   |||||     |         |\n"
    );
    for i in 0..ntasks {
        // one µs apart from 1000 s on
        let us = 1_000_000_000 + u64::from(i);
        let (tid, cpu) = (1000 + i, i % 8);
        let tgid = 1000 + (i / threads) * threads;
        let cid = (i % threads) % threads.min(8);
        let comm = format!("w{}", i / threads);
        let _ = writeln!(
            out,
            "{comm:>16}-{tid:<7} ({tgid:>7}) [{cpu:03}] ..... {:5}.{:06}: rseq_update: cpu_id={cpu} node_id=0 mm_cid={cid}",
            us / 1_000_000,
            us % 1_000_000
        );
    }
    out
}

/// A synthetic tracefs `trace` text with `n_events` event lines on `ncpus` CPUs: `nprocs`
/// processes of `threads` threads each, scheduled round-robin with random sleeps, each switch-in
/// followed by the rseq_update of the CID the thread gets (the lowest free CID of its process),
/// plus the scheduler tick every 4 ms per CPU. Deterministic for a seed. Used by benchmarks and
/// scale tests, which must not depend on files outside the repository.
pub fn synth_ftrace(n_events: usize, ncpus: u16, nprocs: u32, threads: u32, seed: u64) -> Vec<u8> {
    use std::io::Write;
    let mut rng = seed | 1;
    let mut next = move || {
        // xorshift64*
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let ntasks = (nprocs * threads) as usize;
    let tid_of = |k: usize| 1000 + k as u32;
    let tgid_of = |k: usize| 1000 + (k as u32 / threads) * threads;
    let mut running: Vec<Option<usize>> = vec![None; ncpus as usize];
    let mut on_cpu: Vec<bool> = vec![false; ntasks];
    let mut cid_of: Vec<Option<u16>> = vec![None; ntasks];
    let mut out = Vec::with_capacity(n_events * 120);
    let _ = writeln!(
        out,
        "# tracer: nop\n#\n# entries-in-buffer/entries-written: {n_events}/{n_events}   #P:{ncpus}\n#"
    );
    let mut ts: u64 = 1_000_000_000_000;
    let mut next_tick = vec![ts; ncpus as usize];
    let mut written = 0usize;
    let comm = |k: usize| format!("w{}", k % 97);
    while written < n_events {
        ts += 1_000 + next() % 20_000;
        let c = (next() % ncpus as u64) as usize;
        let (cur_tid, cur_tgid, cur_comm) = match running[c] {
            Some(k) => (tid_of(k), tgid_of(k), comm(k)),
            None => (0, 0, "<idle>".to_string()),
        };
        let head = |tid: u32, tgid: u32, comm: &str| {
            let tg = if tid == 0 {
                "(-------)".to_string()
            } else {
                format!("({tgid:>7})")
            };
            format!("{:>16}-{tid:<7} {tg} [{c:03}]", comm)
        };
        if ts >= next_tick[c] {
            next_tick[c] = ts + 4_000_000;
            let _ = writeln!(
                out,
                "{} d.h1. {:>6}.{:06}: hrtimer_expire_entry: hrtimer=00000000deadbeef function=tick_nohz_handler now={ts}",
                head(cur_tid, cur_tgid, &cur_comm),
                ts / 1_000_000_000,
                ts % 1_000_000_000 / 1000
            );
            written += 1;
            continue;
        }
        // switch to a task that is not running anywhere (or to idle)
        let pick = next() as usize % (ntasks + 1);
        let nk = (pick < ntasks && !on_cpu[pick]).then_some(pick);
        let (ntid, ncomm) = match nk {
            Some(k) => (tid_of(k), comm(k)),
            None => (0, format!("swapper/{c}")),
        };
        if ntid == cur_tid {
            continue;
        }
        let _ = writeln!(
            out,
            "{} d..2. {:>6}.{:06}: sched_switch: prev_comm={cur_comm} prev_pid={cur_tid} prev_prio=120 prev_state=S ==> next_comm={ncomm} next_pid={ntid} next_prio=120",
            head(cur_tid, cur_tgid, &cur_comm),
            ts / 1_000_000_000,
            ts % 1_000_000_000 / 1000
        );
        written += 1;
        if let Some(k) = running[c] {
            on_cpu[k] = false;
        }
        running[c] = nk;
        if let Some(k) = nk.filter(|_| written < n_events) {
            on_cpu[k] = true;
            // lowest CID not held by a running sibling
            let base = (k as u32 / threads * threads) as usize;
            let held: Vec<u16> = (base..base + threads as usize)
                .filter(|&j| j != k && on_cpu[j])
                .filter_map(|j| cid_of[j])
                .collect();
            let cid = (0..ncpus).find(|x| !held.contains(x)).unwrap_or(0);
            cid_of[k] = Some(cid);
            ts += 500;
            let _ = writeln!(
                out,
                "{} ..... {:>6}.{:06}: rseq_update: cpu_id={c} node_id=0 mm_cid={cid}",
                head(tid_of(k), tgid_of(k), &comm(k)),
                ts / 1_000_000_000,
                ts % 1_000_000_000 / 1000
            );
            written += 1;
        }
    }
    out
}

/// The benchmarks' 10 M-event trace: [`synth_ftrace`]'s 1 M events (8 CPUs, 40 processes of 10
/// threads, seed 1) loaded, then repeated ten times, each copy shifted past the one before.
pub fn synth_trace_10m() -> Trace {
    let text = synth_ftrace(1_000_000, 8, 40, 10, 1);
    let base = crate::sources::load_bytes("synth", &text, &Default::default())
        .expect("the synthetic capture always parses");
    drop(text);
    let span = base.events.last().map_or(0, |e| e.ts) - base.events.ts(0) + 1_000_000;
    let mut t = base.clone();
    t.events.reserve(base.events.len() * 9);
    for k in 1..10u64 {
        t.events.extend(base.events.iter().map(|mut e| {
            e.ts += k * span;
            e
        }));
    }
    drop(base);
    t.events.shrink_to_fit();
    t
}

/// A trace decoded from arbitrary bytes (the models' fuzz target): each 6-byte record is one
/// canonical event — kind, CPU, task, argument — at increasing times, over a small set of
/// tasks and CPUs so that switches, forks and reports meet each other.
pub fn trace_from_bytes(data: &[u8]) -> Trace {
    use crate::events::{Event, EventKind, Origin, PrevState, TaskMeta};
    let mut t = Trace::new("fuzz", Origin::Sim);
    let comm = t.strings.intern(b"f");
    let ncpus = 1 + data.first().map_or(0, |b| b % 8) as u16;
    t.ncpus_hint = Some(ncpus as u32);
    let mut ts = 1_000_000u64;
    for r in data.get(1..).unwrap_or(&[]).chunks_exact(6) {
        let cpu = r[1] as u16 % ncpus;
        let tid = 100 + (r[2] % 12) as u32;
        let other = 100 + (r[3] % 12) as u32;
        ts += 1 + u16::from_le_bytes([r[4], r[5]]) as u64 * 50;
        let kind = match r[0] % 12 {
            0 | 1 => EventKind::SchedSwitch {
                prev_tid: tid,
                next_tid: if r[3] % 5 == 0 { 0 } else { other },
                next_comm: comm,
                next_prio: 120,
                prev_state: PrevState::from_text(if r[3] & 1 == 0 { b"S" } else { b"R+" }),
            },
            2 | 3 => EventKind::RseqUpdate {
                cpu_id: cpu as i32,
                node_id: 0,
                mm_cid: (r[3] % 10) as i32,
            },
            4 => EventKind::SchedMigrateTask {
                tid: other,
                orig_cpu: r[4] as u16 % ncpus,
                dest_cpu: cpu,
            },
            5 => EventKind::TaskNewtask {
                tid: other,
                clone_flags: if r[5] & 1 == 0 { 0x3d0f00 } else { 0x1200000 },
            },
            6 => EventKind::SchedProcessFork {
                parent: tid,
                child: other,
            },
            7 => EventKind::SchedProcessExec { tid, old_tid: tid },
            8 => EventKind::SchedProcessExit { tid },
            9 => EventKind::Tick,
            10 => EventKind::TickStop {
                success: r[3] & 1 == 0,
            },
            _ => EventKind::SchedWakeupNew {
                tid: other,
                target_cpu: cpu,
            },
        };
        t.events.push(Event { ts, tid, cpu, kind });
    }
    for k in 0..12u32 {
        t.tasks.insert(
            100 + k,
            TaskMeta {
                tgid: (k % 3 == 0).then_some(100 + k),
                comm,
            },
        );
    }
    t
}

/// Runs every CID model, with its invariant checks, over a trace (the models' fuzz target).
pub fn exercise_models(trace: &Trace) {
    use crate::model::policies::{Params, PolicyKind, replay};
    let params = Params {
        check_invariants: true,
        ..Params::default()
    };
    for k in PolicyKind::ALL {
        std::hint::black_box(replay(trace, k, &params));
    }
    exercise(trace);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of make-tasks.sh: a task per event, `threads` per process, each process's
    /// CIDs 0.. below the bound.
    #[test]
    fn synthetic_tasks_are_one_event_each_in_their_processes() {
        let data = synth_tasks(1000, 4);
        let t = crate::sources::load_bytes("tasks", &data, &Default::default()).unwrap();
        assert_eq!(t.events.len(), 1000);
        let s = crate::stats::compute(&t);
        assert_eq!((s.tasks.len(), s.processes.len()), (1000, 250));
        assert!(s.processes.iter().all(|p| p.cids == [0, 1, 2, 3]));
        assert_eq!(s.alarms, 0);
    }

    #[test]
    fn synthetic_trace_loads_and_keeps_the_rseq_promises() {
        let data = synth_ftrace(20_000, 4, 3, 6, 7);
        let t = crate::sources::load_bytes("synth", &data, &Default::default()).unwrap();
        assert_eq!(t.events.len(), 20_000);
        assert_eq!(t.cpu_count(), 4);
        let r = crate::stats::check::run(&t);
        assert_eq!(r.findings, 0, "{}", r.text);
        assert_eq!(
            synth_ftrace(1000, 4, 3, 6, 7),
            synth_ftrace(1000, 4, 3, 6, 7)
        );
    }
}
