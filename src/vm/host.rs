//! The host side of `cidscope vm`: writes the initramfs, boots QEMU (KVM, falling back to TCG),
//! reads the guest's stream from a Unix socket, and ends every way a boot can go wrong with a
//! message and the console's last lines instead of a hang.
//!
//! [`VmRun::start`] checks what it can at once (QEMU, the kernel image, the workload) and does
//! the rest on a thread of its own; the caller polls [`VmRun::status`] (progress lines, the TUI)
//! and takes the stream's text with [`VmRun::take_text`].

use super::cmdline::{CaptureMode, GuestConfig};
use super::protocol::{ACK, Control, End, Hello, RecordHeader, STOP};
use super::qemu::{self, Accel, AccelChoice, Plan};
use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Preparing,
    Booting(Accel),
    Running,
    /// The workload ended; the rest of the capture is arriving.
    Collecting,
    Done,
    Failed,
}

/// A snapshot for progress lines.
#[derive(Clone, Debug)]
pub struct Status {
    pub phase: Phase,
    pub hello: Option<Hello>,
    /// Event lines received so far (attach mode: the guest's own count until the end).
    pub events: u64,
    pub bytes: u64,
    pub elapsed: Duration,
    pub boot: Option<Duration>,
    /// Things worth telling (a fallback to TCG, guest warnings), in order.
    pub notes: Vec<String>,
    pub initrd_bytes: u64,
    /// CONFIG_HZ of the guest kernel and where it came from, once known.
    pub hz: Option<(u32, String)>,
}

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
    pub notes: Vec<String>,
    pub initrd_bytes: u64,
    pub libs: Vec<String>,
    /// Holds the temporary directory (and `capture` when it lies there) until dropped.
    pub tmp: TempDir,
}

/// A directory removed when dropped.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

/// Temporary directories alive now: removed at exit too, when the process leaves through
/// `exit()` without dropping them (the TUI's signal watchdog on a hangup).
static LIVE_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

extern "C" fn remove_live_dirs() {
    if let Ok(dirs) = LIVE_DIRS.try_lock() {
        for d in dirs.iter() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

impl TempDir {
    pub fn new() -> Result<TempDir, String> {
        static N: AtomicU64 = AtomicU64::new(0);
        let base = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let name = format!(
            "cidscope-vm-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        // the socket inside must fit a sockaddr_un (108 bytes)
        let p = match base.join(&name) {
            p if p.as_os_str().len() <= 80 => p,
            _ => PathBuf::from("/tmp").join(&name),
        };
        std::fs::create_dir_all(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        static HOOK: std::sync::Once = std::sync::Once::new();
        HOOK.call_once(|| super::sys::at_exit(remove_live_dirs));
        LIVE_DIRS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(p.clone());
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        LIVE_DIRS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|d| d != &self.0);
    }
}

struct Shared {
    status: Mutex<Status>,
    text: Mutex<Vec<u8>>,
    /// Text not kept because the consumer fell this far behind (bytes).
    text_dropped: AtomicU64,
    stop: AtomicBool,
    kill: AtomicBool,
    started: Instant,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Status> {
        self.status.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn note(&self, n: String) {
        self.lock().notes.push(n);
    }
    fn phase(&self, p: Phase) {
        self.lock().phase = p;
    }
}

/// The most text kept for a consumer that does not take it (then it is counted, not kept).
const MAX_KEPT_TEXT: usize = 256 << 20;

/// A run of the VM.
pub struct VmRun {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<Result<Outcome, String>>>,
}

impl VmRun {
    /// Checks QEMU, the kernel image and the workload now; boots on a thread of its own.
    pub fn start(cfg: VmConfig) -> Result<VmRun, String> {
        if cfg.cpus == 0 || cfg.cpus > 255 {
            return Err(format!(
                "--cpus {}: expected 1..=255 (QEMU's pc machine)",
                cfg.cpus
            ));
        }
        let qemu = qemu::find(cfg.qemu.as_deref())?;
        qemu::check_kernel(&cfg.kernel)?;
        super::workload::Workload::parse(&cfg.workload, cfg.threads, cfg.cpus)?;
        if cfg.accel == AccelChoice::Kvm {
            qemu::kvm_usable().map_err(|e| format!("--accel kvm: {e}"))?;
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
                let r = run(&cfg, &qemu, &sh);
                sh.phase(if r.is_ok() {
                    Phase::Done
                } else {
                    Phase::Failed
                });
                r
            })
            .map_err(|e| format!("cannot start the VM thread: {e}"))?;
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
    pub fn wait(mut self) -> Result<Outcome, String> {
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err("the VM thread panicked".into()),
            None => Err("the VM run was already collected".into()),
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

/// The last bytes a reader thread saw (QEMU's stdout and stderr).
#[derive(Clone, Default)]
struct Tail(Arc<Mutex<Vec<u8>>>);

impl Tail {
    const MAX: usize = 16 << 10;
    fn spawn(&self, mut r: impl Read + Send + 'static) {
        let t = self.clone();
        let _ = std::thread::Builder::new()
            .name("qemu-output".into())
            .spawn(move || {
                let mut b = [0u8; 4096];
                while let Ok(n) = r.read(&mut b) {
                    if n == 0 {
                        return;
                    }
                    let mut v = t.0.lock().unwrap_or_else(|p| p.into_inner());
                    v.extend_from_slice(&b[..n]);
                    if v.len() > Self::MAX {
                        let cut = v.len() - Self::MAX;
                        v.drain(..cut);
                    }
                }
            });
    }
    fn text(&self) -> String {
        let v = self.0.lock().unwrap_or_else(|p| p.into_inner());
        String::from_utf8_lossy(&v).into_owned()
    }
}

/// The last `n` lines of a file, read from its end.
pub fn file_tail(path: &Path, n: usize) -> Vec<String> {
    use std::io::{Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(16 << 10);
    let mut b = Vec::new();
    if f.seek(SeekFrom::Start(from)).is_err() || f.read_to_end(&mut b).is_err() {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&b);
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            l.chars()
                .filter(|c| !c.is_control() || *c == '\t')
                .collect::<String>()
        })
        .filter(|l| !l.trim().is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// Why a boot attempt failed; `retry` when TCG may do better than KVM did.
struct BootFail {
    msg: String,
    retry: bool,
}

struct Booted {
    child: Child,
    stream: UnixStream,
    /// Bytes read after the hello line.
    rest: Vec<u8>,
    hello: Hello,
    err: Tail,
}

/// The message of a failed boot: what happened, the console's last lines, what QEMU said.
fn failure(what: String, console: &Path, qemu_err: &Tail) -> String {
    let mut m = what;
    let tail = file_tail(console, 25);
    if tail.is_empty() {
        m.push_str(
            "\nThe guest console stayed empty (the kernel boots `quiet`: --append loglevel=7 shows its whole log).",
        );
    } else {
        m.push_str("\nLast lines of the guest console:");
        for l in tail {
            m.push_str("\n  | ");
            m.push_str(&l);
        }
    }
    let q = qemu_err.text();
    let q = q.trim();
    if !q.is_empty() {
        m.push_str("\nQEMU said:");
        for l in q
            .lines()
            .rev()
            .take(10)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
        {
            m.push_str("\n  | ");
            m.push_str(l);
        }
    }
    m
}

fn kill_child(c: &mut Child) {
    let _ = c.kill();
    let _ = c.wait();
}

/// Starts QEMU and waits for the guest's hello.
fn boot(plan: &Plan, timeout: Duration, sh: &Shared) -> Result<Booted, BootFail> {
    let fail = |msg: String| BootFail { msg, retry: false };
    let _ = std::fs::remove_file(&plan.socket);
    let _ = std::fs::write(&plan.console, b"");
    let listener = UnixListener::bind(&plan.socket)
        .map_err(|e| fail(format!("{}: cannot listen: {e}", plan.socket.display())))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| fail(format!("socket: {e}")))?;
    let mut cmd = Command::new(&plan.qemu);
    cmd.args(qemu::args(plan))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // (the signal comes when this thread ends: it lives until QEMU has exited)
    super::sys::kill_with_parent(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| fail(format!("cannot run {}: {e}", plan.qemu.display())))?;
    let err = Tail::default();
    if let Some(o) = child.stdout.take() {
        err.spawn(o);
    }
    if let Some(e) = child.stderr.take() {
        err.spawn(e);
    }
    let start = Instant::now();
    let accel = plan.accel.name().to_uppercase();
    // Every reason to give up while waiting, checked between waits.
    let check = |child: &mut Child| -> Result<(), BootFail> {
        if sh.kill.load(Ordering::Relaxed) || sh.stop.load(Ordering::Relaxed) {
            kill_child(child);
            return Err(fail("stopped while the guest was booting".into()));
        }
        if let Ok(Some(st)) = child.try_wait() {
            // QEMU's threads may still be writing their last words
            std::thread::sleep(Duration::from_millis(100));
            let kvm_failed = plan.accel == Accel::Kvm;
            return Err(BootFail {
                msg: failure(
                    format!(
                        "QEMU ended ({st}) before cidscope started in the guest ({accel}, {} vCPUs, {:.1} s after start)",
                        plan.cpus,
                        start.elapsed().as_secs_f64()
                    ),
                    &plan.console,
                    &err,
                ),
                retry: kvm_failed,
            });
        }
        if plan.accel == Accel::Kvm && err.text().contains("KVM internal error") {
            kill_child(child);
            return Err(BootFail {
                msg: failure(
                    "KVM stopped the guest (\"KVM internal error\")".into(),
                    &plan.console,
                    &err,
                ),
                retry: true,
            });
        }
        if start.elapsed() > timeout {
            kill_child(child);
            return Err(BootFail {
                msg: failure(
                    format!(
                        "the guest did not boot within {} s ({accel}, {} vCPUs): cidscope in the guest never said hello (raise --boot-timeout if the machine is just slow)",
                        timeout.as_secs(),
                        plan.cpus
                    ),
                    &plan.console,
                    &err,
                ),
                retry: plan.accel == Accel::Kvm,
            });
        }
        Ok(())
    };
    let stream = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                check(&mut child)?;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => {
                kill_child(&mut child);
                return Err(fail(format!("accepting QEMU's connection: {e}")));
            }
        }
    };
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
    let mut buf = Vec::new();
    let mut b = [0u8; 4096];
    let mut s = &stream;
    loop {
        if let Some(nl) = memchr::memchr(b'\n', &buf) {
            let line = String::from_utf8_lossy(&buf[..nl]).into_owned();
            let rest = buf[nl + 1..].to_vec();
            match Control::parse(&line) {
                Some(Ok(Control::Hello(hello))) => {
                    return Ok(Booted {
                        child,
                        stream,
                        rest,
                        hello,
                        err,
                    });
                }
                Some(Ok(Control::Error(e))) => {
                    kill_child(&mut child);
                    return Err(fail(failure(
                        format!("cidscope in the guest failed before it started: {e}"),
                        &plan.console,
                        &err,
                    )));
                }
                _ => {
                    buf = rest;
                    continue;
                }
            }
        }
        match s.read(&mut b) {
            Ok(0) => {
                // the port closed: QEMU is ending (a kernel it cannot load, a guest that died)
                let t = Instant::now();
                let mut st = None;
                while st.is_none() && t.elapsed() < Duration::from_secs(3) {
                    st = child.try_wait().ok().flatten();
                    std::thread::sleep(Duration::from_millis(20));
                }
                let what = match st {
                    Some(st) => format!(
                        "QEMU ended ({st}) before cidscope started in the guest ({accel}, {} vCPUs, {:.1} s after start)",
                        plan.cpus,
                        start.elapsed().as_secs_f64()
                    ),
                    None => {
                        kill_child(&mut child);
                        "the guest closed its console before cidscope said hello".into()
                    }
                };
                return Err(BootFail {
                    msg: failure(what, &plan.console, &err),
                    retry: plan.accel == Accel::Kvm,
                });
            }
            Ok(n) => buf.extend_from_slice(&b[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                check(&mut child)?;
            }
            Err(e) => {
                kill_child(&mut child);
                return Err(fail(format!("reading the guest's console: {e}")));
            }
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
    {
        let mut s = sh.lock();
        s.hz = hz.zip(hz_source.clone());
        s.phase = Phase::Running;
    }
    let workload = super::workload::Workload::parse(&cfg.workload, cfg.threads, hello.cpus)
        .map(|w| w.describe())
        .unwrap_or_else(|_| cfg.workload.clone());
    let header = RecordHeader {
        kernel_version: hello.kernel.clone(),
        hz,
        hz_source,
        cpus: hello.cpus,
        workload,
        mode: guest.mode.name().into(),
        accel: plan.accel.name().into(),
    };
    let run_start = Instant::now();
    let body_path = tmp.0.join("body.txt");
    let streamed = stream(cfg, sh, b, &body_path, &plan)?;
    let run = run_start.elapsed();
    // the capture file: the facts, the tracefs header (trace_pipe has none), the events
    let capture = tmp.0.join("capture.txt");
    compose(&capture, &header, guest.mode, streamed.events, &body_path)?;
    let _ = std::fs::remove_file(&body_path);
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
        notes,
        initrd_bytes: initrd.bytes,
        libs: initrd.libs.iter().map(|n| n.guest_path.clone()).collect(),
        tmp,
    })
}

/// The tracefs column header, as `cat trace` prints it with record-tgid.
const FTRACE_HEADER: &str = "\
#                                          _-----=> irqs-off/BH-disabled
#                                         / _----=> need-resched
#                                        | / _---=> hardirq/softirq
#                                        || / _--=> preempt-depth
#                                        ||| / _-=> migrate-disable
#                                        |||| /     delay
#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION
#              | |           |       |   |||||     |         |
";

/// Writes the capture: the `# cidscope-vm:` facts, then (tracefs) the header `cat trace`
/// prints, with `#P:` the guest's possible CPUs, then the streamed lines.
pub fn compose(
    out: &Path,
    header: &RecordHeader,
    mode: CaptureMode,
    events: u64,
    body: &Path,
) -> Result<(), String> {
    let err = |e: std::io::Error| format!("{}: {e}", out.display());
    let f = std::fs::File::create(out).map_err(err)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    w.write_all(header.line().as_bytes()).map_err(err)?;
    if mode == CaptureMode::Tracefs {
        write!(
            w,
            "# tracer: nop\n#\n# entries-in-buffer/entries-written: {events}/{events}   #P:{}\n#\n{FTRACE_HEADER}",
            header.cpus
        )
        .map_err(err)?;
    }
    let mut b = std::fs::File::open(body).map_err(|e| format!("{}: {e}", body.display()))?;
    std::io::copy(&mut b, &mut w).map_err(err)?;
    w.flush().map_err(err)
}

struct Streamed {
    end: End,
    events: u64,
}

/// Reads the guest's stream to its `end` (or the guest's death), writing the ftrace lines to
/// `body`; answers `end` with `ack` and waits for QEMU to exit.
fn stream(
    cfg: &VmConfig,
    sh: &Shared,
    b: Booted,
    body: &Path,
    plan: &Plan,
) -> Result<Streamed, String> {
    let Booted {
        mut child,
        stream,
        rest,
        hello: _,
        err,
    } = b;
    let file = std::fs::File::create(body).map_err(|e| format!("{}: {e}", body.display()))?;
    let mut spool = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut buf = rest;
    let mut rd = [0u8; 1 << 16];
    let mut s = &stream;
    let mut events = 0u64;
    let mut bytes = 0u64;
    let mut end: Option<End> = None;
    let mut guest_error: Option<String> = None;
    let mut sent_stop = false;
    let mut stop_at: Option<Instant> = None;
    let mut last_data = Instant::now();
    let mut kept: Vec<u8> = Vec::new();
    let started = Instant::now();
    // the workload's length, plus the time a slow guest takes to drain and send
    let deadline = started
        + Duration::from_nanos(cfg.duration_ns)
        + Duration::from_secs(120 + 2 * cfg.cpus as u64);
    let stall = Duration::from_secs(120);
    let io = |e: std::io::Error| format!("{}: {e}", body.display());
    'read: loop {
        // whole lines first
        let mut start = 0;
        while let Some(p) = memchr::memchr(b'\n', &buf[start..]) {
            let mut line = &buf[start..start + p];
            start += p + 1;
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            if line.starts_with(super::protocol::PREFIX.as_bytes()) {
                let l = String::from_utf8_lossy(line);
                match Control::parse(&l) {
                    Some(Ok(Control::End(e))) => {
                        end = Some(e);
                        break 'read;
                    }
                    Some(Ok(Control::Warn(w))) => sh.note(format!("guest: {w}")),
                    Some(Ok(Control::Error(e))) => {
                        // the guest's last word: it powers off once answered
                        guest_error = Some(e);
                        break 'read;
                    }
                    Some(Ok(Control::Progress { events: n })) => sh.lock().events = n,
                    Some(Ok(Control::Running { .. })) => sh.phase(Phase::Running),
                    Some(Ok(Control::Hello(_))) => {}
                    Some(Err(e)) => sh.note(e),
                    None => {}
                }
                continue;
            }
            spool.write_all(line).map_err(io)?;
            spool.write_all(b"\n").map_err(io)?;
            if !line.starts_with(b"#") && !line.starts_with(b"CPU:") && !line.is_empty() {
                events += 1;
            }
            if cfg.keep_text {
                kept.extend_from_slice(line);
                kept.push(b'\n');
            }
        }
        buf.drain(..start);
        if !kept.is_empty() {
            // one lock per read, not per line
            let mut t = sh.text.lock().unwrap_or_else(|p| p.into_inner());
            if t.len() + kept.len() < MAX_KEPT_TEXT {
                t.extend_from_slice(&kept);
            } else {
                sh.text_dropped
                    .fetch_add(kept.len() as u64, Ordering::Relaxed);
            }
            kept.clear();
        }
        {
            let mut st = sh.lock();
            if cfg.attach && st.phase == Phase::Running && events > 0 {
                st.phase = Phase::Collecting;
            }
            if !cfg.attach || events > 0 {
                st.events = st.events.max(events);
            }
            st.bytes = bytes;
        }
        if sh.kill.load(Ordering::Relaxed) {
            kill_child(&mut child);
            return Err("stopped: QEMU was killed".into());
        }
        if sh.stop.load(Ordering::Relaxed) && !sent_stop {
            sent_stop = true;
            stop_at = Some(Instant::now());
            let _ = s.write_all(format!("{STOP}\n").as_bytes());
        }
        let timed_out = Instant::now() > deadline || last_data.elapsed() > stall;
        if timed_out && stop_at.is_none() {
            sh.note(format!(
                "the guest ran past its time (workload {} s, nothing new for {} s): asking it to stop",
                cfg.duration_ns / 1_000_000_000,
                last_data.elapsed().as_secs()
            ));
            let _ = s.write_all(format!("{STOP}\n").as_bytes());
            stop_at = Some(Instant::now());
        }
        if stop_at.is_some_and(|t| t.elapsed() > Duration::from_secs(20)) {
            kill_child(&mut child);
            return Err(failure(
                "the guest did not end its capture in time after being asked to stop; QEMU was killed".into(),
                &plan.console,
                &err,
            ));
        }
        match s.read(&mut rd) {
            Ok(0) => break,
            Ok(n) => {
                bytes += n as u64;
                last_data = Instant::now();
                buf.extend_from_slice(&rd[..n]);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
            }
            Err(e) => {
                kill_child(&mut child);
                return Err(format!("reading the guest's stream: {e}"));
            }
        }
    }
    spool.flush().map_err(io)?;
    if !kept.is_empty() {
        // the lines before `end`, read with it
        sh.text
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(&kept);
    }
    if end.is_some() || guest_error.is_some() {
        sh.phase(Phase::Collecting);
        let _ = s.write_all(format!("{ACK}\n").as_bytes());
    }
    // the guest powers off after the ack; QEMU then exits
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(15) {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if let Ok(None) = child.try_wait() {
        sh.note("the guest did not power off after its capture; QEMU was killed".into());
        kill_child(&mut child);
    }
    match (end, guest_error) {
        (Some(end), None) => Ok(Streamed { end, events }),
        (_, Some(e)) => Err(failure(
            format!("cidscope in the guest failed: {e}"),
            &plan.console,
            &err,
        )),
        (None, None) => Err(failure(
            format!("the guest ended before its capture did ({events} events received)"),
            &plan.console,
            &err,
        )),
    }
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
        };
        let a = append_line(&c, &g, &["/opt/lib".into()]);
        assert!(a.starts_with("console=ttyS0 panic=-1"), "{a}");
        assert!(a.ends_with(" nohz_full=2-3 loglevel=7"), "{a}");
        assert!(a.contains(" LD_LIBRARY_PATH=/opt/lib "), "{a}");
        assert!(a.contains(&g.param()));
    }

    #[test]
    fn file_tail_keeps_the_last_lines_without_control_bytes() {
        let d = TempDir::new().unwrap();
        let p = d.0.join("c");
        let text: String = (0..100).map(|i| format!("line {i}\x1b[0m\r\n")).collect();
        std::fs::write(&p, text).unwrap();
        let t = file_tail(&p, 3);
        assert_eq!(t, ["line 97[0m", "line 98[0m", "line 99[0m"]);
        assert!(file_tail(&d.0.join("none"), 3).is_empty());
        let path = d.0.clone();
        drop(d);
        assert!(!path.exists());
    }
}
