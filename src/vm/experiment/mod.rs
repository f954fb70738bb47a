//! Experiments: `cidscope vm --kernel A --kernel B --cpus 8,16,64 --repeat N --workload W
//! --out DIR` boots every kernel × vCPU count × repeat with the same workload and seed, one
//! guest at a time, and writes into DIR each recording (crash-safe, as `--record`), then
//! `experiment.json` (every run with its `cid_metrics` and `model_agreement`, the medians and
//! spread per kernel × vCPUs, the ratios, the 100 ms answer of [`capacity`], the missing
//! runs), `experiment.svg` ([`figure`]) and, on stdout, the side-by-side table ([`table`]).
//!
//! The runs go per vCPU count, per repeat, the kernels in turn: the runs a ratio compares are
//! made next to each other in time. A kernel that does not boot, a run that fails, or Ctrl-C
//! (the first stops the running guest and the experiment after it; a second kills the guest)
//! keeps every finished run; `experiment.json` is rewritten after each run and says which runs
//! are missing and why. Nothing is averaged over fewer runs without saying so.

pub mod capacity;
pub mod figure;
pub mod plan;
pub mod record;
pub mod reread;
pub mod summary;
pub mod table;

use super::config::VmConfig;
use super::error::VmError;
use super::host::VmRun;
use super::report::{load_capture, say, stats_of, watch};
pub use plan::{Plan, PlanRecord, RunKey};
use record::{Missing, RunRecord, SeriesRecord, file_part, write_atomic};
use serde::Serialize;
use std::process::ExitCode;

/// Bins of the figure's time series.
const SERIES_BIN_NS: u64 = 5_000_000;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Runs the plan: progress on stderr, the table (or with `json` experiment.json) on stdout.
/// Exit 0 when every run finished, 1 when some are missing (the report says which).
pub fn run(
    plan: &Plan,
    json: bool,
    emit: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> Result<ExitCode, VmError> {
    std::fs::create_dir_all(&plan.out)
        .map_err(|e| VmError::Setup(format!("--out {}: {e}", plan.out.display())))?;
    let json_path = plan.out.join("experiment.json");
    if json_path.exists() {
        return Err(VmError::Setup(format!(
            "--out {}: it already holds an experiment (experiment.json); name a new directory",
            plan.out.display()
        )));
    }
    for k in &plan.kernels {
        super::qemu::check_kernel(k).map_err(VmError::Setup)?;
    }
    let sigint = Arc::new(AtomicBool::new(false));
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        let _ = signal_hook::flag::register(sig, Arc::clone(&sigint));
    }
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let t0 = Instant::now();
    let keys = plan.runs();
    let mut runs: Vec<RunRecord> = Vec::new();
    let mut stopped = false;
    for (i, key) in keys.iter().enumerate() {
        let kernel = plan.kernels[key.kernel].display().to_string();
        if stopped {
            break;
        }
        say(&format!(
            "experiment run {} of {}: {kernel} on {} vCPUs, repeat {}",
            i + 1,
            keys.len(),
            key.cpus,
            key.repeat
        ));
        let (rec, interrupted) = run_one(plan, *key, &runs, &sigint);
        match (&rec.status, &rec.error) {
            (&"failed", Some(e)) => say(&format!("run {} failed: {e}", i + 1)),
            (&"stopped", _) => say("stopped: the experiment ends after this run"),
            _ => {}
        }
        stopped |= interrupted;
        runs.push(rec);
        write_json(plan, &runs, &keys, started, t0.elapsed().as_secs_f64())?;
    }
    report(plan, &runs, started, t0.elapsed().as_secs_f64(), json, emit)
}

/// Writes experiment.json and experiment.svg of `runs`, and the table (or with `json`
/// experiment.json) to `emit`. Exit 0 when every run of the plan finished, else 1.
pub fn report(
    plan: &Plan,
    runs: &[RunRecord],
    started: u64,
    wall_s: f64,
    json: bool,
    emit: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> Result<ExitCode, VmError> {
    let keys = plan.runs();
    let json_path = plan.out.join("experiment.json");
    let report = write_json(plan, runs, &keys, started, wall_s)?;
    let title = format!(
        "cidscope vm experiment: workload {}, {}",
        plan.base.workload,
        plan.kernels
            .iter()
            .enumerate()
            .map(|(i, k)| runs
                .iter()
                .find(|r| r.kernel == k.display().to_string())
                .and_then(|r| r.kernel_release.clone())
                .unwrap_or_else(|| format!("kernel {}", i + 1)))
            .collect::<Vec<_>>()
            .join(" vs ")
    );
    let svg = figure::svg(&report.summary, runs, &title, &report.notes);
    let svg_path = plan.out.join("experiment.svg");
    std::fs::write(&svg_path, svg)
        .map_err(|e| VmError::Run(format!("{}: {e}", svg_path.display())))?;
    say(&format!(
        "wrote {} and {} ({} of {} runs finished, {:.0} s)",
        json_path.display(),
        svg_path.display(),
        runs.iter().filter(|r| r.status == "ok").count(),
        keys.len(),
        wall_s
    ));
    let out = if json {
        std::fs::read_to_string(&json_path)
            .map_err(|e| VmError::Run(format!("{}: {e}", json_path.display())))?
    } else {
        table::text(
            &report.summary,
            &report.ratios,
            &report.scan_capacity,
            &report.missing,
            &report.notes,
        )
    };
    emit(&out).map_err(VmError::Output)?;
    Ok(if report.missing.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `experiment.json`.
#[derive(Serialize, Debug)]
pub struct ExperimentRecord<'a> {
    pub experiment: &'a PlanRecord,
    pub runs: &'a [RunRecord],
    pub missing: Vec<Missing>,
    pub summary: Vec<summary::Group>,
    pub ratios: Vec<summary::Ratio>,
    pub scan_capacity: Vec<capacity::Capacity>,
    pub notes: Vec<String>,
}

/// What `write_json` wrote, for the table and the figure.
struct Written {
    summary: Vec<summary::Group>,
    ratios: Vec<summary::Ratio>,
    scan_capacity: Vec<capacity::Capacity>,
    missing: Vec<Missing>,
    notes: Vec<String>,
}

fn write_json(
    plan: &Plan,
    runs: &[RunRecord],
    keys: &[RunKey],
    started: u64,
    wall_s: f64,
) -> Result<Written, VmError> {
    let path = &plan.out.join("experiment.json");
    let groups = summary::groups(plan, runs);
    let ratios = summary::ratios(plan, &groups);
    let batch_of = |g: &summary::Group| {
        runs.iter()
            .find(|r| r.kernel == g.kernel && r.scan_batch.is_some())
            .and_then(|r| r.scan_batch)
    };
    let scan_capacity = capacity::answer(&groups, batch_of);
    let missing: Vec<Missing> = keys
        .iter()
        .filter_map(|k| {
            let kernel = plan.kernels[k.kernel].display().to_string();
            let r = runs
                .iter()
                .find(|r| r.kernel == kernel && r.cpus == k.cpus && r.repeat == k.repeat);
            let why = match r {
                None => "not run (the experiment was stopped before it)".to_string(),
                Some(r) if r.status == "ok" => return None,
                Some(r) if r.status == "stopped" => {
                    "stopped by Ctrl-C before the workload's end (its recording is kept)".into()
                }
                Some(r) => format!("failed: {}", r.error.as_deref().unwrap_or("?")),
            };
            Some(Missing {
                kernel,
                cpus: k.cpus,
                repeat: k.repeat,
                why,
            })
        })
        .collect();
    let notes = notes(runs);
    let rec = ExperimentRecord {
        experiment: &plan.record(started, wall_s),
        runs,
        missing: missing.clone(),
        summary: groups.clone(),
        ratios: ratios.clone(),
        scan_capacity: scan_capacity.clone(),
        notes: notes.clone(),
    };
    let mut text = serde_json::to_string_pretty(&rec)?;
    text.push('\n');
    write_atomic(path, &text).map_err(|e| VmError::Run(format!("{}: {e}", path.display())))?;
    Ok(Written {
        summary: groups,
        ratios,
        scan_capacity,
        missing,
        notes,
    })
}

fn notes(runs: &[RunRecord]) -> Vec<String> {
    let mut n = Vec::new();
    if runs.iter().any(|r| r.accel.as_deref() == Some("tcg")) {
        n.push(
            "runs under TCG (QEMU's emulator): absolute durations (scan cost, latency, gaps) are inflated, by factors that differ between code paths; weigh the ratios between runs of this experiment, not the absolute values".to_string(),
        );
    }
    if runs
        .iter()
        .any(|r| r.workload().and_then(|m| m.scan_cost_us.as_ref()).is_some())
    {
        n.push("scan cost is function_graph's duration of task_mm_cid_work, the CID probes' handlers taken out: it still includes the tracer's cost for each function the call made".to_string());
    }
    n
}

/// One guest run; the record and whether Ctrl-C came.
fn run_one(plan: &Plan, key: RunKey, done: &[RunRecord], sigint: &AtomicBool) -> (RunRecord, bool) {
    let kernel = plan.kernels[key.kernel].clone();
    let partial = plan.out.join(format!(
        ".k{}-c{}-r{}.partial.ftrace.txt",
        key.kernel + 1,
        key.cpus,
        key.repeat
    ));
    let cfg = VmConfig {
        kernel: kernel.clone(),
        cpus: key.cpus,
        record: Some(partial.clone()),
        ..plan.base.clone()
    };
    let t = Instant::now();
    let mut rec = RunRecord {
        kernel: kernel.display().to_string(),
        kernel_release: None,
        cpus: key.cpus,
        repeat: key.repeat,
        accel: None,
        hz: None,
        scan_batch: None,
        file: None,
        status: "failed",
        error: None,
        wall_s: 0.0,
        boot_s: None,
        events: 0,
        lost_in_guest: 0,
        workload_mm: None,
        workload_tgid: None,
        cid_metrics: Vec::new(),
        model_agreement: None,
        series: None,
    };
    let run = match VmRun::start(cfg.clone()) {
        Ok(r) => r,
        Err(e) => {
            rec.error = Some(e.to_string());
            return (rec, false);
        }
    };
    let interrupts = watch(&run, &cfg, sigint);
    let outcome = run.wait();
    rec.wall_s = (t.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    let mut o = match outcome {
        Ok(o) => o,
        Err(e) => {
            rec.error = Some(e.to_string());
            keep_partial(
                &partial,
                &mut rec,
                &format!("k{}-failed", key.kernel + 1),
                key,
            );
            return (rec, interrupts > 0);
        }
    };
    rec.kernel_release = Some(o.header.kernel_version.clone());
    rec.accel = Some(o.accel.name().to_string());
    rec.hz = o.header.hz;
    rec.scan_batch = o.header.scan_batch;
    rec.boot_s = Some((o.boot.as_secs_f64() * 10.0).round() / 10.0);
    rec.events = o.events;
    rec.lost_in_guest = o.end.lost;
    // the recording's final name: the kernel's release, vCPUs, repeat
    let mut name = file_part(&o.header.kernel_version);
    if done.iter().any(|r| {
        r.kernel_release.as_deref() == Some(&o.header.kernel_version) && r.kernel != rec.kernel
    }) {
        name = format!("k{}-{name}", key.kernel + 1);
    }
    keep_partial(&partial, &mut rec, &name, key);
    let mut cfg = cfg;
    cfg.record = rec.file.as_ref().map(|f| plan.out.join(f));
    if o.capture == partial
        && let Some(r) = &cfg.record
    {
        o.capture = r.clone();
    }
    match load_capture(&o, &cfg) {
        Ok(trace) => {
            analyze(&trace, stats_of(&trace, &o, &plan.model), &mut rec);
            rec.status = if interrupts > 0 || o.end.status == "stopped" {
                "stopped"
            } else {
                "ok"
            };
            if o.end.status == "error" || o.end.worker != 0 {
                rec.status = "failed";
                rec.error = Some(format!(
                    "the guest ended with status {} (workload exit {})",
                    o.end.status, o.end.worker
                ));
            }
        }
        Err(e) => rec.error = Some(format!("reading the recording back: {e}")),
    }
    (rec, interrupts > 0)
}

/// What a run's recording says: the workload's process, its series, every process's
/// `cid_metrics` and the model agreement.
pub fn analyze(trace: &crate::events::Trace, stats: crate::stats::Stats, rec: &mut RunRecord) {
    let wl = workload_process(&stats);
    rec.workload_mm = wl.map(|p| p.mm);
    rec.workload_tgid = wl.and_then(|p| p.tgid);
    rec.series = wl
        .and_then(|p| {
            crate::stats::cid_metrics::series(trace, crate::model::MmId(p.mm), SERIES_BIN_NS)
        })
        .map(|s| SeriesRecord {
            bin_ms: s.bin_ns as f64 / 1e6,
            span_excess: s.bins.iter().map(|b| b.0).collect(),
            max_cid: s.bins.iter().map(|b| b.1).collect(),
        });
    rec.model_agreement = stats
        .model_agreement
        .as_ref()
        .and_then(|a| serde_json::to_value(a).ok());
    rec.cid_metrics = stats.cid_metrics;
}

/// Renames the run's recording to `NAME-cCPUS-rREPEAT.ftrace.txt` (kept even when the run
/// failed, when it holds anything).
fn keep_partial(partial: &std::path::Path, rec: &mut RunRecord, name: &str, key: RunKey) {
    if std::fs::metadata(partial).map_or(true, |m| m.len() == 0) {
        let _ = std::fs::remove_file(partial);
        return;
    }
    let file = format!("{name}-c{}-r{}.ftrace.txt", key.cpus, key.repeat);
    let dst = partial.with_file_name(&file);
    match std::fs::rename(partial, &dst) {
        Ok(()) => rec.file = Some(file),
        Err(e) => {
            rec.file = partial
                .file_name()
                .map(|f| f.to_string_lossy().into_owned());
            say(&format!(
                "keeping {}: rename failed: {e}",
                partial.display()
            ));
        }
    }
}

/// The workload's process: the most rseq_updates, apart from the guest's init (tgid 1).
fn workload_process(s: &crate::stats::Stats) -> Option<&crate::stats::ProcessSummary> {
    s.processes
        .iter()
        .filter(|p| p.tgid != Some(1) && p.label != "mm of 1 (tgid unknown)")
        .filter(|p| p.rseq_updates > 0)
        .max_by_key(|p| p.rseq_updates)
}
