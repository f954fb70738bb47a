//! The errors of `cidscope vm` on the host: what stops a run before the guest boots (a flag's
//! value, QEMU, the kernel image), what ends it (QEMU's exit with the guest console's last
//! lines, the guest's stream), and what fails after it (the capture, `--record`, the output).
//! The guest's own processes report over the stream and on the guest console as text.

use crate::sources::SourceError;

#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// What cannot run at all, found before booting: `--cpus`, `--accel kvm` without KVM,
    /// QEMU missing, a file that is no kernel image, a workload that does not parse.
    #[error("{0}")]
    Setup(String),
    /// The run failed: QEMU's words and the console's last lines, the initramfs, the stream.
    #[error("{0}")]
    Run(String),
    /// The capture the guest streamed did not read back.
    #[error(transparent)]
    Capture(#[from] SourceError),
    /// stdout.
    #[error("writing output: {0}")]
    Output(std::io::Error),
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}
