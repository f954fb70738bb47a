//! What a model adds to the stats (`--policy`, `--compare`): per-process model facts,
//! `model_agreement` and each model's totals. JSON keys are contracts: add freely, never rename.

use crate::model::policies::{Disagreement, Tally};
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

/// `model_agreement`: contract keys `policy`, `checked`, `agreed`, `first_disagreement`.
#[derive(Serialize, Debug, Clone)]
pub struct ModelAgreement {
    pub policy: &'static str,
    pub checked: u64,
    pub agreed: u64,
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
    pub cpus: u32,
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
}
