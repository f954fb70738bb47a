//! What a replay takes from the capture itself: the CPU count, CONFIG_HZ from the spacing of
//! the tick's expiries (docs/models.md §5.4), and the phase of jiffy boundaries in the capture's
//! clock.

use super::super::params::{HzSource, JiffiesClock, Params};
use crate::events::{CPU_UNKNOWN, Trace};

/// CONFIG_HZ values the inference chooses from.
pub const HZ_CANDIDATES: [u32; 4] = [100, 250, 300, 1000];

/// What the tick expiries say of CONFIG_HZ (docs/models.md §5.4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HzInference {
    /// The HZ the ticks clearly support, if they do.
    pub hz: Option<u32>,
    /// Tick expiries read.
    pub ticks: u64,
    /// Per candidate of [`HZ_CANDIDATES`]: how concentrated the ticks' phases are within one
    /// period of that HZ (the mean resultant length, 0 = spread evenly, 1 = all at one phase).
    pub concentration: [f64; HZ_CANDIDATES.len()],
    /// Per candidate: the intervals between consecutive ticks of one CPU within ±10 % of its
    /// period.
    pub one_period: [u64; HZ_CANDIDATES.len()],
}

/// Ticks needed before their phases say anything.
const MIN_TICKS: u64 = 20;
/// Rayleigh's statistic (ticks × concentration²) a supported HZ reaches: the phases of that
/// many evenly spread ticks reach it with a chance of e^-16.
const MIN_RAYLEIGH: f64 = 16.0;
/// How much more concentrated than at any HZ the candidate does not divide (whose phases it
/// predicts to be spread evenly).
const MIN_LEAD: f64 = 2.0;
/// A candidate's one-period intervals are at least this share of the most common
/// one-period class: a CPU that runs takes every tick, so a HZ=1000 kernel shows 1 ms
/// intervals; ticks that arrive on a 1 ms grid under TCG gather within 1 ms whatever the HZ.
const MIN_INTERVAL_SHARE: u64 = 4;

impl HzInference {
    /// The concentration at `hz` (0 for a value that is no candidate).
    pub fn at(&self, hz: u32) -> f64 {
        HZ_CANDIDATES
            .iter()
            .position(|&h| h == hz)
            .map_or(0.0, |k| self.concentration[k])
    }

    /// The strongest concentration among the candidates `hz` does not divide (those whose
    /// period is no whole fraction of its own).
    pub fn against(&self, hz: u32) -> f64 {
        HZ_CANDIDATES
            .iter()
            .zip(self.concentration)
            .filter(|&(&h, _)| h % hz != 0)
            .map(|(_, r)| r)
            .fold(0.0, f64::max)
    }
}

/// HZ from the phases of the tick expiries. The tick is re-armed a whole period ahead
/// (`hrtimer_forward`, `kernel/time/tick-sched.c`), so each CPU's ticks fall at jiffy boundaries
/// plus the delivery latency: within one period of the true HZ their phases gather at one
/// point, and so they do within any period that divides it (1 ms divides the 4 ms of HZ=250,
/// so HZ=1000 sees them gathered too), while within a period that is a whole multiple of the
/// true one they spread over that many points evenly (HZ=250's 4 ms holds 4 evenly spread
/// points of a HZ=1000 kernel) and within an unrelated one over many. So the true HZ is the
/// lowest candidate whose phases gather clearly (Rayleigh's test, [`MIN_RAYLEIGH`]) and at
/// least [`MIN_LEAD`] times more than at every candidate it does not divide. Late ticks (TCG: a
/// vCPU's ticks come when QEMU runs it) spread the phases but do not move their centre. The
/// intervals between a CPU's ticks vote too: a candidate whose one-period intervals are rare
/// next to another's ([`MIN_INTERVAL_SHARE`]) is not taken. When no candidate passes, the
/// ticks do not say (`hz: None`). An interval count (the previous rule)
/// let 5 % of the intervals decide under TCG at 24-48 vCPUs and chose 100 or 1000 for HZ=250.
pub fn infer_hz_detail(trace: &Trace) -> HzInference {
    let mut sums = [(0.0f64, 0.0f64); HZ_CANDIDATES.len()];
    let mut one_period = [0u64; HZ_CANDIDATES.len()];
    let mut last: rustc_hash::FxHashMap<u16, u64> = rustc_hash::FxHashMap::default();
    let mut n = 0u64;
    let events = &trace.events;
    for i in events.ticks() {
        let (ts, cpu) = (events.ts(i), events.cpu(i));
        if cpu != CPU_UNKNOWN {
            n += 1;
            if let Some(l) = last.insert(cpu, ts)
                && ts > l
            {
                for (k, &hz) in HZ_CANDIDATES.iter().enumerate() {
                    let period = 1_000_000_000 / hz as u64;
                    one_period[k] += ((ts - l).abs_diff(period) * 10 <= period) as u64;
                }
            }
            for (k, &hz) in HZ_CANDIDATES.iter().enumerate() {
                let period = 1_000_000_000 / hz as u64;
                let a = (ts % period) as f64 / period as f64 * std::f64::consts::TAU;
                sums[k].0 += a.cos();
                sums[k].1 += a.sin();
            }
        }
    }
    let mut concentration = [0.0; HZ_CANDIDATES.len()];
    for (k, (c, s)) in sums.iter().enumerate() {
        concentration[k] = if n == 0 { 0.0 } else { c.hypot(*s) / n as f64 };
    }
    let mut out = HzInference {
        hz: None,
        ticks: n,
        concentration,
        one_period,
    };
    if n < MIN_TICKS {
        return out;
    }
    let mut ascending = HZ_CANDIDATES;
    ascending.sort_unstable();
    let most = one_period.iter().copied().max().unwrap_or(0);
    out.hz = ascending.into_iter().find(|&hz| {
        let r = out.at(hz);
        let k = HZ_CANDIDATES.iter().position(|&h| h == hz).unwrap_or(0);
        n as f64 * r * r >= MIN_RAYLEIGH
            && r >= MIN_LEAD * out.against(hz)
            && one_period[k] * MIN_INTERVAL_SHARE >= most
    });
    out
}

/// HZ from the tick expiries ([`infer_hz_detail`]), when they clearly support one.
pub fn infer_hz(trace: &Trace) -> Option<u32> {
    infer_hz_detail(trace).hz
}

/// Offset of jiffy boundaries in the capture's clock: the earliest tick of a period, from the
/// first ticks (ticks of all CPUs fire at the same boundary plus a latency). That is right only
/// while the latencies stay within half a period; under TCG they spread over the whole period
/// and the estimate lands 1-2 ms off. With `mono` (`--mono-jiffies`), where the capture gives
/// the ticks' `now=` ([`Trace::mono_offset`]), the phase is that of CLOCK_MONOTONIC instead:
/// the boundaries are whole multiples of TICK_NSEC there (`tick_init_jiffy_update` aligns the
/// first, `kernel/time/tick-sched.c` @6.18.15 l.163-174; `tick_do_update_jiffies64` steps whole
/// periods from it). docs/models.md §5.4.
pub fn tick_phase(trace: &Trace, hz: u32, mono: bool) -> u64 {
    let period = 1_000_000_000 / hz.max(1) as i128;
    if mono && let Some(off) = trace.mono_offset {
        return (off as i128).rem_euclid(period) as u64;
    }
    let mut ticks = (trace.events.ticks())
        .map(|i| trace.events.ts(i) as i128)
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
/// P of a replay: `params.cpus`, or the capture's CPU count where it is 0.
pub fn resolved_cpus(trace: &Trace, params: &Params) -> u32 {
    match params.cpus {
        0 => trace.cpu_count(),
        n => n,
    }
}

/// Resolves `cpus`/`hz` of `params` from the capture (`hz_source` says where HZ came from).
pub fn resolve_params(trace: &Trace, params: &Params) -> (Params, u64) {
    let mut resolved = params.clone();
    resolved.cpus = resolved_cpus(trace, params);
    if resolved.hz == 0 {
        let i = infer_hz_detail(trace);
        let milli = |r: f64| (r * 1000.0).round() as u32;
        match i.hz {
            Some(hz) => {
                resolved.hz = hz;
                resolved.hz_source = HzSource::Ticks {
                    ticks: i.ticks,
                    concentration_milli: milli(i.at(hz)),
                    against_milli: milli(i.against(hz)),
                };
            }
            None => {
                resolved.hz = Params::DEFAULT_HZ;
                let (best, r) = HZ_CANDIDATES
                    .iter()
                    .zip(i.concentration)
                    .fold((0, 0.0), |b, (&h, r)| if r > b.1 { (h, r) } else { b });
                resolved.hz_source = HzSource::Unknown {
                    used: Params::DEFAULT_HZ,
                    ticks: i.ticks,
                    best,
                    concentration_milli: milli(r),
                };
            }
        }
    }
    // the timekeeper's count needs the boundaries themselves, from the ticks' `now=` (an
    // estimated phase 1-2 ms off moves every update across a boundary), and the `tick_stop`s
    // that hand the duty on (without them the first CPU to tick would keep it for good)
    if resolved.jiffies == JiffiesClock::Timekeeper
        && (trace.mono_offset.is_none() || !trace.events.has_tick_stops())
    {
        resolved.jiffies = JiffiesClock::Boundaries;
    }
    let mono = resolved.mono_jiffies || resolved.jiffies == JiffiesClock::Timekeeper;
    let phase = tick_phase(trace, resolved.hz, mono);
    (resolved, phase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{Event, EventKind, Origin};
    use rustc_hash::FxHashMap;

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
        let i = infer_hz_detail(&t);
        assert_eq!(i.hz, Some(250), "{i:?}");
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
    fn too_few_ticks_is_none_and_the_source_says_unknown() {
        let t = ticks(250, 1, 3, |_| 0, |_| false);
        assert_eq!(infer_hz(&t), None);
        let (p, _) = resolve_params(&t, &Params::default());
        assert_eq!(p.hz, Params::DEFAULT_HZ);
        assert!(
            matches!(
                p.hz_source,
                HzSource::Unknown {
                    used: 1000,
                    ticks: 3,
                    ..
                }
            ),
            "{:?}",
            p.hz_source
        );
        assert!(p.hz_source.describe().starts_with("unknown: 1000 used"));
        let t = ticks(250, 2, 20, |_| 0, |_| false);
        let (p, _) = resolve_params(&t, &Params::default());
        assert_eq!(p.hz, 250);
        assert!(
            matches!(
                p.hz_source,
                HzSource::Ticks {
                    ticks: 40,
                    concentration_milli: 1000,
                    ..
                }
            ),
            "{:?}",
            p.hz_source
        );
        let (p, _) = resolve_params(
            &t,
            &Params {
                hz: 300,
                ..Params::default()
            },
        );
        assert_eq!((p.hz, p.hz_source), (300, HzSource::Given));
    }

    /// Many vCPUs under single-threaded TCG: a vCPU's tick comes when QEMU gets to it, 0-7 ms
    /// late, so only a few intervals measure one period and those of 10 ms can outnumber them
    /// (k7.2.13-c32-workers: 108 of 1214 at 10 ms, 32 at 4 ms); the phases still gather at the
    /// jiffy boundary within 4 ms.
    #[test]
    fn hz_250_under_tcg_at_many_cpus_is_not_taken_for_100() {
        // a pseudo-random lateness: half the ticks within 0.5 ms, the others up to 7 ms late
        let late = |k: u64| {
            let x = k
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407)
                >> 33;
            if x.is_multiple_of(2) {
                x % 500_000
            } else {
                x % 7_000_000
            }
        };
        let t = ticks(250, 32, 120, late, |k| k % 3 == 0);
        let i = infer_hz_detail(&t);
        assert_eq!(i.hz, Some(250), "{i:?}");
        assert!(
            i.at(250) > i.at(100) * 2.0 && i.at(250) > i.at(300) * 2.0,
            "{i:?}"
        );
    }

    /// Ticks whose phases gather nowhere (every tick at a pseudo-random time) support no HZ:
    /// the source says unknown and which value the model runs with.
    #[test]
    fn scattered_ticks_support_no_hz() {
        let mut t = Trace::new("ticks", Origin::Sim);
        let mut x = 12345u64;
        let mut ts = 1_000_000_000u64;
        for k in 0..2000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ts += 1_000 + (x >> 33) % 7_000_000;
            t.events.push(Event {
                ts,
                tid: 0,
                cpu: (k % 16) as u16,
                kind: EventKind::Tick,
            });
        }
        assert_eq!(infer_hz(&t), None);
        let (p, _) = resolve_params(&t, &Params::default());
        assert!(
            matches!(p.hz_source, HzSource::Unknown { .. }),
            "{:?}",
            p.hz_source
        );
    }
}
