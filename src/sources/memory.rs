//! Refusing a capture that would not fit: estimate the memory a load needs from the file size
//! and format, compare it with what the machine (or the cgroup) has available, and say so
//! before allocating, instead of being killed by the OOM killer halfway.

use crate::sources::sys::alloc;

/// Makes glibc serve large blocks from their own mappings. The event store and the lanes are
/// a few dozen vectors that grow by doubling side by side while a capture loads; from the
/// default brk heap (whose mmap threshold rises to 32 MB as blocks are freed) each regrowth
/// leaves a hole and the parse threads' arenas keep their freed buffers, which measured ~60%
/// above the live data (55-66 MB resident for 29 MB held on a 1.4 M-event trace). Mapped
/// blocks regrow with mremap and return to the system when freed (35-38 MB for the same).
pub fn tune_allocator() {
    alloc::set_mmap_threshold(256 * 1024);
}

/// Memory available to this process: `CIDSCOPE_MEMORY_LIMIT` (bytes) if set, else the smaller of
/// MemAvailable and the cgroup v2 limit, if known.
pub fn available() -> Option<u64> {
    if let Some(v) = std::env::var_os("CIDSCOPE_MEMORY_LIMIT") {
        return v.to_str().and_then(|s| s.trim().parse().ok());
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemAvailable:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    });
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    match (meminfo, cgroup) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A capture that would not fit in the memory available.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "a {} {format} capture needs about {} of memory to open, but only {} is available; \
     free memory, cut the capture (e.g. a time window with trace-cmd report --ts-diff / head), \
     or pass --no-memory-check to try anyway",
    human(*size),
    human(*need),
    human(*available)
)]
pub struct TooLarge {
    pub size: u64,
    pub format: &'static str,
    pub need: u64,
    pub available: u64,
}

/// `Err` when loading `size` bytes of format `format`, which takes `factor` bytes of memory per
/// byte of input, would need more memory than available.
pub fn check(size: u64, factor: f64, format: &'static str) -> Result<(), TooLarge> {
    let need = (size as f64 * factor) as u64;
    let Some(avail) = available() else {
        return Ok(());
    };
    if need <= avail {
        return Ok(());
    }
    Err(TooLarge {
        size,
        format,
        need,
        available: avail,
    })
}

pub fn human(b: u64) -> String {
    const U: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1000.0 && i < U.len() - 1 {
        v /= 1000.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", U[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_well() {
        assert_eq!(human(999), "999 B");
        assert_eq!(human(1_500_000), "1.5 MB");
        assert_eq!(human(12_300_000_000), "12.3 GB");
    }
}
