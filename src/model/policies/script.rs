//! A scripted driver: feeds an [`Engine`] by hand, for tests, examples and scenario checks.
//! Time is explicit (`at`/`advance`), mms get ids in creation order.

use super::driver::{DriverEvent, Engine, PolicyState};
use super::lazy_compact::LcMm;
use super::owner_mode::OmMm;
use super::{CpuSet, Params, PolicyKind};
use crate::events::Tid;
use crate::model::MmId;

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
        let p = self.engine.core.p.cpus;
        let mask = CpuSet::from_iter_bounded(p, cpus.iter().copied());
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

    /// lazy-compact / resume-batch state of `mm`.
    pub fn lc(&self, mm: MmId) -> Option<&LcMm> {
        match &self.engine.policy {
            PolicyState::Slot(p) => p.mm(mm),
            PolicyState::Owner(_) => None,
        }
    }

    pub fn lc_mut(&mut self, mm: MmId) -> Option<&mut LcMm> {
        match &mut self.engine.policy {
            PolicyState::Slot(p) => p.mms.get_mut(mm.0 as usize).filter(|m| m.live),
            PolicyState::Owner(_) => None,
        }
    }

    /// owner-mode state of `mm`.
    pub fn om(&self, mm: MmId) -> Option<&OmMm> {
        match &self.engine.policy {
            PolicyState::Owner(p) => p.mm(mm),
            PolicyState::Slot(_) => None,
        }
    }

    /// All invariant breaks now (policy invariants + the ABI ones).
    pub fn violations(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .engine
            .check_invariants()
            .into_iter()
            .map(|(mm, inv, d)| format!("{inv} mm {:?}: {d}", mm.map(|m| m.0)))
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
