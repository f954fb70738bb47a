//! cidscope inside the guest. As PID 1 (`/init` of the initramfs) it is the agent: mounts,
//! says hello, sets up the capture, starts the workload in a process of its own (this binary
//! again, in a worker role), streams the capture over `/dev/hvc0` and powers off. With
//! `--cidscope-vm-role work CONFIG` it is that worker; `exec-child` is the exec workload's
//! child.

pub mod tracefs;

use super::cmdline::{CaptureMode, GuestConfig};
use super::protocol::{ACK, Control, End, Hello, STOP};
use super::role::{EXEC_CHILD, WORK};
use super::sys;
use std::fs::File;
use std::io::{self, Read, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

// where it was before the roles had a file of their own
pub use super::role::ROLE_FLAG;

/// Runs the guest side when this process is one: the agent (PID 1 started as `/init`; never
/// returns) or a role. `None`: an ordinary cidscope run.
pub fn entry() -> Option<ExitCode> {
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if args.get(1).map(String::as_str) == Some(ROLE_FLAG) {
        return Some(role(&args[2..]));
    }
    if std::process::id() == 1 && args.first().map(String::as_str) == Some("/init") {
        agent_main();
    }
    None
}

fn role(args: &[String]) -> ExitCode {
    let r = match args.first().map(String::as_str) {
        Some(WORK) => work(args.get(1).map(String::as_str).unwrap_or("")),
        Some(EXEC_CHILD) => super::workload::exec_child(&args[1..]),
        other => Err(format!("unknown guest role {other:?}")),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cidscope vm worker: {e}");
            ExitCode::from(1)
        }
    }
}

/// The workload process: runs the configured workload for its duration (SIGTERM ends it early).
fn work(config: &str) -> Result<(), String> {
    let cfg = GuestConfig::decode(config)?;
    let _ = signal_hook::flag::register(
        signal_hook::consts::SIGTERM,
        Arc::clone(super::workload::stop_flag()),
    );
    let ncpus = crate::sources::live::online_cpus().len() as u32;
    let w = super::workload::Workload::parse(&cfg.workload, cfg.threads, ncpus)?;
    sys::set_thread_name("cw-main");
    let mut read = super::workload::Read::default();
    let r = w.run(Duration::from_nanos(cfg.duration_ns), cfg.seed, &mut read);
    if !read.samples.is_empty() || read.dropped > 0 {
        // for the agent to hold against the trace ([`check_samples`])
        let mut f = io::BufWriter::new(
            File::create(SAMPLES_PATH).map_err(|e| format!("{SAMPLES_PATH}: {e}"))?,
        );
        read.write(&mut f)
            .and_then(|()| f.flush())
            .map_err(|e| format!("{SAMPLES_PATH}: {e}"))?;
    }
    r
}

/// Where the workload process leaves the CIDs its threads read (the guest's root is a ramfs).
const SAMPLES_PATH: &str = "/cidscope-samples";

/// The CIDs the workload process `pid` read, held against the capture: every one should be
/// in an rseq_update of its thread, none duplicated among running threads, none at or above the
/// CPU count. `None` when the workload read none (its kind does not read them).
fn check_samples(
    cap: &mut crate::sources::live::session::LiveCapture,
    pid: u32,
) -> Option<super::protocol::SampleCheck> {
    let text = std::fs::read_to_string(SAMPLES_PATH).ok()?;
    let read = super::workload::Read::parse(&text)?;
    cap.samples = read.samples;
    cap.samples.sort_by_key(|s| s.ts);
    cap.pid = pid;
    let s = crate::stats::live::summarize(cap);
    Some(super::protocol::SampleCheck {
        samples: cap.samples.len() as u64,
        threads: s.sample_threads,
        matched: s.matched.unwrap_or(0),
        matched_last: s.matched_last.unwrap_or(0),
        cid_out_of_range: s.samples_cid_out_of_range,
        duplicates: s.duplicates.unwrap_or(0),
        max_cid: s.max_cid,
        cpus: s.cpus,
        dropped: read.dropped,
        unmatched: s.unmatched_samples,
        duplicate_examples: s.duplicate_examples,
    })
}

/// CONFIG_HZ of a kernel config (`CONFIG_HZ=250`).
pub fn config_hz(config: &str) -> Option<u32> {
    config
        .lines()
        .find_map(|l| l.strip_prefix("CONFIG_HZ="))
        .and_then(|v| v.trim().parse().ok())
}

/// CONFIG_RSEQ_CID_SCAN_BATCH of a kernel config: the CPUs per batch of the
/// compaction-in-batches patches (seed 000, docs/models.md §3). `None`: the kernel has no such
/// option (stock kernels).
pub fn config_scan_batch(config: &str) -> Option<u32> {
    config
        .lines()
        .find_map(|l| l.strip_prefix("CONFIG_RSEQ_CID_SCAN_BATCH="))
        .and_then(|v| v.trim().parse().ok())
        .filter(|&b| b > 0)
}

/// This kernel's own config, `/proc/config.gz` (CONFIG_IKCONFIG_PROC), if it has it.
fn own_config() -> Option<String> {
    let f = File::open("/proc/config.gz").ok()?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(f)
        .take(4 << 20)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// `now at T nsecs` and the first `jiffies: N` of /proc/timer_list.
pub fn timer_list_clock(text: &str) -> Option<(u64, u64)> {
    let now = text
        .lines()
        .find_map(|l| l.strip_prefix("now at "))
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())?;
    let j = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("jiffies: "))
        .and_then(|n| n.trim().parse().ok())?;
    Some((now, j))
}

/// The CONFIG_HZ choice (100, 250, 300, 1000) nearest to a measured jiffies rate, if within 15%.
pub fn snap_hz(rate: f64) -> Option<u32> {
    [100u32, 250, 300, 1000]
        .into_iter()
        .min_by(|a, b| {
            let da = (rate / *a as f64 - 1.0).abs();
            let db = (rate / *b as f64 - 1.0).abs();
            da.total_cmp(&db)
        })
        .filter(|&h| (rate / h as f64 - 1.0).abs() < 0.15)
}

/// HZ from the rate jiffies advance at over 300 ms (when there is no /proc/config.gz).
fn measured_hz() -> Option<u32> {
    let read = || {
        std::fs::read_to_string("/proc/timer_list")
            .ok()
            .and_then(|t| timer_list_clock(&t))
    };
    let (t0, j0) = read()?;
    std::thread::sleep(Duration::from_millis(300));
    let (t1, j1) = read()?;
    let dt = t1.checked_sub(t0).filter(|&d| d > 100_000_000)?;
    snap_hz(j1.checked_sub(j0)? as f64 * 1e9 / dt as f64)
}

/// The virtio console to the host, or (without one) stderr, which the host sees in the
/// console log.
struct Link {
    w: Box<dyn Write>,
    tty: Option<File>,
}

impl Link {
    fn control(&mut self, c: &Control) -> io::Result<()> {
        self.w.write_all(c.line().as_bytes())?;
        self.w.flush()
    }
}

/// What the host sent: `stop` and `ack`.
#[derive(Default)]
struct FromHost {
    stop: AtomicBool,
    ack: AtomicBool,
}

fn listen(mut r: File, flags: Arc<FromHost>) {
    let mut line = Vec::new();
    let mut b = [0u8; 64];
    while let Ok(n) = r.read(&mut b) {
        if n == 0 {
            return;
        }
        for &c in &b[..n] {
            if c != b'\n' {
                line.push(c);
                continue;
            }
            match std::str::from_utf8(&line).map(str::trim) {
                Ok(STOP) => flags.stop.store(true, Ordering::Relaxed),
                Ok(ACK) => flags.ack.store(true, Ordering::Relaxed),
                _ => {}
            }
            line.clear();
        }
    }
}

fn mount_early() {
    for (src, target, fs) in [
        ("proc", "/proc", "proc"),
        ("sysfs", "/sys", "sysfs"),
        ("devtmpfs", "/dev", "devtmpfs"),
    ] {
        let _ = std::fs::create_dir_all(target);
        if let Err(e) = sys::mount(src, target, fs)
            && e.raw_os_error() != Some(libc::EBUSY)
        {
            eprintln!("cidscope vm guest: mount -t {fs} {src} {target}: {e}");
        }
    }
}

/// PID 1: never returns (powers the guest off).
fn agent_main() -> ! {
    mount_early();
    let flags = Arc::new(FromHost::default());
    let mut link = match File::options().read(true).write(true).open("/dev/hvc0") {
        Ok(f) => {
            if let Err(e) = sys::set_raw(&f) {
                eprintln!("cidscope vm guest: raw mode on /dev/hvc0: {e}");
            }
            if let Ok(r) = f.try_clone() {
                let fl = Arc::clone(&flags);
                let _ = std::thread::Builder::new()
                    .name("host-link".into())
                    .spawn(move || listen(r, fl));
            }
            let tty = f.try_clone().ok();
            Link {
                w: Box::new(io::BufWriter::with_capacity(1 << 16, f)),
                tty,
            }
        }
        Err(e) => {
            eprintln!(
                "cidscope vm guest: cannot open /dev/hvc0 ({e}): the kernel needs CONFIG_VIRTIO_CONSOLE=y and QEMU a virtconsole device"
            );
            sys::power_off();
        }
    };
    if let Err(e) = agent(&mut link, &flags) {
        eprintln!("cidscope vm guest: {e}");
        let _ = link.control(&Control::Error(e));
    }
    let _ = link.w.flush();
    // the host answers `end` once it has everything; do not cut the stream before
    let t = Instant::now();
    while !flags.ack.load(Ordering::Relaxed) && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    if let Some(tty) = &link.tty {
        sys::drain(tty);
    }
    sys::power_off();
}

fn agent(link: &mut Link, flags: &FromHost) -> Result<(), String> {
    let cmdline =
        std::fs::read_to_string("/proc/cmdline").map_err(|e| format!("/proc/cmdline: {e}"))?;
    let cfg = GuestConfig::from_cmdline(&cmdline)?;
    let io = |e: io::Error| format!("writing to /dev/hvc0: {e}");
    let config = own_config();
    let scan_batch = config.as_deref().and_then(config_scan_batch);
    let (hz, hz_from) = match config.as_deref().and_then(config_hz) {
        Some(h) => (Some(h), Some("config.gz".to_string())),
        None => match measured_hz() {
            Some(h) => (Some(h), Some("jiffies".to_string())),
            None => (None, None),
        },
    };
    link.control(&Control::Hello(Hello {
        version: 1,
        kernel: sys::kernel_release(),
        hz,
        hz_from,
        scan_batch,
        cpus: crate::sources::live::possible_cpus(),
        mode: cfg.mode.name().into(),
    }))
    .map_err(io)?;
    match cfg.mode {
        CaptureMode::Tracefs => stream_tracefs(link, flags, &cfg),
        CaptureMode::Attach => attach(link, flags, &cfg),
    }
}

/// The guest's clocks, as notes: the trace clock in use, the clocksource, and what the kernel
/// log says of the TSC and sched_clock (`tsc: Marking TSC unstable ...`).
fn clock_facts(trace_clock: &str) -> Vec<String> {
    let cs = |f: &str| {
        std::fs::read_to_string(format!("/sys/devices/system/clocksource/clocksource0/{f}"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".into())
    };
    let mut out = vec![format!(
        "clock: trace_clock {trace_clock}; clocksource {} (available: {})",
        cs("current_clocksource"),
        cs("available_clocksource")
    )];
    let log = sys::kernel_log();
    out.extend(
        log.lines()
            .filter(|l| {
                let l = l.to_ascii_lowercase();
                l.contains("tsc") || l.contains("clocksource") || l.contains("sched_clock")
            })
            .take(24)
            .map(|l| format!("clock: kernel log: {}", l.trim())),
    );
    out.extend(unstable_tsc_warning(&log, trace_clock));
    out
}

/// What a kernel that marked its TSC unstable means for the capture: its sched_clock is no
/// longer trusted, tracing moves to the `global` clock, and in one of the 58 `cidscope vm` boots
/// of the sweeps (a TSC calibrated at 76.5 MHz under TCG) its stamps then moved a tick at a time
/// (docs/models.md §11, *a trace clock that stalls*).
fn unstable_tsc_warning(kernel_log: &str, trace_clock: &str) -> Option<String> {
    let unstable = kernel_log.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("tsc") && l.contains("unstable")
    });
    unstable.then(|| {
        format!(
            "clock: the guest's kernel marked its TSC unstable (trace_clock {trace_clock}): the \
             capture's stamps may stall, and within a stamp the order across CPUs is then the \
             reader's, not the kernel's; `cidscope stats` names such a capture `coarse-clock`. \
             Boot again for a capture to trust"
        )
    })
}

fn spawn_worker(cfg: &GuestConfig) -> Result<std::process::Child, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    std::process::Command::new(exe)
        .arg(ROLE_FLAG)
        .arg(WORK)
        .arg(cfg.encode())
        .stdin(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("starting the workload process: {e}"))
}

/// Waits for the worker, asking it to stop on the host's `stop` or after the hard deadline;
/// `tick` runs between checks (streams what arrived). Returns its exit code (-1: signalled).
fn supervise(
    child: &mut std::process::Child,
    cfg: &GuestConfig,
    flags: &FromHost,
    tick: &mut dyn FnMut() -> Result<(), String>,
) -> Result<(i32, bool), String> {
    // a workload that does not end by itself gets SIGTERM, then SIGKILL
    let hard = Instant::now() + Duration::from_nanos(cfg.duration_ns) + Duration::from_secs(20);
    let mut termed: Option<Instant> = None;
    loop {
        tick()?;
        match child.try_wait() {
            Ok(Some(st)) => {
                use std::os::unix::process::ExitStatusExt;
                let code = st.code().unwrap_or(-st.signal().unwrap_or(1));
                return Ok((code, flags.stop.load(Ordering::Relaxed)));
            }
            Ok(None) => {}
            Err(e) => return Err(format!("waiting for the workload: {e}")),
        }
        let asked = flags.stop.load(Ordering::Relaxed) || Instant::now() > hard;
        match termed {
            None if asked => {
                sys::terminate(child.id());
                termed = Some(Instant::now());
            }
            Some(t) if t.elapsed() > Duration::from_secs(3) => {
                let _ = child.kill();
            }
            _ => {}
        }
    }
}

fn stream_tracefs(link: &mut Link, flags: &FromHost, cfg: &GuestConfig) -> Result<(), String> {
    let io = |e: io::Error| format!("writing to /dev/hvc0: {e}");
    let t = tracefs::Tracefs::mount()?;
    for w in t.setup(
        cfg.buffer_kb,
        cfg.trace_clock.as_deref(),
        cfg.graph_function.as_deref(),
        cfg.probes,
    )? {
        link.control(&Control::Warn(w)).map_err(io)?;
    }
    // what the timestamps of the capture rest on (docs/models.md §5.7)
    for f in clock_facts(&t.clock()) {
        link.control(&Control::Warn(f)).map_err(io)?;
    }
    let mut pipe = t.open_pipe()?;
    let mut buf = vec![0u8; 1 << 16];
    // Reads what trace_pipe holds now (it says WouldBlock when empty) and sends it.
    let mut pump = |link: &mut Link, pipe: &mut File| -> Result<u64, String> {
        let mut total = 0u64;
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    link.w.write_all(&buf[..n]).map_err(io)?;
                    total += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("reading trace_pipe: {e}")),
            }
        }
        link.w.flush().map_err(io)?;
        Ok(total)
    };
    t.tracing_on(true)?;
    std::thread::sleep(Duration::from_millis(50));
    let mut child = spawn_worker(cfg)?;
    link.control(&Control::Running {
        workload: cfg.workload.clone(),
    })
    .map_err(io)?;
    let (code, stopped) = {
        let mut tick = || {
            let n = pump(link, &mut pipe)?;
            if n == 0 {
                sys::poll_in(&pipe, 50);
            }
            Ok(())
        };
        supervise(&mut child, cfg, flags, &mut tick)?
    };
    // the last switches and exits land, then the buffer is drained empty
    let settle = Instant::now();
    while settle.elapsed() < Duration::from_millis(200) {
        if pump(link, &mut pipe)? == 0 {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    t.tracing_on(false)?;
    while pump(link, &mut pipe)? > 0 {}
    link.control(&Control::End(End {
        status: if stopped { "stopped" } else { "ok" }.into(),
        lost: t.lost(),
        worker: code,
    }))
    .map_err(io)
}

fn attach(link: &mut Link, flags: &FromHost, cfg: &GuestConfig) -> Result<(), String> {
    use crate::sources::live::{LiveOptions, LiveSession, Scope};
    let io = |e: io::Error| format!("writing to /dev/hvc0: {e}");
    tracefs::Tracefs::mount()?;
    let pages = ((cfg.buffer_kb / 4).max(16) as usize).next_power_of_two();
    let session = LiveSession::start(LiveOptions {
        attach: Some(Scope::All),
        buffer_pages: pages,
        ..LiveOptions::default()
    })
    .map_err(|e| e.to_string())?;
    std::thread::sleep(Duration::from_millis(50));
    let mut child = spawn_worker(cfg)?;
    let worker_pid = child.id();
    link.control(&Control::Running {
        workload: cfg.workload.clone(),
    })
    .map_err(io)?;
    let mut last = Instant::now();
    let (code, stopped) = {
        let mut tick = || {
            std::thread::sleep(Duration::from_millis(50));
            if last.elapsed() >= Duration::from_millis(500) {
                last = Instant::now();
                link.control(&Control::Progress {
                    events: session.counters().events,
                })
                .map_err(io)?;
            }
            Ok(())
        };
        supervise(&mut child, cfg, flags, &mut tick)?
    };
    std::thread::sleep(Duration::from_millis(200));
    let mut cap = session.stop().map_err(|e| e.to_string())?;
    for w in &cap.trace.warnings {
        link.control(&Control::Warn(format!("{}: {}", w.code, w.message)))
            .map_err(io)?;
    }
    crate::export::ftrace::write(&mut link.w, &cap.trace, Some(&cap.aux)).map_err(io)?;
    if let Some(c) = check_samples(&mut cap, worker_pid) {
        link.control(&Control::Samples(c)).map_err(io)?;
    }
    link.control(&Control::End(End {
        status: if stopped { "stopped" } else { "ok" }.into(),
        lost: cap.counters.lost_events,
        worker: code,
    }))
    .map_err(io)
}

#[cfg(test)]
mod tests {
    /// A kernel log that marks the TSC unstable gives a warning that says what it means for
    /// the capture; one that does not, none (the lines of two fresh 7.3.4 boots of stop 48).
    #[test]
    fn a_tsc_marked_unstable_is_said_to_the_user() {
        let bad = "<6>[    0.036000] tsc: Detected 76.500 MHz processor\n\
                   <4>[    1.056691] clocksource: Marking clocksource tsc-early unstable due to frequency skew";
        let good = "<6>[    0.000000] tsc: Detected 2599.997 MHz processor\n\
                    <6>[    0.195619] clocksource: jiffies: mask: 0xffffffff";
        let clock = "local [global] counter";
        let w = unstable_tsc_warning(bad, clock).expect("a warning");
        assert!(
            w.contains("marked its TSC unstable") && w.contains("coarse-clock"),
            "{w}"
        );
        assert!(w.contains(clock), "{w}");
        assert_eq!(unstable_tsc_warning(good, "[local] global"), None);
    }

    use super::*;

    #[test]
    fn hz_from_a_kernel_config() {
        assert_eq!(
            config_hz("# comment\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n"),
            Some(250)
        );
        assert_eq!(config_hz("CONFIG_HZ_1000=y\n"), None);
    }

    #[test]
    fn scan_batch_from_a_kernel_config() {
        let seed = "CONFIG_HZ=250\nCONFIG_RSEQ=y\nCONFIG_RSEQ_CID_SCAN_BATCH=8\n";
        assert_eq!(config_scan_batch(seed), Some(8));
        assert_eq!(config_scan_batch("CONFIG_RSEQ_CID_SCAN_BATCH=16"), Some(16));
        // a stock kernel has no such option; 0 is no batch size
        assert_eq!(config_scan_batch("CONFIG_HZ=250\nCONFIG_RSEQ=y\n"), None);
        assert_eq!(config_scan_batch("CONFIG_RSEQ_CID_SCAN_BATCH=0\n"), None);
        assert_eq!(
            config_scan_batch("# CONFIG_RSEQ_CID_SCAN_BATCH is not set\n"),
            None
        );
    }

    #[test]
    fn hz_from_the_jiffies_rate() {
        let t = "Timer List Version: v0.10\nHRTIMER_MAX_CLOCK_BASES: 8\nnow at 2402257030214 nsecs\n\ncpu: 0\n  .idle_jiffies   : 4295492119\njiffies: 4295492802\n";
        assert_eq!(timer_list_clock(t), Some((2402257030214, 4295492802)));
        assert_eq!(timer_list_clock("jiffies: 4\n"), None);
        assert_eq!(snap_hz(249.0), Some(250));
        assert_eq!(snap_hz(296.0), Some(300));
        assert_eq!(snap_hz(1010.0), Some(1000));
        assert_eq!(snap_hz(97.0), Some(100));
        assert_eq!(snap_hz(600.0), None);
        // this machine's own rate is one of them
        if let Some(h) = measured_hz() {
            assert!([100, 250, 300, 1000].contains(&h));
        }
    }
}
