//! A probe's state read after its timestamp (docs/models.md §5.6, *a reading from after its
//! timestamp*): a kprobe event takes its timestamp when it reserves its ring-buffer entry and
//! reads its arguments after that (`__kprobe_trace_func`: `trace_event_buffer_reserve`, then
//! `store_trace_args`), so a vCPU that stalls in between records the stamp of one moment and the
//! state of a later one, as late as its CPU's next record. A reading the model held otherwise at
//! the stamp is compared with every value the model's mm passes through until that record. A
//! count (`mm_users`, owner-mode's `users`) moves by one at a time, so a reading between the
//! least and the most of them is one the mm had then; another value must have been seen.

use crate::events::Tid;
use crate::model::policies::policy::ProbeView;
use crate::model::policies::run::{ProbeChecks, ProbeMismatch};

/// The value of the task's mm a reading is followed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Watched {
    /// `mm_users` (a count).
    MmUsers,
    /// owner-mode's `mm_cid.users` (a count).
    CidUsers,
    MaxCids,
    PcpuThrs,
    Mode,
}

impl Watched {
    pub fn of(self, v: &ProbeView) -> Option<u32> {
        match self {
            Watched::MmUsers => v.mm_users,
            Watched::CidUsers => v.cid_users,
            Watched::MaxCids => v.max_cids,
            Watched::PcpuThrs => v.pcpu_thrs,
            Watched::Mode => v.mode_bits,
        }
    }

    /// Whether the value moves by one at a time, passing through every value between two.
    fn counts(self) -> bool {
        matches!(self, Watched::MmUsers | Watched::CidUsers)
    }
}

/// A reading held back until its CPU's next record.
#[derive(Clone, Debug)]
struct LateRead {
    cpu: u16,
    watched: Watched,
    /// As the model held it at the stamp (`model` there) and as the kernel read it.
    at_stamp: ProbeMismatch,
    /// The values the model's mm had since the probe's event (its own step included), in the
    /// order they came, each once in a row.
    seen: Vec<i64>,
}

impl LateRead {
    /// The comparison as it stands: the reading matches when the mm passed through it.
    fn settled(&self) -> ProbeMismatch {
        let k = self.at_stamp.kernel;
        let passed = if self.watched.counts() {
            let lo = self.seen.iter().min();
            let hi = self.seen.iter().max();
            lo.zip(hi).is_some_and(|(&lo, &hi)| lo <= k && k <= hi)
        } else {
            self.seen.contains(&k)
        };
        let mut m = self.at_stamp.clone();
        if passed {
            m.model = k;
        }
        m
    }

    fn see(&mut self, v: i64) {
        if self.seen.last() != Some(&v) {
            self.seen.push(v);
        }
    }
}

/// The readings held back (few at once: a mismatch at the stamp is rare).
#[derive(Clone, Debug, Default)]
pub(super) struct LateReads(Vec<LateRead>);

impl LateReads {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Holds back a reading on `cpu` that differs from the model's at its stamp (`m.model`).
    pub fn hold(&mut self, cpu: u16, watched: Watched, m: ProbeMismatch) {
        self.0.push(LateRead {
            cpu,
            watched,
            at_stamp: m,
            seen: Vec::new(),
        });
    }

    /// Before a record on `cpu`: each reading held back sees its mm's value now (`value_of`
    /// the task and what is watched), and those of `cpu` are compared into `checks` (their
    /// reading was done before this record was stamped).
    pub fn follow(
        &mut self,
        cpu: u16,
        value_of: impl Fn(Tid, Watched) -> Option<i64>,
        checks: &mut ProbeChecks,
    ) {
        self.0.retain_mut(|r| {
            if let Some(v) = value_of(r.at_stamp.tid, r.watched) {
                r.see(v);
            }
            if r.cpu != cpu {
                return true;
            }
            checks.compare(r.settled());
            false
        });
    }

    /// `checks` with every reading held back compared as it stands (the replay's end, or its
    /// figures so far).
    pub fn settle_into(&self, checks: &mut ProbeChecks) {
        for r in &self.0 {
            checks.compare(r.settled());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(kernel: i64, model: i64, seen: &[i64]) -> LateRead {
        read_of(Watched::MmUsers, kernel, model, seen)
    }

    fn read_of(watched: Watched, kernel: i64, model: i64, seen: &[i64]) -> LateRead {
        LateRead {
            cpu: 3,
            watched,
            at_stamp: ProbeMismatch {
                ts: 1,
                tid: 7,
                probe: "cid_fork",
                value: "mm_users",
                kernel,
                model,
            },
            seen: seen.to_vec(),
        }
    }

    /// A reading matches when the mm passed through it after the stamp, and only then; what
    /// stays a mismatch keeps the model's value at the stamp. A count passes through every
    /// value between two it had; another value only through those it had.
    #[test]
    fn a_late_reading_matches_a_value_the_mm_passed_through() {
        assert_eq!(read(2, 6, &[6, 2]).settled().model, 2);
        assert_eq!(read(4, 6, &[6, 2]).settled().model, 4);
        assert_eq!(read(2, 6, &[6, 3]).settled().model, 6);
        assert_eq!(read(7, 6, &[6, 2]).settled().model, 6);
        assert_eq!(read(2, 6, &[]).settled().model, 6);
        assert_eq!(read_of(Watched::MaxCids, 4, 6, &[6, 2]).settled().model, 6);
        assert_eq!(read_of(Watched::MaxCids, 2, 6, &[6, 2]).settled().model, 2);
        let mut r = read(2, 6, &[]);
        for v in [5, 5, 4, 5] {
            r.see(v);
        }
        assert_eq!(r.seen, vec![5, 4, 5]);
        let mut checks = ProbeChecks::default();
        LateReads(vec![read(2, 6, &[5, 2]), read(1, 6, &[5, 2])]).settle_into(&mut checks);
        assert_eq!((checks.checked, checks.matched), (2, 1));
        assert_eq!(checks.mismatches[0].model, 6);
    }
}
