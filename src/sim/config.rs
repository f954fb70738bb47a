//! Everything that determines a simulated run: the policy and its parameters, the workload and
//! its size, the time simulated, nohz_full CPUs, the seed and the cost model.

use super::cost::CostModel;
use crate::model::policies::{CpuSet, Params, PolicyKind};

/// Workloads of the simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    Cyclictest,
    Hackbench,
    Hogs,
    Churn,
    Spinner,
}

impl Workload {
    /// Every workload, in the order `--workload` lists them.
    pub const ALL: [Workload; 5] = [
        Workload::Cyclictest,
        Workload::Hackbench,
        Workload::Hogs,
        Workload::Churn,
        Workload::Spinner,
    ];

    /// One line on what the workload runs (`--workload`'s help).
    pub fn describe(self) -> &'static str {
        match self {
            Workload::Cyclictest => {
                "cyclictest: T timer threads (thread i: 100 us + 500 us * i period), each on its own CPU"
            }
            Workload::Hackbench => {
                "hackbench -p: groups of single-threaded processes waking each other"
            }
            Workload::Hogs => "T busy threads of one process",
            Workload::Churn => "batches of T short-lived threads created and joined",
            Workload::Spinner => "one thread spinning on the last CPU (+ T-1 sleepers)",
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            Workload::Cyclictest => "cyclictest",
            Workload::Hackbench => "hackbench",
            Workload::Hogs => "hogs",
            Workload::Churn => "churn",
            Workload::Spinner => "spinner",
        }
    }
}

/// Everything that determines a simulated run.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub policy: PolicyKind,
    /// Model parameters; `cpus` and `hz` are set.
    pub params: Params,
    pub workload: Workload,
    pub threads: Option<u32>,
    pub duration_ns: u64,
    pub nohz_full: CpuSet,
    pub seed: u64,
    pub cost: CostModel,
    /// cyclictest: µs of work per wakeup.
    pub cyclic_run_us: u64,
}

impl SimConfig {
    pub fn new(policy: PolicyKind, cpus: u32, workload: Workload) -> SimConfig {
        let cpus = cpus.max(1);
        SimConfig {
            policy,
            params: Params::with_cpus(cpus),
            workload,
            threads: None,
            duration_ns: 1_000_000_000,
            nohz_full: CpuSet::new(cpus),
            seed: 1,
            cost: CostModel::default(),
            cyclic_run_us: 5,
        }
    }

    /// The thread (or process) count of the workload.
    pub fn threads(&self) -> u32 {
        let p = self.params.cpus;
        self.threads
            .unwrap_or(match self.workload {
                Workload::Cyclictest => 1,
                Workload::Hackbench => 40,
                Workload::Hogs => (p + p / 2).max(2),
                Workload::Churn => 6,
                Workload::Spinner => 1,
            })
            .max(1)
    }
}
