//! `perf script` text.

use crate::events::{Format, TraceDelta};
use crate::sources::error::SourceError;
use crate::sources::file_format::{FileFormat, Priority, Sample};
use crate::sources::options::LoadOptions;
use crate::sources::text::driver::stream_text;
use crate::sources::text::perf_script::{PerfScript as Lines, split_head};

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
        // `#` lines are the comments of `perf script --header`
        sample
            .lines()
            .position(|l| !l.starts_with(b"#") && split_head(l).is_some())
    }
    fn priority(&self) -> Priority {
        // an ftrace line can read as a perf script line too
        Priority::Loose
    }
    fn streams_by_segment(&self) -> bool {
        true
    }
    fn memory_factor(&self) -> f64 {
        // as ftrace text: ~140 bytes per line
        0.6
    }
    fn stream(
        &self,
        name: &str,
        data: &[u8],
        opts: &LoadOptions,
        sink: &mut dyn FnMut(&mut TraceDelta) -> bool,
    ) -> Result<(), SourceError> {
        stream_text(name, data, &Lines, None, opts, sink)
    }
}
