//! Fuzz target: a capture read as a stream through the input layer — the compression's magic
//! number sniffed, gzip / zstd / xz decoded on the fly, the format detected on the head, text
//! parsed as it arrives, binaries gathered. Every input must load or be refused cleanly; a
//! decompression bomb meets the memory check of the decompressed side.
#![no_main]

use cidscope::sources::{LoadOptions, open_reader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let opts = LoadOptions {
        serial: true,
        ..Default::default()
    };
    let Ok(opened) = open_reader("fuzz", std::io::Cursor::new(data.to_vec()), &opts) else {
        return;
    };
    if let Ok(trace) = opened.load(&opts) {
        cidscope_fuzz::exercise(&trace);
    }
});
