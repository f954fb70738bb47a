//! A scripted driver: feeds an [`Engine`] by hand, for tests, examples and scenario checks.
//! Time is explicit (`at`/`advance`), mms get ids in creation order.

use super::cpuset::CpuSet;
use super::engine::{DriverEvent, Engine};
use super::kind::PolicyKind;
use super::params::Params;
use super::registry::AnyPolicy;
use super::{lazy_compact, owner_mode, resume_batch};
use crate::events::Tid;
use crate::model::tasks::MmId;

pub struct Script {
    pub engine: Engine,
    pub now: u64,
    next_mm: u32,
}

impl Script {
    /// A model of `kind` on `cpus` CPUs at `hz`.
    pub fn new(kind: PolicyKind, cpus: u32, hz: u32) -> Script {
        Script::with_params(
            kind,
            Params {
                cpus,
                hz,
                seed: false,
                ..Params::default()
            },
        )
    }

    /// lazy-compact in its 6.4–6.12 form (first-zero allocation, no `recent_cid`) on `cpus`
    /// CPUs at 1000 Hz.
    pub fn lazy_compact_6_4(cpus: u32) -> Script {
        Script::with_params(
            PolicyKind::LazyCompact,
            Params {
                cpus,
                hz: 1000,
                version: super::params::KernelVersion::V6_4,
                ..Params::default()
            },
        )
    }

    pub fn with_params(kind: PolicyKind, params: Params) -> Script {
        Script {
            engine: Engine::new(kind, params),
            now: 0,
            next_mm: 0,
        }
    }

    pub fn step(&mut self, ev: DriverEvent) -> &mut Self {
        self.engine.step(self.now, &ev);
        self
    }

    /// Sets the time (ns); never goes back.
    pub fn at(&mut self, ns: u64) -> &mut Self {
        self.now = self.now.max(ns);
        self
    }

    pub fn advance(&mut self, ns: u64) -> &mut Self {
        self.now += ns;
        self
    }

    pub fn new_mm_id(&mut self) -> MmId {
        let id = MmId(self.next_mm);
        self.next_mm += 1;
        id
    }

    /// A process that existed before: task `tid` with a fresh mm (not seeded).
    pub fn process(&mut self, tid: Tid, cpu: u16) -> MmId {
        let mm = self.new_mm_id();
        self.step(DriverEvent::Existing {
            tid,
            mm: Some(mm),
            cpu,
            has_rseq: true,
        });
        mm
    }

    /// `parent` forks a process `child` (new mm) which execs on `cpu` into another new mm.
    pub fn fork_exec(&mut self, parent: Tid, child: Tid, cpu: u16) -> MmId {
        let forked = self.new_mm_id();
        self.step(DriverEvent::Fork {
            parent,
            child,
            shares_mm: false,
            new_mm: Some(forked),
            thread: false,
        });
        self.step(DriverEvent::WakeupNew { tid: child, cpu });
        self.switch(cpu, child);
        let mm = self.new_mm_id();
        self.step(DriverEvent::Exec {
            tid: child,
            cpu,
            new_mm: mm,
        });
        mm
    }

    /// `parent` creates thread `child`, first placed on `cpu`.
    pub fn thread(&mut self, parent: Tid, child: Tid, cpu: u16) -> &mut Self {
        self.step(DriverEvent::Fork {
            parent,
            child,
            shares_mm: true,
            new_mm: None,
            thread: true,
        });
        self.step(DriverEvent::WakeupNew { tid: child, cpu })
    }

    /// `parent` forks process `child` (no exec), first placed on `cpu`.
    pub fn fork(&mut self, parent: Tid, child: Tid, cpu: u16) -> MmId {
        let mm = self.new_mm_id();
        self.step(DriverEvent::Fork {
            parent,
            child,
            shares_mm: false,
            new_mm: Some(mm),
            thread: false,
        });
        self.step(DriverEvent::WakeupNew { tid: child, cpu });
        mm
    }

    pub fn switch(&mut self, cpu: u16, next: Tid) -> &mut Self {
        let prev = self.engine.core.curr[cpu as usize];
        self.step(DriverEvent::Switch { cpu, prev, next })
    }

    pub fn migrate(&mut self, tid: Tid, src: u16, dst: u16) -> &mut Self {
        self.step(DriverEvent::Migrate { tid, src, dst })
    }

    pub fn tick(&mut self, cpu: u16) -> &mut Self {
        self.step(DriverEvent::Tick { cpu })
    }

    /// Return to user (not forced: only effective with NR pending).
    pub fn ret(&mut self, tid: Tid) -> &mut Self {
        self.step(DriverEvent::RetUser {
            tid,
            observed: false,
        })
    }

    /// rseq registration then return to user (a new thread's first run).
    pub fn register(&mut self, tid: Tid) -> &mut Self {
        self.step(DriverEvent::RseqReg { tid });
        self.ret(tid)
    }

    pub fn exit(&mut self, tid: Tid) -> &mut Self {
        self.step(DriverEvent::Exit { tid });
        self.step(DriverEvent::MmPut { tid })
    }

    pub fn affinity(&mut self, tid: Tid, cpus: &[u32]) -> &mut Self {
        let bound = self.engine.core.params.cpus;
        let mask = CpuSet::from_iter_bounded(bound, cpus.iter().copied());
        self.step(DriverEvent::Affinity { tid, mask })
    }

    /// Runs `tid` on `cpu` and returns it to user space (switch-in + RET_USER).
    pub fn run(&mut self, cpu: u16, tid: Tid) -> &mut Self {
        self.switch(cpu, tid);
        self.ret(tid)
    }

    pub fn cid(&self, tid: Tid) -> Option<i32> {
        self.engine.task_cid(tid)
    }

    /// Number of predicted `UPDATE`s so far.
    pub fn updates(&self) -> usize {
        self.engine.core.run.updates.len()
    }

    /// The lazy-compact state of a model running lazy-compact or resume-batch (which wraps it).
    fn slots(&self) -> Option<&lazy_compact::LazyCompact> {
        match &self.engine.policy {
            AnyPolicy::LazyCompact(lc) => Some(lc),
            AnyPolicy::ResumeBatch(rb) => Some(&rb.slots),
            _ => None,
        }
    }

    /// lazy-compact / resume-batch state of `mm`.
    pub fn lc(&self, mm: MmId) -> Option<&lazy_compact::Mm> {
        self.slots()?.mm(mm)
    }

    pub fn lc_mut(&mut self, mm: MmId) -> Option<&mut lazy_compact::Mm> {
        let slots = match &mut self.engine.policy {
            AnyPolicy::LazyCompact(lc) => lc,
            AnyPolicy::ResumeBatch(rb) => &mut rb.slots,
            _ => return None,
        };
        slots.mms.get_mut(mm.0 as usize).filter(|m| m.live)
    }

    /// lazy-compact / resume-batch state of task `tid`.
    pub fn lc_task(&self, tid: Tid) -> Option<&lazy_compact::TaskState> {
        self.slots()?.task(&self.engine.core, tid)
    }

    /// resume-batch's own state of task `tid`.
    pub fn rb_task(&self, tid: Tid) -> Option<&resume_batch::TaskState> {
        match &self.engine.policy {
            AnyPolicy::ResumeBatch(rb) => rb.task(&self.engine.core, tid),
            _ => None,
        }
    }

    /// owner-mode state of `mm`.
    pub fn om(&self, mm: MmId) -> Option<&owner_mode::Mm> {
        match &self.engine.policy {
            AnyPolicy::OwnerMode(om) => om.mm(mm),
            _ => None,
        }
    }

    /// owner-mode state of task `tid` (its CID word).
    pub fn om_task(&self, tid: Tid) -> Option<&owner_mode::TaskState> {
        match &self.engine.policy {
            AnyPolicy::OwnerMode(om) => self.engine.core.task(tid).map(|t| om.tasks.get(t)),
            _ => None,
        }
    }

    /// All invariant breaks now (policy invariants + the ABI ones).
    pub fn violations(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .engine
            .check_invariants()
            .into_iter()
            .map(|f| format!("{} mm {:?}: {}", f.invariant, f.mm.map(|m| m.0), f.detail))
            .collect();
        v.extend(
            self.engine
                .core
                .run
                .violations
                .iter()
                .map(|x| format!("{} at {}: {}", x.invariant, x.ts, x.detail)),
        );
        v.extend(self.engine.core.run.alarms.iter().map(|a| a.describe()));
        v
    }
}
