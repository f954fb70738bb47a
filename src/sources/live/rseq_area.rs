//! A thread's view of its own rseq area: glibc's registration when glibc made one (glibc >= 2.35,
//! at the thread pointer plus `__rseq_offset`), else one cidscope registers for the thread (and
//! unregisters when the thread drops it).

use super::LiveError;
use crate::events::Tid;
use crate::sources::sys::{self, RseqArea};

/// One CID a thread read from its own rseq area: at `ts` (CLOCK_MONOTONIC ns) thread `tid` ran
/// on `cpu` holding `cid`. Reported when the values change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RseqSample {
    pub ts: u64,
    pub tid: Tid,
    pub cpu: u16,
    pub cid: i32,
}

/// Who registered the areas the workload reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Registration {
    /// glibc registered the area at thread start.
    Glibc,
    /// glibc did not (`__rseq_size` 0 or missing); cidscope registered it.
    Cidscope,
}

impl Registration {
    /// What this process will use: glibc's areas when glibc registers them.
    pub fn for_process() -> Registration {
        match sys::glibc_rseq() {
            Some(g) if g.size > 0 => Registration::Glibc,
            _ => Registration::Cidscope,
        }
    }
}

/// The calling thread's rseq area. Not `Send`: create it on the thread that reads it.
pub struct ThreadRseq {
    area: RseqArea,
    tid: Tid,
}

impl ThreadRseq {
    /// The area of the calling thread.
    pub fn current() -> Result<ThreadRseq, LiveError> {
        let area = match sys::glibc_rseq().and_then(RseqArea::glibc) {
            Some(a) => a,
            None => RseqArea::register_own().map_err(|e| match e.raw_os_error() {
                Some(libc::ENOSYS) => LiveError::Unsupported(
                    "the rseq system call is not available (kernel built without CONFIG_RSEQ)"
                        .into(),
                ),
                Some(libc::EBUSY) => LiveError::Unsupported(
                    "this thread already has an rseq area that cidscope cannot locate (registered by another library)"
                        .into(),
                ),
                _ => LiveError::io("registering an rseq area (rseq syscall)", e),
            })?,
        };
        Ok(ThreadRseq {
            area,
            tid: sys::gettid(),
        })
    }

    pub fn registration(&self) -> Registration {
        if self.area.is_own() {
            Registration::Cidscope
        } else {
            Registration::Glibc
        }
    }

    pub fn tid(&self) -> Tid {
        self.tid
    }

    /// (cpu, cid) as the kernel last wrote them.
    #[inline]
    pub fn read(&self) -> (u16, i32) {
        let (cpu, cid) = self.area.read();
        (cpu.min(u16::MAX as u32) as u16, cid as i32)
    }

    /// The current values with a timestamp taken after reading them, re-read until a read after
    /// the timestamp agrees: so the rseq_update that wrote the values precedes `ts`, and no later
    /// update with other values does.
    pub fn sample(&self) -> RseqSample {
        let mut a = self.read();
        let mut ts = sys::monotonic_ns();
        for _ in 0..16 {
            let b = self.read();
            if b == a {
                break;
            }
            a = b;
            ts = sys::monotonic_ns();
        }
        RseqSample {
            ts,
            tid: self.tid,
            cpu: a.0,
            cid: a.1,
        }
    }
}
