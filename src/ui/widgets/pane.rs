//! The one trait every pane of the screen implements. A pane says how many rows it wants and
//! draws itself from the app's state; it changes nothing.

use crate::ui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

/// The rows a pane wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rows {
    /// Not shown now.
    Hidden,
    /// Exactly this many rows.
    Fixed(u16),
    /// Up to this many rows of the flexible part of the screen (the rows between fixed panes),
    /// taken before the `Fill` panes share the rest.
    Upto(u16),
    /// What is left of the flexible part, at least this many rows where the screen allows.
    Fill(u16),
}

/// What is under a screen cell: the CPU lane (if on one) and the time.
pub type Hit = (Option<usize>, u64);

pub trait Pane: Sync {
    /// The rows this pane wants on a screen of this size.
    fn rows(&self, app: &App, screen: Rect) -> Rows;

    /// Draws the pane into its `area` of `buf` (on a screen of size `screen`).
    fn draw(&self, app: &App, screen: Rect, area: Rect, buf: &mut Buffer);

    /// What screen cell (col, row) of this pane's `area` shows, for panes with a time axis.
    fn hit(&self, _app: &App, _screen: Rect, _area: Rect, _col: u16, _row: u16) -> Option<Hit> {
        None
    }

    /// For panes that scroll with the pane keys (`J`/`K`): how many lines they hold, and how
    /// many their `area` shows.
    fn scroll_len(&self, _app: &App, _area: Rect) -> Option<(usize, u16)> {
        None
    }
}
