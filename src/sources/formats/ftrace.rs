//! tracefs `trace` text: ftrace event lines under the `#` header tracefs prints.

use super::trace_pipe::TRACE_PIPE;
use crate::events::Format;
use crate::sources::file_format::{FileFormat, Priority, Sample, TextLines};
use crate::sources::text::ftrace::{Family, FtraceText, sniff_family};

pub const FTRACE: Format = Format::new("ftrace", "ftrace text (tracefs trace)");

pub struct Ftrace;

impl FileFormat for Ftrace {
    fn format(&self) -> Format {
        FTRACE
    }
    fn cli_name(&self) -> &'static str {
        "ftrace"
    }
    fn cli_help(&self) -> &'static str {
        "tracefs `trace` text"
    }
    fn sniff(&self, sample: &Sample) -> Option<usize> {
        sniff_family(sample)
            .filter(|&(_, f)| f == Family::Trace)
            .map(|(line, _)| line)
    }
    fn priority(&self) -> Priority {
        Priority::Specific
    }
    fn memory_factor(&self) -> f64 {
        // ~140 bytes per line → ~15 B stored event + ~9 B index per event, with room for the
        // parse buffers held while a chunk loads
        0.6
    }
    // `--format ftrace` on text without the header: it is trace_pipe text after all
    fn text(&self, _head: &[u8]) -> Option<TextLines> {
        Some(TextLines {
            parser: &FtraceText,
            headerless: Some(TRACE_PIPE),
        })
    }
}
