//! One QEMU start: the process, its output, the wait for the guest's hello, and the message of
//! every way that can fail (QEMU's words and the guest console's last lines).

use super::protocol::{Control, Hello};
use super::qemu::{self, Accel, Plan};
use super::status::Shared;
use std::io::Read;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The last bytes a reader thread saw (QEMU's stdout and stderr).
#[derive(Clone, Default)]
pub(super) struct Tail(Arc<Mutex<Vec<u8>>>);

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
pub(super) struct BootFail {
    pub(super) msg: String,
    pub(super) retry: bool,
}

pub(super) struct Booted {
    pub(super) child: Child,
    pub(super) stream: UnixStream,
    /// Bytes read after the hello line.
    pub(super) rest: Vec<u8>,
    pub(super) hello: Hello,
    pub(super) err: Tail,
}

/// The message of a failed boot: what happened, the console's last lines, what QEMU said.
pub(super) fn failure(what: String, console: &Path, qemu_err: &Tail) -> String {
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

pub(super) fn kill_child(c: &mut Child) {
    let _ = c.kill();
    let _ = c.wait();
}

/// Starts QEMU and waits for the guest's hello.
pub(super) fn boot(plan: &Plan, timeout: Duration, sh: &Shared) -> Result<Booted, BootFail> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::tempdir::TempDir;

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
