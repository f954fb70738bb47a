//! `perf script` text.

use crate::events::Format;
use crate::sources::file_format::{FileFormat, Priority, Sample, TextLines};
use crate::sources::text::perf_script::{is_untimed_sample, parser_for, split_head};

pub const PERF_SCRIPT: Format = Format::new("perf-script", "perf script text");

pub struct PerfScript;

impl FileFormat for PerfScript {
    fn format(&self) -> Format {
        PERF_SCRIPT
    }
    fn cli_name(&self) -> &'static str {
        "perf-script"
    }
    fn cli_help(&self) -> &'static str {
        "`perf script` text"
    }
    fn sniff(&self, sample: &Sample) -> Option<usize> {
        // `#` lines are the comments of `perf script --header`; a sample printed without its
        // time is recognised too, to be refused by what it lacks
        sample
            .lines()
            .position(|l| !l.starts_with(b"#") && (split_head(l).is_some() || is_untimed_sample(l)))
    }
    fn priority(&self) -> Priority {
        // an ftrace line can read as a perf script line too
        Priority::Loose
    }
    fn memory_factor(&self) -> f64 {
        // as ftrace text: ~140 bytes per line
        0.6
    }
    fn text(&self, head: &[u8]) -> Option<TextLines> {
        Some(TextLines {
            parser: parser_for(&head[..head.len().min(Sample::HEAD_BYTES)]),
            headerless: None,
        })
    }
}
