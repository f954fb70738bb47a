//! The process picker's list (`P`): a row per process with rseq activity — comm, tgid, threads,
//! rseq_updates, CIDs seen, born in the capture — the filter typed so far and the cursor. The
//! keys that move through it are [`super::picker`]'s; the overlay that draws it is
//! `widgets::picker`.

use super::selection::{MmSel, Selection};
use crate::events::{Tid, Trace};
use crate::timeline::Timeline;

/// One row of the picker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PickerRow {
    pub sel: MmSel,
    pub comm: String,
    pub tgid: Option<Tid>,
    /// "tgid 3082", "tgid 9149 (after exec)", "all tasks", ...
    pub label: String,
    pub threads: usize,
    pub rseq_updates: u64,
    pub cids: Vec<i32>,
    /// The process began inside the capture (fork or exec): every CID it got was seen.
    pub born: bool,
    /// How: "fork", "exec", or "" (it existed before the capture).
    pub born_by: &'static str,
}

impl PickerRow {
    /// Whether the filter (lower case) matches: a substring of the comm, the tgid or the label.
    fn matches(&self, filter: &str) -> bool {
        filter.is_empty()
            || self.comm.to_lowercase().contains(filter)
            || self.tgid.is_some_and(|t| t.to_string().contains(filter))
            || self.label.to_lowercase().contains(filter)
    }
}

/// The picker's state while it is open.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Picker {
    pub filter: String,
    /// Position in the filtered rows.
    pub pos: usize,
    pub rows: Vec<PickerRow>,
}

/// The rows: "all tasks", then the processes in the order Tab cycles them (most active first).
pub fn rows(tl: &Timeline, trace: &Trace, sel: &Selection) -> Vec<PickerRow> {
    let mut out = vec![PickerRow {
        sel: MmSel::All,
        comm: String::new(),
        tgid: None,
        label: "all tasks".into(),
        threads: trace.tasks.len(),
        rseq_updates: tl.mm_stats.iter().map(|s| s.rseq_updates).sum(),
        cids: Vec::new(),
        born: false,
        born_by: "",
    }];
    // tasks per mm in one pass (not one pass over all tasks per process)
    let mut threads = vec![0usize; tl.mms.len()];
    for &tid in trace.tasks.keys() {
        if let Some(n) = threads.get_mut(tl.task_mm(tid).0 as usize) {
            *n += 1;
        }
    }
    for &mm in &sel.mm_list {
        let Some(info) = tl.mm_info(mm) else {
            continue;
        };
        let stats = &tl.mm_stats[mm.0 as usize];
        out.push(PickerRow {
            sel: MmSel::Mm(mm),
            comm: trace.comm_of(info.leader),
            tgid: info.tgid,
            label: info.label(),
            threads: threads[mm.0 as usize],
            rseq_updates: stats.rseq_updates,
            cids: stats.cids.clone(),
            born: info.begins_in_capture(),
            born_by: match info.origin {
                crate::model::MmOrigin::Fork => "fork",
                crate::model::MmOrigin::Exec => "exec",
                _ => "",
            },
        });
    }
    out
}

impl Picker {
    /// The picker over the current data, on the process shown.
    pub fn open(tl: &Timeline, trace: &Trace, sel: &Selection) -> Picker {
        let mut p = Picker {
            rows: rows(tl, trace, sel),
            ..Picker::default()
        };
        let shown = sel.selected();
        p.pos = p.rows.iter().position(|r| r.sel == shown).unwrap_or(0);
        p
    }

    /// The data grew: new rows, the same process under the cursor where it still is.
    pub fn refresh(&mut self, tl: &Timeline, trace: &Trace, sel: &Selection) {
        let at = self.current().map(|r| r.sel);
        self.rows = rows(tl, trace, sel);
        self.pos = at
            .and_then(|s| self.filtered().iter().position(|r| r.sel == s))
            .unwrap_or(0);
    }

    /// The rows the filter lets through.
    pub fn filtered(&self) -> Vec<&PickerRow> {
        let f = self.filter.to_lowercase();
        self.rows.iter().filter(|r| r.matches(&f)).collect()
    }

    /// The row under the cursor.
    pub fn current(&self) -> Option<&PickerRow> {
        self.filtered().get(self.pos).copied()
    }

    /// Moves the cursor by `delta` rows, staying inside the list.
    pub fn step(&mut self, delta: isize) {
        let n = self.filtered().len();
        if n == 0 {
            self.pos = 0;
            return;
        }
        self.pos = (self.pos as isize + delta).clamp(0, n as isize - 1) as usize;
    }

    pub fn set_filter(&mut self, f: String) {
        self.filter = f;
        self.pos = 0;
    }
}
