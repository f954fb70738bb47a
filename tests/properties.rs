//! Property tests: random schedules through each policy; after every event the policy's
//! invariants hold (lazy-compact L1–L5, resume-batch R1–R5 + L1–L5, owner-mode O1–O6), no two
//! running threads of one mm share a CID, and every CID is below the possible-CPU count.

use cidscope::events::Tid;
use cidscope::model::MmId;
use cidscope::model::policies::script::Script;
use cidscope::model::policies::{
    CpuSet, DriverEvent, KernelVersion, Params, PolicyKind, Regime, RqClockMode, ScanScope,
};
use proptest::prelude::*;

/// One random step: kind, two operands, and a time advance.
type Op = (u8, u16, u16, u32);

struct World {
    s: Script,
    p: u32,
    /// Live tasks: (tid, allowed CPUs).
    live: Vec<(Tid, Vec<u16>)>,
    next_tid: Tid,
}

impl World {
    fn new(kind: PolicyKind, params: Params) -> World {
        let p = params.cpus;
        let mut s = Script::with_params(kind, params);
        let all: Vec<u16> = (0..p as u16).collect();
        let mut live = Vec::new();
        for tid in [1, 2] {
            s.process(tid, 0);
            live.push((tid, all.clone()));
        }
        World {
            s,
            p,
            live,
            next_tid: 10,
        }
    }

    fn task(&self, a: u16) -> (Tid, Vec<u16>) {
        self.live[a as usize % self.live.len()].clone()
    }

    fn running_cpu(&self, tid: Tid) -> Option<u16> {
        self.s
            .engine
            .core
            .task(tid)
            .filter(|t| t.running)
            .map(|t| t.cpu)
    }

    fn pick(allowed: &[u16], b: u16) -> u16 {
        allowed[b as usize % allowed.len()]
    }

    fn apply(&mut self, (kind, a, b, dt): Op) {
        self.s.advance(dt as u64 % 3_000_000);
        if self.live.is_empty() {
            return;
        }
        match kind % 13 {
            0 | 1 => {
                // fork a thread (0) or a process (1)
                if self.live.len() >= 12 {
                    return;
                }
                let (parent, allowed) = self.task(a);
                let child = self.next_tid;
                self.next_tid += 1;
                let cpu = Self::pick(&allowed, b);
                // the parent forks in its own context
                if self.running_cpu(parent).is_none() {
                    self.s.run(cpu, parent);
                }
                if kind % 13 == 0 {
                    self.s.thread(parent, child, cpu);
                } else {
                    self.s.fork(parent, child, cpu);
                }
                self.live.push((child, allowed));
            }
            2 => {
                let (tid, allowed) = self.task(a);
                let cpu = self.running_cpu(tid).unwrap_or(Self::pick(&allowed, b));
                let mm = self.s.new_mm_id();
                self.s.step(DriverEvent::Exec {
                    tid,
                    cpu,
                    new_mm: mm,
                });
                self.s.step(DriverEvent::RseqReg { tid }).ret(tid);
            }
            3 => {
                if self.live.len() <= 1 {
                    return;
                }
                // exits happen in the task's own context
                let i = a as usize % self.live.len();
                let (tid, allowed) = self.live[i].clone();
                let cpu = self.running_cpu(tid).unwrap_or(Self::pick(&allowed, b));
                self.s.switch(cpu, tid).exit(tid).switch(cpu, 0);
                self.live.remove(i);
            }
            4 | 5 => {
                let cpu = (b as u32 % self.p) as u16;
                if a % 5 == 0 {
                    self.s.switch(cpu, 0);
                } else {
                    let (tid, allowed) = self.task(a);
                    if allowed.contains(&cpu) {
                        self.s.run(cpu, tid);
                    }
                }
            }
            6 => {
                let (tid, allowed) = self.task(a);
                if self.running_cpu(tid).is_some() {
                    return;
                }
                let src = self.s.engine.core.task(tid).map_or(0, |t| t.cpu);
                let dst = Self::pick(&allowed, b);
                self.s.migrate(tid, src, dst);
            }
            7 | 8 => {
                let cpu = (b as u32 % self.p) as u16;
                self.s.tick(cpu);
                let curr = self.s.engine.core.curr[cpu as usize];
                if curr != 0 {
                    self.s.ret(curr);
                }
            }
            9 => {
                // returns to user happen in the task's context
                let (tid, _) = self.task(a);
                if self.running_cpu(tid).is_some() {
                    self.s.ret(tid);
                }
            }
            10 => {
                // affinity: a non-empty subset of the CPUs
                let i = a as usize % self.live.len();
                let tid = self.live[i].0;
                let mut cpus: Vec<u16> = (0..self.p as u16).filter(|c| b & (1 << c) != 0).collect();
                if cpus.is_empty() {
                    cpus.push((b as u32 % self.p) as u16);
                }
                if let Some(c) = self.running_cpu(tid)
                    && !cpus.contains(&c)
                {
                    self.s.switch(c, 0);
                }
                let mask = CpuSet::from_iter_bounded(self.p, cpus.iter().map(|&c| c as u32));
                self.s.step(DriverEvent::Affinity { tid, mask });
                self.live[i].1 = cpus;
            }
            11 => {
                let (tid, _) = self.task(a);
                if self.running_cpu(tid).is_some() {
                    self.s.step(DriverEvent::Signal { tid });
                }
            }
            _ => {
                // a long pause (scans come due), or owner-mode deferred work
                self.s.advance(dt as u64 % 150_000_000);
                if let Some(mm) = self.s.engine.core.task(self.task(a).0).and_then(|t| t.mm) {
                    self.s.step(DriverEvent::Work { mm });
                }
            }
        }
    }
}

fn check(kind: PolicyKind, params: Params, ops: &[Op]) -> Result<(), TestCaseError> {
    run_world(kind, params, ops).map(|_| ())
}

fn run_world(kind: PolicyKind, params: Params, ops: &[Op]) -> Result<World, TestCaseError> {
    let mut w = World::new(kind, params);
    for (i, &op) in ops.iter().enumerate() {
        w.apply(op);
        let v = w.s.violations();
        prop_assert!(v.is_empty(), "{kind}: after op {i} {op:?}: {v:#?}");
    }
    // every predicted UPDATE has a CID below P
    for u in &w.s.engine.core.run.updates {
        prop_assert!(
            u.cid >= 0 && (u.cid as u32) < w.p,
            "UPDATE CID {} >= P",
            u.cid
        );
    }
    Ok(w)
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        (any::<u8>(), any::<u16>(), any::<u16>(), any::<u32>()),
        1..160,
    )
}

fn params(p: u32, hz: u32) -> Params {
    Params {
        cpus: p,
        hz,
        batch: 2,
        seed: false,
        check_invariants: true,
        ..Params::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn lazy_compact_invariants(p in 1u32..6, hz in prop::sample::select(vec![250u32, 1000]),
                               ver in 0u8..3, stale in any::<bool>(), ops in ops()) {
        let mut prm = params(p, hz);
        prm.version = [KernelVersion::V6_4, KernelVersion::V6_13, KernelVersion::V6_14][ver as usize];
        prm.rq_clock = if stale { RqClockMode::Stale } else { RqClockMode::Now };
        check(PolicyKind::LazyCompact, prm, &ops)?;
    }

    #[test]
    fn resume_batch_invariants(p in 1u32..7, b in 1u32..4, visited in any::<bool>(), ops in ops()) {
        let mut prm = params(p, 1000);
        prm.batch = b;
        prm.scan = if visited { ScanScope::Visited } else { ScanScope::All };
        check(PolicyKind::ResumeBatch, prm, &ops)?;
    }

    #[test]
    fn owner_mode_invariants(p in 1u32..7, legacy in any::<bool>(), ops in ops()) {
        let mut prm = params(p, 1000);
        prm.regime = legacy.then_some(Regime::Legacy);
        check(PolicyKind::OwnerMode, prm, &ops)?;
    }
}

/// A fixed long schedule on more CPUs, every policy (deterministic companion of the above).
#[test]
fn long_schedule_every_policy() {
    let mut ops = Vec::new();
    let mut x: u64 = 0x1234_5678;
    for _ in 0..3000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ops.push((x as u8, (x >> 8) as u16, (x >> 24) as u16, (x >> 40) as u32));
    }
    for kind in PolicyKind::ALL {
        let r = run_world(kind, params(4, 1000), &ops);
        let w = match r {
            Ok(w) => w,
            Err(e) => panic!("{kind}: {e:?}"),
        };
        // the schedule reaches the interesting states
        let run = &w.s.engine.core.run;
        match kind {
            PolicyKind::OwnerMode => {
                assert!(
                    run.modes.iter().any(|m| m.percpu),
                    "owner-mode: per-CPU mode reached"
                );
                let mut last: std::collections::HashMap<u32, bool> = Default::default();
                let mut back = false;
                for m in &run.modes {
                    if last.insert(m.mm.0, m.percpu) == Some(true) && !m.percpu && m.users > 0 {
                        back = true;
                    }
                }
                assert!(back, "owner-mode: a switch back to per-task");
            }
            _ => {
                assert!(
                    run.compactions
                        .iter()
                        .any(|c| c.scanned && !c.freed.is_empty()),
                    "{kind}: scans that free CIDs"
                );
                assert!(
                    run.compactions.iter().any(|c| !c.lazied.is_empty()),
                    "{kind}: lazy"
                );
            }
        }
        assert!(
            run.updates.len() > 100,
            "{kind}: {} updates",
            run.updates.len()
        );
    }
    let _ = MmId(0);
}
