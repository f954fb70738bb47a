//! `cidscope live` and `cidscope attach`: a live session (a synthetic workload, perf_event_open
//! on the tracepoints), into the TUI, a summary or a recording.

use super::UiArgs;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(after_help = crate::sources::live::spec::SYNTAX_HELP)]
pub struct LiveArgs {
    /// Workload to run (SPEC below). Default: periodic:4:1ms:200us,hog:CPUs+1.
    #[arg(long, value_name = "SPEC")]
    pub workload: Option<String>,
    /// Also attach to this process's tracepoints (needs root, or CAP_PERFMON and tracefs
    /// access): trace events and rseq-area samples side by side.
    #[arg(long)]
    pub attach: bool,
    /// Stop after this long: seconds (`1`, `0.5`) or with a unit (`500ms`, `10m`, `1h`), at most 24h. Default: until Ctrl-C.
    #[arg(long, value_name = "D")]
    pub duration: Option<String>,
    /// Print the summary as JSON (keys: rseq_samples, matched, max_cid, cpus, duplicates,
    /// lost_events, ...).
    #[arg(long)]
    pub json: bool,
    /// Save the session as ftrace text that `cidscope FILE` and `cidscope stats FILE` replay
    /// (needs --attach), written as it arrives and flushed about every second: a kill leaves
    /// what came until the last flush (its replay warns recording-cut).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Ring buffer per CPU, in 4 KiB pages (a power of two).
    #[arg(long, default_value_t = 1024, value_name = "PAGES")]
    pub buffer_pages: usize,
    #[command(flatten)]
    pub ui: UiArgs,
}

#[derive(Args, Debug)]
#[command(after_help = "\
Events: rseq:rseq_update sched:sched_switch sched:sched_migrate_task sched:sched_process_fork
sched:sched_process_exec sched:sched_process_exit task:task_newtask timer:hrtimer_expire_entry
(timer:tick_stop when present), one perf ring buffer per CPU, CLOCK_MONOTONIC timestamps.
--pid keeps all threads of the process (present and future) plus the switches into them;
events are still opened per CPU, since a per-task tracepoint misses those switches.
Needs root, or CAP_PERFMON (or kernel.perf_event_paranoid=-1) and read access to tracefs;
exits 2 with the fix otherwise. Ctrl-C stops early.")]
#[command(group(clap::ArgGroup::new("target").required(true).multiple(false)))]
pub struct AttachArgs {
    /// Keep the events of this process (all its threads).
    #[arg(long, value_name = "P", group = "target")]
    pub pid: Option<u32>,
    /// Keep every event on every CPU.
    #[arg(long, group = "target")]
    pub all: bool,
    /// Stop after this long: seconds (`1`, `0.5`) or with a unit (`500ms`, `10m`, `1h`), at most 24h. Default: until Ctrl-C.
    #[arg(long, value_name = "D")]
    pub duration: Option<String>,
    /// Print the summary as JSON (keys: events, event_rate, lost_events, event_counts,
    /// cpu_user_s, cpu_sys_s, ...).
    #[arg(long)]
    pub json: bool,
    /// Save the session as ftrace text that `cidscope FILE` and `cidscope stats FILE` replay,
    /// written as it arrives and flushed about every second: a kill leaves what came until the
    /// last flush (its replay warns recording-cut).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Ring buffer per CPU, in 4 KiB pages (a power of two).
    #[arg(long, default_value_t = 1024, value_name = "PAGES")]
    pub buffer_pages: usize,
    #[command(flatten)]
    pub ui: UiArgs,
}
