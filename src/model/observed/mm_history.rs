//! What the observed state says of each task's mm over a whole capture, recorded once (by a
//! replay's first pass, through [`super::Sink::task_mm`]) and read by every replay of that
//! capture: they need a task's mm rarely (a task the model does not know yet, a fork, an
//! exec), and applying every event to an observed state of their own cost each of them a few
//! per cent (and every snapshot of the inference's search a copy of it).

use super::Sink;
use crate::events::Tid;
use crate::model::tasks::{MmId, MmInfo};

/// The mms the observed resolution makes, in order (their ids are their indices).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Infos(pub Vec<MmInfo>);

impl Infos {
    /// Whether `mm` began inside the capture (an mm it never made did not).
    pub fn begins_in_capture(&self, mm: MmId) -> bool {
        self.0
            .get(mm.0 as usize)
            .is_some_and(|i| i.begins_in_capture())
    }
}

impl Sink for Infos {
    fn new_mm(&mut self, _id: MmId, info: MmInfo) {
        self.0.push(info);
    }
}

/// Per task, its mm from each event on (sorted by tid, then by event index), and the mms made.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MmHistory {
    rows: Vec<(Tid, u32, MmId)>,
    pub infos: Infos,
}

impl MmHistory {
    /// What [`super::ObservedState::mm_of`] says of `tid` once event `i` is applied: `None`
    /// when no task of that tid has been seen by then, [`MmId::UNKNOWN`] when it went away or
    /// its mm is not known.
    pub fn mm_at(&self, tid: Tid, i: usize) -> Option<MmId> {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        // (the rows of `tid` up to event `i`: the last of them holds)
        let end = self.rows.partition_point(|&(t, at, _)| (t, at) <= (tid, i));
        match end.checked_sub(1).map(|k| self.rows[k]) {
            Some((t, _, mm)) if t == tid => Some(mm),
            _ => None,
        }
    }

    /// Every tid that had, at some event, an mm `of` accepts (sorted, each once).
    pub fn tids_ever_in(&self, of: impl Fn(MmId) -> bool) -> Vec<Tid> {
        let mut tids: Vec<Tid> = self
            .rows
            .iter()
            .filter(|&&(_, _, mm)| of(mm))
            .map(|&(t, _, _)| t)
            .collect();
        tids.dedup();
        tids
    }
}

/// A sink that records each change of a task's mm with the index of the event being applied
/// (set [`Self::at`] before each), and the mms made.
#[derive(Default)]
pub struct MmLog {
    pub at: u32,
    rows: Vec<(Tid, u32, MmId)>,
    infos: Infos,
}

impl Sink for MmLog {
    fn new_mm(&mut self, id: MmId, info: MmInfo) {
        self.infos.new_mm(id, info);
    }
    fn task_mm(&mut self, tid: Tid, mm: MmId) {
        self.rows.push((tid, self.at, mm));
    }
}

impl MmLog {
    /// The history of what was recorded.
    pub fn history(self) -> MmHistory {
        let mut rows = self.rows;
        // (stable: the changes of one event stay in the order they were made)
        rows.sort_by_key(|&(t, at, _)| (t, at));
        MmHistory {
            rows,
            infos: self.infos,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_change_up_to_an_event_holds() {
        let mut log = MmLog::default();
        for (at, tid, mm) in [(0, 5, 1), (2, 7, 3), (2, 5, 2), (2, 5, 4), (9, 5, u32::MAX)] {
            log.at = at;
            log.task_mm(tid, MmId(mm));
        }
        let h = log.history();
        assert_eq!(h.mm_at(5, 0), Some(MmId(1)));
        assert_eq!(h.mm_at(5, 1), Some(MmId(1)));
        // (two changes in one event: the later one)
        assert_eq!(h.mm_at(5, 2), Some(MmId(4)));
        assert_eq!(h.mm_at(5, 9), Some(MmId::UNKNOWN));
        assert_eq!(h.tids_ever_in(|m| m == MmId(3) || m == MmId(4)), vec![5, 7]);
        assert_eq!(h.tids_ever_in(|m| m == MmId(9)), Vec::<Tid>::new());
        assert_eq!(h.mm_at(7, 1), None);
        assert_eq!(h.mm_at(7, 100), Some(MmId(3)));
        assert_eq!(h.mm_at(6, 100), None);
        assert_eq!(h.mm_at(4, 100), None);
    }
}
