//! Invariant breaks, in observed data or in a model: the two guarantees rseq gives user space.

use super::tasks::MmId;
use crate::events::Tid;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlarmKind {
    /// Two threads of one mm running at the same instant with the same CID.
    DuplicateCid { mm: MmId, cid: i32, tids: [Tid; 2] },
    /// A CID at or above its bound (the possible-CPU count), or negative.
    CidOutOfRange {
        mm: MmId,
        tid: Tid,
        cid: i32,
        bound: u32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alarm {
    pub ts: u64,
    pub cpu: u16,
    pub kind: AlarmKind,
}

impl Alarm {
    pub fn describe(&self) -> String {
        match self.kind {
            AlarmKind::DuplicateCid { cid, tids, .. } => format!(
                "duplicate CID {cid}: tasks {} and {} of one mm run at once",
                tids[0], tids[1]
            ),
            AlarmKind::CidOutOfRange {
                tid, cid, bound, ..
            } => {
                format!("CID {cid} of task {tid} is outside 0..{bound}")
            }
        }
    }

    /// The alarm raised on observed data (`ObservedState`): what the capture shows the kernel
    /// did, in plain words. A duplicate there rests on two `rseq_update` records, the earlier
    /// task not switched out in between (docs/models.md §5.5).
    pub fn describe_observed(&self) -> String {
        match self.kind {
            AlarmKind::DuplicateCid { cid, tids, .. } => format!(
                "duplicate CID {cid}: tasks {} and {} of one mm run at once: the kernel reported \
                 CID {cid} to task {} (its rseq_update) while task {}, reported CID {cid} before \
                 and not switched out since, was running",
                tids[0], tids[1], tids[1], tids[0]
            ),
            AlarmKind::CidOutOfRange {
                tid, cid, bound, ..
            } => format!(
                "CID {cid} of task {tid} is outside 0..{bound}: the kernel reported it (its \
                 rseq_update)"
            ),
        }
    }

    pub fn mm(&self) -> MmId {
        match self.kind {
            AlarmKind::DuplicateCid { mm, .. } | AlarmKind::CidOutOfRange { mm, .. } => mm,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observed_duplicate_says_the_kernel_reported_it() {
        let a = Alarm {
            ts: 1,
            cpu: 15,
            kind: AlarmKind::DuplicateCid {
                mm: MmId(3),
                cid: 1,
                tids: [488, 489],
            },
        };
        let s = a.describe_observed();
        assert!(s.contains("the kernel reported CID 1 to task 489"), "{s}");
        assert!(s.contains("task 488"), "{s}");
        assert!(a.describe().contains("duplicate CID 1"));
    }
}
