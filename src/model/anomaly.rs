//! Impossible states the observed walk runs into: what no kernel records, so the capture is
//! damaged (or its records were edited). They are counted with their first place, never fixed.

use crate::events::{Tid, Warning, fmt_ts};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnomalyKind {
    /// A task's records keep coming from two CPUs without a switch away from either: it ran
    /// on both at once.
    TaskOnTwoCpus { tid: Tid, other_cpu: u16 },
    /// An `rseq_update` whose `cpu_id` is not the CPU that recorded it.
    CpuIdMismatch { tid: Tid, cpu_id: i32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Anomaly {
    pub ts: u64,
    pub cpu: u16,
    pub kind: AnomalyKind,
}

impl AnomalyKind {
    fn index(&self) -> usize {
        match self {
            AnomalyKind::TaskOnTwoCpus { .. } => 0,
            AnomalyKind::CpuIdMismatch { .. } => 1,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            AnomalyKind::TaskOnTwoCpus { .. } => "task-on-two-cpus",
            AnomalyKind::CpuIdMismatch { .. } => "cpu-id-mismatch",
        }
    }
}

impl Anomaly {
    pub fn describe(&self) -> String {
        match self.kind {
            AnomalyKind::TaskOnTwoCpus { tid, other_cpu } => format!(
                "task {tid} runs on CPU {} and CPU {other_cpu} at once (no switch away from either)",
                self.cpu
            ),
            AnomalyKind::CpuIdMismatch { tid, cpu_id } => format!(
                "rseq_update of task {tid} says cpu_id={cpu_id}, but CPU {} recorded it",
                self.cpu
            ),
        }
    }
}

/// Counts per kind, with the first of each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Anomalies {
    counts: [u64; 2],
    first: [Option<Anomaly>; 2],
}

impl Anomalies {
    pub fn add(&mut self, a: Anomaly) {
        let i = a.kind.index();
        self.counts[i] += 1;
        self.first[i].get_or_insert(a);
    }

    /// How often a task ran on two CPUs at once, and the first time.
    pub fn two_cpus(&self) -> Option<(u64, Anomaly)> {
        let i = 0;
        self.first[i].map(|a| (self.counts[i], a))
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Keeps only the kinds `keep` accepts (a capture without CPUs has no cpu_id to compare).
    pub fn retain(&mut self, keep: impl Fn(&AnomalyKind) -> bool) {
        for i in 0..2 {
            if let Some(a) = self.first[i]
                && !keep(&a.kind)
            {
                self.first[i] = None;
                self.counts[i] = 0;
            }
        }
    }

    /// One warning per kind seen: its count and first place.
    pub fn warnings(&self, path: &str) -> Vec<Warning> {
        (0..2)
            .filter_map(|i| {
                let a = self.first[i]?;
                Some(Warning {
                    code: a.kind.code(),
                    message: format!(
                        "{path}: {} times, first at {} on CPU {}: {}; the capture is damaged there (checks near it may be wrong)",
                        self.counts[i],
                        fmt_ts(a.ts),
                        a.cpu,
                        a.describe()
                    ),
                })
            })
            .collect()
    }
}
