//! The inferred steps as a reviewer reads them (docs/models.md §5.3): each placement of a
//! [`Step`] with its kind, its record, where it was placed, and the window of traced events in
//! which the kernel could have run it; and what each changed against the plain replay.

use super::outcomes::Outcomes;
use super::steps::Step;
use super::windows::{ExitWindow, ForkWindow};
use crate::events::{Event, EventKind, Tid, Trace};
use crate::model::policies::run::{InferredStep, StepWindow};
use rustc_hash::FxHashMap;

/// Events past a step's window over which the final replay checks the invariants (a step's
/// state change shows in the next allocations of its mm; the search judged a stretch as long).
pub(super) const CHECK_AFTER: usize = 2000;

/// Stretches of event indices sorted and merged where they overlap.
pub(super) fn merged(mut v: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    v.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (a, b) in v {
        match out.last_mut() {
            Some(l) if a <= l.1 => l.1 = l.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// The capture and the windows the steps were drawn from.
pub(super) struct Context<'a> {
    trace: &'a Trace,
    forks: FxHashMap<Tid, &'a ForkWindow>,
    exits: FxHashMap<Tid, &'a ExitWindow>,
}

/// One placement: a step moves one kernel step of `tid` from its record to `placed` (the step
/// runs before the event at `placed`); the kernel ran it after event `from` and before event
/// `to` (`from <= placed <= to`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Placed {
    kind: &'static str,
    tid: Tid,
    record: usize,
    placed: usize,
    from: usize,
    to: usize,
}

impl<'a> Context<'a> {
    pub fn new(trace: &'a Trace, forks: &'a [ForkWindow], exits: &'a [ExitWindow]) -> Self {
        Context {
            trace,
            forks: forks.iter().map(|w| (w.child, w)).collect(),
            exits: exits.iter().map(|w| (w.tid, w)).collect(),
        }
    }

    fn ev(&self, j: usize) -> Option<Event> {
        self.trace.events.get(j)
    }

    fn ts(&self, j: usize) -> u64 {
        self.ev(j)
            .or_else(|| self.trace.events.last())
            .map_or(0, |e| e.ts)
    }

    /// The next record of event `j`'s CPU (the capture's end when there is none).
    fn next_on_cpu(&self, j: usize) -> usize {
        let Some(cpu) = self.ev(j).map(|e| e.cpu) else {
            return j;
        };
        (j + 1..self.trace.events.len())
            .find(|&q| self.ev(q).is_some_and(|e| e.cpu == cpu))
            .unwrap_or(self.trace.events.len())
    }

    /// The previous record of CPU `cpu` before event `j` (the capture's start when none).
    fn prev_on_cpu(&self, j: usize, cpu: u16) -> usize {
        (0..j)
            .rev()
            .find(|&q| self.ev(q).is_some_and(|e| e.cpu == cpu))
            .unwrap_or(0)
    }

    /// The task a record is about (the task switched in, moved, forked, exiting).
    fn subject(&self, j: usize) -> Tid {
        match self.ev(j).map(|e| (e.tid, e.kind)) {
            Some((_, EventKind::SchedSwitch { next_tid, .. })) => next_tid,
            Some((_, EventKind::SchedMigrateTask { tid, .. })) => tid,
            Some((_, EventKind::SchedProcessExit { tid })) => tid,
            Some((_, EventKind::SchedProcessFork { child, .. })) => child,
            Some((t, EventKind::Probe { num, .. })) if num != 0 => match self.ev(j).map(|e| e.kind)
            {
                Some(EventKind::Probe {
                    probe: crate::events::Probe::Exit | crate::events::Probe::MigrateTo,
                    ..
                }) => num,
                _ => t,
            },
            Some((t, _)) => t,
            None => 0,
        }
    }

    /// A record in words: `sched_switch 300 -> 312 on CPU 3`.
    fn name(&self, j: usize) -> String {
        let Some(e) = self.ev(j) else {
            return "the end of the capture".into();
        };
        let what = e.kind.name(&self.trace.strings);
        match e.kind {
            EventKind::SchedSwitch {
                prev_tid, next_tid, ..
            } => format!("{what} {prev_tid} -> {next_tid} on CPU {}", e.cpu),
            EventKind::SchedMigrateTask {
                tid,
                orig_cpu,
                dest_cpu,
            } => format!("{what} of {tid} CPU {orig_cpu} -> {dest_cpu}"),
            EventKind::SchedProcessExit { tid } => format!("{what} of {tid}"),
            EventKind::SchedProcessFork { parent, child } => {
                format!("{what} {parent} -> {child}")
            }
            _ => format!("{what} of {} on CPU {}", e.tid, e.cpu),
        }
    }

    /// The placements one step makes.
    fn expand(&self, step: Step) -> Vec<Placed> {
        let p = |kind, record: usize, placed: usize, from: usize, to: usize| Placed {
            kind,
            tid: self.subject(record),
            record,
            placed,
            from,
            to,
        };
        // a switch's CID step at its CPU's next record; an exit's `exit_mm` at its task's next
        let deferred = |s: usize| {
            let n = self.next_on_cpu(s);
            p("deferred_switch", s, n, s, n)
        };
        let late_put = |s: usize| {
            let n = self.own_next(s);
            p("late_put", s, n, s, n)
        };
        match step {
            Step::EarlyFork { at, fork } => {
                let Some(w) = self.forks.get(&fork.child) else {
                    return Vec::new();
                };
                vec![Placed {
                    tid: fork.child,
                    ..p(
                        "early_fork",
                        w.record,
                        at,
                        w.first.saturating_sub(1),
                        w.record,
                    )
                }]
            }
            Step::WalkMark { at, .. } => vec![p("walk_mark", at, at, at, at)],
            // (by default at the clone's probe; placed at its record, the window's far end)
            Step::FutexSizedAtRecord {
                probe,
                record,
                child,
            } => vec![Placed {
                tid: child,
                ..p("futex_sized_at_record", probe, record, probe, record)
            }],
            Step::WalkMarkDeferring {
                at, switches, n, ..
            } => {
                let mut v = vec![p("walk_mark", at, at, at, at)];
                v.extend(switches[..n].iter().map(|&s| deferred(s)));
                v
            }
            Step::DeferredSwitch(s) => vec![deferred(s)],
            Step::DeferredSwitches { at, n } => at[..n].iter().map(|&s| deferred(s)).collect(),
            Step::PromptSwitch(s) => {
                let n = self.next_on_cpu(s);
                vec![p("prompt_switch", n, s, s, n)]
            }
            Step::EarlyPut(s) => vec![p("early_put", s, s, s, self.own_next(s))],
            Step::LatePut(s) => vec![late_put(s)],
            Step::LatePutBy { exit, at, .. } => {
                vec![p("late_put", exit, at, exit, self.own_next(exit))]
            }
            Step::LatePuts { at, n } => at[..n].iter().map(|&s| late_put(s)).collect(),
            Step::FutexPut { at, .. } => vec![self.futex_put(at)],
            Step::FutexPutDeferring { at, switch, .. } => {
                vec![self.futex_put(at), deferred(switch)]
            }
            Step::FutexPutWaking { at, wake, by, .. } => vec![
                self.futex_put(at),
                Placed {
                    placed: by,
                    ..self.wake("prompt_wake", wake, true)
                },
            ],
            Step::PromptWake(s) => vec![self.wake("prompt_wake", s, true)],
            Step::LateEnqueue(s) => vec![self.wake("late_enqueue", s, false)],
            Step::WakeBy { wake, at, .. } => vec![Placed {
                placed: at,
                ..self.wake("prompt_wake", wake, true)
            }],
            Step::PromptWakes(a, b) => vec![
                self.wake("prompt_wake", a, true),
                self.wake("prompt_wake", b, true),
            ],
            Step::WakeThenLate { prompt, late } => vec![
                self.wake("prompt_wake", prompt, true),
                self.wake("late_enqueue", late, false),
            ],
            Step::EarlyExit { at, exit } => self.early_exit(at, exit.tid).into_iter().collect(),
            Step::ExitInFlight {
                at,
                exit,
                switches,
                n,
            } => {
                let mut v: Vec<Placed> = self.early_exit(at, exit.tid).into_iter().collect();
                v.extend(switches[..n].iter().map(|&s| deferred(s)));
                v
            }
            Step::LateProbe(s) | Step::HeldClear(s) => {
                let n = self.next_on_cpu(s);
                let kind = if matches!(step, Step::HeldClear(_)) {
                    "held_clear"
                } else {
                    "late_probe"
                };
                vec![p(kind, s, n, s, n)]
            }
            Step::LateProbeBefore { probe, at } => {
                let n = self.next_on_cpu(probe).max(at);
                vec![p("late_probe", probe, at, probe, n)]
            }
            Step::ProbeAtResume { probe, at } => vec![p("probe_at_resume", probe, at, probe, at)],
            Step::VisitAtProbe { probe, switch } => {
                // (placed at its probe: the stall's near end, where the plain replay took the far)
                let n = self.next_on_cpu(probe);
                let visited = match self.ev(probe).map(|e| e.kind) {
                    Some(EventKind::Probe { num, .. }) => num,
                    _ => self.subject(probe),
                };
                let mut v = vec![Placed {
                    tid: visited,
                    ..p("visit_at_probe", probe, probe, probe, n)
                }];
                v.extend(switch.map(|s| {
                    let b = self.next_on_cpu(s);
                    p("prompt_switch", b, s, s, b)
                }));
                v
            }
            Step::LateProbePrompt { probe, switch } => {
                let (a, b) = (self.next_on_cpu(probe), self.next_on_cpu(switch));
                vec![
                    p("late_probe", probe, a, probe, a),
                    p("prompt_switch", b, switch, switch, b),
                ]
            }
            Step::CurrEarlies { at, n } => at[..n]
                .iter()
                .flat_map(|&(at, cpu, tid)| self.expand(Step::CurrEarly { at, cpu, tid }))
                .collect(),
            Step::CurrEarly { at, cpu, tid } => {
                // rq->curr was set in __schedule between that CPU's previous record and its
                // switch record (the first record of the CPU after `at`)
                let switch = (at + 1..self.trace.events.len())
                    .find(|&q| self.ev(q).is_some_and(|e| e.cpu == cpu))
                    .unwrap_or(at);
                vec![Placed {
                    tid,
                    ..p("curr_early", switch, at, self.prev_on_cpu(at, cpu), switch)
                }]
            }
            Step::SwitchStepAt { at, cpu } => {
                // the pending switch of `cpu`: its last switch record before `at`, and its
                // next record after that (the `cid_switch_done`)
                let sw = (0..at).rev().find(|&q| {
                    self.ev(q).is_some_and(|e| {
                        e.cpu == cpu && matches!(e.kind, EventKind::SchedSwitch { .. })
                    })
                });
                let sw = sw.unwrap_or(at);
                let done = self.next_on_cpu(sw);
                vec![p("switch_step_at", sw, at, sw, done)]
            }
        }
    }

    /// The next record of the task that event `s` is about (its exit path's next stop).
    fn own_next(&self, s: usize) -> usize {
        let t = self.subject(s);
        (s + 1..self.trace.events.len())
            .find(|&q| {
                self.ev(q).is_some_and(|e| {
                    e.tid == t
                        || matches!(e.kind, EventKind::SchedSwitch { prev_tid, .. } if prev_tid == t)
                })
            })
            .unwrap_or(self.trace.events.len())
    }

    /// A wakeup's enqueue on dst: at its record (prompt) or by dst's next switch (late).
    fn wake(&self, kind: &'static str, s: usize, prompt: bool) -> Placed {
        let (dst, tid) = match self.ev(s).map(|e| e.kind) {
            Some(EventKind::SchedMigrateTask { dest_cpu, tid, .. }) => (dest_cpu, tid),
            _ => (u16::MAX, 0),
        };
        let n = (s + 1..self.trace.events.len())
            .find(|&q| {
                self.ev(q).is_some_and(|e| {
                    (e.cpu == dst && matches!(e.kind, EventKind::SchedSwitch { .. }))
                        || e.tid == tid
                })
            })
            .unwrap_or(self.trace.events.len());
        Placed {
            kind,
            tid,
            record: s,
            placed: if prompt { s } else { n },
            from: s,
            to: n,
        }
    }

    /// T7: the release of `tid`'s exit before event `at`.
    fn early_exit(&self, at: usize, tid: Tid) -> Option<Placed> {
        let w = self.exits.get(&tid)?;
        Some(Placed {
            kind: "early_exit",
            tid,
            record: w.record,
            placed: at,
            from: w.first.saturating_sub(1),
            to: w.record,
        })
    }

    /// The futex hash's reference dropped before event `at`: taken by the last thread clone
    /// of the process before it (nothing traced bounds the RCU callbacks that drop it).
    fn futex_put(&self, at: usize) -> Placed {
        let tid = self.subject(at);
        let tgid = |t: Tid| self.trace.tasks.get(&t).and_then(|m| m.tgid);
        let clone = (0..at).rev().find(|&q| {
            self.ev(q).is_some_and(|e| match e.kind {
                EventKind::SchedProcessFork { parent, .. } => {
                    tgid(parent).is_some() && tgid(parent) == tgid(tid)
                }
                _ => false,
            })
        });
        let from = clone.unwrap_or(0);
        Placed {
            kind: "futex_put",
            tid,
            record: from,
            placed: at,
            from,
            to: self.trace.events.len(),
        }
    }

    /// Of `steps`, the one with a placement latest at or before time `ts` (the one a break of
    /// an invariant at `ts` is laid to).
    pub fn last_placed_before(&self, steps: &[Step], ts: u64) -> Option<usize> {
        steps
            .iter()
            .enumerate()
            .filter_map(|(k, &s)| {
                let at = self
                    .expand(s)
                    .iter()
                    .map(|p| self.ts(p.placed))
                    .filter(|&t| t <= ts)
                    .max()?;
                Some((at, k))
            })
            .max()
            .map(|(_, k)| k)
    }

    /// The stretches of event indices where `steps` can have changed the model: from each
    /// placement's window (or placement, whichever is first) to `after` events past it,
    /// merged, in order.
    pub fn check_spans(&self, steps: &[Step], after: usize) -> Vec<(usize, usize)> {
        merged(
            steps
                .iter()
                .flat_map(|&s| self.expand(s))
                .map(|p| {
                    let a = p.placed.min(p.from);
                    (a, p.placed.max(p.to).saturating_add(after))
                })
                .collect(),
        )
    }

    /// Whether every placement of `step` lies inside its window.
    pub fn inside_window(&self, step: Step) -> bool {
        let v = self.expand(step);
        !v.is_empty() && v.iter().all(|p| p.from <= p.placed && p.placed <= p.to)
    }

    fn describe(&self, p: &Placed) -> InferredStep {
        let (record_ts, placed_ts) = (self.ts(p.record), self.ts(p.placed));
        InferredStep {
            kind: p.kind,
            tid: p.tid,
            record_ts,
            placed_ts,
            displacement_ns: placed_ts as i64 - record_ts as i64,
            window: StepWindow {
                from_ts: self.ts(p.from),
                from: self.name(p.from),
                to_ts: self.ts(p.to),
                to: self.name(p.to),
            },
            fixed: 0,
            broken: 0,
        }
    }
}

/// Every placement of `steps`, in time order, with the updates it changed: an observed update
/// whose outcome differs between the plain replay and the final one counts for the last
/// placement at or before it (the first one when it comes before all).
pub(super) fn describe_all(
    cx: &Context,
    steps: &[Step],
    plain: &Outcomes,
    fin: &Outcomes,
) -> Vec<InferredStep> {
    let mut placed: Vec<Placed> = steps.iter().flat_map(|&s| cx.expand(s)).collect();
    placed.sort_by_key(|p| (p.placed, p.record));
    placed.dedup();
    // (an exit's put moved before an allocation by a later step, `Step::LatePutBy`, ran
    // there: its first placement is the one the replay ran, the other is not reported)
    let mut puts = rustc_hash::FxHashSet::default();
    placed.retain(|p| p.kind != "late_put" || puts.insert(p.record));
    let mut out: Vec<InferredStep> = placed.iter().map(|p| cx.describe(p)).collect();
    if out.is_empty() {
        return out;
    }
    // (both in event order: one walk pairs them, where a map of every update cost 20 ms on a
    // capture of 440 K updates)
    let mut before = plain.iter().peekable();
    for (idx, ok) in fin.iter() {
        while before.next_if(|&(j, _)| j < idx).is_some() {}
        let Some((_, was)) = before.next_if(|&(j, _)| j == idx) else {
            continue;
        };
        if was == ok {
            continue;
        }
        let k = placed
            .partition_point(|p| p.placed <= idx)
            .saturating_sub(1);
        if ok {
            out[k].fixed += 1;
        } else {
            out[k].broken += 1;
        }
    }
    out
}
