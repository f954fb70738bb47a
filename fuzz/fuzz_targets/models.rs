//! Fuzz target: random event streams through every CID model (with invariant checks), the
//! observed state, the index and the views. Nothing may panic, hang or run away.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let trace = cidscope::testing::trace_from_bytes(data);
    cidscope::testing::exercise_models(&trace);
});
