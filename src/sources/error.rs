//! The error of the sources: always the file, where in it, and what was expected. The layers
//! below have their own typed errors (`binary::cursor::BinError`, `text::chunk::BadLine`,
//! `tracefs::format::FormatError`, `tracefs::decode::DecodeError`, ...) that become one of these
//! with the file's name once they reach a reader's entry point.

use std::fmt;

/// Where in the input a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// 1-based line of a text file.
    Line(u64),
    /// Byte offset in a binary file.
    Offset(u64),
    /// The file as a whole (open failed, empty, ...).
    File,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}{location}: {message}")]
pub struct SourceError {
    pub path: String,
    pub location: Location,
    /// What went wrong, phrased as "expected X, found Y" where that fits.
    pub message: String,
}

impl SourceError {
    pub fn new(path: &str, location: Location, message: impl Into<String>) -> SourceError {
        SourceError {
            path: path.to_string(),
            location,
            message: message.into(),
        }
    }

    pub fn at_line(path: &str, line: u64, message: impl Into<String>) -> SourceError {
        Self::new(path, Location::Line(line), message)
    }

    pub fn at_offset(path: &str, offset: u64, message: impl Into<String>) -> SourceError {
        Self::new(path, Location::Offset(offset), message)
    }

    pub fn file(path: &str, message: impl Into<String>) -> SourceError {
        Self::new(path, Location::File, message)
    }
}

/// How a location follows the file's name: `x.txt:3`, `x.dat: at byte offset 10`, `x`.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(n) => write!(f, ":{n}"),
            Location::Offset(o) => write!(f, ": at byte offset {o}"),
            Location::File => Ok(()),
        }
    }
}

/// Shows at most `max` bytes of a line in an error message, escaped so it stays on one line.
pub fn excerpt(line: &[u8], max: usize) -> String {
    let cut = &line[..line.len().min(max)];
    let mut s = String::from_utf8_lossy(cut).escape_debug().to_string();
    if line.len() > max {
        s.push('…');
    }
    s
}
