//! The error of the sources: always the file, where in it, and what was expected. The layers
//! below have their own typed errors (`binary::cursor::BinError`, `text::chunk::BadLine`,
//! `tracefs::format::FormatError`, `tracefs::decode::DecodeError`, ...) that become one of these
//! with the file's name once they reach a reader's entry point.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

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
#[error("{}{location}: {message}", shown_name(path))]
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

/// A file name as a message shows it: control characters (an escape sequence, a newline) and
/// the bidirectional overrides that reorder what follows are escaped (`\u{1b}`), so a name
/// cannot drive the terminal or break the line; everything else is kept as it is.
pub fn shown_name(name: &str) -> Cow<'_, str> {
    let hostile =
        |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !name.chars().any(hostile) {
        return Cow::Borrowed(name);
    }
    let mut s = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        match c {
            '\n' => s.push_str("\\n"),
            '\r' => s.push_str("\\r"),
            '\t' => s.push_str("\\t"),
            c if hostile(c) => s.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => s.push(c),
        }
    }
    Cow::Owned(s)
}

/// [`shown_name`] of a path (not valid UTF-8: lossily, as `Path::display` shows it).
pub fn shown_path(path: &Path) -> String {
    shown_name(&path.to_string_lossy()).into_owned()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An escape sequence in a file name reaches the terminal escaped (issue 15).
    #[test]
    fn file_names_are_shown_escaped() {
        let e = SourceError::at_line("a\u{1b}[31mred\nx\u{202e}.txt", 3, "expected a line");
        assert_eq!(
            e.to_string(),
            "a\\u{1b}[31mred\\nx\\u{202e}.txt:3: expected a line"
        );
        assert!(matches!(shown_name("traces/ok ü.txt"), Cow::Borrowed(_)));
        assert_eq!(shown_path(Path::new("x\ty")), "x\\ty");
        assert_eq!(shown_name("\u{7f}"), "\\u{7f}");
    }
}
