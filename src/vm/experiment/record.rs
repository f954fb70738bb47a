//! What an experiment writes: `DIR/experiment.json` (its keys are a contract: `runs`, each
//! with `kernel_release`, `cpus`, `repeat`, `accel`, `hz`, `file`, `cid_metrics`,
//! `model_agreement`; `summary`, the medians and spread per kernel × vCPUs; `missing`, the runs
//! that did not finish and why), rewritten whole after every run so that an experiment stopped
//! at any moment keeps every run it finished.

use crate::stats::cid_metrics::ProcessMetrics;
use serde::Serialize;
use std::path::Path;

/// One guest run of the experiment.
#[derive(Serialize, Debug, Clone)]
pub struct RunRecord {
    /// The image booted, as given to `--kernel`.
    pub kernel: String,
    /// Its `uname -r` (null when it did not boot).
    pub kernel_release: Option<String>,
    pub cpus: u32,
    /// 1-based.
    pub repeat: u32,
    pub accel: Option<String>,
    pub hz: Option<u32>,
    /// CONFIG_RSEQ_CID_SCAN_BATCH (null on stock kernels).
    pub scan_batch: Option<u32>,
    /// The recording in DIR (ftrace text, `cidscope FILE` replays it); null when none was kept.
    pub file: Option<String>,
    /// `ok`, `stopped` (Ctrl-C during the run: kept, left out of the summary) or `failed`.
    pub status: &'static str,
    /// Why it failed.
    pub error: Option<String>,
    pub wall_s: f64,
    pub boot_s: Option<f64>,
    pub events: u64,
    pub lost_in_guest: u64,
    /// The workload's process: the one with the most rseq_updates apart from the guest's init
    /// (its index in `cid_metrics`' `mm`, and its tgid).
    pub workload_mm: Option<u32>,
    pub workload_tgid: Option<u32>,
    /// `stats --json`'s `cid_metrics` of the recording (every process).
    pub cid_metrics: Vec<ProcessMetrics>,
    /// `stats --json`'s `model_agreement` under the guest kernel's own model.
    pub model_agreement: Option<serde_json::Value>,
    /// The workload process's span excess and highest running CID over time.
    pub series: Option<SeriesRecord>,
}

impl RunRecord {
    /// The metrics of the workload's process.
    pub fn workload(&self) -> Option<&ProcessMetrics> {
        let mm = self.workload_mm?;
        self.cid_metrics.iter().find(|m| m.mm == mm)
    }
}

#[derive(Serialize, Debug, Clone)]
pub struct SeriesRecord {
    pub bin_ms: f64,
    /// Per bin from the process's first run: the highest span excess.
    pub span_excess: Vec<u16>,
    /// Per bin: the highest CID a running thread held (-1: none ran).
    pub max_cid: Vec<i16>,
}

/// A run the plan had that did not finish.
#[derive(Serialize, Debug, Clone)]
pub struct Missing {
    pub kernel: String,
    pub cpus: u32,
    pub repeat: u32,
    pub why: String,
}

/// The recordings of an experiment's DIR to open side by side: the first finished run (the
/// lowest repeat) of each kernel × vCPUs, in the plan's order (vCPUs, then kernels).
pub fn recordings(dir: &Path) -> Result<Vec<std::path::PathBuf>, crate::vm::VmError> {
    let path = dir.join("experiment.json");
    let bad = |e: String| {
        crate::vm::VmError::Setup(format!(
            "{}: {e} (a directory opens as an experiment of `cidscope vm --out DIR`)",
            path.display()
        ))
    };
    let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let runs = v["runs"].as_array().ok_or_else(|| bad("no runs".into()))?;
    let mut picked: Vec<(u64, usize, u64, String)> = Vec::new();
    let kernels: Vec<&str> = v["experiment"]["kernels"]
        .as_array()
        .map(|k| k.iter().filter_map(|s| s.as_str()).collect())
        .unwrap_or_default();
    for r in runs.iter().filter(|r| r["status"] == "ok") {
        let (Some(file), Some(cpus), Some(rep), Some(k)) = (
            r["file"].as_str(),
            r["cpus"].as_u64(),
            r["repeat"].as_u64(),
            r["kernel"].as_str(),
        ) else {
            continue;
        };
        let ki = kernels.iter().position(|x| *x == k).unwrap_or(usize::MAX);
        match picked.iter_mut().find(|p| p.0 == cpus && p.1 == ki) {
            Some(p) if rep < p.2 => *p = (cpus, ki, rep, file.to_string()),
            Some(_) => {}
            None => picked.push((cpus, ki, rep, file.to_string())),
        }
    }
    if picked.is_empty() {
        return Err(bad("no finished run with a recording".into()));
    }
    picked.sort();
    Ok(picked.into_iter().map(|p| dir.join(p.3)).collect())
}

/// Writes `text` to `path` through a temporary file and a rename: a reader (or a run killed
/// mid-write) sees the old file or the new one, never half of one.
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// A file name part from a kernel release: what a shell needs no quoting for.
pub fn file_part(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_parts_need_no_quoting() {
        assert_eq!(
            file_part("6.18.15+deb13-cloud-amd64"),
            "6.18.15+deb13-cloud-amd64"
        );
        assert_eq!(file_part("a b/c'd"), "a_b_c_d");
    }

    #[test]
    fn an_atomic_write_replaces_the_file_whole() {
        let d = std::env::temp_dir().join(format!("cidscope-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("experiment.json");
        write_atomic(&p, "one").unwrap();
        write_atomic(&p, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert!(!p.with_extension("json.tmp").exists());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
