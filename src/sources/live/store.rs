//! What the capture thread and the session share: the published events (in chunks that never
//! move), samples and task log, and the counters.

use super::rseq_area::RseqSample;
use super::workload::Workload;
use crate::events::{Event, EventAux, Tid, Trace};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Mutex, MutexGuard};

/// An append-only sequence in fixed-size chunks: appending never moves what is stored, so the
/// capture never stalls on a reallocation (copying a large Vec and faulting in its new pages
/// takes tens of ms, long enough for a busy ring buffer to overflow).
pub(super) struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    pub(super) len: usize,
}

impl<T: Copy> Chunked<T> {
    pub(super) const CHUNK: usize = 1 << 18;

    pub(super) fn new() -> Self {
        Chunked {
            chunks: Vec::new(),
            len: 0,
        }
    }

    pub(super) fn extend(&mut self, mut items: &[T]) {
        while !items.is_empty() {
            if self.chunks.last().is_none_or(|c| c.len() == Self::CHUNK) {
                self.chunks.push(Vec::with_capacity(Self::CHUNK));
            }
            let Some(last) = self.chunks.last_mut() else {
                return;
            };
            let n = (Self::CHUNK - last.len()).min(items.len());
            last.extend_from_slice(&items[..n]);
            items = &items[n..];
            self.len += n;
        }
    }

    /// Copies items `start..` into one Vec.
    pub(super) fn copy_from(&self, start: usize) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len.saturating_sub(start));
        let mut skip = start;
        for c in &self.chunks {
            if skip >= c.len() {
                skip -= c.len();
                continue;
            }
            out.extend_from_slice(&c[skip..]);
            skip = 0;
        }
        out
    }
}

/// What the capture thread publishes for the session to read.
pub(super) struct Store {
    /// Strings, tasks and warnings; its events live in `events` until the trace is assembled.
    pub(super) trace: Trace,
    pub(super) events: Chunked<Event>,
    pub(super) aux: Chunked<EventAux>,
    pub(super) samples: Vec<RseqSample>,
    /// Tids whose TaskMeta was inserted or changed, in order (for batches).
    pub(super) task_log: Vec<Tid>,
}

/// The state the capture thread and the session share.
pub(super) struct Shared {
    pub(super) store: Mutex<Store>,
    pub(super) stop: AtomicBool,
    pub(super) finished: AtomicBool,
    pub(super) started_ns: AtomicU64,
    pub(super) ended_ns: AtomicU64,
    pub(super) events: AtomicU64,
    pub(super) events_seen: AtomicU64,
    pub(super) rate_bits: AtomicU64,
    pub(super) lost: AtomicU64,
    pub(super) samples: AtomicU64,
    pub(super) samples_dropped: AtomicU64,
    pub(super) events_dropped: AtomicU64,
    pub(super) decode_errors: AtomicU64,
    pub(super) error: Mutex<Option<String>>,
    /// The workload, started after recording began, waiting for the capture thread to take it.
    pub(super) handoff: Mutex<Option<Workload>>,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, Store> {
        // A panic while holding the lock leaves consistent data (appends only): keep going.
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_appends_across_chunks_and_copies_any_suffix() {
        let mut c: Chunked<u32> = Chunked::new();
        let n = Chunked::<u32>::CHUNK;
        let a: Vec<u32> = (0..(n + 10) as u32).collect();
        c.extend(&a[..5]);
        c.extend(&a[5..]);
        c.extend(&[]);
        assert_eq!(c.len, n + 10);
        assert_eq!(c.chunks.len(), 2);
        assert_eq!(c.copy_from(0), a);
        assert_eq!(c.copy_from(n - 1), a[n - 1..].to_vec());
        assert_eq!(c.copy_from(n + 3), a[n + 3..].to_vec());
        assert!(c.copy_from(n + 10).is_empty());
        assert!(c.copy_from(n + 99).is_empty());
    }
}
