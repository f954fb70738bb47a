//! What an experiment is asked to do: the kernels, vCPU counts and repeats, and the order the
//! runs go in.

use crate::vm::config::VmConfig;
use crate::vm::report::ModelOverride;
use serde::Serialize;
use std::path::PathBuf;

/// What an experiment is asked to do.
pub struct Plan {
    pub kernels: Vec<PathBuf>,
    /// Ascending, no duplicates.
    pub cpus: Vec<u32>,
    pub repeat: u32,
    pub out: PathBuf,
    /// Workload, duration, threads, seed, graph function, probes...: the same for every run
    /// (its kernel, cpus and record are set per run).
    pub base: VmConfig,
    pub model: ModelOverride,
}

/// The plan as `experiment.json` states it.
#[derive(Serialize, Debug)]
pub struct PlanRecord {
    pub kernels: Vec<String>,
    pub cpus: Vec<u32>,
    pub repeat: u32,
    pub workload: String,
    pub threads: Option<u32>,
    pub duration_s: f64,
    pub seed: u64,
    pub graph_function: Option<String>,
    pub probes: bool,
    pub accel: String,
    /// Seconds since the Unix epoch when the experiment began.
    pub started_unix_s: u64,
    pub wall_s: f64,
}

/// One run of the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunKey {
    pub kernel: usize,
    pub cpus: u32,
    pub repeat: u32,
}

impl Plan {
    /// The runs in the order they go.
    pub fn runs(&self) -> Vec<RunKey> {
        let mut v = Vec::new();
        for &cpus in &self.cpus {
            for repeat in 1..=self.repeat {
                for kernel in 0..self.kernels.len() {
                    v.push(RunKey {
                        kernel,
                        cpus,
                        repeat,
                    });
                }
            }
        }
        v
    }

    pub fn record(&self, started: u64, wall: f64) -> PlanRecord {
        PlanRecord {
            kernels: self
                .kernels
                .iter()
                .map(|k| k.display().to_string())
                .collect(),
            cpus: self.cpus.clone(),
            repeat: self.repeat,
            workload: self.base.workload.clone(),
            threads: self.base.threads,
            duration_s: self.base.duration_ns as f64 / 1e9,
            seed: self.base.seed,
            graph_function: self.base.graph_function.clone(),
            probes: self.base.probes,
            accel: format!("{:?}", self.base.accel).to_lowercase(),
            started_unix_s: started,
            wall_s: (wall * 10.0).round() / 10.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_of_a_comparison_run_next_to_each_other() {
        let plan = Plan {
            kernels: vec!["a".into(), "b".into()],
            cpus: vec![16, 64],
            repeat: 2,
            out: "d".into(),
            base: VmConfig::new("a".into(), 16, "shrink"),
            model: Default::default(),
        };
        let k: Vec<(usize, u32, u32)> = plan
            .runs()
            .iter()
            .map(|r| (r.kernel, r.cpus, r.repeat))
            .collect();
        assert_eq!(
            k,
            vec![
                (0, 16, 1),
                (1, 16, 1),
                (0, 16, 2),
                (1, 16, 2),
                (0, 64, 1),
                (1, 64, 1),
                (0, 64, 2),
                (1, 64, 2)
            ]
        );
    }
}
