//! How a load runs: options, and the progress it reports.

use crate::events::Format;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Progress of a load, shared with whoever shows it; `cancel` stops the load early.
#[derive(Debug, Default)]
pub struct Progress {
    pub done: AtomicU64,
    pub total: AtomicU64,
    pub cancel: AtomicBool,
}

impl Progress {
    pub fn fraction(&self) -> f64 {
        let t = self.total.load(Ordering::Relaxed);
        if t == 0 {
            return 0.0;
        }
        (self.done.load(Ordering::Relaxed) as f64 / t as f64).min(1.0)
    }
}

#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Skip detection and read the input as this format.
    pub format: Option<Format>,
    /// Skip malformed lines (counted in a warning) instead of stopping at the first one.
    pub skip_bad_lines: bool,
    /// Parse on one thread (tests compare this with the parallel parse).
    pub serial: bool,
    /// Load even when the estimate says the capture will not fit in memory.
    pub no_memory_check: bool,
    /// Threads for the parse (default: one per core for inputs of 8 MB and more).
    pub threads: Option<usize>,
    /// Bytes per delta of a streaming load (default `text::driver::SEGMENT_BYTES`; tests use small ones).
    pub segment_bytes: Option<usize>,
    pub progress: Option<Arc<Progress>>,
    /// Where a text load is: the input bytes whose events the sink has been handed (set by
    /// the text driver in input order; the mapped file's pages before it can be given back).
    pub consumed: Option<Arc<std::sync::atomic::AtomicU64>>,
    /// trace.dat: the buffer to read, by its instance name (`""`: the top-level one); default:
    /// the top-level buffer (or the one instance holding data). The others are counted.
    pub instance: Option<String>,
}

impl LoadOptions {
    pub fn cancelled(&self) -> bool {
        self.progress
            .as_ref()
            .is_some_and(|p| p.cancel.load(Ordering::Relaxed))
    }
}
