//! One file per pane, each implementing [`pane::Pane`]; [`PANES`] stacks them. Widgets only
//! draw state; they change nothing.

pub mod accounting;
pub mod axis;
pub mod detail;
pub mod help;
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

/// The cell at (`x`, `y`) when it lies inside `area`: marks drawn over cells (cursor, range)
/// are skipped where a tiny terminal leaves no column for them, never indexed out of bounds.
pub fn cell_in(
    buf: &mut ratatui::buffer::Buffer,
    area: ratatui::layout::Rect,
    x: u16,
    y: u16,
) -> Option<&mut ratatui::buffer::Cell> {
    let p = ratatui::layout::Position { x, y };
    if area.contains(p) {
        buf.cell_mut(p)
    } else {
        None
    }
}
