//! `cidscope vm`: a test box on any laptop. Boots a kernel image in QEMU (KVM where it works,
//! TCG otherwise) with cidscope itself as the guest's init, runs one of cidscope's workloads
//! there, and streams the capture back over virtio-serial: into the live TUI, a `--record`
//! file, or `--json` stats with the model agreement under the guest kernel's own policy.
//! Nothing but QEMU is needed on the host, and no root.
//!
//! A stage of its own: it uses the sources (readers, live workload and attach), the model and
//! the stats, never the UI (the TUI glue is `ui::vm`).
//!
//! * host: [`config`] (what a run is asked to do), [`host`] (the run), [`status`] (its progress,
//!   shared by its threads), [`boot`] (a QEMU start and the guest's hello), [`stream`] (the
//!   capture as it arrives), [`qemu`], [`initramfs`] ([`cpio`], [`elf`]), [`tempdir`], [`feed`]
//!   (the stream as trace deltas), [`report`] (stats JSON, progress lines), [`experiment`]
//!   (kernels × vCPUs × repeats: experiment.json, the table, experiment.svg)
//! * both: [`cmdline`] (host → guest, on the kernel command line), [`protocol`] (guest → host),
//!   [`role`] (cidscope run again in the guest as its workload process or an exec child)
//! * guest: [`guest`] (PID 1 and the worker roles), [`workload`]
//! * every `unsafe`: [`sys`]; the host side's errors: [`error`]

pub mod boot;
pub mod cmdline;
pub mod config;
pub mod cpio;
pub mod elf;
pub mod error;
pub mod experiment;
pub mod feed;
pub mod guest;
pub mod host;
pub mod initramfs;
pub mod protocol;
pub mod qemu;
pub mod report;
pub mod role;
pub mod status;
pub mod stream;
pub mod sys;
pub mod tempdir;
pub mod workload;

pub use config::VmConfig;
pub use error::VmError;
pub use host::{Outcome, VmRun};
pub use report::ModelOverride;
pub use status::{Phase, Status};
