//! `cidscope stats`: the capture summarized without the TUI.

use super::{LoadArgs, ModelArgs};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Capture to summarize.
    pub file: PathBuf,
    /// Print JSON (keys: format, events, event_counts, cpus, first_ts_ns, last_ts_ns,
    /// lost_events, tasks, warnings, ...).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub load: LoadArgs,
    #[command(flatten)]
    pub model: ModelArgs,
}
