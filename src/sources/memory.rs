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

/// The environment variable that sets the memory available, overriding what the machine says.
pub const LIMIT_VAR: &str = "CIDSCOPE_MEMORY_LIMIT";

/// Bytes of memory a load takes per task the capture shows, beyond its bytes: the observed
/// state, checkpoints, lane states and CID history of the index, the summary of `stats` and
/// the picker of the TUI. Measured on a capture of 1 M tasks in 250 K processes, one event
/// each (`scripts/mem-bench.sh`: the TUI load, the costliest path, took ~0.5 KB per task),
/// with headroom.
pub const TASK_BYTES: u64 = 800;
/// Bytes per process (a task that leads its thread group) on top of its tasks': its mm's
/// facts and statistics, its summary and label.
pub const PROCESS_BYTES: u64 = 400;

/// A `CIDSCOPE_MEMORY_LIMIT` that is not a size.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{LIMIT_VAR}={value:?}: expected a size in bytes, optionally with a suffix K, M, G or T \
     (powers of 1024), e.g. 1500000000, 512M or 2G"
)]
pub struct BadLimit {
    pub value: String,
}

/// Parses a size: digits, optionally a fraction, then optionally K, M, G or T (powers of 1024,
/// with or without a trailing `B` or `iB`, any case). `1G`, `512M`, `1.5G`, `1000000`.
pub fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() || num.starts_with('.') || num.ends_with('.') {
        return None;
    }
    let unit = unit.trim().to_ascii_uppercase();
    let unit = unit
        .strip_suffix("IB")
        .or_else(|| unit.strip_suffix('B'))
        .unwrap_or(&unit);
    let mult: u64 = match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => return None,
    };
    if let Ok(n) = num.parse::<u64>() {
        return n.checked_mul(mult);
    }
    let v: f64 = num.parse().ok()?;
    let b = v * mult as f64;
    (b.is_finite() && b < u64::MAX as f64).then_some(b as u64)
}

/// The limit `CIDSCOPE_MEMORY_LIMIT` sets, if it is set; an error when it is not a size (an
/// empty value included: a limit that does not parse never turns the check off silently).
pub fn limit_from_env() -> Result<Option<u64>, BadLimit> {
    let Some(v) = std::env::var_os(LIMIT_VAR) else {
        return Ok(None);
    };
    let value = v.to_string_lossy().into_owned();
    match v.to_str().and_then(parse_size) {
        Some(n) => Ok(Some(n)),
        None => Err(BadLimit { value }),
    }
}

/// Memory available to this process: `CIDSCOPE_MEMORY_LIMIT` if set, else the smaller of
/// MemAvailable and the cgroup v2 limit, if known.
pub fn available() -> Result<Option<u64>, BadLimit> {
    if let Some(v) = limit_from_env()? {
        return Ok(Some(v));
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
    Ok(match (meminfo, cgroup) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    })
}

/// A capture that would not fit in the memory available.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooLarge {
    pub size: u64,
    pub format: &'static str,
    pub need: u64,
    pub available: u64,
    /// Tasks and processes the estimate counted (0 when it counted the bytes alone).
    pub tasks: u64,
    pub processes: u64,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a {} {} capture needs about {} of memory to open",
            human(self.size),
            self.format,
            human(self.need)
        )?;
        if self.tasks > 0 {
            write!(
                f,
                " (its {} tasks in {} processes read so far take about {} B and {} B each)",
                self.tasks, self.processes, TASK_BYTES, PROCESS_BYTES
            )?;
        }
        write!(
            f,
            ", but only {} is available; free memory, cut the capture (e.g. a time window with \
             trace-cmd report --ts-diff / head), or pass --no-memory-check to try anyway",
            human(self.available)
        )
    }
}

impl std::error::Error for TooLarge {}

/// Why a capture is not opened: it does not fit, or the limit is not a size.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    #[error(transparent)]
    TooLarge(#[from] TooLarge),
    #[error(transparent)]
    BadLimit(#[from] BadLimit),
}

/// The memory a load may take, checked against its estimate as the load goes: the bytes of
/// the input first, then each task and process as they appear.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    size: u64,
    format: &'static str,
    /// What the bytes alone take.
    base: u64,
    available: u64,
}

impl Budget {
    /// The budget of loading `size` bytes of format `format`, which takes `factor` bytes of
    /// memory per byte of input; `Ok(None)` when nothing says how much memory there is.
    pub fn new(
        size: u64,
        factor: f64,
        format: &'static str,
    ) -> Result<Option<Budget>, MemoryError> {
        let Some(available) = available()? else {
            return Ok(None);
        };
        let b = Budget {
            size,
            format,
            base: (size as f64 * factor) as u64,
            available,
        };
        b.check(0, 0)?;
        Ok(Some(b))
    }

    /// `Err` once `tasks` tasks in `processes` processes would take more than available.
    pub fn check(&self, tasks: u64, processes: u64) -> Result<(), TooLarge> {
        let need = self
            .base
            .saturating_add(tasks.saturating_mul(TASK_BYTES))
            .saturating_add(processes.saturating_mul(PROCESS_BYTES));
        if need <= self.available {
            return Ok(());
        }
        Err(TooLarge {
            size: self.size,
            format: self.format,
            need,
            available: self.available,
            tasks,
            processes,
        })
    }
}

/// `Err` when loading `size` bytes of format `format`, which takes `factor` bytes of memory per
/// byte of input, would need more memory than available.
pub fn check(size: u64, factor: f64, format: &'static str) -> Result<(), MemoryError> {
    Budget::new(size, factor, format).map(|_| ())
}

/// The memory available when `need` bytes (a simulation's projected size, ...) would not fit
/// in it; `None` when they fit or nothing says how much there is.
pub fn shortfall(need: u64) -> Result<Option<u64>, BadLimit> {
    Ok(available()?.filter(|&a| need > a))
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
    fn limits_parse_or_are_errors() {
        assert_eq!(parse_size("1000000"), Some(1_000_000));
        assert_eq!(parse_size(" 512M "), Some(512 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("1GiB"), Some(1 << 30));
        assert_eq!(parse_size("64KB"), Some(64 << 10));
        assert_eq!(parse_size("1.5G"), Some(3 << 29));
        assert_eq!(parse_size("0"), Some(0));
        for bad in [
            "",
            " ",
            "abc",
            "-5",
            "1X",
            "G",
            "1.",
            ".5G",
            "1 2",
            "99999999999999999999",
        ] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
        let e = BadLimit {
            value: "abc".into(),
        };
        assert!(
            e.to_string()
                .starts_with("CIDSCOPE_MEMORY_LIMIT=\"abc\": expected a size")
        );
    }

    #[test]
    fn a_budget_counts_tasks_and_processes() {
        let b = Budget {
            size: 100_000_000,
            format: "ftrace",
            base: 60_000_000,
            available: 100_000_000,
        };
        assert!(b.check(0, 0).is_ok());
        assert!(b.check(40_000, 1000).is_ok());
        let e = b.check(1_000_000, 250_000).unwrap_err();
        assert_eq!(e.need, 60_000_000 + 800_000_000 + 100_000_000);
        let m = e.to_string();
        assert!(m.contains("its 1000000 tasks in 250000 processes"), "{m}");
        assert!(m.contains("but only 100.0 MB is available"), "{m}");
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human(999), "999 B");
        assert_eq!(human(1_500_000), "1.5 MB");
        assert_eq!(human(12_300_000_000), "12.3 GB");
    }
}
