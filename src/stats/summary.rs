//! What `cidscope stats` says of a capture: the summary's types. Their JSON keys are a
//! contract that tests and scripts rely on: add keys freely, never rename or remove one.

use super::{accounting, cid_metrics, model_summary};
use crate::events::Tid;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize, Debug)]
pub struct TaskSummary {
    pub tgid: Option<Tid>,
    pub comm: String,
    pub rseq_updates: u64,
    pub cids: Vec<i32>,
    /// Index into `processes`, or null when the task's mm is unknown.
    pub mm: Option<u32>,
}

/// A later task under a tid already used in the capture.
#[derive(Serialize, Debug)]
pub struct ReusedTask {
    pub tid: Tid,
    /// 1 for the second task of the tid, 2 for the third, ...
    pub incarnation: u32,
    #[serde(flatten)]
    pub task: TaskSummary,
}

#[derive(Serialize, Debug)]
pub struct ProcessSummary {
    pub mm: u32,
    pub label: String,
    pub tgid: Option<Tid>,
    /// `tgid` (named by the capture), `fork`/`exec` (began inside the capture), `anonymous`.
    pub origin: &'static str,
    pub first_ts_ns: u64,
    pub tasks: Vec<Tid>,
    pub rseq_updates: u64,
    pub cids: Vec<i32>,
    /// With --policy: compaction attempts that scanned, by trigger.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compactions: Option<Box<model_summary::CompactionCounts>>,
    /// With --policy: the model's view of this process (boxed: a million processes without
    /// a model hold 8 bytes each for it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<Box<model_summary::ProcessModel>>,
    /// How many tasks it had: the length of `tasks` when they are listed (the text summary
    /// counts them instead).
    #[serde(skip)]
    pub task_count: u32,
}

#[derive(Serialize, Debug)]
pub struct Stats {
    pub file: String,
    pub format: &'static str,
    pub events: u64,
    pub event_counts: BTreeMap<String, u64>,
    pub cpus: Vec<u32>,
    /// Events whose capture names no CPU (perf samples without PERF_SAMPLE_CPU, perf script
    /// without the cpu column): counted in `events`, on no CPU of `cpus`.
    pub events_cpu_unknown: u64,
    /// Possible CPUs: the bound of every CID (header count or highest CPU seen + 1).
    pub ncpus: u32,
    pub first_ts_ns: Option<u64>,
    pub last_ts_ns: Option<u64>,
    pub duration_ns: u64,
    /// Sum of the counts of lost-event markers.
    pub lost_events: u64,
    /// Lost-event markers, including those without a count.
    pub lost_markers: u64,
    /// Records that share their time with the three records before them on their CPU (a trace
    /// clock that stalls: `missing` has `coarse-clock` from 1 %, `model::coverage::StampRuns`).
    pub coarse_stamp_records: u64,
    /// `rseq_update` records traced with interrupts disabled (0 where the capture has no irq
    /// flags): only a 6.19+ kernel's exit-to-user fast path makes them.
    pub rseq_irqs_off: u64,
    /// The kernel family the capture's records show without naming its release
    /// (`model::kernel::family_shown`): "6.19+: why", or none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_family_shown: Option<String>,
    /// By tid (JSON object keys are the tids as strings, in numeric order).
    pub tasks: BTreeMap<Tid, TaskSummary>,
    /// Later tasks of reused tids (a fork after the tid's exit, or a TGID column that changed):
    /// `tasks` holds each tid's first task, these the ones after it.
    pub reused_tasks: Vec<ReusedTask>,
    pub processes: Vec<ProcessSummary>,
    /// Tasks with rseq_update events whose mm is unknown (no TGID, clone flags or exec seen).
    pub tasks_mm_unknown: u64,
    pub alarms: u64,
    pub alarm_samples: Vec<String>,
    /// Per task and overall: rseq_update count and rate, rseq_ip_fixup count, updates per
    /// switch-in and (where the capture has sys_exit / irq exits) per exit to user.
    pub rseq_accounting: accounting::Accounting,
    pub warnings: Vec<String>,
    /// What the capture lacks for CIDs and their checks, by code (`no-events`,
    /// `no-rseq-update`, `no-sched-switch`, `no-tgid`, `cpu-unknown`); each is explained, with
    /// how to record it, in `warnings`.
    pub missing: Vec<&'static str>,
    /// With --policy: how well the model predicts the observed CIDs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_agreement: Option<model_summary::ModelAgreement>,
    /// With --policy: the model's totals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<model_summary::ModelSummary>,
    /// With --compare: one summary per model.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compare: Vec<model_summary::ModelSummary>,
    /// Per process with rseq_update events: span excess, compaction latency, CID changes,
    /// compactions and scan cost, from what the capture shows (docs/metrics.md).
    pub cid_metrics: Vec<cid_metrics::ProcessMetrics>,
    /// What the capture as a whole cannot measure of `cid_metrics`, and why.
    pub cid_metrics_notes: Vec<String>,
    /// Processes with rseq_update events whose `cid_metrics` were not made: the text summary
    /// makes those it shows only (a million processes cost ~500 bytes each there).
    #[serde(skip)]
    pub cid_metrics_omitted: u64,
}
