//! What a replay takes from the capture itself: the CPU count, CONFIG_HZ from the spacing of
//! the tick's expiries (docs/models.md §5.4), and the phase of jiffy boundaries in the capture's
//! clock.

use super::super::params::{HzSource, Params};
use crate::events::{CPU_UNKNOWN, EventKind, Trace};
use rustc_hash::FxHashMap;

/// CONFIG_HZ values the inference chooses from.
pub const HZ_CANDIDATES: [u32; 4] = [100, 250, 300, 1000];

/// How CONFIG_HZ was inferred from the tick expiries (docs/models.md §5.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HzInference {
    pub hz: u32,
    /// Intervals between consecutive ticks of one CPU.
    pub intervals: u64,
    /// Intervals within ±10 % of one period of `hz` (the modal class).
    pub fitting: u64,
}

/// HZ from the tick expiries: the candidate whose period (±10 %) is the most frequent interval
/// between consecutive ticks of one CPU. A late tick makes one interval long and the next one
/// short, and a CPU that skips ticks (nohz) makes intervals of several periods; neither lands
/// in the ±10 % class of a wrong candidate as often as the real period does (a kernel with
/// HZ=1000 that skips 3 of 4 ticks still has its 1 ms intervals on busy CPUs). Needs at least
/// 5 fitting intervals, a twentieth of all of them and 1.5 times those of the runner-up
/// (single-threaded TCG with 8 vCPUs leaves only 12 % of the intervals at one period).
pub fn infer_hz_detail(trace: &Trace) -> Option<HzInference> {
    let mut last: FxHashMap<u16, u64> = FxHashMap::default();
    let mut deltas: Vec<u64> = Vec::new();
    for e in &trace.events {
        if let EventKind::Tick = e.kind
            && e.cpu != CPU_UNKNOWN
            && let Some(l) = last.insert(e.cpu, e.ts)
            && e.ts > l
        {
            deltas.push(e.ts - l);
        }
    }
    let n = deltas.len() as u64;
    let fit = |hz: u32| {
        let period = 1_000_000_000 / hz as u64;
        deltas
            .iter()
            .filter(|&&d| d.abs_diff(period) * 10 <= period)
            .count() as u64
    };
    let mut scored: Vec<(u32, u64)> = HZ_CANDIDATES.into_iter().map(|hz| (hz, fit(hz))).collect();
    // the most fitting intervals first; on a tie the lower HZ (whose period is a multiple)
    scored.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let (hz, fitting) = scored[0];
    let runner_up = scored[1].1;
    (fitting >= 5 && fitting * 20 >= n && fitting * 2 >= runner_up * 3).then_some(HzInference {
        hz,
        intervals: n,
        fitting,
    })
}

/// HZ from the tick expiries ([`infer_hz_detail`]).
pub fn infer_hz(trace: &Trace) -> Option<u32> {
    infer_hz_detail(trace).map(|i| i.hz)
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
/// Resolves `cpus`/`hz` of `params` from the capture (`hz_source` says where HZ came from).
pub fn resolve_params(trace: &Trace, params: &Params) -> (Params, u64) {
    let mut resolved = params.clone();
    if resolved.cpus == 0 {
        resolved.cpus = trace.cpu_count();
    }
    if resolved.hz == 0 {
        match infer_hz_detail(trace) {
            Some(i) => {
                resolved.hz = i.hz;
                resolved.hz_source = HzSource::Ticks {
                    intervals: i.intervals,
                    fitting: i.fitting,
                };
            }
            None => {
                resolved.hz = Params::DEFAULT_HZ;
                resolved.hz_source = HzSource::Default;
            }
        }
    }
    let phase = tick_phase(trace, resolved.hz);
    (resolved, phase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{Event, Origin};

    /// Ticks of `cpus` CPUs at `hz`, each `late(i)` ns late, skipping those `skip(i)` says.
    fn ticks(
        hz: u32,
        cpus: u16,
        n: u64,
        late: impl Fn(u64) -> u64,
        skip: impl Fn(u64) -> bool,
    ) -> Trace {
        let period = 1_000_000_000 / hz as u64;
        let mut t = Trace::new("ticks", Origin::Sim);
        for i in 0..n {
            for c in 0..cpus {
                let k = i * cpus as u64 + c as u64;
                if skip(k) {
                    continue;
                }
                t.events.push(Event {
                    ts: 1_000_000_000 + i * period + late(k),
                    tid: 0,
                    cpu: c,
                    kind: EventKind::Tick,
                });
            }
        }
        t
    }

    #[test]
    fn hz_from_regular_ticks() {
        for hz in HZ_CANDIDATES {
            let t = ticks(hz, 2, 50, |_| 20_000, |_| false);
            assert_eq!(infer_hz(&t), Some(hz), "HZ {hz}");
        }
    }

    /// TCG: a vCPU's ticks come late by up to 3 ms and unevenly; the modal class still wins.
    #[test]
    fn hz_250_with_late_uneven_ticks() {
        // every third tick of a CPU is 1.5-3 ms late: the interval before it is long, the one
        // after it short; about two thirds of the intervals still measure 4 ms
        let late = |k: u64| {
            if k.is_multiple_of(3) {
                1_500_000 + (k * 7919 % 1_500_000)
            } else {
                k % 50_000
            }
        };
        let t = ticks(250, 16, 200, late, |_| false);
        let i = infer_hz_detail(&t).unwrap();
        assert_eq!(i.hz, 250, "{i:?}");
        assert!(i.fitting < i.intervals);
        // the old rule (90 % of the intervals multiples of one period) failed here
        let period = 4_000_000u64;
        let mut last = FxHashMap::default();
        let mut d = Vec::new();
        for e in &t.events {
            if let Some(l) = last.insert(e.cpu, e.ts) {
                d.push(e.ts - l);
            }
        }
        let multiples = d
            .iter()
            .filter(|&&x| {
                let k = ((x + period / 2) / period).max(1);
                (k * period).abs_diff(x) * 100 <= period * 12
            })
            .count();
        assert!(multiples * 10 < d.len() * 9);
    }

    /// A HZ=1000 kernel whose idle CPUs skip ticks (4 ms gaps) is still 1000, and a HZ=250 one
    /// with nohz gaps of several periods is still 250.
    #[test]
    fn hz_with_nohz_gaps() {
        let t = ticks(1000, 4, 400, |k| k % 30_000, |k| k % 8 < 3);
        assert_eq!(infer_hz(&t), Some(1000));
        let t = ticks(250, 4, 400, |k| k % 30_000, |k| k % 5 < 2);
        assert_eq!(infer_hz(&t), Some(250));
    }

    #[test]
    fn too_few_ticks_is_none_and_the_source_says_default() {
        let t = ticks(250, 1, 3, |_| 0, |_| false);
        assert_eq!(infer_hz(&t), None);
        let (p, _) = resolve_params(&t, &Params::default());
        assert_eq!((p.hz, p.hz_source), (Params::DEFAULT_HZ, HzSource::Default));
        let t = ticks(250, 2, 20, |_| 0, |_| false);
        let (p, _) = resolve_params(&t, &Params::default());
        assert_eq!(p.hz, 250);
        assert!(matches!(
            p.hz_source,
            HzSource::Ticks {
                fitting: 38,
                intervals: 38
            }
        ));
        let (p, _) = resolve_params(
            &t,
            &Params {
                hz: 300,
                ..Params::default()
            },
        );
        assert_eq!((p.hz, p.hz_source), (300, HzSource::Given));
    }
}
