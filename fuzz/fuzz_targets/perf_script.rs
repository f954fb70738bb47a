//! Fuzz target: `perf script` text. A reader must answer every input with events or an error
//! naming where, never a panic, hang or runaway allocation; what it loads must index and render.
#![no_main]

use cidscope::sources::formats::PERF_SCRIPT;
use cidscope::sources::{LoadOptions, load_bytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let opts = LoadOptions {
        format: Some(PERF_SCRIPT),
        serial: true,
        ..Default::default()
    };
    if let Ok(trace) = load_bytes("fuzz", data, &opts) {
        cidscope_fuzz::exercise(&trace);
    }
});
