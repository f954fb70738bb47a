//! A small deterministic scheduler: per-CPU run queues, wake placement (previous CPU if idle,
//! else the next idle one), idle pulls and tick-time balancing, a 3 ms slice for normal tasks,
//! FIFO priority for RT tasks, NO_HZ_IDLE ticks (idle CPUs do not tick) and nohz_full.
//!
//! Every scheduling decision is written as the canonical event a 6.18 kernel would trace and
//! fed at once to a [`Replayer`], so the model sees exactly what a replay of the recorded
//! trace sees. Returns to user space, rseq registration and the cost of compaction calls are
//! the only things the model gets directly (they leave no trace of their own).

mod program;
mod task;

use super::config::SimConfig;
use super::cost::Rng;
use crate::events::{Event, EventKind, PrevState, TaskMeta, Tid, Trace};
use crate::model::policies::{DriverEvent, Replayer};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use task::{Cpu, Ev, FOREVER, Prog, STask, Spec, St};

/// clone_flags of a pthread (as traced on the capture box).
pub const CLONE_FLAGS_THREAD: u64 = 0x3d0f00;
/// clone_flags of fork() (no CLONE_VM).
pub const CLONE_FLAGS_FORK: u64 = 0x1200000;
/// The launching shell's pid.
pub const SHELL_TID: Tid = 1000;

const SLICE_US: u64 = 3_000;

pub struct Sim<'a> {
    cfg: &'a SimConfig,
    now: u64,
    seq: u64,
    q: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    cpus: Vec<Cpu>,
    tasks: Vec<STask>,
    rng: Rng,
    pub rep: Replayer,
    pub trace: Trace,
    pub meta: crate::events::TaskTable,
    end: u64,
    tick_us: u64,
    leader: Option<usize>,
    /// churn: workers of the current batch still alive.
    churn_alive: u32,
    next_tid: Tid,
    /// When the run stopped at `SimConfig::max_events`, the simulated time it reached (ns).
    pub capped_at: Option<u64>,
}

impl<'a> Sim<'a> {
    pub fn new(cfg: &'a SimConfig, rep: Replayer) -> Sim<'a> {
        let p = cfg.params.cpus as usize;
        let mut trace = Trace::new(
            format!("sim:{}", cfg.workload.id()),
            crate::events::Origin::Sim,
        );
        trace.ncpus_hint = Some(cfg.params.cpus);
        Sim {
            cfg,
            now: 0,
            seq: 0,
            q: BinaryHeap::new(),
            cpus: vec![Cpu::default(); p],
            tasks: Vec::new(),
            rng: Rng::new(cfg.seed),
            rep,
            trace,
            meta: Default::default(),
            end: cfg.duration_ns / 1000,
            tick_us: 1_000_000 / cfg.params.hz.max(1) as u64,
            leader: None,
            churn_alive: 0,
            next_tid: SHELL_TID + 1,
            capped_at: None,
        }
    }

    fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.q.push(Reverse((at, self.seq, ev)));
    }

    fn ts(&self) -> u64 {
        self.now * 1000
    }

    /// Writes a canonical event and feeds it to the model.
    fn emit(&mut self, cpu: u16, tid: Tid, kind: EventKind) {
        let ev = Event {
            ts: self.ts(),
            tid,
            cpu,
            kind,
        };
        let idx = self.trace.events.len();
        self.trace.events.push(ev);
        self.rep.apply(idx, &ev, &self.meta);
    }

    fn tid_of(&self, t: Option<usize>) -> Tid {
        t.map_or(0, |i| self.tasks[i].tid)
    }

    fn new_task(&mut self, comm: &str, tgid: Option<Tid>, prog: Prog, cpu: u16) -> usize {
        let tid = if self.tasks.is_empty() {
            SHELL_TID
        } else {
            let t = self.next_tid;
            self.next_tid += 1;
            t
        };
        let comm_id = self.trace.strings.intern_str(comm);
        self.meta.insert(
            tid,
            TaskMeta {
                tgid: Some(tgid.unwrap_or(tid)),
                comm: comm_id,
            },
        );
        self.tasks.push(STask {
            tid,
            comm: comm_id,
            prio: 120,
            rt: false,
            pinned: None,
            cpu,
            state: St::New,
            epoch: 0,
            rem: 0,
            run_start: 0,
            slice_start: 0,
            prog,
            pending_exec: false,
            registered: true,
        });
        self.tasks.len() - 1
    }

    /// Runs the simulation to its end.
    pub fn run(&mut self) {
        let shell = self.new_task("bash", None, Prog::Shell, 0);
        self.tasks[shell].rem = 30;
        self.push(0, Ev::Start);
        self.push(self.tick_us, Ev::Tick);
        let cap = self.cfg.max_events.unwrap_or(u64::MAX) as usize;
        while let Some(Reverse((at, _, ev))) = self.q.pop() {
            if at > self.end {
                break;
            }
            if self.trace.events.len() >= cap {
                // the run would not fit in memory: it stops here and says so (`SimOutput::capped`)
                self.capped_at = Some(at.saturating_mul(1000));
                self.end = at;
                break;
            }
            self.now = at;
            match ev {
                Ev::Start => {
                    // the shell is running on CPU 0 when the recording starts
                    self.switch(0, Some(shell), PrevState::from_text(b"S"));
                }
                Ev::Tick => self.tick(),
                Ev::Wake { task, epoch } => {
                    let t = task as usize;
                    if self.tasks[t].epoch == epoch && self.tasks[t].state == St::Sleeping {
                        let waker_cpu = self.tasks[t].cpu;
                        let waker = self.cpus[waker_cpu as usize].curr;
                        self.wake(t, waker_cpu, waker);
                    }
                }
                Ev::Done { task, epoch } => {
                    let t = task as usize;
                    if self.tasks[t].epoch == epoch && self.tasks[t].state == St::Running {
                        self.tasks[t].rem = 0;
                        self.done(t);
                    }
                }
            }
        }
        self.now = self.end;
    }

    // ------------------------------------------------------------------ scheduling core

    /// Context switch on `cpu` to `next` (or idle).
    fn switch(&mut self, cpu: u16, next: Option<usize>, prev_state: PrevState) {
        let c = cpu as usize;
        let prev = self.cpus[c].curr;
        if prev == next {
            return;
        }
        if let Some(p) = prev {
            let t = &mut self.tasks[p];
            if t.rem < FOREVER {
                t.rem = t.rem.saturating_sub(self.now - t.run_start);
            }
            if t.state == St::Running {
                t.state = St::Runnable;
            }
            t.epoch += 1;
        }
        let (next_tid, next_comm, next_prio) = match next {
            Some(n) => (self.tasks[n].tid, self.tasks[n].comm, self.tasks[n].prio),
            None => (
                0,
                self.trace.strings.intern_str(&format!("swapper/{cpu}")),
                120,
            ),
        };
        let prev_tid = self.tid_of(prev);
        self.emit(
            cpu,
            prev_tid,
            EventKind::SchedSwitch {
                prev_tid,
                next_tid,
                next_comm,
                next_prio,
                prev_state,
            },
        );
        self.cpus[c].curr = next;
        let Some(n) = next else { return };
        let now = self.now;
        let t = &mut self.tasks[n];
        t.state = St::Running;
        t.cpu = cpu;
        t.run_start = now;
        t.slice_start = now;
        t.epoch += 1;
        let (epoch, rem) = (t.epoch, t.rem);
        if rem < FOREVER {
            self.push(
                now + rem.max(1),
                Ev::Done {
                    task: n as u32,
                    epoch,
                },
            );
        }
        if !self.tasks[n].pending_exec && !matches!(self.tasks[n].prog, Prog::Shell) {
            self.ret_user(n);
        }
    }

    /// The task returns to user space: rseq registration on its first run, then RET_USER.
    fn ret_user(&mut self, n: usize) {
        let tid = self.tasks[n].tid;
        let ts = self.ts();
        if !self.tasks[n].registered {
            self.tasks[n].registered = true;
            self.rep.engine.step(ts, &DriverEvent::RseqReg { tid });
        }
        let ub = self.rep.engine.core.run.updates.len();
        let cb = self.rep.engine.core.run.compactions.len();
        self.rep.engine.step(
            ts,
            &DriverEvent::RetUser {
                tid,
                observed: false,
            },
        );
        let new_updates: Vec<_> = self.rep.engine.core.run.updates[ub..].to_vec();
        for u in new_updates {
            let ev = Event {
                ts,
                tid: u.tid,
                cpu: u.cpu,
                kind: EventKind::RseqUpdate {
                    cpu_id: u.cpu as i32,
                    node_id: 0,
                    mm_cid: u.cid,
                },
            };
            self.trace.events.push(ev);
            self.rep.observe_own_update(&ev, &self.meta);
        }
        // compaction calls run in this task's context: charge their cost
        let mut cost = 0u64;
        let ce = self.rep.engine.core.run.compactions.len();
        for i in cb..ce {
            let scanned = {
                let c = &self.rep.engine.core.run.compactions[i];
                if c.scanned { c.cpus_scanned.len() } else { 0 }
            };
            let ns = self.cfg.cost.call_ns(scanned, &mut self.rng);
            self.rep.engine.core.run.compactions[i].cost_ns = ns;
            cost += ns;
        }
        if cost > 0 {
            let t = &mut self.tasks[n];
            if t.state == St::Running && t.rem < FOREVER {
                let elapsed = self.now - t.run_start;
                t.rem = t.rem.saturating_sub(elapsed) + cost.div_ceil(1000);
                t.run_start = self.now;
                t.epoch += 1;
                let (epoch, rem) = (t.epoch, t.rem);
                self.push(
                    self.now + rem.max(1),
                    Ev::Done {
                        task: n as u32,
                        epoch,
                    },
                );
            }
        }
    }

    fn idle(&self, c: usize) -> bool {
        self.cpus[c].curr.is_none() && self.cpus[c].rq.is_empty()
    }

    fn allowed(&self, t: usize, c: usize) -> bool {
        self.tasks[t].pinned.is_none_or(|p| p as usize == c)
    }

    /// Wake placement: pinned CPU; previous CPU if idle; the next idle CPU; else previous.
    fn place(&self, t: usize, prev: u16) -> u16 {
        if let Some(p) = self.tasks[t].pinned {
            return p;
        }
        let n = self.cpus.len();
        let prev = (prev as usize).min(n - 1);
        if self.idle(prev) {
            return prev as u16;
        }
        for k in 1..n {
            let c = (prev + k) % n;
            if self.idle(c) {
                return c as u16;
            }
        }
        prev as u16
    }

    /// Puts a runnable task on `cpu`: runs it at once on an idle CPU, preempts a normal task
    /// for an RT one, else queues it.
    fn enqueue(&mut self, t: usize, cpu: u16) {
        let c = cpu as usize;
        self.tasks[t].state = St::Runnable;
        self.tasks[t].cpu = cpu;
        match self.cpus[c].curr {
            None => self.switch(cpu, Some(t), PrevState::from_text(b"S")),
            Some(cur) if self.tasks[t].rt && !self.tasks[cur].rt => {
                self.cpus[c].rq.push_front(cur);
                self.switch(cpu, Some(t), PrevState::from_text(b"R+"));
            }
            Some(_) => {
                self.cpus[c].rq.push_back(t);
                // the enqueue kicks a stopped tick back on
                self.cpus[c].tick_stopped = false;
            }
        }
    }

    /// Wakes a sleeping task; `waker` runs on `waker_cpu` (records go there).
    fn wake(&mut self, t: usize, waker_cpu: u16, waker: Option<usize>) {
        let prev = self.tasks[t].cpu;
        let cpu = self.place(t, prev);
        if cpu != prev {
            let wtid = self.tid_of(waker);
            let tid = self.tasks[t].tid;
            self.emit(
                waker_cpu,
                wtid,
                EventKind::SchedMigrateTask {
                    tid,
                    orig_cpu: prev,
                    dest_cpu: cpu,
                },
            );
        }
        self.tasks[t].rem = self.burst(t);
        self.enqueue(t, cpu);
    }

    /// The running task `t` stops running: sleeps until `until`, waits forever, or exits.
    fn block(&mut self, t: usize, until: Option<u64>, exit: bool) {
        let cpu = self.tasks[t].cpu;
        let c = cpu as usize;
        if exit {
            let tid = self.tasks[t].tid;
            self.emit(cpu, tid, EventKind::SchedProcessExit { tid });
            self.tasks[t].state = St::Dead;
            if matches!(self.tasks[t].prog, Prog::ChurnWorker) {
                self.churn_alive = self.churn_alive.saturating_sub(1);
                if self.churn_alive == 0
                    && let Some(l) = self.leader
                    && self.tasks[l].state == St::Sleeping
                {
                    self.wake(l, cpu, Some(t));
                }
            }
        } else {
            self.tasks[t].state = St::Sleeping;
        }
        self.tasks[t].epoch += 1;
        let mut next = self.cpus[c].rq.pop_front();
        if next.is_none() {
            next = self.pull_for(cpu, Some(t));
        }
        let state = if exit { "X" } else { "S" };
        self.switch(cpu, next, PrevState::from_text(state.as_bytes()));
        if let Some(at) = until {
            let epoch = self.tasks[t].epoch;
            self.push(
                at.max(self.now + 1),
                Ev::Wake {
                    task: t as u32,
                    epoch,
                },
            );
        }
    }

    /// Idle balance: `cpu` is about to go idle; pull the first movable queued task of the
    /// CPU with the longest queue.
    fn pull_for(&mut self, cpu: u16, current: Option<usize>) -> Option<usize> {
        let n = self.cpus.len();
        let mut best: Option<(usize, usize)> = None;
        for d in 0..n {
            if d == cpu as usize {
                continue;
            }
            let len = self.cpus[d].rq.len();
            if len > 0
                && best.is_none_or(|(_, l)| len > l)
                && let Some(pos) = self.cpus[d]
                    .rq
                    .iter()
                    .position(|&t| self.allowed(t, cpu as usize))
            {
                let _ = pos;
                best = Some((d, len));
            }
        }
        let (d, _) = best?;
        let pos = self.cpus[d]
            .rq
            .iter()
            .position(|&t| self.allowed(t, cpu as usize))?;
        let t = self.cpus[d].rq.remove(pos)?;
        let tid = self.tasks[t].tid;
        let ctid = self.tid_of(current);
        self.emit(
            cpu,
            ctid,
            EventKind::SchedMigrateTask {
                tid,
                orig_cpu: d as u16,
                dest_cpu: cpu,
            },
        );
        self.tasks[t].cpu = cpu;
        Some(t)
    }

    /// The scheduler tick on every CPU running a task (idle CPUs do not tick).
    fn tick(&mut self) {
        let next_tick = self.now + self.tick_us;
        if next_tick <= self.end {
            self.push(next_tick, Ev::Tick);
        }
        for c in 0..self.cpus.len() {
            let Some(t) = self.cpus[c].curr else { continue };
            if self.cpus[c].tick_stopped {
                continue;
            }
            let cpu = c as u16;
            let tid = self.tasks[t].tid;
            self.emit(cpu, tid, EventKind::Tick);
            let queued = !self.cpus[c].rq.is_empty();
            if queued && !self.tasks[t].rt && self.now - self.tasks[t].slice_start >= SLICE_US {
                // slice used up: preempt
                self.cpus[c].rq.push_back(t);
                let next = self.cpus[c].rq.pop_front();
                self.switch(cpu, next, PrevState::from_text(b"R"));
                continue;
            }
            // work queued by the tick (or a changed CID) is handled on the way back to user
            let nr = self
                .rep
                .engine
                .core
                .task(tid)
                .is_some_and(|x| x.notify_resume);
            if nr && !self.tasks[t].pending_exec {
                self.ret_user(t);
            }
            if queued {
                self.balance_from(c);
            }
            if self.cfg.nohz_full.test(c as u32) && self.cpus[c].rq.is_empty() {
                self.cpus[c].tick_stopped = true;
                self.emit(cpu, tid, EventKind::TickStop { success: true });
            }
        }
    }

    /// Moves queued tasks of `c` to idle CPUs.
    fn balance_from(&mut self, c: usize) {
        let n = self.cpus.len();
        let mut i = 0;
        while i < self.cpus[c].rq.len() {
            let t = self.cpus[c].rq[i];
            let target = (1..n)
                .map(|k| (c + k) % n)
                .find(|&d| self.idle(d) && self.allowed(t, d));
            let Some(d) = target else {
                i += 1;
                continue;
            };
            self.cpus[c].rq.remove(i);
            let tid = self.tasks[t].tid;
            let ctid = self.tid_of(self.cpus[c].curr);
            self.emit(
                c as u16,
                ctid,
                EventKind::SchedMigrateTask {
                    tid,
                    orig_cpu: c as u16,
                    dest_cpu: d as u16,
                },
            );
            self.tasks[t].cpu = d as u16;
            self.switch(d as u16, Some(t), PrevState::from_text(b"S"));
        }
    }

    // ------------------------------------------------------------------ workloads

    /// Creates a child of `parent` as `spec` says, places it and lets it run.
    fn spawn(&mut self, parent: usize, spec: Spec) -> usize {
        let pcpu = self.tasks[parent].cpu;
        let ptid = self.tasks[parent].tid;
        let tgid = if spec.thread {
            self.meta.get(&ptid).and_then(|m| m.tgid)
        } else {
            None
        };
        let child = self.new_task(spec.comm, tgid, spec.prog, pcpu);
        let ctid = self.tasks[child].tid;
        {
            let c = &mut self.tasks[child];
            c.registered = !spec.thread; // a process inherits the registration
            c.pending_exec = spec.exec;
            c.rt = spec.rt;
            if spec.rt {
                c.prio = 0;
            }
            c.pinned = spec.pinned;
        }
        let flags = if spec.thread {
            CLONE_FLAGS_THREAD
        } else {
            CLONE_FLAGS_FORK
        };
        self.emit(
            pcpu,
            ptid,
            EventKind::TaskNewtask {
                tid: ctid,
                clone_flags: flags,
            },
        );
        self.emit(
            pcpu,
            ptid,
            EventKind::SchedProcessFork {
                parent: ptid,
                child: ctid,
            },
        );
        let cpu = self.place(child, pcpu);
        self.emit(
            pcpu,
            ptid,
            EventKind::SchedWakeupNew {
                tid: ctid,
                target_cpu: cpu,
            },
        );
        self.tasks[child].rem = self.burst(child);
        self.enqueue(child, cpu);
        child
    }
}
