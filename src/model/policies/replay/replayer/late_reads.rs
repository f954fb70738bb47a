//! A probe's `mm_users` read after its timestamp (docs/models.md §5.6, *a reading from after
//! its timestamp*): a kprobe event takes its timestamp when it reserves its ring-buffer entry
//! and reads its arguments after that (`__kprobe_trace_func`: `trace_event_buffer_reserve`,
//! then `store_trace_args`), so a vCPU that stalls in between records the stamp of one moment
//! and the count of a later one, as late as its CPU's next record. A reading the model held
//! otherwise at the stamp is compared with every count the model's mm passes through until that
//! record; the count moves by one at a time (an `mmget` or an `mmput`), so a reading between
//! the least and the most of them is one the mm had then.

use super::Replayer;
use crate::events::Tid;
use crate::model::policies::run::{ProbeChecks, ProbeMismatch};

/// A reading held back until its CPU's next record.
#[derive(Clone, Debug)]
struct LateRead {
    cpu: u16,
    /// As the model held it at the stamp (`model` there) and as the kernel read it.
    at_stamp: ProbeMismatch,
    /// The least and the most `mm_users` of the task's mm the model held since the probe's
    /// event (its own step included).
    seen: Option<(i64, i64)>,
}

impl LateRead {
    /// The comparison as it stands: the reading matches when the mm passed through it.
    fn settled(&self) -> ProbeMismatch {
        let k = self.at_stamp.kernel;
        let mut m = self.at_stamp.clone();
        if self.seen.is_some_and(|(lo, hi)| lo <= k && k <= hi) {
            m.model = k;
        }
        m
    }
}

/// The readings held back (few at once: a mismatch at the stamp is rare).
#[derive(Clone, Debug, Default)]
pub(super) struct LateReads(Vec<LateRead>);

impl LateReads {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `checks` with every reading held back compared as it stands (the replay's end, or its
    /// figures so far).
    pub fn settle_into(&self, checks: &mut ProbeChecks) {
        for r in &self.0 {
            checks.compare(r.settled());
        }
    }
}

impl Replayer {
    /// Compares an `mm_users` a probe on `cpu` read with the model's (`m.model`, at the stamp):
    /// now where they agree, else at the CPU's next record ([`Replayer::follow_late_reads`]).
    pub(super) fn compare_users(&mut self, cpu: u16, m: ProbeMismatch) {
        if m.kernel == m.model {
            self.probe_checks.compare(m);
        } else {
            self.late_reads.0.push(LateRead {
                cpu,
                at_stamp: m,
                seen: None,
            });
        }
    }

    /// Before each record (on `cpu`): the readings held back follow their mm's `mm_users`, and
    /// those of `cpu` are compared (their reading was done before this record was stamped).
    pub(super) fn follow_late_reads(&mut self, cpu: u16) {
        let mut reads = std::mem::take(&mut self.late_reads.0);
        reads.retain_mut(|r| {
            if let Some(u) = self.users_of(r.at_stamp.tid) {
                r.seen = Some(r.seen.map_or((u, u), |(lo, hi)| (lo.min(u), hi.max(u))));
            }
            if r.cpu != cpu {
                return true;
            }
            self.probe_checks.compare(r.settled());
            false
        });
        self.late_reads.0 = reads;
    }

    fn users_of(&self, tid: Tid) -> Option<i64> {
        self.engine.core.task(tid)?;
        self.engine.probe_view(tid).mm_users.map(i64::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(kernel: i64, model: i64, seen: Option<(i64, i64)>) -> LateRead {
        LateRead {
            cpu: 3,
            at_stamp: ProbeMismatch {
                ts: 1,
                tid: 7,
                probe: "cid_fork",
                value: "mm_users",
                kernel,
                model,
            },
            seen,
        }
    }

    /// A reading matches when the mm passed through it after the stamp, and only then; what
    /// stays a mismatch keeps the model's count at the stamp.
    #[test]
    fn a_late_reading_matches_a_count_the_mm_passed_through() {
        assert_eq!(read(2, 6, Some((2, 6))).settled().model, 2);
        assert_eq!(read(4, 6, Some((2, 6))).settled().model, 4);
        assert_eq!(read(2, 6, Some((3, 6))).settled().model, 6);
        assert_eq!(read(7, 6, Some((2, 6))).settled().model, 6);
        assert_eq!(read(2, 6, None).settled().model, 6);
        let mut checks = ProbeChecks::default();
        LateReads(vec![read(2, 6, Some((2, 5))), read(1, 6, Some((2, 5)))])
            .settle_into(&mut checks);
        assert_eq!((checks.checked, checks.matched), (2, 1));
        assert_eq!(checks.mismatches[0].model, 6);
    }
}
