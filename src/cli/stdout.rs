//! Writing to stdout: a reader that went away (`cidscope stats ... | head`) is not an error.

use std::io::Write;

/// Writes `bytes` whole.
pub fn write(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    pipe_closed_is_ok(out.write_all(bytes).and_then(|_| out.flush()))
}

/// A write to stdout's outcome, a closed pipe taken as done.
pub fn pipe_closed_is_ok(r: std::io::Result<()>) -> std::io::Result<()> {
    match r {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e),
        _ => Ok(()),
    }
}

/// Buffered stdout, for output written while it is made.
pub fn buffered() -> std::io::BufWriter<std::io::StdoutLock<'static>> {
    std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock())
}
