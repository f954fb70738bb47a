//! What of the lane stack fits on a screen: the lane sets (observed, each model, live samples),
//! a window of the lanes (CPUs or threads) and of the sets, and rows per lane. The lanes pane
//! draws the plan; scrolling and the cursor-following window change the state it is made from.

use crate::ui::app::App;
use crate::ui::state::State;
use ratatui::layout::Rect;
use std::ops::Range;

/// A set of lanes in the stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetKind {
    /// What the capture shows.
    Observed,
    /// A model run (index into the model views).
    Model(usize),
    /// Live: the CIDs the workload's threads read from their rseq areas.
    LiveSamples,
    /// Another capture beside this one (`cidscope A B`): its workload's observed CIDs, on the
    /// shared time axis (index into `State::compare.others`).
    Capture(usize),
}

/// The stacked lane sets, top to bottom.
pub fn lane_sets(st: &State) -> Vec<SetKind> {
    let mut v = Vec::new();
    let live_only = st.samples.as_ref().is_some_and(|s| !s.attached);
    if st.models.show_observed && !live_only {
        v.push(SetKind::Observed);
    }
    v.extend((0..st.models.views.len()).map(SetKind::Model));
    // the threads' own reads have no thread lanes
    if st.samples.is_some() && !st.view.threads {
        v.push(SetKind::LiveSamples);
    }
    // the captures beside this one have CPU lanes only
    if !st.view.threads {
        v.extend((0..st.compare.others.len()).map(SetKind::Capture));
    }
    if v.is_empty() {
        v.push(SetKind::Observed);
    }
    // a presenter shows the sets the narration names, and only them; so does a demo on a
    // small screen
    let m = &st.models;
    if focus_only(st) {
        let focused: Vec<usize> = m.focus.iter().filter_map(|&f| m.position_of(f)).collect();
        let kept: Vec<SetKind> = v
            .iter()
            .enumerate()
            .filter(|(i, _)| focused.contains(i))
            .map(|(_, &k)| k)
            .collect();
        if !kept.is_empty() {
            return kept;
        }
    }
    v
}

/// Whether only the lane sets a demo's narration names are shown: presenting, or a demo on a
/// screen too small for all of its sets.
pub fn focus_only(st: &State) -> bool {
    let m = &st.models;
    !m.focus.is_empty() && (m.present || st.view.screen.height < 30)
}

/// A set's short name, for notices.
pub fn set_name(st: &State, kind: SetKind) -> String {
    match kind {
        SetKind::Observed if st.samples.is_some() => "kernel".into(),
        SetKind::Observed => "observed".into(),
        SetKind::Model(k) => st.models.views[k].run.policy.id().to_string(),
        SetKind::LiveSamples => "user space".into(),
        SetKind::Capture(i) => st.compare.others[i].name.clone(),
    }
}

/// Whether a diff row goes under the sets (two or more to compare).
pub fn has_diff_row(sets: &[SetKind]) -> bool {
    sets.iter()
        .filter(|s| matches!(s, SetKind::Observed | SetKind::Model(_)))
        .count()
        >= 2
}

/// Whether each set gets a title row (when there is more than the observed set, or in the
/// thread view, which names the process).
pub fn titled(st: &State) -> bool {
    !st.models.views.is_empty()
        || st.samples.is_some()
        || st.view.threads
        || !st.compare.others.is_empty()
}

/// Rows the lanes may take inside their border: what the screen leaves after the title, the
/// weight graph, the cidmask strip, a demo's narration, the least of the cursor pane, the
/// status bar and the footer.
pub fn lane_room(app: &App, screen: Rect) -> u16 {
    let others = 1
        + super::weight::pane_rows(app, screen)
        + super::cidmask::pane_rows(app, screen)
        + super::narration::rows_wanted(app, screen)
        + super::detail::min_rows(app, screen)
        + 2;
    screen.height.saturating_sub(others + 1).max(2)
}

/// What of the stack is on a screen: which sets, which lanes, how many rows each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub sets: Vec<SetKind>,
    /// The sets shown (a window of `sets`).
    pub shown: Range<usize>,
    /// A lane per thread of the selected process (`v`) instead of a lane per CPU.
    pub threads: bool,
    /// The lanes every shown set draws, top to bottom: a window of the visible CPUs (their
    /// numbers), or in the thread view of the threads (indices into the thread lanes' tids).
    pub lanes: Vec<usize>,
    /// The lanes there are (the visible CPUs after the `f` filter, or the threads), of which
    /// `lanes` is the window from `lane_top`.
    pub nlanes: usize,
    pub lane_top: usize,
    /// Rows per lane: 2 (CIDs and, under them, tasks or a thread's CPUs) when there is room,
    /// else 1.
    pub rpc: u16,
    /// Each set has a title row.
    pub titled: bool,
    /// The diff row under the sets.
    pub diff: bool,
    /// A notice row for hidden sets.
    pub notice: bool,
    /// Rows of content (inside the border).
    pub rows: u16,
    pub label_width: u16,
}

impl Plan {
    /// Rows of one shown set: title, marks, lanes.
    pub fn set_rows(&self) -> u16 {
        u16::from(self.titled) + 1 + self.lanes.len() as u16 * self.rpc
    }

    pub fn max_lane_top(&self) -> usize {
        self.nlanes - self.lanes.len()
    }

    pub fn max_set_top(&self) -> usize {
        self.sets.len() - self.shown.len()
    }
}

/// Plans the stack for `screen`, from the state's scroll position.
pub fn plan(app: &App, screen: Rect) -> Plan {
    let st = &app.state;
    let sets = lane_sets(st);
    let visible = st.visible_cpus();
    let threads = st.view.threads;
    let c = match (&st.derived.threads, threads) {
        (Some(t), true) => t.tids.len(),
        (None, true) => 0,
        _ => visible.len(),
    };
    let s = sets.len();
    let titled = titled(st);
    let chrome = u16::from(titled) + 1;
    // threads of different sets are not the same lane: no diff row in the thread view
    let diff = has_diff_row(&sets) && !threads;
    let fixed = 1 + u16::from(diff);
    let full_room = lane_room(app, screen);
    let need = |rpc: u16, k: usize, n: usize| fixed + n as u16 * (chrome + k as u16 * rpc);
    let (rpc, k, n, notice) = if need(2, c, s) <= full_room {
        (2, c, s, false)
    } else if need(1, c, s) <= full_room {
        (1, c, s, false)
    } else {
        // a window of lanes anyway: on a small screen give the cursor pane a few more rows
        let room = full_room - if screen.height < 30 { full_room / 6 } else { 0 };
        let per_set = room.saturating_sub(fixed) / s as u16;
        // a window of the lanes in every set, as long as it keeps a few (of a few, all)
        let min_window = c.clamp(1, 4) as u16;
        if focus_only(st) {
            // a presenter's sets are those the narration names: all of them, with as many of
            // their lanes as fit (at least one, the cursor's)
            let per_set = full_room.saturating_sub(fixed) / s as u16;
            (1, per_set.saturating_sub(chrome).max(1) as usize, s, false)
        } else if per_set >= chrome + min_window {
            (1, (per_set - chrome) as usize, s, false)
        } else {
            // a window of the sets, whole where they fit, and a row saying what is hidden
            let avail = room.saturating_sub(fixed + 1);
            let k = c.min(avail.saturating_sub(chrome).max(1) as usize);
            let n = ((avail / (chrome + k as u16)) as usize).clamp(1, s);
            (1, k, n, true)
        }
    };
    let k = k.min(c);
    let top = if threads {
        st.view.thread_scroll
    } else {
        st.view.lanes.cpu_top
    };
    let lane_top = top.min(c - k);
    let set_top = st.view.lanes.set_top.min(s - n);
    let rows = need(rpc, k, n) + u16::from(notice);
    Plan {
        shown: set_top..set_top + n,
        threads,
        lanes: if threads {
            (lane_top..lane_top + k).collect()
        } else {
            visible[lane_top..lane_top + k].to_vec()
        },
        nlanes: c,
        lane_top,
        rpc,
        titled,
        diff,
        notice,
        rows,
        label_width: super::axis::lane_label_width(st),
        sets,
    }
}

/// The CPUs of the first model's scan batch at the cursor, while a complete scan is under way.
pub fn batch_cpus(st: &State) -> Vec<u16> {
    st.models
        .views
        .iter()
        .find_map(|m| m.scan_at(st.cursor_ts()).filter(|(p, _, _)| !p.complete))
        .map(|(_, cpus, _)| cpus)
        .unwrap_or_default()
}
