//! The command line: the top-level flags (the replay's), the commands, and the flags each
//! command still accepts from when the shared flags were global.

use super::demo::DemoArgs;
use super::export::ExportArgs;
use super::live::{AttachArgs, LiveArgs};
use super::man::ManArgs;
use super::sim::SimArgs;
use super::stats::StatsArgs;
use super::vm::VmArgs;
use super::{KeysArg, LoadArgs, ModelArgs, ThemeArg};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;

const ABOUT: &str = "See which rseq concurrency ID (mm_cid) each thread got, when, and why.";

pub(crate) const LONG_ABOUT: &str = "\
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

/// The examples of `--help` (and of the man page, verbatim).
pub(crate) const EXAMPLES: &str =
    "  cidscope                          open the bundled demo capture
  cidscope trace.txt                scrub through a capture (press ? for keys)
  cidscope stats trace.txt          summary: events, CPUs, tasks and their CIDs
  cidscope stats --json trace.txt   the same as JSON, for scripts";

/// How to capture (in `--help` and, verbatim so that it pastes, in the man page).
pub(crate) const CAPTURE: &str = "  cd /sys/kernel/tracing && echo 1 > options/record-tgid
  echo rseq:rseq_update sched:sched_switch sched:sched_migrate_task sched:sched_process_fork \\
       sched:sched_process_exec sched:sched_process_exit task:task_newtask \\
       timer:hrtimer_expire_entry > set_event
  echo 1 > tracing_on; sleep 2; echo 0 > tracing_on; cat trace > /tmp/cid.txt";

/// The exit statuses (in `--help` and the man page).
pub(crate) const EXIT_STATUS: &str = "0 ok, 1 findings (--check), 2 bad input or usage (the message names the file, line or byte offset), 3 --check could check nothing, 4 --check could run one check only and it found nothing, 128+N the TUI ended by signal N.";

/// `--help`'s closing text: the examples, how to capture, the exit statuses.
fn after_help() -> String {
    format!(
        "Examples:\n{EXAMPLES}\n\nCapture on a test box (as root):\n{CAPTURE}\n\nExit status: {EXIT_STATUS}"
    )
}

#[derive(Parser, Debug)]
#[command(
    name = "cidscope",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = after_help(),
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// Capture to open. Without it, cidscope opens its bundled demo capture. An experiment's
    /// directory (`cidscope vm ... --out DIR`) opens its first finished run of each kernel ×
    /// vCPUs side by side.
    pub file: Option<PathBuf>,

    /// More captures, each stacked under the first as a lane set named by its kernel, on a
    /// time axis shared relative to each workload's start; the cursor pane shows each one's CID
    /// metrics.
    #[arg(value_name = "MORE")]
    pub more: Vec<PathBuf>,

    #[command(flatten)]
    pub load: LoadArgs,

    #[command(flatten)]
    pub theme: ThemeArg,

    /// Check the capture instead of opening the TUI: report every observed duplicate CID among
    /// concurrently running threads of one process and every CID at or above its bound.
    /// Exit status: 1 when there is a finding; 0 when there is none and both checks ran; 3 when
    /// nothing could be checked (no events, no rseq_update, or neither check possible); 4 when
    /// one check could not run (no sched_switch, no TGID or process events, no CPU column) and
    /// the other found nothing; 2 on an error. What could not be checked is said, and why.
    #[arg(long, requires = "file")]
    pub check: bool,

    #[command(flatten)]
    pub keys: KeysArg,

    #[command(flatten)]
    pub model: ModelArgs,

    #[command(subcommand)]
    pub command: Option<Command>,
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
    Man(ManArgs),
    /// Print a shell script that defines the CID probes on this box (fprobe events on the
    /// kernel functions that run the CID steps no tracepoint marks; root, tracefs): run it
    /// before a capture and the replay runs those steps where the kernel ran them
    /// (docs/models.md §5.6). `cidscope vm` does this in its guests by itself.
    Probes,
    /// Simulate a workload under a CID policy (deterministic for a given --seed).
    Sim(SimArgs),
    /// Boot a kernel image in QEMU (KVM, else TCG; no root), run a workload in it and capture
    /// its CIDs: the live TUI, --record FILE or --json stats with the model agreement.
    Vm(VmArgs),
}

/// The flags every command took when the load, look and model flags were global (before each
/// command listed only its own): where a command has no use for one, it is still accepted and
/// ignored, as it always was, and hidden from that command's help.
const FORMER_GLOBALS: &[&str] = &[
    "format",
    "skip_bad_lines",
    "no_memory_check",
    "theme",
    "keys",
    "policy",
    "compare",
    "hz",
    "batch",
    "kernel",
    "kernel_version",
    "regime",
    "scan",
    "no_seed",
    "stale_rq_clock",
    "rq_clock",
    "jiffies",
    "check_invariants",
];

/// The command line: [`Cli`]'s, with the former global flags each command tolerates.
pub fn command() -> clap::Command {
    let cmd = Cli::command();
    let shared: Vec<clap::Arg> = cmd
        .get_arguments()
        .filter(|a| FORMER_GLOBALS.contains(&a.get_id().as_str()))
        .cloned()
        .collect();
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    names.into_iter().fold(cmd, |cmd, name| {
        let shared = shared.clone();
        cmd.mut_subcommand(name, move |mut sub| {
            for a in shared {
                let taken = sub.get_arguments().any(|b| {
                    b.get_id() == a.get_id()
                        || (b.get_long().is_some() && b.get_long() == a.get_long())
                });
                if !taken {
                    sub = sub.arg(a.hide(true));
                }
            }
            sub
        })
    })
}

/// Parses the process's arguments (exits with clap's message and status 2 on a usage error).
pub fn parse() -> Cli {
    let mut matches = command().get_matches();
    Cli::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| e.format(&mut command()).exit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policies::PolicyKind;

    #[test]
    fn the_command_line_is_consistent() {
        command().debug_assert();
    }

    /// A policy registered in `model::policies::kind` is a `--policy` and `--compare` value.
    #[test]
    fn every_registered_policy_is_a_flag_value() {
        for k in PolicyKind::ALL {
            let cli = Cli::try_parse_from(["cidscope", "--policy", k.id(), "--compare", k.id()])
                .expect("parses");
            assert_eq!(cli.model.models(), vec![k]);
        }
    }

    /// A flag that was global stays accepted where it does nothing, out of that command's help.
    #[test]
    fn former_global_flags_are_still_accepted() {
        let m = command()
            .try_get_matches_from([
                "cidscope",
                "man",
                "--policy",
                "lazy-compact",
                "--theme",
                "dark",
            ])
            .expect("accepted");
        let (_, sub) = m.subcommand().expect("man");
        assert!(sub.contains_id("policy"));
        let help = command()
            .find_subcommand_mut("man")
            .expect("man")
            .render_long_help()
            .to_string();
        assert!(
            !help.contains("--policy") && !help.contains("--theme"),
            "{help}"
        );
    }
}
