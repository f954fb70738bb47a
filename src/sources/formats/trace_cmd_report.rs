//! `trace-cmd report` text: ftrace event lines after a `cpus=` / `version = ` preamble, with
//! trace-cmd's plugin forms of sched_switch and hrtimer events.

use crate::events::Format;
use crate::sources::file_format::{FileFormat, Priority, Sample, TextLines};
use crate::sources::text::ftrace::{Family, FtraceText, sniff_family};

pub const TRACE_CMD_REPORT: Format = Format::new("trace-cmd-report", "trace-cmd report text");

pub struct TraceCmdReport;

impl FileFormat for TraceCmdReport {
    fn format(&self) -> Format {
        TRACE_CMD_REPORT
    }
    fn cli_name(&self) -> &'static str {
        "trace-cmd-report"
    }
    fn cli_help(&self) -> &'static str {
        "`trace-cmd report` text"
    }
    fn sniff(&self, sample: &Sample) -> Option<usize> {
        sniff_family(sample)
            .filter(|&(_, f)| f == Family::Report)
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
