//! Command-line interface. Flags and JSON keys are contracts: add freely, never rename or remove.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const ABOUT: &str = "See which rseq concurrency ID (mm_cid) each thread got, when, and why.";

const LONG_ABOUT: &str = "\
cidscope shows the Linux kernel's rseq concurrency IDs (mm_cid): per-CPU CID slots of each
process (mm), the weight of its cidmask, and every change over time, as a scrubbable timeline.

It reads captures you already have, detecting the format from the content:
  * ftrace text: /sys/kernel/tracing/trace (with or without header, irq flags, TGID column),
    trace_pipe output, and `trace-cmd report` text
  * `perf script` text
  * perf.data (`perf record`, file or pipe mode) and trace-cmd trace.dat (versions 6 and 7,
    compressed or not), read natively: no perf or trace-cmd needed

A capture needs the rseq:rseq_update event (Linux >= 6.3 prints mm_cid) and sched:sched_switch.
To know which process (mm) each thread belongs to, also record the TGID column
(echo 1 > options/record-tgid) or task:task_newtask and sched:sched_process_exec.";

const EXAMPLES: &str = "\
Examples:
  cidscope                          open the bundled demo capture
  cidscope trace.txt                scrub through a capture (press ? for keys)
  cidscope stats trace.txt          summary: events, CPUs, tasks and their CIDs
  cidscope stats --json trace.txt   the same as JSON, for scripts

Capture on a test box (as root):
  cd /sys/kernel/tracing && echo 1 > options/record-tgid
  echo rseq:rseq_update sched:sched_switch sched:sched_migrate_task sched:sched_process_fork \\
       sched:sched_process_exec sched:sched_process_exit task:task_newtask \\
       timer:hrtimer_expire_entry > set_event
  echo 1 > tracing_on; sleep 2; echo 0 > tracing_on; cat trace > /tmp/cid.txt

Exit status: 0 ok, 2 bad input or usage (the message names the file, line or byte offset).";

#[derive(Parser, Debug)]
#[command(
    name = "cidscope",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = EXAMPLES,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// Capture to open. Without it, cidscope opens its bundled demo capture.
    pub file: Option<PathBuf>,

    #[command(flatten)]
    pub load: LoadArgs,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Args, Debug, Clone, Default)]
pub struct LoadArgs {
    /// Read the input as this format instead of detecting it from the content.
    #[arg(long, value_enum, global = true)]
    pub format: Option<FormatArg>,

    /// Skip lines that do not parse (counted in a warning) instead of stopping at the first.
    #[arg(long, global = true)]
    pub skip_bad_lines: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatArg {
    /// tracefs `trace` text
    Ftrace,
    /// tracefs `trace_pipe` text (ftrace text without header)
    TracePipe,
    /// `trace-cmd report` text
    TraceCmdReport,
    /// `perf script` text
    PerfScript,
    /// perf.data
    PerfData,
    /// trace-cmd trace.dat
    TraceDat,
}

impl FormatArg {
    pub fn format(self) -> crate::events::Format {
        use crate::events::Format;
        match self {
            FormatArg::Ftrace => Format::Ftrace,
            FormatArg::TracePipe => Format::TracePipe,
            FormatArg::TraceCmdReport => Format::TraceCmdReport,
            FormatArg::PerfScript => Format::PerfScript,
            FormatArg::PerfData => Format::PerfData,
            FormatArg::TraceDat => Format::TraceDat,
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Summarize a capture without the TUI: events, CPUs, tasks and their CIDs.
    Stats(StatsArgs),
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Capture to summarize.
    pub file: PathBuf,
    /// Print JSON (keys: format, events, event_counts, cpus, first_ts_ns, last_ts_ns,
    /// lost_events, tasks, warnings, ...).
    #[arg(long)]
    pub json: bool,
}
