//! `cidscope stats --policy P`: the capture replayed through a CID model. Adds
//! `model_agreement` and per-process `compactions` to the stats JSON (keys are contracts).

use super::Stats;
use super::model_summary::{
    CompactionCounts, ModelAgreement, ModelSummary, ProcessModel, Unseeded,
};
use crate::events::Trace;
use crate::model::kernel::ChosenModel;
use crate::model::policies::{self, Agreement, Params, PolicyKind, PolicyRun};

fn counts(run: &PolicyRun, mm: Option<crate::model::MmId>, scanned_only: bool) -> CompactionCounts {
    let mut c = CompactionCounts::default();
    for x in &run.compactions {
        if (x.scanned || !scanned_only) && mm.is_none_or(|m| m == x.mm) {
            match x.trigger {
                policies::Trigger::Tick => c.tick += 1,
                policies::Trigger::Resume => c.resume += 1,
            }
        }
    }
    c
}

pub fn summary(run: &PolicyRun) -> ModelSummary {
    let a = run.agreement.as_ref();
    ModelSummary {
        policy: run.policy.id(),
        hz: run.params.hz,
        cpus: run.params.cpus,
        model_events: run.model_events,
        rseq_updates_predicted: run.predicted_updates(),
        compactions: counts(run, None, true),
        compaction_attempts: counts(run, None, false),
        complete_scans: run.scans.iter().filter(|s| s.end_ts.is_some()).count() as u64,
        mode_changes: run.modes.len() as u64,
        alarms: run.alarms.len() as u64,
        violations: run.violations.len() as u64,
        checked: a.map_or(0, |a| a.checked),
        agreed: a.map_or(0, |a| a.agreed),
        predicted: a.map_or(0, |a| a.predicted.agreed),
        inferred_steps: a.map_or(0, |a| a.inferred_steps.len() as u64),
    }
}

fn agreement_json(a: &Agreement, run: &PolicyRun, unseeded: Option<&Agreement>) -> ModelAgreement {
    ModelAgreement {
        policy: a.policy,
        checked: a.checked,
        agreed: a.agreed,
        predicted: a.predicted.agreed,
        predicted_fresh: a.predicted_fresh,
        infer_steps: run.params.infer.id(),
        inference: a.inference.clone(),
        inferred_steps: a.inferred_steps.clone(),
        first_disagreement: a.first_disagreement.clone(),
        seeded: a.seeded,
        seeds: a.seeds,
        fresh: a.fresh,
        preexisting: a.preexisting,
        unmodelled: a.unmodelled,
        without_seeding: unseeded.map(|u| Unseeded {
            checked: u.checked,
            agreed: u.agreed,
            fresh: u.fresh,
            preexisting: u.preexisting,
        }),
        hz: run.params.hz,
        hz_source: run.params.hz_source.describe(),
        jiffies: run.params.jiffies.id(),
        cpus: run.params.cpus,
        trace_gaps: a.trace_gaps.clone(),
        probe_checks: a.probe_checks.clone(),
        predicted_probe_checks: a.predicted_probe_checks,
        kernel_version: None,
        variant: matches!(
            run.policy,
            PolicyKind::LazyCompact | PolicyKind::ResumeBatch
        )
        .then(|| run.params.version.id()),
        scan_batch: (run.policy == PolicyKind::ResumeBatch).then_some(run.params.batch),
        chosen_because: format!("--policy {}", run.policy),
    }
}

/// Captures of up to this many tasks get their summary made beside the models' replay.
const PARALLEL_TASKS_MAX: usize = 100_000;

/// `stats` plus the replay of `models` (the first one fills `model_agreement` and the
/// per-process `compactions`; all of them appear in `compare` when there are several).
/// `per_task` false: the text summary's form (no list of every task, the CID metrics of the
/// processes it shows: [`super::compute_with`]).
pub fn compute_with_models(
    trace: &Trace,
    models: &[PolicyKind],
    params: &Params,
    per_task: bool,
) -> Stats {
    // (a summary needs no history of slots, task CIDs and lanes)
    let params = &Params {
        recording: policies::Recording::Summary,
        ..params.clone()
    };
    // The first model's replay brings the plain replay without seeding beside it (what
    // seeding adds to the prediction, not to the inference), from one preparation.
    let few_tasks = trace.tasks.len() <= PARALLEL_TASKS_MAX;
    let replays = || -> (Option<policies::Agreement>, Vec<PolicyRun>) {
        let mut unseeded = None;
        let mut runs = Vec::with_capacity(models.len());
        for (i, &k) in models.iter().enumerate() {
            if i == 0 {
                let (run, u) = policies::replay::replay_with_unseeded(trace, k, params, few_tasks);
                unseeded = u;
                runs.push(run);
            } else {
                runs.push(policies::replay(trace, k, params));
            }
        }
        (unseeded, runs)
    };
    let side = || super::compute_with(trace, per_task);
    // The summary and the replays read the trace only: on a capture of few tasks (whose
    // summary is small beside the replay's state) the summary runs in a thread beside the
    // models' replays. A capture of many tasks runs them one after the other, so that their
    // states are not held at once.
    let (mut s, (unseeded, runs)) = if few_tasks {
        std::thread::scope(|sc| {
            let side = sc.spawn(|| {
                policies::replay::side_priority();
                side()
            });
            let runs = replays();
            (
                side.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                runs,
            )
        })
    } else {
        (side(), replays())
    };
    if let Some(run) = runs.first() {
        if let Some(a) = &run.agreement {
            s.model_agreement = Some(agreement_json(a, run, unseeded.as_ref()));
        }
        s.model = Some(summary(run));
        // per mm once (a pass per process over every update grows as processes x updates)
        let mut cids_of = run.predicted_cids();
        let mut attempts: rustc_hash::FxHashMap<
            crate::model::MmId,
            (CompactionCounts, CompactionCounts),
        > = rustc_hash::FxHashMap::default();
        for x in &run.compactions {
            let (all, scanned) = attempts.entry(x.mm).or_default();
            let add = |c: &mut CompactionCounts| match x.trigger {
                policies::Trigger::Tick => c.tick += 1,
                policies::Trigger::Resume => c.resume += 1,
            };
            add(all);
            if x.scanned {
                add(scanned);
            }
        }
        let mut complete: rustc_hash::FxHashMap<crate::model::MmId, u64> =
            rustc_hash::FxHashMap::default();
        for x in run.scans.iter().filter(|x| x.end_ts.is_some()) {
            *complete.entry(x.mm).or_default() += 1;
        }
        let per_mm: rustc_hash::FxHashMap<crate::model::MmId, &policies::MmAgreement> = run
            .agreement
            .iter()
            .flat_map(|a| a.per_mm.iter())
            .map(|a| (a.mm, a))
            .collect();
        for p in &mut s.processes {
            let mm = crate::model::MmId(p.mm);
            let (all, scanned) = attempts.get(&mm).copied().unwrap_or_default();
            let mut m = ProcessModel {
                attempts: all,
                complete_scans: complete.get(&mm).copied().unwrap_or(0),
                ..Default::default()
            };
            if let Some(a) = per_mm.get(&mm) {
                m.checked = a.checked;
                m.agreed = a.agreed;
                m.seeds = a.seeds;
            }
            m.predicted_cids = cids_of.remove(&mm).unwrap_or_default();
            p.compactions = Some(Box::new(scanned));
            p.model = Some(Box::new(m));
        }
        // where the capture shows no scan calls, the model's compactions, said so
        let procs = &s.processes;
        super::cid_metrics::fill_from_model(&mut s.cid_metrics, |mm| {
            let c = procs.get(mm as usize)?.compactions.as_ref()?;
            Some((c.tick, c.resume))
        });
    }
    if runs.len() > 1 {
        s.compare = runs.iter().map(summary).collect();
    }
    s
}

/// `stats` under the model chosen for the capture's kernel (`model::kernel::choose`), plus the
/// `compare` models: `model_agreement` says which kernel, variant and why.
pub fn compute_chosen(
    trace: &Trace,
    chosen: &ChosenModel,
    compare: &[PolicyKind],
    per_task: bool,
) -> Stats {
    let mut models = vec![chosen.policy];
    models.extend(compare.iter().filter(|&&k| k != chosen.policy));
    let mut s = compute_with_models(trace, &models, &chosen.params, per_task);
    if let Some(a) = &mut s.model_agreement {
        a.kernel_version = chosen.kernel_version.clone();
        a.variant = chosen.variant.map(|v| v.id());
        a.chosen_because = chosen.chosen_because.clone();
    }
    s
}

/// Inferred steps the text form lists (all are in the JSON).
const INFERRED_SHOWN: usize = 8;

/// "predicted P/N, A/N with K inferred steps": the model's own prediction (the plain replay)
/// first, then the agreement with the steps the inference placed (the TUI's title says the
/// same).
pub fn figures(predicted: u64, agreed: u64, checked: u64, steps: usize) -> String {
    let pct = |x: u64| {
        if checked == 0 {
            100.0
        } else {
            100.0 * x as f64 / checked as f64
        }
    };
    format!(
        "predicted {predicted}/{checked} ({:.1}%), {agreed}/{checked} ({:.1}%) with {steps} inferred step{}",
        pct(predicted),
        pct(agreed),
        if steps == 1 { "" } else { "s" }
    )
}

/// [`figures`] without the percentages: "predicted P/N, A/N with K inferred steps" (a lane
/// set's title, where 80 columns must hold it beside the model's name).
pub fn figures_brief(predicted: u64, agreed: u64, checked: u64, steps: usize) -> String {
    format!(
        "predicted {predicted}/{checked}, {agreed}/{checked} with {steps} inferred step{}",
        if steps == 1 { "" } else { "s" }
    )
}

/// Whether the capture lost events (lost-event markers, an overwritten ring buffer: the
/// warning's code leads its text): the model replays what is left, so a fork, exec or
/// migration in a lost stretch is missing from it.
fn lost_events(s: &Stats) -> bool {
    s.lost_events > 0
        || s.lost_markers > 0
        || s.warnings.iter().any(|w| w.starts_with("overwritten:"))
}

/// Lines appended to the text form of `stats` for a model.
pub fn render_text(s: &Stats) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    if let Some(a) = &s.model_agreement {
        let _ = writeln!(
            o,
            "\nmodel {} (HZ {} from {}, {} CPUs): {}{}",
            a.policy,
            a.hz,
            a.hz_source,
            a.cpus,
            figures(a.predicted, a.agreed, a.checked, a.inferred_steps.len()),
            if a.seeded {
                format!(" ({} seeds)", a.seeds)
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            o,
            "  kernel {}, variant {}: {}",
            a.kernel_version.as_deref().unwrap_or("unknown"),
            a.variant.unwrap_or("-"),
            a.chosen_because
        );
        let _ = writeln!(
            o,
            "  processes begun in the capture: {}/{}; already running: {}/{}",
            a.fresh.agreed, a.fresh.checked, a.preexisting.agreed, a.preexisting.checked
        );
        if let Some(u) = &a.without_seeding {
            let _ = writeln!(o, "  without seeding: {}/{}", u.agreed, u.checked);
        }
        let _ = writeln!(o, "  inference: {}", a.inference);
        if lost_events(s) && a.agreed < a.checked {
            let _ = writeln!(
                o,
                "  the capture lost events (see lost and overwritten above): a fork, exec or \
                 migration in a lost stretch is not in the replay, so a miss there may be the \
                 capture's, not the model's"
            );
        }
        for st in a.inferred_steps.iter().take(INFERRED_SHOWN) {
            let _ = writeln!(
                o,
                "  inferred {} of {} at {} ({:+.3} ms from its record at {}), inside [{} {}, {} {}]: fixed {}, broke {}",
                st.kind,
                st.tid,
                crate::events::fmt_ts(st.placed_ts),
                st.displacement_ns as f64 / 1e6,
                crate::events::fmt_ts(st.record_ts),
                st.window.from,
                crate::events::fmt_ts(st.window.from_ts),
                st.window.to,
                crate::events::fmt_ts(st.window.to_ts),
                st.fixed,
                st.broken
            );
        }
        if a.inferred_steps.len() > INFERRED_SHOWN {
            let _ = writeln!(
                o,
                "  ... {} more inferred steps (model_agreement.inferred_steps in --json)",
                a.inferred_steps.len() - INFERRED_SHOWN
            );
        }
        let pc = &a.probe_checks;
        if pc.checked == 0 && pc.probe_events > 0 {
            let _ = writeln!(
                o,
                "  kernel state read by the CID probes: nothing compared ({} probe records, none reads a value this model keeps; probe_checks 0/0 is not agreement)",
                pc.probe_events
            );
        }
        if pc.checked > 0 {
            let _ = writeln!(
                o,
                "  kernel state read by the CID probes: {}/{} values as the model holds them (probe_checks){}",
                pc.matched,
                pc.checked,
                if a.predicted_probe_checks.matched != pc.matched {
                    format!(
                        "; predicted {}/{} (predicted_probe_checks)",
                        a.predicted_probe_checks.matched, a.predicted_probe_checks.checked
                    )
                } else {
                    String::new()
                }
            );
            if let Some(m) = pc.mismatches.first() {
                let _ = writeln!(
                    o,
                    "    first mismatch: {} tid {} at {}: {} kernel {}, model {}",
                    crate::events::fmt_ts(m.ts),
                    m.tid,
                    m.probe,
                    m.value,
                    m.kernel,
                    m.model
                );
            }
        }
        if let Some(d) = &a.first_disagreement {
            let _ = writeln!(
                o,
                "  first disagreement: {} tid {} cpu {}: observed {}, predicted {}\n    model: {}",
                crate::events::fmt_ts(d.ts),
                d.tid,
                d.cpu,
                d.observed,
                d.predicted.map_or("no CID".to_string(), |c| c.to_string()),
                d.model_state
            );
        }
    }
    if let Some(m) = &s.model {
        let _ = writeln!(
            o,
            "  compactions: tick {} resume {} (attempts: tick {} resume {}), complete scans {}",
            m.compactions.tick,
            m.compactions.resume,
            m.compaction_attempts.tick,
            m.compaction_attempts.resume,
            m.complete_scans
        );
    }
    for c in &s.compare {
        let _ = writeln!(
            o,
            "  compare {:<13} updates {:>8} compactions tick {:>6} resume {:>6} {}",
            c.policy,
            c.rseq_updates_predicted,
            c.compactions.tick,
            c.compactions.resume,
            figures(c.predicted, c.agreed, c.checked, c.inferred_steps as usize)
        );
    }
    o
}
