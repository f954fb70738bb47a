//! SIGINT as the end of a stream: headless `stats` on `trace_pipe` (or any pipe) reads until
//! Ctrl-C and then summarises what it read. A second SIGINT ends the process as usual.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Whether a SIGINT asked the streams to end.
pub fn requested() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::Relaxed))
}

/// From now on the first SIGINT ends every stream being read (as if the input ended there);
/// a second one terminates the process. Call only when the input is a stream: a file's load
/// stays interruptible at once.
pub fn end_streams_on_sigint() -> std::io::Result<()> {
    use signal_hook::consts::SIGINT;
    let flag = FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)));
    // the second SIGINT (flag already set) takes the default action: the process ends
    signal_hook::flag::register_conditional_default(SIGINT, Arc::clone(flag))?;
    signal_hook::flag::register(SIGINT, Arc::clone(flag))?;
    Ok(())
}
