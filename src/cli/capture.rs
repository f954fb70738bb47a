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
