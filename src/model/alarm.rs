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

    pub fn mm(&self) -> MmId {
        match self.kind {
            AlarmKind::DuplicateCid { mm, .. } | AlarmKind::CidOutOfRange { mm, .. } => mm,
        }
    }
}
