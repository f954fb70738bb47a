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
}

impl PromptKind {
    pub fn label(self) -> &'static str {
        match self {
            PromptKind::Search => "/",
            PromptKind::Cpus => "CPUs (e.g. 0-3,7; empty = all): ",
        }
    }
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
}
