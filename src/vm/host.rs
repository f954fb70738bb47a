//! The host side of `cidscope vm`: writes the initramfs, boots QEMU (KVM, falling back to TCG),
//! reads the guest's stream from a Unix socket, and ends every way a boot can go wrong with a
//! message and the console's last lines instead of a hang.
//!
//! [`VmRun::start`] checks what it can at once (QEMU, the kernel image, the workload) and does
//! the rest on a thread of its own; the caller polls [`VmRun::status`] (progress lines, the TUI)
//! and takes the stream's text with [`VmRun::take_text`].

use super::boot::boot;
use super::cmdline::{CaptureMode, GuestConfig};
pub use super::config::VmConfig;
use super::error::VmError;
use super::protocol::{End, RecordHeader};
use super::qemu::{self, Accel, AccelChoice, Plan};
use super::status::Shared;
pub use super::status::{Phase, Status};
use super::stream::{compose, stream};
pub use super::tempdir::TempDir;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How a run went, once it is over.
#[derive(Debug)]
pub struct Outcome {
    /// The capture as ftrace text (header comment + tracefs header + events).
    pub capture: PathBuf,
    pub header: RecordHeader,
    pub end: End,
    pub accel: Accel,
    pub boot: Duration,
    pub run: Duration,
    pub wall: Duration,
    pub events: u64,
    /// The CIDs the workload read, held against the capture (`--attach` with a workload
    /// that reads them).
    pub samples: Option<super::protocol::SampleCheck>,
    pub notes: Vec<String>,
    pub initrd_bytes: u64,
    pub libs: Vec<String>,
    /// Holds the temporary directory (and `capture` when it lies there) until dropped.
    pub tmp: TempDir,
}

/// A run of the VM.
pub struct VmRun {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<Result<Outcome, VmError>>>,
}

impl VmRun {
    /// Checks QEMU, the kernel image and the workload now; boots on a thread of its own.
    pub fn start(cfg: VmConfig) -> Result<VmRun, VmError> {
        if cfg.cpus == 0 || cfg.cpus > 255 {
            return Err(VmError::Setup(format!(
                "--cpus {}: expected 1..=255 (QEMU's pc machine)",
                cfg.cpus
            )));
        }
        let qemu = qemu::find(cfg.qemu.as_deref()).map_err(VmError::Setup)?;
        qemu::check_kernel(&cfg.kernel).map_err(VmError::Setup)?;
        super::workload::Workload::parse(&cfg.workload, cfg.threads, cfg.cpus)
            .map_err(VmError::Setup)?;
        if cfg.accel == AccelChoice::Kvm {
            qemu::kvm_usable().map_err(|e| VmError::Setup(format!("--accel kvm: {e}")))?;
        }
        let shared = Arc::new(Shared {
            status: Mutex::new(Status {
                phase: Phase::Preparing,
                hello: None,
                events: 0,
                bytes: 0,
                elapsed: Duration::ZERO,
                boot: None,
                notes: Vec::new(),
                initrd_bytes: 0,
                hz: None,
                scan_batch: None,
            }),
            text: Mutex::new(Vec::new()),
            text_dropped: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            kill: AtomicBool::new(false),
            started: Instant::now(),
        });
        let sh = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("cidscope-vm".into())
            .spawn(move || {
                let r = run(&cfg, &qemu, &sh).map_err(VmError::Run);
                sh.phase(if r.is_ok() {
                    Phase::Done
                } else {
                    Phase::Failed
                });
                r
            })
            .map_err(|e| VmError::Setup(format!("cannot start the VM thread: {e}")))?;
        Ok(VmRun {
            shared,
            thread: Some(thread),
        })
    }

    pub fn status(&self) -> Status {
        let mut s = self.shared.lock().clone();
        s.elapsed = self.shared.started.elapsed();
        s
    }

    /// The stream's ftrace text since the last call (with `keep_text`), whole lines.
    pub fn take_text(&self) -> Vec<u8> {
        let mut t = self.shared.text.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut *t)
    }

    /// Bytes of text dropped because [`VmRun::take_text`] was not called for too long.
    pub fn text_dropped(&self) -> u64 {
        self.shared.text_dropped.load(Ordering::Relaxed)
    }

    /// Asks the guest to end its workload now and send what it has (Ctrl-C).
    pub fn request_stop(&self) {
        self.shared.stop.store(true, Ordering::Relaxed);
    }

    /// Ends QEMU at once (a second Ctrl-C, the TUI quitting).
    pub fn kill(&self) {
        self.shared.kill.store(true, Ordering::Relaxed);
    }

    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Waits for the run to end.
    pub fn wait(mut self) -> Result<Outcome, VmError> {
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(VmError::Run("the VM thread panicked".into())),
            None => Err(VmError::Run("the VM run was already collected".into())),
        }
    }
}

impl Drop for VmRun {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.shared.kill.store(true, Ordering::Relaxed);
            let _ = t.join();
        }
    }
}

/// The kernel command line: a serial console, reboot (= QEMU exits) on panic, the guest's
/// instructions, and the user's `--append` last (so it overrides).
fn append_line(cfg: &VmConfig, guest: &GuestConfig, extra_lib_dirs: &[String]) -> String {
    let mut a = format!(
        "console=ttyS0 panic=-1 quiet rdinit=/init {}",
        guest.param()
    );
    if !extra_lib_dirs.is_empty() {
        a.push_str(&format!(" LD_LIBRARY_PATH={}", extra_lib_dirs.join(":")));
    }
    if let Some(u) = &cfg.append {
        a.push(' ');
        a.push_str(u);
    }
    a
}

fn run(cfg: &VmConfig, qemu: &Path, sh: &Shared) -> Result<Outcome, String> {
    if let Some(c) = qemu::config_beside(&cfg.kernel, None)
        .and_then(|p| std::fs::read_to_string(&p).ok().map(|t| (p, t)))
    {
        let problems = qemu::config_problems(&c.1, cfg.attach);
        if !problems.is_empty() {
            sh.note(format!(
                "{} {} (from {}): the guest may not boot or stream",
                problems[0],
                problems[1..].join(", "),
                c.0.display()
            ));
        }
    }
    let tmp = TempDir::new()?;
    let exe = match &cfg.guest_exe {
        Some(p) => p.clone(),
        None => std::env::current_exe().map_err(|e| format!("finding this executable: {e}"))?,
    };
    let initrd = super::initramfs::build(&exe, &tmp.0.join("initrd.img"), cfg.gzip_initrd)?;
    sh.lock().initrd_bytes = initrd.bytes;
    let guest = GuestConfig {
        mode: if cfg.attach {
            CaptureMode::Attach
        } else {
            CaptureMode::Tracefs
        },
        workload: cfg.workload.clone(),
        threads: cfg.threads,
        duration_ns: cfg.duration_ns,
        buffer_kb: cfg.buffer(),
        trace_clock: cfg.trace_clock.clone(),
        graph_function: cfg.graph_function.clone(),
        probes: cfg.probes && !cfg.attach,
        seed: cfg.seed,
    };
    let accels: Vec<Accel> = match cfg.accel {
        AccelChoice::Tcg => vec![Accel::Tcg],
        AccelChoice::Kvm => vec![Accel::Kvm],
        AccelChoice::Auto => match qemu::kvm_usable() {
            Ok(()) => vec![Accel::Kvm, Accel::Tcg],
            Err(e) => {
                sh.note(format!(
                    "KVM is not usable ({e}; on most systems: be in the kvm group): TCG, slower"
                ));
                vec![Accel::Tcg]
            }
        },
    };
    let mut plan = Plan {
        qemu: qemu.to_path_buf(),
        accel: accels[0],
        cpus: cfg.cpus,
        memory_mb: cfg.memory(),
        kernel: cfg.kernel.clone(),
        initrd: initrd.path.clone(),
        append: append_line(cfg, &guest, &initrd.extra_lib_dirs),
        console: tmp.0.join("console.log"),
        socket: tmp.0.join("capture.sock"),
    };
    let mut booted = None;
    for (i, &accel) in accels.iter().enumerate() {
        plan.accel = accel;
        sh.phase(Phase::Booting(accel));
        let t = Instant::now();
        match boot(&plan, cfg.boot_timeout_for(accel), sh) {
            Ok(b) => {
                booted = Some((b, t.elapsed()));
                break;
            }
            Err(f) if f.retry && i + 1 < accels.len() => {
                let first = f.msg.lines().next().unwrap_or("").to_string();
                sh.note(format!(
                    "KVM did not boot the guest ({first}); falling back to TCG"
                ));
            }
            Err(f) => return Err(f.msg),
        }
    }
    let (b, boot_time) = booted.ok_or("no accelerator to try")?;
    {
        let mut s = sh.lock();
        s.hello = Some(b.hello.clone());
        s.boot = Some(boot_time);
    }
    let hello = b.hello.clone();
    // HZ: the guest's own config, else the config beside the image, else the guest's jiffies
    let beside = || {
        let p = qemu::config_beside(&cfg.kernel, Some(&hello.kernel))?;
        let h = super::guest::config_hz(&std::fs::read_to_string(&p).ok()?)?;
        Some((h, format!("config file {}", p.display())))
    };
    let (hz, hz_source) = match (hello.hz, hello.hz_from.as_deref()) {
        (Some(h), Some("config.gz")) => (Some(h), Some("guest /proc/config.gz".to_string())),
        (measured, _) => match beside() {
            Some((h, src)) => (Some(h), Some(src)),
            None => (
                measured,
                measured.map(|_| "guest jiffies rate (/proc/timer_list)".to_string()),
            ),
        },
    };
    // CONFIG_RSEQ_CID_SCAN_BATCH: the guest's own config, else the config beside the image
    // (only when the guest has no /proc/config.gz: a guest config without it is a stock kernel)
    let scan_batch = match hello.hz_from.as_deref() {
        Some("config.gz") => hello.scan_batch,
        _ => hello.scan_batch.or_else(|| {
            let p = qemu::config_beside(&cfg.kernel, Some(&hello.kernel))?;
            super::guest::config_scan_batch(&std::fs::read_to_string(p).ok()?)
        }),
    };
    {
        let mut s = sh.lock();
        s.hz = hz.zip(hz_source.clone());
        s.scan_batch = scan_batch;
        s.phase = Phase::Running;
    }
    let workload = super::workload::Workload::parse(&cfg.workload, cfg.threads, hello.cpus)
        .map(|w| w.describe())
        .unwrap_or_else(|_| cfg.workload.clone());
    let header = RecordHeader {
        kernel_version: hello.kernel.clone(),
        hz,
        hz_source,
        scan_batch,
        cpus: hello.cpus,
        workload,
        mode: guest.mode.name().into(),
        accel: plan.accel.name().into(),
    };
    let run_start = Instant::now();
    let graph = guest.graph_function.is_some();
    let body_path = tmp.0.join("body.txt");
    // --record: the recording is written as the lines arrive (crash-safe), and is the capture
    let (out, out_path) = match &cfg.record {
        Some(p) => (
            super::stream::Out::record(p, &header, guest.mode, graph)?,
            p.clone(),
        ),
        None => (super::stream::Out::spool(&body_path)?, body_path.clone()),
    };
    let streamed = stream(cfg, sh, b, out, &out_path, &plan)?;
    let run = run_start.elapsed();
    let capture = match &cfg.record {
        Some(p) => p.clone(),
        None => {
            // the capture file: the facts, the tracefs header (trace_pipe has none), the events
            let capture = tmp.0.join("capture.txt");
            compose(
                &capture,
                &header,
                guest.mode,
                graph,
                streamed.events,
                &body_path,
            )?;
            let _ = std::fs::remove_file(&body_path);
            capture
        }
    };
    let notes = sh.lock().notes.clone();
    Ok(Outcome {
        capture,
        header,
        end: streamed.end,
        accel: plan.accel,
        boot: boot_time,
        run,
        wall: sh.started.elapsed(),
        events: streamed.events,
        samples: streamed.samples,
        notes,
        initrd_bytes: initrd.bytes,
        libs: initrd.libs.iter().map(|n| n.guest_path.clone()).collect(),
        tmp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_scale_with_the_cpu_count() {
        let mut c = VmConfig::new("/k".into(), 16, "churn");
        assert_eq!(c.memory(), 1024 + 256);
        assert_eq!(c.buffer(), 4096);
        assert_eq!(c.boot_timeout_for(Accel::Tcg), Duration::from_secs(92));
        c.cpus = 64;
        assert_eq!(c.buffer(), 1024);
        c.memory_mb = Some(512);
        assert_eq!(c.memory(), 512);
        c.boot_timeout = Some(Duration::from_secs(5));
        assert_eq!(c.boot_timeout_for(Accel::Tcg), Duration::from_secs(5));
    }

    #[test]
    fn the_command_line_ends_with_the_users_words() {
        let mut c = VmConfig::new("/k".into(), 4, "churn");
        c.append = Some("nohz_full=2-3 loglevel=7".into());
        let g = GuestConfig {
            mode: CaptureMode::Tracefs,
            workload: "churn".into(),
            threads: None,
            duration_ns: 1,
            buffer_kb: 1024,
            trace_clock: None,
            graph_function: None,
            probes: true,
            seed: 0,
        };
        let a = append_line(&c, &g, &["/opt/lib".into()]);
        assert!(a.starts_with("console=ttyS0 panic=-1"), "{a}");
        assert!(a.ends_with(" nohz_full=2-3 loglevel=7"), "{a}");
        assert!(a.contains(" LD_LIBRARY_PATH=/opt/lib "), "{a}");
        assert!(a.contains(&g.param()));
    }
}
