//! What a model adds to the stats (`--policy`, `--compare`): per-process model facts,
//! `model_agreement` and each model's totals. JSON keys are contracts: add freely, never rename.

use crate::model::policies::{
    Disagreement, InferredStep, ProbeChecks, ProbeTally, Tally, TraceGap,
};
use serde::Serialize;

/// Compaction attempts by trigger.
#[derive(Serialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactionCounts {
    pub tick: u64,
    pub resume: u64,
}

/// Per-process model facts (under `processes[i].compactions` and `processes[i].model`).
#[derive(Serialize, Debug, Clone, Default)]
pub struct ProcessModel {
    /// Attempts that did not scan (period not due) are in `attempts` only.
    pub attempts: CompactionCounts,
    pub complete_scans: u64,
    pub checked: u64,
    pub agreed: u64,
    pub seeds: u64,
    pub predicted_cids: Vec<i32>,
}

/// Agreement without seeding (every update of a pre-existing process checked from an empty
/// state).
#[derive(Serialize, Debug, Clone)]
pub struct Unseeded {
    pub checked: u64,
    pub agreed: u64,
    pub fresh: Tally,
    pub preexisting: Tally,
}

/// `model_agreement`: contract keys `policy`, `checked`, `agreed`, `first_disagreement`,
/// `predicted`, `inferred_steps`, `infer_steps`, `hz_source`.
#[derive(Serialize, Debug, Clone)]
pub struct ModelAgreement {
    pub policy: &'static str,
    pub checked: u64,
    /// Observed CIDs the model agrees with, the inferred steps included.
    pub agreed: u64,
    /// Observed CIDs the plain replay predicts (no inferred step, docs/models.md §5.3): the
    /// model's own figure. `agreed - predicted` is what the inferred steps added.
    pub predicted: u64,
    /// `predicted` for the processes begun in the capture (beside `fresh`).
    pub predicted_fresh: Tally,
    /// `--infer-steps`: `auto` (steps inferred where the plain replay misses) or `off`.
    pub infer_steps: &'static str,
    /// What the inference did, in words: the steps it placed, or why it did not run (off,
    /// nothing to explain, a capture of another family than the policy's).
    pub inference: String,
    /// The untraced kernel steps the inference placed: kind, task, record and placement
    /// (`displacement_ns`), the window of traced events the kernel could have run it in, and
    /// the updates it changed against the plain replay (`fixed`, `broken`).
    pub inferred_steps: Vec<InferredStep>,
    pub first_disagreement: Option<Disagreement>,
    pub seeded: bool,
    pub seeds: u64,
    /// Processes whose mm began inside the capture.
    pub fresh: Tally,
    /// Processes already running when the capture began (after seeding).
    pub preexisting: Tally,
    /// Updates of tasks whose process is unknown (not modelled).
    pub unmodelled: u64,
    pub without_seeding: Option<Unseeded>,
    pub hz: u32,
    /// Where `hz` came from: `given`, `kernel config (CONFIG_HZ)`, `tick expiries (...)`,
    /// `default (...)`.
    pub hz_source: String,
    /// How the replay counted jiffies (`--jiffies`): `timekeeper` (the do_timer CPU's ticks,
    /// boundaries from the ticks' CLOCK_MONOTONIC) or `boundaries` (a capture without the
    /// ticks' `now=` falls back to it; docs/models.md §5.4).
    pub jiffies: &'static str,
    pub cpus: u32,
    /// Kernel steps the trace does not mark that the replay placed from the observed CIDs
    /// (tid, record_ts, placed_ts, reason; docs/models.md §5.3); the agreement above is with
    /// them.
    pub trace_gaps: Vec<TraceGap>,
    /// The model's state held against what the capture's CID probes read from the kernel
    /// (`mm_users`, `nr_cpus_allowed`, `migrate_from_cpu`, `last_mm_cid`; docs/models.md
    /// §5.6): values compared, matched, the first mismatches.
    pub probe_checks: ProbeChecks,
    /// The plain replay's `probe_checks` (no inferred step), checked and matched: beside
    /// `predicted`, what the model reads by itself.
    pub predicted_probe_checks: ProbeTally,
    /// The release of the capture's kernel, when known (`--kernel-version`, or the capture's
    /// own header).
    pub kernel_version: Option<String>,
    /// The lazy-compact variant the model ran (`6.4`, `6.13`, `6.14`); null for owner-mode.
    pub variant: Option<&'static str>,
    /// resume-batch: B, the CPUs per batch (the kernel's CONFIG_RSEQ_CID_SCAN_BATCH or
    /// `--batch`); null for the other policies.
    pub scan_batch: Option<u32>,
    /// Why this policy and variant: the flag, or the kernel release and the commits that
    /// draw its line (docs/models.md §10).
    pub chosen_because: String,
}

/// A model's totals (`model`, and each entry of `compare`).
#[derive(Serialize, Debug, Clone)]
pub struct ModelSummary {
    pub policy: &'static str,
    pub hz: u32,
    pub cpus: u32,
    pub model_events: u64,
    pub rseq_updates_predicted: u64,
    pub compactions: CompactionCounts,
    pub compaction_attempts: CompactionCounts,
    pub complete_scans: u64,
    pub mode_changes: u64,
    pub alarms: u64,
    pub violations: u64,
    pub checked: u64,
    pub agreed: u64,
    /// The plain replay's figure (no inferred step).
    pub predicted: u64,
    pub inferred_steps: u64,
}
