//! tracefs data, wherever it comes from (trace.dat, perf.data's tracing data, a live tracefs):
//! the `format` files that give each tracepoint's fields, the raw records decoded through them,
//! and the "tracing data" block in which trace-cmd and perf store those files.

pub mod decode;
mod fields;
pub mod format;
pub mod tracing_data;
