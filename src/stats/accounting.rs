//! rseq accounting: how often each task's rseq area was updated, against what could have
//! caused it (switch-ins, exits to user space), and how often critical sections were aborted.

use crate::events::{EventKind, Tid, Trace};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize, Debug, Default, Clone, PartialEq)]
pub struct Account {
    pub rseq_updates: u64,
    /// rseq_update per second over the span considered.
    pub updates_per_s: f64,
    pub rseq_ip_fixups: u64,
    /// sched_switch events that switched the task in.
    pub switch_ins: u64,
    /// Returns to user space the capture shows: raw_syscalls sys_exit + irq_handler_exit while
    /// the task was current (an irq exit may return to kernel code, so this is an upper bound).
    pub exits_to_user: u64,
    /// rseq_update per exit to user, when the capture has exit events.
    pub updates_per_exit: Option<f64>,
    pub updates_per_switch_in: Option<f64>,
}

#[derive(Serialize, Debug, Default, Clone)]
pub struct Accounting {
    pub span_ns: u64,
    /// Whether the capture has events that mark exits to user (sys_exit, irq_handler_exit).
    pub has_exit_events: bool,
    pub overall: Account,
    pub tasks: BTreeMap<Tid, Account>,
}

fn finish(a: &mut Account, span_ns: u64, has_exits: bool) {
    a.updates_per_s = if span_ns > 0 {
        a.rseq_updates as f64 * 1e9 / span_ns as f64
    } else {
        0.0
    };
    a.updates_per_exit =
        (has_exits && a.exits_to_user > 0).then(|| a.rseq_updates as f64 / a.exits_to_user as f64);
    a.updates_per_switch_in =
        (a.switch_ins > 0).then(|| a.rseq_updates as f64 / a.switch_ins as f64);
}

/// Accounting over events `[from, to)` of the trace.
pub fn compute(trace: &Trace, from: usize, to: usize) -> Accounting {
    let mut acc = Accumulator::default();
    acc.feed(trace.events.range_model(from..to), trace);
    acc.finish()
}

/// What is counted per task while events come in (an [`Account`] is twice the size).
#[derive(Default, Clone, Copy, Debug, PartialEq)]
pub struct Counts {
    rseq_updates: u32,
    rseq_ip_fixups: u32,
    switch_ins: u32,
    exits_to_user: u32,
}

/// Which count of which task an event adds to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Counted {
    RseqUpdate,
    RseqIpFixup,
    SwitchIn,
    ExitToUser,
}

impl Counts {
    pub fn add(&mut self, c: Counted) {
        let n = match c {
            Counted::RseqUpdate => &mut self.rseq_updates,
            Counted::RseqIpFixup => &mut self.rseq_ip_fixups,
            Counted::SwitchIn => &mut self.switch_ins,
            Counted::ExitToUser => &mut self.exits_to_user,
        };
        *n = n.saturating_add(1);
    }

    /// The counts of two tasks under one tid, together.
    pub fn merged(self, o: Counts) -> Counts {
        Counts {
            rseq_updates: self.rseq_updates.saturating_add(o.rseq_updates),
            rseq_ip_fixups: self.rseq_ip_fixups.saturating_add(o.rseq_ip_fixups),
            switch_ins: self.switch_ins.saturating_add(o.switch_ins),
            exits_to_user: self.exits_to_user.saturating_add(o.exits_to_user),
        }
    }
}

/// Accounting fed slice by slice (a streaming load hands over one segment at a time).
#[derive(Default)]
pub struct Accumulator {
    acc: Accounting,
    /// Per task while events come in (a hash map: one lookup per event; ordered at the end).
    tasks: rustc_hash::FxHashMap<Tid, Counts>,
    first: Option<u64>,
    last: u64,
    sys_exit: Option<crate::events::StrId>,
    irq_exit: Option<crate::events::StrId>,
    /// Only the overall account is wanted (no per-task list: `stats` without `--json`).
    pub overall_only: bool,
}

impl Accumulator {
    /// Adds events; `meta` names their strings.
    pub fn feed<E: std::borrow::Borrow<crate::events::Event>>(
        &mut self,
        evs: impl IntoIterator<Item = E>,
        meta: &Trace,
    ) {
        self.prepare(meta);
        for e in evs {
            self.one(e.borrow());
        }
    }

    /// Looks up the names [`Self::one`] counts by: call before each batch of events (the
    /// names may be interned by any later segment).
    pub fn prepare(&mut self, meta: &Trace) {
        if self.sys_exit.is_none() {
            self.sys_exit = meta.strings.find(b"sys_exit");
        }
        if self.irq_exit.is_none() {
            self.irq_exit = meta.strings.find(b"irq_handler_exit");
        }
    }

    /// Adds one event (in the caller's own pass over the events: a second pass over a
    /// segment's events costs a second trip through memory).
    #[inline(always)]
    pub fn one(&mut self, e: &crate::events::Event) {
        if let Some((tid, c)) = self.classify(e) {
            self.tasks.entry(tid).or_default().add(c);
        }
    }

    /// Takes one event's span and kind into account, and says which count of which task it
    /// adds to: for a caller that keeps the per-task counts itself ([`Self::finish_with`]).
    #[inline(always)]
    pub fn classify(&mut self, e: &crate::events::Event) -> Option<(Tid, Counted)> {
        self.first.get_or_insert(e.ts);
        self.last = e.ts;
        match e.kind {
            EventKind::RseqUpdate { .. } => Some((e.tid, Counted::RseqUpdate)),
            EventKind::RseqIpFixup => Some((e.tid, Counted::RseqIpFixup)),
            EventKind::Other { name }
                if Some(name) == self.sys_exit || Some(name) == self.irq_exit =>
            {
                self.acc.has_exit_events = true;
                (e.tid != 0).then_some((e.tid, Counted::ExitToUser))
            }
            EventKind::SchedSwitch { next_tid, .. } if next_tid != 0 => {
                Some((next_tid, Counted::SwitchIn))
            }
            _ => None,
        }
    }

    pub fn finish(mut self) -> Accounting {
        let tasks = std::mem::take(&mut self.tasks);
        self.finish_with(tasks)
    }

    /// The accounting, with the per-task counts kept by the caller (each tid once).
    pub fn finish_with(self, tasks: impl IntoIterator<Item = (Tid, Counts)>) -> Accounting {
        let mut acc = self.acc;
        let account = |c: &Counts| Account {
            rseq_updates: c.rseq_updates as u64,
            rseq_ip_fixups: c.rseq_ip_fixups as u64,
            switch_ins: c.switch_ins as u64,
            exits_to_user: c.exits_to_user as u64,
            ..Account::default()
        };
        let counted =
            |tid: Tid, c: &Counts| tid != 0 && (c.rseq_updates > 0 || c.rseq_ip_fixups > 0);
        let mut all = Account::default();
        for (tid, c) in tasks.into_iter().filter(|(t, c)| counted(*t, c)) {
            all.rseq_updates += c.rseq_updates as u64;
            all.rseq_ip_fixups += c.rseq_ip_fixups as u64;
            all.switch_ins += c.switch_ins as u64;
            all.exits_to_user += c.exits_to_user as u64;
            if !self.overall_only {
                acc.tasks.insert(tid, account(&c));
            }
        }
        acc.span_ns = self.first.map_or(0, |f| self.last.saturating_sub(f));
        let (span, has) = (acc.span_ns, acc.has_exit_events);
        for a in acc.tasks.values_mut() {
            finish(a, span, has);
        }
        finish(&mut all, span, has);
        acc.overall = all;
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{LoadOptions, load_bytes};

    #[test]
    fn counts_rates_and_ratios() {
        let t = load_bytes(
            "x",
            b"b-1 [000] d..2.  1.000000: sched_switch: prev_comm=b prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=a next_pid=2 next_prio=120\n\
              a-2 [000] .....  1.100000: sys_exit: NR 0 = 1\n\
              a-2 [000] .....  1.200000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n\
              a-2 [000] .....  1.300000: irq_handler_exit: irq=1 ret=handled\n\
              a-2 [000] .....  1.400000: rseq_ip_fixup: regs_ip=0x1 start_ip=0x0 post_commit_offset=2 abort_ip=0x3\n\
              a-2 [000] .....  2.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n",
            &LoadOptions::default(),
        )
        .unwrap();
        let a = compute(&t, 0, t.events.len());
        assert!(a.has_exit_events);
        let x = &a.tasks[&2];
        assert_eq!(
            (
                x.rseq_updates,
                x.rseq_ip_fixups,
                x.switch_ins,
                x.exits_to_user
            ),
            (2, 1, 1, 2)
        );
        assert_eq!(x.updates_per_exit, Some(1.0));
        assert_eq!(x.updates_per_switch_in, Some(2.0));
        assert!((x.updates_per_s - 2.0).abs() < 1e-9);
        assert_eq!(a.overall.rseq_updates, 2);
        assert!(!a.tasks.contains_key(&1));
    }
}
