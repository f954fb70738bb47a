//! CID probes: fprobe events on the kernel functions that run the CID steps no tracepoint marks
//! (docs/models.md §5.6). `cidscope vm` defines them in the guest (group `cidscope`, names
//! `cid_*`); anyone can define the same on their own box (`cidscope probes` prints the lines).
//!
//! Each names where an untraced step ran, on which CPU, by which task: the replay runs the step
//! there instead of inferring its place (§5.3).

/// A probe of the `cidscope` fprobe group. The event's payload: `num` (a pid, CPU or count)
/// and `ptr` (an `mm_struct` address or a CPU mask), as each variant says.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Probe {
    /// `cid_switch_done`: entry of `finish_task_switch`, in the context of the task switched
    /// in: the switch's CID step (`switch_mm_cid`, 7.x `mm_cid_switch_to`) has run, a few
    /// instructions before (`context_switch`). No payload.
    SwitchDone,
    /// `cid_migrate_to`: `sched_mm_cid_migrate_to(dst_rq, t)` (6.4–6.18), the enqueue half of a
    /// migration. `num` = t's pid; `ptr` packs what the function tests ([`MigrateState`]):
    /// `t->migrate_from_cpu`, `mm_users`, `mm->nr_cpus_allowed` (6.13+; the task's own
    /// before) and `t->last_mm_cid`.
    MigrateTo,
    /// `cid_fork`: `sched_mm_cid_fork(t)`, current = the parent (6.4–6.18 at the end of
    /// `copy_mm`, right after its `mmget`; 7.x in `sched_post_fork`). `ptr` = `t->mm`, `num` =
    /// its `mm_users` then (the child counted). (t's pid is not assigned yet in 6.x: the child
    /// is the parent's next `task_newtask`.)
    Fork,
    /// `cid_fork_done`: the return of `sched_mm_cid_fork` (7.x: its fixup walk is done).
    ForkDone,
    /// `cid_exit`: `sched_mm_cid_exit_signals(t)` (6.4–6.18) / `sched_mm_cid_exit(t)` (7.x),
    /// the CID release of an exit in `do_exit` (t is `current`). `num` = t's pid, `ptr` =
    /// `t->mm` (0 both on a kernel without BTF: the task is the record's).
    Exit,
    /// `cid_mmput`: `mmput(mm)` (exit_mm's, by the exiting task). `ptr` = mm, `num` =
    /// `mm_users` before the put.
    MmPut,
    /// `cid_mmput_async`: `mmput_async(mm)` (the futex hash's reference, from an RCU callback).
    /// `ptr` = mm, `num` = `mm_users` before the put.
    MmPutAsync,
    /// `cid_scan`: entry of `task_mm_cid_work` (the compaction task work, 6.4–6.18 and the
    /// resume-batch patches). No payload.
    Scan,
    /// `cid_remote_clear`: `sched_mm_cid_remote_clear(mm, pcpu_cid, cpu)`, one CPU slot
    /// examined by a scan. `num` = cpu.
    RemoteClear,
    /// `cid_set_cpus`: `set_cpus_allowed_common(p, ctx)`, a task's new affinity. `num` = p's
    /// pid, `ptr` = the first 64 bits of the new mask; 0 for a migrate_disable()/enable()
    /// (`SCA_MIGRATE_*` in `ctx->flags`), which sets `p->cpus_ptr` alone and no affinity.
    SetCpus,
    /// `cid_fixup_back`: entry of `mm_cid_fixup_cpus_to_tasks` (7.x walk back to per-task).
    FixupBack,
    /// `cid_rq_lock`: `raw_spin_rq_lock_nested(rq, ·)`, a runqueue lock taken. `num` = the rq's
    /// CPU, `ptr` = 1 when it was taken in an interrupt (the irq-flags column: no walk's visit). Defined on 7.x only (it marks the visits of `mm_cid_fixup_tasks_to_cpus`, each
    /// under its task's rq lock), and only for the tasks created after the probes (a filter
    /// on `common_pid`): the lock is taken at every schedule.
    RqLock,
    /// `cid_task_lock`: `_task_rq_lock(p, ·)`, a task's rq lock taken (7.x). `num` = p's pid,
    /// `ptr` = 1 in an interrupt. Each visit of `mm_cid_fixup_tasks_to_cpus` takes its task's
    /// (`mm_cid_fixup_task_to_cpu`); defined and filtered as [`Probe::RqLock`].
    TaskLock,
    /// `cid_fork_users`: `sched_mm_cid_fork(t)` (7.x), the owner-mode state of the mm the fork
    /// joins before it does (`t->mm->mm_cid`): `ptr` packs `users`, `max_cids`, `pcpu_thrs` and
    /// the mode's ONCPU/TRANSIT bits ([`MmCidState`]). Defined only where `struct mm_mm_cid`
    /// exists: the 6.x `cid_fork` reads `mm_users`, which owner-mode does not keep.
    ForkUsers,
    /// `cid_exit_users`: `sched_mm_cid_exit(t)` (7.x), the same state before the exit leaves.
    ExitUsers,
}

impl Probe {
    pub const ALL: [Probe; 15] = [
        Probe::SwitchDone,
        Probe::MigrateTo,
        Probe::Fork,
        Probe::ForkDone,
        Probe::Exit,
        Probe::MmPut,
        Probe::MmPutAsync,
        Probe::Scan,
        Probe::RemoteClear,
        Probe::SetCpus,
        Probe::FixupBack,
        Probe::RqLock,
        Probe::TaskLock,
        Probe::ForkUsers,
        Probe::ExitUsers,
    ];

    /// The task a `cid_exit` probe is of: the `pid` it read, or, where the probe reads no
    /// arguments (a kernel without BTF: `num` 0), the task that recorded it, the exiting task
    /// itself (an exit runs in the task that exits). Tids are `u32` here: this file names no
    /// type of `event.rs`, which names `Probe`.
    pub fn exiting_task(recorder: u32, num: u32) -> u32 {
        if num == 0 { recorder } else { num }
    }

    /// The event's name in the trace.
    pub fn name(self) -> &'static str {
        match self {
            Probe::SwitchDone => "cid_switch_done",
            Probe::MigrateTo => "cid_migrate_to",
            Probe::Fork => "cid_fork",
            Probe::ForkDone => "cid_fork_done",
            Probe::Exit => "cid_exit",
            Probe::MmPut => "cid_mmput",
            Probe::MmPutAsync => "cid_mmput_async",
            Probe::Scan => "cid_scan",
            Probe::RemoteClear => "cid_remote_clear",
            Probe::SetCpus => "cid_set_cpus",
            Probe::FixupBack => "cid_fixup_back",
            Probe::RqLock => "cid_rq_lock",
            Probe::TaskLock => "cid_task_lock",
            Probe::ForkUsers => "cid_fork_users",
            Probe::ExitUsers => "cid_exit_users",
        }
    }

    pub fn from_name(name: &[u8]) -> Option<Probe> {
        Probe::ALL.into_iter().find(|p| p.name().as_bytes() == name)
    }

    /// The payload fields as the probe prints them: (`num`'s key, `ptr`'s key).
    pub fn fields(self) -> (Option<&'static str>, Option<&'static str>) {
        match self {
            Probe::SwitchDone
            | Probe::ForkDone
            | Probe::Scan
            | Probe::FixupBack
            | Probe::ForkUsers
            | Probe::ExitUsers => (None, None),
            Probe::MigrateTo | Probe::TaskLock => (Some("pid"), None),
            Probe::Fork => (Some("users"), Some("mm")),
            Probe::Exit => (Some("pid"), Some("mm")),
            Probe::MmPut | Probe::MmPutAsync => (Some("users"), Some("mm")),
            Probe::RemoteClear | Probe::RqLock => (Some("cpu"), None),
            Probe::SetCpus => (Some("pid"), Some("mask")),
        }
    }

    /// The fprobe definitions (`dynamic_events` lines) of this probe, one per kernel shape;
    /// the first the kernel takes is used.
    pub fn definitions(self) -> &'static [&'static str] {
        // fprobes with BTF arguments first (Debian's kernels), then the same without BTF (a
        // kernel built without debug info, like the seed-000 one: `$argN` only, the task being
        // `current` where it is the probed task), then kprobes (no CONFIG_FPROBE_EVENTS)
        match self {
            Probe::SwitchDone => &[
                "f:cidscope/cid_switch_done finish_task_switch.isra.0",
                "f:cidscope/cid_switch_done finish_task_switch",
                "p:cidscope/cid_switch_done finish_task_switch.isra.0",
                "p:cidscope/cid_switch_done finish_task_switch",
            ],
            Probe::MigrateTo => &[
                "f:cidscope/cid_migrate_to sched_mm_cid_migrate_to pid=t->pid src=t->migrate_from_cpu users=t->mm->mm_users.counter allowed=t->mm->nr_cpus_allowed last=t->last_mm_cid",
                "f:cidscope/cid_migrate_to sched_mm_cid_migrate_to pid=t->pid src=t->migrate_from_cpu users=t->mm->mm_users.counter allowed=t->nr_cpus_allowed last=t->last_mm_cid",
                "f:cidscope/cid_migrate_to sched_mm_cid_migrate_to pid=t->pid",
            ],
            Probe::Fork => &[
                "f:cidscope/cid_fork sched_mm_cid_fork mm=t->mm:x64 users=t->mm->mm_users.counter",
                "f:cidscope/cid_fork sched_mm_cid_fork mm=t->mm:x64",
                "f:cidscope/cid_fork sched_mm_cid_fork",
                "p:cidscope/cid_fork sched_mm_cid_fork",
            ],
            Probe::ForkDone => &[
                "f:cidscope/cid_fork_done sched_mm_cid_fork%return",
                "r:cidscope/cid_fork_done sched_mm_cid_fork",
            ],
            Probe::Exit => &[
                "f:cidscope/cid_exit sched_mm_cid_exit pid=t->pid mm=t->mm:x64",
                "f:cidscope/cid_exit sched_mm_cid_exit_signals pid=t->pid mm=t->mm:x64",
                "f:cidscope/cid_exit sched_mm_cid_exit",
                "f:cidscope/cid_exit sched_mm_cid_exit_signals",
                "p:cidscope/cid_exit sched_mm_cid_exit",
                "p:cidscope/cid_exit sched_mm_cid_exit_signals",
            ],
            Probe::MmPut => &[
                "f:cidscope/cid_mmput mmput mm=mm:x64 users=mm->mm_users.counter",
                "f:cidscope/cid_mmput mmput mm=$arg1:x64",
                "p:cidscope/cid_mmput mmput mm=$arg1:x64",
            ],
            Probe::MmPutAsync => &[
                "f:cidscope/cid_mmput_async mmput_async mm=mm:x64 users=mm->mm_users.counter",
                "f:cidscope/cid_mmput_async mmput_async mm=$arg1:x64",
                "p:cidscope/cid_mmput_async mmput_async mm=$arg1:x64",
            ],
            Probe::Scan => &[
                "f:cidscope/cid_scan task_mm_cid_work",
                "p:cidscope/cid_scan task_mm_cid_work",
            ],
            Probe::RemoteClear => &[
                "f:cidscope/cid_remote_clear sched_mm_cid_remote_clear cpu=cpu",
                "f:cidscope/cid_remote_clear sched_mm_cid_remote_clear cpu=$arg3:s32",
                "p:cidscope/cid_remote_clear sched_mm_cid_remote_clear cpu=$arg3:s32",
            ],
            Probe::SetCpus => &[
                "f:cidscope/cid_set_cpus set_cpus_allowed_common pid=p->pid mask=+0(+0($arg2)):x64 flags=ctx->flags",
            ],
            Probe::FixupBack => &["f:cidscope/cid_fixup_back mm_cid_fixup_cpus_to_tasks"],
            Probe::RqLock => &["f:cidscope/cid_rq_lock raw_spin_rq_lock_nested cpu=rq->cpu"],
            Probe::TaskLock => &["f:cidscope/cid_task_lock _task_rq_lock pid=p->pid"],
            // (the mode word's ONCPU and TRANSIT bits, 30 and 29, as a 2-bit field)
            Probe::ForkUsers => &[
                "f:cidscope/cid_fork_users sched_mm_cid_fork users=t->mm->mm_cid.users max=t->mm->mm_cid.max_cids thrs=t->mm->mm_cid.pcpu_thrs mode=t->mm->mm_cid.mode:b2@29/32",
                "f:cidscope/cid_fork_users sched_mm_cid_fork users=t->mm->mm_cid.users max=t->mm->mm_cid.max_cids",
            ],
            Probe::ExitUsers => &[
                "f:cidscope/cid_exit_users sched_mm_cid_exit users=t->mm->mm_cid.users max=t->mm->mm_cid.max_cids thrs=t->mm->mm_cid.pcpu_thrs mode=t->mm->mm_cid.mode:b2@29/32",
                "f:cidscope/cid_exit_users sched_mm_cid_exit users=t->mm->mm_cid.users max=t->mm->mm_cid.max_cids",
            ],
        }
    }

    /// The rq-lock probes: taken at every schedule, defined only where the owner-mode walks
    /// they mark exist and filtered to the workload's tasks.
    pub fn is_lock(self) -> bool {
        matches!(self, Probe::RqLock | Probe::TaskLock)
    }

    /// The fields of this probe read into `ptr` beside the one [`Probe::fields`] names:
    /// (key, bit shift, bits). A field the kernel could not read is all ones.
    pub fn packed(self) -> &'static [(&'static str, u32, u32)] {
        match self {
            Probe::ForkUsers | Probe::ExitUsers => &[
                ("users", 0, 16),
                ("max", 16, 16),
                ("thrs", 32, 16),
                ("mode", 48, 16),
            ],
            Probe::MigrateTo => &[
                ("src", 0, 16),
                ("users", 16, 16),
                ("allowed", 32, 16),
                ("last", 48, 16),
            ],
            _ => &[],
        }
    }

    /// The kernel function a probe sits on (for messages).
    pub fn function(self) -> &'static str {
        let d = self.definitions()[0];
        d.split_whitespace()
            .nth(1)
            .unwrap_or(d)
            .trim_end_matches("%return")
            .trim_end_matches(".isra.0")
    }
}

/// A POSIX shell script that defines every probe this kernel takes (each probe's first
/// definition that it accepts) and enables them, for a capture with tracefs, trace-cmd or perf
/// (`cidscope probes`).
pub fn probe_script() -> String {
    let mut s = String::from(
        "#!/bin/sh\n\
         # cidscope's CID probes (docs/models.md §5.6): fprobe events of the group `cidscope` on the\n\
         # kernel functions that run the CID steps no tracepoint marks. Needs root, tracefs and\n\
         # CONFIG_FPROBE_EVENTS + CONFIG_PROBE_EVENTS_BTF_ARGS. Then capture as usual, with the\n\
         # `cidscope:*` events beside rseq:rseq_update and sched:* (they print as cid_* lines).\n\
         # Remove them with: echo '-:cidscope/*' >> $T/dynamic_events\n\
         T=${TRACEFS:-/sys/kernel/tracing}\n\
         [ -e \"$T/dynamic_events\" ] || mount -t tracefs nodev \"$T\" 2>/dev/null\n\
         [ -w \"$T/dynamic_events\" ] || { echo \"cannot write $T/dynamic_events (root? CONFIG_FPROBE_EVENTS?)\" >&2; exit 1; }\n\
         n=0\n",
    );
    for p in Probe::ALL {
        if p == Probe::RqLock {
            // only where the owner-mode walks exist, and only for tasks created from now on
            s += "if grep -q '^f:cidscope/cid_fixup_back ' \"$T/dynamic_events\"; then\n";
            s += &format!(
                "  echo '{}' >> \"$T/dynamic_events\" && n=$((n+1)) &&\n",
                p.definitions()[0]
            );
            s += "  echo \"common_pid > $(cat /proc/sys/kernel/ns_last_pid)\" > \"$T/events/cidscope/cid_rq_lock/filter\"\n";
            s += "fi\n";
            continue;
        }
        s += "for d in";
        for d in p.definitions() {
            s += &format!(" '{d}'");
        }
        s += "; do echo \"$d\" >> \"$T/dynamic_events\" 2>/dev/null && { n=$((n+1)); break; }; done || true\n";
        // (without BTF a probe that reads an argument by name is refused although its
        // function is there)
        let (name, f) = (p.name(), p.function());
        s += &format!(
            "grep -q '^[fpr]:cidscope/{name} ' \"$T/dynamic_events\" || {{ if [ ! -e /sys/kernel/btf/vmlinux ] && grep -qE '^{f}([ .]|$)' \"$T/available_filter_functions\" 2>/dev/null; then echo \"{name}: {f} is there, but this kernel has no BTF (CONFIG_DEBUG_INFO_BTF) for the probe's argument names\"; else echo \"{name}: not in this kernel ({f})\"; fi >&2; }}\n"
        );
    }
    s += "[ \"$n\" -gt 0 ] || { echo \"no CID probe could be defined here (fprobe events with BTF arguments)\" >&2; exit 1; }\n";
    s += "echo 1 > \"$T/events/cidscope/enable\" && echo \"$n CID probes defined and enabled\" >&2\n";
    s += "[ -e /sys/kernel/btf/vmlinux ] || echo \"this kernel has no BTF (/sys/kernel/btf/vmlinux): the probes read no count or mm, so cidscope's probe checks compare nothing\" >&2\n";
    s
}

/// What `sched_mm_cid_migrate_to` saw, from a `cid_migrate_to` probe's `ptr`: each value as
/// the kernel holds it (-1 included), `None` where the probe did not read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MigrateState {
    /// `t->migrate_from_cpu`.
    pub src: Option<i32>,
    pub mm_users: Option<i32>,
    pub nr_cpus_allowed: Option<i32>,
    /// `t->last_mm_cid`.
    pub last_mm_cid: Option<i32>,
}

/// What a 7.x `cid_fork_users` or `cid_exit_users` probe read of the mm's owner-mode state
/// (`struct mm_mm_cid`), from its `ptr`; `None` where it read nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmCidState {
    pub users: Option<i32>,
    pub max_cids: Option<i32>,
    pub pcpu_thrs: Option<i32>,
    /// The mode word's ONCPU (2) and TRANSIT (1) bits.
    pub mode: Option<i32>,
}

impl MmCidState {
    pub fn from_ptr(ptr: u64) -> MmCidState {
        let f = |shift: u32| match (ptr >> shift) & 0xffff {
            PACKED_ABSENT => None,
            PACKED_NEGATIVE => Some(-1),
            v => Some(v as i32),
        };
        MmCidState {
            users: f(0),
            max_cids: f(16),
            pcpu_thrs: f(32),
            mode: f(48),
        }
    }
}

/// A packed field's value: all ones when the probe did not read it, all ones but the lowest
/// bit for a negative value (-1).
pub const PACKED_ABSENT: u64 = 0xffff;
pub const PACKED_NEGATIVE: u64 = 0xfffe;

impl MigrateState {
    pub fn from_ptr(ptr: u64) -> MigrateState {
        let f = |shift: u32| match (ptr >> shift) & 0xffff {
            PACKED_ABSENT => None,
            PACKED_NEGATIVE => Some(-1),
            v => Some(v as i32),
        };
        MigrateState {
            src: f(0),
            mm_users: f(16),
            nr_cpus_allowed: f(32),
            last_mm_cid: f(48),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_distinct() {
        for p in Probe::ALL {
            assert_eq!(Probe::from_name(p.name().as_bytes()), Some(p));
            assert!(p.name().starts_with("cid_"));
            for d in p.definitions() {
                let rest = d.get(2..).unwrap_or("");
                assert!(rest.starts_with(&format!("cidscope/{} ", p.name())), "{d}");
            }
        }
        assert_eq!(Probe::from_name(b"cid_nothing"), None);
        for (i, p) in Probe::ALL.iter().enumerate() {
            assert_eq!(*p as usize, i, "ALL is in declaration order");
        }
        assert_eq!(Probe::MigrateTo.function(), "sched_mm_cid_migrate_to");
        assert_eq!(Probe::ForkDone.function(), "sched_mm_cid_fork");
    }

    #[test]
    fn the_script_defines_every_probe_with_its_fallbacks() {
        let s = probe_script();
        assert!(s.starts_with("#!/bin/sh\n"));
        for p in Probe::ALL {
            for d in p.definitions() {
                assert!(s.contains(&format!("'{d}'")), "{d}");
            }
        }
        assert!(s.contains("events/cidscope/enable"));
    }
}
