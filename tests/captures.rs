//! Real captures (traces/, see traces/CAPTURES.md) replayed under lazy-compact, the policy of
//! the 6.18 kernel that recorded them: every `rseq_update` of a process whose mm began inside
//! the capture must get the observed CID. Also §6 V3 and V5 on those captures.

use cidscope::events::{EventKind, Tid, Trace};
use cidscope::model::policies::{Params, PolicyKind, replay};
use cidscope::sources::{LoadOptions, load};
use std::path::Path;

fn load_trace(name: &str) -> Trace {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(name);
    load(&p, &LoadOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Captures with task_newtask and sched_process_exec (made for the models).
const OWN: [&str; 9] = [
    "v3-spinner.ftrace.txt",
    "v3-spinner-rt.ftrace.txt",
    "v5-workers.ftrace.txt",
    "v5-workers-rt.ftrace.txt",
    "v5-workers-quiet.ftrace.txt",
    "hogs-6threads.ftrace.txt",
    "churn-batches6.ftrace.txt",
    "migrate-affinity-flip.ftrace.txt",
    "forks-3procs.ftrace.txt",
];

fn check_capture(name: &str) {
    let trace = load_trace(name);
    let run = replay(&trace, PolicyKind::LazyCompact, &Params::default());
    assert_eq!(run.params.hz, 250, "{name}: HZ inferred from the ticks");
    assert_eq!(run.params.cpus, 2);
    let a = run.agreement.as_ref().expect("a replay has an agreement");
    assert!(
        a.fresh.checked > 0,
        "{name}: no process began inside the capture"
    );
    for m in a.per_mm.iter().filter(|m| m.begins_in_capture) {
        assert_eq!(
            m.agreed, m.checked,
            "{name}: mm {} (begun in the capture): first disagreement {:#?}",
            m.mm.0, m.first_disagreement
        );
    }
    assert_eq!(a.fresh.agreed, a.fresh.checked, "{name}");
    // processes already running, after seeding (reported; currently all agree)
    assert!(
        a.preexisting.agreed as f64 >= a.preexisting.checked as f64 * 0.99,
        "{name}: preexisting {:?}, first {:#?}",
        a.preexisting,
        a.first_disagreement
    );
    assert!(run.alarms.is_empty(), "{name}: {:?}", run.alarms);
    eprintln!(
        "{name}: fresh {}/{}, preexisting {}/{} after {} seeds",
        a.fresh.agreed, a.fresh.checked, a.preexisting.agreed, a.preexisting.checked, a.seeds
    );
}

#[test]
fn own_captures_agree_for_processes_begun_inside() {
    for name in OWN {
        check_capture(name);
    }
}

#[test]
fn shared_hackbench_capture_agrees() {
    // the shared sample with the TGID column: its processes fork inside the capture
    let trace = load_trace("hackbench-pipe.ftrace.txt");
    let run = replay(&trace, PolicyKind::LazyCompact, &Params::default());
    let a = run.agreement.unwrap();
    assert!(a.fresh.checked > 7000);
    assert_eq!(a.fresh.agreed, a.fresh.checked);
}

/// The task created by the exec'd `mcwork` process (its first thread).
fn workload(trace: &Trace) -> (Tid, Tid) {
    let mut leader = None;
    for e in &trace.events {
        match e.kind {
            EventKind::SchedProcessExec { tid, .. } if trace.comm_of(tid) == "mcwork" => {
                leader = Some(tid)
            }
            EventKind::TaskNewtask { tid, clone_flags }
                if Some(e.tid) == leader && clone_flags & cidscope::events::CLONE_VM != 0 =>
            {
                return (e.tid, tid);
            }
            _ => {}
        }
    }
    panic!("no mcwork thread in the capture")
}

/// §6 V3: a single unpreempted thread under lazy-compact. Its `rseq_update`s with no switch-in
/// or migration since its previous one (the tick-scan signature) are spaced 100 ms (25
/// jiffies at HZ=250, 26 when the tick that saw the scan due was late), each after a tick on
/// its CPU; the model's scans in its context happen exactly at those updates and nowhere
/// else.
#[test]
fn v3_tick_scans_of_an_unpreempted_thread() {
    let trace = load_trace("v3-spinner-rt.ftrace.txt");
    let (_, spinner) = workload(&trace);
    let run = replay(&trace, PolicyKind::LazyCompact, &Params::default());
    // signature updates, from the trace alone
    let mut sig = Vec::new();
    let mut sig_ticks = Vec::new();
    let mut switched = true;
    let mut last_tick: Option<u64> = None;
    let mut updates = 0;
    for e in &trace.events {
        match e.kind {
            EventKind::SchedSwitch { next_tid, .. } if next_tid == spinner => switched = true,
            EventKind::SchedMigrateTask {
                tid,
                orig_cpu,
                dest_cpu,
                ..
            } if tid == spinner && orig_cpu != dest_cpu => switched = true,
            EventKind::Tick if e.tid == spinner => last_tick = Some(e.ts),
            EventKind::RseqUpdate { .. } if e.tid == spinner => {
                updates += 1;
                if !switched {
                    let lag = e.ts - last_tick.expect("a tick before a tick-scan update");
                    assert!(lag < 4_000_000, "update {} µs after the tick", lag / 1000);
                    sig.push(e.ts);
                    sig_ticks.push(e.ts - lag);
                }
                switched = false;
            }
            _ => {}
        }
    }
    assert!(
        sig.len() >= 15,
        "{} of {updates} updates are tick scans",
        sig.len()
    );
    for w in sig_ticks.windows(2) {
        let jiffies = (w[1] - w[0] + 2_000_000) / 4_000_000;
        assert!(
            jiffies == 25 || jiffies == 26,
            "ticks before tick-scan updates {} ms apart",
            (w[1] - w[0]) as f64 / 1e6
        );
    }
    // the model's scan attempts in the spinner's context coincide with them
    let scans: Vec<u64> = run
        .compactions
        .iter()
        .filter(|c| c.tid == spinner)
        .map(|c| c.ts)
        .collect();
    assert_eq!(scans, sig, "model scans vs tick-scan updates");
    assert!(
        run.compactions
            .iter()
            .filter(|c| c.tid == spinner)
            .all(|c| c.trigger == cidscope::model::policies::Trigger::Tick)
    );
}

/// §6 V5 on a real capture: four workers on two CPUs (fresh exec): lazy-compact predicts every
/// CID of the workload; resume-batch gives the same CIDs (its scans never clear a slot here).
#[test]
fn v5_workers_real_capture() {
    for name in [
        "v5-workers.ftrace.txt",
        "v5-workers-rt.ftrace.txt",
        "v5-workers-quiet.ftrace.txt",
    ] {
        let trace = load_trace(name);
        let (leader, _) = workload(&trace);
        for kind in [PolicyKind::LazyCompact, PolicyKind::ResumeBatch] {
            let run = replay(&trace, kind, &Params::default());
            let a = run.agreement.unwrap();
            // the leader's last update is after its exec (its first may be pre-exec)
            let mm = run
                .updates
                .iter()
                .rev()
                .find(|u| u.tid == leader)
                .map(|u| u.mm)
                .expect("the leader reports");
            let m = a.per_mm.iter().find(|m| m.mm == mm).unwrap();
            assert!(m.begins_in_capture);
            assert!(m.checked > 1000, "{name}: {} checked", m.checked);
            assert_eq!(
                m.agreed, m.checked,
                "{name} {kind}: {:#?}",
                m.first_disagreement
            );
            // CIDs ⊂ {0, 1}
            assert!(
                run.updates
                    .iter()
                    .filter(|u| u.mm == mm)
                    .all(|u| u.cid == 0 || u.cid == 1)
            );
        }
    }
}

/// Without seeding, processes already running are predicted from an empty state: worse,
/// never better, and the fresh processes are unaffected.
#[test]
fn seeding_only_helps_preexisting_processes() {
    for name in [
        "v3-spinner-rt.ftrace.txt",
        "migrate-affinity-flip.ftrace.txt",
    ] {
        let trace = load_trace(name);
        let seeded = replay(&trace, PolicyKind::LazyCompact, &Params::default())
            .agreement
            .unwrap();
        let raw = replay(
            &trace,
            PolicyKind::LazyCompact,
            &Params {
                seed: false,
                ..Params::default()
            },
        )
        .agreement
        .unwrap();
        assert_eq!(raw.fresh, seeded.fresh, "{name}");
        assert!(
            raw.preexisting.ratio() < seeded.preexisting.ratio(),
            "{name}"
        );
        eprintln!(
            "{name}: preexisting {}/{} unseeded, {}/{} seeded",
            raw.preexisting.agreed,
            raw.preexisting.checked,
            seeded.preexisting.agreed,
            seeded.preexisting.checked
        );
    }
}

/// mm identities of a replay are those of the timeline (model lanes line up with observed).
#[test]
fn replay_mm_ids_match_the_timeline() {
    let trace = load_trace("v5-workers-rt.ftrace.txt");
    let tl = cidscope::timeline::Timeline::build(&trace);
    let run = replay(&trace, PolicyKind::LazyCompact, &Params::default());
    // the final mm of each task (task_mm) is the mm of its last update
    let mut last = std::collections::BTreeMap::new();
    for u in &run.updates {
        last.insert(u.tid, u.mm);
    }
    assert!(last.len() > 10);
    for (tid, mm) in last {
        assert_eq!(tl.task_mm(tid), mm, "task {tid}");
    }
    assert_eq!(run.lanes.len(), tl.lanes.len());
}
