//! `ObservedState::mm_only` (what a model's replay and its first pass apply every event to)
//! resolves the same tasks to the same mms, made in the same order, as the full observed state
//! the timeline and `stats` use: on every capture of the corpus and the odd ones of traces/,
//! after every event, for each task the event names; and so does the history of the tasks'
//! mms that a replay's first pass records for every replay of the capture to read.

mod common;

use cidscope::events::{EventKind, Tid, Trace};
use cidscope::model::MmId;
use cidscope::model::observed::mm_history::MmLog;
use cidscope::model::observed::{Context, ObservedState, Sink};
use cidscope::model::tasks::MmInfo;
use cidscope::sources::{self, LoadOptions};

#[derive(Default)]
struct Made(Vec<(MmId, MmInfo)>);
impl Sink for Made {
    fn new_mm(&mut self, id: MmId, info: MmInfo) {
        self.0.push((id, info));
    }
}

/// The tasks an event names.
fn named(kind: &EventKind, tid: Tid) -> Vec<Tid> {
    let mut v = vec![tid];
    match *kind {
        EventKind::SchedSwitch {
            prev_tid, next_tid, ..
        } => v.extend([prev_tid, next_tid]),
        EventKind::SchedProcessFork { parent, child } => v.extend([parent, child]),
        EventKind::SchedProcessExec { tid, old_tid } => v.extend([tid, old_tid]),
        EventKind::SchedMigrateTask { tid, .. }
        | EventKind::SchedWakeupNew { tid, .. }
        | EventKind::SchedProcessExit { tid }
        | EventKind::TaskNewtask { tid, .. } => v.push(tid),
        _ => {}
    }
    v
}

fn same_mms(name: &str, trace: &Trace) {
    let ncpus = trace
        .events
        .iter()
        .map(|e| e.cpu as usize + 1)
        .max()
        .unwrap_or(1);
    let ctx = Context {
        tasks: &trace.tasks,
        tgid_changes: &trace.tgid_changes,
        ncpus: ncpus as u32,
    };
    // the history a replay reads (recorded by its first pass) says what the state says
    let history = {
        let mut log = MmLog::default();
        let mut s = ObservedState::mm_only(ncpus);
        for (i, ev) in trace.events.iter().enumerate() {
            log.at = i as u32;
            s.apply(&ev, &ctx, &mut log);
        }
        log.history()
    };
    let (mut full, mut lean) = (ObservedState::new(ncpus), ObservedState::mm_only(ncpus));
    let (mut made_full, mut made_lean) = (Made::default(), Made::default());
    for (i, ev) in trace.events.iter().enumerate() {
        full.apply(&ev, &ctx, &mut made_full);
        lean.apply(&ev, &ctx, &mut made_lean);
        for t in named(&ev.kind, ev.tid) {
            assert_eq!(
                full.mm_of(t),
                lean.mm_of(t),
                "{name}: event {i} ({ev:?}): the mm of {t}"
            );
            assert_eq!(
                history.mm_at(t, i),
                lean.tasks.get(&t).map(|s| s.mm),
                "{name}: event {i} ({ev:?}): the history's mm of {t}"
            );
        }
        assert_eq!(made_full.0.len(), made_lean.0.len(), "{name}: event {i}");
    }
    assert_eq!(made_full.0, made_lean.0, "{name}: the mms made");
    assert_eq!(full.tasks.len(), lean.tasks.len(), "{name}: tasks");
    for (t, s) in full.tasks.iter() {
        assert_eq!(
            lean.tasks.get(t).map(|l| l.mm),
            Some(s.mm),
            "{name}: the mm of {t} at the end"
        );
        assert_eq!(
            history.mm_at(*t, usize::MAX),
            Some(s.mm),
            "{name}: the history's mm of {t} at the end"
        );
    }
}

#[test]
fn the_replays_observed_state_resolves_every_task_to_the_same_mm() {
    let root = common::traces();
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    for dir in ["kernels", "kernels-plain", "inference", ""] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let n = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let capture = [
                ".ftrace.txt",
                ".txt.zst",
                ".trace.dat",
                ".perf.data",
                ".txt",
            ]
            .iter()
            .any(|s| n.ends_with(s));
            if p.is_file() && capture && !n.contains("truth") && !n.starts_with("README") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut checked = 0;
    for p in &files {
        // (damaged captures the readers refuse are the readers' tests)
        let Ok(trace) = sources::load(p, &LoadOptions::default()) else {
            continue;
        };
        same_mms(&p.display().to_string(), &trace);
        checked += 1;
    }
    assert!(checked > 250, "only {checked} captures loaded");
}
