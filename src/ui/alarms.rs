//! The rseq guarantees broken at the cursor, in the capture's state there: which tasks hold
//! which CID on which CPUs, since when. The cursor pane explains them, the lanes draw their
//! holders in the alarm style, and the lane window follows their CPUs.

use super::state::State;
use crate::events::Tid;
use crate::model::MmId;

/// A running task holding a CID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holder {
    pub tid: Tid,
    pub cpu: usize,
    pub cid: i32,
    /// When the task last reported a change to this CID (event time), if known.
    pub since: Option<u64>,
}

/// A guarantee broken at the cursor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Broken {
    /// Two (or more) running tasks of one process hold one CID.
    Duplicate {
        mm: MmId,
        cid: i32,
        holders: Vec<Holder>,
    },
    /// A running task holds a CID at or above the bound (the possible-CPU count), or below 0.
    OutOfRange {
        mm: MmId,
        holder: Holder,
        bound: u32,
    },
}

impl Broken {
    pub fn mm(&self) -> MmId {
        match self {
            Broken::Duplicate { mm, .. } | Broken::OutOfRange { mm, .. } => *mm,
        }
    }

    /// The CPUs of the tasks involved.
    pub fn cpus(&self) -> Vec<usize> {
        match self {
            Broken::Duplicate { holders, .. } => holders.iter().map(|h| h.cpu).collect(),
            Broken::OutOfRange { holder, .. } => vec![holder.cpu],
        }
    }

    /// The tasks that hold the CID.
    pub fn tids(&self) -> Vec<Tid> {
        match self {
            Broken::Duplicate { holders, .. } => holders.iter().map(|h| h.tid).collect(),
            Broken::OutOfRange { holder, .. } => vec![holder.tid],
        }
    }

    /// What the broken guarantee means for user space.
    pub fn meaning(&self) -> &'static str {
        match self {
            Broken::Duplicate { .. } => {
                "rseq promises a CID unique among the threads of a process running at the same \
                 instant: both now index the same per-CID data, which is then not theirs alone"
            }
            Broken::OutOfRange { .. } => {
                "rseq promises mm_cid below the number of possible CPUs: an array sized by the \
                 CPU count and indexed by this CID is overrun"
            }
        }
    }
}

/// The guarantees broken in the capture's state after the cursor's event, for the selected
/// process (every process with "all tasks"). Only confirmed CIDs count for duplicates: a CID
/// reported before the task's switch-in may be stale and is not an alarm (as in `--check`).
pub fn at_cursor(st: &State) -> Vec<Broken> {
    if st.trace.events.is_empty() {
        return Vec::new();
    }
    let tl = &st.timeline;
    let state = tl.state_after(&st.trace, st.view.cursor);
    let only = st.sel.selected_mm();
    let since = |tid: Tid| {
        tl.cid_history(&st.trace, tid, st.view.cursor, 1)
            .last()
            .map(|&(i, _)| st.trace.events.ts(i))
    };
    let holders: Vec<(MmId, Holder)> = state
        .cpus
        .iter()
        .enumerate()
        .filter(|(_, s)| s.tid != 0 && s.mm.is_real() && only.is_none_or(|m| m == s.mm))
        .filter_map(|(cpu, s)| {
            let cid = s.cid?;
            Some((
                s.mm,
                Holder {
                    tid: s.tid,
                    cpu,
                    cid,
                    since: since(s.tid),
                },
            ))
        })
        .collect();
    let mut out = Vec::new();
    for (mm, h) in holders.iter().filter(|_| tl.judged.bound) {
        if h.cid < 0 || h.cid as u32 >= tl.ncpus {
            out.push(Broken::OutOfRange {
                mm: *mm,
                holder: *h,
                bound: tl.ncpus,
            });
        }
    }
    let confirmed: Vec<&(MmId, Holder)> = holders
        .iter()
        .filter(|_| tl.judged.duplicates)
        .filter(|(_, h)| state.cpus[h.cpu].confirmed)
        .collect();
    let mut done: Vec<(MmId, i32)> = Vec::new();
    for (mm, h) in &confirmed {
        if done.contains(&(*mm, h.cid)) {
            continue;
        }
        let same: Vec<Holder> = confirmed
            .iter()
            .filter(|(m, o)| m == mm && o.cid == h.cid)
            .map(|(_, o)| *o)
            .collect();
        if same.len() > 1 {
            done.push((*mm, h.cid));
            out.push(Broken::Duplicate {
                mm: *mm,
                cid: h.cid,
                holders: same,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{LoadOptions, load_bytes};
    use crate::ui::app::App;

    #[test]
    fn a_duplicate_and_a_cid_out_of_range_at_the_cursor() {
        let t = load_bytes(
            "dup.txt",
            // the switches make duplicates judgeable: who runs where is known
            b"# entries-in-buffer/entries-written: 5/5   #P:2\n\
              <idle>-0 (-----) [000] .....  0.999000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=w next_pid=11 next_prio=120\n\
              <idle>-0 (-----) [001] .....  0.999001: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=w next_pid=12 next_prio=120\n\
              w-11 (     10) [000] .....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n\
              w-12 (     10) [001] .....  1.000010: rseq_update: cpu_id=1 node_id=0 mm_cid=0\n\
              w-12 (     10) [001] .....  1.000020: rseq_update: cpu_id=1 node_id=0 mm_cid=2\n",
            &LoadOptions::default(),
        )
        .expect("trace");
        let mut a = App::new(t);
        assert_eq!(at_cursor(&a.state), vec![]);
        a.state.set_cursor(3);
        let b = at_cursor(&a.state);
        assert_eq!(b.len(), 1, "{b:?}");
        let Broken::Duplicate { cid, holders, .. } = &b[0] else {
            panic!("{b:?}")
        };
        assert_eq!(*cid, 0);
        let who: Vec<(Tid, usize)> = holders.iter().map(|h| (h.tid, h.cpu)).collect();
        assert_eq!(who, vec![(11, 0), (12, 1)]);
        assert_eq!(holders[1].since, Some(1_000_010_000));
        assert_eq!(b[0].cpus(), vec![0, 1]);
        a.state.set_cursor(4);
        let b = at_cursor(&a.state);
        assert!(
            matches!(&b[..], [Broken::OutOfRange { holder, bound: 2, .. }] if holder.cid == 2 && holder.tid == 12),
            "{b:?}"
        );
    }
}
