//! Keeps the events of one process out of a system-wide stream, in time order.
//!
//! A thread belongs to the process when perf's PERF_SAMPLE_TID names the process for a record of
//! it, when it was listed in /proc/PID/task at start, or when a thread of the process created it
//! with CLONE_THREAD. Kept: every record in the context of one of its threads (rseq_update,
//! ticks, its forks and exit, its switch away), switches *into* its threads (recorded in the
//! context of the task they replace), migrations of its threads, and lost-event markers.

use super::attach::{Prefilter, Scope};
use crate::events::{CLONE_THREAD, Event, EventKind, TID_UNKNOWN, Tid};
use crate::sources::tracefs::decode::Peek;
use rustc_hash::FxHashSet;

pub struct Filter {
    scope: Scope,
    threads: FxHashSet<Tid>,
    /// Threads the process created, seen before their records were merged (prefilter only).
    candidates: FxHashSet<Tid>,
}

impl Filter {
    pub fn new(scope: Scope) -> Filter {
        let mut threads = FxHashSet::default();
        if let Scope::Process(pid) = scope {
            threads.insert(pid);
            threads.extend(list_threads(pid));
        }
        Filter {
            scope,
            threads,
            candidates: FxHashSet::default(),
        }
    }

    /// Re-reads /proc/PID/task (call after the events are enabled, so no thread slips through
    /// between the listing and the first record).
    pub fn refresh(&mut self) {
        if let Scope::Process(pid) = self.scope {
            self.threads.extend(list_threads(pid));
        }
    }

    pub fn is_member(&self, tid: Tid) -> bool {
        match self.scope {
            Scope::All => true,
            Scope::Process(_) => self.threads.contains(&tid),
        }
    }

    /// Whether to keep `ev`, whose current task perf placed in process `pid`. Must be called in
    /// time order: thread creation updates the membership for the records that follow.
    pub fn keep(&mut self, ev: &Event, pid: Tid) -> bool {
        let Scope::Process(me) = self.scope else {
            return true;
        };
        if pid == me && ev.tid != 0 && ev.tid != TID_UNKNOWN {
            self.threads.insert(ev.tid);
        }
        let mine = |t: Tid| self.threads.contains(&t);
        match ev.kind {
            EventKind::Lost { .. } => true,
            EventKind::TaskNewtask { tid, clone_flags } => {
                let parent_mine = mine(ev.tid);
                if parent_mine && clone_flags & CLONE_THREAD != 0 {
                    self.threads.insert(tid);
                } else {
                    // A pid reused by another process stops being ours.
                    self.threads.remove(&tid);
                }
                parent_mine
            }
            EventKind::SchedSwitch {
                prev_tid, next_tid, ..
            } => mine(prev_tid) || mine(next_tid) || mine(ev.tid),
            EventKind::SchedMigrateTask { tid, .. } => mine(tid),
            EventKind::SchedProcessFork { parent, .. } => mine(parent) || mine(ev.tid),
            EventKind::SchedProcessExec { tid, .. } | EventKind::SchedProcessExit { tid } => {
                mine(tid) || mine(ev.tid)
            }
            EventKind::SchedWakeupNew { tid, .. } => mine(tid),
            _ => mine(ev.tid),
        }
    }

    /// Threads known to belong to the process.
    pub fn threads(&self) -> usize {
        self.threads.len()
    }
}

impl Prefilter for Filter {
    fn note_new_task(&mut self, sample_pid: Tid, parent: Tid, child: Tid, clone_flags: u64) {
        if let Scope::Process(me) = self.scope
            && (sample_pid == me || self.threads.contains(&parent))
            && clone_flags & CLONE_THREAD != 0
        {
            self.candidates.insert(child);
        }
    }

    fn may_keep(&self, sample_pid: Tid, peek: &Peek) -> bool {
        let Scope::Process(me) = self.scope else {
            return true;
        };
        let known = |t: &Tid| self.threads.contains(t) || self.candidates.contains(t);
        sample_pid == me || known(&peek.common_pid) || peek.related.iter().any(known)
    }
}

fn list_threads(pid: u32) -> Vec<Tid> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{PrevState, StrId};

    fn ev(tid: Tid, kind: EventKind) -> Event {
        Event {
            ts: 1,
            tid,
            cpu: 0,
            kind,
        }
    }
    fn sw(prev: Tid, next: Tid) -> EventKind {
        EventKind::SchedSwitch {
            prev_tid: prev,
            next_tid: next,
            next_comm: StrId(0),
            next_prio: 120,
            prev_state: PrevState::from_text(b"S"),
        }
    }
    const UPD: EventKind = EventKind::RseqUpdate {
        cpu_id: 0,
        node_id: 0,
        mm_cid: 0,
    };

    #[test]
    fn keeps_the_process_and_its_new_threads() {
        // a process id far beyond pid_max, so /proc lists nothing
        let me = 4_000_000;
        let mut f = Filter::new(Scope::Process(me));
        assert!(f.keep(&ev(me, UPD), me));
        assert!(!f.keep(&ev(77, UPD), 77));
        // foreign task switching to ours: kept (the switch-in)
        assert!(f.keep(&ev(77, sw(77, me)), 77));
        assert!(!f.keep(&ev(77, sw(77, 78)), 77));
        // our thread creates thread 4000001 (CLONE_THREAD) and a child process 4000002 (fork)
        let t = me + 1;
        assert!(f.keep(
            &ev(
                me,
                EventKind::TaskNewtask {
                    tid: t,
                    clone_flags: 0x3d0f00
                }
            ),
            me
        ));
        assert!(f.keep(&ev(77, sw(77, t)), 77));
        let c = me + 2;
        assert!(f.keep(
            &ev(
                me,
                EventKind::TaskNewtask {
                    tid: c,
                    clone_flags: 0x1200000
                }
            ),
            me
        ));
        assert!(!f.keep(&ev(c, UPD), c));
        // a thread of ours identified by perf's pid alone
        assert!(f.keep(&ev(me + 3, UPD), me));
        assert!(f.keep(
            &ev(
                5,
                EventKind::SchedMigrateTask {
                    tid: me + 3,
                    orig_cpu: 0,
                    dest_cpu: 1
                }
            ),
            5
        ));
        assert!(f.keep(&ev(0, EventKind::Lost { count: Some(1) }), TID_UNKNOWN));
        assert!(!f.keep(&ev(0, EventKind::Tick), 0));
        assert_eq!(f.threads(), 3);
        // system-wide keeps everything
        let mut all = Filter::new(Scope::All);
        assert!(all.keep(&ev(77, UPD), 77));
    }

    #[test]
    fn prefilter_knows_threads_created_in_the_same_drain() {
        let me = 4_000_000;
        let mut f = Filter::new(Scope::Process(me));
        let peek = |common: Tid, a: Tid, b: Tid| Peek {
            common_pid: common,
            related: [a, b],
            new_task: None,
        };
        let child = me + 5;
        // a switch into the child, recorded on another CPU in a foreign context
        assert!(!f.may_keep(77, &peek(77, 77, child)));
        f.note_new_task(me, me, child, 0x3d0f00);
        assert!(f.may_keep(77, &peek(77, 77, child)));
        // a process forked by us is not a thread of ours
        f.note_new_task(me, me, me + 6, 0x1200000);
        assert!(!f.may_keep(77, &peek(77, me + 6, 0)));
        // perf's pid alone is enough
        assert!(f.may_keep(me, &peek(me + 9, TID_UNKNOWN, TID_UNKNOWN)));
        assert!(Filter::new(Scope::All).may_keep(1, &peek(1, 2, 3)));
    }
}
