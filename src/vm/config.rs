//! What `cidscope vm` is asked to do, and the defaults that scale with the guest's CPU count.

use super::qemu::{Accel, AccelChoice};
use std::path::PathBuf;
use std::time::Duration;

/// What `cidscope vm` was asked to do.
#[derive(Clone, Debug)]
pub struct VmConfig {
    pub kernel: PathBuf,
    pub cpus: u32,
    pub workload: String,
    pub threads: Option<u32>,
    pub duration_ns: u64,
    pub attach: bool,
    /// More kernel parameters (`nohz_full=2-7`).
    pub append: Option<String>,
    pub memory_mb: Option<u32>,
    pub boot_timeout: Option<Duration>,
    pub qemu: Option<PathBuf>,
    pub accel: AccelChoice,
    /// Per-CPU trace buffer in KiB (default: by CPU count).
    pub buffer_kb: Option<u32>,
    /// The binary that becomes the guest's /init (default: this one).
    pub guest_exe: Option<PathBuf>,
    pub gzip_initrd: bool,
    /// Keep the stream's text for [`VmRun::take_text`] (the TUI).
    pub keep_text: bool,
    /// tracefs `trace_clock` in the guest (`None`: the kernel's default, `local`).
    pub trace_clock: Option<String>,
    /// `--graph-function`: the function_graph tracer on this kernel function in the guest.
    pub graph_function: Option<String>,
    /// The CID probes in the guest (`--no-probes` turns them off; tracefs mode only).
    pub probes: bool,
    /// `--record`: the capture is written there as it arrives, in flushed chunks (a run killed
    /// at any moment leaves a file that replays up to its last chunk and says it was cut).
    pub record: Option<std::path::PathBuf>,
    /// `--seed`: the workload's random choices (0: its fixed default).
    pub seed: u64,
}

impl VmConfig {
    pub fn new(kernel: PathBuf, cpus: u32, workload: &str) -> VmConfig {
        VmConfig {
            kernel,
            cpus,
            workload: workload.into(),
            threads: None,
            duration_ns: 1_000_000_000,
            attach: false,
            append: None,
            memory_mb: None,
            boot_timeout: None,
            qemu: None,
            accel: AccelChoice::Auto,
            buffer_kb: None,
            guest_exe: None,
            gzip_initrd: false,
            keep_text: false,
            trace_clock: None,
            graph_function: None,
            probes: true,
            record: None,
            seed: 0,
        }
    }

    /// Guest memory: 1 GiB plus 16 MiB per vCPU (per-CPU areas and trace buffers).
    pub fn memory(&self) -> u32 {
        self.memory_mb.unwrap_or(1024 + 16 * self.cpus)
    }

    /// Trace buffer per CPU: 4 MiB up to 16 CPUs, less beyond (the stream drains it as it runs).
    pub fn buffer(&self) -> u32 {
        self.buffer_kb
            .unwrap_or_else(|| (65536 / self.cpus.max(1)).clamp(1024, 4096))
    }

    /// The wait for the guest's first word: TCG boots take about half a second per vCPU here.
    pub fn boot_timeout_for(&self, accel: Accel) -> Duration {
        self.boot_timeout.unwrap_or(match accel {
            Accel::Kvm => Duration::from_secs(60),
            Accel::Tcg => Duration::from_secs(60 + 2 * self.cpus as u64),
        })
    }
}
