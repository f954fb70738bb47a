//! What the user picked: the process whose lanes are shown, the A/B range, named markers, the
//! CPUs shown and the last search.

use crate::model::MmId;
use crate::timeline::Segment;
use std::collections::BTreeMap;

/// Which lanes are shown: every task, or the tasks of one process (mm).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmSel {
    All,
    Mm(MmId),
}

#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// mms with rseq activity, most active first; Tab cycles [All, mms...].
    pub mm_list: Vec<MmId>,
    pub mm_pos: usize,
    /// The process was chosen by cidscope (the first pick), not by the user.
    pub mm_auto: bool,
    /// While cidscope chooses: the process to pick when it shows up (`attach --pid P`).
    pub prefer_tgid: Option<crate::events::Tid>,
    /// Named markers (`m` + letter): times.
    pub marks: BTreeMap<char, u64>,
    /// A/B range markers: times.
    pub a: Option<u64>,
    pub b: Option<u64>,
    /// CPUs shown (None = all).
    pub cpu_filter: Option<Vec<usize>>,
    /// The last search and its matching event indices.
    pub search: Option<(String, Vec<u32>)>,
}

impl Selection {
    /// `first` selected (see [`crate::timeline::Timeline::first_pick`]), else the most active
    /// process of `mm_list` (all tasks when there is none).
    pub fn new(mm_list: Vec<MmId>, first: Option<MmId>) -> Selection {
        Selection {
            mm_pos: first_pos(&mm_list, first),
            mm_list,
            mm_auto: true,
            ..Selection::default()
        }
    }

    pub fn selected(&self) -> MmSel {
        match self.mm_pos {
            0 => MmSel::All,
            k => self
                .mm_list
                .get(k - 1)
                .map_or(MmSel::All, |&m| MmSel::Mm(m)),
        }
    }

    pub fn selected_mm(&self) -> Option<MmId> {
        match self.selected() {
            MmSel::All => None,
            MmSel::Mm(m) => Some(m),
        }
    }

    /// Whether a lane segment belongs to the current selection.
    pub fn admits(&self, s: &Segment) -> bool {
        match self.selected() {
            MmSel::All => s.tid != 0,
            MmSel::Mm(m) => s.mm == m,
        }
    }

    /// Selects process `mm` as the user's choice; false when it is not in the list.
    pub fn select_mm(&mut self, mm: MmId) -> bool {
        match self.mm_list.iter().position(|&m| m == mm) {
            Some(p) => {
                self.mm_pos = p + 1;
                self.mm_auto = false;
                true
            }
            None => false,
        }
    }

    /// Selects `sel` (all tasks, or a process of the list) as the user's choice; false when
    /// the process is not in the list.
    pub fn select(&mut self, sel: MmSel) -> bool {
        match sel {
            MmSel::All => {
                self.mm_pos = 0;
                self.mm_auto = false;
                true
            }
            MmSel::Mm(m) => self.select_mm(m),
        }
    }

    /// The next (or previous) entry of [all tasks, mms...], wrapping around.
    pub fn cycle_mm(&mut self, forward: bool) {
        let k = self.mm_list.len() + 1;
        self.mm_pos = if forward {
            (self.mm_pos + 1) % k
        } else {
            (self.mm_pos + k - 1) % k
        };
    }

    /// Takes a new process list (the data grew), keeping the user's choice, or the first pick
    /// while cidscope chooses. Returns whether the selection changed.
    pub fn update_mm_list(&mut self, mm_list: Vec<MmId>, first: Option<MmId>) -> bool {
        let keep = self.selected();
        self.mm_list = mm_list;
        self.mm_pos = match keep {
            _ if self.mm_auto => first_pos(&self.mm_list, first),
            MmSel::All => 0,
            MmSel::Mm(m) => self
                .mm_list
                .iter()
                .position(|&x| x == m)
                .map_or(0, |p| p + 1),
        };
        self.selected() != keep
    }

    /// The A/B range, ordered, when both are set.
    pub fn range(&self) -> Option<(u64, u64)> {
        match (self.a, self.b) {
            (Some(a), Some(b)) => Some((a.min(b), a.max(b))),
            _ => None,
        }
    }
}

/// Position of `first` in [all tasks, mms...]; the most active process when it is not listed.
fn first_pos(mm_list: &[MmId], first: Option<MmId>) -> usize {
    match first.and_then(|f| mm_list.iter().position(|&m| m == f)) {
        Some(p) => p + 1,
        None => usize::from(!mm_list.is_empty()),
    }
}
