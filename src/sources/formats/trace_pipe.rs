//! ftrace text without a header: tracefs `trace_pipe`, or `trace` with its header cut off.

use crate::events::Format;
use crate::sources::file_format::{FileFormat, Priority, Sample, TextLines};
use crate::sources::text::ftrace::{Family, FtraceText, sniff_family};

pub const TRACE_PIPE: Format = Format::new("trace_pipe", "ftrace text (trace_pipe / no header)");

pub struct TracePipe;

impl FileFormat for TracePipe {
    fn format(&self) -> Format {
        TRACE_PIPE
    }
    fn cli_name(&self) -> &'static str {
        "trace-pipe"
    }
    fn cli_help(&self) -> &'static str {
        "tracefs `trace_pipe` text (ftrace text without header)"
    }
    fn sniff(&self, sample: &Sample) -> Option<usize> {
        sniff_family(sample)
            .filter(|&(_, f)| f == Family::Pipe)
            .map(|(line, _)| line)
    }
    fn priority(&self) -> Priority {
        Priority::Specific
    }
    fn memory_factor(&self) -> f64 {
        // as tracefs `trace` text: ~140 bytes per line
        0.6
    }
    fn text(&self, _head: &[u8]) -> Option<TextLines> {
        Some(TextLines {
            parser: &FtraceText,
            headerless: None,
        })
    }
}
