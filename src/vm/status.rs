//! A run's progress, shared by the host's threads (the run, QEMU's start, the stream) and read by
//! the caller: the phase, the status snapshot, the stream's text kept for the TUI, and the stop
//! and kill requests.

use super::protocol::Hello;
use super::qemu::Accel;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Preparing,
    Booting(Accel),
    Running,
    /// The workload ended; the rest of the capture is arriving.
    Collecting,
    Done,
    Failed,
}

/// A snapshot for progress lines.
#[derive(Clone, Debug)]
pub struct Status {
    pub phase: Phase,
    pub hello: Option<Hello>,
    /// Event lines received so far (attach mode: the guest's own count until the end).
    pub events: u64,
    pub bytes: u64,
    pub elapsed: Duration,
    pub boot: Option<Duration>,
    /// Things worth telling (a fallback to TCG, guest warnings), in order.
    pub notes: Vec<String>,
    pub initrd_bytes: u64,
    /// CONFIG_HZ of the guest kernel and where it came from, once known.
    pub hz: Option<(u32, String)>,
    /// CONFIG_RSEQ_CID_SCAN_BATCH of the guest kernel, once known (patched kernels only).
    pub scan_batch: Option<u32>,
}

pub(super) struct Shared {
    pub(super) status: Mutex<Status>,
    pub(super) text: Mutex<Vec<u8>>,
    /// Text not kept because the consumer fell this far behind (bytes).
    pub(super) text_dropped: AtomicU64,
    pub(super) stop: AtomicBool,
    pub(super) kill: AtomicBool,
    pub(super) started: Instant,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, Status> {
        self.status.lock().unwrap_or_else(|p| p.into_inner())
    }
    pub(super) fn note(&self, n: String) {
        self.lock().notes.push(n);
    }
    pub(super) fn phase(&self, p: Phase) {
        self.lock().phase = p;
    }
}

/// The most text kept for a consumer that does not take it (then it is counted, not kept).
pub(super) const MAX_KEPT_TEXT: usize = 256 << 20;
