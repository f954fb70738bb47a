//! The panes under the graph (cursor, legend, accounting) hold more lines than a small screen
//! shows: they scroll (`J`/`K`), and their title says which lines are shown.

use crate::ui::app::App;
use crate::ui::keys::{Action, keys_for};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

/// The first line shown when `total` lines scroll in `height` rows from the user's offset.
pub fn first_line(offset: u16, total: usize, height: u16) -> u16 {
    offset.min(total.saturating_sub(height as usize) as u16)
}

/// Draws `lines` under a top border titled `title`, from the pane scroll offset; when they do
/// not all fit, the title says which are shown and how to scroll.
pub fn draw(app: &App, title: &str, lines: Vec<Line<'_>>, area: Rect, buf: &mut Buffer) {
    let inner = Block::default().borders(Borders::TOP).inner(area);
    let total = lines.len();
    let top = first_line(app.state.overlays.pane_scroll, total, inner.height);
    let mut t = format!(" {title} ");
    if total > inner.height as usize && inner.height > 0 {
        let last = (top as usize + inner.height as usize).min(total);
        t.push_str(&format!(
            "· lines {}-{last} of {total}: {} {} scroll ",
            top + 1,
            keys_for(&app.bindings, Action::PaneUp),
            keys_for(&app.bindings, Action::PaneDown)
        ));
    }
    let block = Block::default()
        .borders(Borders::TOP)
        .title(t)
        .border_style(app.theme.dim());
    Paragraph::new(lines)
        .block(block)
        .scroll((top, 0))
        .render(area, buf);
}
