//! Teaching demos: guided scenarios on bundled real captures and on the simulator. Each demo
//! is a trace, the model runs to show beside it, and narrated steps at its key moments — the
//! moments are found in the data (the first scan, the mode switch, ...), never typed in.

pub mod error;

pub use error::DemoError;

use crate::events::{EventKind, Trace, fmt_dur};
use crate::model::MmId;
use crate::model::policies::{Params, PolicyKind, PolicyRun, Trigger, replay_all};
use crate::sim::{SimConfig, Workload, simulate};
use crate::sources::{LoadOptions, load_bytes};
use crate::timeline::Timeline;

/// Bundled captures (real, from a 6.18 kernel, 2 CPUs, HZ 250): see traces/CAPTURES.md.
const V5_WORKERS: &[u8] = include_bytes!("../../traces/v5-workers-quiet.ftrace.txt");
const V3_SPINNER: &[u8] = include_bytes!("../../traces/v3-spinner-rt.ftrace.txt");

/// A lane set a step's narration talks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shows {
    /// What the capture (or the simulated schedule) shows.
    Observed,
    /// A model's slots.
    Model(PolicyKind),
}

/// One narrated moment.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub title: String,
    pub text: String,
    /// Where the cursor goes.
    pub ts: u64,
    /// The window shown around it.
    pub span: u64,
    /// The lane sets its text is about, which the screen must show (a presenter's screen shows
    /// only them).
    pub shows: Vec<Shows>,
}

/// A demo ready to show.
pub struct Setup {
    pub trace: Trace,
    pub runs: Vec<PolicyRun>,
    pub show_observed: bool,
    /// The process to select.
    pub mm: Option<MmId>,
    pub steps: Vec<Step>,
    /// Trace time per second of real time when playing.
    pub speed: u64,
}

pub struct Demo {
    pub name: &'static str,
    pub summary: &'static str,
    pub build: fn() -> Result<Setup, DemoError>,
}

pub const DEMOS: &[Demo] = &[
    Demo {
        name: "workers",
        summary: "4 workers on 2 CPUs (a real capture) under lazy-compact, resume-batch and owner-mode",
        build: workers,
    },
    Demo {
        name: "spinner",
        summary: "an unpreempted spinner: no switches, so only the tick can start a compaction",
        build: spinner,
    },
    Demo {
        name: "batched-scan",
        summary: "a complete resume-batch scan of 128 CPUs, 8 CPUs per batch (simulated)",
        build: batched_scan,
    },
    Demo {
        name: "owner-mode",
        summary: "owner-mode switching to per-CPU mode when threads outnumber CPUs, and back",
        build: owner_mode,
    },
    Demo {
        name: "nohz-full",
        summary: "nohz_full: the tick stops under a lone spinner, so nothing compacts its CIDs",
        build: nohz_full,
    },
];

pub fn find(name: &str) -> Option<&'static Demo> {
    DEMOS.iter().find(|d| d.name == name)
}

/// The `--list` text.
pub fn list() -> String {
    let mut s = String::from(
        "Demos (cidscope demo NAME; space plays, ] and [ step, > and < set the speed):\n",
    );
    for d in DEMOS {
        s.push_str(&format!("  {:<14} {}\n", d.name, d.summary));
    }
    s
}

fn capture(name: &str, data: &[u8]) -> Result<Trace, DemoError> {
    Ok(load_bytes(name, data, &LoadOptions::default())?)
}

/// The mm that began inside the capture by exec and reported the most CIDs.
fn main_mm(trace: &Trace) -> Option<(MmId, Timeline)> {
    let tl = Timeline::build(trace);
    let mm = tl
        .mms_by_activity()
        .into_iter()
        .find(|&m| tl.mm_info(m).is_some_and(|i| i.begins_in_capture()))?;
    Some((mm, tl))
}

fn ms(n: u64) -> u64 {
    n * 1_000_000
}

fn run_of(runs: &[PolicyRun], k: PolicyKind) -> Option<&PolicyRun> {
    runs.iter().find(|r| r.policy == k)
}

fn workers() -> Result<Setup, DemoError> {
    let trace = capture("demo: v5-workers-quiet.ftrace.txt (bundled)", V5_WORKERS)?;
    let (mm, tl) = main_mm(&trace).ok_or(DemoError::Missing(
        "the workers capture has no exec'd process",
    ))?;
    let info = tl
        .mm_info(mm)
        .cloned()
        .ok_or(DemoError::Missing("no mm info"))?;
    let kinds = [
        PolicyKind::LazyCompact,
        PolicyKind::ResumeBatch,
        PolicyKind::OwnerMode,
    ];
    let runs = replay_all(&trace, &kinds, &Params::default());
    let mut steps = vec![Step {
        title: "A process begins".into(),
        text: format!(
            "mcwork (tgid {}) execs here: a new mm with an empty cidmask. Its four workers will \
             share 2 CPUs, busy 300 µs and asleep 200 µs each, for one second. The upper lanes \
             show the CIDs the kernel really reported (rseq_update); under them, what each model \
             predicts, slot by slot.",
            info.tgid.unwrap_or(info.leader)
        ),
        ts: info.first_ts,
        span: ms(4),
        shows: vec![Shows::Observed, Shows::Model(PolicyKind::LazyCompact)],
    }];
    // first update of each CPU within the mm
    let updates: Vec<(u64, u16, i32)> = trace
        .events
        .iter()
        .filter(|e| e.ts >= info.first_ts)
        .filter_map(|e| match e.kind {
            EventKind::RseqUpdate { mm_cid, .. } if tl.task_mm(e.tid) == mm => {
                Some((e.ts, e.cpu, mm_cid))
            }
            _ => None,
        })
        .collect();
    for cpu in 0..2u16 {
        if let Some(&(ts, _, cid)) = updates.iter().find(|u| u.1 == cpu) {
            steps.push(Step {
                title: format!("CPU {cpu} gets CID {cid}"),
                text: format!(
                    "The first task of the mm that runs on CPU {cpu} allocates CID {cid}: \
                     lazy-compact hands out the lowest free CID and stores it in the CPU's slot \
                     (pcpu_cid). From now on every task of this mm that runs on CPU {cpu} gets \
                     {cid} back from that slot, without touching the cidmask."
                ),
                ts,
                span: ms(4),
                shows: vec![Shows::Observed, Shows::Model(PolicyKind::LazyCompact)],
            });
        }
    }
    if let Some(&(ts, _, _)) = updates.get(updates.len() / 2) {
        let per_cpu: Vec<String> = (0..2u16)
            .map(|c| {
                let mut cids: Vec<i32> = updates.iter().filter(|u| u.1 == c).map(|u| u.2).collect();
                cids.sort_unstable();
                cids.dedup();
                format!("CPU {c} → {cids:?}")
            })
            .collect();
        steps.push(Step {
            title: "CIDs stick to CPUs".into(),
            text: format!(
                "Over the whole run: {}. With 4 threads on 2 CPUs the weight never exceeds 2 and a \
                 thread's CID changes whenever it lands on the other CPU. ▒ marks a CID kept in \
                 a slot while no task of the mm runs there: it is still allocated.",
                per_cpu.join(", ")
            ),
            ts,
            span: ms(20),
            shows: vec![Shows::Observed, Shows::Model(PolicyKind::LazyCompact)],
        });
    }
    if let Some(c) = run_of(&runs, PolicyKind::LazyCompact)
        .and_then(|r| r.compactions.iter().find(|c| c.mm == mm && c.scanned))
    {
        steps.push(Step {
            title: "A lazy-compact scan".into(),
            text: format!(
                "The tick queued task work and, on return to user, the scan ran (trigger: {}). \
                 It freed {:?}: slots idle for 100 ms or holding a CID at or above the weight. \
                 The scan never changes a running task's CID; it decides what the next switch-in \
                 gets. Jump between scans with t (tick) and r (resume).",
                trigger_name(c.trigger),
                c.freed
            ),
            ts: c.ts,
            span: ms(20),
            shows: vec![Shows::Model(PolicyKind::LazyCompact)],
        });
    }
    if let Some(m) = run_of(&runs, PolicyKind::OwnerMode)
        .and_then(|r| r.modes.iter().find(|m| m.mm == mm && m.percpu))
    {
        steps.push(Step {
            title: "owner-mode switches to per-CPU".into(),
            text: format!(
                "In the 6.19 rewrite a CID belongs to a task while the mm has few users. At {} \
                 users (max_cids {}) the mm switches to per-CPU mode: CPUs own the CIDs, as in \
                 lazy-compact, but with no periodic scan at all. With P = 2 it never switches \
                 back (pcpu_thrs {}).",
                m.users, m.max_cids, m.pcpu_thrs
            ),
            ts: m.ts,
            span: ms(4),
            shows: vec![Shows::Model(PolicyKind::OwnerMode)],
        });
    }
    Ok(Setup {
        trace,
        runs,
        show_observed: true,
        mm: Some(mm),
        steps,
        speed: ms(20),
    })
}

fn trigger_name(t: Trigger) -> &'static str {
    match t {
        Trigger::Tick => "tick",
        Trigger::Resume => "resume",
    }
}

fn spinner() -> Result<Setup, DemoError> {
    let trace = capture("demo: v3-spinner-rt.ftrace.txt (bundled)", V3_SPINNER)?;
    let (mm, tl) = main_mm(&trace).ok_or(DemoError::Missing(
        "the spinner capture has no exec'd process",
    ))?;
    let info = tl
        .mm_info(mm)
        .cloned()
        .ok_or(DemoError::Missing("no mm info"))?;
    let kinds = [PolicyKind::LazyCompact, PolicyKind::ResumeBatch];
    let runs = replay_all(&trace, &kinds, &Params::default());
    let mut steps = vec![Step {
        title: "A thread that never sleeps".into(),
        text: "mcwork pins a thread to CPU 1 and spins for 2 s under SCHED_FIFO: no switch, no \
               migration, so no return to user with TIF_NOTIFY_RESUME set — nothing that would \
               run a compaction from the resume path. Only the scheduler tick is left."
            .into(),
        ts: info.first_ts,
        span: ms(300),
        shows: vec![Shows::Observed, Shows::Model(PolicyKind::LazyCompact)],
    }];
    let lazy = run_of(&runs, PolicyKind::LazyCompact);
    let ticks: Vec<u64> = lazy
        .map(|r| {
            r.compactions
                .iter()
                .filter(|c| c.mm == mm && c.scanned && c.trigger == Trigger::Tick)
                .map(|c| c.ts)
                .collect()
        })
        .unwrap_or_default();
    if let (Some(&a), Some(&b)) = (ticks.first(), ticks.get(1)) {
        steps.push(Step {
            title: "The tick queues a scan".into(),
            text: format!(
                "lazy-compact's tick adds the scan as task work once next_scan is due; the task \
                 runs it on its next return to user — here right after the tick interrupt. The \
                 rseq_update that follows has no switch-in before it. The next tick scan comes \
                 {} later: one scan period (100 ms = 25 jiffies at HZ 250). {} such scans in the \
                 capture.",
                fmt_dur(b - a),
                ticks.len()
            ),
            ts: a,
            span: ms(300),
            shows: vec![Shows::Model(PolicyKind::LazyCompact)],
        });
    }
    if let Some(c) = run_of(&runs, PolicyKind::ResumeBatch).and_then(|r| {
        r.compactions
            .iter()
            .find(|c| c.mm == mm && c.scanned && c.trigger == Trigger::Tick)
    }) {
        steps.push(Step {
            title: "resume-batch's fallback".into(),
            text: format!(
                "resume-batch moved the scan to the rseq resume path. For a task that never \
                 switches, its tick rule (A) fires once the task has run 100 ms unpreempted \
                 (pick_runtime) and a scan is due: it sets NOTIFY_RESUME so the next return to \
                 user runs one batch ({}).",
                c.batch
                    .map_or("batch".into(), |(k, n)| format!("batch {k} of {n}"))
            ),
            ts: c.ts,
            span: ms(300),
            shows: vec![Shows::Model(PolicyKind::ResumeBatch)],
        });
    }
    Ok(Setup {
        trace,
        runs,
        show_observed: true,
        mm: Some(mm),
        steps,
        speed: ms(200),
    })
}

fn sim_setup(cfg: &SimConfig, also: &[PolicyKind]) -> (Trace, Vec<PolicyRun>) {
    let out = simulate(cfg);
    let mut runs = vec![out.run];
    runs.extend(replay_all(&out.trace, also, &cfg.params));
    (out.trace, runs)
}

fn batched_scan() -> Result<Setup, DemoError> {
    let mut cfg = SimConfig::new(PolicyKind::ResumeBatch, 128, Workload::Cyclictest);
    cfg.threads = Some(64);
    cfg.duration_ns = ms(300);
    let (trace, runs) = sim_setup(&cfg, &[]);
    let run = &runs[0];
    let scan = run
        .scans
        .first()
        .ok_or(DemoError::Missing("the simulation made no scan"))?;
    let mm = scan.mm;
    let batches: Vec<&crate::model::policies::run::Compaction> = run
        .compactions
        .iter()
        .filter(|c| c.mm == mm && c.scanned && c.ts >= scan.start_ts)
        .take(16)
        .collect();
    let mut steps = vec![Step {
        title: "128 CPUs, 64 periodic threads".into(),
        text: "A cyclictest-like workload on 128 CPUs under resume-batch, B = 8: a complete scan \
               of the cidmask is cut into ceil(128 / 8) = 16 batches, one per return to user, so \
               no single return pays for all 128 CPUs."
            .into(),
        ts: scan.start_ts.saturating_sub(ms(1)),
        span: ms(4),
        shows: vec![Shows::Model(PolicyKind::ResumeBatch)],
    }];
    if let Some(first) = batches.first() {
        steps.push(Step {
            title: "Batch 1 of 16".into(),
            text: format!(
                "The period gate opens (next_scan due) and the first batch scans CPUs {:?}. \
                 Their labels light up in the lanes; the cursor pane shows the scan-batch \
                 progress.",
                first.cpus_scanned
            ),
            ts: first.ts,
            span: ms(2),
            shows: vec![Shows::Model(PolicyKind::ResumeBatch)],
        });
    }
    if let Some(mid) = batches.get(7) {
        steps.push(Step {
            title: "Batch 8 of 16".into(),
            text: format!(
                "Batches 2..16 are not rate-limited: each return to user of a thread of the mm \
                 runs the next one. {} after the scan began, half the CPUs are done.",
                fmt_dur(mid.ts - scan.start_ts)
            ),
            ts: mid.ts,
            span: ms(2),
            shows: vec![Shows::Model(PolicyKind::ResumeBatch)],
        });
    }
    if let Some(last) = batches.get(15) {
        steps.push(Step {
            title: "The scan completes".into(),
            text: format!(
                "Batch 16 scans CPUs {:?}: the complete scan took {} (the seed measured 1.5–2 ms \
                 for cyclictest on 128 CPUs). The next one may start D+1 jiffies after this one \
                 began.",
                last.cpus_scanned,
                fmt_dur(last.ts - scan.start_ts)
            ),
            ts: last.ts,
            span: ms(2),
            shows: vec![Shows::Model(PolicyKind::ResumeBatch)],
        });
    }
    Ok(Setup {
        trace,
        runs,
        show_observed: false,
        mm: Some(mm),
        steps,
        speed: ms(1),
    })
}

fn owner_mode() -> Result<Setup, DemoError> {
    let mut cfg = SimConfig::new(PolicyKind::OwnerMode, 4, Workload::Churn);
    cfg.threads = Some(6);
    cfg.duration_ns = ms(100);
    let (trace, runs) = sim_setup(&cfg, &[PolicyKind::LazyCompact]);
    let run = &runs[0];
    let to_cpu = run
        .modes
        .iter()
        .find(|m| m.percpu && !m.transit)
        .ok_or(DemoError::Missing(
            "the simulation never switched to per-CPU mode",
        ))?;
    let mm = to_cpu.mm;
    let mut steps = vec![Step {
        title: "Per-task mode".into(),
        text: "owner-mode (Linux 6.19): while the mm has few users, each task owns its CID and \
               keeps it across switches and migrations. A batch of 6 threads is about to be \
               created on a 4-CPU machine."
            .into(),
        ts: to_cpu.ts.saturating_sub(ms(1)),
        span: ms(3),
        shows: vec![Shows::Model(PolicyKind::OwnerMode)],
    }];
    steps.push(Step {
        title: "Switch to per-CPU mode".into(),
        text: format!(
            "At {} users the mm exceeds max_cids = {}: the fork switches it to per-CPU mode and \
             walks the other tasks (the fixup). From now on a CID belongs to a CPU; all tasks on \
             one CPU see the same CID. pcpu_thrs = {} is the user count to fall below to switch \
             back.",
            to_cpu.users, to_cpu.max_cids, to_cpu.pcpu_thrs
        ),
        ts: to_cpu.ts,
        span: ms(3),
        shows: vec![Shows::Model(PolicyKind::OwnerMode)],
    });
    if let Some(back) = run
        .modes
        .iter()
        .find(|m| m.mm == mm && !m.percpu && !m.transit && m.ts > to_cpu.ts)
    {
        steps.push(Step {
            title: "Back to per-task mode".into(),
            text: format!(
                "The batch exits: at {} users (below pcpu_thrs) the exit switches the mm back \
                 to per-task mode and hands the CPUs' CIDs to tasks. The hysteresis (switch \
                 out above max_cids, back below pcpu_thrs) keeps the mode from flapping.",
                back.users
            ),
            ts: back.ts,
            span: ms(3),
            shows: vec![Shows::Model(PolicyKind::OwnerMode)],
        });
    }
    Ok(Setup {
        trace,
        runs,
        show_observed: false,
        mm: Some(mm),
        steps,
        speed: ms(2),
    })
}

fn nohz_full() -> Result<Setup, DemoError> {
    let mut cfg = SimConfig::new(PolicyKind::LazyCompact, 2, Workload::Spinner);
    cfg.duration_ns = ms(600);
    cfg.nohz_full = crate::model::policies::cpuset::CpuSet::from_iter_bounded(2, [1]);
    let (trace, runs) = sim_setup(&cfg, &[PolicyKind::ResumeBatch, PolicyKind::OwnerMode]);
    let stop = trace
        .events
        .iter()
        .find(|e| matches!(e.kind, EventKind::TickStop { success: true }))
        .map(|e| e.ts)
        .or_else(|| trace.events.first().map(|e| e.ts))
        .ok_or(DemoError::Missing("empty simulation"))?;
    let mm = runs[0].updates.last().map(|u| u.mm);
    let counts: Vec<String> = runs
        .iter()
        .map(|r| {
            let (t, res) = r.compaction_counts(mm);
            format!("{} {t} tick / {res} resume", r.policy.id())
        })
        .collect();
    let steps = vec![
        Step {
            title: "A lone spinner on a nohz_full CPU".into(),
            text: "CPU 1 is nohz_full: while a single task runs there the scheduler tick stops \
                   (tick_stop). The spinner never sleeps, so it never switches either."
                .into(),
            ts: stop,
            span: ms(300),
            shows: vec![Shows::Model(PolicyKind::LazyCompact)],
        },
        Step {
            title: "Nothing compacts".into(),
            text: format!(
                "With neither a switch nor a tick, no policy ever runs a compaction for this mm \
                 on CPU 1 and its CID is never refreshed: {}. Seed 004 flushes deferred per-CPU \
                 work on return to user when the tick is stopped; none of the three CID \
                 policies does that.",
                counts.join(", ")
            ),
            ts: stop + ms(250),
            span: ms(300),
            shows: vec![
                Shows::Model(PolicyKind::LazyCompact),
                Shows::Model(PolicyKind::ResumeBatch),
                Shows::Model(PolicyKind::OwnerMode),
            ],
        },
    ];
    Ok(Setup {
        trace,
        runs,
        show_observed: false,
        mm,
        steps,
        speed: ms(100),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_demo_builds_with_steps_in_order() {
        for d in DEMOS {
            let s = (d.build)().unwrap_or_else(|e| panic!("{}: {e}", d.name));
            assert!(s.steps.len() >= 2, "{}: {} steps", d.name, s.steps.len());
            assert!(!s.runs.is_empty(), "{}", d.name);
            let first = s.trace.events.first().map_or(0, |e| e.ts);
            for st in &s.steps {
                assert!(
                    st.ts >= first,
                    "{}: step {:?} before the trace",
                    d.name,
                    st.title
                );
            }
        }
        // every step names the lane sets it talks about, and they are the demo's
        for d in DEMOS {
            let s = (d.build)().expect("demo");
            for st in &s.steps {
                assert!(!st.shows.is_empty(), "{}: {:?}", d.name, st.title);
                for sh in &st.shows {
                    match sh {
                        Shows::Observed => assert!(s.show_observed, "{}: {:?}", d.name, st.title),
                        Shows::Model(k) => assert!(
                            s.runs.iter().any(|r| r.policy == *k),
                            "{}: {:?} names {k:?}",
                            d.name,
                            st.title
                        ),
                    }
                }
            }
        }
        assert!(find("workers").is_some());
        assert!(list().contains("nohz-full"));
    }
}
