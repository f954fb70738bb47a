//! The checks of what a trace cannot show of one kernel: a task on two CPUs at once, and a
//! duplicate CID held back until its earlier holder's next record says whether it still held it.

use super::{ObservedState, Sink, TWO_CPU_SLACK_NS};
use crate::events::{Event, EventKind, Tid};
use crate::model::anomaly::{Anomaly, AnomalyKind};

impl ObservedState {
    /// A record of `ev.tid` on a CPU that still has it current, while the task moved to
    /// another CPU that has it current too, a while ago, with no lost events on either since:
    /// it runs on both at once. (Within [`TWO_CPU_SLACK_NS`] of the move, the per-CPU clocks
    /// may simply disagree.)
    pub(super) fn check_two_cpus(&mut self, ev: &Event, sink: &mut impl Sink) {
        let Some(t) = self.tasks.get(&ev.tid) else {
            return;
        };
        let Some(d) = t.on_cpu.filter(|&d| d != ev.cpu) else {
            return;
        };
        if self.cpus.get(d as usize).is_none_or(|s| s.tid != ev.tid)
            || ev.ts < t.since.saturating_add(TWO_CPU_SLACK_NS)
        {
            return;
        }
        let lost = |c: u16| self.lost_at.get(c as usize).copied().unwrap_or(0);
        if lost(d).max(lost(ev.cpu)) >= t.since {
            return;
        }
        // a switch away is the task's last record on that CPU: the clocks may disagree
        if let EventKind::SchedSwitch { prev_tid, .. } = ev.kind
            && prev_tid == ev.tid
        {
            return;
        }
        sink.anomaly(Anomaly {
            ts: ev.ts,
            cpu: ev.cpu,
            kind: AnomalyKind::TaskOnTwoCpus {
                tid: ev.tid,
                other_cpu: d,
            },
        });
        // once per move
        if let Some(t) = self.tasks.get_mut(&ev.tid) {
            t.since = ev.ts;
            t.on_cpu = Some(ev.cpu);
        }
        self.moved_from(Some(d), ev.cpu, ev.tid);
    }

    /// `tid`'s `on_cpu` moved from `was_on` to `now`: the CPU it left, if it still shows `tid`,
    /// shows it twice.
    #[inline]
    pub(super) fn moved_from(&mut self, was_on: Option<u16>, now: u16, tid: Tid) {
        if let Some(d) = was_on.filter(|&d| d != now)
            && self.cpus.get(d as usize).is_some_and(|s| s.tid == tid)
        {
            self.twice[d as usize] = true;
        }
    }

    /// Every CPU showing `tid` may show it twice (after a change of its task state that the
    /// precise rule of [`Self::moved_from`] does not follow: fork, exec, a TGID change; rare).
    pub(super) fn flag_shown(&mut self, tid: Tid) {
        for (s, t) in self.cpus.iter().zip(self.twice.iter_mut()) {
            *t |= s.tid == tid;
        }
    }

    /// What [`Self::check_two_cpus`] looks at first: the task of the record is current on
    /// another CPU by its own state.
    pub(super) fn shown_on_another_cpu(&self, ev: &Event) -> bool {
        self.tasks
            .get(&ev.tid)
            .and_then(|t| t.on_cpu)
            .is_some_and(|d| {
                d != ev.cpu && self.cpus.get(d as usize).is_some_and(|s| s.tid == ev.tid)
            })
    }

    /// Raises or drops the held duplicates whose earlier holder `ev` tells about.
    #[cold]
    pub(super) fn resolve_held(&mut self, ev: &Event, sink: &mut impl Sink) {
        let holder_went_on = |h: Tid| match ev.kind {
            EventKind::SchedProcessExit { tid } if tid == h => Some(false),
            EventKind::RseqUpdate { .. } | EventKind::SchedProcessExec { .. } if ev.tid == h => {
                Some(true)
            }
            // preempted (R, R+): it goes on where it was, in do_exit too; blocked: it held it
            EventKind::SchedSwitch {
                prev_tid,
                prev_state,
                ..
            } if prev_tid == h && !prev_state.runnable() => Some(true),
            EventKind::SchedProcessFork { parent, .. } if parent == h => Some(true),
            _ => None,
        };
        let mut i = 0;
        while i < self.held.len() {
            match holder_went_on(self.held[i].1) {
                Some(true) => sink.alarm(self.held.remove(i).0),
                Some(false) => {
                    self.held.remove(i);
                    self.exiting_holders += 1;
                }
                None => i += 1,
            }
        }
    }

    /// Raises the duplicates still held (the capture ended before their holder's record).
    pub fn flush(&mut self, sink: &mut impl Sink) {
        for (a, _) in self.held.drain(..) {
            sink.alarm(a);
        }
    }
}
