//! Telling the scheduler tick among `hrtimer_expire_entry` records when the capture has no
//! kallsyms to name the `function` pointer (perf ≥ 4.x records an empty kallsyms in its tracing
//! data; `perf script` names it from the kallsyms of the machine it runs on, which a reader of
//! the file alone cannot do, and a KASLR kernel moves every boot).
//!
//! The tick is the per-CPU `tick_sched` hrtimer: one timer per CPU that never migrates, firing at
//! multiples of the tick period (1/HZ) from a common grid, with the same callback on every CPU.
//! For each callback address seen we check:
//! * pinned: each of its hrtimers fires on one CPU only, and no CPU has two of them;
//! * aligned: the `now` of its expiries, modulo a tick period (HZ = 100, 250, 300, 1000), falls
//!   in one 100 µs window (two 50 µs bins) for at least 80% of the expiries.
//!
//! The callback that passes both and covers the most CPUs (then the most expiries) is the tick.
//! A periodic user timer (a cyclictest thread) fails the pinned test as soon as two threads share
//! `hrtimer_wakeup`, or the alignment test unless its period is a multiple of 1/HZ.

use crate::events::EventStore;
use crate::sources::tracefs::decode::HrtimerSample;
use rustc_hash::{FxHashMap, FxHashSet};

const PERIODS: [u64; 4] = [10_000_000, 4_000_000, 3_333_333, 1_000_000];
const BIN: u64 = 50_000;

#[derive(Default, Debug)]
pub struct TickInfer {
    /// (index into the event list of `stream`, cpu, sample); `stream` is the CPU for readers
    /// that keep one list per CPU, 0 for a single list.
    samples: Vec<(usize, u16, HrtimerSample)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Inference {
    pub function: u64,
    pub period_ns: u64,
    pub aligned: f64,
    pub expiries: usize,
    pub cpus: usize,
}

impl Inference {
    pub fn describe(&self) -> String {
        format!(
            "callback {:#x} taken as the scheduler tick: a per-CPU pinned hrtimer on {} CPU(s), {:.1}% of its {} expiries aligned to a {:.3} ms grid (HZ={})",
            self.function,
            self.cpus,
            self.aligned * 100.0,
            self.expiries,
            self.period_ns as f64 / 1e6,
            (1_000_000_000 + self.period_ns / 2) / self.period_ns
        )
    }
}

impl TickInfer {
    pub fn push(&mut self, index: usize, cpu: u16, s: HrtimerSample) {
        self.samples.push((index, cpu, s));
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Adds the samples of a collector of a list that starts at index `base` of this one's.
    pub fn extend_at(&mut self, other: TickInfer, base: usize) {
        (self.samples).extend(other.samples.into_iter().map(|(i, c, s)| (base + i, c, s)));
    }

    pub fn infer(&self) -> Option<Inference> {
        let mut by_fn: FxHashMap<u64, Vec<(u16, HrtimerSample)>> = FxHashMap::default();
        for &(_, cpu, s) in &self.samples {
            by_fn.entry(s.function).or_default().push((cpu, s));
        }
        let mut best: Option<Inference> = None;
        for (&function, v) in &by_fn {
            if v.len() < 3 {
                continue;
            }
            let mut timer_cpu: FxHashMap<u64, u16> = FxHashMap::default();
            let mut cpu_timer: FxHashMap<u16, u64> = FxHashMap::default();
            let mut pinned = true;
            for &(cpu, s) in v {
                if *timer_cpu.entry(s.hrtimer).or_insert(cpu) != cpu
                    || *cpu_timer.entry(cpu).or_insert(s.hrtimer) != s.hrtimer
                {
                    pinned = false;
                    break;
                }
            }
            if !pinned {
                continue;
            }
            let cpus: FxHashSet<u16> = v.iter().map(|x| x.0).collect();
            // A 4 ms tick is also on the 1 ms grid: take the longest period that aligns about
            // as well as the best one.
            let scores: Vec<(u64, f64)> = PERIODS
                .iter()
                .map(|&p| (p, alignment(v.iter().map(|x| x.1.now), p, v.len())))
                .collect();
            let top = scores.iter().map(|s| s.1).fold(0.0, f64::max);
            let (period_ns, aligned) = scores
                .into_iter()
                .find(|s| s.1 >= top - 0.03)
                .unwrap_or((0, 0.0));
            if aligned < 0.8 {
                continue;
            }
            let cand = Inference {
                function,
                period_ns,
                aligned,
                expiries: v.len(),
                cpus: cpus.len(),
            };
            let better = match &best {
                None => true,
                Some(b) => {
                    (cand.cpus, cand.expiries, cand.function) > (b.cpus, b.expiries, b.function)
                }
            };
            if better {
                best = Some(cand);
            }
        }
        best
    }

    /// Marks the expiries of `function` as ticks (`events` is the single list of pushed indexes).
    pub fn apply(&self, events: &mut EventStore, function: u64) -> usize {
        self.apply_with(function, |_, i| events.set_tick(i))
    }

    /// Marks the expiries of `function` as ticks through `mark(cpu, index)`, which returns
    /// whether it found the event.
    pub fn apply_with(&self, function: u64, mut mark: impl FnMut(u16, usize) -> bool) -> usize {
        self.samples
            .iter()
            .filter(|&&(i, cpu, s)| s.function == function && mark(cpu, i))
            .count()
    }
}

/// The warning a reader adds once it tried to infer the tick: `name` the file, `lacking` what
/// lacks the kallsyms ("the file has", "perf.data carries").
pub fn warning(inferred: Option<&Inference>, name: &str, lacking: &str) -> (&'static str, String) {
    match inferred {
        Some(inf) => (
            "tick-inferred",
            format!(
                "{name}: {lacking} no kallsyms to name hrtimer callbacks; {}",
                inf.describe()
            ),
        ),
        None => (
            "tick-unknown",
            format!(
                "{name}: {lacking} no kallsyms to name hrtimer callbacks, and no callback looks like the scheduler tick; hrtimer_expire_entry events are counted as other events"
            ),
        ),
    }
}

/// Fraction of `nows` that fall into the fullest 100 µs window of the phase modulo `period`.
fn alignment(nows: impl Iterator<Item = i64>, period: u64, n: usize) -> f64 {
    let nb = (period / BIN) as usize;
    let mut bins = vec![0usize; nb];
    for now in nows {
        let phase = (now.rem_euclid(period as i64) as u64 / BIN) as usize;
        if let Some(b) = bins.get_mut(phase.min(nb - 1)) {
            *b += 1;
        }
    }
    let best = (0..nb)
        .map(|b| bins[b] + bins[(b + 1) % nb])
        .max()
        .unwrap_or(0);
    best as f64 / n.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{Event, EventKind};

    fn s(function: u64, hrtimer: u64, now: i64) -> HrtimerSample {
        HrtimerSample {
            function,
            hrtimer,
            now,
        }
    }

    #[test]
    fn the_pinned_aligned_callback_wins() {
        let mut t = TickInfer::default();
        let mut i = 0;
        for k in 0..50i64 {
            // tick on 2 CPUs at 4 ms with a few µs of latency
            t.push(
                i,
                0,
                s(
                    0xaaa,
                    0x100,
                    1_000_000_000 + k * 4_000_000 + (k % 7) * 3_000,
                ),
            );
            i += 1;
            t.push(
                i,
                1,
                s(0xaaa, 0x200, 1_000_000_000 + k * 8_000_000 + 11_000),
            );
            i += 1;
            // two periodic threads sharing hrtimer_wakeup, on both CPUs
            t.push(
                i,
                (k % 2) as u16,
                s(0xbbb, 0x900 + (k % 2) as u64, 7_000 + k * 1_500_000),
            );
            i += 1;
        }
        let inf = t.infer().unwrap();
        assert_eq!(inf.function, 0xaaa);
        assert_eq!(inf.period_ns, 4_000_000);
        assert_eq!(inf.cpus, 2);
        let mut ev = (0..i)
            .map(|_| Event {
                ts: 0,
                tid: 0,
                cpu: 0,
                kind: EventKind::Other {
                    name: Default::default(),
                },
            })
            .collect::<EventStore>();
        assert_eq!(t.apply(&mut ev, inf.function), 100);
        assert_eq!(ev.at(0).kind, EventKind::Tick);
        assert_ne!(ev.at(2).kind, EventKind::Tick);
        assert!(inf.describe().contains("HZ=250"), "{}", inf.describe());
    }

    #[test]
    fn nothing_periodic_means_no_tick() {
        let mut t = TickInfer::default();
        for k in 0..40i64 {
            t.push(k as usize, 0, s(0xaaa, 0x100, k * k * 7_919_993));
        }
        assert_eq!(t.infer(), None);
        assert_eq!(TickInfer::default().infer(), None);
    }
}
