//! Android systrace / Perfetto legacy HTML: the ftrace text inside the viewer page
//! (`text::html`), read as tracefs text. Errors name the page's line.

use crate::events::{Format, TraceDelta};
use crate::sources::error::{Location, SourceError};
use crate::sources::file_format::{FileFormat, Priority, Sample};
use crate::sources::options::LoadOptions;
use crate::sources::text::driver::stream_text;
use crate::sources::text::ftrace::FtraceText;
use crate::sources::text::html;

pub const SYSTRACE_HTML: Format =
    Format::new("systrace-html", "systrace HTML (ftrace text inside)");

pub struct SystraceHtml;

impl FileFormat for SystraceHtml {
    fn format(&self) -> Format {
        SYSTRACE_HTML
    }
    fn cli_name(&self) -> &'static str {
        "systrace-html"
    }
    fn cli_help(&self) -> &'static str {
        "Android systrace / Perfetto legacy HTML"
    }
    fn sniff(&self, sample: &Sample) -> Option<usize> {
        // the trace data may come megabytes into the page, after the viewer's script: a page
        // is claimed at once, and one without a capture says so
        html::looks_like_page(sample.bytes()).then_some(0)
    }
    fn priority(&self) -> Priority {
        Priority::Magic
    }
    fn memory_factor(&self) -> f64 {
        // the page (mostly the viewer's script) plus the text taken out of it
        1.6
    }
    fn stream(
        &self,
        name: &str,
        data: &[u8],
        opts: &LoadOptions,
        sink: &mut dyn FnMut(&mut TraceDelta) -> bool,
    ) -> Result<(), SourceError> {
        let e = html::extract(data).map_err(|e| SourceError::file(name, e.to_string()))?;
        let base = e.first_line - 1;
        stream_text(name, &e.text, &FtraceText, None, opts, sink).map_err(|mut err| {
            if let Location::Line(l) = err.location {
                err.location = Location::Line(l + base);
            }
            err
        })
    }
}
