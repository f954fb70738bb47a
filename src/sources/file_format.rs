//! What a capture file format is to cidscope: how to recognise it, how to read it, how much
//! memory reading it takes. Each format is one type implementing [`FileFormat`], in its own file
//! under `formats/`, listed once in [`crate::sources::formats::FORMATS`].

use crate::events::{EventChunks, Format, Trace, TraceDelta};
use crate::sources::error::SourceError;
use crate::sources::options::LoadOptions;
use crate::sources::text::bom::strip_bom;
use crate::sources::text::chunk::LineParser;

/// Which format wins when two show on the same line of a capture (the earlier variant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// A magic number at byte 0: no other format can be that file.
    Magic,
    /// A line only this format writes (ftrace's `COMM-PID [CPU]` columns, a tracefs header,
    /// trace-cmd's preamble).
    Specific,
    /// A line shape other formats' lines can take too (`perf script`'s `TIME: SYS:EVENT:`).
    Loose,
}

impl Priority {
    pub const ALL: [Priority; 3] = [Priority::Magic, Priority::Specific, Priority::Loose];
}

/// The start of a capture, as detection looks at it.
#[derive(Clone, Copy, Debug)]
pub struct Sample<'a> {
    data: &'a [u8],
}

impl<'a> Sample<'a> {
    /// Lines of the head that text formats are told apart by.
    pub const LINES: usize = 400;
    /// Bytes of the head those lines are taken from.
    pub const HEAD_BYTES: usize = 256 << 10;

    pub fn new(data: &'a [u8]) -> Sample<'a> {
        Sample { data }
    }

    /// The whole input (for magic numbers).
    pub fn bytes(&self) -> &'a [u8] {
        self.data
    }

    /// The first [`Self::LINES`] lines of the first [`Self::HEAD_BYTES`] (the last one may be
    /// cut).
    /// A UTF-8 byte order mark before the first line is no part of it.
    pub fn lines(&self) -> impl Iterator<Item = &'a [u8]> + use<'a> {
        let head = strip_bom(&self.data[..self.data.len().min(Self::HEAD_BYTES)]);
        head.split(|&b| b == b'\n').take(Self::LINES)
    }
}

/// How a text format is parsed line by line: what a stream of it is read with.
#[derive(Clone, Copy)]
pub struct TextLines {
    pub parser: &'static dyn LineParser,
    /// The format the capture turns out to be when no `#` header line shows.
    pub headerless: Option<Format>,
}

/// One capture file format.
pub trait FileFormat: Sync {
    /// The format this reads; its id is the `format` value of `stats --json`.
    fn format(&self) -> Format;

    /// The `--format` value naming it, and its help line.
    fn cli_name(&self) -> &'static str;
    fn cli_help(&self) -> &'static str;

    /// The line (0 for a magic number) where the content first shows this format, or `None`.
    /// Detection takes the format with the earliest line, then the higher [`Priority`].
    fn sniff(&self, sample: &Sample) -> Option<usize>;
    fn priority(&self) -> Priority;

    /// Bytes of memory a load takes per byte of input, measured on the sample captures (events,
    /// strings and the timeline index together), with headroom.
    fn memory_factor(&self) -> f64;

    /// [`FileFormat::memory_factor`] of the capture whose first bytes are `head` (all of it
    /// when mapped; read only as far as needed): where its content changes what a byte holds
    /// (a compressed trace.dat or perf.data holds several times the events of an uncompressed
    /// one).
    fn memory_factor_of(&self, _head: &[u8]) -> f64 {
        self.memory_factor()
    }

    /// For a line-oriented text format, its line parser: a stream of it is parsed as it
    /// arrives. `None` for binary formats, which are gathered whole and then decoded. `head` is
    /// the capture's first bytes (a parser may depend on them: perf script's `--deltatime`).
    fn text(&self, _head: &[u8]) -> Option<TextLines> {
        None
    }

    /// Parses the capture, handing its events to `sink` in deltas as they are read; `sink`
    /// returns false to stop early. Applied in order to `Trace::new(name, self.format())`, the
    /// deltas give what [`FileFormat::load`] gives before its final sort. A line format reads
    /// with the parser its [`FileFormat::text`] names; binary formats implement it.
    fn stream(
        &self,
        name: &str,
        data: &[u8],
        opts: &LoadOptions,
        sink: &mut dyn FnMut(&mut TraceDelta) -> bool,
    ) -> Result<(), SourceError> {
        let Some(t) = self.text(data) else {
            return Err(SourceError::file(
                name,
                format!("internal error: {} has no reader", self.format()),
            ));
        };
        crate::sources::text::driver::stream_text(name, data, t.parser, t.headerless, opts, sink)
    }

    /// Parses the whole capture into a trace in time order.
    fn load(&self, name: &str, data: &[u8], opts: &LoadOptions) -> Result<Trace, SourceError> {
        Trace::from_deltas(name, self.format(), |sink| {
            self.stream(name, data, opts, sink)
        })
    }

    /// [`FileFormat::load`], running `beside` on another thread over the events in time order
    /// while the load's last stage packs them into the trace's store (a first pass that need
    /// not wait for the store). The second value: `beside` ran, and saw the trace's events in
    /// the trace's order (false: this format does not run it, or the events came out of
    /// order and were sorted after it saw them). A format whose events are ready only in the
    /// store runs nothing beside.
    fn load_beside(
        &self,
        name: &str,
        data: &[u8],
        opts: &LoadOptions,
        _beside: &BesidePass<'_>,
    ) -> Result<(Trace, bool), SourceError> {
        Ok((self.load(name, data, opts)?, false))
    }
}

/// A pass over a capture's events beside its load: the trace's metadata (tasks, TGID changes;
/// no events yet) and the events in time order, in pieces.
pub type BesidePass<'a> = dyn Fn(&Trace, &mut dyn EventChunks) + Sync + 'a;
