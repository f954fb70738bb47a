//! What `mm_users` and the thread group's `nr_threads` count, beyond the forks and exits
//! themselves; `__mm_cid_try_get` bounds `max_nr_cid` by `min(nr_cpus_allowed, mm_users)`.
//!
//! The process-private futex hash's `mm_users` reference (6.17+; docs/models.md §2.3):
//! A thread's clone (`CLONE_THREAD|CLONE_VM`) runs `futex_hash_allocate_default`
//! (`kernel/fork.c` @6.18.15 l.2301): it sizes the hash for
//! `min(nr_threads, num_online_cpus())` threads, 4 buckets each, rounded up to a power of two,
//! at least 16 (`kernel/futex/core.c` l.1889-1922). When that exceeds the current hash, the
//! new one replaces it and `futex_ref_drop` takes an `mm_users` reference (`mmget`, l.1645) that
//! `__futex_ref_atomic_end` drops after one or two RCU grace periods (l.1605). That reference
//! raises `min(nr_cpus_allowed, mm_users)`, the bound `__mm_cid_try_get` expands `max_nr_cid`
//! to, for as long as it is held: tens of ms on a 16-vCPU TCG guest. The trace marks neither
//! the grace periods nor the drop, so a replay holds it until the observed CIDs say it is gone
//! (a search placement, `DriverEvent::FutexRefPut`).

use super::LazyCompact;
use crate::events::Tid;
use crate::model::policies::core::Core;
use crate::model::tasks::MmId;

/// `futex_hash_allocate_default`'s size for `threads` threads on `cpus` online CPUs (the
/// upper clamp, the global hash of `256 * P` buckets, is never reached: `threads <= P`).
pub(crate) fn default_buckets(threads: u32, cpus: u32) -> u32 {
    (4 * threads.min(cpus).max(1)).next_power_of_two().max(16)
}

impl LazyCompact {
    /// One `mmput` of `id` (exit_mm, exec_mmap's old mm).
    pub(crate) fn drop_user(&mut self, core: &Core, id: MmId) {
        self.note_users_read(id);
        let m = self.slot(core, id);
        if m.live {
            m.mm_users = m.mm_users.saturating_sub(1);
        }
    }

    /// The clone of thread `child` (already counted in `mm_users` by `fork`): the thread
    /// group grows by one, after the futex hash was sized for the threads before it.
    pub(crate) fn clone_thread(&mut self, core: &mut Core, child: Tid) {
        let Some(id) = core.task(child).and_then(|t| t.mm) else {
            return;
        };
        self.note_users_read(id);
        if !self.slot(core, id).live {
            return;
        }
        // (a clone whose sizing waits for its record: `DriverEvent::FutexSizeAtRecord`)
        if !core.defer_futex_size {
            let defer_get = core.defer_futex_get;
            self.size_futex_hash(core, id, defer_get, false);
        }
        let m = self.slot(core, id);
        m.nr_threads += 1;
        core.mark_mm(id);
        if let Some(t) = core.task_mut(child) {
            self.tasks.get_mut(t).in_nr_threads = true;
        }
    }

    /// `futex_hash_allocate_default` of a thread clone of `id`, for the threads in the group
    /// before the child joins: at the clone's step, or at its record (`joined`: the child
    /// counted already, [`Core::defer_futex_size`]). `defer_get`: its reference waits for its
    /// `mmget`.
    pub(crate) fn size_futex_hash(
        &mut self,
        core: &mut Core,
        id: MmId,
        defer_get: bool,
        joined: bool,
    ) {
        let (cpus, futex) = (core.params.cpus, core.params.futex_hash_ref);
        if !futex || !self.slot(core, id).live {
            return;
        }
        // (sized at the clone's record, it reads `nr_threads` there: a fork step placed just
        // before or after that record gives another replay; the clone's own read is noted
        // by `clone_thread`)
        if joined {
            self.note_users_read(id);
        }
        let m = self.slot(core, id);
        let threads = if joined {
            m.nr_threads.saturating_sub(1)
        } else {
            m.nr_threads
        };
        let want = default_buckets(threads, cpus);
        if m.futex_buckets == 0 {
            // the first hash (no old one to drop), or one the model never saw grow
            m.futex_buckets = want;
        } else if want > m.futex_buckets {
            // `futex_hash_allocate_default` compares with the installed hash only
            if m.futex_pending == 0 {
                // no replacement yet: `futex_private_hash_put(cur)`'s `futex_ref_drop`
                // takes the reference, and the new hash waits for the old one to die
                m.futex_pending = want;
                m.futex_refs += 1;
                if defer_get {
                    m.futex_gets_pending += 1;
                } else {
                    m.mm_users += 1;
                }
            } else {
                // "two updates raced; throw out the lesser one" (core.c l.1862-1873), no
                // mmget; once the old hash is dead (its reference dropped),
                // `__futex_pivot_hash` installs the greater one here
                m.futex_pending = m.futex_pending.max(want);
                if m.futex_refs == 0 {
                    m.futex_buckets = std::mem::take(&mut m.futex_pending);
                }
            }
        }
        core.mark_mm(id);
    }

    /// `tid` leaves its thread group (its exit's `release_task`, or an exec).
    pub(crate) fn leave_thread_group(&mut self, core: &mut Core, tid: Tid) {
        let Some(t) = core.task(tid) else { return };
        let Some(id) = t.mm.filter(|_| self.tasks.get(t).in_nr_threads) else {
            return;
        };
        self.note_users_read(id);
        let m = self.slot(core, id);
        m.nr_threads = m.nr_threads.saturating_sub(1);
        if let Some(t) = core.task_mut(tid) {
            self.tasks.get_mut(t).in_nr_threads = false;
        }
    }

    /// The futex hash's reference on `id` goes (`__futex_ref_atomic_end`'s `mmput_async`).
    pub(crate) fn put_futex_ref(&mut self, core: &mut Core, id: MmId) -> bool {
        let m = self.slot(core, id);
        if !m.live || m.futex_refs == 0 {
            return false;
        }
        m.futex_refs -= 1;
        if m.futex_gets_pending > 0 {
            m.futex_gets_pending -= 1;
        } else {
            m.mm_users = m.mm_users.saturating_sub(1);
        }
        core.mark_mm(id);
        true
    }

    /// The `mmget` of a reference on `id` that a clone's sizing took with it deferred
    /// (`Core::defer_futex_get`): its vCPU stalled between `futex_hash_allocate_default`'s
    /// thread count and `futex_ref_drop`.
    pub(crate) fn get_futex_ref(&mut self, core: &mut Core, id: MmId) -> bool {
        let m = self.slot(core, id);
        if !m.live || m.futex_gets_pending == 0 {
            return false;
        }
        m.futex_gets_pending -= 1;
        m.mm_users += 1;
        core.mark_mm(id);
        true
    }

    pub(crate) fn holds_futex_ref(&self, id: MmId) -> bool {
        self.mm(id).is_some_and(|m| m.live && m.futex_refs > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::default_buckets;
    use crate::model::policies::script::Script;
    use crate::model::policies::{DriverEvent, KernelVersion, Params, PolicyKind};

    fn script(futex_hash_ref: bool) -> Script {
        Script::with_params(
            PolicyKind::LazyCompact,
            Params {
                cpus: 16,
                hz: 250,
                version: KernelVersion::V6_14,
                futex_hash_ref,
                ..Params::default()
            },
        )
    }

    /// The 6th thread's clone sees 5 threads: the hash grows from 16 to 32 buckets and holds
    /// an mm_users reference until it is dropped; the 10th's (9 threads, 64 buckets) finds
    /// that replacement still pending and takes none. Without the futex hash, mm_users is the
    /// thread count.
    #[test]
    fn a_growing_futex_hash_holds_one_mm_users_reference() {
        for futex in [false, true] {
            let mut s = script(futex);
            let mm = s.process(100, 0);
            for (i, t) in (101..=105).enumerate() {
                s.thread(100, t, 1 + i as u16);
            }
            let lc = s.lc(mm).unwrap();
            assert_eq!(
                (lc.nr_threads, lc.mm_users),
                (6, 6 + futex as u32),
                "{futex}"
            );
            // 16 installed, 32 waiting for the old hash's references to die
            let want = if futex { (16, 32) } else { (0, 0) };
            assert_eq!((lc.futex_buckets, lc.futex_pending), want);
            for (i, t) in (106..=109).enumerate() {
                s.thread(100, t, 6 + i as u16);
            }
            let lc = s.lc(mm).unwrap();
            assert_eq!(
                (lc.nr_threads, lc.mm_users),
                (10, 10 + futex as u32),
                "{futex}"
            );
            s.step(DriverEvent::FutexRefPut { mm });
            assert_eq!(s.lc(mm).unwrap().mm_users, 10, "{futex}");
        }
    }

    /// The reference's drop does not install the waiting hash (a futex op or the next growing
    /// clone does, `__futex_pivot_hash`): on 48 CPUs the 34th thread's clone (33 threads, 256
    /// buckets) after the drop installs the greater of the two and takes no reference. Seen on
    /// a probed 6.18.15 48-vCPU `workers` boot: `cid_fork` read 35 users there, not 36.
    #[test]
    fn the_first_growth_after_the_drop_installs_the_waiting_hash() {
        let mut s = Script::with_params(
            PolicyKind::LazyCompact,
            Params {
                cpus: 48,
                hz: 250,
                version: KernelVersion::V6_14,
                futex_hash_ref: true,
                ..Params::default()
            },
        );
        let mm = s.process(100, 0);
        for (i, t) in (101..=132).enumerate() {
            s.thread(100, t, 1 + (i % 47) as u16);
        }
        let lc = s.lc(mm).unwrap();
        assert_eq!((lc.nr_threads, lc.mm_users), (33, 34));
        assert_eq!(
            (lc.futex_buckets, lc.futex_pending, lc.futex_refs),
            (16, 128, 1)
        );
        s.step(DriverEvent::FutexRefPut { mm });
        assert_eq!(s.lc(mm).unwrap().mm_users, 33);
        s.thread(100, 133, 40);
        let lc = s.lc(mm).unwrap();
        assert_eq!((lc.nr_threads, lc.mm_users), (34, 34), "no new reference");
        assert_eq!(
            (lc.futex_buckets, lc.futex_pending, lc.futex_refs),
            (256, 0, 0)
        );
    }

    /// With the `mmget` deferred (a probed clone, `Core::defer_futex_get`), the sizing takes
    /// the reference and the hash state at the step, `mm_users` only at the get.
    #[test]
    fn a_deferred_get_counts_the_reference_only_when_it_runs() {
        let mut s = script(true);
        let mm = s.process(100, 0);
        for (i, t) in (101..=104).enumerate() {
            s.thread(100, t, 1 + i as u16);
        }
        s.engine.core.defer_futex_get = true;
        s.thread(100, 105, 6);
        s.engine.core.defer_futex_get = false;
        let lc = s.lc(mm).unwrap();
        assert_eq!(
            (lc.mm_users, lc.futex_refs, lc.futex_gets_pending),
            (6, 1, 1)
        );
        assert_eq!(lc.futex_pending, 32, "sized at the step");
        s.step(DriverEvent::FutexRefGet { mm });
        let lc = s.lc(mm).unwrap();
        assert_eq!((lc.mm_users, lc.futex_gets_pending), (7, 0));
        s.step(DriverEvent::FutexRefGet { mm });
        assert_eq!(s.lc(mm).unwrap().mm_users, 7, "one get per reference");
        s.step(DriverEvent::FutexRefPut { mm });
        assert_eq!(s.lc(mm).unwrap().mm_users, 6);
    }

    /// A clone whose sizing waits for its record (`Core::defer_futex_size`) counts the threads
    /// left then, the child not among them: threads that exited in between grow it less.
    #[test]
    fn a_sizing_at_the_record_counts_the_threads_left() {
        for (exits, grows) in [(0, true), (2, false)] {
            let mut s = script(true);
            let mm = s.process(100, 0);
            for (i, t) in (101..=104).enumerate() {
                s.thread(100, t, 1 + i as u16);
            }
            s.engine.core.defer_futex_size = true;
            s.thread(100, 105, 6);
            s.engine.core.defer_futex_size = false;
            let lc = s.lc(mm).unwrap();
            assert_eq!(
                (lc.nr_threads, lc.mm_users),
                (6, 6),
                "nothing sized at the step"
            );
            assert_eq!((lc.futex_buckets, lc.futex_pending), (16, 0));
            for t in 101..101 + exits {
                s.exit(t);
            }
            s.step(DriverEvent::FutexSizeAtRecord { mm });
            let lc = s.lc(mm).unwrap();
            // five threads before 105 joined: 32 buckets; three: still 16
            assert_eq!(
                lc.futex_pending,
                if grows { 32 } else { 0 },
                "{exits} exits"
            );
            assert_eq!(lc.futex_refs, u32::from(grows), "{exits} exits");
        }
    }

    /// kernel/futex/core.c l.1915-1916: roundup_pow_of_two(4 * threads), at least 16.
    #[test]
    fn the_default_hash_grows_at_5_and_9_threads() {
        let b: Vec<u32> = (1..=17).map(|t| default_buckets(t, 16)).collect();
        assert_eq!(&b[..4], &[16; 4]);
        assert_eq!(&b[4..8], &[32; 4]);
        assert_eq!(&b[8..16], &[64; 8]);
        assert_eq!(b[16], 64, "threads are capped by the online CPUs");
        assert_eq!(default_buckets(8, 4), 16, "4 CPUs never grow it");
    }
}
