//! `cidscope vm --report DIR`: an experiment's report made again from its recordings (after a
//! cidscope upgrade, or when a recording could not be read back at the time): every run's
//! `cid_metrics` and `model_agreement` recomputed, experiment.json and experiment.svg
//! rewritten, the table printed. What only the run itself knew (wall and boot time, events
//! received, the guest's status) is kept from experiment.json.

use super::plan::Plan;
use super::record::RunRecord;
use crate::vm::config::VmConfig;
use crate::vm::error::VmError;
use crate::vm::report::{ModelOverride, say};
use serde_json::Value;
use std::path::Path;
use std::process::ExitCode;

fn bad(dir: &Path, what: &str) -> VmError {
    VmError::Setup(format!(
        "--report {}: experiment.json has no {what} (is it an experiment's directory?)",
        dir.display()
    ))
}

/// The plan experiment.json states.
fn plan(dir: &Path, e: &Value, model: &ModelOverride) -> Result<Plan, VmError> {
    let strs = |k: &str| -> Option<Vec<String>> {
        e.get(k)?
            .as_array()?
            .iter()
            .map(|v| v.as_str().map(String::from))
            .collect()
    };
    let kernels = strs("kernels").ok_or_else(|| bad(dir, "experiment.kernels"))?;
    let cpus: Vec<u32> = e
        .get("cpus")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(dir, "experiment.cpus"))?
        .iter()
        .filter_map(|c| c.as_u64().map(|c| c as u32))
        .collect();
    let workload = e["workload"].as_str().unwrap_or("?").to_string();
    let first = kernels.first().ok_or_else(|| bad(dir, "kernel"))?;
    let base = VmConfig {
        threads: e["threads"].as_u64().map(|t| t as u32),
        duration_ns: (e["duration_s"].as_f64().unwrap_or(0.0) * 1e9) as u64,
        seed: e["seed"].as_u64().unwrap_or(0),
        graph_function: e["graph_function"].as_str().map(String::from),
        probes: e["probes"].as_bool().unwrap_or(true),
        ..VmConfig::new(first.into(), cpus.first().copied().unwrap_or(1), &workload)
    };
    Ok(Plan {
        kernels: kernels.iter().map(Into::into).collect(),
        cpus,
        repeat: e["repeat"].as_u64().unwrap_or(1) as u32,
        out: dir.to_path_buf(),
        base,
        model: model.clone(),
    })
}

/// A run as experiment.json has it, its analysis redone from its recording.
fn run(dir: &Path, r: &Value, model: &ModelOverride) -> RunRecord {
    let s = |k: &str| r[k].as_str().map(String::from);
    let status = match r["status"].as_str() {
        Some("ok") => "ok",
        Some("stopped") => "stopped",
        _ => "failed",
    };
    let mut rec = RunRecord {
        kernel: s("kernel").unwrap_or_default(),
        kernel_release: s("kernel_release"),
        cpus: r["cpus"].as_u64().unwrap_or(0) as u32,
        repeat: r["repeat"].as_u64().unwrap_or(0) as u32,
        accel: s("accel"),
        hz: r["hz"].as_u64().map(|h| h as u32),
        scan_batch: r["scan_batch"].as_u64().map(|b| b as u32),
        file: s("file"),
        status,
        error: s("error"),
        wall_s: r["wall_s"].as_f64().unwrap_or(0.0),
        boot_s: r["boot_s"].as_f64(),
        events: r["events"].as_u64().unwrap_or(0),
        lost_in_guest: r["lost_in_guest"].as_u64().unwrap_or(0),
        workload_mm: None,
        workload_tgid: None,
        cid_metrics: Vec::new(),
        model_agreement: None,
        series: None,
    };
    let Some(file) = rec.file.clone() else {
        return rec;
    };
    let path = dir.join(&file);
    match crate::sources::load(&path, &crate::sources::LoadOptions::default()) {
        Ok(trace) => {
            // what the recording's own header says, where experiment.json does not
            rec.kernel_release = rec.kernel_release.or_else(|| trace.kernel_release.clone());
            rec.hz = rec.hz.or(trace.kernel_hz);
            rec.scan_batch = rec.scan_batch.or(trace.kernel_scan_batch);
            let facts = crate::model::kernel::KernelFacts::of(&trace);
            let stats = match crate::model::kernel::choose(model, &facts) {
                Some(c) => crate::stats::policy::compute_chosen(&trace, &c, &[], true),
                None => crate::stats::compute(&trace),
            };
            super::analyze(&trace, stats, &mut rec);
            // a recording that could not be read back then reads now
            if rec
                .error
                .as_deref()
                .is_some_and(|e| e.starts_with("reading the recording back"))
            {
                say(&format!("{file}: read back now"));
                rec.status = "ok";
                rec.error = None;
            }
        }
        Err(e) => {
            rec.status = "failed";
            rec.error = Some(format!("reading the recording back: {e}"));
        }
    }
    rec
}

/// Remakes DIR's report; exit as the experiment's (1 when runs are missing).
pub fn reread(
    dir: &Path,
    model: &ModelOverride,
    json: bool,
    emit: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> Result<ExitCode, VmError> {
    let path = dir.join("experiment.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| VmError::Setup(format!("--report {}: {e}", path.display())))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| VmError::Setup(format!("--report {}: {e}", path.display())))?;
    let e = &v["experiment"];
    let plan = plan(dir, e, model)?;
    let runs: Vec<RunRecord> = v["runs"]
        .as_array()
        .ok_or_else(|| bad(dir, "runs"))?
        .iter()
        .map(|r| run(dir, r, model))
        .collect();
    super::report(
        &plan,
        &runs,
        e["started_unix_s"].as_u64().unwrap_or(0),
        e["wall_s"].as_f64().unwrap_or(0.0),
        json,
        emit,
    )
}
