//! The command line's errors: everything `cidscope` prints after `cidscope: ` before it exits 2.
//! The layers' own errors pass through as they are (they name the file, line or byte offset);
//! what the CLI adds names the flag or the output file.

use crate::sources::SourceError;
use crate::sources::live::LiveError;
use crate::ui::UiError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Flags that do not go together, or a value the flag's parser cannot judge alone; the
    /// message names the flag.
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Live(#[from] LiveError),
    #[error(transparent)]
    Ui(#[from] UiError),
    #[error(transparent)]
    Theme(#[from] crate::ui::theme::ThemeError),
    #[error(transparent)]
    Keys(#[from] crate::ui::keys::KeysError),
    #[error(transparent)]
    Demo(#[from] crate::demo::DemoError),
    #[error(transparent)]
    Vm(#[from] crate::vm::VmError),
    #[error(transparent)]
    Sim(#[from] crate::sim::SimError),
    /// `CIDSCOPE_MEMORY_LIMIT` is not a size.
    #[error(transparent)]
    MemoryLimit(#[from] crate::sources::memory::BadLimit),
    /// `--record` of live and attach, written as the capture arrives.
    #[error(transparent)]
    Recording(#[from] crate::export::record::RecordError),
    /// An output file (`--perfetto`, `--csv`, `--svg`) that could not be written.
    #[error("{}: {source}", crate::sources::shown_path(path))]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `--perfetto`'s JSON could not be written.
    #[error("{}: {source}", crate::sources::shown_path(path))]
    WriteJson {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// `sim --record`.
    #[error(
        "{}: cannot write the recorded schedule: {source}",
        crate::sources::shown_path(path)
    )]
    WriteSchedule {
        path: PathBuf,
        source: std::io::Error,
    },
    /// stdout (a closed pipe is not an error).
    #[error("writing output: {0}")]
    Stdout(std::io::Error),
    /// `cidscope man --dir`.
    #[error("writing the man pages: {0}")]
    Man(std::io::Error),
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// A stream's reader could not install the SIGINT handler that ends it.
    #[error("cannot watch for SIGINT: {0}")]
    Sigint(std::io::Error),
}
