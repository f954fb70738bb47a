//! The simulator's memory bound: what a run takes per event, the fewest events it must make,
//! and the check before it runs (refused when it cannot fit, else capped where it stops
//! fitting).

use super::config::{SimConfig, Workload};
use crate::events::fmt_dur;
use crate::sources::memory::{BadLimit, human};

/// Memory a simulated run takes per event of its schedule: the trace, the model's records and
/// the TUI's index of it (measured by `scripts/mem-bench.sh`: 20-70 bytes per event
/// headless, with headroom for the TUI).
pub const EVENT_BYTES: u64 = 120;

/// The fewest events a run must make: every tick of the CPUs its always-running threads keep
/// busy (hogs, spinner; other workloads sleep, and idle CPUs do not tick).
pub fn min_events(cfg: &SimConfig) -> u64 {
    let busy = match cfg.workload {
        Workload::Hogs | Workload::Spinner => cfg.threads().min(cfg.params.cpus) as u64,
        _ => 0,
    };
    let nohz = cfg.nohz_full.iter().count() as u64;
    let ticking = busy.saturating_sub(nohz);
    (cfg.duration_ns as u128 * cfg.params.hz as u128 / 1_000_000_000 * ticking as u128)
        .min(u64::MAX as u128) as u64
}

/// Checks before running that the run fits in the memory available: `Err` when its fewest
/// events ([`min_events`]) would not; otherwise the cap on events that keeps it within (the
/// run stops there and says so).
pub fn memory_plan(cfg: &SimConfig) -> Result<Option<u64>, SimError> {
    let Some(avail) = crate::sources::memory::available()? else {
        return Ok(None);
    };
    let need = min_events(cfg).saturating_mul(EVENT_BYTES);
    if need > avail {
        return Err(SimError::WouldNotFit {
            cpus: cfg.params.cpus,
            workload: cfg.workload.id(),
            duration_ns: cfg.duration_ns,
            events: min_events(cfg),
            hz: cfg.params.hz,
            need,
            avail,
        });
    }
    Ok(Some(avail / EVENT_BYTES))
}

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    BadLimit(#[from] BadLimit),
    /// Refused before running: its fewest events ([`min_events`]) would not fit.
    #[error(
        "sim: {cpus} CPUs of {workload} for {} make at least {events} events ({hz} ticks per busy CPU), about {} of memory, but only {} is available: shorten --duration, or fewer --cpus/--threads",
        fmt_dur(*duration_ns),
        human(*need),
        human(*avail)
    )]
    WouldNotFit {
        cpus: u32,
        workload: &'static str,
        duration_ns: u64,
        events: u64,
        hz: u32,
        need: u64,
        avail: u64,
    },
    /// The run reached its cap on events ([`SimConfig::max_events`]) and stopped.
    #[error(
        "sim: stopped at {} of simulated time after {events} events: the rest of the run would not fit in the memory available (about {} bytes per event); shorten --duration, or pass --no-memory-check",
        fmt_dur(*at_ns),
        EVENT_BYTES
    )]
    Stopped { at_ns: u64, events: usize },
}
