//! One file per pane, each implementing [`pane::Pane`]; [`PANES`] stacks them. Widgets only
//! draw state; they change nothing.

pub mod accounting;
pub mod axis;
pub mod cell;
pub mod cidmask;
pub mod detail;
pub mod footer;
pub mod help;
pub mod lane_plan;
pub mod lane_stack;
pub mod lanes;
pub mod legend;
pub mod narration;
pub mod overview;
pub mod pane;
pub mod picker;
pub mod ruler;
pub mod scrolled;
pub mod status;
pub mod thread_lanes;
pub mod title;
pub mod walk;
pub mod weight;
pub mod why;

/// The screen, top to bottom. A new pane is a file in this folder and a line here.
pub const PANES: &[&dyn pane::Pane] = &[
    &title::TitleBar,
    &overview::Overview,
    &lane_stack::LaneStack,
    &weight::WeightPane,
    &cidmask::CidmaskStrip,
    &narration::Narration,
    &walk::WalkPane,
    &accounting::AccountingPane,
    &legend::Legend,
    &detail::Detail,
    &status::StatusLine,
    &footer::Footer,
];
