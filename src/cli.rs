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

    /// Colour theme: a built-in name (default, dark, light, high-contrast, colorblind) or the
    /// path of a JSON theme file (slots it leaves out come from default). NO_COLOR turns colour
    /// off unless a theme is named.
    #[arg(long, global = true, value_name = "NAME|PATH")]
    pub theme: Option<String>,

    /// Check the capture instead of opening the TUI: report every observed duplicate CID among
    /// concurrently running threads of one process and every CID at or above its bound.
    /// Exit status: 1 when there is a finding; 0 when there is none and both checks ran; 3 when
    /// nothing could be checked (no events, no rseq_update, or neither check possible); 4 when
    /// one check could not run (no sched_switch, no TGID or process events, no CPU column) and
    /// the other found nothing; 2 on an error. What could not be checked is said, and why.
    #[arg(long, requires = "file")]
    pub check: bool,

    /// Key bindings file: {"action-name": ["key", ...]} (see the README's key table).
    /// Default: ~/.config/cidscope/keys.json when it exists.
    #[arg(long, global = true, value_name = "PATH")]
    pub keys: Option<String>,
    #[command(flatten)]
    pub model: ModelArgs,

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

    /// Open a capture even when it looks too large for the available memory.
    #[arg(long, global = true)]
    pub no_memory_check: bool,
}

/// A `--format` value: the formats and their names come from `sources::formats::FORMATS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatArg(pub crate::events::Format);

impl ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: std::sync::LazyLock<Vec<FormatArg>> = std::sync::LazyLock::new(|| {
            crate::sources::formats::FORMATS
                .iter()
                .map(|f| FormatArg(f.format()))
                .collect()
        });
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let f = crate::sources::formats::of(self.0)?;
        Some(clap::builder::PossibleValue::new(f.cli_name()).help(f.cli_help()))
    }
}

impl FormatArg {
    pub fn format(self) -> crate::events::Format {
        self.0
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Summarize a capture without the TUI: events, CPUs, tasks and their CIDs.
    Stats(StatsArgs),
    /// Run a synthetic workload and show the CIDs its threads read from their rseq areas
    /// (no privileges needed); with --attach, also trace this process (root or CAP_PERFMON).
    Live(LiveArgs),
    /// Attach to the rseq/sched/task/timer tracepoints with perf_event_open and summarize (or
    /// record) what happens now (root, or CAP_PERFMON with tracefs access).
    Attach(AttachArgs),
    /// Export a capture's observed timeline: Chrome JSON trace events for ui.perfetto.dev
    /// (a track per CPU with CID slices, a weight counter per process, instants for lost
    /// events and alarms) and/or CSV with one row per event.
    Export(ExportArgs),
    /// Guided teaching scenarios on bundled captures and the simulator, with narration:
    /// space plays, ] and [ step through the key moments. `--list` names them.
    Demo(DemoArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to stdout: `cidscope man > cidscope.1`.
    Man,
    /// Simulate a workload under a CID policy (deterministic for a given --seed).
    Sim(SimArgs),
    /// Boot a kernel image in QEMU (KVM, else TCG; no root), run a workload in it and capture
    /// its CIDs: the live TUI, --record FILE or --json stats with the model agreement.
    Vm(VmArgs),
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

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Capture to export.
    pub file: PathBuf,
    /// Write Chrome JSON trace events (open with ui.perfetto.dev) to this file.
    #[arg(long, value_name = "OUT.json")]
    pub perfetto: Option<PathBuf>,
    /// Write one CSV row per event to this file.
    #[arg(long, value_name = "OUT.csv")]
    pub csv: Option<PathBuf>,
    /// Write an SVG picture (lanes of per-CPU CID slots, cidmask weight, time axis, legend;
    /// colours from --theme) to this file.
    #[arg(long, value_name = "OUT.svg")]
    pub svg: Option<PathBuf>,
    /// SVG: where the window starts, counted from the capture's first event (0, 1s, 2.5ms,
    /// 300us). Default: the first event.
    #[arg(long, value_name = "T", value_parser = parse_offset_ns)]
    pub from: Option<u64>,
    /// SVG: where the window ends, counted from the capture's first event. Default: the last.
    #[arg(long, value_name = "T", value_parser = parse_offset_ns)]
    pub to: Option<u64>,
    /// SVG: the process to draw, by TGID. Default: the one the TUI opens on (the busiest
    /// process born in the capture, else the busiest).
    #[arg(long, value_name = "N")]
    pub tgid: Option<u32>,
}

/// `0` or a duration as `parse_duration_ns` takes it: an offset into a capture.
pub fn parse_offset_ns(s: &str) -> Result<u64, String> {
    match s.trim() {
        "0" => Ok(0),
        t => parse_duration_ns(t),
    }
}

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
    /// Stop after this long: seconds (`1`, `0.5`) or with a unit (`500ms`). Default: until Ctrl-C.
    #[arg(long, value_name = "D")]
    pub duration: Option<String>,
    /// Print the summary as JSON (keys: rseq_samples, matched, max_cid, cpus, duplicates,
    /// lost_events, ...).
    #[arg(long)]
    pub json: bool,
    /// Save the session as ftrace text that `cidscope FILE` and `cidscope stats FILE` replay
    /// (needs --attach).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Ring buffer per CPU, in 4 KiB pages (a power of two).
    #[arg(long, default_value_t = 1024, value_name = "PAGES")]
    pub buffer_pages: usize,
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
    /// Stop after this long: seconds (`1`, `0.5`) or with a unit (`500ms`). Default: until Ctrl-C.
    #[arg(long, value_name = "D")]
    pub duration: Option<String>,
    /// Print the summary as JSON (keys: events, event_rate, lost_events, event_counts,
    /// cpu_user_s, cpu_sys_s, ...).
    #[arg(long)]
    pub json: bool,
    /// Save the session as ftrace text that `cidscope FILE` and `cidscope stats FILE` replay.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Ring buffer per CPU, in 4 KiB pages (a power of two).
    #[arg(long, default_value_t = 1024, value_name = "PAGES")]
    pub buffer_pages: usize,
}

/// Which model to show or replay (`observed` = only what the capture shows).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyArg {
    /// what the capture shows, no model
    Observed,
    /// Linux 6.4-6.18: per-CPU lazy CIDs, 100 ms task-work scan
    LazyCompact,
    /// the 2025 batched-scan series (never merged)
    ResumeBatch,
    /// Linux 6.19+: per-task / per-CPU ownership
    OwnerMode,
}

impl PolicyArg {
    /// The model, or `None` for `observed`.
    pub fn kind(self) -> Option<crate::model::policies::PolicyKind> {
        use crate::model::policies::PolicyKind;
        match self {
            PolicyArg::Observed => None,
            PolicyArg::LazyCompact => Some(PolicyKind::LazyCompact),
            PolicyArg::ResumeBatch => Some(PolicyKind::ResumeBatch),
            PolicyArg::OwnerMode => Some(PolicyKind::OwnerMode),
        }
    }
}

/// Kernel-version variant of lazy-compact's allocation and migration (§2.3 of the models spec).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelArg {
    /// 6.4-6.12: first-zero allocation
    #[value(name = "6.4")]
    V6_4,
    /// 6.13: recent_cid hint and expansion, no shrink
    #[value(name = "6.13")]
    V6_13,
    /// 6.14-6.18: with the max_nr_cid shrink
    #[value(name = "6.14")]
    V6_14,
}

/// rseq_update emission regime.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegimeArg {
    /// <= 6.18: an update on every return to user after a switch/migration
    Legacy,
    /// >= 6.19: an update only when the IDs changed
    Fast,
}

/// CPUs a compaction scan walks.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanArg {
    /// every possible CPU (what the kernels do)
    All,
    /// only CPUs the mm ran on since its last complete scan (plus CPUs holding its CIDs)
    Visited,
}

/// Model options, valid before or after a subcommand.
#[derive(Args, Debug, Clone, Default)]
pub struct ModelArgs {
    /// CID model to replay the capture through (stats: adds model_agreement and
    /// per-process compactions; sim: the simulated policy).
    #[arg(long, value_enum, global = true)]
    pub policy: Option<PolicyArg>,

    /// Models to show side by side, e.g. lazy-compact,owner-mode.
    #[arg(long, value_enum, value_delimiter = ',', global = true)]
    pub compare: Vec<PolicyArg>,

    /// CONFIG_HZ of the modelled kernel (replay: inferred from the tick spacing; sim: 1000).
    #[arg(long, global = true)]
    pub hz: Option<u32>,

    /// resume-batch: CPUs per batch (CONFIG_RSEQ_CID_SCAN_BATCH, default 8).
    #[arg(long, global = true)]
    pub batch: Option<u32>,

    /// lazy-compact kernel variant (default 6.14, i.e. 6.14-6.18).
    #[arg(long, value_enum, global = true)]
    pub kernel: Option<KernelArg>,

    /// rseq emission regime (default: the policy's own).
    #[arg(long, value_enum, global = true)]
    pub regime: Option<RegimeArg>,

    /// CPUs a scan walks (default all).
    #[arg(long, value_enum, global = true)]
    pub scan: Option<ScanArg>,

    /// Replay: do not seed processes that were running before the capture began.
    #[arg(long, global = true)]
    pub no_seed: bool,

    /// rq clock of idle CPUs goes stale (the age pass then sees young slots).
    #[arg(long, global = true)]
    pub stale_rq_clock: bool,

    /// Check every model invariant after every event (slow); breaks are reported.
    #[arg(long, global = true)]
    pub check_invariants: bool,
}

impl ModelArgs {
    /// Model parameters from the flags (cpus/hz 0 = from the capture).
    pub fn params(&self) -> crate::model::policies::Params {
        use crate::model::policies::{KernelVersion, Params, Regime, RqClockMode, ScanScope};
        Params {
            cpus: 0,
            hz: self.hz.unwrap_or(0),
            batch: self.batch.unwrap_or(8),
            version: match self.kernel {
                Some(KernelArg::V6_4) => KernelVersion::V6_4,
                Some(KernelArg::V6_13) => KernelVersion::V6_13,
                Some(KernelArg::V6_14) | None => KernelVersion::V6_14,
            },
            regime: self.regime.map(|r| match r {
                RegimeArg::Legacy => Regime::Legacy,
                RegimeArg::Fast => Regime::Fast,
            }),
            rq_clock: if self.stale_rq_clock {
                RqClockMode::Stale
            } else {
                RqClockMode::Now
            },
            scan: match self.scan {
                Some(ScanArg::Visited) => ScanScope::Visited,
                _ => ScanScope::All,
            },
            seed: !self.no_seed,
            check_invariants: self.check_invariants,
        }
    }

    /// Models named by --policy and --compare, in order, without duplicates.
    pub fn models(&self) -> Vec<crate::model::policies::PolicyKind> {
        let mut v = Vec::new();
        for k in self
            .policy
            .iter()
            .chain(self.compare.iter())
            .filter_map(|p| p.kind())
        {
            if !v.contains(&k) {
                v.push(k);
            }
        }
        v
    }
}

/// Synthetic workloads of `cidscope sim`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadArg {
    /// cyclictest: T timer threads (thread i: 100 us + 500 us * i period), each on its own CPU
    Cyclictest,
    /// hackbench -p: groups of single-threaded processes waking each other
    Hackbench,
    /// T busy threads of one process
    Hogs,
    /// batches of T short-lived threads created and joined
    Churn,
    /// one thread spinning on the last CPU (+ T-1 sleepers)
    Spinner,
}

#[derive(Args, Debug)]
pub struct SimArgs {
    /// Possible CPUs (P).
    #[arg(long)]
    pub cpus: u32,
    /// Workload to schedule.
    #[arg(long, value_enum)]
    pub workload: WorkloadArg,
    /// Threads (or tasks per group for hackbench); default depends on the workload.
    #[arg(long)]
    pub threads: Option<u32>,
    /// Simulated time: 1s, 500ms, 2.5s, 100us.
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
}

/// `1s`, `500ms`, `2.5s`, `100us`, `1000000ns`; a bare number is seconds.
pub fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e9)
    } else {
        (s, 1e9)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("expected a duration like 1s, 500ms or 100us, found \"{s}\""))?;
    if !(v.is_finite() && v > 0.0) || v * mult > 3.6e12 {
        return Err(format!(
            "expected a duration between 1ns and 1h, found \"{s}\""
        ));
    }
    Ok((v * mult).round() as u64)
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// The demo to show (default: the first, workers).
    pub name: Option<String>,
    /// List the demos and exit.
    #[arg(long)]
    pub list: bool,
}

/// `cidscope vm`: the accelerator.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AccelArg {
    /// KVM where /dev/kvm opens and the guest boots, else TCG
    #[default]
    Auto,
    /// hardware virtualization only
    Kvm,
    /// QEMU's emulator (single-threaded: multi-threaded TCG crashed guests at boot)
    Tcg,
}

#[derive(Args, Debug)]
#[command(after_help = crate::vm::workload::HELP)]
pub struct VmArgs {
    /// Kernel image to boot (bzImage or ELF vmlinux), x86-64, Linux >= 6.3 with CONFIG_RSEQ.
    // (its own id: the global `--kernel` of the model variants keeps the id `kernel`)
    #[arg(id = "vm_kernel", long = "kernel", value_name = "PATH")]
    pub kernel: PathBuf,
    /// lazy-compact variant of the model, when the guest kernel's own is not wanted (what
    /// `--kernel 6.4|6.13|6.14` is for the other commands).
    #[arg(
        id = "kernel",
        long = "kernel-variant",
        value_enum,
        value_name = "VARIANT"
    )]
    pub kernel_variant: Option<KernelArg>,
    /// Virtual CPUs (the guest's possible CPUs: the bound of every CID).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub cpus: u32,
    /// Workload to run in the guest: a name below or a `cidscope live` SPEC.
    #[arg(long, default_value = "workers", value_name = "W")]
    pub workload: String,
    /// Threads (or processes) of a named workload (default in brackets below).
    #[arg(long, value_name = "T")]
    pub threads: Option<u32>,
    /// How long the workload runs: 1s, 500ms, 2.5s.
    #[arg(long, default_value = "1s", value_parser = parse_duration_ns, value_name = "D")]
    pub duration: u64,
    /// Save the capture as ftrace text that `cidscope FILE` and `cidscope stats FILE` replay.
    #[arg(long, value_name = "OUT")]
    pub record: Option<PathBuf>,
    /// Print the capture's stats as JSON (the keys of `stats --json`, model_agreement under the
    /// guest kernel's policy, kernel_version, hz, vm) instead of opening the TUI.
    #[arg(long)]
    pub json: bool,
    /// Capture with perf_event_open in the guest (the path of `cidscope attach --all`) instead
    /// of tracefs.
    #[arg(long)]
    pub attach: bool,
    /// More kernel command-line parameters, e.g. "nohz_full=2-7" (after cidscope's own, so
    /// they win; "loglevel=7" shows the whole boot log on failures).
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub append: Option<String>,
    /// Guest memory in MiB (default 1024 + 16 per vCPU).
    #[arg(long, value_name = "MB")]
    pub memory: Option<u32>,
    /// Seconds to wait for the guest's first word (default: 60 with KVM, 60 + 2 per vCPU with
    /// TCG).
    #[arg(long, value_name = "SECS")]
    pub boot_timeout: Option<u64>,
    /// The QEMU binary (default: qemu-system-x86_64 in PATH).
    #[arg(long, value_name = "PATH")]
    pub qemu: Option<PathBuf>,
    /// Accelerator.
    #[arg(long, value_enum, default_value_t = AccelArg::Auto)]
    pub accel: AccelArg,
    /// Trace buffer per guest CPU in KiB (default 4096 up to 16 CPUs, less beyond).
    #[arg(long, value_name = "KB")]
    pub buffer_kb: Option<u32>,
    /// gzip the initramfs (smaller; a TCG guest takes longer to unpack it).
    #[arg(long)]
    pub gzip_initrd: bool,
}
