//! The workloads' programs: how long each task runs and what it does when its burst ends — the
//! shell forks the workload's leader, which execs and spawns its threads or processes; timer
//! threads sleep to their next period, sleepers for a random while, hogs never block, churn
//! workers exit and their leader joins them.

use super::Sim;
use super::task::{Ev, FOREVER, Prog, Spec, St};
use crate::events::EventKind;
use crate::sim::config::Workload;

impl Sim<'_> {
    /// Length of the next burst after a wakeup.
    pub(super) fn burst(&mut self, t: usize) -> u64 {
        match self.tasks[t].prog {
            Prog::Cyclic { .. } => self.cfg.cyclic_run_us,
            Prog::Sleeper { run_lo, run_hi, .. } => self.rng.range(run_lo, run_hi),
            Prog::Leader { .. } if self.tasks[t].pending_exec => 50,
            Prog::Leader { .. } => 20,
            Prog::Hog => FOREVER,
            Prog::ChurnWorker => 200,
            Prog::Shell => 30,
        }
    }

    fn threads(&self) -> u32 {
        self.cfg.threads()
    }

    /// The running task `t` finished its burst.
    pub(super) fn done(&mut self, t: usize) {
        match self.tasks[t].prog.clone() {
            Prog::Shell => {
                let l = self.spawn(t, Spec::process("bash", Prog::Leader { spawned: 0 }).exec());
                self.leader = Some(l);
                self.block(t, None, false);
            }
            Prog::Leader { spawned } => self.leader_step(t, spawned),
            Prog::Cyclic { period, next } => {
                let mut next = next + period;
                while next <= self.now {
                    next += period; // overran: skip the missed periods
                }
                self.tasks[t].prog = Prog::Cyclic { period, next };
                let lat = self.rng.range(2, 3);
                self.block(t, Some(next + lat), false);
            }
            Prog::Sleeper {
                sleep_lo, sleep_hi, ..
            } => {
                let s = self.rng.range(sleep_lo, sleep_hi);
                self.block(t, Some(self.now + s), false);
            }
            Prog::Hog => self.tasks[t].rem = FOREVER,
            Prog::ChurnWorker => self.block(t, None, true),
        }
    }

    /// The workload's main thread: exec, spawn the children, then wait.
    fn leader_step(&mut self, t: usize, spawned: u32) {
        let (cpu, tid) = (self.tasks[t].cpu, self.tasks[t].tid);
        if self.tasks[t].pending_exec {
            self.tasks[t].pending_exec = false;
            let name = self.cfg.workload.id();
            let comm = self.trace.strings.intern_str(name);
            self.tasks[t].comm = comm;
            if let Some(m) = self.meta.get_mut(&tid) {
                m.comm = comm;
            }
            self.emit(cpu, tid, EventKind::SchedProcessExec { tid, old_tid: tid });
            // the new image registers rseq (glibc) and returns to user
            self.tasks[t].registered = false;
            self.next_spawn(t, 0);
            self.ret_user(t);
            return;
        }
        let n = self.threads();
        let name = self.cfg.workload.id();
        let p = self.cpus.len() as u32;
        match self.cfg.workload {
            Workload::Cyclictest if spawned < n => {
                let period = 100 + 500 * spawned as u64;
                let prog = Prog::Cyclic {
                    period,
                    next: self.now + 200,
                };
                self.spawn(t, Spec::thread(name, prog).rt().pin((spawned % p) as u16));
                self.next_spawn(t, spawned + 1);
            }
            Workload::Hackbench if spawned < n => {
                // per process: mean sleep between 110 and 700 µs
                let m = self.rng.range(110, 700);
                let prog = Prog::Sleeper {
                    run_lo: 5,
                    run_hi: 40,
                    sleep_lo: m / 2,
                    sleep_hi: m + m / 2,
                };
                self.spawn(t, Spec::process(name, prog));
                self.next_spawn(t, spawned + 1);
            }
            Workload::Hogs if spawned < n => {
                self.spawn(t, Spec::thread(name, Prog::Hog));
                self.next_spawn(t, spawned + 1);
            }
            Workload::Spinner if spawned < n => {
                if spawned == 0 {
                    self.spawn(t, Spec::thread("spinner", Prog::Hog).pin((p - 1) as u16));
                } else {
                    let prog = Prog::Sleeper {
                        run_lo: 50,
                        run_hi: 50,
                        sleep_lo: 1000,
                        sleep_hi: 2000,
                    };
                    self.spawn(t, Spec::thread("sleeper", prog));
                }
                self.next_spawn(t, spawned + 1);
            }
            Workload::Churn if spawned < n => {
                self.spawn(t, Spec::thread(name, Prog::ChurnWorker));
                self.churn_alive += 1;
                self.next_spawn(t, spawned + 1);
            }
            Workload::Churn => {
                // batch spawned: join (woken by the last exit), then pause 5 ms and go again
                if self.churn_alive > 0 {
                    self.tasks[t].prog = Prog::Leader { spawned: n + 1 };
                    self.block(t, None, false);
                } else {
                    self.tasks[t].prog = Prog::Leader { spawned: 0 };
                    let at = self.now + 5_000;
                    self.block(t, Some(at), false);
                }
            }
            _ => self.block(t, None, false),
        }
    }

    /// Continues the leader with a short burst before its next step.
    fn next_spawn(&mut self, t: usize, spawned: u32) {
        self.tasks[t].prog = Prog::Leader { spawned };
        if self.tasks[t].state != St::Running {
            return;
        }
        let tk = &mut self.tasks[t];
        tk.rem = 20;
        tk.run_start = self.now;
        tk.epoch += 1;
        let epoch = tk.epoch;
        self.push(
            self.now + 20,
            Ev::Done {
                task: t as u32,
                epoch,
            },
        );
    }
}
