//! Sources: everything that turns a capture into canonical events. Nothing here knows the UI.
//!
//! Formats are detected from content (magic numbers, headers, the shape of the first lines),
//! never from the file name; `--format` overrides detection. Each file format is a type in
//! `formats/` implementing [`file_format::FileFormat`].

pub mod binary;
pub mod error;
pub mod file_format;
pub mod formats;
pub mod input;
pub mod live;
pub mod memory;
pub mod open;
pub mod options;
pub mod perf_data;
pub mod sys;
pub mod text;
pub mod trace_dat;
pub mod tracefs;

pub use error::{Location, SourceError, shown_name, shown_path};
pub use open::{Bytes, Opened, detect, load, load_bytes, open, open_reader, open_static};
pub use options::{LoadOptions, Progress};
