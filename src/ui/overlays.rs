//! What is shown over or instead of the panes, and what the next keys mean: the help, a prompt
//! or a pending marker key, the message line, the legend and the accounting pane.

/// What the next keys mean.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    #[default]
    Normal,
    /// Typing a line at the bottom of the screen.
    Prompt { kind: PromptKind, text: String },
    /// The next character names a marker to set.
    SetMark,
    /// The next character names a marker to jump to.
    JumpMark,
    /// The process picker is open (`P`): keys filter and move through it.
    Picker(super::process_list::Picker),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptKind {
    Search,
    Cpus,
    /// Go to a time or an event number.
    GoTo,
}

impl PromptKind {
    pub fn label(self) -> &'static str {
        match self {
            PromptKind::Search => "/",
            PromptKind::Cpus => "CPUs (e.g. 0-3,7; empty = all): ",
            PromptKind::GoTo => {
                "go to (+1.5ms from the start, 1639.2041 s, #1234 event, 50% of the capture): "
            }
        }
    }
}

/// The overview's region (`w`): the stretch of time and the CPUs Enter zooms into.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Region {
    pub t0: u64,
    pub span: u64,
    /// The first CPU of the region (an index among the CPUs shown) and how many.
    pub cpu0: usize,
    pub ncpus: usize,
    /// The first CPU on screen when the overview does not hold them all.
    pub cpu_top: usize,
}

/// One step of the kernel's path to a CID change, with the cidmask before and after it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CidStep {
    /// The kernel's name of the step (switch-in, mm_cid_get, ...).
    pub name: String,
    pub ts: u64,
    pub text: String,
    /// The bits of the cidmask before and after the step (`None`: not known there).
    pub before: Option<Vec<i32>>,
    pub after: Option<Vec<i32>>,
}

/// The walk through one CID change (`e`): its steps and the one shown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Walk {
    /// What changed: `task 1247 CID 1 → 0 on CPU1`.
    pub title: String,
    /// Whose cidmask the bitmaps are (`lazy-compact model`, `observed`).
    pub source: String,
    pub steps: Vec<CidStep>,
    pub at: usize,
}

/// The overlay in front, the one Esc and q close.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Front {
    Help,
    Walk,
    Legend,
    Accounting,
    Overview,
}

#[derive(Default)]
pub struct Overlays {
    pub show_help: bool,
    /// The first line of the help shown (it scrolls when it does not fit).
    pub help_scroll: u16,
    /// The legend (`L`): every glyph, mark and colour, in the cursor pane's place.
    pub show_legend: bool,
    /// The first line shown of the pane under the graph (cursor, legend or accounting).
    pub pane_scroll: u16,
    pub mode: Mode,
    /// A one-line message for the user (result of the last action).
    pub message: Option<String>,
    /// The rseq accounting pane, when shown: over the A–B range if set, else the whole capture.
    pub accounting: Option<crate::stats::accounting::Accounting>,
    /// The dense overview (`w`) in place of the lanes, and its region.
    pub overview: Option<Region>,
    /// The cidmask strip (`M`): a row per CID bit of the selected process over time.
    pub show_cidmask: bool,
    /// The kernel's steps of a CID change (`e`), in the cursor pane's place.
    pub walk: Option<Walk>,
}

impl Overlays {
    /// What Esc and q close first, front to back.
    pub fn front(&self) -> Option<Front> {
        if self.show_help {
            Some(Front::Help)
        } else if self.walk.is_some() {
            Some(Front::Walk)
        } else if self.show_legend {
            Some(Front::Legend)
        } else if self.accounting.is_some() {
            Some(Front::Accounting)
        } else if self.overview.is_some() {
            Some(Front::Overview)
        } else {
            None
        }
    }

    /// Closes the overlay in front; false when none is open.
    pub fn close_front(&mut self) -> bool {
        match self.front() {
            Some(Front::Help) => self.show_help = false,
            Some(Front::Walk) => self.walk = None,
            Some(Front::Legend) => self.show_legend = false,
            Some(Front::Accounting) => self.accounting = None,
            Some(Front::Overview) => self.overview = None,
            None => return false,
        }
        self.pane_scroll = 0;
        true
    }
}
