//! `cidscope sim`: its flags, and the simulator configuration they make.

use super::values::parse_duration_ns;
use super::{CliError, ModelArgs, UiArgs};
use crate::model::policies::{CpuSet, Params, PolicyKind};
use crate::sim::{SimConfig, Workload};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct SimArgs {
    /// Possible CPUs (P).
    #[arg(long)]
    pub cpus: u32,
    /// Workload to schedule.
    #[arg(long, value_enum)]
    pub workload: Workload,
    /// Threads (or tasks per group for hackbench); default depends on the workload.
    #[arg(long)]
    pub threads: Option<u32>,
    /// Simulated time: 1s, 500ms, 2.5s, 100us, 10m, 1h (at most 1h).
    #[arg(long, default_value = "1s", value_parser = parse_duration_ns)]
    pub duration: u64,
    /// CPUs whose tick stops while a single task runs there (nohz_full), e.g. 3 or 2-5.
    #[arg(long)]
    pub nohz_full: Option<String>,
    /// Seed of the schedule's random choices: the same seed gives the same run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print the run's summary as JSON instead of opening the TUI.
    #[arg(long)]
    pub json: bool,
    /// Write the schedule as ftrace text (tracefs `trace` format) to this file.
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Run even when the simulation looks too large for the available memory (without it, a
    /// run whose ticks alone would not fit is refused, and one that stops fitting stops).
    #[arg(long)]
    pub no_memory_check: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub ui: UiArgs,
}

impl SimArgs {
    /// The simulated run the flags describe.
    pub fn config(&self) -> Result<SimConfig, CliError> {
        let m = &self.model;
        // the simulated policy: --policy, else the first model --compare names
        let policy = m
            .policy
            .and_then(|p| p.kind())
            .or_else(|| m.compare.iter().find_map(|p| p.kind()))
            .ok_or_else(|| {
                CliError::Usage(format!(
                    "sim needs a model: --policy {} (or --compare A,B: A is simulated, B replays its schedule)",
                    policy_list()
                ))
            })?;
        if self.cpus == 0 || self.cpus > 8192 {
            return Err(CliError::Usage(format!(
                "--cpus {}: expected a CPU count between 1 and 8192",
                self.cpus
            )));
        }
        let mut cfg = SimConfig::new(policy, self.cpus, self.workload);
        let mut params = m.params();
        params.cpus = self.cpus;
        params.hz = m.hz.unwrap_or(Params::DEFAULT_HZ);
        if !(1..=10_000).contains(&params.hz) {
            return Err(CliError::Usage(format!(
                "--hz {}: expected 1..10000",
                params.hz
            )));
        }
        if params.batch == 0 {
            return Err(CliError::Usage(
                "--batch 0: expected at least 1 CPU per batch".into(),
            ));
        }
        cfg.params = params;
        cfg.threads = self.threads;
        if self.threads == Some(0) {
            return Err(CliError::Usage("--threads 0: expected at least 1".into()));
        }
        if self.threads.is_some_and(|t| t > 100_000) {
            return Err(CliError::Usage("--threads: expected at most 100000".into()));
        }
        cfg.duration_ns = self.duration;
        cfg.seed = self.seed;
        if let Some(list) = &self.nohz_full {
            cfg.nohz_full = CpuSet::parse_list(list, self.cpus)
                .map_err(|e| CliError::Usage(format!("--nohz-full: {e}")))?;
        }
        Ok(cfg)
    }
}

/// `lazy-compact, resume-batch or owner-mode`: the registered policies, for messages.
fn policy_list() -> String {
    let ids: Vec<&str> = PolicyKind::ALL.iter().map(|k| k.id()).collect();
    match ids.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}
