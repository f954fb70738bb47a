//! Every `unsafe` block of the sources, every raw system call and every process-wide handler
//! (SIGBUS, contained panics), one small module per concern, each a thin safe wrapper: the
//! callers hold no unsafe code.

pub mod alloc;
pub mod clock;
pub mod mmap;
pub mod mount;
pub mod panics;
pub mod perf;
pub mod poll;
pub mod prefetch;
pub mod rseq;
pub mod sched;
pub mod sigbus;

pub use clock::{geteuid, gettid, monotonic_ns, rusage_self};
pub use mount::{mount_tracefs, unmount};
pub use perf::{
    PerfAttr, PerfRing, perf_disable, perf_enable, perf_event_open, perf_id, perf_set_output,
};
pub use poll::{poll_one, poll_readable};
pub use rseq::{GlibcRseq, RseqArea, glibc_rseq};
pub use sched::{affinity_self, set_affinity_self, set_thread_fifo, set_thread_nice};
