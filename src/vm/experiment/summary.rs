//! The medians and spread of an experiment's runs per kernel × vCPUs, and the ratios measured
//! in the same experiment (kernel B against kernel A at each CPU count; the most vCPUs against
//! the fewest for each kernel). Under TCG absolute durations are inflated; ratios of runs made
//! the same way on the same host carry the comparison.
//!
//! Every figure says over how many runs it is (`n`) out of how many finished and were planned:
//! a run that failed or was stopped counts in neither, and is listed under `missing`.

use super::plan::Plan;
use super::record::RunRecord;
use serde::Serialize;
use std::collections::BTreeMap;

/// One metric of a group: median, min, max over the `n` runs that have it.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Stat {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

/// The runs of one kernel at one vCPU count.
#[derive(Serialize, Debug, Clone)]
pub struct Group {
    pub kernel: String,
    pub kernel_release: Option<String>,
    pub cpus: u32,
    pub planned: u32,
    /// Runs that finished (status ok).
    pub finished: usize,
    /// By metric name (see [`METRICS`]); null where no run measured it.
    pub metrics: BTreeMap<&'static str, Option<Stat>>,
}

/// A ratio of two groups' medians of one metric.
#[derive(Serialize, Debug, Clone)]
pub struct Ratio {
    /// `kernel B / kernel A at 64 vCPUs`, `64 / 16 vCPUs on kernel A`.
    pub what: String,
    pub metric: &'static str,
    pub a: f64,
    pub b: f64,
    pub ratio: f64,
}

type Get = fn(&RunRecord) -> Option<f64>;

/// The metrics summarized, of the workload's process (docs/metrics.md), in table order.
pub const METRICS: &[(&str, Get)] = &[
    ("span_excess_mean", |r| r.workload()?.span_excess_mean),
    ("span_excess_max", |r| {
        Some(r.workload()?.span_excess_max? as f64)
    }),
    ("max_cid", |r| Some(r.workload()?.max_cid? as f64)),
    ("compaction_latency_p50_ms", |r| {
        r.workload()?.compaction_latency_ms.as_ref()?.p50
    }),
    ("compaction_latency_max_ms", |r| {
        r.workload()?.compaction_latency_ms.as_ref()?.max
    }),
    ("falls_resolved", |r| {
        Some(r.workload()?.compaction_latency_ms.as_ref()?.count as f64)
    }),
    ("falls_unresolved", |r| {
        Some(r.workload()?.compaction_latency_ms.as_ref()?.unresolved as f64)
    }),
    ("falls_interrupted", |r| {
        Some(r.workload()?.compaction_latency_ms.as_ref()?.interrupted as f64)
    }),
    ("cid_changes_per_thread_s", |r| {
        r.workload()?.cid_changes_per_thread_s
    }),
    ("compactions_tick", |r| {
        Some(r.workload()?.compactions.as_ref()?.tick as f64)
    }),
    ("compactions_resume", |r| {
        Some(r.workload()?.compactions.as_ref()?.resume as f64)
    }),
    ("compactions_unknown", |r| {
        Some(r.workload()?.compactions.as_ref()?.unknown as f64)
    }),
    ("scan_call_p50_us", |r| {
        Some(r.workload()?.scan_cost_us.as_ref()?.scanning.as_ref()?.p50)
    }),
    ("scan_call_p99_us", |r| {
        Some(r.workload()?.scan_cost_us.as_ref()?.scanning.as_ref()?.p99)
    }),
    ("scan_call_max_us", |r| {
        Some(r.workload()?.scan_cost_us.as_ref()?.scanning.as_ref()?.max)
    }),
    ("early_exit_p50_us", |r| {
        Some(
            r.workload()?
                .scan_cost_us
                .as_ref()?
                .early_exit
                .as_ref()?
                .p50,
        )
    }),
    ("batch_gap_p50_us", |r| {
        Some(
            r.workload()?
                .scan_cost_us
                .as_ref()?
                .batch_gap_us
                .as_ref()?
                .p50,
        )
    }),
    ("complete_scan_p50_ms", |r| {
        Some(
            r.workload()?
                .scan_cost_us
                .as_ref()?
                .complete_scan_ms
                .as_ref()?
                .p50,
        )
    }),
    ("model_agreed_pct", |r| agreement_pct(r, "agreed")),
    ("model_predicted_pct", |r| agreement_pct(r, "predicted")),
];

/// `model_agreement.KEY / checked` in percent (`predicted` where the replay reports it).
fn agreement_pct(r: &RunRecord, key: &str) -> Option<f64> {
    let a = r.model_agreement.as_ref()?;
    let checked = a.get("checked")?.as_f64()?;
    let v = a.get(key)?;
    // a number, or an object with its own count (`predicted: {agreed, ...}`)
    let v = v.as_f64().or_else(|| v.get("agreed")?.as_f64())?;
    (checked > 0.0).then(|| (v / checked * 1000.0).round() / 10.0)
}

/// The metrics whose ratios between kernels are reported.
const KERNEL_RATIOS: &[&str] = &[
    "span_excess_mean",
    "max_cid",
    "compaction_latency_p50_ms",
    "cid_changes_per_thread_s",
    "scan_call_p50_us",
    "scan_call_max_us",
];
/// The metrics whose ratios between CPU counts are reported.
const CPU_RATIOS: &[&str] = &[
    "span_excess_mean",
    "max_cid",
    "scan_call_p50_us",
    "scan_call_max_us",
    "complete_scan_p50_ms",
];

fn stat(mut v: Vec<f64>) -> Option<Stat> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some(Stat {
        median: (median * 1000.0).round() / 1000.0,
        min: v[0],
        max: v[n - 1],
        n,
    })
}

/// The groups, in the plan's order (kernels as given, CPU counts ascending).
pub fn groups(plan: &Plan, runs: &[RunRecord]) -> Vec<Group> {
    let mut out = Vec::new();
    for k in &plan.kernels {
        let name = k.display().to_string();
        for &cpus in &plan.cpus {
            let mine: Vec<&RunRecord> = runs
                .iter()
                .filter(|r| r.kernel == name && r.cpus == cpus)
                .collect();
            let ok: Vec<&RunRecord> = mine.iter().copied().filter(|r| r.status == "ok").collect();
            out.push(Group {
                kernel: name.clone(),
                kernel_release: mine.iter().find_map(|r| r.kernel_release.clone()),
                cpus,
                planned: plan.repeat,
                finished: ok.len(),
                metrics: METRICS
                    .iter()
                    .map(|(m, get)| (*m, stat(ok.iter().filter_map(|r| get(r)).collect())))
                    .collect(),
            });
        }
    }
    out
}

fn median(g: &Group, m: &str) -> Option<f64> {
    g.metrics.get(m)?.as_ref().map(|s| s.median)
}

/// A group's short name: its release (else the image's file name) and vCPUs.
pub fn label(g: &Group) -> String {
    let k = g.kernel_release.clone().unwrap_or_else(|| {
        std::path::Path::new(&g.kernel)
            .file_name()
            .map_or(g.kernel.clone(), |f| f.to_string_lossy().into_owned())
    });
    format!("{k} @{}", g.cpus)
}

fn ratio(what: String, metric: &'static str, a: Option<f64>, b: Option<f64>) -> Option<Ratio> {
    let (a, b) = (a?, b?);
    (a != 0.0).then(|| Ratio {
        what,
        metric,
        a,
        b,
        ratio: (b / a * 1000.0).round() / 1000.0,
    })
}

/// Kernel B (and every later one) against the first at each CPU count; for each kernel, the
/// most vCPUs against the fewest.
pub fn ratios(plan: &Plan, groups: &[Group]) -> Vec<Ratio> {
    let mut out = Vec::new();
    let at = |k: usize, c: u32| {
        let name = plan.kernels[k].display().to_string();
        groups.iter().find(|g| g.kernel == name && g.cpus == c)
    };
    for &c in &plan.cpus {
        let Some(a) = at(0, c) else { continue };
        for k in 1..plan.kernels.len() {
            let Some(b) = at(k, c) else { continue };
            for &m in KERNEL_RATIOS {
                let what = format!("{} / {} at {c} vCPUs", short(b), short(a));
                out.extend(ratio(what, m, median(a, m), median(b, m)));
            }
        }
    }
    if let (Some(&lo), Some(&hi)) = (plan.cpus.iter().min(), plan.cpus.iter().max())
        && lo != hi
    {
        for k in 0..plan.kernels.len() {
            let (Some(a), Some(b)) = (at(k, lo), at(k, hi)) else {
                continue;
            };
            for &m in CPU_RATIOS {
                let what = format!("{hi} / {lo} vCPUs on {}", short(a));
                out.extend(ratio(what, m, median(a, m), median(b, m)));
            }
        }
    }
    out
}

fn short(g: &Group) -> String {
    label(g)
        .rsplit_once(" @")
        .map_or(label(g), |(k, _)| k.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_median_is_the_middle_and_says_over_how_many() {
        let s = stat(vec![3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (2.0, 1.0, 3.0, 3));
        assert_eq!(stat(vec![1.0, 4.0]).unwrap().median, 2.5);
        assert_eq!(stat(vec![]), None);
    }
}
