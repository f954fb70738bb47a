//! `cidscope vm`: its flags, and the VM run and model choice they make.

use super::values::parse_duration_ns;
use super::{CliError, ModelArgs, UiArgs};
use crate::vm::qemu::AccelChoice;
use crate::vm::{ModelOverride, VmConfig};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(after_help = crate::vm::workload::HELP)]
// `--kernel` is the image here: the model's kernel variant (`--kernel` of the other commands)
// is `--kernel-variant`, with the same id, so it lands in `ModelArgs::kernel`
#[command(mut_arg("kernel", |a| a
    .long("kernel-variant")
    .value_name("VARIANT")
    .help("lazy-compact variant of the model, when the guest kernel's own is not wanted (what `--kernel 6.4|6.13|6.14` is for the other commands)")
    .long_help(None::<&str>)))]
pub struct VmArgs {
    /// Kernel image to boot (bzImage or ELF vmlinux), x86-64, Linux >= 6.3 with CONFIG_RSEQ.
    /// Give it again for an experiment over several kernels (with --out).
    #[arg(
        id = "vm_kernel",
        long = "kernel",
        value_name = "PATH",
        required_unless_present = "report"
    )]
    pub kernel: Vec<PathBuf>,
    /// Virtual CPUs (the guest's possible CPUs: the bound of every CID); a list (8,16,64) for
    /// an experiment over CPU counts (with --out).
    #[arg(
        long,
        default_value = "4",
        value_name = "N[,N...]",
        value_delimiter = ','
    )]
    pub cpus: Vec<u32>,
    /// Runs of each kernel × vCPU count (an experiment, with --out).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeat: u32,
    /// Experiment directory: every kernel × vCPUs × repeat is run one guest at a time with the
    /// same workload and seed; each recording, experiment.json (runs with their cid_metrics
    /// and model_agreement, medians and spread, ratios, the 100 ms scan answer, missing runs)
    /// and experiment.svg go there, the side-by-side table to stdout (experiment.json with
    /// --json). Exit 1 when a run is missing.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Make an experiment's report again from the recordings in DIR (after an upgrade, or when
    /// a recording could not be read back): experiment.json and experiment.svg rewritten, the
    /// table printed (experiment.json with --json). Boots nothing.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["vm_kernel", "out", "record"])]
    pub report: Option<PathBuf>,
    /// Seed of the workloads' random choices (affinity's CPU masks); the same in every run of
    /// an experiment. 0: each workload's fixed default.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// Workload to run in the guest: a name below or a `cidscope live` SPEC.
    #[arg(long, default_value = "workers", value_name = "W")]
    pub workload: String,
    /// Threads (or processes) of a named workload (default in brackets below).
    #[arg(long, value_name = "T")]
    pub threads: Option<u32>,
    /// How long the workload runs: 1s, 500ms, 2.5s, 10m, 1h (at most 1h).
    #[arg(long, default_value = "1s", value_parser = parse_duration_ns, value_name = "D")]
    pub duration: u64,
    /// Save the capture as ftrace text that `cidscope FILE` and `cidscope stats FILE` replay,
    /// written as it arrives in chunks flushed every second (a run killed at any moment leaves
    /// a file that replays up to its last chunk and says it was cut).
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
    #[arg(long, value_enum, default_value_t = AccelChoice::Auto)]
    pub accel: AccelChoice,
    /// Trace buffer per guest CPU in KiB (default 4096 up to 16 CPUs, less beyond).
    #[arg(long, value_name = "KB")]
    pub buffer_kb: Option<u32>,
    /// gzip the initramfs (smaller; a TCG guest takes longer to unpack it).
    #[arg(long)]
    pub gzip_initrd: bool,
    /// tracefs `trace_clock` of the guest's capture (local, global, mono, x86-tsc, ...;
    /// default: the kernel's own, `local`).
    #[arg(long, value_name = "CLOCK")]
    pub trace_clock: Option<String>,
    /// Record the calls of this kernel function with the function_graph tracer beside the
    /// events (set_graph_function, funcgraph-abstime, funcgraph-proc; tracefs mode), e.g.
    /// task_mm_cid_work: each call with its duration; the events become `/* ... */` comments.
    #[arg(long, value_name = "FUNC")]
    pub graph_function: Option<String>,
    /// Do not define the CID probes: fprobe events on the kernel functions that run the CID
    /// steps no tracepoint marks (finish_task_switch, sched_mm_cid_migrate_to,
    /// sched_mm_cid_fork, sched_mm_cid_exit, mmput, ...; `cidscope probes` lists them). With
    /// them the replay runs each such step where the guest kernel ran it instead of inferring
    /// its place from the observed CIDs (docs/models.md §5.6); without them the capture holds
    /// the tracepoints alone, as a capture of a box without fprobes would.
    #[arg(long)]
    pub no_probes: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub ui: UiArgs,
}

impl VmArgs {
    /// The run the flags describe (an experiment's first kernel and CPU count).
    pub fn config(&self) -> VmConfig {
        let kernel = self.kernel.first().cloned().unwrap_or_default();
        let cpus = self.cpus.first().copied().unwrap_or(4);
        VmConfig {
            threads: self.threads,
            duration_ns: self.duration,
            attach: self.attach,
            append: self.append.clone(),
            memory_mb: self.memory,
            boot_timeout: self.boot_timeout.map(std::time::Duration::from_secs),
            qemu: self.qemu.clone(),
            accel: self.accel,
            buffer_kb: self.buffer_kb,
            gzip_initrd: self.gzip_initrd,
            trace_clock: self.trace_clock.clone(),
            graph_function: self.graph_function.clone(),
            probes: !self.no_probes,
            record: self.record.clone(),
            seed: self.seed,
            ..VmConfig::new(kernel, cpus, &self.workload)
        }
    }

    /// The experiment the flags ask for: several kernels, CPU counts or repeats, or --out.
    /// `None`: one run (the TUI, --record, --json).
    pub fn experiment(&self) -> Result<Option<crate::vm::experiment::Plan>, CliError> {
        let many = self.kernel.len() > 1 || self.cpus.len() > 1 || self.repeat > 1;
        if !many && self.out.is_none() {
            return Ok(None);
        }
        let Some(out) = self.out.clone() else {
            return Err(CliError::Usage(
                "several --kernel, --cpus values or --repeat make an experiment: name its directory with --out DIR".into(),
            ));
        };
        if self.record.is_some() {
            return Err(CliError::Usage(
                "--record is for one run; an experiment records every run into --out DIR".into(),
            ));
        }
        if self.repeat == 0 {
            return Err(CliError::Usage("--repeat 0: expected 1 or more".into()));
        }
        let mut cpus = self.cpus.clone();
        cpus.sort_unstable();
        cpus.dedup();
        Ok(Some(crate::vm::experiment::Plan {
            kernels: self.kernel.clone(),
            cpus,
            repeat: self.repeat,
            out,
            base: self.config(),
            model: self.model_override(),
        }))
    }

    /// What of the model the flags fix (the rest comes from the guest kernel).
    pub fn model_override(&self) -> ModelOverride {
        self.model.asked()
    }
}
