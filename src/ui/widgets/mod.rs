//! One file per pane, each implementing [`pane::Pane`]; [`PANES`] stacks them. Widgets only
//! draw state; they change nothing.

pub mod accounting;
pub mod axis;
pub mod cell;
pub mod detail;
pub mod help;
pub mod lane_plan;
pub mod lane_stack;
pub mod lanes;
pub mod legend;
pub mod narration;
pub mod pane;
pub mod picker;
pub mod scrolled;
pub mod status;
pub mod thread_lanes;
pub mod title;
pub mod weight;
pub mod why;

/// The screen, top to bottom. A new pane is a file in this folder and a line here.
pub const PANES: &[&dyn pane::Pane] = &[
    &title::TitleBar,
    &lane_stack::LaneStack,
    &weight::WeightPane,
    &narration::Narration,
    &accounting::AccountingPane,
    &legend::Legend,
    &detail::Detail,
    &status::StatusLine,
];
