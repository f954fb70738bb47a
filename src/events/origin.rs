//! Where a trace comes from: a capture file of some format, a live session, the simulator.

use std::fmt;

/// A capture file format, as the reader that reads it names it (each reader in
/// `sources::formats` defines its own). `id` is the `format` value of `stats --json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    id: &'static str,
    description: &'static str,
}

impl Format {
    pub const fn new(id: &'static str, description: &'static str) -> Format {
        Format { id, description }
    }

    pub fn id(self) -> &'static str {
        self.id
    }

    pub fn describe(self) -> &'static str {
        self.description
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// Where a trace's events come from: a capture file, or cidscope itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Read from a capture file of this format.
    File(Format),
    /// Recorded by a live session.
    Live,
    /// Made by the simulator.
    Sim,
}

impl Origin {
    /// The `format` value of `stats --json`: the file format's id, `live` or `sim`.
    pub fn id(self) -> &'static str {
        match self {
            Origin::File(f) => f.id(),
            Origin::Live => "live",
            Origin::Sim => "sim",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Origin::File(f) => f.describe(),
            Origin::Live => "live session",
            Origin::Sim => "simulated schedule",
        }
    }

    /// The file format, for a trace read from a file.
    pub fn file_format(self) -> Option<Format> {
        match self {
            Origin::File(f) => Some(f),
            Origin::Live | Origin::Sim => None,
        }
    }
}

impl From<Format> for Origin {
    fn from(f: Format) -> Origin {
        Origin::File(f)
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}
