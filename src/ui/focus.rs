//! The task the cursor is about, for the selected process: the why and the kernel's steps of a
//! CID change explain it. The cursor's own task when it belongs to the process (the task
//! switched in, at a switch); else the process's task whose CID changed last before the
//! cursor; with every task shown, the cursor's task.

use super::selection::MmSel;
use super::state::State;
use crate::events::{EventKind, Tid};

/// How far back (CID changes of other processes) the search for the process's last one goes.
const LOOK_BACK: usize = 200_000;

pub fn focus_task(st: &State) -> Option<Tid> {
    let ev = st.cursor_event()?;
    let own = match ev.kind {
        EventKind::SchedSwitch { next_tid, .. } => next_tid,
        _ => ev.tid,
    };
    let MmSel::Mm(mm) = st.sel.selected() else {
        return (own != 0).then_some(own);
    };
    if own != 0 && st.timeline.task_mm(own) == mm {
        return Some(own);
    }
    // the switch's previous task, when it is the process's
    if ev.tid != 0 && st.timeline.task_mm(ev.tid) == mm {
        return Some(ev.tid);
    }
    let cur = st.view.cursor as u32;
    let changes = &st.timeline.cid_changes;
    let end = changes.partition_point(|&(i, _)| i <= cur);
    changes[..end]
        .iter()
        .rev()
        .take(LOOK_BACK)
        .find(|&&(_, m)| m == mm)
        .and_then(|&(i, _)| st.trace.events.get(i as usize))
        .map(|e| e.tid)
}
