//! The replayer's side of the CID probes (docs/models.md §5.6): a probe's step run where the
//! guest kernel ran it, and what the probe read of the kernel's state held against the model's.

use super::super::late_reads::Watched;
use super::Replayer;
use crate::events::{CPU_UNKNOWN, Event, EventKind, MigrateState, MmCidState, Probe, Tid};
use crate::model::policies::engine::DriverEvent;
use crate::model::policies::policy::ProbeView;
use crate::model::policies::run::{ProbeChecks, ProbeMismatch};
use crate::model::tasks::MmId;

impl Replayer {
    /// Compares a value a probe on `cpu` read with the model's (`m.model`, at the stamp): now
    /// where they agree, else at the CPU's next record, with every value the mm had until
    /// then (`late_reads.rs`, [`Replayer::follow_late_reads`]).
    pub(super) fn compare_read(&mut self, cpu: u16, watched: Watched, m: ProbeMismatch) {
        if m.kernel == m.model {
            self.probe_checks.compare(m);
        } else {
            self.late_reads.hold(cpu, watched, m);
        }
    }

    /// Before each record (on `cpu`): the readings held back see the state the records before
    /// left, and those of `cpu` are compared.
    pub(super) fn follow_late_reads(&mut self, cpu: u16) {
        let (engine, reads, checks) = (&self.engine, &mut self.late_reads, &mut self.probe_checks);
        let value_of = |tid: Tid, w: Watched| {
            engine.core.task(tid)?;
            w.of(&engine.probe_view(tid)).map(i64::from)
        };
        reads.follow(cpu, value_of, checks);
    }

    /// The probe checks so far, the readings held back compared as they stand.
    pub(super) fn probe_checks_now(&self) -> ProbeChecks {
        let mut checks = self.probe_checks.clone();
        self.late_reads.settle_into(&mut checks);
        checks
    }

    /// Stage 4: a probe's reading held against the model where it was read (before its
    /// step); whether its step runs later (`Placements::late_probes`, or a reading ahead of
    /// the model), as (the event it runs before at the latest, held up in the function). A
    /// record that is no late probe drops the futex references placed before it.
    pub(super) fn read_probe(&mut self, idx: usize, ev: &Event) -> Option<(Option<usize>, bool)> {
        self.note_fork_mutex(idx, ev);
        let who = match ev.kind {
            EventKind::SchedSwitch { next_tid, .. } => next_tid,
            _ => ev.tid,
        };
        let late = if let EventKind::Probe { probe, num, ptr } = ev.kind {
            self.probe_checks.probe_events += 1;
            // (a 6.x cid_fork reads the mm of the clone's child only; an exec's 7.x
            // cid_fork_users the new mm before the exec joins it: the model's exec joins at
            // the exec record)
            let clone_fork = probe != Probe::Fork || self.untraced.vm_fork_probes.contains(&idx);
            if probe == Probe::Fork && clone_fork {
                self.untraced.note_owner(ptr, ev.tid);
            }
            if probe == Probe::MigrateTo && self.exec_balances.contains(&idx) {
                self.before_execve(ev.ts, num, ptr);
            }
            // (the check holds a reading that was read ahead back as the step waits)
            let ahead = self.read_ahead(idx, ev);
            let modelled_put = probe == Probe::MmPut && self.modelled_put(ev.tid, ptr, idx);
            // an exit's or exec's put, whose decrement the model runs (at the probe unless
            // it runs late), or the futex hash's reference an RCU callback's mmput_async
            // drops, which the model drops at the probe; its mm, before the step
            let put_of = match probe {
                Probe::MmPut if num > 0 && modelled_put => self.task_mm(ev.tid),
                Probe::MmPutAsync => self.futex_put_at(idx),
                _ => None,
            };
            if clone_fork && !self.exec_forks.contains(&idx) {
                let read = (num, ptr);
                self.check_probe(
                    (ev.ts, ev.cpu),
                    ev.tid,
                    (probe, idx),
                    read,
                    (ahead, modelled_put),
                );
            }
            // (an exit that waits for the mutex runs at its record even where its reading
            // came ahead of the model: the stalled vCPU then spun on the mutex too)
            let late = match self.untraced.late_probe(idx, who, ev.ts) {
                Some(late) => Some(late),
                None => match self.waits_for_mutex(idx, ev) {
                    Some(at) => Some((Some(at), true)),
                    None if ahead => Some((None, false)),
                    None => None,
                },
            };
            if let (Some(mm), None) = (put_of, late) {
                self.pending_puts.put(ev.cpu, mm);
            }
            late
        } else {
            None
        };
        if let Some((at, resumed)) = late {
            // (a resumed probe's step waits for its event alone: no record of a CPU runs it)
            let cpu = if resumed { CPU_UNKNOWN } else { ev.cpu };
            self.late_probes.push((cpu, at, idx, *ev));
        } else {
            self.untraced
                .put_futex_refs(&mut self.engine, idx, ev.ts, who);
        }
        late
    }

    /// Holds the model's state against what the probe read of the kernel's, before its step
    /// runs (each value a [`ProbeMismatch`] when they differ); `idx` is the probe's event, `ts`
    /// and `cpu` its stamp and CPU. A value may have been read after the stamp
    /// (`late_reads.rs`); `ahead`: the probe read ahead of the model ([`Replayer::read_ahead`])
    /// and its step waits for the CPU's next record; `modelled_put`: a `cid_mmput` whose put
    /// the model runs ([`Replayer::modelled_put`]).
    pub(super) fn check_probe(
        &mut self,
        (ts, cpu): (u64, u16),
        by: Tid,
        (probe, idx): (Probe, usize),
        (num, ptr): (u32, u64),
        (ahead, modelled_put): (bool, bool),
    ) {
        // (a fork of a new process, whose 7.x `cid_fork_users` reads the child's new mm)
        let new_mm = self.new_mm_forks.contains(&idx);
        // (a CLONE_VM fork whose step a search placed before its probe: the vCPU stalled
        // between copy_mm's mmget and the probe's timestamp, and the model has its child)
        let ran_early = self
            .fork_probe_child
            .get(&idx)
            .is_some_and(|&c| self.engine.core.task(c).is_some_and(|t| t.mm.is_some()));
        // (only tasks begun in the capture, of mms begun in it: the model knows all of their
        // history; a vfork child shares its parent's older mm)
        let fresh = |r: &Replayer, tid: Tid| {
            r.created.contains(&tid) && r.obs_mm(tid).is_some_and(|m| r.begins_in_capture(m))
        };
        let subject = match probe {
            Probe::MigrateTo => num,
            Probe::MmPutAsync => self.untraced.owner_of(ptr).unwrap_or(0),
            _ => by,
        };
        if !fresh(self, subject) {
            return;
        }
        // (the puts whose decrement a reading of the subject's mm may not see yet, and the
        // forks whose mmget it may see before their probe)
        let mm = self.task_mm(subject);
        // (a reading one above the model's may show a probed clone's futex reference taken)
        let read = match probe {
            Probe::MigrateTo => MigrateState::from_ptr(ptr).mm_users.map(i64::from),
            Probe::MmPut if !modelled_put => None,
            Probe::MmPut | Probe::MmPutAsync | Probe::Fork if num > 0 => Some(i64::from(num)),
            _ => None,
        };
        // (a fork's count has its child already (copy_mm's mmget), not yet a futex hash
        // reference the same clone takes later in copy_process)
        let child = i64::from(probe == Probe::Fork && !ran_early);
        if let Some(read) = read.filter(|_| !self.futex_gets.is_empty()) {
            let held = self.engine.probe_view(subject).mm_users.map(i64::from);
            self.futex_get_seen(ts, mm, read, held.map(|u| u + child));
        }
        let window = self
            .pending_puts
            .window(cpu, mm)
            .and(self.forks_ahead(idx, cpu, mm));
        let mut cmp = |tid: Tid, value: &'static str, kernel: Option<i64>, model: Option<i64>| {
            if let (Some(kernel), Some(model)) = (kernel, model) {
                self.probe_checks.compare(ProbeMismatch {
                    ts,
                    tid,
                    probe: probe.name(),
                    value,
                    kernel,
                    model,
                });
            }
        };
        let opt = |v: Option<Option<u32>>| v.map(|v| v.map_or(-1, i64::from));
        match probe {
            Probe::MigrateTo => {
                if self.engine.core.task(num).is_none() {
                    return;
                }
                let k = MigrateState::from_ptr(ptr);
                // `t->mm` NULL: the probe reads 0 for both counts, never so for a live mm.
                // An exiting task past exit_mm is enqueued once more to die, and the model
                // must have dropped its mm too; a kernel thread (a kworker born in the
                // capture) never had one, and the model does not hold one for it. After its
                // exit_mm `cid_mmput`, the task has no mm whatever the probe read: a fetch
                // through the NULL `t->mm` faults, and the reading may be stale bytes (a fresh
                // probed 6.18.15 24-vCPU mcwork `churn` boot: 337, preempted after its
                // `cid_mmput`, moved at 12.194761 reading users 120, allowed 128)
                let exited = self.exit_records.get(&num).is_some_and(|&(t, _)| t <= ts);
                let held = self.exiting.contains_key(&num);
                let null = k.mm_users == Some(0) && k.nr_cpus_allowed == Some(0);
                if null || (exited && self.untraced.mm_dropped(num)) {
                    // (only a reading of 0 says the kernel's mm was gone: stale bytes say
                    // nothing, and are not compared)
                    if null && exited {
                        cmp(num, "mm", Some(0), Some(i64::from(held)));
                    }
                    return;
                }
                let mut m = self.engine.probe_view(num);
                // (past its exec_mmap, an exec'ing task's mm is the new one, of one user; its
                // `nr_cpus_allowed` is the task's affinity, which the model may hold pinned by
                // the exec's balancing move until the exec record: not compared)
                if self.past_exec_put.contains(&num) {
                    m.mm_users = Some(1);
                    m.nr_cpus_allowed = None;
                }
                let users = (k.mm_users.map(i64::from), m.mm_users.map(i64::from));
                cmp(
                    num,
                    "nr_cpus_allowed",
                    k.nr_cpus_allowed.map(i64::from),
                    m.nr_cpus_allowed.map(i64::from),
                );
                cmp(
                    num,
                    "migrate_from_cpu",
                    k.src.map(i64::from),
                    m.migrate_from_cpu.map(|c| c.map_or(-1, i64::from)),
                );
                cmp(
                    num,
                    "last_mm_cid",
                    k.last_mm_cid.map(i64::from),
                    opt(m.last_mm_cid),
                );
                if let (Some(kernel), Some(model)) = users {
                    self.compare_read(
                        cpu,
                        Watched::MmUsers,
                        ProbeMismatch {
                            ts,
                            tid: num,
                            probe: probe.name(),
                            value: "mm_users",
                            kernel,
                            model: window.seen(kernel, model),
                        },
                    );
                }
            }
            // 7.x: the mm's owner-mode state before the fork joins it or the exit leaves it
            // (the step runs inside the probed function, after the probe)
            Probe::ForkUsers | Probe::ExitUsers => {
                let k = MmCidState::from_ptr(ptr);
                // (an exit's release runs at its cid_exit probe, which fires first at the same
                // function entry: the state read is the one before it)
                // (a new process's fork reads its child's new mm, which the model makes at the
                // fork's record: as `mm_init_cid` leaves it)
                let m = match probe {
                    Probe::ExitUsers => self.exit_entry.remove(&by),
                    _ if new_mm => Some(self.engine.new_mm_view()),
                    _ => None,
                }
                .unwrap_or_else(|| self.engine.probe_view(by));
                let m = match probe {
                    Probe::ExitUsers => self.half_forked(&k, m, by),
                    _ => m,
                };
                // (a fork's reading torn by a stall, or one with fewer users than the model
                // holds: read after other exits' releases)
                let fork_late = probe == Probe::ForkUsers
                    && (torn(&k, &m)
                        || matches!((k.users, m.cid_users), (Some(r), Some(h)) if r < h as i32));
                let as_i = |v: Option<i32>| v.map(i64::from);
                let of = |v: Option<u32>| v.map(i64::from);
                let values = [
                    (
                        Watched::CidUsers,
                        "mm_cid.users",
                        as_i(k.users),
                        of(m.cid_users),
                    ),
                    (
                        Watched::MaxCids,
                        "mm_cid.max_cids",
                        as_i(k.max_cids),
                        of(m.max_cids),
                    ),
                    (
                        Watched::PcpuThrs,
                        "mm_cid.pcpu_thrs",
                        as_i(k.pcpu_thrs),
                        of(m.pcpu_thrs),
                    ),
                    (Watched::Mode, "mm_cid.mode", as_i(k.mode), of(m.mode_bits)),
                ];
                for (watched, value, kernel, model) in values {
                    let (Some(kernel), Some(model)) = (kernel, model) else {
                        continue;
                    };
                    let m = ProbeMismatch {
                        ts,
                        tid: by,
                        probe: probe.name(),
                        value,
                        kernel,
                        model,
                    };
                    // (an exit that read fewer users than the model holds read them after a
                    // stall, and its release waits for its CPU's next record, `read_ahead`:
                    // until then the model's state is before it; a fork's late reading is
                    // compared so too, its step where the plan or a search put it)
                    if ahead || fork_late {
                        self.compare_read(cpu, watched, m);
                    } else {
                        self.probe_checks.compare(m);
                    }
                }
            }
            // (an exit released at its cid_exit_users is read there, before its release)
            Probe::Exit if !self.exits_read.contains(&Probe::exiting_task(by, num)) => {
                let t = Probe::exiting_task(by, num);
                let view = self.engine.probe_view(t);
                self.exit_entry.insert(t, view);
            }
            // (only the puts the model runs are compared)
            Probe::MmPut if !modelled_put => {}
            Probe::MmPut | Probe::MmPutAsync | Probe::Fork if num > 0 => {
                // (mmput's count is before its decrement; a fork's is after its mmget)
                let tid = match probe {
                    Probe::MmPutAsync => match self.untraced.owner_of(ptr) {
                        Some(t) => t,
                        None => return,
                    },
                    _ => by,
                };
                if self.engine.core.task(tid).is_none() {
                    return;
                }
                let m = self.engine.probe_view(tid);
                let model = m
                    .mm_users
                    .map(|u| window.seen(i64::from(num), i64::from(u) + child));
                // (a count read after the stamp, other exits' puts run first: a fork's, whose
                // step runs at the probe and after which the model's count has the child; an
                // exit_mm put's that read at least two fewer, whose put waits for its CPU's
                // next record, `read_ahead`, so the model's count until then is before it)
                match model {
                    Some(model) if probe == Probe::Fork || ahead => self.compare_read(
                        cpu,
                        Watched::MmUsers,
                        ProbeMismatch {
                            ts,
                            tid,
                            probe: probe.name(),
                            value: "mm_users",
                            kernel: i64::from(num),
                            model,
                        },
                    ),
                    _ => cmp(tid, "mm_users", Some(i64::from(num)), model),
                }
            }
            _ => {}
        }
    }

    /// Whether the `cid_mmput` at `idx` by `tid` of the mm at `mm_addr` is a put the model
    /// runs: exit_mm's or exec_mmap's (another is a transient reference the model has not
    /// seen).
    fn modelled_put(&self, tid: Tid, mm_addr: u64, idx: usize) -> bool {
        self.untraced.exit_put_pending(tid, mm_addr) || self.exec_puts.contains(&idx)
    }

    /// The probed CLONE_VM forks of `mm` on CPUs other than `cpu` whose window a reading at
    /// event `idx` lies in (`fork_gets.rs`) and whose child the model does not hold yet.
    fn forks_ahead(&mut self, idx: usize, cpu: u16, mm: Option<MmId>) -> usize {
        let Some(mm) = mm else {
            return 0;
        };
        let (gets, untraced, engine) = (&mut self.fork_gets, &self.untraced, &self.engine);
        let mm_of = |t: Tid| engine.core.task(t).and_then(|t| t.mm);
        gets.around(idx, cpu)
            .filter(|w| untraced.owner_of(w.mm_addr).and_then(mm_of) == Some(mm))
            .filter(|w| mm_of(w.child).is_none())
            .count()
    }

    /// The mm whose futex hash reference the model drops at the `cid_mmput_async` at event
    /// `idx`: the drop placed there whose reference the model still holds, as
    /// `Untraced::put_futex_refs` runs it.
    fn futex_put_at(&self, idx: usize) -> Option<MmId> {
        self.untraced
            .placements
            .futex_puts_of
            .get(&idx)?
            .iter()
            .filter_map(|&t| self.task_mm(t))
            .find(|&mm| self.engine.futex_ref_held(mm))
    }

    /// A probe that read its mm's `mm_users` from after its timestamp: the probe's CPU stalled
    /// between taking the timestamp and reading its arguments, and the function ran after
    /// steps the trace shows later (docs/models.md §5.6); its step runs at that CPU's next
    /// record, as a late probe's. A `cid_migrate_to` that read more users than the model holds
    /// (forks ran first); an exit_mm's `cid_mmput` that read at least two fewer (other exits'
    /// puts ran first: one fewer is also what a reference the model holds too long gives, the
    /// futex hash's); the `cid_mmput_async` of the futex hash's reference the model drops at
    /// event `idx`, that read fewer (it is that reference: one fewer is enough); a 7.x
    /// `cid_exit_users` that read fewer (other exits' releases ran first).
    pub(super) fn read_ahead(&self, idx: usize, ev: &Event) -> bool {
        match ev.kind {
            EventKind::Probe {
                probe: Probe::MigrateTo,
                num,
                ptr,
            } => {
                if !self.created.contains(&num) {
                    return false;
                }
                let read = MigrateState::from_ptr(ptr).mm_users;
                let held = self.engine.probe_view(num).mm_users;
                matches!((read, held), (Some(k), Some(m)) if k > m as i32)
            }
            EventKind::Probe {
                probe: Probe::MmPut,
                num,
                ptr,
            } if num > 0 => {
                if !self.created.contains(&ev.tid) || !self.untraced.exit_put_pending(ev.tid, ptr) {
                    return false;
                }
                let held = self.engine.probe_view(ev.tid).mm_users;
                held.is_some_and(|m| num + 2 <= m)
            }
            EventKind::Probe {
                probe: Probe::MmPutAsync,
                num,
                ptr,
            } if num > 0 => {
                let Some(owner) = self.untraced.owner_of(ptr) else {
                    return false;
                };
                if self.engine.core.task(owner).is_none() || self.futex_put_at(idx).is_none() {
                    return false;
                }
                let held = self.engine.probe_view(owner).mm_users;
                held.is_some_and(|m| num < m)
            }
            // (a 7.x exit whose `cid_exit_users` read fewer users than the model holds: other
            // exits' releases ran first; or more: forks ran first, as a `cid_migrate_to`'s;
            // owner-mode counts its users itself, so one is enough)
            EventKind::Probe {
                probe: Probe::ExitUsers,
                ptr,
                ..
            } if self.exits_read.contains(&ev.tid) => {
                let read = MmCidState::from_ptr(ptr);
                let held = self.engine.probe_view(ev.tid);
                matches!((read.users, held.cid_users), (Some(k), Some(m)) if k != m as i32)
                    || torn(&read, &held)
            }
            _ => false,
        }
    }

    /// 6.x exec balancing (`probes::Plan::exec_balances`): `tid`'s `cid_migrate_to` read the
    /// `last_mm_cid` that `sched_mm_cid_before_execve` left, on the CPU the stopper moved it
    /// from; the release runs there first, before the probe's reading is held against it.
    pub(super) fn before_execve(&mut self, ts: u64, tid: Tid, ptr: u64) {
        let from = MigrateState::from_ptr(ptr)
            .src
            .and_then(|c| u16::try_from(c).ok());
        let model_from = self.engine.probe_view(tid).migrate_from_cpu.flatten();
        if let Some(cpu) = from.or(model_from) {
            self.engine
                .step(ts, &DriverEvent::BeforeExecve { tid, cpu });
        }
    }

    /// 7.x: an exit that enters `sched_mm_cid_exit` while its mm is in a TRANSIT phase waits
    /// there for `mm_cid.mutex`, which the fixup's owner holds until the phase ends; when it
    /// got the mutex the trace does not show, so its release runs right before its
    /// `sched_process_exit` record, the latest the kernel can have run it (docs/models.md
    /// §5.6). The mode is the kernel's where a `cid_exit_users` read it, else the model's.
    /// Returns that record's index.
    pub(super) fn waits_for_mutex(&self, idx: usize, ev: &Event) -> Option<usize> {
        let EventKind::Probe { probe, num, ptr } = ev.kind else {
            return None;
        };
        let (tid, mode) = match probe {
            Probe::ExitUsers if self.exits_read.contains(&ev.tid) => {
                (ev.tid, MmCidState::from_ptr(ptr).mode?)
            }
            Probe::Exit => {
                let t = Probe::exiting_task(ev.tid, num);
                if self.exits_read.contains(&t) {
                    return None;
                }
                (t, self.engine.probe_view(t).mode_bits? as i32)
            }
            _ => return None,
        };
        let (_, at) = *self.exit_records.get(&tid)?;
        if at <= idx {
            return None;
        }
        // (or a CLONE_VM fork of the same mm is inside `sched_mm_cid_fork`, which holds the
        // mutex for its body, or a later exit's reading shows it unreleased: it held the mutex
        // or waited for it, `probes::Plan::exit_queue`; owner-mode only: 6.x exits take no
        // mutex)
        let owner_mode = self.engine.probe_view(tid).mode_bits.is_some();
        let forking = self.forking_mm(tid).is_some();
        let q = &self.exit_queue;
        let held = q.held.contains(&tid);
        // (where a later exit's reading shows it released before its record, there)
        let at = q.released_by.get(&tid).map_or(at, |&by| by.min(at));
        (mode & 1 != 0 || (owner_mode && (forking || held))).then_some(at)
    }

    /// Follows the parents inside a CLONE_VM fork's `sched_mm_cid_fork` (`in_fork`): from the
    /// fork's entry probe to its `cid_fork_done`, or the child's `task_newtask` where that
    /// probe was lost.
    pub(super) fn note_fork_mutex(&mut self, idx: usize, ev: &Event) {
        match ev.kind {
            EventKind::Probe {
                probe: Probe::Fork | Probe::ForkUsers,
                ..
            } if self.untraced.vm_fork_probes.contains(&idx) => {
                if let Some(mm) = self.engine.core.task(ev.tid).and_then(|t| t.mm) {
                    self.in_fork.insert(ev.tid, mm);
                }
            }
            EventKind::Probe {
                probe: Probe::ForkDone,
                ..
            }
            | EventKind::TaskNewtask { .. }
                if !self.in_fork.is_empty() =>
            {
                if let Some(mm) = self.in_fork.remove(&ev.tid) {
                    self.fork_before.remove(&mm);
                }
            }
            _ => {}
        }
    }

    /// The held `__mm_cid_put`s of remote clears probed on `cpu` run before its next record.
    pub(super) fn put_held_clears(&mut self, cpu: u16, ts: u64) {
        let mut k = 0;
        while k < self.held_clears.len() {
            let (c, tid, cleared) = self.held_clears[k];
            if c != cpu {
                k += 1;
                continue;
            }
            self.held_clears.remove(k);
            self.engine
                .step(ts, &DriverEvent::ObservedClearPut { tid, cpu: cleared });
        }
    }

    /// Runs the steps of the probes placed late on `cpu`, or before event `at`, at `ts`.
    pub(super) fn run_late_probes(&mut self, at: usize, cpu: u16, ts: u64) {
        let mut k = 0;
        while k < self.late_probes.len() {
            let (c, before, ..) = self.late_probes[k];
            if c != cpu && before != Some(at) {
                k += 1;
                continue;
            }
            let (_, _, idx, e) = self.late_probes.remove(k);
            self.untraced
                .put_futex_refs(&mut self.engine, idx, ts, e.tid);
            if let EventKind::Probe { probe, num, ptr } = e.kind {
                self.probe(ts, idx, e.tid, probe, num, ptr);
            }
        }
    }

    /// The CID release of `tid`'s exit (T7) at its probe: `ptr` is the mm its `cid_exit` named.
    fn release_exit(&mut self, ts: u64, tid: Tid, ptr: u64) {
        self.know(ts, tid);
        let end = self.exit_records.get(&tid).map_or(ts, |&(t, _)| t);
        self.untraced
            .exit_probed(&mut self.engine, (ts, end), tid, ptr);
        // exit_mm's mmput is probed too: not at a switch-out before it
        if self.untraced.probed.mm_put
            && let Some(t) = self.engine.core.task_mut(tid)
        {
            t.exit_mm_held = true;
        }
    }

    /// A CID probe, event `idx` (docs/models.md §5.6): the step it marks runs here. (A
    /// switch's pending CID step ran before, as before any record of its CPU; a fork's and a
    /// futex reference's are placed by `probes::plan`.)
    pub(super) fn probe(&mut self, ts: u64, idx: usize, by: Tid, probe: Probe, num: u32, ptr: u64) {
        let u = &mut self.untraced;
        match probe {
            // (6.x exec_mmap: the exec'ing task's reference to its old mm goes before the exec
            // is recorded; the policy's exec then has none to drop)
            Probe::MmPut if self.exec_puts.contains(&idx) => {
                self.engine.step(ts, &DriverEvent::MmPut { tid: by });
                self.past_exec_put.insert(by);
            }
            Probe::MigrateTo if u.probed.migrate_to => {
                u.migrate_to_probed(&mut self.engine, ts, num);
            }
            Probe::Exit => {
                let num = Probe::exiting_task(by, num);
                // (7.x: released after the cid_exit_users read at the same entry; whichever of
                // the two runs last releases, a search may move either)
                if !self.exits_read.contains(&num) || self.exit_half.remove(&num) == Some(None) {
                    self.release_exit(ts, num, ptr);
                } else {
                    self.exit_half.insert(num, Some(ptr));
                }
            }
            Probe::ExitUsers if self.exits_read.contains(&by) => match self.exit_half.remove(&by) {
                Some(Some(ptr)) => self.release_exit(ts, by, ptr),
                _ => {
                    self.exit_half.insert(by, None);
                }
            },
            Probe::MmPut if u.probed.mm_put && u.mm_put_probed(&mut self.engine, ts, by, ptr) => {
                self.exiting.remove(&by);
            }
            // (the kernel's own compaction only: another policy decides its own)
            Probe::Scan if self.engine.core.params.observed_scans => {
                self.engine.step(ts, &DriverEvent::ObservedScan { tid: by });
            }
            Probe::RemoteClear if self.engine.core.params.observed_scans => {
                self.engine.step(
                    ts,
                    &DriverEvent::ObservedClear {
                        tid: by,
                        cpu: num.min(u16::MAX as u32) as u16,
                    },
                );
            }
            Probe::RqLock if u.probed.walk && ptr == 0 => {
                u.walk_visit(&mut self.engine, ts, by, num.min(u16::MAX as u32) as u16);
            }
            Probe::TaskLock if ptr == 0 => u.walk_visit_task(&mut self.engine, ts, by, num),
            Probe::SetCpus if self.engine.core.task(num).is_some() => {
                self.untraced
                    .set_cpus_probed(&mut self.engine, ts, num, ptr);
            }
            _ => {}
        }
    }
}

/// A 7.x `cid_*_users` reading torn by a stall: the users as the model holds them, another value
/// not. A kprobe reads its arguments one after the other (`store_trace_args`), so a vCPU that
/// stopped between two of them read the rest at a moment up to its CPU's next record.
fn torn(read: &MmCidState, held: &ProbeView) -> bool {
    matches!((read.users, held.cid_users), (Some(k), Some(m)) if k == m as i32)
        && !super::half_fork::reads_as(read, held)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policies::kind::PolicyKind;
    use crate::model::policies::params::Params;

    /// A 7.x exit read at both entry probes is released by whichever of the two runs last (a
    /// search may move either to a CPU's next record): never by the first, never not at all.
    #[test]
    fn an_exit_read_at_both_entry_probes_is_released_by_the_last() {
        const TID: Tid = 5;
        const MM: u64 = 0xabc0;
        for users_first in [false, true] {
            let mut r = Replayer::new(PolicyKind::OwnerMode, Params::with_cpus(4), 0);
            r.exits_read.insert(TID);
            let (first, second) = if users_first {
                ((Probe::ExitUsers, 0), (Probe::Exit, TID))
            } else {
                ((Probe::Exit, TID), (Probe::ExitUsers, 0))
            };
            r.probe(1_000, 0, TID, first.0, first.1, MM);
            assert!(
                !r.untraced.exit_put_pending(TID, MM),
                "released at the first probe ({users_first})"
            );
            // (cid_exit_users names no mm: the one cid_exit named is kept)
            let ptr = if second.0 == Probe::Exit { MM } else { 0 };
            r.probe(2_000, 1, TID, second.0, second.1, ptr);
            assert!(
                r.untraced.exit_put_pending(TID, MM),
                "not released at the second ({users_first})"
            );
        }
    }
}
