//! The TUI's one system call std does not wrap: stopping its job as the terminal's Ctrl-Z would.

use std::io;

/// Stops this process's group with SIGTSTP under its default action, as the terminal driver
/// does on Ctrl-Z (raw mode turns Ctrl-Z into a key, and the TUI's handler catches SIGTSTP):
/// the shell sees the whole job stopped (a wrapper such as `cargo run` too) and takes the
/// terminal back. Returns once the job is continued (`fg`, SIGCONT), the handler reinstalled.
/// In a process group without a shell to return to (orphaned), the kernel discards the signal
/// and this returns at once.
pub fn stop_job() -> io::Result<()> {
    // SAFETY: sigaction with zeroed (valid) structs and SIG_DFL; the previous action, saved
    // here, is put back unchanged before returning, so the signal-hook handler it names stays
    // registered as before. kill(0, ...) only sends a signal.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGTSTP, &dfl, &mut old) != 0 {
            return Err(io::Error::last_os_error());
        }
        // A signal sent to a group holding the caller is delivered before kill returns: the
        // process stops inside this call and goes on from here once continued.
        let sent = libc::kill(0, libc::SIGTSTP);
        let err = io::Error::last_os_error();
        libc::sigaction(libc::SIGTSTP, &old, std::ptr::null_mut());
        if sent != 0 {
            return Err(err);
        }
    }
    Ok(())
}
