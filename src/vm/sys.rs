//! Every `unsafe` block of `cidscope vm`: the few system calls std does not wrap. Host side:
//! the QEMU child dies with us (`PR_SET_PDEATHSIG`). Guest side (cidscope as PID 1): mounts,
//! power-off, a raw console, thread names, `uname`, `fork` for the fork workload.

use std::io;
use std::os::fd::AsRawFd;

fn cstring(s: &str) -> io::Result<std::ffi::CString> {
    std::ffi::CString::new(s)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "string holds a NUL byte"))
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Makes a child process receive SIGKILL when this process dies, so a QEMU never outlives the
/// `cidscope vm` that started it (a crash, a SIGKILL).
pub fn kill_with_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and only calls prctl, which is
    // async-signal-safe; it touches no memory shared with the parent.
    unsafe {
        cmd.pre_exec(|| check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0)));
    }
}

/// Runs `f` when the process exits through `exit()` (`std::process::exit` included: the TUI's
/// signal watchdog leaves that way), where destructors do not run.
pub fn at_exit(f: extern "C" fn()) {
    // SAFETY: `f` is a plain function with the signature atexit expects; it lives forever.
    unsafe {
        libc::atexit(f);
    }
}

/// `mount -t FSTYPE SOURCE TARGET`.
pub fn mount(source: &str, target: &str, fstype: &str) -> io::Result<()> {
    let (s, t, f) = (cstring(source)?, cstring(target)?, cstring(fstype)?);
    // SAFETY: all strings are NUL-terminated and outlive the call; no data argument.
    check(unsafe { libc::mount(s.as_ptr(), t.as_ptr(), f.as_ptr(), 0, std::ptr::null()) })
}

/// Flushes what is written and powers the machine off (QEMU then exits). Never returns.
pub fn power_off() -> ! {
    // SAFETY: sync and reboot take no pointers; reboot only returns on failure.
    unsafe {
        libc::sync();
        libc::reboot(libc::RB_POWER_OFF);
    }
    // Not PID 1, or not allowed: nothing else to do but stop here.
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

/// Puts a terminal (the virtio console) in raw mode: no echo of what the host sends, no
/// `\n` → `\r\n` on what the guest writes, no line editing.
pub fn set_raw(fd: &impl AsRawFd) -> io::Result<()> {
    // SAFETY: an all-zero termios is a valid value of this plain C struct.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: `t` is a valid, writable termios; the fd is open for the duration of the calls.
    unsafe {
        check(libc::tcgetattr(fd.as_raw_fd(), &mut t))?;
        libc::cfmakeraw(&mut t);
        check(libc::tcsetattr(fd.as_raw_fd(), libc::TCSANOW, &t))
    }
}

/// Waits until what was written to a terminal has gone out.
pub fn drain(fd: &impl AsRawFd) {
    // SAFETY: plain integer argument; a failure (not a tty) is harmless here.
    unsafe {
        libc::tcdrain(fd.as_raw_fd());
    }
}

/// Names the calling thread (its `comm`, at most 15 bytes).
pub fn set_thread_name(name: &str) {
    let mut b: Vec<u8> = name.bytes().filter(|&c| c != 0).take(15).collect();
    b.push(0);
    // SAFETY: `b` is NUL-terminated and at most 16 bytes, as PR_SET_NAME reads.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, b.as_ptr() as libc::c_ulong, 0, 0, 0);
    }
}

/// Guest: the kernel log (`dmesg`, `syslog(SYSLOG_ACTION_READ_ALL)`), empty when unreadable.
pub fn kernel_log() -> String {
    const READ_ALL: libc::c_int = 3;
    const SIZE_BUFFER: libc::c_int = 10;
    // SAFETY: SIZE_BUFFER takes no buffer
    let n = unsafe { libc::klogctl(SIZE_BUFFER, std::ptr::null_mut(), 0) };
    if n <= 0 {
        return String::new();
    }
    let mut buf = vec![0u8; n as usize];
    // SAFETY: buf is n bytes long
    let got = unsafe { libc::klogctl(READ_ALL, buf.as_mut_ptr().cast(), n) };
    if got <= 0 {
        return String::new();
    }
    buf.truncate(got as usize);
    String::from_utf8_lossy(&buf).into_owned()
}

/// `uname -r`.
pub fn kernel_release() -> String {
    // SAFETY: an all-zero utsname is a valid value of this plain C struct.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return "unknown".into();
    }
    let bytes: Vec<u8> = u
        .release
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `fork()`: `Some(pid)` in the parent, `None` in the child.
///
/// Only for a process that has no other thread yet (the fork workload forks before it starts
/// any): a child of a multi-threaded process may find locks held by threads that are gone.
pub fn fork_single_threaded() -> io::Result<Option<u32>> {
    // SAFETY: the caller guarantees the process is single-threaded (see above), so the child
    // inherits no lock held by another thread.
    let pid = unsafe { libc::fork() };
    match pid {
        p if p < 0 => Err(io::Error::last_os_error()),
        0 => Ok(None),
        p => Ok(Some(p as u32)),
    }
}

/// Waits for any child; `None` when there is none left.
pub fn wait_any() -> Option<(u32, i32)> {
    let mut status = 0;
    // SAFETY: `status` is a valid, writable int.
    let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
    (pid > 0).then_some((pid as u32, status))
}

/// Ends the calling process at once, without running destructors or atexit handlers (a forked
/// child must not flush or free what its parent owns).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns and has no preconditions.
    unsafe { libc::_exit(code) }
}

/// Sends SIGTERM to a process we started.
pub fn terminate(pid: u32) {
    // SAFETY: plain integer arguments; `pid` is a child of this process.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGTERM);
    }
}

/// Waits until `fd` is readable or `timeout_ms` passed; true when readable.
pub fn poll_in(fd: &impl AsRawFd, timeout_ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `p` is one valid pollfd, as the count says.
    let r = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    r > 0 && p.revents & libc::POLLIN != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_and_thread_names() {
        assert!(crate::model::kernel::Release::parse(&kernel_release()).is_some());
        std::thread::spawn(|| {
            set_thread_name("cw-test-name-longer-than-15");
            let c = std::fs::read_to_string("/proc/thread-self/comm").unwrap();
            assert_eq!(c.trim_end(), "cw-test-name-lo");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_child_dies_with_its_parent_flag_set() {
        let mut cmd = std::process::Command::new("true");
        kill_with_parent(&mut cmd);
        assert!(cmd.status().unwrap().success());
    }
}
