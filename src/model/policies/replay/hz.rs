//! What a replay takes from the capture itself: the CPU count, CONFIG_HZ from the spacing of
//! the tick's expiries, and the phase of jiffy boundaries in the capture's clock.

use super::super::params::Params;
use crate::events::{EventKind, Trace};
use rustc_hash::FxHashMap;

/// HZ from the spacing of consecutive ticks on one CPU: the lowest candidate HZ (100, 250,
/// 300, 1000) whose period divides ≥ 90 % of the spacings (±12 %), given ≥ 3 spacings.
pub fn infer_hz(trace: &Trace) -> Option<u32> {
    let mut last: FxHashMap<u16, u64> = FxHashMap::default();
    let mut deltas: Vec<u64> = Vec::new();
    for e in &trace.events {
        if let EventKind::Tick = e.kind
            && let Some(l) = last.insert(e.cpu, e.ts)
            && e.ts > l
        {
            deltas.push(e.ts - l);
        }
    }
    if deltas.len() < 3 {
        return None;
    }
    [100u32, 250, 300, 1000].into_iter().find(|&hz| {
        let period = 1_000_000_000 / hz as u64;
        let fit = deltas
            .iter()
            .filter(|&&d| {
                let k = ((d + period / 2) / period).max(1);
                (k * period).abs_diff(d) * 100 <= period * 12
            })
            .count();
        fit * 10 >= deltas.len() * 9
    })
}

/// Offset of jiffy boundaries in the capture's clock: the earliest tick of a period, from the
/// first ticks (ticks of all CPUs fire at the same boundary plus a small latency).
pub fn tick_phase(trace: &Trace, hz: u32) -> u64 {
    let period = 1_000_000_000 / hz.max(1) as i128;
    let mut ticks = trace
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Tick))
        .map(|e| e.ts as i128)
        .take(256);
    let Some(t0) = ticks.next() else { return 0 };
    let mut min_off = 0i128;
    for t in ticks {
        let mut off = (t - t0).rem_euclid(period);
        if off > period / 2 {
            off -= period;
        }
        min_off = min_off.min(off);
    }
    (t0 + min_off).rem_euclid(period) as u64
}

/// Resolves `cpus`/`hz` of `params` from the capture.
pub fn resolve_params(trace: &Trace, params: &Params) -> (Params, u64) {
    let mut resolved = params.clone();
    if resolved.cpus == 0 {
        resolved.cpus = trace.cpu_count();
    }
    if resolved.hz == 0 {
        resolved.hz = infer_hz(trace).unwrap_or(Params::DEFAULT_HZ);
    }
    let phase = tick_phase(trace, resolved.hz);
    (resolved, phase)
}

