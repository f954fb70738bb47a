//! Where the first two compared lane sets disagree (the `≠` of the diff row), over the whole
//! capture: the times at which some CPU starts to show a different CID in each (both showing
//! one), for `d` and `D` to jump to. Computed on demand by walking the segments of both sets,
//! CPU by CPU.

use super::selection::Selection;
use super::state::State;
use crate::timeline::{SegLane, Segment};

/// Which segments of a set count (as its lanes draw them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Admit {
    /// The observed lanes: the selected process.
    Selection,
    /// A model's slots of one process: a slot holding a CID, or a task of it running.
    Slots,
    /// A model for every task: a running task.
    Running,
}

fn shown(s: Option<Segment>, admit: Admit, sel: &Selection) -> Option<i32> {
    let s = s?;
    let admitted = match admit {
        Admit::Selection => sel.admits(&s),
        Admit::Slots => s.cid().is_some() || s.tid != 0,
        Admit::Running => s.tid != 0,
    };
    admitted.then(|| s.cid()).flatten()
}

/// The times on one CPU at which lanes `a` and `b` start to show different CIDs.
fn starts_of_difference(
    (a, admit_a): (&SegLane, Admit),
    (b, admit_b): (&SegLane, Admit),
    sel: &Selection,
    out: &mut Vec<u64>,
) {
    let (mut i, mut j) = (0usize, 0usize);
    let mut cur: (Option<Segment>, Option<Segment>) = (None, None);
    let mut differ = false;
    loop {
        let next = match (a.get(i), b.get(j)) {
            (None, None) => break,
            (Some(x), None) => x.start,
            (None, Some(y)) => y.start,
            (Some(x), Some(y)) => x.start.min(y.start),
        };
        while let Some(x) = a.get(i).filter(|x| x.start == next) {
            cur.0 = Some(x);
            i += 1;
        }
        while let Some(y) = b.get(j).filter(|y| y.start == next) {
            cur.1 = Some(y);
            j += 1;
        }
        let d = match (shown(cur.0, admit_a, sel), shown(cur.1, admit_b, sel)) {
            (Some(u), Some(v)) => u != v,
            _ => false,
        };
        if d && !differ {
            out.push(next);
        }
        differ = d;
    }
}

/// The names of the two sets compared and the times they start to disagree, time-ordered;
/// `None` when fewer than two sets are shown.
pub fn disagreements(st: &State) -> Option<(String, String, Vec<u64>)> {
    let mm = st.sel.selected_mm();
    let model_admit = if mm.is_some() {
        Admit::Slots
    } else {
        Admit::Running
    };
    let live_only = st.samples.as_ref().is_some_and(|s| !s.attached);
    let mut sets: Vec<(String, &[SegLane], Admit)> = Vec::new();
    if st.models.show_observed && !live_only {
        sets.push(("observed".into(), &st.timeline.lanes[..], Admit::Selection));
    }
    for m in &st.models.views {
        sets.push((m.run.policy.id().to_string(), &m.lanes[..], model_admit));
    }
    if sets.len() < 2 {
        return None;
    }
    let (a, b) = (&sets[0], &sets[1]);
    let mut out = Vec::new();
    for cpu in st.visible_cpus() {
        let la = a.1.get(cpu).unwrap_or(SegLane::empty());
        let lb = b.1.get(cpu).unwrap_or(SegLane::empty());
        starts_of_difference((la, a.2), (lb, b.2), &st.sel, &mut out);
    }
    out.sort_unstable();
    out.dedup();
    Some((a.0.clone(), b.0.clone(), out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MmId;

    fn seg(start: u64, cid: i32) -> Segment {
        Segment {
            start,
            tid: 7,
            mm: MmId(1),
            cid,
            flags: Segment::CONFIRMED,
        }
    }

    #[test]
    fn the_starts_of_each_disagreement_on_a_cpu() {
        let mut a = SegLane::new();
        let mut b = SegLane::new();
        for s in [seg(10, 0), seg(20, 1), seg(40, 0)] {
            a.push(s);
        }
        for s in [seg(10, 0), seg(25, 1), seg(30, 2), seg(50, 0)] {
            b.push(s);
        }
        let sel = Selection::default();
        let mut out = Vec::new();
        starts_of_difference((&a, Admit::Running), (&b, Admit::Running), &sel, &mut out);
        // 20: 1 vs 0; 25: agree; 30: 1 vs 2 (a new disagreement); 40-50: 0 vs 2; 50: agree
        assert_eq!(out, vec![20, 30]);
    }
}
