//! Fuzz target: systrace / Perfetto legacy HTML — the trace-data blocks and the old
//! linuxPerfData JavaScript string taken out of the page, then read as ftrace text.
#![no_main]

use cidscope::sources::formats::SYSTRACE_HTML;
use cidscope::sources::{LoadOptions, load_bytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let opts = LoadOptions {
        format: Some(SYSTRACE_HTML),
        serial: true,
        ..Default::default()
    };
    if let Ok(trace) = load_bytes("fuzz", data, &opts) {
        cidscope_fuzz::exercise(&trace);
    }
});
