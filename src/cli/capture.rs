//! Opening a capture for a headless command (`stats`, `export`, `--check`): a stream (a pipe,
//! standard input, tracefs `trace_pipe`) has no end of its own, so the first SIGINT ends it and
//! the command summarises what was read before it.

use super::CliError;
use crate::sources::{self, LoadOptions, Opened};
use std::path::Path;

/// Opens `path` (`-`: standard input); when it is a stream, SIGINT ends it from now on.
pub fn open(path: &Path, opts: &LoadOptions) -> Result<Opened, CliError> {
    // a stream is read from its first bytes on (detection waits for them): SIGINT ends it
    // from before then, or a writer that sends nothing would leave Ctrl-C without a word
    let stream = path.as_os_str() == "-"
        || std::fs::metadata(path).is_ok_and(|m| !m.is_file() || m.len() == 0);
    if stream {
        sources::input::interrupt::end_streams_on_sigint().map_err(CliError::Sigint)?;
    }
    let opened = sources::open(path, opts)?;
    if !opened.rereadable() && !stream {
        sources::input::interrupt::end_streams_on_sigint().map_err(CliError::Sigint)?;
    }
    Ok(opened)
}

/// Says so on stderr when a SIGINT ended the input.
pub fn note_interrupt() {
    if sources::input::interrupt::requested() {
        eprintln!("cidscope: the input was ended by SIGINT; this covers what was read before it");
    }
}

/// A headless load's progress on stderr, when stderr is a terminal and the load takes more
/// than a second: `cidscope: FILE: 45% (460 of 1020 MB)`, the line cleared at the end. A big
/// capture is never read in silence.
pub struct StderrProgress {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StderrProgress {
    /// Starts reporting the progress of loads made with `opts` (which it sets up).
    pub fn start(opts: &mut LoadOptions, name: &str) -> StderrProgress {
        use std::io::IsTerminal;
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        if !std::io::stderr().is_terminal() || opts.progress.is_some() {
            return StderrProgress { stop, thread: None };
        }
        let p = std::sync::Arc::new(sources::Progress::default());
        opts.progress = Some(std::sync::Arc::clone(&p));
        let (flag, name) = (
            std::sync::Arc::clone(&stop),
            crate::sources::shown_name(name).into_owned(),
        );
        let thread = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                let started = std::time::Instant::now();
                let mut shown = false;
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(std::time::Duration::from_millis(200));
                    if started.elapsed() < std::time::Duration::from_secs(1) {
                        continue;
                    }
                    let (done, total) = (
                        p.done.load(Ordering::Relaxed),
                        p.total.load(Ordering::Relaxed),
                    );
                    let line = if total > 0 {
                        format!(
                            "{:.0}% ({} of {} MB)",
                            p.fraction() * 100.0,
                            done >> 20,
                            total >> 20
                        )
                    } else {
                        format!("{} MB read", done >> 20)
                    };
                    eprint!(
                        "\r\x1b[Kcidscope: {name}: {line}, {}s",
                        started.elapsed().as_secs()
                    );
                    shown = true;
                }
                if shown {
                    eprint!("\r\x1b[K");
                }
            })
            .ok();
        StderrProgress { stop, thread }
    }
}

impl Drop for StderrProgress {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
