//! The UI's errors: what ends a TUI run, and what is wrong with a line typed at a prompt.

use crate::sources::SourceError;
use crate::sources::live::LiveError;

/// Why a TUI run (or a picture of its lanes, `export --svg`) ended with an error.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    #[error(
        "the TUI needs a terminal (stdin and stdout); for headless output use `cidscope stats`, `sim --json` or `live --json`"
    )]
    NoTerminal,
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
    #[error("cannot start the loader thread: {0}")]
    LoaderThread(#[source] std::io::Error),
    /// The capture failed before any of its events arrived (after some, the TUI shows them).
    #[error(transparent)]
    Load(#[from] SourceError),
    /// The live session did not stop cleanly.
    #[error(transparent)]
    Live(#[from] LiveError),
    /// `export --svg` of a capture without events.
    #[error("{path}: no events to draw")]
    NothingToDraw { path: String },
    /// `export --svg --from/--to` with `to` at or before `from`.
    #[error("--from/--to: the window is empty ({from} to {to} after the first event)")]
    EmptyWindow { from: String, to: String },
    /// `export --svg --tgid N` of a process the capture does not have.
    #[error("--tgid {0}: no such process in the capture (`cidscope stats` lists them)")]
    NoSuchTgid(u32),
}

/// A search or CPU list that cannot be used: shown on the message line, the prompt closes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error("empty search: type a tid, a comm or cid:N")]
    EmptySearch,
    #[error("{what}: expected a number, found \"{found}\"")]
    NotANumber { what: &'static str, found: String },
    #[error("CPU list: expected N or N-M, found \"{part}\"")]
    CpuListSyntax { part: String },
    #[error("CPU list: {part} is outside 0-{max}")]
    CpuOutOfRange { part: String, max: usize },
    #[error(
        "go to: expected +1.5ms (from the start), 1639.2041 (seconds, as the cursor pane shows), #1234 (an event) or 50%, found \"{found}\""
    )]
    GoToSyntax { found: String },
    #[error("go to: event {n} is past the last, {last}")]
    NoSuchEvent { n: u64, last: usize },
}
